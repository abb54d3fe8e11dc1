"""The speed benchmark: tokenprism against tokenizers 0.23.3 (the reference for ids),
tokenizers 1.0.0rc3, tokie and kitoken on bert-base-uncased, one thread, ids verified.

    python3 scripts/bench/bench.py                  # full run (~10-20 min), writes bench/
    python3 scripts/bench/bench.py --quick --out D  # smoke run (~64 KB per corpus, 1 round)
    python3 scripts/bench/bench.py --no-peers       # only tokenprism and tokenizers 0.23.3

Writes results.json, results.md and encode.png into --out (default: bench/ of the repository;
--quick defaults to a temporary folder so that a smoke run never overwrites the real results).

Protocol (the write-up's, made explicit):
- Unit of work: each corpus (scripts/data/corpora.py) is cut into documents of consecutive whole
  lines, line ends kept, each at least DOC_BYTES (4096) bytes of UTF-8 (so 4-6.5 KB; the
  last may be shorter). Documents are repeated cyclically until the corpus totals about
  5 MB. Every implementation encodes every document with one Python call, special tokens off,
  truncation and padding off, and the timed work includes getting the ids as a Python list
  (`.ids` where the call returns an Encoding). Same documents, same order, for everyone. One
  row returns a numpy uint32 array instead (no peer here has such a call): it is set against
  tokenprism's own list call, not against the peers.
- Every implementation runs in its own worker process (scripts/bench/bench_worker.py), peers in
  their own virtualenvs; RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false (one thread).
- Per cell (corpus x operation): one warm-up pass per implementation, which is also where the
  output is hashed; then ROUNDS rounds, in each of which every implementation runs once, the
  order rotating by one each round. A run repeats whole passes over the documents until at
  least MIN_SECONDS have passed. MB/s = UTF-8 input bytes / wall time / 1e6 (MB = 10^6 bytes).
  Reported: median MB/s over rounds, and the median over rounds of the per-round ratio to
  tokenizers 0.23.3 (and to the fastest verified peer), so a slow spell on the shared machine
  hits both sides of a ratio.
- Every cell's output is hashed (sha256 of u32 counts and ids per document; normalized text
  for the normalizer) and compared with tokenizers 0.23.3's. A mismatch is shown in the tables
  and the JSON, with the first differing document, and the cell is never counted as a
  "verified" peer. A mismatch of a tokenprism cell makes the script exit with status 3.
- Short inputs: slices of 8, 16, 32, 64, 256 bytes (the longest run of whole chars of at most
  that many UTF-8 bytes from a random char position; SHORT_N per corpus and size), one call
  each; microseconds per call from Python (loop included) are reported, same rotation.
- Callgrind: the Rust example `encode_file` on the first ~1 MB of the English corpus, modes
  encode / ids / normalize; instructions per MB = (total with 3 rounds - total with 1) / 2 / MB,
  which cancels loading. The normalizer's share = normalize / encode.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parent / "bench_worker.py"
sys.path.insert(0, str(REPO / "scripts" / "data"))
from corpora import LANGS as CORPORA  # noqa: E402

SHORT_SIZES = (8, 16, 32, 64, 256)
DOC_BYTES = 4096
REF = "tokenizers-0.23.3"
REF_VERSION = "0.23.3"
FAST_PATHS = ("simd", "page_cache", "lazy_output", "fused")

# Peers installed into their own virtualenvs: name -> (pip requirement, distribution, pip flags)
PEER_VENVS = {
    "tokenizers-1.0.0rc3": ("tokenizers==1.0.0rc3", "tokenizers", ["--pre"]),
    "tokie": ("tokie==0.1.4", "tokie", []),
    "kitoken": ("kitoken==0.11.1", "kitoken", []),
}
VENV_DIRS = {
    "tokenizers-1.0.0rc3": "tk1",
    "tokie": "tokie",
    "kitoken": "kitoken",
    REF: "tk023",
    # BPE peers (scripts/bench/bpe_bench.py)
    "gigatoken": "gigatoken",
    "fastokens": "fastokens",
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def data_dir() -> Path:
    return Path(os.environ.get("TOKENPRISM_DATA") or os.path.expanduser("~/.cache/tokenprism/data"))


def venv_root() -> Path:
    return Path(
        os.environ.get("TOKENPRISM_VENVS") or os.path.expanduser("~/.cache/tokenprism/venvs")
    )


# --------------------------------------------------------------------------- implementations


def implementations(peers: bool, ablations: bool, ablation_api: str) -> list[dict]:
    """The rows, in table order. kind: ours | ref | peer. ops: what each one runs."""
    rows = [
        dict(
            name="tokenprism-ids",
            label="tokenprism (ids only)",
            kind="ours",
            impl="tokenprism",
            opts={"api": "encode_ids"},
            call="tok.encode_ids(doc, add_special_tokens=False)",
            ops=("encode", "short"),
        ),
        dict(
            name="tokenprism-array",
            label="tokenprism (ids as a uint32 array)",
            kind="ours",
            impl="tokenprism",
            opts={"api": "encode_ids_array"},
            call="tok.encode_ids(doc, add_special_tokens=False, as_array=True)",
            ops=("encode", "short"),
        ),
        dict(
            name="tokenprism",
            label="tokenprism (Encoding)",
            kind="ours",
            impl="tokenprism",
            opts={"api": "encode"},
            call="tok.encode(doc, add_special_tokens=False).ids",
            ops=("encode", "normalize", "short"),
        ),
    ]
    if ablations:
        for fp in FAST_PATHS:
            ops = (
                ("encode", "normalize") if fp != "fused" else ("encode",)
            )  # fused: not a normalizer path
            api = ablation_api
            rows.append(
                dict(
                    name=f"tokenprism-no-{fp}",
                    label=f"tokenprism, {fp} off",
                    kind="ours",
                    impl="tokenprism",
                    opts={"api": api, "fast_paths": {fp: False}},
                    ablation=fp,
                    call=(
                        "tok.encode_ids(doc, add_special_tokens=False)"
                        if api == "encode_ids"
                        else "tok.encode(doc, add_special_tokens=False).ids"
                    )
                    + f" with {fp}=False",
                    ops=ops,
                )
            )
    rows.append(
        dict(
            name=REF,
            label="tokenizers 0.23.3",
            kind="ref",
            impl="tokenizers",
            opts={},
            call="tok.encode(doc, add_special_tokens=False).ids",
            ops=("encode", "normalize", "short"),
        )
    )
    if peers:
        rows += [
            dict(
                name="tokenizers-1.0.0rc3",
                label="tokenizers 1.0.0rc3",
                kind="peer",
                impl="tokenizers1",
                opts={},
                call="tok.encode(doc, add_special_tokens=False).ids",
                ops=("encode", "short"),
            ),
            dict(
                name="tokie",
                label="tokie",
                kind="peer",
                impl="tokie",
                opts={},
                call="tok.encode(doc, add_special_tokens=False).ids",
                ops=("encode", "short"),
            ),
            dict(
                name="kitoken",
                label="kitoken",
                kind="peer",
                impl="kitoken",
                opts={},
                call="tok.encode(doc, False)",
                ops=("encode", "short"),
            ),
        ]
    return rows


def run_quiet(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def dist_version(python: str, dist: str) -> str | None:
    r = run_quiet([python, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"])
    return r.stdout.strip() if r.returncode == 0 else None


def ensure_venv(
    name: str, requirement: str, dist: str, flags: list[str]
) -> tuple[str | None, str | None]:
    """(python of a virtualenv holding `requirement`, None) or (None, why not). Idempotent."""
    want = requirement.split("==")[1]
    d = venv_root() / VENV_DIRS[name]
    py = d / "bin" / "python"
    if py.exists() and dist_version(str(py), dist) == want:
        return str(py), None
    log(f"setting up {d} ({requirement})")
    if not py.exists():
        d.parent.mkdir(parents=True, exist_ok=True)
        r = run_quiet([sys.executable, "-m", "venv", str(d)])
        if r.returncode != 0:
            return None, f"python -m venv failed: {r.stdout.strip()[-400:]}"
    r = run_quiet(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *flags, requirement]
    )
    if r.returncode != 0:
        tail = " ".join(r.stdout.strip().splitlines()[-3:])
        return None, f"pip install {' '.join(flags + [requirement])} failed: {tail[-500:]}"
    got = dist_version(str(py), dist)
    if got != want:
        return None, f"after pip install, {dist} is {got!r}, not {want}"
    return str(py), None


def tokenprism_venv(wheel: Path) -> str:
    """A virtualenv holding exactly `wheel`, so that another install of tokenprism into the
    system Python (a debug build for the tests, say) cannot change what is measured mid-run."""
    d = venv_root() / "tokenprism-bench"
    py = d / "bin" / "python"
    if not py.exists():
        d.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    r = run_quiet(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--force-reinstall",
            "--no-deps",
            str(wheel),
        ]
    )
    if r.returncode != 0:
        raise SystemExit(f"pip install {wheel} into {d} failed: {r.stdout[-600:]}")
    # The array rows need numpy (tokenprism itself does not): this Python's version, if any.
    if dist_version(str(py), "numpy") is None:
        want = dist_version(sys.executable, "numpy")
        r = run_quiet(
            [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            + [f"numpy=={want}" if want else "numpy"]
        )
        if r.returncode != 0:
            log(f"pip install numpy into {d} failed (the array rows will fail): {r.stdout[-300:]}")
    return str(py)


def resolve_pythons(rows: list[dict], tokenprism_python: str) -> None:
    """Sets row["python"] or row["not_run"]."""
    for row in rows:
        if row["kind"] == "ours":
            row["python"] = tokenprism_python
        elif row["name"] == REF:
            if dist_version(sys.executable, "tokenizers") == REF_VERSION:
                row["python"] = sys.executable
            else:  # keep the reference apart rather than touch the system's tokenizers
                py, why = ensure_venv(REF, f"tokenizers=={REF_VERSION}", "tokenizers", [])
                row["python"], row["not_run"] = py, why
        else:
            req, dist, flags = PEER_VENVS[row["name"]]
            py, why = ensure_venv(row["name"], req, dist, flags)
            row["python"] = py
            if why:
                row["not_run"] = why


# --------------------------------------------------------------------------- workers


class WorkerError(Exception):
    pass


class Worker:
    def __init__(self, row: dict, tokenizer: Path | str, tmp: Path, script: Path = WORKER):
        self.row = row
        self.name = row["name"]
        self.err_path = tmp / f"{self.name}.stderr"
        env = dict(
            os.environ,
            RAYON_NUM_THREADS="1",
            TOKENIZERS_PARALLELISM="false",
            OMP_NUM_THREADS="1",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.pop("PYTHONPATH", None)
        self.proc = subprocess.Popen(
            [row["python"], str(script), row["impl"], str(tokenizer), json.dumps(row["opts"])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(self.err_path, "w"),
            text=True,
            cwd=tmp,
            env=env,
            bufsize=1,
        )
        self.dead: str | None = None
        try:
            self.hello = self.ask(cmd="hello")
        except WorkerError:
            if self.proc.poll() is None:
                self.proc.kill()
            raise

    def ask(self, **req) -> dict:
        if self.dead:
            raise WorkerError(self.dead)
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.proc.wait(timeout=30)
            tail = self.err_path.read_text(errors="replace").strip().splitlines()[-6:]
            self.dead = f"worker exited with status {self.proc.returncode}: {' | '.join(tail)}"[
                :800
            ]
            raise WorkerError(self.dead)
        r = json.loads(line)
        if not r.get("ok"):
            raise WorkerError(r.get("error", "unknown error"))
        return r

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


# --------------------------------------------------------------------------- inputs


def utf8_len(c: str) -> int:
    o = ord(c)
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


def documents(text: str) -> list[str]:
    """Consecutive whole lines (ends kept) grouped until each reaches DOC_BYTES of UTF-8."""
    docs, cur, n = [], [], 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i < len(lines) - 1:
            line += "\n"
        if not line:
            continue
        cur.append(line)
        n += len(line.encode("utf-8"))
        if n >= DOC_BYTES:
            docs.append("".join(cur))
            cur, n = [], 0
    if cur:
        docs.append("".join(cur))
    return docs


def corpus_docs(text: str, target: int) -> tuple[list[str], int]:
    """Documents of `text`, cycled until they total at least `target` bytes; and the byte count."""
    base = documents(text)
    docs, total, i = [], 0, 0
    while total < target:
        d = base[i % len(base)]
        docs.append(d)
        total += len(d.encode("utf-8"))
        i += 1
    return docs, total


def short_slices(text: str, size: int, n: int, seed: str) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        i = rng.randrange(0, len(text) - 1)
        j, b = i, 0
        while j < len(text):
            c = utf8_len(text[j])
            if b + c > size:
                break
            b += c
            j += 1
        out.append(text[i:j])
    return out


# --------------------------------------------------------------------------- measuring


def med(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def rnd(x, sig: int = 4):
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, list):
        return [rnd(v, sig) for v in x]
    return float(f"{x:.{sig}g}")


def first_difference(a, b) -> int:
    n = min(len(a), len(b))
    for k in range(n):
        if a[k] != b[k]:
            return k
    return n


def diagnose(
    ref: Worker, w: Worker, key: str, op: str, ref_dig: list[str], dig: list[str], docs: list[str]
) -> dict:
    bad = [i for i, (x, y) in enumerate(zip(ref_dig, dig)) if x != y]
    info = {"documents_differing": len(bad), "documents": len(docs)}
    if not bad:
        return info
    i = bad[0]
    info["first_document"] = i
    info["document_bytes"] = len(docs[i].encode("utf-8"))
    try:
        a = ref.ask(cmd="output", key=key, op=op, index=i)["value"]
        b = w.ask(cmd="output", key=key, op=op, index=i)["value"]
        k = first_difference(a, b)
        info["position"] = k
        info["reference_around"] = a[max(0, k - 3) : k + 6]
        info["this_around"] = b[max(0, k - 3) : k + 6]
        if op == "encode":
            info["reference_tokens"] = ref.ask(cmd="tokens", ids=info["reference_around"])["value"]
            info["this_tokens"] = ref.ask(cmd="tokens", ids=info["this_around"])["value"]
            info["document_start"] = docs[i][:160]
    except WorkerError as e:
        info["error"] = str(e)
    return info


def measure(
    workers: list[Worker],
    key: str,
    op: str,
    rounds: int,
    min_seconds: float,
    docs: list[str],
    unit: str,
    ref_name: str = REF,
    hash_key: str = "sha256",
) -> dict:
    """One cell: warm-up (hashed), then `rounds` rotating rounds. unit: mbps | us.
    ref_name: the row whose output is the truth; hash_key: the worker reply's hash field."""
    cell: dict[str, dict] = {}
    digests: dict[str, list[str]] = {}
    ws = [w for w in workers if not w.dead]
    for w in ws:
        try:
            r = w.ask(cmd="run", key=key, op=op, min_seconds=0, hash=True)
            cell[w.name] = {
                hash_key: r[hash_key],
                "bytes": r["bytes"],
                "calls_per_pass": r["calls"] // r["passes"],
                "tokens": r["tokens"],
                "values": [],
                "cpu_per_wall": [],
            }
            if unit == "mbps" and r["seconds"] > 0 and r["cpu_seconds"] > 0:
                # The hashed pass is the worker's first over this text: text seen once.
                cell[w.name]["first_mbps"] = r["bytes"] / r["seconds"] / 1e6
                cell[w.name]["first_cpu_mbps"] = r["bytes"] / r["cpu_seconds"] / 1e6
            digests[w.name] = r["doc_digests"]
        except WorkerError as e:
            cell[w.name] = {"error": str(e)}
    ok = [w for w in ws if "error" not in cell[w.name]]
    for k in range(rounds):
        order = ok[k % len(ok) :] + ok[: k % len(ok)] if ok else []
        for w in order:
            c = cell[w.name]
            if "error" in c:
                continue
            try:
                r = w.ask(cmd="run", key=key, op=op, min_seconds=min_seconds, hash=False)
            except WorkerError as e:
                c["error"] = str(e)
                continue
            if unit == "mbps":
                c["values"].append(r["bytes"] * r["passes"] / r["seconds"] / 1e6)
            else:
                c["values"].append(r["seconds"] / r["calls"] * 1e6)
            c["cpu_per_wall"].append(r["cpu_seconds"] / r["seconds"] if r["seconds"] > 0 else 0.0)
    # verification against the reference
    ref = next((w for w in ws if w.name == ref_name), None)
    ref_sha = cell.get(ref_name, {}).get(hash_key)
    for w in ws:
        c = cell[w.name]
        if hash_key not in c:
            continue
        if ref_sha is None:
            c["ids_match"] = None
        else:
            c["ids_match"] = c[hash_key] == ref_sha
            if not c["ids_match"]:
                c["mismatch"] = diagnose(ref, w, key, op, digests[ref_name], digests[w.name], docs)
                log(f"!!! {w.name} {op} {key}: OUTPUT DIFFERS FROM {ref_name}: {c['mismatch']}")
    return cell


def summarize(
    cell: dict, rows: list[dict], unit: str, ref_name: str = REF, hash_key: str = "sha256"
) -> dict:
    """Adds medians and per-round ratios; returns {name: summary} plus '_fastest_peer'."""
    kinds = {r["name"]: r["kind"] for r in rows}

    def speed(name):  # per-round speeds (bigger is faster)
        v = cell.get(name, {}).get("values") or []
        return v if unit == "mbps" else [1.0 / x for x in v]

    def ratio(a, b):
        sa, sb = speed(a), speed(b)
        n = min(len(sa), len(sb))
        return med([sa[i] / sb[i] for i in range(n)]) if n else None

    peers = [
        n
        for n, c in cell.items()
        if kinds.get(n) in ("ref", "peer") and c.get("values") and c.get("ids_match")
    ]
    fastest = max(peers, key=lambda n: med(speed(n)), default=None)
    out = {}
    for name, c in cell.items():
        s = {
            k: c[k]
            for k in (
                hash_key,
                "ids_match",
                "mismatch",
                "error",
                "tokens",
                "bytes",
                "calls_per_pass",
            )
            if k in c
        }
        for k in ("first_mbps", "first_cpu_mbps"):
            if k in c:
                s[k] = rnd(c[k])
        vals = c.get("values") or []
        key = "mbps" if unit == "mbps" else "us_per_call"
        s[key] = rnd(med(vals))
        s[key + "_rounds"] = rnd(vals)
        s["vs_ref"] = rnd(ratio(name, ref_name))
        s["vs_fastest_peer"] = rnd(ratio(name, fastest)) if fastest else None
        if c.get("cpu_per_wall"):
            s["cpu_per_wall"] = rnd(max(c["cpu_per_wall"]), 3)
        out[name] = s
    out["_fastest_peer"] = fastest
    return out


# --------------------------------------------------------------------------- callgrind


def callgrind(tokenizer: Path, en_text: str, tmp: Path, build: bool) -> dict:
    if not shutil.which("valgrind"):
        return {"error": "valgrind is not installed (apt-get install valgrind)"}
    crate = REPO / "crate"
    target = Path(os.environ.get("CARGO_TARGET_DIR") or crate / "target")
    exe = target / "release" / "examples" / "encode_file"
    if build:
        log("building the Rust example encode_file (cargo build --release --example encode_file)")
        r = run_quiet(["cargo", "build", "--release", "--example", "encode_file"], cwd=crate)
        if r.returncode != 0:
            return {
                "error": "cargo build --release --example encode_file failed: " + r.stdout[-600:]
            }
    if not exe.exists():
        return {
            "error": f"{exe} does not exist (build it with cargo build --release --example encode_file)"
        }
    # about 1 MB of English, cut at a line end
    b = en_text.encode("utf-8")
    cut = b.rfind(b"\n", 0, 1_000_000) + 1 or len(b)
    text_file = tmp / "callgrind-en.txt"
    text_file.write_bytes(b[:cut])
    size = cut
    res = {
        "text": f"the first {size} bytes of the English corpus (cut at a line end)",
        "bytes": size,
        "binary": str(exe),
        "modes": {},
    }
    for mode in ("encode", "ids", "normalize"):
        counts = {}
        for rounds in (1, 3):
            r = run_quiet(
                [
                    "valgrind",
                    "--tool=callgrind",
                    "--callgrind-out-file=/dev/null",
                    str(exe),
                    str(tokenizer),
                    str(text_file),
                    str(rounds),
                    mode,
                ]
            )
            m = re.search(r"Collected\s*:\s*(\d+)", r.stdout)
            if r.returncode != 0 or not m:
                return {**res, "error": f"valgrind {mode} x{rounds} failed: {r.stdout[-600:]}"}
            counts[rounds] = int(m.group(1))
        per_mb = (counts[3] - counts[1]) / 2 / size * 1e6
        res["modes"][mode] = {
            "instructions_1_round": counts[1],
            "instructions_3_rounds": counts[3],
            "instructions_per_mb": round(per_mb),
        }
        log(f"callgrind {mode}: {per_mb / 1e6:.1f}M instructions per MB")
    enc = res["modes"]["encode"]["instructions_per_mb"]
    res["normalizer_share"] = rnd(res["modes"]["normalize"]["instructions_per_mb"] / enc, 3)
    return res


# --------------------------------------------------------------------------- machine


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    flags = ""
    try:
        out = run_quiet(["lscpu"]).stdout
        m = re.search(r"^Model name:\s*(.+)$", out, re.M)
        cpu = m.group(1).strip() if m else cpu
        f = re.search(r"^Flags:\s*(.+)$", out, re.M)
        flags = f.group(1) if f else ""
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "avx2": " avx2" in f" {flags} ",
        "os": platform.platform(),
        "python": platform.python_version(),
    }
    try:
        info["memory_gib"] = round(
            os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1
        )
    except (ValueError, OSError):
        pass
    return info


def git_info() -> dict:
    def g(*a):
        r = run_quiet(["git", "-C", str(REPO), *a])
        return r.stdout.strip() if r.returncode == 0 else None

    head = g("rev-parse", "--short", "HEAD")
    dirty = g("status", "--porcelain", "--", "crate", "python", "pyproject.toml")
    return {"head": head, "source_dirty": bool(dirty) if dirty is not None else None}


def rustc_version() -> str | None:
    try:
        r = run_quiet(["rustc", "--version"])
        return r.stdout.strip() if r.returncode == 0 else None
    except OSError:
        return None


# --------------------------------------------------------------------------- output


def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"×{fmt(x)}"


def cell_text(
    s: dict | None, key: str, ratio_key: str | None = "vs_ref", ratio_suffix: str = ""
) -> str:
    if s is None:
        return "not run"
    if "error" in s and not s.get(key):
        return f"error: {s['error'][:60]}"
    t = fmt(s.get(key))
    if ratio_key and s.get(ratio_key) is not None:
        t += f" ({fmt_ratio(s[ratio_key])}{ratio_suffix})"
    if s.get("ids_match") is False:
        t = f"**⚠ OUTPUT DIFFERS** {t}"
    elif s.get("ids_match") is None and "sha256" in s:
        t = f"{t} (unverified)"
    return t


def mismatch_text(d: dict) -> str:
    if "first_document" not in d:
        return json.dumps(d, ensure_ascii=False)[:600]
    t = (
        f"{d['documents_differing']} of {d['documents']} inputs differ; the first is input {d['first_document']} "
        f"({d['document_bytes']} bytes), from output position {d.get('position', '?')}: "
    )
    if "reference_tokens" in d:
        t += f"tokenizers 0.23.3 `{' '.join(map(str, d['reference_tokens']))}` vs `{' '.join(map(str, d['this_tokens']))}`"
    elif "reference_around" in d:
        t += (
            f"tokenizers 0.23.3 {json.dumps(d['reference_around'], ensure_ascii=False)} vs "
            f"{json.dumps(d['this_around'], ensure_ascii=False)}"
        )
    if d.get("document_start"):
        t += f" (input starts {json.dumps(d['document_start'][:100], ensure_ascii=False)})"
    if d.get("error"):
        t += f" ({d['error']})"
    return t


def markdown(res: dict) -> str:
    rows = res["implementations"]
    label = {r["name"]: r["label"] for r in rows}
    corpora = list(res["corpora"])
    m = res["machine"]
    L = []
    L.append("# tokenprism benchmark: bert-base-uncased, one thread")
    L.append("")
    L.append(
        f"{res['date']} · {m['cpu']}, {m['cores']} cores{' (AVX2)' if m.get('avx2') else ''}, "
        f"{m.get('memory_gib', '?')} GiB · Python {m['python']} · load average "
        f"{res['load_average']['start']} at start, {res['load_average']['end']} at end (shared machine)"
        + (" · **quick smoke run, not a measurement**" if res["quick"] else "")
    )
    L.append("")
    pkg = {
        "tokenprism": "tokenprism",
        "tokenizers": "tokenizers",
        "tokenizers1": "tokenizers",
        "tokie": "tokie",
        "kitoken": "kitoken",
    }
    seen, vs = set(), []
    for r in rows:
        v = (pkg[r["impl"]], r.get("version"))
        if v[1] and v not in seen:
            seen.add(v)
            vs.append(f"{v[0]} {v[1]}")
    vers = ", ".join(vs)
    tp = res.get("tokenprism_build", {})
    L.append(
        f"Versions: {vers}. tokenprism extension sha256 {tp.get('extension_sha256', '?')}, repository at "
        f"{tp.get('git_head', '?')}{' (uncommitted changes in the source)' if tp.get('source_dirty') else ''}"
        f"{'; ' + res['rustc'] if res.get('rustc') else ''}."
    )
    L.append("")
    p = res["protocol"]
    L.append(f"Protocol: {p['summary']}")
    L.append("")
    ok = not res["mismatches"]
    if ok:
        L.append(
            "**Verified:** every cell's ids (and the normalizer's output) hash identical to tokenizers 0.23.3's."
        )
    else:
        L.append(
            f"**⚠ {len(res['mismatches'])} CELL(S) WITH OUTPUT DIFFERENT FROM tokenizers 0.23.3** "
            "(marked ⚠ below; details at the end and in results.json)."
        )
    L.append("")
    main_rows = [r for r in rows if "ablation" not in r and "encode" in r["ops"]]

    # (1) full encode
    enc = res["encode"]
    L.append("## 1. Full encode: MB/s (× tokenizers 0.23.3)")
    L.append("")
    L.append(
        "Median MB/s over the rounds; in brackets the median of the per-round ratios to tokenizers 0.23.3."
    )
    L.append("")
    L.append("| implementation | call per document | " + " | ".join(corpora) + " |")
    L.append("|---|---|" + "---:|" * len(corpora))
    for r in main_rows:
        cells = [
            cell_text(enc[c].get(r["name"]) if r.get("status") == "ok" else None, "mbps")
            for c in corpora
        ]
        L.append(f"| {r['label']} | `{r['call']}` | " + " | ".join(cells) + " |")
    L.append("")
    L.append(
        "tokenprism against the fastest verified peer (any other implementation whose ids matched), "
        "median of per-round ratios:"
    )
    L.append("")
    L.append("| | " + " | ".join(corpora) + " |")
    L.append("|---|" + "---:|" * len(corpora))
    L.append(
        "| fastest verified peer | "
        + " | ".join(
            (
                f"{label[enc[c]['_fastest_peer']]} {fmt(enc[c][enc[c]['_fastest_peer']]['mbps'])}"
                if enc[c].get("_fastest_peer")
                else "-"
            )
            for c in corpora
        )
        + " |"
    )
    for name in ("tokenprism-ids", "tokenprism"):
        L.append(
            f"| {label[name]} | "
            + " | ".join(fmt_ratio(enc[c].get(name, {}).get("vs_fastest_peer")) for c in corpora)
            + " |"
        )
    L.append("")
    if any(r["name"] == "tokenprism-array" and r.get("status") == "ok" for r in rows):
        L.append(
            "Ids as a numpy uint32 array against the same call's Python list (median of per-round "
            "ratios; above ×1 the array is faster):"
        )
        L.append("")
        L.append("| | " + " | ".join(corpora) + " |")
        L.append("|---|" + "---:|" * len(corpora))
        L.append(
            "| array / list | "
            + " | ".join(
                fmt_ratio(enc[c].get("tokenprism-array", {}).get("vs_tokenprism-ids"))
                for c in corpora
            )
            + " |"
        )
        L.append("")
    ab = [r for r in rows if "ablation" in r]
    if ab:
        base = "tokenprism-ids" if ab[0]["opts"]["api"] == "encode_ids" else "tokenprism"
        L.append(
            f"Each fast path off in turn ({label[base]} API): MB/s (× the same with all fast paths on, "
            "median of per-round ratios):"
        )
        L.append("")
        L.append("| fast path off | " + " | ".join(corpora) + " |")
        L.append("|---|" + "---:|" * len(corpora))
        for r in ab:
            cells = []
            for c in corpora:
                s = enc[c].get(r["name"])
                cells.append(cell_text(s, "mbps", f"vs_{base}") if s else "not run")
            L.append(f"| {r['ablation']} | " + " | ".join(cells) + " |")
        L.append("")

    # (2) normalizer
    if res.get("normalize"):
        nz = res["normalize"]
        L.append("## 2. The normalizer alone: MB/s (× tokenizers 0.23.3)")
        L.append("")
        L.append(
            "`tok.normalizer.normalize_str(doc)` per document. tokenizers 1.0.0rc3, tokie and kitoken "
            "expose no normalizer in their Python APIs."
        )
        L.append("")
        L.append("| implementation | " + " | ".join(corpora) + " |")
        L.append("|---|" + "---:|" * len(corpora))
        for r in rows:
            if "normalize" not in r["ops"]:
                continue
            cells = [
                cell_text(nz[c].get(r["name"]) if r.get("status") == "ok" else None, "mbps")
                for c in corpora
            ]
            lab = "tokenprism (all fast paths)" if r["name"] == "tokenprism" else r["label"]
            L.append(f"| {lab} | " + " | ".join(cells) + " |")
        L.append("")

    # (3) short inputs
    if res.get("short"):
        sh = res["short"]
        sizes = list(sh)
        L.append("## 3. Short inputs: microseconds per call from Python")
        L.append("")
        L.append(
            f"{p['short_slices']} slices per corpus and size (whole chars, at most N UTF-8 bytes, from "
            "random positions), one call each, same call as above; the mean over the corpora of "
            "the median µs per call."
        )
        L.append("")
        L.append("| implementation | " + " | ".join(f"{s} B" for s in sizes) + " |")
        L.append("|---|" + "---:|" * len(sizes))
        for r in rows:
            if "short" not in r["ops"]:
                continue
            cells = []
            for s in sizes:
                a = sh[s]["mean"].get(r["name"])
                if a is None:
                    cells.append("not run")
                    continue
                t = fmt(a["us_per_call"])
                if a.get("ids_match") is False:
                    t = f"**⚠ OUTPUT DIFFERS** {t}"
                cells.append(t)
            L.append(f"| {r['label']} | " + " | ".join(cells) + " |")
        L.append("")
        means = [
            (sh[s]["mean"].get("tokenprism-ids"), sh[s]["mean"].get("tokenprism-array"))
            for s in sizes
        ]
        if any(lst and arr for lst, arr in means):
            L.append(
                "Ids as an array against the list: µs per list call ÷ µs per array call (above ×1 "
                "the array is faster): "
                + ", ".join(
                    f"{s} B {fmt_ratio(lst['us_per_call'] / arr['us_per_call'])}"
                    for s, (lst, arr) in zip(sizes, means)
                    if lst and arr and arr.get("us_per_call")
                )
                + "."
            )
            L.append("")
        L.append(
            "tokenprism (ids only) speed-up over the fastest verified peer per corpus and size "
            "(below ×1.00 means a peer is faster):"
        )
        L.append("")
        L.append("| corpus | " + " | ".join(f"{s} B" for s in sizes) + " |")
        L.append("|---|" + "---:|" * len(sizes))
        for c in corpora:
            cells = []
            for s in sizes:
                cs = sh[s]["by_corpus"].get(c, {})
                fp = cs.get("_fastest_peer")
                x = cs.get("tokenprism-ids", {}).get("vs_fastest_peer")
                cells.append(f"{fmt_ratio(x)} ({label[fp]})" if fp and x is not None else "-")
            L.append(f"| {c} | " + " | ".join(cells) + " |")
        L.append("")

    # (4) callgrind
    cg = res.get("callgrind")
    if cg:
        L.append("## 4. Callgrind: instructions per MB of English (tokenprism's Rust example)")
        L.append("")
        if "error" in cg and not cg.get("modes"):
            L.append(f"Not measured: {cg['error']}")
        else:
            L.append(
                f"`encode_file` (cargo build --release --example encode_file, from the working tree at the "
                f"time of the run) on {cg['text']}; (instructions with 3 rounds − with 1 round) / 2 / MB, "
                "which cancels loading the tokenizer and the text."
            )
            L.append("")
            L.append("| mode | what | instructions per MB |")
            L.append("|---|---|---:|")
            what = {
                "encode": "full Encoding (ids, tokens, offsets)",
                "ids": "ids only",
                "normalize": "normalizer alone",
            }
            for mode, v in cg["modes"].items():
                L.append(f"| {mode} | {what[mode]} | {v['instructions_per_mb'] / 1e6:.1f}M |")
            if "normalizer_share" in cg:
                L.append("")
                L.append(
                    f"The normalizer's share of the full encode: {cg['normalizer_share'] * 100:.0f}% "
                    "(normalize / encode)."
                )
            if "error" in cg:
                L.append(f"\n{cg['error']}")
        L.append("")

    if res["not_run"]:
        L.append("## Not run")
        L.append("")
        for n in res["not_run"]:
            L.append(f"- {label.get(n['name'], n['name'])}: {n['reason']}")
        L.append("")
    if res["mismatches"]:
        L.append("## ⚠ Output mismatches")
        L.append("")
        for mm in res["mismatches"]:
            L.append(
                f"- **{label.get(mm['implementation'], mm['implementation'])}**, {mm['table']} "
                f"{mm['cell']}: {mismatch_text(mm['detail'])}"
            )
        L.append("")
    return "\n".join(L)


def chart(res: dict, path: Path) -> str | None:
    """Grouped bars per corpus, MB/s on a log scale. Returns why not, or None."""
    try:
        import matplotlib
    except ImportError:
        log("matplotlib missing: pip install matplotlib")
        r = run_quiet(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "matplotlib",
            ]
        )
        if r.returncode != 0:
            return "matplotlib is not installed and pip install failed: " + r.stdout[-300:]
        import importlib

        importlib.invalidate_caches()
        import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [
        r
        for r in res["implementations"]
        if "ablation" not in r and "encode" in r["ops"] and r.get("status") == "ok"
    ]
    corpora = list(res["corpora"])
    enc = res["encode"]
    colors = {
        "tokenprism-ids": "#1b5e20",
        "tokenprism-array": "#004d40",
        "tokenprism": "#66bb6a",
        REF: "#9e9e9e",
        "tokenizers-1.0.0rc3": "#1565c0",
        "tokie": "#ef6c00",
        "kitoken": "#8e24aa",
    }
    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=100)
    n = len(rows)
    width = 0.8 / max(n, 1)
    for i, r in enumerate(rows):
        xs, ys, bad = [], [], []
        for j, c in enumerate(corpora):
            s = enc[c].get(r["name"], {})
            if s.get("mbps"):
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(s["mbps"])
                bad.append(s.get("ids_match") is False)
        bars = ax.bar(xs, ys, width, label=r["label"], color=colors.get(r["name"], None))
        for b, y, is_bad in zip(bars, ys, bad):
            if is_bad:
                b.set_hatch("xx")
                b.set_edgecolor("red")
                ax.annotate(
                    "ids\ndiffer",
                    (b.get_x() + b.get_width() / 2, y),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    color="red",
                    fontsize=6,
                    fontweight="bold",
                )
    ax.set_yscale("log")
    ax.set_xticks(range(len(corpora)))
    ax.set_xticklabels(corpora)
    ax.set_ylabel("MB/s (log scale)")
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_axisbelow(True)
    m = res["machine"]
    ax.set_title(
        f"bert-base-uncased encode, one thread, median of {res['protocol']['rounds']} rounds "
        f"({res['date'][:10]}, {m['cpu']}, {m['cores']} cores)",
        fontsize=10,
    )
    ax.legend(fontsize=8, ncol=3, loc="upper left", frameon=False)
    top = max((s.get("mbps") or 0) for c in corpora for s in enc[c].values() if isinstance(s, dict))
    if top:
        ax.set_ylim(top=top * 8)  # room for the legend
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick", action="store_true", help="smoke run: ~64 KB per corpus, 1 round, no callgrind"
    )
    ap.add_argument(
        "--out",
        type=Path,
        help="output folder (default: bench/, or a temporary folder with --quick)",
    )
    ap.add_argument("--no-peers", action="store_true", help="only tokenprism and tokenizers 0.23.3")
    ap.add_argument(
        "--no-ablations", action="store_true", help="skip tokenprism with each fast path off"
    )
    ap.add_argument(
        "--ablation-api",
        choices=("encode", "encode_ids"),
        default="encode",
        help="the call the fast-path ablations use (default encode: fused off then means "
        "the staged pipeline, not a different output type)",
    )
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument(
        "--tokenizer", type=Path, help="tokenizer.json (default: bert-base-uncased in the data dir)"
    )
    ap.add_argument("--rounds", type=int)
    ap.add_argument(
        "--corpus-bytes", type=int, help="bytes per corpus (default 5,000,000; quick 64,000)"
    )
    ap.add_argument(
        "--min-seconds", type=float, help="least time per timed run (default 0.5; quick 0)"
    )
    ap.add_argument(
        "--short-n", type=int, help="short slices per corpus and size (default 1000; quick 40)"
    )
    ap.add_argument(
        "--short-min-seconds", type=float, help="least time per short-input run (default 0.1)"
    )
    ap.add_argument("--skip-normalize", action="store_true")
    ap.add_argument("--skip-short", action="store_true")
    ap.add_argument("--skip-callgrind", action="store_true")
    ap.add_argument("--callgrind", action="store_true", help="run callgrind even with --quick")
    ap.add_argument(
        "--no-build", action="store_true", help="don't (re)build the Rust example for callgrind"
    )
    ap.add_argument("--no-chart", action="store_true")
    ap.add_argument(
        "--tokenprism-wheel",
        type=Path,
        help="measure this wheel, installed into its own virtualenv (default: the tokenprism "
        "of the Python running this script)",
    )
    ap.add_argument(
        "--render",
        type=Path,
        metavar="RESULTS_JSON",
        help="only rewrite results.md and encode.png (into --out, default the JSON's folder) "
        "from an existing results.json",
    )
    ap.add_argument(
        "--allow-debug",
        action="store_true",
        help="run even if the tokenprism extension is a debug build (default: refuse)",
    )
    a = ap.parse_args(argv)

    if a.render:
        res = json.loads(a.render.read_text(encoding="utf-8"))
        dest = a.out or a.render.parent
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "results.md").write_text(markdown(res) + "\n", encoding="utf-8")
        why = None if a.no_chart else chart(res, dest / "encode.png")
        log(
            f"rendered {dest}/results.md{'' if a.no_chart or why else ', encode.png'}{' (no chart: ' + why + ')' if why else ''}"
        )
        return 0

    quick = a.quick
    rounds = a.rounds or (1 if quick else 5)
    target = a.corpus_bytes or (64_000 if quick else 5_000_000)
    min_s = a.min_seconds if a.min_seconds is not None else (0.0 if quick else 0.5)
    short_n = a.short_n or (40 if quick else 1000)
    short_min = a.short_min_seconds if a.short_min_seconds is not None else (0.0 if quick else 0.1)
    do_callgrind = (not a.skip_callgrind) and (a.callgrind or not quick)
    out = a.out or (
        Path(tempfile.gettempdir()) / "tokenprism-bench-quick" if quick else REPO / "bench"
    )
    corpora = [c for c in a.corpora.split(",") if c]
    for c in corpora:
        if c not in CORPORA:
            ap.error(f"unknown corpus {c!r}")
    tokenizer = a.tokenizer or data_dir() / "bert-base-uncased" / "tokenizer.json"
    missing = [
        p
        for p in [tokenizer] + [data_dir() / "corpora" / f"{c}.txt" for c in corpora]
        if not p.is_file()
    ]
    if missing:
        log(
            f"missing data: {', '.join(map(str, missing))}; run ./build.sh setup (or scripts/data/corpora.py)"
        )
        return 2

    started = time.time()
    load_start = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = implementations(
        peers=not a.no_peers, ablations=not a.no_ablations, ablation_api=a.ablation_api
    )
    tp_python = sys.executable
    if a.tokenprism_wheel:
        tp_python = tokenprism_venv(a.tokenprism_wheel.resolve())
    resolve_pythons(rows, tp_python)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="tokenprism-bench-"))
    workers: list[Worker] = []
    not_run = []
    for r in rows:
        if r.get("not_run"):
            r["status"] = "not run"
            not_run.append({"name": r["name"], "reason": r["not_run"]})
            log(f"NOT RUN {r['name']}: {r['not_run']}")
            continue
        try:
            w = Worker(r, tokenizer, tmp)
        except WorkerError as e:
            r["status"] = "not run"
            not_run.append({"name": r["name"], "reason": f"failed to start: {e}"})
            log(f"NOT RUN {r['name']}: {e}")
            continue
        r["status"] = "ok"
        r["version"] = w.hello["version"]
        r["python_version"] = w.hello.get("python")
        if r["kind"] == "ours":
            r["fast_paths"] = w.hello.get("fast_paths")
        workers.append(w)
    by_name = {w.name: w for w in workers}
    if REF not in by_name:
        log("the reference tokenizers 0.23.3 could not run: nothing can be verified")
        return 2
    tp_hello = next((w.hello for w in workers if w.row["impl"] == "tokenprism"), {})
    if tp_hello.get("debug_build") and not a.allow_debug:
        for w in workers:
            w.close()
        log(
            f"the tokenprism extension {tp_hello.get('module')} is a debug build (it has .debug_info): its "
            "speed means nothing. Build a release wheel (maturin build --release) and pass it with "
            "--tokenprism-wheel, or install it, or pass --allow-debug for a harness-only run."
        )
        return 2

    def using(op):
        return [w for w in workers if op in w.row["ops"]]

    res: dict = {
        "schema": 1,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": quick,
        "machine": machine(),
        "rustc": rustc_version(),
        "tokenprism_build": {
            "extension_sha256": tp_hello.get("extension_sha256"),
            "module": tp_hello.get("module"),
            "debug_build": tp_hello.get("debug_build"),
            "wheel": a.tokenprism_wheel.name if a.tokenprism_wheel else None,
            **{f"git_{k}" if k == "head" else k: v for k, v in git_info().items()},
        },
        "tokenizer": str(
            tokenizer.name
            if tokenizer.parent.name != "bert-base-uncased"
            else "bert-base-uncased/tokenizer.json"
        ),
        "protocol": {
            "summary": (
                f"one thread (RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false), each implementation in "
                f"its own process; each corpus cut into documents of whole lines of at least {DOC_BYTES} "
                f"bytes, cycled to about {target:,} bytes; one call per document, special tokens off, "
                f"truncation and padding off, ids as a Python list; one warm-up pass (hashed), then "
                f"{rounds} round(s) with the order rotating, each run at least {min_s} s of whole passes; "
                f"median MB/s (MB = 10^6 bytes of UTF-8 input) and median of per-round ratios; every "
                f"cell's sha256 of the ids compared with tokenizers 0.23.3's."
            ),
            "documents": f"consecutive whole lines, line ends kept, each at least {DOC_BYTES} bytes of UTF-8",
            "corpus_bytes": target,
            "rounds": rounds,
            "warmup_passes": 1,
            "min_seconds_per_run": min_s,
            "order": "rotating by one implementation per round",
            "unit": "MB/s = UTF-8 input bytes / wall seconds / 1e6",
            "hash": "sha256 over documents in order of (u32 LE count, u32 LE ids...); normalizer: (u32 LE byte count, UTF-8 bytes)",
            "short_sizes": list(SHORT_SIZES),
            "short_slices": short_n,
            "short_min_seconds": short_min,
            "ablation_api": a.ablation_api,
        },
        "implementations": [
            {k: v for k, v in r.items() if k not in ("python", "impl", "not_run")}
            | {"impl": r["impl"]}
            for r in rows
        ],
        "corpora": {},
        "encode": {},
        "normalize": {},
        "short": {},
        "callgrind": None,
        "mismatches": [],
        "not_run": not_run,
    }

    def record_mismatches(table: str, cell_name: str, summ: dict) -> None:
        for name, s in summ.items():
            if isinstance(s, dict) and s.get("ids_match") is False:
                res["mismatches"].append(
                    {
                        "table": table,
                        "cell": cell_name,
                        "implementation": name,
                        "detail": s.get("mismatch", {}),
                    }
                )

    def add_base_ratios(cell: dict, summ: dict, base: str) -> None:
        for name, s in summ.items():
            if not isinstance(s, dict):
                continue
            if name.startswith("tokenprism-no-"):
                b = base
            elif name == "tokenprism-array":  # arrays against the same call's lists
                b = "tokenprism-ids"
            else:
                continue
            a_, b_ = cell.get(name, {}).get("values") or [], cell.get(b, {}).get("values") or []
            n = min(len(a_), len(b_))
            s[f"vs_{b}"] = rnd(med([a_[i] / b_[i] for i in range(n)])) if n else None

    ablation_base = "tokenprism-ids" if a.ablation_api == "encode_ids" else "tokenprism"
    texts = {}
    try:
        for c in corpora:
            text = (data_dir() / "corpora" / f"{c}.txt").read_text(encoding="utf-8")
            texts[c] = text
            docs, total = corpus_docs(text, target)
            src_bytes = len(text.encode("utf-8"))
            res["corpora"][c] = {
                "source_bytes": src_bytes,
                "bytes": total,
                "documents": len(docs),
                "times_source": rnd(total / src_bytes, 3),
            }
            path = tmp / f"{c}.json"
            path.write_text(json.dumps(docs), encoding="utf-8")
            for w in workers:
                try:
                    w.ask(cmd="load", key=c, path=str(path))
                except WorkerError as e:
                    log(f"{w.name}: {e}")
            log(
                f"[{time.time() - started:6.0f}s] {c}: {total:,} bytes in {len(docs)} documents; encode"
            )
            cell = measure(using("encode"), c, "encode", rounds, min_s, docs, "mbps")
            summ = summarize(cell, rows, "mbps")
            add_base_ratios(cell, summ, ablation_base)
            res["encode"][c] = summ
            record_mismatches("encode", c, summ)
            log(
                "    "
                + ", ".join(
                    f"{n} {fmt(s.get('mbps'))}" for n, s in summ.items() if isinstance(s, dict)
                )
            )
            if not a.skip_normalize:
                log(f"[{time.time() - started:6.0f}s] {c}: normalize")
                cell = measure(using("normalize"), c, "normalize", rounds, min_s, docs, "mbps")
                summ = summarize(cell, rows, "mbps")
                add_base_ratios(cell, summ, "tokenprism")
                res["normalize"][c] = summ
                record_mismatches("normalize", c, summ)
                log(
                    "    "
                    + ", ".join(
                        f"{n} {fmt(s.get('mbps'))}" for n, s in summ.items() if isinstance(s, dict)
                    )
                )
        if not a.skip_short:
            short_ws = using("short")
            for size in SHORT_SIZES:
                res["short"][size] = {"by_corpus": {}, "mean": {}}
                for c in corpora:
                    sl = short_slices(texts[c], size, short_n, f"tokenprism-bench-{c}-{size}")
                    key = f"short-{c}-{size}"
                    path = tmp / f"{key}.json"
                    path.write_text(json.dumps(sl), encoding="utf-8")
                    for w in short_ws:
                        try:
                            w.ask(cmd="load", key=key, path=str(path))
                        except WorkerError as e:
                            log(f"{w.name}: {e}")
                    cell = measure(short_ws, key, "encode", rounds, short_min, sl, "us")
                    summ = summarize(cell, rows, "us")
                    for (
                        v
                    ) in summ.values():  # keep the JSON small: verdicts, not hashes, per short cell
                        if isinstance(v, dict):
                            for k in (
                                "us_per_call_rounds",
                                "sha256",
                                "bytes",
                                "calls_per_pass",
                                "tokens",
                            ):
                                v.pop(k, None)
                    summ["_mean_bytes"] = rnd(sum(len(x.encode("utf-8")) for x in sl) / len(sl), 3)
                    res["short"][size]["by_corpus"][c] = summ
                    record_mismatches("short", f"{c} {size} B", summ)
                # mean over corpora of the per-corpus medians
                for w in short_ws:
                    per = [res["short"][size]["by_corpus"][c].get(w.name, {}) for c in corpora]
                    us = [p_["us_per_call"] for p_ in per if p_.get("us_per_call")]
                    if us:
                        res["short"][size]["mean"][w.name] = {
                            "us_per_call": rnd(sum(us) / len(us)),
                            "ids_match": all(p_.get("ids_match") for p_ in per)
                            if len(us) == len(per)
                            else None,
                        }
                log(
                    f"[{time.time() - started:6.0f}s] short {size} B: "
                    + ", ".join(
                        f"{n} {fmt(v['us_per_call'])} us"
                        for n, v in res["short"][size]["mean"].items()
                    )
                )
    finally:
        for w in workers:
            w.close()
    for w in workers:
        if w.dead:
            log(f"{w.name} died: {w.dead}")
            res.setdefault("worker_failures", []).append({"name": w.name, "reason": w.dead})

    if do_callgrind and "en" in texts:
        log(f"[{time.time() - started:6.0f}s] callgrind")
        res["callgrind"] = callgrind(tokenizer, texts["en"], tmp, build=not a.no_build)
    res["load_average"] = {
        "start": load_start,
        "end": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    res["seconds"] = round(time.time() - started, 1)

    (out / "results.json").write_text(
        json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "results.md").write_text(markdown(res) + "\n", encoding="utf-8")
    if not a.no_chart:
        why = chart(res, out / "encode.png")
        if why:
            log(f"no chart: {why}")
            res["chart"] = why
            (out / "results.json").write_text(
                json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
            )
    shutil.rmtree(tmp, ignore_errors=True)
    log(
        f"wrote {out}/results.json, results.md{'' if a.no_chart else ', encode.png'} in {res['seconds']:.0f} s"
    )
    ours_bad = [mm for mm in res["mismatches"] if mm["implementation"].startswith("tokenprism")]
    ours_missing = [
        n["name"]
        for n in not_run + res.get("worker_failures", [])
        if n["name"].startswith("tokenprism")
    ]
    if ours_missing:
        log(f"!!! tokenprism rows that did not run: {', '.join(ours_missing)}")
        return 2
    if res["mismatches"]:
        log(
            f"!!! {len(res['mismatches'])} cell(s) differ from tokenizers 0.23.3: "
            + "; ".join(
                f"{mm['implementation']} {mm['table']} {mm['cell']}" for mm in res["mismatches"]
            )
        )
    return 3 if ours_bad else 0


if __name__ == "__main__":
    sys.exit(main())
