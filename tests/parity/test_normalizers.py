"""Normalizers against tokenizers 0.23.3: the text and, per normalized char, the input chars
it stems from.

Each test builds reference normalizers with `tokenizers.normalizers` (random kinds and
parameters from a seeded RNG), loads their JSON (`__getstate__`) into `tokenprism.Normalizer`
and compares on generated strings and on every code point.

The reference shows alignments only through offsets (parity.alignment_tokenizer: one token
per normalized char, with that char's original offsets).

Set TOKENPRISM_EXHAUSTIVE=1 for the long run: more random normalizers, and every code point
through every normalizer with its alignment (a few minutes).
"""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenprism
from components import NORMALIZER_CHARS, random_normalizer
from parity import alignment_tokenizer, codepoints, first_diff
from paths import reference
from strategies import native_text, text

EXHAUSTIVE = os.environ.get("TOKENPRISM_EXHAUSTIVE") == "1"


def normalizer_json(ref) -> str:
    return ref.__getstate__().decode()


class Pair:
    """A reference normalizer and ours, from its JSON."""

    def __init__(self, ref, seed=None):
        self.ref = ref
        self.json = normalizer_json(ref)
        self.ours = tokenprism.Normalizer.from_str(self.json)
        self.seed = seed
        self.tok = alignment_tokenizer(ref)

    def check(self, text: str, alignments: bool = True) -> None:
        where = f"seed {self.seed}, normalizer {self.json}\ntext={codepoints(text)}"
        try:
            theirs = self.ref.normalize_str(text)
        except BaseException as e:  # a Rust panic in the reference is a BaseException
            if isinstance(e, KeyboardInterrupt):
                raise
            # Where the reference fails, ours must refuse too.
            with pytest.raises(ValueError, match="the reference fails"):
                self.ours.normalize_str(text)
            return
        ours = self.ours.normalize_str(text)
        assert ours == theirs, f"{where}\nours {codepoints(ours)}\nref  {codepoints(theirs)}"
        if alignments:
            theirs_a = [tuple(o) for o in self.tok.encode(text).offsets]
            ours_a = self.ours.alignments(text)
            assert len(ours_a) == len(ours), where
            assert ours_a == theirs_a, f"{where}\nalignments: {first_diff(ours_a, theirs_a)}"


def pair_of_seed(seed: int) -> Pair:
    return Pair(random_normalizer(random.Random(seed)), seed)


seeds = st.integers(0, 2**32 - 1)
any_text = st.one_of(text, native_text, st.text(st.sampled_from(NORMALIZER_CHARS), max_size=12))


@settings(
    max_examples=3000 if EXHAUSTIVE else 400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=seeds, text=any_text)
def test_random_normalizer_on_generated_text(seed, text):
    pair_of_seed(seed).check(text)


@pytest.mark.parametrize("seed", range(200 if EXHAUSTIVE else 40))
def test_random_normalizer_on_edge_texts(seed):
    pair = pair_of_seed(seed)
    for t in ["", " ", "  a  ", "a", "\u2581", "é", "e\u0301", "東京", " \u3000", "\U0001f600 x"]:
        pair.check(t)


def all_code_points() -> list[str]:
    return [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


# One of each kind, with the parameters that touch the most chars.
def single_normalizers():
    n = reference().normalizers
    R = reference().Regex
    return [
        n.BertNormalizer(),
        n.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False),
        n.BertNormalizer(lowercase=False, strip_accents=True),
        n.NFC(),
        n.NFD(),
        n.NFKC(),
        n.NFKD(),
        n.Lowercase(),
        n.StripAccents(),
        n.Strip(),
        n.Replace(R(r"\p{L}"), "XY"),
        n.Replace(R(r"\s"), "\u2581"),
        # One-char classes, matched without the regex engine.
        n.Replace(R(r"\p{Zs}"), " "),
        n.Replace(R(r"[\u00AD\u200B\u200C\u200D\u2060\uFEFF]"), ""),
        n.Replace(R(r"[^\u0300-\u036F a-z\u00E9]"), "\u2581"),
        n.Replace("", "_"),
        n.Prepend("\u2581"),
        n.ByteLevel(),
        n.Nmt(),
        n.Sequence([n.NFKD(), n.StripAccents(), n.Lowercase()]),
    ]


@pytest.mark.parametrize("index", range(20))
def test_every_code_point(index):
    """Every code point, alone between newlines (so that it composes with nothing)."""
    ref = single_normalizers()[index]
    pair = Pair(ref)
    chars = all_code_points()
    batch = 1 << 14
    # Alignments of every code point take long: the default run checks a sample of them.
    rng = random.Random(index)
    for i in range(0, len(chars), batch):
        chunk = "\n".join(chars[i : i + batch])
        if pair.ref.normalize_str(chunk) != pair.ours.normalize_str(chunk):
            for c in chars[i : i + batch]:
                pair.check(c, alignments=False)
        if EXHAUSTIVE or rng.random() < 0.05:
            pair.check(chunk)


def test_loader_errors_name_the_json_path():
    bad = {
        "type": "Sequence",
        "normalizers": [{"type": "Lowercase"}, {"type": "Replace", "pattern": {"Regex": "("}}],
    }
    with pytest.raises(ValueError, match=r"normalizer\.normalizers\[1\]\.content"):
        tokenprism.Normalizer.from_str(json.dumps(bad))
    bad["normalizers"][1]["content"] = "x"
    with pytest.raises(ValueError, match=r"normalizer\.normalizers\[1\]\.pattern"):
        tokenprism.Normalizer.from_str(json.dumps(bad))
    with pytest.raises(ValueError, match=r"normalizer\.strip_left"):
        tokenprism.Normalizer.from_str('{"type": "Strip", "strip_right": true}')
    with pytest.raises(ValueError, match=r"normalizer\.precompiled_charsmap: shorter"):
        tokenprism.Normalizer.from_str('{"type": "Precompiled", "precompiled_charsmap": ""}')


@settings(max_examples=1000 if EXHAUSTIVE else 150, deadline=None)
@given(seed=seeds, text=any_text)
def test_random_normalizer_in_a_tokenizer(seed, text):
    """Offsets of whole encodings (BertPreTokenizer, WordPiece), inserted first chars included."""
    tk = reference()
    vocab = {"[UNK]": 0, "a": 1, "##b": 2, "\u2581": 3, "X": 4, "##a": 5, "b": 6}
    ref = tk.Tokenizer(tk.models.WordPiece(vocab, unk_token="[UNK]"))
    ref.normalizer = random_normalizer(random.Random(seed))
    ref.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    try:
        want = ref.encode(text)
    except BaseException as e:  # the reference fails on this text (see Pair.check)
        if isinstance(e, KeyboardInterrupt):
            raise
        return
    ours = tokenprism.Tokenizer.from_str(ref.to_str()).encode(text)
    where = f"seed {seed}, normalizer {normalizer_json(ref.normalizer)}\ntext={codepoints(text)}"
    assert ours.tokens == want.tokens, where
    assert [tuple(o) for o in ours.offsets] == [tuple(o) for o in want.offsets], where
