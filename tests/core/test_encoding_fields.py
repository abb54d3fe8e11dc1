"""Every field of an Encoding under padding (both sides, fixed and batch-longest, to a
multiple), truncation (both sides, all strategies), pairs and added tokens, against
tokenizers 0.23.3: the Encoding keeps type ids, sequence ids and both masks as runs and
expands them when asked, so these are the cases where the runs split, merge and move."""

from __future__ import annotations

import itertools

import pytest

from parity import FIELDS, encoding_diff
from paths import bert_pair

FIELDS_ALL = FIELDS + ("sequence_ids",)

TEXTS = [
    "",
    "Hello, world!",
    "the quick brown fox jumps over the lazy dog, unaffable résumé 東京 naïve",
    "[CLS] a [MASK] in the middle [SEP] and [PAD] too",
    "x " * 40,
]
PAIRS = [None, "", "a pair of words", "naïve 東京 [MASK] tail"]

PADDING = [
    None,
    dict(direction="right"),
    dict(direction="left"),
    dict(direction="right", length=24),
    dict(direction="left", length=24, pad_type_id=1),
    dict(direction="left", pad_to_multiple_of=8, pad_id=3, pad_token="[PADX]"),
    dict(direction="right", length=5, pad_to_multiple_of=4),
]
TRUNCATION = [
    None,
    dict(max_length=12),
    dict(max_length=12, direction="left"),
    dict(max_length=9, stride=2, strategy="only_first"),
    dict(max_length=9, strategy="only_second", direction="left"),
    dict(max_length=2),
]


def configure(toks, padding, truncation):
    for t in toks:
        t.no_padding()
        t.no_truncation()
        if padding is not None:
            t.enable_padding(**padding)
        if truncation is not None:
            t.enable_truncation(**truncation)


def outcome(f):
    # The reference raises a bare Exception (or panics) where truncation cannot be met.
    try:
        return f()
    except BaseException as e:  # noqa: BLE001 - PanicException is a BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return e


@pytest.mark.parametrize("padding", PADDING, ids=[str(p) for p in PADDING])
@pytest.mark.parametrize("truncation", TRUNCATION, ids=[str(t) for t in TRUNCATION])
def test_fields_match_reference(padding, truncation):
    ours, ref = bert_pair()
    configure((ours, ref), padding, truncation)
    for text, pair, special in itertools.product(TEXTS, PAIRS, (True, False)):
        x = outcome(lambda t=text, p=pair, s=special: ours.encode(t, p, add_special_tokens=s))
        y = outcome(lambda t=text, p=pair, s=special: ref.encode(t, p, add_special_tokens=s))
        where = f"{text!r} / {pair!r}, add_special_tokens={special}, {padding}, {truncation}"
        if isinstance(x, BaseException) or isinstance(y, BaseException):
            assert isinstance(x, BaseException) and isinstance(y, BaseException), (
                f"{where}: {x!r} vs {y!r}"
            )
            continue
        d = encoding_diff(x, y, FIELDS_ALL)
        assert d is None, f"{where}\n{d}"
        assert len(x) == len(y.ids)
    items = [t if p is None else (t, p) for t, p in zip(TEXTS, PAIRS * 2)]
    xs = outcome(lambda: ours.encode_batch(items))
    ys = outcome(lambda: ref.encode_batch(items))
    if isinstance(xs, BaseException) or isinstance(ys, BaseException):
        assert isinstance(xs, BaseException) and isinstance(ys, BaseException), (
            f"batch: {xs!r} vs {ys!r}"
        )
        return
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        d = encoding_diff(x, y, FIELDS_ALL)
        assert d is None, f"batch item {i} {items[i]!r}, {padding}, {truncation}\n{d}"


def test_fields_are_fresh_lists():
    """Each field read gives a new list (changing one never changes the Encoding)."""
    ours, _ = bert_pair()
    e = ours.encode("hello world", "and a pair")
    for name in FIELDS_ALL:
        a = getattr(e, name)
        assert isinstance(a, list)
        want = list(a)
        a.append(None)
        assert getattr(e, name) == want, name
