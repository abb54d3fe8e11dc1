"""The browser benchmark's inputs: a slice of each development corpus, as documents.

    python3 scripts/bench/bench_slices.py CORPORA_DIR OUT_DIR [--bytes N]

Writes OUT_DIR/<corpus>.json for en, ru, el, ar, zh, code: the first N (default 262144) bytes
of ~/.cache/tokenprism/data/corpora/<corpus>.txt, cut at a char boundary, split into the
native benchmark's documents (scripts/bench/bench.py: whole lines, at least 4096 bytes each). The
page (Bench tab), scripts/bench/bench_web.py and the native runs all read these same documents.
Also OUT_DIR/index.json: {"corpora": {corpus: {"bytes": b, "documents": n}}, "native": bool};
with --native FILE (the JSON of `./build.sh bench`, bench/results.json) a copy of it as
OUT_DIR/native.json, which the Bench tab shows beside the wasm figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import CORPORA, documents  # noqa: E402  (same documents as the native bench)

SLICE_BYTES = 256 * 1024


def cut(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-8 bytes (whole chars only)."""
    b = text.encode("utf-8")[:limit]
    return b.decode("utf-8", errors="ignore")


def write_slices(corpora: Path, out: Path, limit: int = SLICE_BYTES, native: Path | None = None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    index = {}
    for c in CORPORA:
        text = cut((corpora / f"{c}.txt").read_text(encoding="utf-8"), limit)
        docs = documents(text)
        (out / f"{c}.json").write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
        index[c] = {"bytes": sum(len(d.encode("utf-8")) for d in docs), "documents": len(docs)}
    has_native = native is not None and native.is_file()
    if has_native:
        # Only what the tab shows (no paths of the machine that ran it).
        full = json.loads(native.read_text(encoding="utf-8"))
        keep = {"tokenprism-ids", "tokenprism"}
        small = {"date": full.get("date"), "machine": full.get("machine"), "corpora": full.get("corpora"),
                 **{op: {c: {k: {f: v.get(f) for f in ("mbps", "sha256", "bytes")} for k, v in cell.items() if k in keep}
                         for c, cell in (full.get(op) or {}).items()}
                    for op in ("encode", "normalize")}}
        (out / "native.json").write_text(json.dumps(small), encoding="utf-8")
    (out / "index.json").write_text(json.dumps({"corpora": index, "native": has_native}), encoding="utf-8")
    return index


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--bytes", type=int, default=SLICE_BYTES)
    ap.add_argument("--native", type=Path)
    a = ap.parse_args()
    write_slices(a.corpora, a.out, a.bytes, a.native)


if __name__ == "__main__":
    main()
