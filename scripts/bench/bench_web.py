"""The browser benchmark: tokenprism's WebAssembly builds against the native module and the
JavaScript peers, on the same corpus slices, in one run; ids checked against the references.

    python3 scripts/bench/bench_web.py [--quick] [--out DIR] [--corpora en,ru] [--no-readme]

Run by `./build.sh bench-web [--quick]` after dist/ is built. Writes web_results.json,
web_results.md and web.png into --out (default bench/; --quick defaults to a temporary
folder) and, for a full run, the table into docs/PERFORMANCE.md ("Speed in the browser").

Protocol:
- Inputs: dist/data/bench/<corpus>.json, 256 KB of each development corpus as the native
  benchmark's documents (scripts/bench/bench_slices.py). Special tokens off everywhere.
- Browser: headless Debian Chromium (tests/paths.py), driven with Playwright. A quiet harness
  page (no Pyodide, no service worker) runs web/tabs/bench/driver.js, the Bench tab's own
  driver: per cell, one hashed warm-up pass per run, then ROUNDS rounds with the order
  rotating, each run repeating whole passes until MIN_MS; MB/s = UTF-8 bytes / time / 1e6,
  medians over rounds, ratios as medians of per-round ratios. Runs: wasm simd128, wasm scalar, simd128 with each
  fast path off (BERT: normalizer alone and ids-only encode; o200k_base: encode) and the JS
  peers (bundled from the pinned npm packages with esbuild, in their own worker, same rounds).
- Native: the tokenprism module of this Python (one thread), same documents, `encode_ids` /
  `normalizer.normalize_str` / BPE `encode_ordinary`, called from the page through Playwright
  as one more run of the same rounds (NativeBridge), so wasm ÷ native is a per-round ratio.
- References: tokenizers 0.23.3 (BERT ids and normalized text), tiktoken 0.14.0 (o200k ids).
  Every run's hash (sha256 of per-document u32 LE count + ids, as scripts/bench/bench_worker.py)
  is compared with the reference's; a peer that differs is reported and never counted as the
  fastest peer; a tokenprism run that differs makes the script exit with status 3.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests"))

from bench import CORPORA, machine  # noqa: E402
from bench_worker import doc_bytes  # noqa: E402

CACHE = Path(os.environ.get("TOKENPRISM_CACHE", Path.home() / ".cache" / "tokenprism"))
DATA = Path(os.environ.get("TOKENPRISM_DATA", CACHE / "data"))
NPM = CACHE / "npm-bench-web"
# The JS peers (npm name -> version); `./build.sh setup` installs exactly these into NPM.
PEER_PACKAGES = {
    "@huggingface/transformers": "4.3.2",
    "gpt-tokenizer": "4.0.0",
    "js-tiktoken": "1.0.21",
    "tiktoken": "1.0.22",
    "ai-tokenizer": "1.0.6",
}
ROUNDS, MIN_MS = 3, 250
QUICK_ROUNDS, QUICK_MIN_MS = 1, 20
README_START = "<!-- bench-web:start -->"
README_END = "<!-- bench-web:end -->"


def log(msg: str) -> None:
    print(f"bench-web: {msg}", file=sys.stderr, flush=True)


def sha256_of(outputs) -> str:
    h = hashlib.sha256()
    for o in outputs:
        h.update(doc_bytes("normalize" if isinstance(o, str) else "encode", o))
    return h.hexdigest()


def load_docs(slices: Path, corpus: str) -> list[str]:
    return json.loads((slices / f"{corpus}.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------ references


def reference_hashes(slices: Path, corpora: list[str], tokenizers_wanted=("bert", "o200k")) -> dict:
    """{corpus: {"bert/encode": sha, "bert/normalize": sha, "o200k/encode": sha}} from
    tokenizers 0.23.3 and tiktoken."""
    import tokenizers

    if tokenizers.__version__ != "0.23.3":
        sys.exit(f"the reference must be tokenizers==0.23.3, found {tokenizers.__version__}")
    out = {}
    ref = tokenizers.Tokenizer.from_file(str(DATA / "bert-base-uncased" / "tokenizer.json"))
    ref.no_truncation()
    ref.no_padding()
    enc = None
    if "o200k" in tokenizers_wanted:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(DATA / "bpe" / "tiktoken-cache"))
        import tiktoken

        enc = tiktoken.get_encoding("o200k_base")
    for c in corpora:
        docs = load_docs(slices, c)
        out[c] = {
            "bert/encode": sha256_of([ref.encode(d, add_special_tokens=False).ids for d in docs]),
            "bert/normalize": sha256_of([ref.normalizer.normalize_str(d) for d in docs]),
        }
        if enc is not None:
            out[c]["o200k/encode"] = sha256_of([enc.encode_ordinary(d) for d in docs])
    return out


# ------------------------------------------------------------------------------ native


class NativeBridge:
    """The native module as one more run of the browser benchmark: answers the messages of
    web/tabs/bench/worker.js (configs, hash, time) from Python, called by the page through
    Playwright."""

    def __init__(self, slices: Path):
        import tokenprism

        if hasattr(tokenprism, "set_num_threads"):
            tokenprism.set_num_threads(1)
        tok = tokenprism.Tokenizer.from_file(str(DATA / "bert-base-uncased" / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        bpe = tokenprism.BpeTokenizer.from_tiktoken_file(
            str(DATA / "bpe" / "o200k_base.tiktoken"), "o200k_base"
        )
        self.fns = {
            "bert/encode": lambda d: tok.encode_ids(d, add_special_tokens=False),
            "bert/normalize": tok.normalizer.normalize_str,
            "o200k/encode": bpe.encode_ordinary,
        }
        self.version = tokenprism.__version__
        self.slices = slices
        self.docs: dict[str, list[str]] = {}

    def __call__(self, kind: str, args_json: str) -> str:
        a = json.loads(args_json)
        if kind == "configs":
            return json.dumps(
                [{"name": "native", "label": f"native (tokenprism {self.version}, 1 thread)"}]
            )
        f = self.fns[f"{a['tokenizer']}/{a['op']}"]
        if a["corpus"] not in self.docs:
            self.docs[a["corpus"]] = load_docs(self.slices, a["corpus"])
        docs = self.docs[a["corpus"]]
        nbytes = sum(len(d.encode("utf-8")) for d in docs)
        if kind == "hash":
            outs = [f(d) for d in docs]
            return json.dumps(
                {
                    "sha256": sha256_of(outs),
                    "bytes": nbytes,
                    "documents": len(docs),
                    "tokens": None if a["op"] == "normalize" else sum(len(o) for o in outs),
                }
            )
        passes, t0 = 0, time.perf_counter()
        while True:
            for d in docs:
                f(d)
            passes += 1
            el = time.perf_counter() - t0
            if el * 1000 >= a["minMs"]:
                break
        return json.dumps({"ms": el * 1000, "passes": passes, "bytes": nbytes})


# ------------------------------------------------------------------------------ JS peers


def npm_version(name: str) -> str | None:
    p = NPM / "node_modules" / name / "package.json"
    return json.loads(p.read_text())["version"] if p.is_file() else None


def build_peers(out: Path) -> dict:
    """Bundles scripts/bench/bench_web/peers-worker.js with esbuild into out/peers.js, next to the
    files the peers load (tiktoken's wasm, bert-base-uncased's tokenizer.json for
    transformers.js). Returns the peer versions."""
    versions = {n: npm_version(n) for n in PEER_PACKAGES}
    wrong = {n: v for n, v in versions.items() if v != PEER_PACKAGES[n]}
    if wrong:
        sys.exit(f"JS peers missing or at other versions in {NPM}: {wrong} (run ./build.sh setup)")
    src = Path(__file__).resolve().parent / "bench_web"
    out.mkdir(parents=True, exist_ok=True)
    esbuild = NPM / "node_modules" / ".bin" / "esbuild"
    cmd = [
        str(esbuild),
        str(src / "peers-worker.js"),
        "--bundle",
        "--format=esm",
        "--platform=browser",
        "--splitting",
        f"--outdir={out}",
        "--entry-names=peers",
        "--log-level=warning",
        f"--alias:onnxruntime-web/webgpu={src / 'onnx-stub.js'}",
        f"--alias:onnxruntime-common={src / 'onnx-stub.js'}",
        f"--define:__PEER_VERSIONS__={json.dumps(versions)}",
    ]
    subprocess.run(cmd, check=True, env={**os.environ, "NODE_PATH": str(NPM / "node_modules")})
    shutil.copy(
        NPM / "node_modules" / "tiktoken" / "lite" / "tiktoken_bg.wasm", out / "tiktoken_bg.wasm"
    )
    shutil.copy(
        NPM / "node_modules" / "tiktoken" / "encoders" / "o200k_base.json",
        out / "tiktoken-o200k_base.json",
    )
    model = out / "models" / "bert-base-uncased"
    model.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / "bert-base-uncased" / "tokenizer.json", model / "tokenizer.json")
    # transformers.js reads the tokenizer class from tokenizer_config.json; bert-base-uncased's.
    (model / "tokenizer_config.json").write_text(
        json.dumps(
            {"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 512}
        )
    )
    (out / "harness.html").write_text(
        "<!doctype html><meta charset=utf-8><title>tokenprism bench harness</title><link rel=icon href=data:,>"
        '<script type="module" src="../tabs/bench/driver.js"></script>\n'
    )
    return versions


# ------------------------------------------------------------------------------ browser


class Handler(http.server.SimpleHTTPRequestHandler):
    """dist/ at /, and folders mounted over it: {"/bench-peers/": the peers' bundle, ...}."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
    }

    def __init__(self, *a, dist: Path, mounts: dict[str, Path], **kw):
        self.mounts = mounts
        super().__init__(*a, directory=str(dist), **kw)

    def translate_path(self, path):
        p = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, folder in self.mounts.items():
            if p.startswith(prefix):
                root = folder.resolve()
                target = (root / p[len(prefix) :]).resolve()
                return str(target if root in target.parents else root / "missing")
        return super().translate_path(path)

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, fmt, *args):
        if len(args) > 1 and str(args[1]) == "404":
            log(f"server: 404 {self.path}")


def serve(dist: Path, mounts: dict[str, Path]):
    """A local server on a free port (in a thread); returns it and its base URL."""
    handler = functools.partial(Handler, dist=dist, mounts=mounts)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def browser_run(
    base: str,
    options: dict,
    page_path: str = "bench-peers/harness.html",
    timeout_s: float = 3600,
    verbose: bool = True,
    native=None,
) -> dict:
    from playwright.sync_api import sync_playwright

    from paths import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(service_workers="block")
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on(
                "console",
                lambda m: (
                    m.type in ("error", "warning") and log(f"console {m.type}: {m.text[:300]}")
                ),
            )
            page.expose_function(
                "benchProgress", lambda text: log(f"  {text}") if verbose else None
            )
            if native is not None:
                page.expose_function("benchNative", native)
                options = {**options, "nativeBridge": "benchNative"}
            page.goto(base + page_path)
            page.wait_for_function("window.tokenprismBench !== undefined", timeout=60_000)
            page.set_default_timeout(timeout_s * 1000)
            res = page.evaluate(
                "async (o) => JSON.parse(await window.tokenprismBench.run("
                "{...o, onProgress: (t) => window.benchProgress(t)}))",
                options,
            )
            res["browser_version"] = browser.version
            res["page_errors"] = errors
            return res
        finally:
            browser.close()


# ------------------------------------------------------------------------------ report


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def analyse(res: dict) -> dict:
    """Adds ids_match_ref to every run and computes the headline ratios."""
    refs, native = res["references"], res["native"]["cells"]
    bad_ours, mismatching_peers = [], []
    for cell in res["browser"]["cells"]:
        key = f"{cell['tokenizer']}/{cell['op']}"
        ref = refs.get(cell["corpus"], {}).get(key)
        for r in cell["runs"]:
            r["ids_match_ref"] = r.get("sha256") == ref
            if not r["ids_match_ref"]:
                (bad_ours if r["kind"] != "peer" else mismatching_peers).append(
                    {"corpus": cell["corpus"], "cell": key, "run": r["name"]}
                )
        nat_run = next((r for r in cell["runs"] if r["kind"] == "native"), None)
        if nat_run and nat_run.get("vs_base"):
            # Timed in the same rounds as the wasm runs: the per-round ratio.
            cell["native_mbps"] = nat_run["mbps"]
            cell["wasm_vs_native"] = 1 / nat_run["vs_base"]
        nat = native.get(cell["corpus"], {}).get(key)
        if nat and not nat_run:
            nat["ids_match_ref"] = nat["sha256"] == ref
            if not nat["ids_match_ref"]:
                bad_ours.append({"corpus": cell["corpus"], "cell": key, "run": "native"})
            simd = next((r for r in cell["runs"] if r["name"] == "wasm-simd"), None)
            if simd and simd.get("mbps"):
                cell["native_mbps"] = nat["mbps"]
                cell["wasm_vs_native"] = simd["mbps"] / nat["mbps"]
        peers = [
            r for r in cell["runs"] if r["kind"] == "peer" and r["ids_match_ref"] and r.get("mbps")
        ]
        if peers:
            best = max(peers, key=lambda r: r["mbps"])
            cell["fastest_peer"] = best["label"]
            cell["fastest_peer_mbps"] = best["mbps"]
            cell["wasm_vs_fastest_peer"] = 1 / best["vs_base"] if best.get("vs_base") else None
        scalar = next((r for r in cell["runs"] if r["name"] == "wasm-scalar"), None)
        if scalar and scalar.get("vs_base"):
            cell["simd_vs_scalar"] = 1 / scalar["vs_base"]
        # The same with the text already in wasm memory (no JS -> wasm copy in the time).
        res_simd, res_scalar = (
            next((r for r in cell["runs"] if r["name"] == n), None)
            for n in ("wasm-simd-resident", "wasm-scalar-resident")
        )
        if (
            res_simd
            and res_scalar
            and res_simd.get("mbps_rounds")
            and res_scalar.get("mbps_rounds")
        ):
            cell["simd_vs_scalar_resident"] = median(
                [a / b for a, b in zip(res_simd["mbps_rounds"], res_scalar["mbps_rounds"]) if b]
            )
    res["tokenprism_mismatches"] = bad_ours
    res["peer_mismatches"] = mismatching_peers

    def cell(corpus, key):
        return next(
            (
                c
                for c in res["browser"]["cells"]
                if c["corpus"] == corpus and f"{c['tokenizer']}/{c['op']}" == key
            ),
            {},
        )

    corpora = sorted({c["corpus"] for c in res["browser"]["cells"]}, key=lambda c: CORPORA.index(c))
    res["targets"] = {
        "wasm_simd_vs_native_bert_encode_en": {
            "value": cell("en", "bert/encode").get("wasm_vs_native"),
            "target": 0.6,
        },
        "simd_vs_scalar_normalizer_en": {
            "value": cell("en", "bert/normalize").get("simd_vs_scalar"),
            "target": 3.0,
            "text_in_wasm_memory": cell("en", "bert/normalize").get("simd_vs_scalar_resident"),
        },
        "wasm_vs_fastest_js_peer_bert": {
            c: cell(c, "bert/encode").get("wasm_vs_fastest_peer") for c in corpora
        },
        "wasm_vs_fastest_js_peer_o200k": {
            c: cell(c, "o200k/encode").get("wasm_vs_fastest_peer") for c in corpora
        },
        "peer_target": 3.0,
    }
    return res


def f_mbps(x):
    return "–" if x is None else f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def f_ratio(x):
    return "–" if x is None else f"{x:.2f}"


def markdown(res: dict) -> str:
    cells = res["browser"]["cells"]
    corpora = sorted({c["corpus"] for c in cells}, key=lambda c: CORPORA.index(c))

    def get(corpus, key):
        return next(
            (c for c in cells if c["corpus"] == corpus and f"{c['tokenizer']}/{c['op']}" == key),
            None,
        )

    def run(c, name):
        return next((r for r in (c or {}).get("runs", []) if r["name"] == name), None)

    def mb(c, name):
        r = run(c, name)
        if r is None:
            return "–"
        return f_mbps(r.get("mbps")) + ("" if r.get("ids_match_ref") else " ✗ids")

    m = res["machine"]
    lines = [
        f"Browser benchmark, {res['date']}, {m.get('cpu')} ({m.get('cores')} cores), "
        f"Chromium {res['browser'].get('browser_version')}, "
        f"{res['protocol']['rounds']} round(s) of ≥ {res['protocol']['min_ms']} ms, "
        f"256 KB slices; MB/s medians; ratios are medians of per-round ratios; "
        f"✗ids = ids differ from the reference (not counted).",
        "",
    ]
    lines += [
        "**bert-base-uncased** (MB/s; ids-only encode, special tokens off)",
        "",
        "| corpus | normalizer simd128 | normalizer scalar | simd ÷ scalar | native normalizer | encode simd128 | encode scalar | native encode | wasm ÷ native | fastest JS peer | wasm ÷ peer |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for c in corpora:
        n, e = get(c, "bert/normalize"), get(c, "bert/encode")
        lines.append(
            f"| {c} | {mb(n, 'wasm-simd')} | {mb(n, 'wasm-scalar')} | {f_ratio((n or {}).get('simd_vs_scalar'))} "
            f"| {f_mbps((n or {}).get('native_mbps'))} | {mb(e, 'wasm-simd')} | {mb(e, 'wasm-scalar')} "
            f"| {f_mbps((e or {}).get('native_mbps'))} | {f_ratio((e or {}).get('wasm_vs_native'))} "
            f"| {(e or {}).get('fastest_peer', '–')} {f_mbps((e or {}).get('fastest_peer_mbps'))} "
            f"| {f_ratio((e or {}).get('wasm_vs_fastest_peer'))} |"
        )
    lines += [
        "",
        "Fast paths off, one at a time (wasm simd128, MB/s; encode / normalizer):",
        "",
        "| corpus | all on | simd off | page_cache off | lazy_output off | fused off |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in corpora:
        n, e = get(c, "bert/normalize"), get(c, "bert/encode")
        names = ["wasm-simd"] + [
            f"wasm-simd-no-{f}" for f in ("simd", "page_cache", "lazy_output", "fused")
        ]
        lines.append(f"| {c} | " + " | ".join(f"{mb(e, x)} / {mb(n, x)}" for x in names) + " |")
    lines += [
        "",
        "How text reaches wasm (simd128 builds, MB/s): TextEncoder.encodeInto into the module's "
        "input buffer (what the page and the tables above use), wasm-bindgen's `&str` glue (a "
        "charCodeAt loop), or already in wasm memory (no copy timed):",
        "",
        "| corpus | cell | encodeInto | wasm-bindgen string | in wasm memory | scalar, in wasm memory | simd ÷ scalar, in wasm memory |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for c in corpora:
        for key in ("bert/normalize", "bert/encode", "o200k/encode"):
            cc = get(c, key)
            if cc is None:
                continue
            lines.append(
                f"| {c} | {key} | {mb(cc, 'wasm-simd')} | {mb(cc, 'wasm-simd-wbg')} | {mb(cc, 'wasm-simd-resident')} "
                f"| {mb(cc, 'wasm-scalar-resident')} | {f_ratio(cc.get('simd_vs_scalar_resident'))} |"
            )
    o = [get(c, "o200k/encode") for c in corpora]
    peer_names = []
    for cc in o:
        for r in (cc or {}).get("runs", []):
            if r["kind"] == "peer" and r["label"] not in peer_names:
                peer_names.append(r["label"])
    lines += [
        "",
        "**o200k_base** (MB/s, encode with special tokens off)",
        "",
        "| corpus | wasm simd128 | native | wasm ÷ native | "
        + " | ".join(peer_names)
        + " | wasm ÷ fastest peer |",
        "|---|---:|---:|---:|" + "---:|" * len(peer_names) + "---:|",
    ]
    for c, cc in zip(corpora, o):
        peers = []
        for pn in peer_names:
            r = next((r for r in (cc or {}).get("runs", []) if r["label"] == pn), None)
            peers.append(
                "–"
                if r is None
                else f_mbps(r.get("mbps")) + ("" if r.get("ids_match_ref") else " ✗ids")
            )
        lines.append(
            f"| {c} | {mb(cc, 'wasm-simd')} | {f_mbps((cc or {}).get('native_mbps'))} "
            f"| {f_ratio((cc or {}).get('wasm_vs_native'))} | "
            + " | ".join(peers)
            + f" | {f_ratio((cc or {}).get('wasm_vs_fastest_peer'))} |"
        )
    t = res["targets"]
    lines += [
        "",
        "Targets (same machine, one run):",
        "",
        f"- wasm simd128 ÷ native, full BERT encode, en: {f_ratio(t['wasm_simd_vs_native_bert_encode_en']['value'])} (target ≥ 0.6)",
        f"- simd128 ÷ scalar wasm, normalizer, en: {f_ratio(t['simd_vs_scalar_normalizer_en']['value'])} (target ≥ 3; "
        f"text already in wasm memory: {f_ratio(t['simd_vs_scalar_normalizer_en'].get('text_in_wasm_memory'))})",
        "- tokenprism wasm ÷ fastest JS peer with the reference's ids, BERT: "
        + ", ".join(f"{c} {f_ratio(v)}" for c, v in t["wasm_vs_fastest_js_peer_bert"].items())
        + " (target ≥ 3)",
        "- same, o200k_base: "
        + ", ".join(f"{c} {f_ratio(v)}" for c, v in t["wasm_vs_fastest_js_peer_o200k"].items())
        + " (target ≥ 3)",
    ]
    if res["peer_mismatches"]:
        lines += [
            "",
            "Peers whose ids differ from the reference (not timed against): "
            + ", ".join(f"{m['run']} ({m['corpus']}, {m['cell']})" for m in res["peer_mismatches"]),
        ]
    if res["tokenprism_mismatches"]:
        lines += [
            "",
            "**tokenprism runs whose ids differ from the reference:** "
            + ", ".join(
                f"{m['run']} ({m['corpus']}, {m['cell']})" for m in res["tokenprism_mismatches"]
            ),
        ]
    if res["browser"].get("problems"):
        lines += [
            "",
            "Runs that failed: "
            + "; ".join(
                f"{p['run']} ({p['corpus']}, {p['op']}): {p['error'][:200]}"
                for p in res["browser"]["problems"]
            ),
        ]
    return "\n".join(lines) + "\n"


def chart(res: dict, path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"no chart: {e}"
    cells = res["browser"]["cells"]
    corpora = sorted({c["corpus"] for c in cells}, key=lambda c: CORPORA.index(c))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, key, title in (
        (axes[0], "bert/encode", "bert-base-uncased, ids-only encode"),
        (axes[1], "o200k/encode", "o200k_base, encode"),
    ):
        series = {"native": [], "wasm simd128": [], "wasm scalar": [], "fastest JS peer": []}
        for c in corpora:
            cc = next(
                (x for x in cells if x["corpus"] == c and f"{x['tokenizer']}/{x['op']}" == key), {}
            )
            runs = {r["name"]: r for r in cc.get("runs", [])}
            series["native"].append(cc.get("native_mbps") or 0)
            series["wasm simd128"].append((runs.get("wasm-simd") or {}).get("mbps") or 0)
            series["wasm scalar"].append((runs.get("wasm-scalar") or {}).get("mbps") or 0)
            series["fastest JS peer"].append(cc.get("fastest_peer_mbps") or 0)
        w = 0.2
        for i, (name, vals) in enumerate(series.items()):
            ax.bar([k + (i - 1.5) * w for k in range(len(corpora))], vals, w, label=name)
        ax.set_xticks(range(len(corpora)), corpora)
        ax.set_ylabel("MB/s (median)")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.suptitle(f"tokenprism in the browser vs native and JS peers ({res['date']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def update_readme(md: str, res: dict) -> None:
    readme = REPO / "docs" / "PERFORMANCE.md"
    text = readme.read_text(encoding="utf-8")
    block = (
        f"{README_START}\n`./build.sh bench-web` (scripts/bench/bench_web.py; full tables in "
        f"[bench/web_results.md](../bench/web_results.md), chart bench/web.png):\n\n{md}{README_END}"
    )
    if README_START in text:
        text = re.sub(
            re.escape(README_START) + ".*?" + re.escape(README_END),
            lambda _: block,
            text,
            flags=re.S,
        )
    else:
        sys.exit("docs/PERFORMANCE.md has no bench-web markers")
    readme.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="1 round of 20 ms, en only unless --corpora"
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--dist", type=Path, default=REPO / "dist")
    ap.add_argument("--corpora")
    ap.add_argument(
        "--rounds", type=int, help="rounds per cell (overrides --quick's and the default)"
    )
    ap.add_argument("--min-ms", type=float, help="least time per timed run, ms (likewise)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--no-readme", action="store_true")
    a = ap.parse_args(argv)
    rounds, min_ms = (QUICK_ROUNDS, QUICK_MIN_MS) if a.quick else (ROUNDS, MIN_MS)
    rounds, min_ms = a.rounds or rounds, a.min_ms or min_ms
    corpora = a.corpora.split(",") if a.corpora else (["en"] if a.quick else list(CORPORA))
    out = a.out or (Path(tempfile.mkdtemp(prefix="bench-web-")) if a.quick else REPO / "bench")
    out.mkdir(parents=True, exist_ok=True)
    slices = a.dist / "data" / "bench"
    if not (slices / "index.json").is_file():
        sys.exit(f"{slices} is missing: build dist first (./build.sh build)")
    started = time.time()
    res = {
        "schema": 1,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": a.quick,
        "machine": machine(),
        "protocol": {"rounds": rounds, "min_ms": min_ms},
        "corpora": {
            c: json.loads((slices / "index.json").read_text())["corpora"][c] for c in corpora
        },
    }
    log("references (tokenizers 0.23.3, tiktoken)")
    res["references"] = reference_hashes(slices, corpora)
    bridge = NativeBridge(slices)
    res["native"] = {
        "version": bridge.version,
        "cells": {},
        "how": "timed in the browser's rounds (NativeBridge)",
    }
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        peers_dir = Path(tmp)
        res["peer_versions"] = {} if a.no_peers else build_peers(peers_dir)
        if a.no_peers:
            build_peers_harness_only(peers_dir)
        server, base = serve(a.dist, {"/bench-peers/": peers_dir})
        try:
            log(f"browser runs ({base})")
            res["browser"] = browser_run(
                base,
                {
                    "corpora": corpora,
                    "tokenizers": ["bert", "o200k"],
                    "ops": ["normalize", "encode"],
                    "rounds": rounds,
                    "minMs": min_ms,
                    "peersUrl": None if a.no_peers else "bench-peers/peers.js",
                },
                native=bridge,
            )
        finally:
            server.shutdown()
    res["seconds"] = round(time.time() - started, 1)
    analyse(res)
    md = markdown(res)
    (out / "web_results.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    (out / "web_results.md").write_text(md, encoding="utf-8")
    note = chart(res, out / "web.png")
    if note:
        log(note)
    if not a.quick and not a.no_readme:
        update_readme(md, res)
    print(md)
    log(f"wrote {out}/web_results.{{json,md}} and web.png in {res['seconds']} s")
    return 3 if res["tokenprism_mismatches"] else 0


def build_peers_harness_only(out: Path) -> None:
    (out / "harness.html").write_text(
        "<!doctype html><meta charset=utf-8><title>tokenprism bench harness</title><link rel=icon href=data:,>"
        '<script type="module" src="../tabs/bench/driver.js"></script>\n'
    )


if __name__ == "__main__":
    sys.exit(main())
