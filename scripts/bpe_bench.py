#!/usr/bin/env python3
"""Quick BPE speed check: tokenprism.BpeTokenizer against tiktoken, one thread, MB/s per corpus.

    python3 scripts/bpe_bench.py [--encodings o200k_base,cl100k_base] [--rounds 3] [--seconds 1]

MB/s of UTF-8 input. Each cell: one warm-up pass, then `rounds` rounds alternating the two implementations, each round
encoding the corpus repeatedly for at least `seconds`; the median MB/s is printed with the ratio,
and the ids of the two must be identical (their FNV-1a hash is shown). Ours keeps a per-thread
cache of merged pieces, so the first pass over a corpus ("cold") is also shown. Also: short inputs (8-32
bytes, microseconds per call) and the worst case (100,000 identical bytes). Needs the data from
scripts/bpe_data.sh and the corpora from scripts/corpora.py.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

DATA = Path(os.environ.get("TOKENPRISM_DATA") or os.path.expanduser("~/.cache/tokenprism/data"))
CORPORA = ("en", "ru", "el", "ar", "zh", "code")


def fnv1a(ids) -> str:
    h = 0xCBF29CE484222325
    for i in ids:
        for b in i.to_bytes(4, "little"):
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def rate(fn, text: str, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    while True:
        fn(text)
        n += 1
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n * len(text.encode()) / dt / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encodings", default="o200k_base,cl100k_base")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--corpora", default=",".join(CORPORA))
    args = ap.parse_args()
    os.environ["TIKTOKEN_CACHE_DIR"] = str(DATA / "bpe" / "tiktoken-cache")
    import tiktoken

    import tokenprism

    for name in args.encodings.split(","):
        ref = tiktoken.get_encoding(name)
        t0 = time.perf_counter()
        ours = tokenprism.BpeTokenizer.from_tiktoken_file(str(DATA / "bpe" / f"{name}.tiktoken"), name)
        print(f"{name} (load {time.perf_counter() - t0:.2f} s)")
        print(f"  {'corpus':6} {'tiktoken':>9} {'ours':>9} {'ratio':>6} {'ours Mtok/s':>11}  ids")
        for lang in args.corpora.split(","):
            text = (DATA / "corpora" / f"{lang}.txt").read_text(encoding="utf-8")
            t0 = time.perf_counter()
            b = ours.encode_ordinary(text)
            cold = len(text.encode()) / (time.perf_counter() - t0) / 1e6
            a = ref.encode_ordinary(text)
            same = a == b
            r_ref, r_ours = [], []
            for _ in range(args.rounds):
                r_ref.append(rate(ref.encode_ordinary, text, args.seconds))
                r_ours.append(rate(ours.encode_ordinary, text, args.seconds))
            m_ref, m_ours = statistics.median(r_ref), statistics.median(r_ours)
            mtok = m_ours * 1e6 / len(text.encode()) * len(b) / 1e6
            print(f"  {lang:6} {m_ref:9.1f} {m_ours:9.1f} {m_ours / m_ref:5.1f}x {mtok:11.2f}  "
                  f"{'identical' if same else 'DIFFERENT'} {fnv1a(b)}  (first pass, cold cache: {cold:.1f} MB/s)")
        rnd = random.Random(0)
        en = (DATA / "corpora" / "en.txt").read_text(encoding="utf-8")
        shorts = []
        for _ in range(1000):
            i = rnd.randrange(len(en) - 40)
            shorts.append(en[i:i + rnd.randint(8, 32)])
        for label, fn in (("tiktoken", ref.encode_ordinary), ("ours", ours.encode_ordinary)):
            best = float("inf")
            for _ in range(5):
                t0 = time.perf_counter()
                for s in shorts:
                    fn(s)
                best = min(best, (time.perf_counter() - t0) / len(shorts))
            print(f"  short 8-32 bytes, {label}: {best * 1e6:.2f} us per call")
        for unit in ("a", " ", "é"):
            text = unit * 100_000
            t0 = time.perf_counter()
            ids = ours.encode_ordinary(text)
            dt = time.perf_counter() - t0
            t0 = time.perf_counter()
            want = ref.encode_ordinary(text)
            dr = time.perf_counter() - t0
            print(f"  {unit!r} x 100,000: ours {dt * 1e3:.1f} ms ({len(text.encode()) / dt / 1e6:.1f} MB/s), "
                  f"tiktoken {dr * 1e3:.1f} ms, {'identical' if ids == want else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
