"""Memory and speed on text that never repeats (docs/PERFORMANCE.md, "Caches on text seen once").

Every tokenizer keeps a per-thread cache of the words (pieces) it has encoded, which starts
over when it reaches its bounds. This streams --gb GB of generated words that almost never
repeat (random lowercase letters, about 1 in 6 chars a space) through one tokenizer at a time,
1 MB per call, one thread, and reports:

- resident memory of the process after the tokenizer is loaded, after the first 64 MB, and
  its peak over the rest (flat: the caches are bounded);
- MB per CPU second (process time: the machines are shared) over the first 32 MB, with an
  empty cache filling, and over the last 32 MB, with the cache full and starting over (a full
  cache must not make encoding slower).

    PYTHONPATH=tests python3 scripts/bench/cache_bench.py --gb 1
"""

from __future__ import annotations

import argparse
import random
import time

import psutil

import tokenprism
from paths import bert_json, bpe_dir, bpe_json, unigram_json

MB = 1 << 20
# Byte values to letters and spaces: 42 of 256 become a space.
TABLE = bytes((32 if b < 42 else 97 + b % 26) for b in range(256))


def chunks(total: int, seed: int):
    rng = random.Random(seed)
    for _ in range(total // MB):
        yield rng.randbytes(MB).translate(TABLE).decode("ascii")


def tokenizers():
    yield (
        "o200k (BpeTokenizer)",
        lambda: tokenprism.BpeTokenizer.from_file(str(bpe_dir() / "o200k_base.tiktoken")),
        "encode_ordinary",
    )
    yield (
        "llama3.2",
        lambda: tokenprism.Tokenizer.from_file(str(bpe_json("llama3.2"))),
        "encode_ids",
    )
    yield "bert", lambda: tokenprism.Tokenizer.from_file(str(bert_json())), "encode_ids"
    yield (
        "t5-style Unigram",
        lambda: tokenprism.Tokenizer.from_file(str(unigram_json("t5"))),
        "encode_ids",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=1.0)
    args = ap.parse_args()
    total = int(args.gb * 1024) * MB
    proc = psutil.Process()
    print(
        "| tokenizer | RSS loaded | after 64 MB | peak after | MB/CPU s, first 32 MB | last 32 MB |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, make, call in tokenizers():
        tok = make()
        if call == "encode_ids":
            tok.no_padding()
            tok.no_truncation()
            encode = lambda t, tok=tok: tok.encode_ids(t, False)  # noqa: E731
        else:
            encode = getattr(tok, call)
        rss_loaded = proc.memory_info().rss
        rss_64 = peak = 0
        first = last = 0.0
        n = total // MB
        for i, text in enumerate(chunks(total, seed=len(name))):
            t0 = time.process_time()
            encode(text)
            dt = time.process_time() - t0
            if i < 32:
                first += dt
            if i >= n - 32:
                last += dt
            rss = proc.memory_info().rss
            if i == 63:
                rss_64 = rss
            elif i > 63:
                peak = max(peak, rss)
        print(
            f"| {name} | {rss_loaded / MB:.0f} MB | {rss_64 / MB:.0f} MB | {peak / MB:.0f} MB | "
            f"{32 / first:.1f} | {32 / last:.1f} |",
            flush=True,
        )
        del tok, encode


if __name__ == "__main__":
    main()
