#!/usr/bin/env python3
"""tokenprism.Tokenizer (the general pipeline) on byte-level BPE files, against
tokenprism.BpeTokenizer (the byte-level engine) and tokenizers 0.23.3, one thread.

    python3 scripts/bench/general_bpe_bench.py [--files gpt2,llama3.2,deepseek-v4]
        [--corpora en,zh,code] [--bytes 1000000] [--rounds 7] [--json OUT]

Protocol, in one process (the three share it, so a slow spell on the machine hits them alike):
- Documents: each corpus cut into whole-line documents of >= 4 KB (scripts/bench/bench.py's
  corpus_docs), cycled to about --bytes; one Python call per document, special tokens off, ids
  as a Python list.
- Rows: Tokenizer.encode_ids, Tokenizer.encode(...).ids, BpeTokenizer.encode_ordinary,
  tokenizers 0.23.3 Tokenizer.encode(...).ids.
- First pass: each tokenizer freshly loaded, one pass over the documents (cold caches; for
  Tokenizer, the byte-level engine is made in it). Its ids are compared with tokenizers 0.23.3's,
  document by document; a mismatch is an error.
- Then --rounds rounds of one pass per row, the order rotating each round. Reported: median MB/s,
  and the median over rounds of each row's per-round ratio to tokenizers 0.23.3 and to
  BpeTokenizer.
tokenizers 1.0.0rc3 is not measured here (scripts/bench/bpe_bench.py runs it in its own venv).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

FILES = {
    "gpt2": "gpt2/tokenizer.json",
    "llama3.2": "llama3.2/tokenizer.json",
    "qwen3": "qwen3/tokenizer.json",
    "deepseek-v4": "deepseek-v4/tokenizer.json",
}


def rows(path: str):
    """name -> (load() -> encode(doc) -> ids)."""
    import tokenizers

    import tokenprism

    def general_ids():
        t = tokenprism.Tokenizer.from_file(path)
        return lambda d: t.encode_ids(d, add_special_tokens=False)

    def general_encode():
        t = tokenprism.Tokenizer.from_file(path)
        return lambda d: t.encode(d, add_special_tokens=False).ids

    def engine():
        t = tokenprism.BpeTokenizer.from_file(path)
        return t.encode_ordinary

    def reference():
        t = tokenizers.Tokenizer.from_file(path)
        return lambda d: t.encode(d, add_special_tokens=False).ids

    return {
        "Tokenizer.encode_ids": general_ids,
        "Tokenizer.encode": general_encode,
        "BpeTokenizer": engine,
        "tokenizers 0.23.3": reference,
    }


def one_pass(encode, docs) -> tuple[float, list[list[int]]]:
    t0 = time.perf_counter()
    out = [encode(d) for d in docs]
    return time.perf_counter() - t0, out


def cell(path: str, docs: list[str], nbytes: int, rounds: int) -> dict:
    made = rows(path)
    encoders, first = {}, {}
    want = None
    for name, load in made.items():
        encode = load()
        secs, ids = one_pass(encode, docs)
        if name == "tokenizers 0.23.3":
            want = ids
        encoders[name], first[name] = (encode, ids), nbytes / secs / 1e6
    for name, (_, ids) in encoders.items():
        bad = next((i for i, (a, b) in enumerate(zip(ids, want)) if a != b), None)
        if bad is not None or len(ids) != len(want):
            raise SystemExit(f"{name}: ids differ from tokenizers 0.23.3 at document {bad}")
    names = list(made)
    speed: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names) :] + names[: r % len(names)]:
            secs, _ = one_pass(encoders[n][0], docs)
            speed[n].append(nbytes / secs / 1e6)

    def ratio(a: str, b: str) -> float:
        return bench.rnd(bench.med([x / y for x, y in zip(speed[a], speed[b])]), 3)

    return {
        n: {
            "first_mbps": bench.rnd(first[n], 3),
            "mbps": bench.rnd(bench.med(speed[n]), 3),
            "vs_tokenizers": ratio(n, "tokenizers 0.23.3"),
            "vs_BpeTokenizer": ratio(n, "BpeTokenizer"),
        }
        for n in names
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--files", default="gpt2,llama3.2,deepseek-v4")
    ap.add_argument("--corpora", default="en,zh,code")
    ap.add_argument("--bytes", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    data = bench.data_dir()
    res: dict = {"load_start": " / ".join(f"{x:.2f}" for x in os.getloadavg()), "cells": {}}
    for f in a.files.split(","):
        path = str(data / "bpe" / FILES[f])
        for c in a.corpora.split(","):
            text = (data / "corpora" / f"{c}.txt").read_text(encoding="utf-8")
            docs, total = bench.corpus_docs(text, a.bytes)
            s = cell(path, docs, total, a.rounds)
            res["cells"][f"{f} {c}"] = s
            bench.log(
                f"{f} {c}: "
                + "; ".join(
                    f"{n} {v['mbps']} MB/s (first {v['first_mbps']}), x{v['vs_tokenizers']} tokenizers, "
                    f"x{v['vs_BpeTokenizer']} BpeTokenizer"
                    for n, v in s.items()
                )
            )
    res["load_end"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    text = json.dumps(res, indent=1)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
