#!/usr/bin/env python3
"""SentencePiece `.model` files: tokenprism's `Tokenizer.from_file` against sentencepiece 0.2.3;
with --tokenizer-json, the Unigram tokenizer.json files against the `tokenizers` importable here.

    python3 scripts/bench/spm_bench.py                  # writes bench/spm_results.{json,md}
    python3 scripts/bench/spm_bench.py --quick --out D  # smoke run (1 round, 64 KB)
    PYTHONPATH=<tokenprism's site> ~/.cache/tokenprism/venvs/tk1/bin/python \
        scripts/bench/spm_bench.py --tokenizer-json     # tokenizers 1.0.0rc3's venv (bench.py
                                                        # makes it): bench/spm_json_results.*

Both run in this process on one thread (sentencepiece's `encode` of one str is single-threaded;
tokenprism's `encode_ids` runs on the calling thread). Input: the first --bytes (default 200 KB)
of a corpus, cut at a line end, encoded two ways: as one text (one call), and line by line (one
call per line, ids as Python lists). Per model and input: a warm-up pass of each side whose ids
must be equal (else the script exits with status 3), then --rounds rounds alternating which
side goes first, each pass repeated until --min-seconds. Reported: the median of the per-round
time ratios (sentencepiece / tokenprism: above 1, tokenprism is faster) and median MB/s. With
--tokenizer-json: `encode_ids(text, add_special_tokens=False)` against the peer's
`encode(text, add_special_tokens=False).ids`, same protocol.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import paths  # noqa: E402

# The models timed: Unigram (T5, XLM-R, byte fallback), trained BPE, Mistral's Llama-style BPE.
MODELS = ("t5", "xlmr", "bytes", "bpe", "bpe-bytes", "mistral-v1")
# The Unigram tokenizer.json files (--tokenizer-json).
JSON_FILES = ("t5", "xlmr", "bytes", "mon")


def timed(fn, min_seconds: float) -> float:
    """Seconds per call of fn(), repeated until min_seconds have passed."""
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / n


def bench_cell(ours, ref, texts: list[str], rounds: int, min_seconds: float) -> dict:
    """ours, ref: text -> ids."""

    def run_ours():
        for t in texts:
            ours(t)

    def run_ref():
        for t in texts:
            ref(t)

    if [ours(t) for t in texts] != [ref(t) for t in texts]:
        print("ids differ from the peer's", file=sys.stderr)
        sys.exit(3)
    size = sum(len(t.encode()) for t in texts)
    ratios, ours_mbs, ref_mbs = [], [], []
    for r in range(rounds):
        sides = [run_ours, run_ref] if r % 2 == 0 else [run_ref, run_ours]
        times = {f: timed(f, min_seconds) for f in sides}
        ratios.append(times[run_ref] / times[run_ours])
        ours_mbs.append(size / times[run_ours] / 1e6)
        ref_mbs.append(size / times[run_ref] / 1e6)
    return {
        "bytes": size,
        "calls": len(texts),
        "ratio": statistics.median(ratios),
        "tokenprism_mb_s": statistics.median(ours_mbs),
        "peer_mb_s": statistics.median(ref_mbs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bytes", type=int, default=200_000)
    ap.add_argument("--lang", default="en")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--models",
        help="comma-separated, of "
        + ", ".join(MODELS)
        + " (--tokenizer-json: "
        + ", ".join(JSON_FILES)
        + ")",
    )
    ap.add_argument("--tokenizer-json", action="store_true")
    ap.add_argument("--out", type=Path, default=REPO / "bench")
    args = ap.parse_args()
    if args.quick:
        args.bytes, args.rounds, args.min_seconds = 64_000, 1, 0.05
    if args.tokenizer_json:
        return main_json(args)
    import sentencepiece as spm

    import tokenprism

    def models():
        for name in (args.models or ",".join(MODELS)).split(","):
            path = str(paths.spm_model(name))
            ours = tokenprism.Tokenizer.from_file(path)
            yield name, ours.encode_ids, spm.SentencePieceProcessor(model_file=path).encode

    run(args, models(), "sentencepiece", spm.__version__, "spm_results", "SentencePiece models")


def main_json(args) -> None:
    import tokenizers

    import tokenprism

    def files():
        for name in (args.models or ",".join(JSON_FILES)).split(","):
            path = str(paths.unigram_json(name))
            ours = tokenprism.Tokenizer.from_file(path)
            ref = tokenizers.Tokenizer.from_file(path)

            def ours_ids(t, ours=ours):
                return ours.encode_ids(t, add_special_tokens=False)

            def ref_ids(t, ref=ref):
                return ref.encode(t, add_special_tokens=False).ids

            yield name, ours_ids, ref_ids

    title = "Unigram tokenizer.json files"
    run(args, files(), "tokenizers", tokenizers.__version__, "spm_json_results", title)


def run(args, sides, peer: str, version: str, stem: str, title: str) -> None:
    """Benchmarks each (name, ours, peer's) of `sides` on the corpus as one text and as lines,
    and writes `stem`.json and `stem`.md into --out."""
    with open(paths.corpus(args.lang), encoding="utf-8") as f:
        text = f.read(args.bytes)
    text = text[: text.rfind("\n") + 1]
    lines = [line for line in text.split("\n") if line]
    results = []
    for name, ours, ref in sides:
        for mode, texts in (("one text", [text]), ("lines", lines)):
            cell = bench_cell(ours, ref, texts, args.rounds, args.min_seconds)
            cell.update(model=name, input=mode)
            results.append(cell)
            print(
                f"{name:11} {mode:8} x{cell['ratio']:.2f}  "
                f"tokenprism {cell['tokenprism_mb_s']:.2f} MB/s  "
                f"{peer} {cell['peer_mb_s']:.2f} MB/s",
                flush=True,
            )
    meta = {
        "date": _dt.date.today().isoformat(),
        "lang": args.lang,
        "bytes": len(text.encode()),
        "rounds": args.rounds,
        peer: version,
        "cpus": os.cpu_count(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=1) + "\n"
    )
    rows = [
        f"| model | input | {peer} ÷ tokenprism time | tokenprism MB/s | {peer} MB/s |",
        "|---|---|---|---|---|",
    ]
    for c in results:
        rows.append(
            f"| {c['model']} | {c['input']} ({c['calls']} calls) | {c['ratio']:.2f} | "
            f"{c['tokenprism_mb_s']:.2f} | {c['peer_mb_s']:.2f} |"
        )
    head = (
        f"{title}, {meta['bytes']:,} bytes of {meta['lang']}, one thread, "
        f"median of {meta['rounds']} rounds ({meta['date']}, {peer} {version}). "
        "Ratios above 1: tokenprism is faster.\n\n"
    )
    (args.out / f"{stem}.md").write_text(head + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
