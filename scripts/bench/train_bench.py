#!/usr/bin/env python3
"""BPE training speed: tokenprism.train_bpe against the textbook chapter's code and against
Hugging Face tokenizers' BpeTrainer, one thread.

    python3 scripts/bench/train_bench.py [--rounds 3] [--chapter-mb 1] [--bytes-mb 5] [--merges 30000]

(a) Chapter mode, 1 MB of English to vocab_size 1000, against the Python code of the textbook
    chapter on tokenization (section 1.3). That code recounts every pair of every distinct word
    and rewrites every word on each merge; run to the end on 1 MB it takes far too long, so it is
    timed, not run to the end: its set-up (counting words) once, then a few iterations of its loop body
    starting from the training state after m = 0, 1/4, 1/2, 3/4 of the merges (that state is
    rebuilt exactly: after m merges every word is split as the chapter's tokenize() splits it
    with the first m merges). The cost of one iteration falls as words get shorter, so the total
    is the integral of the sampled per-iteration costs (trapezoids), plus the set-up. This
    estimate is printed next to the measured time of ours; a run with --chapter-full instead
    runs the chapter's code to the end.
(b) Byte-level, --merges merges on --bytes-mb MB (1 MB slices of en, ru, el, ar, code; lines as
    the texts) against tokenizers.trainers.BpeTrainer (ByteLevel pre-tokenizer without prefix
    space, the 256 bytes as initial alphabet, no special tokens) with RAYON_NUM_THREADS=1, in
    a subprocess. Rounds alternate the two; the median of the per-round ratios is printed.
Times are CPU seconds of the process (time.process_time), not wall-clock: on a shared, loaded
machine wall-clock time mostly measures the other processes. Corpora: scripts/data/corpora.py
(./build.sh setup).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(os.environ.get("TOKENPRISM_DATA") or os.path.expanduser("~/.cache/tokenprism/data"))


# The textbook chapter's code (section 1.3), split into its set-up and its loop body so the
# body can be timed from any training state: the tests' copy, tests/chapter.py.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from chapter import chapter_iteration, chapter_setup, chapter_tokenize, chapter_train_bpe  # noqa: E402


def chapter_bench(text: str, vocab_size: int, samples: int, full: bool) -> None:
    import tokenprism

    runs = []
    for _ in range(3):
        t0 = time.process_time()
        r = tokenprism.train_bpe(text, vocab_size)
        runs.append(time.process_time() - t0)
    ours = statistics.median(runs)
    n = len(r.merges)
    print(
        f"(a) chapter mode: {len(text.encode()) / 1e6:.2f} MB, vocab_size {vocab_size}: "
        f"{r.initial_vocab_size} initial symbols, {n} merges"
    )
    print(f"    tokenprism.train_bpe: {ours:.3f} s (median of 3)")
    if full:
        t0 = time.process_time()
        merges, _ = chapter_train_bpe(text, vocab_size)
        theirs = time.process_time() - t0
        assert merges == r.merges, "the chapter's code learned other merges"
        print(f"    chapter's code, run to the end: {theirs:.1f} s  -> {theirs / ours:.0f}x")
        return
    t0 = time.process_time()
    words, splits, _, vocab = chapter_setup(text)
    setup = time.process_time() - t0
    points = []
    for k in range(4):
        m = n * k // 4
        prefix = r.merges[:m]
        # After m merges every word is split as the chapter's tokenize() splits it.
        state = {w: chapter_tokenize(w, prefix) for w in words}
        merges_done: list = list(prefix)
        t0 = time.process_time()
        for _ in range(samples):
            chapter_iteration(words, state, merges_done, set(vocab))
        per = (time.process_time() - t0) / samples
        assert merges_done[m : m + samples] == r.merges[m : m + samples], "state rebuilt wrongly"
        points.append((m, per))
        print(f"    chapter's code, one iteration after {m} merges: {per * 1000:.0f} ms")
    points.append((n, points[-1][1]))  # the last quarter at the 3/4 cost: an over-estimate of it
    total = setup + sum((m1 - m0) * (p0 + p1) / 2 for (m0, p0), (m1, p1) in zip(points, points[1:]))
    print(
        f"    chapter's code, estimated: set-up {setup:.2f} s + {n} iterations = {total:.0f} s "
        f"-> {total / ours:.0f}x  (estimate from {samples} timed iterations at each of 4 points)"
    )


HF_WORKER = r"""
import json, sys, time
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
texts = json.load(open(sys.argv[1]))
vocab_size = int(sys.argv[2])
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=0, show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
t0 = time.process_time()
tok.train_from_iterator(texts, trainer)
dt = time.process_time() - t0
print(json.dumps({"seconds": dt, "vocab": tok.get_vocab_size()}))
"""


def byte_level_bench(texts: list[str], merges: int, rounds: int, tmp: Path) -> None:
    import tokenprism

    path = tmp / "train_bench_texts.json"
    path.write_text(json.dumps(texts))
    worker = tmp / "train_bench_hf.py"
    worker.write_text(HF_WORKER)
    size = sum(len(t.encode()) for t in texts) / 1e6
    print(
        f"(b) byte-level: {size:.2f} MB in {len(texts)} lines, {merges} merges (vocab_size {256 + merges})"
    )
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    ratios, ours_t, theirs_t = [], [], []
    for k in range(rounds):
        t0 = time.process_time()
        r = tokenprism.train_bpe(texts, 256 + merges, byte_level=True)
        ours = time.process_time() - t0
        out = subprocess.run(
            [sys.executable, str(worker), str(path), str(256 + merges)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        theirs = json.loads(out.stdout)["seconds"]
        ours_t.append(ours)
        theirs_t.append(theirs)
        ratios.append(theirs / ours)
        print(
            f"    round {k + 1}: tokenprism {ours:.2f} s ({len(r.merges)} merges), "
            f"tokenizers BpeTrainer (1 thread) {theirs:.2f} s -> {theirs / ours:.2f}x"
        )
    print(
        f"    median: tokenprism {statistics.median(ours_t):.2f} s, tokenizers {statistics.median(theirs_t):.2f} s, "
        f"ratio {statistics.median(ratios):.2f}x (>1: ours faster)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chapter-mb", type=float, default=1.0)
    ap.add_argument("--chapter-vocab", type=int, default=1000)
    ap.add_argument("--chapter-samples", type=int, default=3)
    ap.add_argument("--chapter-full", action="store_true")
    ap.add_argument("--bytes-mb", type=float, default=5.0)
    ap.add_argument("--merges", type=int, default=30000)
    ap.add_argument("--only", choices=["a", "b"])
    args = ap.parse_args()
    corpora = DATA / "corpora"
    if args.only != "b":
        en = (corpora / "en.txt").read_text(encoding="utf-8")
        text = en.encode()[: int(args.chapter_mb * 1e6)].decode(errors="ignore")
        chapter_bench(text, args.chapter_vocab, args.chapter_samples, args.chapter_full)
    if args.only != "a":
        langs = ("en", "ru", "el", "ar", "code")
        per = int(args.bytes_mb * 1e6 / len(langs))
        texts = []
        for lang in langs:
            data = (
                (corpora / f"{lang}.txt")
                .read_text(encoding="utf-8")
                .encode()[:per]
                .decode(errors="ignore")
            )
            texts.extend(data.splitlines(keepends=True))
        byte_level_bench(texts, args.merges, args.rounds, Path(os.environ.get("TMPDIR", "/tmp")))


if __name__ == "__main__":
    main()
