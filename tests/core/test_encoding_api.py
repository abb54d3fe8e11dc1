"""The Encoding's query methods, `overflowing`, `n_sequences`, `words`, pickling and repr, against
tokenizers 0.23.3 run in the test: char_to_token, char_to_word, token_to_chars,
token_to_word, token_to_sequence, word_to_tokens and word_to_chars are asked about every
token, char and word (and a few past the end, and sequence indices 0, 1 and 2) of generated
inputs, single and pair, with and without special tokens, truncated (with stride, both
directions, every strategy: the overflowing parts, nested as the reference nests a pair's) and
padded."""

from __future__ import annotations

import pickle
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_encoding_fields import (
    outcome,  # the reference raises (or panics) where truncation cannot be met
)

import strategies
from parity import FIELDS, describe_input, encoding_diff
from paths import bert_pair

FIELDS_ALL = FIELDS + ("sequence_ids",)

CONFIGS = [
    (None, None),
    (dict(direction="right", length=40), None),
    (dict(direction="left", pad_to_multiple_of=16), None),
    (None, dict(max_length=10)),
    (None, dict(max_length=9, direction="left", strategy="only_first")),
    (dict(direction="left", length=12), dict(max_length=12, strategy="longest_first")),
    (None, dict(max_length=8, stride=2)),
    (None, dict(max_length=7, stride=3, direction="left")),
    (dict(direction="right"), dict(max_length=10, stride=1, strategy="only_second")),
    (
        dict(direction="left", length=14),
        dict(max_length=11, stride=2, strategy="only_first", direction="left"),
    ),
    (None, dict(max_length=4, stride=1)),
]

_TOKS: dict = {}


def configured(padding, truncation):
    key = (repr(padding), repr(truncation))
    if key not in _TOKS:
        ours, ref = bert_pair()
        for t in (ours, ref):
            if padding is not None:
                t.enable_padding(**padding)
            if truncation is not None:
                t.enable_truncation(**truncation)
        _TOKS[key] = (ours, ref)
    return _TOKS[key]


def queries(e, text: str, pair: str | None) -> dict:
    """Every query method's answer over every index worth asking about."""
    n = len(e.ids)
    n_words = max([w for w in e.word_ids if w is not None], default=-1) + 1
    chars = max(len(text), len(pair or "")) + 2
    out = {"n_sequences": e.n_sequences}
    for t in range(n + 2):
        out[f"token_to_sequence({t})"] = e.token_to_sequence(t)
        out[f"token_to_chars({t})"] = e.token_to_chars(t)
        out[f"token_to_word({t})"] = e.token_to_word(t)
    for s in (0, 1, 2):
        for c in range(chars):
            out[f"char_to_token({c}, {s})"] = e.char_to_token(c, s)
            out[f"char_to_word({c}, {s})"] = e.char_to_word(c, s)
        for w in range(n_words + 2):
            out[f"word_to_tokens({w}, {s})"] = e.word_to_tokens(w, s)
            out[f"word_to_chars({w}, {s})"] = e.word_to_chars(w, s)
    # The default sequence index is 0.
    out["char_to_token(0)"] = e.char_to_token(0)
    out["char_to_word(0)"] = e.char_to_word(0)
    out["word_to_tokens(0)"] = e.word_to_tokens(0)
    out["word_to_chars(0)"] = e.word_to_chars(0)
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in out.items()}


def check(ours_tok, ref_tok, text, pair, special, where):
    x = outcome(lambda: ours_tok.encode(text, pair, add_special_tokens=special))
    y = outcome(lambda: ref_tok.encode(text, pair, add_special_tokens=special))
    where = f"{describe_input(text, pair)}\nadd_special_tokens={special}, {where}"
    if isinstance(x, BaseException) or isinstance(y, BaseException):
        assert isinstance(x, BaseException) and isinstance(y, BaseException), (
            f"{where}: {x!r} vs {y!r}"
        )
        return
    same(x, y, text, pair, where)
    back = pickle.loads(pickle.dumps(x))
    same(back, y, text, pair, f"pickled: {where}")
    assert len(back) == len(x)


def same(x, y, text, pair, where, path="encoding", ask=True):
    """x and y agree in every field, and so do their overflowing parts (nested); every query
    too, for x and the first parts at each level (a pair cut in small windows has hundreds of
    parts, each asked thousands of questions)."""
    d = encoding_diff(x, y, FIELDS_ALL)
    assert d is None, f"{where}\n{path}:\n{d}"
    assert x.n_sequences == y.n_sequences, f"{where}\n{path}"
    if ask:
        qa, qb = queries(x, text, pair), queries(y, text, pair)
        bad = {k: (qa[k], qb[k]) for k in qb if qa[k] != qb[k]}
        assert not bad, f"{where}\n{path} (ours, reference): {bad}"
    assert repr(x) == repr(y)
    xo, yo = x.overflowing, y.overflowing
    assert len(xo) == len(yo), f"{where}\n{path}: {len(xo)} overflowing parts, reference {len(yo)}"
    for i, (a, b) in enumerate(zip(xo, yo)):
        same(a, b, text, pair, where, f"{path}.overflowing[{i}]", ask and i < 2)


@pytest.mark.parametrize("padding,truncation", CONFIGS, ids=[f"{p}-{t}" for p, t in CONFIGS])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=strategies.short_text, pair=st.none() | strategies.short_text, special=st.booleans())
def test_queries_match_reference(padding, truncation, text, pair, special):
    ours, ref = configured(padding, truncation)
    check(ours, ref, text, pair, special, f"padding={padding}, truncation={truncation}")


@settings(max_examples=60, deadline=None)
@given(text=strategies.native_text, pair=st.none() | strategies.native_text)
def test_queries_match_reference_any_text(text, pair):
    ours, ref = configured(None, None)
    check(ours, ref, text, pair, True, "any text")


def test_queries_fixed_cases():
    """Words split in pieces, empty inputs and pairs, added tokens inside the text."""
    cases = [
        ("", None),
        ("", ""),
        ("hi", ""),
        ("", "hi"),
        ("unaffable unaffable naïve", "a b c"),
        ("[CLS] x [MASK] y", "[SEP]"),
        ("東京タワー is tall!!", "x,y;z"),
    ]
    for padding, truncation in CONFIGS:
        ours, ref = configured(padding, truncation)
        for (text, pair), special in [(c, s) for c in cases for s in (True, False)]:
            check(ours, ref, text, pair, special, f"padding={padding}, truncation={truncation}")


def test_words_is_deprecated_word_ids():
    ours, ref = configured(None, None)
    x, y = ours.encode("hello unaffable world", "pair"), ref.encode("hello unaffable world", "pair")
    for e in (x, y):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert e.words == e.word_ids
        assert [type(w.message) for w in caught] == [DeprecationWarning]
    with warnings.catch_warnings(record=True) as a:
        warnings.simplefilter("always")
        _ = x.words
    with warnings.catch_warnings(record=True) as b:
        warnings.simplefilter("always")
        _ = y.words
    assert str(a[0].message) == str(b[0].message)


def test_negative_indices_raise_as_the_reference():
    ours, ref = configured(None, None)
    for e in (ours.encode("hello"), ref.encode("hello")):
        for call in (
            lambda e=e: e.char_to_token(-1),
            lambda e=e: e.token_to_chars(-1),
            lambda e=e: e.word_to_tokens(-1),
            lambda e=e: e.char_to_word(0, -1),
        ):
            with pytest.raises(OverflowError):
                call()


@pytest.mark.parametrize("padding", [dict(direction="right", length=16), dict(direction="left")])
def test_batch_items_and_their_pickles(padding):
    """encode_batch pads every item (and its overflowing parts) as the reference does."""
    ours, ref = configured(padding, dict(max_length=9, stride=2))
    items = [
        "hello world, this is a longer text that overflows",
        ("a pair", "of texts, unaffable and long"),
        "",
        "東京",
        ("x", ""),
    ]
    for i, (x, y) in enumerate(zip(ours.encode_batch(items), ref.encode_batch(items), strict=True)):
        text, pair = (items[i], None) if isinstance(items[i], str) else items[i]
        same(x, y, text, pair, f"batch item {i}")
        back = pickle.loads(pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL))
        same(back, y, text, pair, f"pickled batch item {i}")
