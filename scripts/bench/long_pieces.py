#!/usr/bin/env python3
"""Long pieces against English: per-byte time of one call on a 100,000-byte text that the
pre-tokenizer leaves as one long piece (or a run of unusual ones), divided by the per-byte time
of one call on 100,000 bytes of English, per model.

    python3 scripts/bench/long_pieces.py                    # time ratios, every model
    python3 scripts/bench/long_pieces.py --models o200k,bert --rounds 9
    python3 scripts/bench/long_pieces.py --callgrind        # instructions per byte instead

Inputs (seeded, so every run sees the same bytes):
- letter: 'a' x 100,000
- base64: the base64 of 75,000 random bytes (no line breaks)
- js: minified JavaScript (identifiers, operators, literals, no whitespace)
- dna: 100,000 random letters of ACGT
- han: 33,000 random CJK ideographs (U+4E00..U+9FFF), no punctuation
- en: the first 100,000 bytes of the English corpus (whole lines), the yardstick

Protocol: one thread; per model, every input is encoded once and its ids compared with the
reference's (tiktoken for the tiktoken encodings, tokenizers 0.23.3 for tokenizer.json files;
a difference exits with status 3), then a warm-up call each, then --rounds rounds, each
timing every input once (the order rotating), a call repeated until --min-seconds. Reported:
per input, the median over rounds of (its per-byte time / English's per-byte time in that
round), so a slow spell on the shared machine hits both sides.

--callgrind: each (model, input) runs in a child process under valgrind (callgrind), once
with 1 call and once with 3; (instructions of 3 - of 1) / 2 / bytes is the instructions per
byte of one warm call (loading and the first call cancel out).
Valgrind needs a real interpreter, not the pyenv shim: --python (default: sys.executable
resolved).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("TOKENPRISM_DATA") or os.path.expanduser("~/.cache/tokenprism/data"))
SIZE = 100_000
INPUTS = ("en", "letter", "base64", "js", "dna", "han")
# name: (kind, file under DATA, what the reference is)
MODELS = {
    "o200k": ("tiktoken", "bpe/o200k_base.tiktoken", "o200k_base"),
    "cl100k": ("tiktoken", "bpe/cl100k_base.tiktoken", "cl100k_base"),
    "gpt2": ("bpe-json", "bpe/gpt2/tokenizer.json", None),
    "llama3.2": ("bpe-json", "bpe/llama3.2/tokenizer.json", None),
    "gpt2-general": ("json", "bpe/gpt2/tokenizer.json", None),
    "llama3.2-general": ("json", "bpe/llama3.2/tokenizer.json", None),
    "bert": ("json", "bert-base-uncased/tokenizer.json", None),
    "t5": ("json", "unigram/t5/tokenizer.json", None),
}


def minified_js(rng: random.Random, size: int) -> str:
    """Statements of a minified bundle: short names, operators, numbers, strings, no spaces."""
    names = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz$_") for _ in range(rng.randint(1, 3)))
        for _ in range(60)
    ]
    words = [
        "function",
        "return",
        "var",
        "this",
        "null",
        "void",
        "typeof",
        "new",
        "length",
        "prototype",
    ]
    ops = ["=", "+", "-", "*", "&&", "||", "===", "!==", "<", ">=", "?", ":", ",", ".", "!"]
    out: list[str] = []
    n = 0
    while n < size:
        a, b, c = rng.choice(names), rng.choice(names), rng.choice(names)
        k = rng.randrange(6)
        if k == 0:
            s = f"function {a}({b},{c}){{return {b}{rng.choice(ops)}{c}}}"
        elif k == 1:
            s = f"{a}.{rng.choice(words)}={b}[{rng.randint(0, 999)}]{rng.choice(ops)}{c};"
        elif k == 2:
            s = f'if({a}{rng.choice(ops)}"{b}{c}"){{{a}={rng.randint(0, 99999)}}}else{{{b}()}}'
        elif k == 3:
            s = f"for(var {a}=0;{a}<{b}.length;{a}++){c}[{a}]=0x{rng.randrange(1 << 24):x};"
        elif k == 4:
            s = f"{a}=typeof {b}==='undefined'?null:{c}.{rng.choice(names)}({rng.random():.3f});"
        else:
            s = f"{a}&&{a}({{{b}:{c},{rng.choice(names)}:!0}});"
        out.append(s)
        n += len(s)
    return "".join(out)[:size]


def inputs(seed: int = 20261203) -> dict[str, str]:
    rng = random.Random(seed)
    en_lines: list[str] = []
    n = 0
    with open(DATA / "corpora" / "en.txt", encoding="utf-8") as f:
        for line in f:
            if n + len(line.encode()) > SIZE:
                break
            en_lines.append(line)
            n += len(line.encode())
    han = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(33_000))
    return {
        "en": "".join(en_lines),
        "letter": "a" * SIZE,
        "base64": base64.b64encode(rng.randbytes(SIZE * 3 // 4)).decode(),
        "js": minified_js(rng, SIZE),
        "dna": "".join(rng.choice("ACGT") for _ in range(SIZE)),
        "han": han,
    }


def ours(model: str):
    import tokenprism

    kind, rel, name = MODELS[model]
    path = str(DATA / rel)
    if kind == "tiktoken":
        return tokenprism.BpeTokenizer.from_tiktoken_file(path, name).encode_ordinary
    if kind == "bpe-json":
        return tokenprism.BpeTokenizer.from_file(path).encode_ordinary
    tok = tokenprism.Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return lambda text: tok.encode_ids(text, add_special_tokens=False)


def reference(model: str):
    kind, rel, name = MODELS[model]
    if kind == "tiktoken":
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(DATA / "bpe" / "tiktoken-cache"))
        import tiktoken

        return tiktoken.get_encoding(name).encode_ordinary
    import tokenizers

    assert tokenizers.__version__ == "0.23.3", tokenizers.__version__
    tok = tokenizers.Tokenizer.from_file(str(DATA / rel))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: tok.encode(text, add_special_tokens=False).ids


def check(model: str, texts: dict[str, str]) -> None:
    enc, ref = ours(model), reference(model)
    for name, text in texts.items():
        got, want = enc(text), ref(text)
        if got != want:
            first = next(
                (i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want))
            )
            print(
                f"{model} {name}: ids differ from the reference at {first} ({len(got)} / {len(want)})"
            )
            sys.exit(3)


def per_byte(f, text: str, min_seconds: float) -> float:
    calls, start = 0, time.perf_counter()
    while True:
        f(text)
        calls += 1
        t = time.perf_counter() - start
        if t >= min_seconds:
            return t / calls / len(text.encode())


def time_ratios(
    model: str, texts: dict[str, str], rounds: int, min_seconds: float
) -> dict[str, float]:
    enc = ours(model)
    for text in texts.values():
        enc(text)
    names = list(texts)
    ratios: dict[str, list[float]] = {n: [] for n in names if n != "en"}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        t = {n: per_byte(enc, texts[n], min_seconds) for n in order}
        for n in ratios:
            ratios[n].append(t[n] / t["en"])
    return {n: statistics.median(v) for n, v in ratios.items()}


CHILD = """
import sys
sys.path.insert(0, {here!r})
import long_pieces as lp
enc = lp.ours({model!r})
text = open({path!r}, encoding="utf-8").read()
for _ in range({calls}):
    enc(text)
"""


def instructions(python: str, model: str, text: str, calls: int) -> int:
    """Instructions of a whole child process that loads `model` and encodes `text` `calls` times."""
    here = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory() as d:
        Path(d, "text.txt").write_text(text, encoding="utf-8")
        script = Path(d, "child.py")
        script.write_text(
            CHILD.format(here=here, model=model, path=str(Path(d, "text.txt")), calls=calls)
        )
        out = Path(d, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, str(script)],
            check=True,
            capture_output=True,
        )
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("no totals in the callgrind output")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--inputs", default=",".join(INPUTS))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-seconds", type=float, default=0.05)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--python", default=os.path.realpath(sys.executable))
    ap.add_argument(
        "--no-check", action="store_true", help="skip the ids check against the reference"
    )
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    os.environ["RAYON_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    names = [n for n in args.inputs.split(",") if n]
    if "en" not in names:
        names.insert(0, "en")
    all_texts = inputs()
    texts = {n: all_texts[n] for n in names}
    results: dict[str, dict[str, float]] = {}
    for model in args.models.split(","):
        if not args.no_check:
            check(model, texts)
        if args.callgrind:
            per = {}
            for n in names:
                nbytes = len(texts[n].encode())
                one = instructions(args.python, model, texts[n], 1)
                three = instructions(args.python, model, texts[n], 3)
                per[n] = (three - one) / 2 / nbytes
            row = {n: per[n] for n in names}
            row.update({f"{n}/en": per[n] / per["en"] for n in names if n != "en"})
            results[model] = row
            cells = "  ".join(f"{n} {per[n]:.1f}" for n in names)
            print(f"{model:18} instructions/byte: {cells}", flush=True)
        else:
            row = time_ratios(model, texts, args.rounds, args.min_seconds)
            results[model] = row
            cells = "  ".join(f"{n} {row[n]:.2f}" for n in names if n != "en")
            print(f"{model:18} time/byte vs en: {cells}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
