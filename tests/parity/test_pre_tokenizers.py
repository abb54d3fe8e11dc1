"""Every pre-tokenizer tokenizers 0.23.3 reads from a tokenizer.json, against ours: the same
pieces with the same char offsets from `pre_tokenize_str`.

Each pre-tokenizer is drawn at random (its parameters from a random.Random seeded by Hypothesis
or by the test's seed), built with the reference's Python API (`tokenizers.pre_tokenizers.*`),
serialised to the JSON a tokenizer.json holds (`__getstate__`) and loaded into
`tokenprism.PreTokenizer.from_str`. Every failure names the seed, the JSON and the text.

- Hypothesis texts: whitespace of every kind, punctuation, digits, scripts, emoji, combining
  marks, the replacement char ▁, GPT-2's contractions, and any code point.
- Every code point U+0000..U+10FFFF (no surrogates) in chunks of consecutive code points, for
  one drawn pre-tokenizer of each kind; and in contexts (after a space, between letters and
  digits ...) for a slice of the chunks, rotating the contexts.
- Random Sequences of 2-4 pre-tokenizers, nested ones included.

About 30 s. TOKENPRISM_EXHAUSTIVE=1 runs ten times the Hypothesis examples and every context
over every code point (several minutes); TOKENPRISM_PRETOK_SEED=n changes the seed of the
code point passes.
"""

from __future__ import annotations

import gc
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies
import tokenprism as tp
from components import PRE_TOKENIZER_KINDS as KINDS
from components import leaves, random_normalizer, random_pre_tokenizer
from paths import reference

EXHAUSTIVE = os.environ.get("TOKENPRISM_EXHAUSTIVE") == "1"
SEED = int(os.environ.get("TOKENPRISM_PRETOK_SEED", "20233"))
EXAMPLES = 5000 if EXHAUSTIVE else 500

tk = reference()
P = tk.pre_tokenizers


def pair(kind: str, seed: int):
    """(reference, ours, json) for the pre-tokenizer `draw` gives with `seed`."""
    ref = random_pre_tokenizer(kind, random.Random(seed))
    js = ref.__getstate__().decode()
    return ref, tp.PreTokenizer.from_str(js), js


def mismatch(js: str, seed: int, text: str, a, b) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (
        f"seed {seed}: {js}\ntext {text[:200]!r}\n"
        f"first difference at piece {i}: ours {b[i : i + 3]} reference {a[i : i + 3]}"
        f" ({len(b)} vs {len(a)} pieces)"
    )


def check(ref, ours, js: str, seed: int, text: str):
    a = ref.pre_tokenize_str(text)
    b = ours.pre_tokenize_str(text)
    assert b == a, mismatch(js, seed, text, a, b)


# --- Hypothesis texts -------------------------------------------------------------------------

PRE_TOKENIZER_PIECES = [
    "▁", "▁▁", "▁a", " ", "  ", "   ", "'s", "'ll", "'re", "'d", "'m", "'t", "'ve", "'S", "\n",
    "\r\n", "\t", " \n ", "123", "1.5", "١٢٣", "²", "Ⅻ", "ab", "é", "e\u0301", "東京", "ひらがな",
    "カタカナー", "ー", "한국", "русский", "🙂", "👍🏽", "-", "--", "a-b", ".", "...", "$", "_",
    "\u00a0", "\u3000", "\u2028", "\u0378", "\ufffd", "Ġ", "Ã©", "\x00", "\u200d", "x", "ab-",
]  # fmt: skip

texts = st.one_of(
    strategies.text,
    strategies.native_text,
    st.lists(st.one_of(st.sampled_from(PRE_TOKENIZER_PIECES), strategies.piece), max_size=16).map(
        "".join
    ),
)


def hsettings(n: int):
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.mark.parametrize("kind", KINDS)
@hsettings(EXAMPLES)
@given(seed=st.integers(0, 2**32), text=texts)
def test_hypothesis_texts(kind, seed, text):
    ref, ours, js = pair(kind, seed)
    check(ref, ours, js, seed, text)


# --- every code point ---------------------------------------------------------------------------

ALL = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
CHUNK = 4096
# A code point after a space (prefix spaces, " ?\p{L}+"), between a letter and a digit, doubled,
# between kana and Han (scripts), after a replacement char and an apostrophe.
CONTEXTS = [" {c}a1", "a{c}{c}1", "東{c}カ ", "▁{c}'s", "{c} \n"]
# Without exhaustive mode, one chunk in 8 gets a context (rotating), every chunk "{c}".
CONTEXT_STRIDE = 8


def chunks(context: str):
    for i in range(0, len(ALL), CHUNK):
        cps = ALL[i : i + CHUNK]
        yield cps, "".join(context.replace("{c}", chr(c)) for c in cps)


def locate(ref, ours, context: str, cps) -> list[str]:
    """The code points of a differing chunk whose context differs alone."""
    bad = []
    for c in cps:
        s = context.replace("{c}", chr(c))
        if ref.pre_tokenize_str(s) != ours.pre_tokenize_str(s):
            bad.append(f"U+{c:04X} in {context!r}")
    return bad


@pytest.fixture
def no_gc():
    # Millions of result tuples make the cyclic collector rescan everything, again and again.
    gc.disable()
    yield
    gc.enable()


@pytest.mark.parametrize("kind", KINDS)
def test_every_code_point(kind, no_gc):
    seed = SEED + KINDS.index(kind)
    ref, ours, js = pair(kind, seed)
    failures = []
    # (context, which chunks): context k takes every 40th chunk from the 8k-th on.
    spread = CONTEXT_STRIDE * len(CONTEXTS)
    passes = [("{c}", lambda n: True)] + [
        (ctx, lambda n, k=k: EXHAUSTIVE or n % spread == k * CONTEXT_STRIDE)
        for k, ctx in enumerate(CONTEXTS)
    ]
    for context, take in passes:
        for n, (cps, s) in enumerate(chunks(context)):
            if not take(n):
                continue
            a = ref.pre_tokenize_str(s)
            b = ours.pre_tokenize_str(s)
            if a != b:
                bad = locate(ref, ours, context, cps)
                failures.append(
                    "; ".join(bad[:10]) if bad else mismatch(js, seed, s, a, b).split("\n")[-1]
                )
    assert not failures, f"seed {seed}: {js}\n" + "\n".join(failures[:20])


# --- loading ----------------------------------------------------------------------------------


def ref_from_json(pt: dict):
    """The reference's pre-tokenizer read from a tokenizer.json holding `pt`."""
    doc = {
        "version": "1.0",
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": pt,
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"},
    }
    return tk.Tokenizer.from_str(json.dumps(doc)).pre_tokenizer


# JSON the reference reads with defaults or in older spellings, and JSON it refuses.
LOADS = [
    {"type": "Punctuation"},
    {"type": "FixedLength"},
    {"type": "Metaspace", "replacement": "▁"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True, "str_rep": "▁"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "never"},
    {"type": "Metaspace", "replacement": "_", "split": None, "add_prefix_space": None},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
    {"type": "Whitespace", "unknown_field": 1},
    {"type": "Sequence", "pretokenizers": []},
    {"type": "Split", "pattern": {"String": ""}, "behavior": "Isolated", "invert": False},
]
REFUSED = [
    {"type": "ByteLevel"},
    {"type": "ByteLevel", "add_prefix_space": True},
    {"type": "Digits"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False},
    {"type": "Metaspace", "replacement": "ab"},
    {"type": "Metaspace", "replacement": ""},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": None},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"},
    {"type": "Delimiter", "delimiter": "x"},
    {"type": "Split", "pattern": {"String": "x"}, "behavior": "Removed"},
    {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated", "invert": False},
    {"type": "Split", "pattern": "x", "behavior": "Isolated", "invert": False},
    {"type": "Punctuation", "behavior": "removed"},
    {"type": "Digits", "individual_digits": 1},
    {"type": "FixedLength", "length": 2.0},
    {"type": "FixedLength", "length": -1},
    {"type": "Sequence"},
    {"type": "Sequence", "pretokenizers": [{"type": "Nope"}]},
    {"pretokenizers": []},
]


@pytest.mark.parametrize("pt", LOADS, ids=json.dumps)
def test_loads_what_the_reference_loads(pt):
    ref = ref_from_json(pt)
    ours = tp.PreTokenizer.from_str(json.dumps(pt))
    for text in ["ab x 12", "  hé  llo▁▁wörld ", "", "東京ひらがな 12.5"]:
        check(ref, ours, json.dumps(pt), 0, text)


@pytest.mark.parametrize("pt", REFUSED, ids=json.dumps)
def test_refuses_what_the_reference_refuses(pt):
    with pytest.raises(Exception):  # noqa: B017 - the reference raises a bare Exception
        ref_from_json(pt)
    with pytest.raises(ValueError):
        tp.PreTokenizer.from_str(json.dumps(pt))


def test_errors_name_the_json_path():
    bad = {
        "type": "Sequence",
        "pretokenizers": [{"type": "Whitespace"}, {"type": "Punctuation", "behavior": "Sideways"}],
    }
    with pytest.raises(ValueError, match=r"pre_tokenizer\.pretokenizers\[1\]\.behavior"):
        tp.PreTokenizer.from_str(json.dumps(bad))
    bad = {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated", "invert": False}
    with pytest.raises(ValueError, match=r"pre_tokenizer\.pattern"):
        tp.PreTokenizer.from_str(json.dumps(bad))


def test_fixed_length_zero_is_refused_at_load():
    """The reference loads length 0 and panics on the first text; we refuse the file."""
    with pytest.raises(ValueError, match=r"pre_tokenizer\.length"):
        tp.PreTokenizer.from_str('{"type": "FixedLength", "length": 0}')


def test_one_stage_per_component():
    pt = P.Sequence([P.WhitespaceSplit(), P.Sequence([P.Digits(), P.Metaspace()]), P.ByteLevel()])
    ours = tp.PreTokenizer.from_str(pt.__getstate__().decode())
    assert ours.stages == ["whitespace_split", "digits", "metaspace", "byte_level"]


# --- the trace's stages -----------------------------------------------------------------------


# What encode does between normalizing and pre-tokenizing: it cuts the normalized text at the
# added tokens, and so takes a slice of it even where there is none, which moves the slice's
# start in the input to its first char's (a split that never matches does the same).
SLICE = {"type": "Split", "pattern": {"Regex": "(?!)"}, "behavior": "Isolated", "invert": False}


def reference_stage(normalizer, components: list[dict], text: str) -> list:
    """The pieces (text, input char offsets) the reference's pipeline gives `text` after the
    pre-tokenizer `components` in turn: `text` normalized, sliced as encode does, then
    pre-tokenized in place. (The reference's Metaspace "first" asks where a piece starts in the
    input, so this is not always `pre_tokenize_str` on the normalized text: NFKC's "⑩" gives
    "1" and "0", both at the input's start.)"""
    pretok = tk.PreTokenizedString(text)
    if normalizer is not None:
        pretok.normalize(normalizer.normalize)
    ref_from_json({"type": "Sequence", "pretokenizers": [SLICE, *components]}).pre_tokenize(pretok)
    splits = pretok.get_splits(offset_referential="original", offset_type="char")
    return [(piece, tuple(offsets)) for piece, offsets, _ in splits]


@hsettings(EXAMPLES // 2)
@given(seed=st.integers(0, 2**32), text=texts)
def test_trace_shows_each_stage(seed, text):
    """Tokenizer.trace's pre-tokenizer stages: the pieces after stage k are what the reference
    gives after the first k + 1 components, on the normalizer's output; the last stage's are
    the pre-tokens. Without a normalizer, the last stage is `pre_tokenize_str`'s answer."""
    rng = random.Random(seed)
    normalizer = random_normalizer(rng) if rng.random() < 0.5 else None
    kind = "Sequence" if rng.random() < 0.7 else rng.choice(KINDS)
    pre = random_pre_tokenizer(kind, rng)
    ref = tk.Tokenizer(tk.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    ref.normalizer = normalizer
    ref.pre_tokenizer = pre
    js = ref.to_str()
    ours = tp.Tokenizer.from_str(js)
    where = f"seed {seed}: {js}\ntext {text!r}"
    components = leaves(json.loads(pre.__getstate__()))
    try:
        # The normalizer first: a failure inside reference_stage's callback would abort.
        if normalizer is not None:
            normalizer.normalize_str(text)
        want = [
            reference_stage(normalizer, components[: k + 1], text) for k in range(len(components))
        ]
    except BaseException as e:  # the reference fails on this text: ours too
        if isinstance(e, KeyboardInterrupt):
            raise
        with pytest.raises(ValueError):
            ours.trace(text)
        return
    trace = ours.trace(text)
    stages = trace["pre_tokenizer_stages"]
    assert [s["name"] for s in stages] == tp.PreTokenizer.from_str(
        pre.__getstate__().decode()
    ).stages
    assert len(stages) == len(components), where
    for k, stage in enumerate(stages):
        got = [(p["text"], tuple(p["offsets"])) for p in stage["pieces"]]
        assert got == want[k], f"{where}\nstage {k} ({stage['name']}): ours {got}\nref {want[k]}"
        assert stage["micros"] >= 0
    assert stages[-1]["pieces"] == trace["pre_tokens"], where
    if normalizer is None:
        assert want[-1] == [(p, tuple(o)) for p, o in pre.pre_tokenize_str(text)]
