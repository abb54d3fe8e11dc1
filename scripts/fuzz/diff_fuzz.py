"""Differential fuzzing against the references, with a large budget (outside CI).

    python3 scripts/fuzz/diff_fuzz.py --minutes 15 [--only bert,cl100k_base,o200k_base] [--seed N]

Hypothesis draws texts from tests/strategies.py (the pieces where tokenizers go wrong: combining
runs, controls, every whitespace, CJK edges, special tokens in text, long words, any code point)
and from its own text generator, in rounds of --batch examples each with a fresh seed, until
the time is up. Each text goes to:
- bert: tokenprism.Tokenizer vs tokenizers 0.23.3 on bert-base-uncased (every Encoding field,
  single and pair, the normalizer, decode), with the fast paths on and off;
- cl100k_base, o200k_base: tokenprism.BpeTokenizer vs tiktoken 0.14.0 (encode_ordinary,
  encode with every special token allowed, decode).
A difference stops the run with hypothesis's shrunk example; it becomes a regression test.
The last line reports the examples compared per reference.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import strategies as S  # noqa: E402
from parity import FIELDS, describe_input, encoding_diff  # noqa: E402

FIELDS_ALL = FIELDS + ("sequence_ids",)


def data_dir() -> Path:
    return Path(os.environ.get("TOKENPRISM_DATA") or Path.home() / ".cache/tokenprism/data")


class Bert:
    name = "bert"

    def __init__(self):
        import tokenizers

        import tokenprism

        assert tokenizers.__version__ == "0.23.3", tokenizers.__version__
        path = str(data_dir() / "bert-base-uncased" / "tokenizer.json")
        self.ours = tokenprism.Tokenizer.from_file(path)
        self.staged = tokenprism.Tokenizer.from_file(path)
        self.staged.set_fast_paths(simd=False, page_cache=False, lazy_output=False, fused=False)
        self.ref = tokenizers.Tokenizer.from_file(path)
        for t in (self.ours, self.staged, self.ref):
            t.no_truncation()
            t.no_padding()

    def check(self, text: str, pair: str) -> None:
        for args in ((text,), (text, pair)):
            want = self.ref.encode(*args)
            for ours in (self.ours, self.staged):
                d = encoding_diff(ours.encode(*args), want, FIELDS_ALL)
                assert d is None, (
                    f"bert encode differs ({ours.fast_paths()})\n{describe_input(*args)}\n{d}"
                )
        got, want = (
            self.ours.normalizer.normalize_str(text),
            self.ref.normalizer.normalize_str(text),
        )
        assert got == want, (
            f"bert normalizer differs\n{describe_input(text)}\nours {got!r}\nref  {want!r}"
        )
        ids = self.ref.encode(text).ids
        assert self.ours.decode(ids) == self.ref.decode(ids), f"bert decode differs for ids {ids}"
        assert self.ours.encode_ids(text) == ids, f"bert encode_ids differs\n{describe_input(text)}"


class Tiktoken:
    def __init__(self, name: str):
        os.environ["TIKTOKEN_CACHE_DIR"] = str(data_dir() / "bpe" / "tiktoken-cache")
        import tiktoken

        import tokenprism

        assert tiktoken.__version__ == "0.14.0", tiktoken.__version__
        self.name = name
        self.ref = tiktoken.get_encoding(name)
        self.ours = tokenprism.BpeTokenizer.from_tiktoken_file(
            str(data_dir() / "bpe" / f"{name}.tiktoken"), name
        )

    def check(self, text: str, pair: str) -> None:
        for t in (text, text + pair):
            want = self.ref.encode_ordinary(t)
            got = self.ours.encode_ordinary(t)
            assert got == want, (
                f"{self.name} encode_ordinary differs\n{describe_input(t)}\nours {got}\nref  {want}"
            )
            want = self.ref.encode(t, allowed_special="all")
            got = self.ours.encode(t, allowed_special="all")
            assert got == want, (
                f"{self.name} encode(all specials) differs\n{describe_input(t)}\nours {got}\nref  {want}"
            )
            assert self.ours.decode(got) == self.ref.decode(want), f"{self.name} decode differs"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--minutes", type=float, default=15)
    ap.add_argument("--batch", type=int, default=2000, help="examples per hypothesis round")
    ap.add_argument("--only", default="bert,cl100k_base,o200k_base")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()

    refs = [Bert() if n == "bert" else Tiktoken(n) for n in args.only.split(",")]
    counts = {r.name: 0 for r in refs}
    texts = st.one_of(S.text, S.text, S.long_text, S.native_text)

    def round_(ref, seed: int) -> None:
        @settings(
            max_examples=args.batch,
            deadline=None,
            database=None,
            derandomize=False,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
        )
        @given(texts, S.short_text)
        def run(text, pair):
            ref.check(text, pair)
            counts[ref.name] += 1

        run._hypothesis_internal_use_seed = seed
        run()

    rng = random.Random(args.seed)
    end = time.monotonic() + args.minutes * 60
    rounds = 0
    while time.monotonic() < end:
        ref = refs[rounds % len(refs)]
        seed = rng.getrandbits(64)
        try:
            round_(ref, seed)
        except AssertionError:
            print(
                f"FINDING in round {rounds} ({ref.name}, seed {seed}); examples so far: {counts}",
                flush=True,
            )
            raise
        rounds += 1
        if rounds % len(refs) == 0:
            left = max(0, end - time.monotonic())
            print(
                f"{rounds} rounds, {sum(counts.values()):,} examples, {left / 60:.1f} min left",
                flush=True,
            )
    print(
        "examples compared (hypothesis, including shrinking re-runs): "
        + ", ".join(f"{k} {v:,}" for k, v in counts.items())
        + f"; total {sum(counts.values()):,}"
    )


if __name__ == "__main__":
    main()
