"""Hypothesis-generated inputs (see strategies.py), bert-base-uncased, against tokenizers 0.23.3.

At least 20,000 generated strings per run (printed at the end): single and pair encodes with
every Encoding field compared, the normalizer, decode, encode_batch, the file's own truncation
and padding, and enable_truncation on pairs for every strategy and direction.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as S
from parity import FIELDS, codepoints, describe_input, encoding_diff
from paths import bert_pair

FIELDS_ALL = FIELDS + ("sequence_ids",)
GENERATED: dict[str, int] = {}
MINIMUM = 20_000


def hsettings(n: int):
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=False,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


@pytest.fixture(scope="module", autouse=True)
def summary():
    yield
    total = sum(GENERATED.values())
    print(
        f"\ngenerated strings compared: {total:,} "
        + ", ".join(f"{k} {v:,}" for k, v in GENERATED.items())
    )


def count(name: str, n: int = 1) -> None:
    GENERATED[name] = GENERATED.get(name, 0) + n


def check_encode(ours, ref, text, pair=None, **kw):
    a = ours.encode(text, pair, **kw)
    b = ref.encode(text, pair, **kw)
    d = encoding_diff(a, b, FIELDS_ALL)
    assert d is None, f"encode differs for\n{describe_input(text, pair)} {kw}\n{d}"
    return b


def test_single(toks):
    ours, ref = toks
    no, nr = ours.normalizer, ref.normalizer
    n0 = GENERATED.get("single", 0)

    @hsettings(8000)
    @given(S.text)
    def check(text):
        count("single")
        b = check_encode(ours, ref, text)
        x, y = no.normalize_str(text), nr.normalize_str(text)
        assert x == y, f"normalize_str differs for {codepoints(text)}:\n ours {x!r}\n ref  {y!r}"
        for skip in (True, False):
            x, y = (
                ours.decode(b.ids, skip_special_tokens=skip),
                ref.decode(b.ids, skip_special_tokens=skip),
            )
            assert x == y, (
                f"decode(skip_special_tokens={skip}) differs for ids {b.ids} "
                f"(of {codepoints(text)}):\n ours {x!r}\n ref  {y!r}"
            )

    check()
    assert GENERATED["single"] - n0 >= 8000


def test_single_no_special_tokens(toks):
    ours, ref = toks

    @hsettings(1500)
    @given(S.text)
    def check(text):
        count("single, add_special_tokens=False")
        check_encode(ours, ref, text, add_special_tokens=False)

    check()


def test_pair(toks):
    ours, ref = toks

    @hsettings(4000)
    @given(S.text, S.text)
    def check(a, b):
        count("pair", 2)
        check_encode(ours, ref, a, b)

    check()


def test_pair_no_special_tokens(toks):
    ours, ref = toks

    @hsettings(500)
    @given(S.text, S.text)
    def check(a, b):
        count("pair, add_special_tokens=False", 2)
        check_encode(ours, ref, a, b, add_special_tokens=False)

    check()


def test_native_text(toks):
    """Hypothesis's own text strategy (any code point but surrogates), single and pair."""
    ours, ref = toks
    no, nr = ours.normalizer, ref.normalizer

    @hsettings(1500)
    @given(S.native_text, st.one_of(st.none(), S.native_text))
    def check(a, b):
        count("native", 1 if b is None else 2)
        check_encode(ours, ref, a, b)
        x, y = no.normalize_str(a), nr.normalize_str(a)
        assert x == y, f"normalize_str differs for {codepoints(a)}:\n ours {x!r}\n ref  {y!r}"

    check()


def test_encode_batch(toks):
    ours, ref = toks
    item = st.one_of(S.text, st.tuples(S.text, S.text))

    @hsettings(300)
    @given(st.lists(item, min_size=1, max_size=8))
    def check(items):
        count("batch", sum(2 if isinstance(i, tuple) else 1 for i in items))
        xs, ys = ours.encode_batch(items), ref.encode_batch(items)
        assert len(xs) == len(ys)
        for i, (x, y) in enumerate(zip(xs, ys)):
            d = encoding_diff(x, y, FIELDS_ALL)
            it = items[i] if isinstance(items[i], tuple) else (items[i], None)
            assert d is None, f"encode_batch item {i} differs for\n{describe_input(*it)}\n{d}"

    check()


def test_file_truncation_and_padding():
    """The file's own settings (truncation 128 LongestFirst, padding Fixed 128), kept."""
    ours, ref = bert_pair(keep_file_settings=True)

    @hsettings(600)
    @given(S.long_text, st.one_of(st.none(), S.long_text))
    def check(a, b):
        count("file truncation+padding", 1 if b is None else 2)
        e = check_encode(ours, ref, a, b)
        assert len(e.ids) == 128

    check()


@pytest.mark.parametrize("direction", ["right", "left"])
@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
def test_truncation_pairs(strategy, direction):
    ours, ref = bert_pair()

    @hsettings(200)
    @given(S.text, S.text, st.integers(0, 40), st.integers(0, 8), st.booleans())
    def check(a, b, max_length, stride, special):
        count("truncation", 2)
        out = []
        # ours must raise a Python exception, never panic; the reference raises a bare Exception
        # for truncation errors and panics (PanicException, a BaseException) on a stride too
        # long for a pair: both count as "refused"
        for t, catch in ((ours, Exception), (ref, BaseException)):
            try:
                t.enable_truncation(
                    max_length, stride=stride, strategy=strategy, direction=direction
                )
                out.append(t.encode(a, b, add_special_tokens=special))
            except catch as e:
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                out.append(e)
        x, y = out
        setting = (
            f"enable_truncation({max_length}, stride={stride}, strategy={strategy!r}, "
            f"direction={direction!r}), add_special_tokens={special}"
        )
        if isinstance(x, BaseException) or isinstance(y, BaseException):
            assert isinstance(x, BaseException) and isinstance(y, BaseException), (
                f"only one side raised with {setting} for\n{describe_input(a, b)}\n"
                f" ours {x!r}\n ref  {y!r}"
            )
            return
        d = encoding_diff(x, y, FIELDS_ALL)
        assert d is None, f"encode differs with {setting} for\n{describe_input(a, b)}\n{d}"

    check()


def test_generated_total():
    """Runs last in this file: the count of generated strings compared in this run."""
    total = sum(GENERATED.values())
    print(f"\ngenerated strings compared so far: {total:,}")
    if len(GENERATED) >= 8:  # the whole file ran (not a -k selection)
        assert total >= MINIMUM
