"""The Unigram tokenizer.json files (T5 and XLM-R style, one with byte fallback, and
mon-tokenizer's) end to end: `tokenprism.Tokenizer` against tokenizers 0.23.3's `Tokenizer`, on
every field of the Encoding (ids, tokens, offsets, masks, word and sequence ids), on the
ids-only call and on decode.

- every code point in two contexts, in chunks of 4,096 (where a chunk differs, each code point
  alone names the culprits);
- 5,000 generated strings per file (mixed scripts, Hypothesis's own text, and joins of what the
  files' stages rewrite), alone and as pairs, with special tokens on and off;
- every corpus as one text, ids and offsets hashed (in CI its first 300,000 chars), and its
  lines as a batch;
- decode of the reference's ids, skipping special tokens and keeping them.

TOKENPRISM_EXHAUSTIVE=1: whole corpora and four times the generated strings.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as S
from parity import FIELDS, codepoints, encoding_diff, first_diff
from paths import CORPORA, UNIGRAM_FILES, corpus, reference, unigram_json

EXHAUSTIVE = os.environ.get("TOKENPRISM_EXHAUSTIVE") == "1"
SCALE = 4 if EXHAUSTIVE else 1
CORPUS_CHARS = None if EXHAUSTIVE else 300_000
GENERATED = 5_000
FULL_FIELDS = FIELDS + ("sequence_ids",)

ALL_CPS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
CONTEXTS = ("{c}", " {c}a")
CHUNK = 4096


class Pair:
    """One file: ours and the reference's, neither padding nor truncating."""

    def __init__(self, name: str):
        import tokenprism

        path = str(unigram_json(name))
        self.name = name
        self.ours = tokenprism.Tokenizer.from_file(path)
        self.ref = reference().Tokenizer.from_file(path)
        for t in (self.ours, self.ref):
            t.no_padding()
            t.no_truncation()


@pytest.fixture(scope="module")
def pairs() -> dict[str, Pair]:
    return {}


def get(pairs, name: str) -> Pair:
    if name not in pairs:
        pairs[name] = Pair(name)
    return pairs[name]


def check(p: Pair, text: str, pair: str | None = None, add_special_tokens: bool = True):
    ref = p.ref.encode(text, pair, add_special_tokens=add_special_tokens)
    ours = p.ours.encode(text, pair, add_special_tokens=add_special_tokens)
    where = f"{p.name} add_special_tokens={add_special_tokens} text={codepoints(text)}" + (
        f" pair={codepoints(pair)}" if pair is not None else ""
    )
    diff = encoding_diff(ours, ref, FULL_FIELDS)
    assert diff is None, f"{where}\n{diff}"
    if pair is None:
        ids = p.ours.encode_ids(text, add_special_tokens=add_special_tokens)
        assert ids == ref.ids, f"{where}: encode_ids {first_diff(ids, ref.ids)}"
    for skip in (True, False):
        got = p.ours.decode(ref.ids, skip_special_tokens=skip)
        want = p.ref.decode(ref.ids, skip_special_tokens=skip)
        assert got == want, f"{where}: decode (skip_special_tokens={skip}) {got!r} != {want!r}"


@pytest.mark.parametrize(
    "context", CONTEXTS, ids=[c.encode("unicode_escape").decode() for c in CONTEXTS]
)
@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_every_code_point(pairs, name, context):
    p = get(pairs, name)
    bad = []
    for start in range(0, len(ALL_CPS), CHUNK):
        chunk = ALL_CPS[start : start + CHUNK]
        try:
            check(p, "".join(context.format(c=chr(c)) for c in chunk))
            continue
        except AssertionError as e:
            first = str(e)
        for c in chunk:
            try:
                check(p, context.format(c=chr(c)))
            except AssertionError:
                bad.append(f"U+{c:04X}")
        if not bad:  # only the chunk as a whole: say how
            bad.append(first[:2000])
        if len(bad) > 20:
            break
    assert not bad, f"{name}, context {context!r}: differs for " + ", ".join(bad[:20])


rewrites = st.lists(st.sampled_from(S.UNIGRAM_REWRITES), max_size=12).map("".join)
COUNTS: dict[str, int] = {}


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_generated(pairs, name):
    p = get(pairs, name)
    texts = st.one_of(S.text, S.native_text, rewrites, S.long_text)

    @settings(
        max_examples=GENERATED * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(texts, st.one_of(st.none(), texts))
    def run(text, pair):
        check(p, text, pair)
        check(p, text, add_special_tokens=False)
        COUNTS[name] = COUNTS.get(name, 0) + 1

    run()
    assert COUNTS[name] >= GENERATED * SCALE, COUNTS


def fnv1a(values) -> str:
    h = 0xCBF29CE484222325
    for v in values:
        h = ((h ^ v) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


@pytest.mark.parametrize("lang", CORPORA)
@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_corpus(pairs, name, lang):
    """A corpus as one text (ids and offsets hashed, the other fields compared), the ids-only
    call on it, its first 500 lines as a batch, and decode."""
    p = get(pairs, name)
    text = corpus(lang).read_text(encoding="utf-8")[:CORPUS_CHARS]
    ref = p.ref.encode(text)
    ours = p.ours.encode(text)
    assert fnv1a(ours.ids) == fnv1a(ref.ids), first_diff(ours.ids, ref.ids)
    flat = [x for pair in ref.offsets for x in pair]
    assert fnv1a(x for pair in ours.offsets for x in pair) == fnv1a(flat), encoding_diff(
        ours, ref, ("offsets",)
    )
    for field in ("tokens", "type_ids", "attention_mask", "special_tokens_mask", "word_ids"):
        assert getattr(ours, field) == getattr(ref, field), field
    assert p.ours.encode_ids(text) == ref.ids
    lines = text.split("\n")[:500]
    for got, want in zip(p.ours.encode_batch(lines), p.ref.encode_batch(lines), strict=True):
        diff = encoding_diff(got, want, FULL_FIELDS)
        assert diff is None, diff
    assert p.ours.decode(ref.ids) == p.ref.decode(ref.ids)
    print(f"\n{name} {lang}: ids {fnv1a(ref.ids)}, offsets {fnv1a(flat)}", end="")
