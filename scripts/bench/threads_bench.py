"""Batches on two threads against one (docs/PERFORMANCE.md, "Threads").

For each tokenizer and batch API, on documents of each corpus (about --mb MB each): warm-up
calls, then --rounds rounds alternating one thread and two; each round's ratio of the two
wall times, and of the two CPU times (process_time: work the second thread adds, such as
caches it fills again, shows here even on a loaded machine). Reports medians of the ratios;
the ids of both thread counts are hashed and must be equal.

    PYTHONPATH=tests python3 scripts/bench/threads_bench.py --rounds 7 --json bench/threads.json
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import sys
import time

import tokenprism
from paths import bert_json, bpe_dir, bpe_json, corpus


def documents(lang: str, size: int) -> list[str]:
    """Runs of ~20 lines of the corpus, cycled to about `size` bytes."""
    lines = [x for x in corpus(lang).read_text(encoding="utf-8").splitlines() if x.strip()]
    docs = ["\n".join(lines[i : i + 20]) for i in range(0, len(lines), 20)]
    out, n = [], 0
    while n < size:
        for d in docs:
            out.append(d)
            n += len(d.encode())
            if n >= size:
                break
    return out


def digest(result) -> str:
    h = hashlib.sha256()
    if isinstance(result, tuple):  # (ids, offsets) arrays
        for a in result:
            h.update(memoryview(a).cast("B"))
    else:
        for ids in result:
            h.update(repr(list(ids.ids) if hasattr(ids, "ids") else ids).encode())
    return h.hexdigest()


def cases():
    o200k = tokenprism.BpeTokenizer.from_file(str(bpe_dir() / "o200k_base.tiktoken"))
    llama = tokenprism.Tokenizer.from_file(str(bpe_json("llama3.2")))
    bert = tokenprism.Tokenizer.from_file(str(bert_json()))
    bert.no_padding()
    bert.no_truncation()
    yield (
        "o200k",
        "encode_ordinary_batch_to_numpy",
        lambda d, n: o200k.encode_ordinary_batch_to_numpy(d, num_threads=n),
    )
    yield (
        "o200k",
        "encode_ordinary_batch (lists)",
        lambda d, n: o200k.encode_ordinary_batch(d, num_threads=n),
    )
    yield (
        "llama3.2",
        "encode_batch_ids(as_array=True)",
        lambda d, n: llama.encode_batch_ids(d, True, n, as_array=True),
    )
    yield (
        "bert",
        "encode_batch_ids(as_array=True)",
        lambda d, n: bert.encode_batch_ids(d, True, n, as_array=True),
    )
    yield "bert", "encode_batch (Encodings)", lambda d, n: bert.encode_batch(d, True, n)


def timed(f, docs, threads):
    gc.collect()
    gc.disable()
    try:
        c0, t0 = time.process_time(), time.perf_counter()
        res = f(docs, threads)
        return time.perf_counter() - t0, time.process_time() - c0, res
    finally:
        gc.enable()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--langs", default="en,ru,zh,code")
    ap.add_argument("--json")
    args = ap.parse_args()
    corpora = {lang: documents(lang, int(args.mb * 1e6)) for lang in args.langs.split(",")}
    rows = []
    print(
        "| tokenizer | API | corpus | MB/s, 1 thread | 2 threads / 1 (wall) | efficiency | CPU, 2 / 1 |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for name, api, f in cases():
        for lang, docs in corpora.items():
            size = sum(len(d.encode()) for d in docs)
            for threads in (1, 2, 1, 2):  # warm-up: caches, pools
                f(docs, threads)
            speedups, cpus, walls1 = [], [], []
            hashes = set()
            for _ in range(args.rounds):
                w1, c1, r1 = timed(f, docs, 1)
                w2, c2, r2 = timed(f, docs, 2)
                speedups.append(w1 / w2)
                cpus.append(c2 / c1)
                walls1.append(w1)
                hashes |= {digest(r1), digest(r2)}
                del r1, r2
            if len(hashes) != 1:
                sys.exit(f"{name} {api} {lang}: ids differ between one thread and two")
            row = {
                "tokenizer": name,
                "api": api,
                "corpus": lang,
                "bytes": size,
                "mb_s_one_thread": size / 1e6 / statistics.median(walls1),
                "speedup": statistics.median(speedups),
                "cpu_ratio": statistics.median(cpus),
            }
            rows.append(row)
            print(
                f"| {name} | {api} | {lang} | {row['mb_s_one_thread']:.1f} | "
                f"x{row['speedup']:.2f} | {row['speedup'] / 2:.0%} | x{row['cpu_ratio']:.2f} |",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rounds": args.rounds, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
