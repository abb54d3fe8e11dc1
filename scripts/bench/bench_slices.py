"""The browser benchmark's inputs: a slice of each development corpus, as documents; and the
native module's speed on them, which the Bench tab shows beside the wasm figures.

    python3 scripts/bench/bench_slices.py CORPORA_DIR OUT_DIR [--bytes N]
                                          [--native TOKENIZER_JSON [--cache DIR]]

Writes OUT_DIR/<corpus>.json for en, ru, el, ar, zh, code: the first N (default 262144) bytes
of ~/.cache/tokenprism/data/corpora/<corpus>.txt, cut at a char boundary, split into the
native benchmark's documents (scripts/bench/bench.py: whole lines, at least 4096 bytes each). The
page (Bench tab), scripts/bench/bench_web.py and the native runs all read these same documents.
Also OUT_DIR/index.json: {"corpora": {corpus: {"bytes": b, "documents": n}}, "native": bool}.

With --native (the build does this): the installed native module, one thread, times the
ids-only encode and the normalizer alone of that tokenizer.json on these same documents (a few
short rounds: seconds in all) and writes OUT_DIR/native.json; without an importable module
there are no native figures. With --cache, figures already made for the same module binary,
tokenizer file and documents are reused, so assembling the site twice gives the same bytes.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import documents, log, machine  # noqa: E402  (same documents as the native bench)
from bench_common import timed_passes  # noqa: E402
from bench_worker import doc_bytes  # noqa: E402  (the native bench's ids hash)

# The corpora the page's Bench tab offers (web/index.html), a part of bench.CORPORA.
CORPORA = ("en", "ru", "el", "ar", "zh", "code")
SLICE_BYTES = 256 * 1024
# Per corpus and op, after a hashed warm-up pass: the median of ROUNDS rounds, each whole passes
# over the slice's documents for at least MIN_SECONDS (6 corpora x 2 ops: about 5 s in all).
NATIVE_ROUNDS = 3
NATIVE_MIN_SECONDS = 0.2
# The rows of bench/results.json (./build.sh bench) the Bench tab reads: the ids-only encode and
# the normalizer alone.
NATIVE_ROWS = {"encode": "tokenprism-ids", "normalize": "tokenprism"}


def cut(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-8 bytes (whole chars only)."""
    b = text.encode("utf-8")[:limit]
    return b.decode("utf-8", errors="ignore")


def write_slices(
    corpora: Path,
    out: Path,
    limit: int = SLICE_BYTES,
    native: Path | None = None,
    cache: Path | None = None,
) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    index, docs_of = {}, {}
    for c in CORPORA:
        text = cut((corpora / f"{c}.txt").read_text(encoding="utf-8"), limit)
        docs_of[c] = documents(text)
        (out / f"{c}.json").write_text(json.dumps(docs_of[c], ensure_ascii=False), encoding="utf-8")
        index[c] = {
            "bytes": sum(len(d.encode("utf-8")) for d in docs_of[c]),
            "documents": len(docs_of[c]),
        }
    figures = native_figures(native, docs_of, cache) if native is not None else None
    if figures is not None:
        (out / "native.json").write_text(json.dumps(figures), encoding="utf-8")
    (out / "index.json").write_text(
        json.dumps({"corpora": index, "native": figures is not None}), encoding="utf-8"
    )
    return index


def native_figures(
    tokenizer_json: Path, docs_of: dict[str, list[str]], cache: Path | None
) -> dict | None:
    """The installed module's MB/s and ids hash per corpus, in bench/results.json's shape (only
    what the tab reads), from `cache` when it holds figures for the same inputs."""
    try:
        import tokenprism
        from tokenprism import _core
    except ImportError as e:
        log(f"bench slices: no native figures (the native module is not importable: {e})")
        return None
    key = hashlib.sha256()
    for part in (
        Path(_core.__file__).read_bytes(),
        tokenizer_json.read_bytes(),
        json.dumps(docs_of, ensure_ascii=False).encode("utf-8"),
        f"{NATIVE_ROUNDS} {NATIVE_MIN_SECONDS} {sorted(NATIVE_ROWS.items())}".encode(),
    ):
        key.update(hashlib.sha256(part).digest())
    cached = cache / f"bench-native-{key.hexdigest()[:20]}.json" if cache is not None else None
    if cached is not None and cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))

    if hasattr(tokenprism, "set_num_threads"):
        tokenprism.set_num_threads(1)
    tok = tokenprism.Tokenizer.from_file(str(tokenizer_json))
    tok.no_truncation()
    tok.no_padding()
    enc = tok.encode_ids
    ops = {
        "encode": lambda d: enc(d, add_special_tokens=False),
        "normalize": tok.normalizer.normalize_str,
    }
    figures: dict = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "module": {
            "version": tokenprism.__version__,
            "extension_sha256": hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:16],
        },
        "how": f"timed while the site was built: one thread, the median of {NATIVE_ROUNDS} rounds of "
        f"at least {NATIVE_MIN_SECONDS} s over the slice's documents",
        "corpora": {},
        "encode": {},
        "normalize": {},
    }
    for c, docs in docs_of.items():
        nbytes = sum(len(d.encode("utf-8")) for d in docs)
        figures["corpora"][c] = {"bytes": nbytes, "documents": len(docs)}
        for op, f in ops.items():
            h = hashlib.sha256()
            for r in timed_passes(f, docs, 0.0)["results"]:
                h.update(doc_bytes(op, r))
            rounds = []
            for _ in range(NATIVE_ROUNDS):
                t = timed_passes(f, docs, NATIVE_MIN_SECONDS)
                rounds.append(round(nbytes * t["passes"] / t["seconds"] / 1e6, 2))
            figures[op][c] = {
                NATIVE_ROWS[op]: {
                    "mbps": statistics.median(rounds),
                    "mbps_rounds": rounds,
                    "sha256": h.hexdigest(),
                }
            }
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(figures), encoding="utf-8")
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--bytes", type=int, default=SLICE_BYTES)
    ap.add_argument(
        "--native",
        type=Path,
        metavar="TOKENIZER_JSON",
        help="time the installed native module with this tokenizer.json",
    )
    ap.add_argument(
        "--cache", type=Path, metavar="DIR", help="reuse (and keep) the native figures here"
    )
    a = ap.parse_args()
    write_slices(a.corpora, a.out, a.bytes, a.native, a.cache)


if __name__ == "__main__":
    main()
