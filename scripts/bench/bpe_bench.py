#!/usr/bin/env python3
"""The byte-level BPE benchmark: tokenprism.BpeTokenizer against tiktoken (the reference for
ids), gigatoken, fastokens and tokenizers 0.23.3 / 1.0.0rc3, on o200k_base and cl100k_base; and
on tokenizer.json files (Llama 3.2, DeepSeek V4) against every peer that loads one: tokenizers
0.23.3 (then the reference for ids: one call per document, and encode_batch_fast on all
documents at once), 1.0.0rc3, gigatoken, fastokens, tokie, kitoken, and tiktoken built from the
file's vocab (ids as ranks) and Split regexes. A peer that cannot load the file is 'not
supported', one whose ids are not the reference's on a corpus 'ids differ' (never dropped).

    python3 scripts/bench/bpe_bench.py                  # full run, writes bench/bpe_results.{json,md}
    python3 scripts/bench/bpe_bench.py --quick --out D  # smoke run (~64 KB per corpus, 1 round)
    python3 scripts/bench/bpe_bench.py --encodings llama3.2,deepseek-v4 --merge
        # rewrites these two encodings' tables, keeps the others of bench/bpe_results.json

Protocol (the same as scripts/bench/bench.py, whose helpers this imports):
- Documents: each corpus cut into whole-line documents of >= 4 KB, cycled to about
  --corpus-bytes (default 2 MB); one Python call per document, special tokens off
  (encode_ordinary or its equivalent), ids returned as a Python list.
- Each implementation runs in its own worker process (scripts/bench/bpe_bench_worker.py), peers in
  their own virtualenvs under ~/.cache/tokenprism/venvs; RAYON_NUM_THREADS=1 (one thread).
- Per cell: one warm-up pass per implementation (where the ids are hashed: FNV-1a 64 per
  document, compared with tiktoken's), then --rounds rounds, the order rotating each round, a
  run repeating whole passes until --min-seconds. Reported: median MB/s and the median over
  rounds of the per-round ratio (ours / peer), so a slow spell on the shared machine hits both
  sides of a ratio.
- Ids as arrays: tokenprism's encode_ordinary_to_numpy and tiktoken's encode_to_numpy (no
  special token) return numpy uint32 arrays; they are compared with each other (arrays with
  arrays) and with the list call of the same library, never with a peer's lists.
- First pass: the hashed pass is each worker's first over the corpus (after one short call
  that lets a library set itself up), reported in MB per CPU second beside the warm rounds.
- Short inputs: English slices of 8, 16, 32, 64, 256 bytes (whole chars), one call each,
  microseconds per call from Python (loop included).
- Worst case: one call on 100,000 identical bytes ('a'), and the same per-byte time set
  against English (time per byte of 'a'x100,000 / time per byte of the English corpus).
- bpe-openai (a Rust crate, no Python binding): crate/tools/bpe-openai-bench times it against
  tokenprism's Rust API in one process on the same documents (built here with cargo), ids
  hashed as above and compared with tiktoken's; its own tables.
- tokenizers needs a tokenizer.json for the encoding: scripts/data/tiktoken_to_hf.py writes one
  from the rank file (and checks its ids against tiktoken's) into the data directory.
Peers not measured are listed with the reason.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (helpers shared with the BERT benchmark)

REPO = bench.REPO
WORKER = Path(__file__).resolve().parent / "bpe_bench_worker.py"
REF = "tiktoken"
HASH = "fnv1a64"
ENCODINGS = ("o200k_base", "cl100k_base", "llama3.2", "deepseek-v4")
# Encodings given as a tokenizer.json (under <data>/bpe/): tokenizers 0.23.3 is their reference.
HF_FILES = {"llama3.2": "llama3.2/tokenizer.json", "deepseek-v4": "deepseek-v4/tokenizer.json"}
SHORT_SIZES = (8, 16, 32, 64, 256)
NOT_MEASURED: dict[str, str] = {}
# bpe-openai (github/rust-gems) is a Rust crate with no Python binding: it is timed against
# tokenprism's Rust API in one process by crate/tools/bpe-openai-bench, on the same documents.
RUST_BENCH_DIR = REPO / "crate" / "tools" / "bpe-openai-bench"
RUST_BENCH = REPO / "crate" / "target" / "bpe-openai-bench" / "release" / "bpe-openai-bench"


def rust_bench_binary() -> tuple[Path | None, str | None]:
    """Builds crate/tools/bpe-openai-bench (cargo, release) if needed: (binary, why not)."""
    import subprocess

    env = dict(os.environ, CARGO_TARGET_DIR=str(RUST_BENCH.parent.parent))
    r = subprocess.run(
        ["cargo", "build", "--release", "--quiet"],
        cwd=RUST_BENCH_DIR,
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 or not RUST_BENCH.is_file():
        return None, f"cargo build of {RUST_BENCH_DIR} failed: {r.stderr.strip()[-300:]}"
    return RUST_BENCH, None


def rust_cell(
    binary: Path, enc: str, docs_path: Path, rounds: int, min_s: float, ref_hash: str | None
) -> dict:
    """bpe-openai and tokenprism (Rust API) on one document set: MB/s medians, the per-round
    ratio tokenprism / bpe-openai, and whether bpe-openai's ids equal tiktoken's."""
    import subprocess

    rank_file = bench.data_dir() / "bpe" / f"{enc}.tiktoken"
    r = subprocess.run(
        [str(binary), enc, str(rank_file), str(docs_path), str(rounds), str(min_s)],
        capture_output=True,
        text=True,
        env=dict(os.environ, RAYON_NUM_THREADS="1"),
    )
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-300:]}
    j = json.loads(r.stdout)
    out = {}
    for name in ("tokenprism", "bpe-openai"):
        secs = j[name]["seconds"]
        out[name] = {
            "mbps": bench.rnd(bench.med([j["bytes"] / t / 1e6 for t in secs])),
            "ids_match": (j[name]["fnv1a64"] == ref_hash) if ref_hash else None,
        }
    t_ours, t_theirs = j["tokenprism"]["seconds"], j["bpe-openai"]["seconds"]
    out["tokenprism"]["vs_bpe_openai"] = bench.rnd(
        bench.med([b / a for a, b in zip(t_ours, t_theirs)])
    )
    return out


# The byte-level BPE peers' virtualenvs: (requirement, distribution, pip flags).
BPE_PEER_VENVS = {
    "gigatoken": ("gigatoken==0.10.0", "gigatoken", []),
    "fastokens": ("fastokens==0.3.5", "fastokens", []),
}

# The ratio columns of the MB/s tables.
PEERS = (
    "tiktoken",
    "gigatoken",
    "fastokens",
    bench.REF,
    "tokenizers-0.23.3-batch",
    "tokenizers-1.0.0rc3",
    "tokie",
    "kitoken",
)


def hf_rows_for(encoding: str, compare: str | None = None) -> list[dict]:
    """The rows of a tokenizer.json encoding: tokenprism.BpeTokenizer.from_file (lists and
    numpy arrays), tokenizers 0.23.3 (the reference) per document and as one
    encode_batch_fast, and every peer that loads a tokenizer.json: tokenizers 1.0.0rc3,
    gigatoken, fastokens, tokie, kitoken, and tiktoken on the file's vocab and Split regexes."""
    tj = bench.data_dir() / "bpe" / HF_FILES[encoding]
    opts = {"tokenizer_json": str(tj)}
    rows = [
        dict(name="tokenprism", label="tokenprism", kind="ours", impl="tokenprism-json"),
        dict(
            name="tokenprism-numpy",
            label="tokenprism encode_to_numpy",
            kind="ours",
            impl="tokenprism-json-numpy",
        ),
        *(
            [
                dict(
                    name="tokenprism-before",
                    label="tokenprism (before)",
                    kind="ours",
                    impl="tokenprism-json",
                    python=compare,
                )
            ]
            if compare
            else []
        ),
        dict(name=bench.REF, label="tokenizers 0.23.3", kind="ref", impl="tokenizers"),
        dict(
            name="tokenizers-0.23.3-batch",
            label="tokenizers 0.23.3 encode_batch_fast",
            kind="peer",
            impl="tokenizers-batch",
        ),
        dict(
            name="tokenizers-1.0.0rc3",
            label="tokenizers 1.0.0rc3",
            kind="peer",
            impl="tokenizers1",
            venv=bench.PEER_VENVS["tokenizers-1.0.0rc3"],
        ),
        dict(
            name="tiktoken",
            label="tiktoken 0.14.0 encode_to_numpy (file's vocab + Split regexes)",
            kind="peer",
            impl="tiktoken-json",
        ),
        dict(
            name="gigatoken",
            label="gigatoken 0.10.0",
            kind="peer",
            impl="gigatoken-json",
            venv=BPE_PEER_VENVS["gigatoken"],
        ),
        dict(
            name="fastokens",
            label="fastokens 0.3.5",
            kind="peer",
            impl="fastokens-json",
            venv=BPE_PEER_VENVS["fastokens"],
        ),
        dict(
            name="tokie",
            label="tokie 0.1.4",
            kind="peer",
            impl="tokie",
            venv=bench.PEER_VENVS["tokie"],
        ),
        dict(
            name="kitoken",
            label="kitoken 0.11.1",
            kind="peer",
            impl="kitoken",
            venv=bench.PEER_VENVS["kitoken"],
        ),
    ]
    for r in rows:
        r["opts"] = opts
        if not tj.is_file():
            r["not_run"] = f"no {tj} (./build.sh setup fetches it)"
    return rows


def rows_for(encoding: str, pattern: str, compare: str | None = None) -> list[dict]:
    d = bench.data_dir() / "bpe"
    opts = {
        "rank_file": str(d / f"{encoding}.tiktoken"),
        "pattern": pattern,
        "tiktoken_cache": str(d / "tiktoken-cache"),
    }
    tj = d / encoding.removesuffix("_base") / "tokenizer.json"
    rows = [
        dict(name="tokenprism", label="tokenprism", kind="ours", impl="tokenprism"),
        *(
            [
                dict(
                    name="tokenprism-before",
                    label="tokenprism (before)",
                    kind="ours",
                    impl="tokenprism",
                    python=compare,
                )
            ]
            if compare
            else []
        ),
        dict(name=REF, label="tiktoken 0.14.0", kind="ref", impl="tiktoken"),
        dict(
            name="tokenprism-numpy",
            label="tokenprism encode_ordinary_to_numpy",
            kind="ours",
            impl="tokenprism-numpy",
        ),
        dict(
            name="tiktoken-numpy",
            label="tiktoken 0.14.0 encode_to_numpy",
            kind="peer",
            impl="tiktoken-numpy",
        ),
        dict(
            name="gigatoken",
            label="gigatoken 0.10.0",
            kind="peer",
            impl="gigatoken",
            venv=BPE_PEER_VENVS["gigatoken"],
        ),
        dict(
            name="fastokens",
            label="fastokens 0.3.5",
            kind="peer",
            impl="fastokens",
            venv=BPE_PEER_VENVS["fastokens"],
        ),
        dict(
            name=bench.REF,
            label="tokenizers 0.23.3",
            kind="peer",
            impl="tokenizers",
            needs_json=True,
        ),
        dict(
            name="tokenizers-1.0.0rc3",
            label="tokenizers 1.0.0rc3",
            kind="peer",
            impl="tokenizers1",
            needs_json=True,
            venv=bench.PEER_VENVS["tokenizers-1.0.0rc3"],
        ),
    ]
    if not tj.is_file():  # derived from the rank file, checked against tiktoken (see the script)
        import subprocess

        bench.log(f"writing {tj} (scripts/data/tiktoken_to_hf.py)")
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "data" / "tiktoken_to_hf.py"), encoding]
        )
    for r in rows:
        r["opts"] = dict(opts, tokenizer_json=str(tj))
        if r.get("needs_json") and not tj.is_file():
            r["not_run"] = f"no tokenizer.json for {encoding} on this machine ({tj})"
    return rows


def resolve(rows: list[dict], tp_python: str) -> None:
    for r in rows:
        if r.get("not_run"):
            continue
        if r["kind"] == "ours":
            r["python"] = r.get("python") or tp_python
        elif r["impl"] in ("tiktoken", "tiktoken-numpy", "tiktoken-json") or (
            r["impl"] in ("tokenizers", "tokenizers-batch")
            and bench.dist_version(sys.executable, "tokenizers") == bench.REF_VERSION
        ):
            r["python"] = sys.executable
        else:
            req, dist, flags = r.get("venv") or (
                f"tokenizers=={bench.REF_VERSION}",
                "tokenizers",
                [],
            )
            py, why = bench.ensure_venv(r["name"], req, dist, flags)
            r["python"], r["not_run"] = py, why


def fmt(x):
    return bench.fmt(x)


def ratio_text(x):
    return "-" if x is None else f"{x:.2f}×"


def peer_cell(e: dict, cell: dict, peer: str, first: bool) -> str:
    """Ours (encode_ordinary_to_numpy) over one peer: the median per-round ratio (warm) or the
    first passes' ratio; otherwise why there is none."""
    row = next((r for r in e["rows"] if r["name"] == peer), {})
    if row.get("status") != "ok":
        return "not supported"
    s = cell.get(peer, {})
    if "error" in s:
        return "error"
    if s.get("ids_match") is False:
        return "ids differ"
    ours = cell.get("tokenprism-numpy", {})
    if first:
        a, b = ours.get("first_cpu_mbps"), s.get("first_cpu_mbps")
        return ratio_text(a / b if a and b else None)
    return ratio_text(ours.get("vs", {}).get(peer))


def summary_table(e: dict, first: bool) -> list[str]:
    """One line per corpus: ours over every peer, and over the fastest peer whose ids equal the
    reference's (warm: by median MB/s; first pass: by first-pass MB per CPU second)."""
    peers = [p for p in PEERS if any(r["name"] == p for r in e["rows"])]
    labels = {r["name"]: r["label"].split(" (")[0] for r in e["rows"]}
    out = [
        "| corpus | "
        + " | ".join(labels[p] for p in peers)
        + " | fastest verified peer | ours/it |",
        "|---|" + "---:|" * (len(peers) + 2),
    ]
    key = "first_cpu_mbps" if first else "mbps"
    for c, cell in e["corpora"].items():
        ok = [
            p
            for p in peers
            if cell.get(p, {}).get("ids_match") and cell.get(p, {}).get(key) is not None
        ]
        best = max(ok, key=lambda p: cell[p][key], default=None)
        out.append(
            f"| {c} | "
            + " | ".join(peer_cell(e, cell, p, first) for p in peers)
            + f" | {labels[best] if best else '-'} | "
            + (peer_cell(e, cell, best, first) if best else "-")
            + " |"
        )
    return out


def markdown(res: dict) -> str:
    m = res["machine"]
    out = [
        f"# BPE benchmark ({res['date']})",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores (shared; load at start {res['load_start']}), "
        f"Python {m['python']}; git {res['git'].get('head')}. One thread; protocol in scripts/bench/bpe_bench.py. "
        f"Ratios are medians of per-round ratios (ours / peer); >1 means tokenprism is faster.",
        "",
    ]
    for enc, e in res["encodings"].items():
        names = [r["name"] for r in e["rows"] if r.get("status") == "ok"]
        labels = {r["name"]: r["label"] for r in e["rows"]}
        ref_label = next((r["label"] for r in e["rows"] if r["kind"] == "ref"), REF)
        peers = [p for p in PEERS if any(r["name"] == p for r in e["rows"])]
        # Arrays against arrays (tiktoken's encode_to_numpy) and against our own lists.
        arrays = [
            (col, base)
            for col, base in (
                ("ours/tiktoken, arrays", "tiktoken-numpy"),
                ("ours arrays/lists", "tokenprism"),
            )
            if "tokenprism-numpy" in names and base in names
        ]
        out += [f"## {enc}", ""]
        if e.get("date"):
            on = f" on {e['cpu']}" if e.get("cpu") else ""
            on += f", git {e['git']}" if e.get("git") else ""
            out += [f"Run {e['date']}{on} (load at start {e['load_start']}).", ""]
        if enc in HF_FILES and "tokenprism-numpy" in names:
            out += [
                "Ours (BpeTokenizer.from_file + encode_to_numpy, added tokens matched) over each peer's "
                "fastest per-document call, warm (median of per-round ratios); "
                f"'ids differ' = not {ref_label}'s ids on this corpus, "
                "'not supported' = the peer cannot load the file:",
                "",
                *summary_table(e, first=False),
                "",
                "The same, first pass (text seen once; MB per CPU second, one pass each):",
                "",
                *summary_table(e, first=True),
                "",
            ]
        out += [
            f"MB/s (median; ids hashed, ✓ = identical to {ref_label}):",
            "",
            "| corpus | "
            + " | ".join(labels[n] for n in names)
            + " | "
            + " | ".join(f"ours/{p}" for p in peers)
            + " |"
            + "".join(f" {col} |" for col, _ in arrays)
            + (" ours/before |" if "tokenprism-before" in names else ""),
            "|---|"
            + "---:|" * (len(names) + len(peers) + len(arrays) + ("tokenprism-before" in names)),
        ]
        for c, cell in e["corpora"].items():
            line = [c]
            for n in names:
                s = cell.get(n, {})
                ok = "✓" if s.get("ids_match") else ("✗" if s.get("ids_match") is False else "?")
                line.append(f"{fmt(s.get('mbps'))} {ok}" if "error" not in s else "error")
            for peer in peers:
                line.append(ratio_text(cell.get("tokenprism", {}).get("vs", {}).get(peer)))
            for _, base in arrays:
                line.append(ratio_text(cell.get("tokenprism-numpy", {}).get("vs", {}).get(base)))
            if "tokenprism-before" in names:
                s = cell.get("tokenprism", {})
                line.append(ratio_text(s.get("vs", {}).get("tokenprism-before")))
            out.append("| " + " | ".join(line) + " |")
        has_first = any(
            v.get("first_cpu_mbps") for cell in e["corpora"].values() for v in cell.values()
        )
        out += (
            [
                "",
                "First pass (text seen once): MB per CPU second of each worker's first, hashed "
                "pass over the corpus (one pass each, no rounds), and ours (encode_to_numpy) "
                "over the fastest peer's first pass that gave the reference's ids:",
                "",
                "| corpus | "
                + " | ".join(labels[n] for n in names)
                + " | ours first / fastest peer's first | ours first / ours warm (wall) |",
                "|---|" + "---:|" * (len(names) + 2),
            ]
            if has_first
            else []
        )
        for c, cell in e["corpora"].items() if has_first else ():
            firsts = {n: cell.get(n, {}).get("first_cpu_mbps") for n in names}
            ok_peers = [n for n in PEERS if firsts.get(n) and cell.get(n, {}).get("ids_match")]
            best = max((firsts[n] for n in ok_peers), default=None)
            # Arrays, as the summary tables: the fastest call of ours.
            ours = firsts.get("tokenprism-numpy")
            ours_s = cell.get("tokenprism-numpy", {})
            # Wall against wall: the first pass's MB/s over the warm median's.
            first_wall, warm = ours_s.get("first_mbps"), ours_s.get("mbps")
            out.append(
                f"| {c} | "
                + " | ".join(fmt(firsts[n]) for n in names)
                + f" | {ratio_text(ours / best if ours and best else None)}"
                + f" | {fmt(first_wall / warm if first_wall and warm else None)} |"
            )
        out += [
            "",
            "Short inputs (English, µs per call from Python, median):",
            "",
            "| bytes | " + " | ".join(labels[n] for n in names) + " |",
            "|---|" + "---:|" * len(names),
        ]
        for size, cell in e["short"].items():
            out.append(
                f"| {size} | "
                + " | ".join(fmt(cell.get(n, {}).get("us_per_call")) for n in names)
                + " |"
            )
        w = e.get("worst")
        if w:
            out += [
                "",
                "Worst case, 'a' × 100,000 (one call, median ms; per-byte time ÷ English's per-byte time):",
                "",
                "| | " + " | ".join(labels[n] for n in names) + " |",
                "|---|" + "---:|" * len(names),
                "| ms | " + " | ".join(fmt(w.get(n, {}).get("ms")) for n in names) + " |",
                "| × English per byte | "
                + " | ".join(fmt(w.get(n, {}).get("vs_english_per_byte")) for n in names)
                + " |",
            ]
        rust = e.get("rust")
        if rust:
            out += [
                "",
                "Rust API, one process (crate/tools/bpe-openai-bench): tokenprism against bpe-openai 0.3.2, "
                "MB/s (median; ✓ = ids identical to tiktoken):",
                "",
                "| corpus | tokenprism (Rust) | bpe-openai 0.3.2 | ours/bpe-openai |",
                "|---|---:|---:|---:|",
            ]
            for c, cell in rust.items():
                if "error" in cell:
                    out.append(f"| {c} | error | error | - |")
                    continue
                t, b = cell["tokenprism"], cell["bpe-openai"]

                def ok(x):
                    return (
                        "✓" if x.get("ids_match") else ("✗" if x.get("ids_match") is False else "?")
                    )

                out.append(
                    f"| {c} | {fmt(t['mbps'])} {ok(t)} | {fmt(b['mbps'])} {ok(b)} | {ratio_text(t.get('vs_bpe_openai'))} |"
                )
        rw = e.get("rust_worst")
        if rw and "error" not in rw:
            out += [
                "",
                "Rust API, 'a' × 100,000: MB/s, and per-byte time ÷ English's per-byte time:",
                "",
                "| | tokenprism (Rust) | bpe-openai 0.3.2 |",
                "|---|---:|---:|",
                f"| MB/s | {fmt(rw['tokenprism']['mbps'])} | {fmt(rw['bpe-openai']['mbps'])} |",
                f"| × English per byte | {fmt(rw['tokenprism'].get('vs_english_per_byte'))} | "
                f"{fmt(rw['bpe-openai'].get('vs_english_per_byte'))} |",
            ]
        nr = [f"{r['label']}: {r['not_run']}" for r in e["rows"] if r.get("not_run")]
        if nr:
            out += ["", "Not run: " + "; ".join(nr) + "."]
        out.append("")
    if NOT_MEASURED:
        out += [
            "",
            "Not measured: " + "; ".join(f"{k}: {v}" for k, v in NOT_MEASURED.items()) + ".",
            "",
        ]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--encodings", default=",".join(ENCODINGS))
    ap.add_argument("--corpora", default=",".join(bench.CORPORA))
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--min-seconds", type=float)
    ap.add_argument("--corpus-bytes", type=int)
    ap.add_argument("--short-n", type=int)
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--tokenprism-wheel",
        type=Path,
        help="measure this wheel (in its own venv), not the current Python's",
    )
    ap.add_argument(
        "--compare-python",
        help="a Python with another tokenprism build: an extra row 'tokenprism (before)'",
    )
    ap.add_argument(
        "--merge",
        action="store_true",
        help="keep the encodings of the existing results file that this run does not measure",
    )
    a = ap.parse_args(argv)
    quick = a.quick
    rounds = a.rounds or (1 if quick else 5)
    min_s = a.min_seconds if a.min_seconds is not None else (0.0 if quick else 0.3)
    target = a.corpus_bytes or (64_000 if quick else 2_000_000)
    short_n = a.short_n or (40 if quick else 500)
    out = a.out or (
        Path(tempfile.gettempdir()) / "tokenprism-bpe-bench-quick" if quick else REPO / "bench"
    )
    data = bench.data_dir()
    corpora = [c for c in a.corpora.split(",") if c]
    texts = {c: (data / "corpora" / f"{c}.txt").read_text(encoding="utf-8") for c in corpora}
    tp_python = (
        str(bench.tokenprism_venv(a.tokenprism_wheel.resolve()))
        if a.tokenprism_wheel
        else sys.executable
    )
    os.environ["TIKTOKEN_CACHE_DIR"] = str(data / "bpe" / "tiktoken-cache")
    import tiktoken

    res = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_start": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "machine": bench.machine(),
        "git": bench.git_info(),
        "protocol": {
            "rounds": rounds,
            "min_seconds": min_s,
            "corpus_bytes": target,
            "short_slices": short_n,
            "hash": "FNV-1a 64, one step per id",
        },
        "not_measured": NOT_MEASURED,
        "encodings": {},
    }
    tmp = Path(tempfile.mkdtemp(prefix="tokenprism-bpe-bench-"))
    rust_bin, why = rust_bench_binary()
    if why:
        NOT_MEASURED["bpe-openai"] = why
        bench.log(f"NOT RUN bpe-openai: {why}")
    bad = False
    for enc in a.encodings.split(","):
        if enc in HF_FILES:
            rows, ref_name = hf_rows_for(enc, a.compare_python), bench.REF
        else:
            rows, ref_name = (
                rows_for(enc, tiktoken.get_encoding(enc)._pat_str, a.compare_python),
                REF,
            )
        resolve(rows, tp_python)
        workers = []
        for r in rows:
            if r.get("not_run"):
                r["status"] = "not run"
                bench.log(f"NOT RUN {r['name']} ({enc}): {r['not_run']}")
                continue
            try:
                w = bench.Worker(r, enc, tmp, script=WORKER)
            except bench.WorkerError as e:
                r["status"], r["not_run"] = "not run", f"failed to start: {e}"
                bench.log(f"NOT RUN {r['name']} ({enc}): {e}")
                continue
            r["status"], r["version"] = "ok", w.hello["version"]
            workers.append(w)
        e = {
            "rows": [{k: v for k, v in r.items() if k not in ("opts", "venv")} for r in rows],
            "corpora": {},
            "short": {},
            "worst": {},
        }
        e["date"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        e["load_start"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        e["cpu"] = res["machine"]["cpu"]
        e["git"] = res["git"].get("head")
        res["encodings"][enc] = e

        # Called within this loop's turn; the defaults bind this encoding's workers and rows.
        def cell(key, docs, unit, min_seconds, workers=workers, rows=rows, ref_name=ref_name):
            p = tmp / f"{key}.json"
            p.write_text(json.dumps(docs), encoding="utf-8")
            for w in workers:
                if not w.dead:
                    try:
                        w.ask(cmd="load", key=key, path=str(p))
                    except bench.WorkerError as err:
                        bench.log(f"{w.name}: load {key}: {err}")
            c = bench.measure(
                workers,
                key,
                "encode",
                rounds,
                min_seconds,
                docs,
                unit,
                ref_name=ref_name,
                hash_key=HASH,
            )
            s = bench.summarize(c, rows, unit, ref_name=ref_name, hash_key=HASH)
            s.pop("_fastest_peer", None)
            speed = {
                n: (v if unit == "mbps" else [1 / x for x in v])
                for n, v in ((n, c[n].get("values") or []) for n in c)
            }
            for n in s:  # per-round ratio of tokenprism (lists, arrays) to every other row
                s[n]["vs"] = {}
            for ours in ("tokenprism", "tokenprism-numpy"):
                for n in s if ours in s else ():
                    a_, b_ = speed.get(ours, []), speed.get(n, [])
                    k = min(len(a_), len(b_))
                    s[ours]["vs"][n] = (
                        bench.rnd(bench.med([a_[i] / b_[i] for i in range(k)])) if k else None
                    )
            return s

        for c in corpora:
            docs, total = bench.corpus_docs(texts[c], target)
            bench.log(f"{enc} {c}: {len(docs)} documents, {total} bytes")
            s = cell(f"{enc}-{c}", docs, "mbps", min_s)
            e["corpora"][c] = s
            if rust_bin and enc not in HF_FILES:
                ref_hash = s.get(REF, {}).get(HASH)
                e.setdefault("rust", {})[c] = rc = rust_cell(
                    rust_bin, enc, tmp / f"{enc}-{c}.json", rounds, min_s, ref_hash
                )
                bench.log(f"  rust: {rc}")
            if s.get("tokenprism", {}).get("ids_match") is False:
                bad = True
            bench.log("  " + ", ".join(f"{n} {fmt(v.get('mbps'))}" for n, v in s.items()))
        if "en" in texts:
            for size in SHORT_SIZES:
                sl = bench.short_slices(texts["en"], size, short_n, f"tokenprism-bpe-{size}")
                s = cell(f"{enc}-short-{size}", sl, "us", 0.0 if quick else 0.1)
                e["short"][size] = {
                    n: {k: v[k] for k in ("us_per_call", "ids_match") if k in v}
                    for n, v in s.items()
                }
                bench.log(
                    f"  short {size}: "
                    + ", ".join(f"{n} {fmt(v.get('us_per_call'))}" for n, v in s.items())
                )
            s = cell(f"{enc}-worst", ["a" * 100_000], "us", 0.0 if quick else 0.3)
            for n, v in s.items():
                en = e["corpora"].get("en", {}).get(n, {}).get("mbps")
                ms = v.get("us_per_call") and v["us_per_call"] / 1000
                per_byte = ms / 1000 / 100_000 if ms else None
                e["worst"][n] = {
                    "ms": bench.rnd(ms),
                    "ids_match": v.get("ids_match"),
                    "vs_english_per_byte": bench.rnd(per_byte * en * 1e6)
                    if per_byte and en
                    else None,
                }
            bench.log(
                "  worst: " + ", ".join(f"{n} {fmt(v.get('ms'))} ms" for n, v in e["worst"].items())
            )
            if rust_bin and enc not in HF_FILES:
                rc = rust_cell(
                    rust_bin,
                    enc,
                    tmp / f"{enc}-worst.json",
                    rounds,
                    0.0 if quick else 0.3,
                    s.get(REF, {}).get(HASH),
                )
                for n, v in rc.items() if "error" not in rc else ():
                    en = e.get("rust", {}).get("en", {}).get(n, {}).get("mbps")
                    v["vs_english_per_byte"] = (
                        bench.rnd(en / v["mbps"]) if en and v.get("mbps") else None
                    )
                e["rust_worst"] = rc
                bench.log(f"  rust worst: {rc}")
        for w in workers:
            w.close()
    out.mkdir(parents=True, exist_ok=True)
    old = out / "bpe_results.json"
    if a.merge and old.is_file():
        prev = json.loads(old.read_text(encoding="utf-8"))
        kept = prev["encodings"]
        for e in kept.values():  # an older run's encodings keep that run's date and load
            e.setdefault("date", prev["date"])
            e.setdefault("load_start", prev["load_start"])
            e.setdefault("cpu", prev["machine"]["cpu"])
            e.setdefault("git", prev["git"].get("head"))
        res["encodings"] = {
            enc: res["encodings"].get(enc) or kept[enc]
            for enc in [*ENCODINGS, *kept, *res["encodings"]]
            if enc in res["encodings"] or enc in kept
        }
    (out / "bpe_results.json").write_text(
        json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "bpe_results.md").write_text(markdown(res), encoding="utf-8")
    bench.log(f"wrote {out / 'bpe_results.json'} and {out / 'bpe_results.md'}")
    return 3 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
