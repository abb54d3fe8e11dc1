"""Non-default settings: tokenizer.json files made by editing bert-base-uncased's, loaded by us
and by tokenizers 0.23.3 from the same JSON, must give identical results on generated inputs.
Plus vocab.txt loading (BertWordPieceTokenizer defaults) and decode.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as S
from parity import FIELDS, codepoints, describe_input, encoding_diff
from paths import bert_json, bert_vocab, reference

FIELDS_ALL = FIELDS + ("sequence_ids",)
EXAMPLES = 300


def hsettings(n: int = EXAMPLES):
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


_BASE: dict | None = None


def base() -> dict:
    global _BASE
    if _BASE is None:
        _BASE = json.loads(bert_json().read_text(encoding="utf-8"))
    cfg = copy.deepcopy(_BASE)
    cfg["truncation"] = None
    cfg["padding"] = None
    return cfg


def special(tok: str, type_id: int) -> dict:
    return {"SpecialToken": {"id": tok, "type_id": type_id}}


def seq(which: str, type_id: int) -> dict:
    return {"Sequence": {"id": which, "type_id": type_id}}


def added(
    id_: int,
    content: str,
    *,
    special=False,
    lstrip=False,
    rstrip=False,
    normalized=False,
    single_word=False,
) -> dict:
    return {
        "id": id_,
        "content": content,
        "single_word": single_word,
        "lstrip": lstrip,
        "rstrip": rstrip,
        "normalized": normalized,
        "special": special,
    }


# ------------------------------------------------------------------------------- the configs


def cfg_cased_strip() -> dict:
    """lowercase off, strip_accents on, Chinese chars off, max 10 chars a word, template
    `[SEP] A [CLS]` and a pair template with type ids 2 and 3 and a two-id special token."""
    c = base()
    c["normalizer"].update(lowercase=False, strip_accents=True, handle_chinese_chars=False)
    c["model"]["max_input_chars_per_word"] = 10
    c["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [special("[SEP]", 0), seq("A", 0), special("[CLS]", 0)],
        "pair": [
            special("<dbl>", 2),
            seq("A", 2),
            special("[SEP]", 2),
            seq("B", 3),
            special("[CLS]", 3),
        ],
        "special_tokens": {
            "[CLS]": {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]},
            "[SEP]": {"id": "[SEP]", "ids": [102], "tokens": ["[SEP]"]},
            "<dbl>": {"id": "<dbl>", "ids": [101, 103], "tokens": ["[CLS]", "[MASK]"]},
        },
    }
    return c


def cfg_lower_keep_accents() -> dict:
    """lowercase on but strip_accents explicitly off, clean_text off, BertProcessing,
    another unk token, decoder without cleanup."""
    c = base()
    c["normalizer"].update(
        clean_text=False, lowercase=True, strip_accents=False, handle_chinese_chars=True
    )
    c["model"]["unk_token"] = "[unused1]"
    c["model"]["max_input_chars_per_word"] = 25
    c["post_processor"] = {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}
    c["decoder"] = {"type": "WordPiece", "prefix": "##", "cleanup": False}
    return c


def cfg_nothing() -> dict:
    """Every BertNormalizer step off, max_input_chars_per_word 1."""
    c = base()
    c["normalizer"].update(
        clean_text=False, lowercase=False, strip_accents=False, handle_chinese_chars=False
    )
    c["model"]["max_input_chars_per_word"] = 1
    return c


# ids as the reference assigns them: a content already in the vocab keeps its vocab id, new
# contents get the next ids in order (see test_added_token_ids_not_as_assigned for the other case)
ADDED = [
    added(30522, "<ent>", lstrip=True, rstrip=True, normalized=True),
    added(7592, "hello", single_word=True, normalized=True),  # already in the vocab
    added(30523, "[NEW]", special=True, lstrip=True),
    added(30524, "Straße", normalized=True),  # can't match lowercased
    added(11113, "ab", rstrip=True),  # already in the vocab
    added(30525, "écrit", normalized=False, single_word=True),
    added(30526, "[SPC]", special=True, normalized=True, rstrip=True),
    added(30527, "東京", normalized=True),
]
ADDED_TEXTS = [
    "<ent>",
    " <ent> ",
    "<ENT>",
    "x<ent>y",
    "hello",
    "Hello",
    "xhello",
    "hello!",
    "hellohello",
    "[NEW]",
    " [NEW] ",
    "[new]",
    "Straße",
    "strasse",
    "ab",
    "abab",
    "ab ",
    "écrit",
    "ÉCRIT",
    "e\u0301crit",
    "écrits",
    "[SPC]",
    "[spc]",
    "東京",
    "東 京",
    "[MASK]",
    "[mask]",
    "[PAD]",
]


def cfg_added_tokens() -> dict:
    """added tokens with lstrip / rstrip / normalized / single_word / special."""
    c = base()
    c["added_tokens"] = c["added_tokens"] + ADDED
    return c


def cfg_added_tokens_cased() -> dict:
    c = cfg_added_tokens()
    c["normalizer"].update(lowercase=False, strip_accents=True)
    return c


def cfg_trunc_pad(strategy: str, direction: str, stride: int = 0) -> dict:
    """truncation (strategy, direction, max 16) and padding Left, BatchLongest,
    pad_to_multiple_of 8, another pad type id."""
    c = base()
    c["truncation"] = {
        "direction": direction,
        "max_length": 16,
        "strategy": strategy,
        "stride": stride,
    }
    c["padding"] = {
        "strategy": "BatchLongest",
        "direction": "Left",
        "pad_to_multiple_of": 8,
        "pad_id": 0,
        "pad_type_id": 1,
        "pad_token": "[PAD]",
    }
    return c


def cfg_fixed_pad() -> dict:
    """padding Fixed 20 with pad_to_multiple_of 8 (so 24), Right, another pad id and token."""
    c = base()
    c["truncation"] = {
        "direction": "Right",
        "max_length": 20,
        "strategy": "LongestFirst",
        "stride": 0,
    }
    c["padding"] = {
        "strategy": {"Fixed": 20},
        "direction": "Right",
        "pad_to_multiple_of": 8,
        "pad_id": 103,
        "pad_type_id": 5,
        "pad_token": "[MASK]",
    }
    return c


CONFIGS = {
    "cased_strip": cfg_cased_strip,
    "lower_keep_accents": cfg_lower_keep_accents,
    "nothing": cfg_nothing,
    "added_tokens": cfg_added_tokens,
    "added_tokens_cased": cfg_added_tokens_cased,
    "fixed_pad": cfg_fixed_pad,
    **{
        f"trunc_{s}_{d}": (lambda s=s, d=d: cfg_trunc_pad(s, d))
        for s in ("LongestFirst", "OnlyFirst", "OnlySecond")
        for d in ("Left", "Right")
    },
    # a stride: the reference refuses (panics) when the stride reaches the room one sequence
    # of a pair gets; ours must refuse too
    "trunc_stride_LongestFirst_Right": lambda: cfg_trunc_pad("LongestFirst", "Right", stride=2),
    "trunc_stride_OnlySecond_Left": lambda: cfg_trunc_pad("OnlySecond", "Left", stride=3),
}

# inputs: the generic pieces, plus the added tokens' texts in every casing and spacing
config_text = st.lists(st.one_of(S.piece, S.piece, st.sampled_from(ADDED_TEXTS)), max_size=10).map(
    "".join
)


def load_both(cfg: dict):
    import tokenprism

    s = json.dumps(cfg)
    return tokenprism.Tokenizer.from_str(s), reference().Tokenizer.from_str(s)


def outcome(t, *args, panic_ok=False, **kw):
    """The encoding, or the exception. The reference raises a bare Exception for truncation
    errors and sometimes panics (PanicException, a BaseException); ours must never panic."""
    try:
        return t(*args, **kw)
    except Exception as e:
        return e
    except BaseException as e:
        if panic_ok and type(e).__name__ == "PanicException":
            return e
        raise


def compare(x, y, what: str):
    if isinstance(x, BaseException) or isinstance(y, BaseException):
        assert isinstance(x, BaseException) and isinstance(y, BaseException), (
            f"only one side raised: {what}\n ours {x!r}\n ref  {y!r}"
        )
        return False
    d = encoding_diff(x, y, FIELDS_ALL)
    assert d is None, f"{what}\n{d}"
    return True


@pytest.mark.parametrize("name", list(CONFIGS))
def test_config(name):
    cfg = CONFIGS[name]()
    ours, ref = load_both(cfg)
    no, nr = ours.normalizer, ref.normalizer

    @hsettings()
    @given(config_text, config_text, st.booleans())
    def check(a, b, add_special):
        for pair in (None, b):
            x = outcome(ours.encode, a, pair, add_special_tokens=add_special)
            y = outcome(ref.encode, a, pair, add_special_tokens=add_special, panic_ok=True)
            what = f"config {name}, add_special_tokens={add_special}, {describe_input(a, pair)}"
            if not compare(x, y, what):
                continue
            for skip in (True, False):
                u, v = (
                    ours.decode(y.ids, skip_special_tokens=skip),
                    ref.decode(y.ids, skip_special_tokens=skip),
                )
                assert u == v, (
                    f"config {name}: decode({y.ids}, skip_special_tokens={skip}):\n"
                    f" ours {u!r}\n ref  {v!r}"
                )
        u, v = no.normalize_str(a), nr.normalize_str(a)
        assert u == v, f"config {name}: normalize_str({codepoints(a)}):\n ours {u!r}\n ref  {v!r}"

    check()


@pytest.mark.parametrize("name", [n for n in CONFIGS if "pad" in n])
def test_config_batch(name):
    """Padding BatchLongest / pad_to_multiple_of only shows in batches."""
    ours, ref = load_both(CONFIGS[name]())
    item = st.one_of(config_text, st.tuples(config_text, config_text))

    @hsettings(100)
    @given(st.lists(item, min_size=1, max_size=6))
    def check(items):
        xs, ys = outcome(ours.encode_batch, items), outcome(ref.encode_batch, items, panic_ok=True)
        if isinstance(xs, BaseException) or isinstance(ys, BaseException):
            assert isinstance(xs, BaseException) and isinstance(ys, BaseException), (
                f"config {name}: only one side raised for encode_batch({items!r})\n"
                f" ours {xs!r}\n ref  {ys!r}"
            )
            return
        assert len(xs) == len(ys)
        for i, (x, y) in enumerate(zip(xs, ys)):
            d = encoding_diff(x, y, FIELDS_ALL)
            assert d is None, f"config {name}: encode_batch({items!r}) item {i}:\n{d}"

    check()


def test_config_file_settings_visible():
    """The settings read from the file are the ones in force (not bert-base-uncased's)."""
    ours, ref = load_both(cfg_fixed_pad())
    x, y = ours.encode("hello"), ref.encode("hello")
    assert len(y.ids) == 24
    assert compare(x, y, "fixed_pad, 'hello'")


@pytest.mark.parametrize("name", ["added_tokens", "added_tokens_cased"])
def test_added_tokens_ids_and_offsets(name):
    """Like test_config, but ids and offsets only (not the token strings), so that a difference
    in the token strings of added tokens doesn't hide one in the ids."""
    ours, ref = load_both(CONFIGS[name]())
    fields = ("ids", "offsets", "special_tokens_mask", "word_ids")

    @hsettings()
    @given(config_text, st.one_of(st.none(), config_text))
    def check(a, b):
        d = encoding_diff(ours.encode(a, b), ref.encode(a, b), fields)
        assert d is None, f"config {name}: {describe_input(a, b)}\n{d}"

    check()


def test_single_word_boundaries():
    """single_word added tokens ("hello" normalized, "écrit" raw) next to every code point of
    planes 0 and 1 and the variation selectors / tags of plane 14: where a word ends."""
    ours, ref = load_both(cfg_added_tokens())
    cps = [
        c for c in list(range(0x20000)) + list(range(0xE0000, 0xE01F0)) if not 0xD800 <= c <= 0xDFFF
    ]
    forms = ("hello{c}", "{c}hello", "\u00e9crit{c}", "{c}\u00e9crit")
    bad = []
    for i in range(0, len(cps), 1024):
        chunk = cps[i : i + 1024]
        inst = [f.replace("{c}", chr(c)) for c in chunk for f in forms]
        joined = " ".join(inst)
        if ours.encode(joined).ids == ref.encode(joined).ids:
            continue
        for s in inst:
            x, y = ours.encode(s, add_special_tokens=False), ref.encode(s, add_special_tokens=False)
            if x.ids != y.ids:
                bad.append(f"  {codepoints(s)}: ours {x.tokens} vs reference {y.tokens}")
    assert not bad, (
        f"{len(bad)} single_word matches differ:\n"
        + "\n".join(bad[:30])
        + ("\n..." if len(bad) > 30 else "")
    )


def test_added_token_ids_not_as_assigned():
    """A file whose added_tokens ids are not the ones the reference would assign (here "ab" is
    in the vocab as 11113 but listed as 30522): the reference ignores the file's ids, keeps vocab
    ids and numbers new tokens in order. Same ids required."""
    c = base()
    c["added_tokens"] = c["added_tokens"] + [
        added(30522, "ab", rstrip=True),
        added(30523, "<x>"),
        added(30524, "<y>"),
    ]
    ours, ref = load_both(c)
    for text in ["ab c", "<x> <y>", "ab<y><x>"]:
        compare(ours.encode(text), ref.encode(text), f"{describe_input(text)}")
    for tok in ["ab", "<x>", "<y>"]:
        assert ours.token_to_id(tok) == ref.token_to_id(tok), tok
    for i in range(30520, 30526):
        assert ours.id_to_token(i) == ref.id_to_token(i), i


# ------------------------------------------------------------------------------- vocab.txt


@pytest.fixture(scope="module")
def vocab_tokenizers():
    import tokenprism

    path = str(bert_vocab())
    ref = reference().BertWordPieceTokenizer(path)
    return tokenprism.Tokenizer.from_vocab(path), tokenprism.Tokenizer.from_file(path), ref


def test_vocab_txt(vocab_tokenizers):
    by_vocab, by_file, ref = vocab_tokenizers

    @hsettings(600)
    @given(S.text, st.one_of(st.none(), S.text))
    def check(a, b):
        y = ref.encode(a, b)
        for name, ours in (("from_vocab", by_vocab), ("from_file", by_file)):
            d = encoding_diff(ours.encode(a, b), y, FIELDS_ALL)
            assert d is None, f"vocab.txt via {name}: {describe_input(a, b)}\n{d}"
            for skip in (True, False):
                u, v = (
                    ours.decode(y.ids, skip_special_tokens=skip),
                    ref.decode(y.ids, skip_special_tokens=skip),
                )
                assert u == v, (
                    f"vocab.txt via {name}: decode({y.ids}, skip_special_tokens={skip})"
                    f":\n ours {u!r}\n ref  {v!r}"
                )

    check()


def test_vocab_txt_no_truncation_or_padding(vocab_tokenizers):
    by_vocab, by_file, ref = vocab_tokenizers
    text = "word " * 600
    n = len(ref.encode(text).ids)
    assert n == 602
    assert len(by_vocab.encode(text).ids) == n and len(by_file.encode(text).ids) == n


# ------------------------------------------------------------------------------- decode


def test_decode_any_ids():
    """decode of arbitrary id sequences (specials, ## pieces, punctuation, added tokens)."""
    ours, ref = load_both(cfg_added_tokens())
    ours2, ref2 = load_both(cfg_lower_keep_accents())  # cleanup off
    ids = st.one_of(
        st.integers(0, 30528),
        st.sampled_from(
            [
                0,
                100,
                101,
                102,
                103,
                1001,
                1005,
                1010,
                1012,
                1029,
                999,
                1011,
                1026,
                1028,
                2023,
                2003,
                1055,
                1056,
                2094,
                2232,
                23435,
                11113,
                30522,
                30523,
                30524,
                30525,
                30526,
                30527,
            ]
        ),
    )

    @hsettings(1000)
    @given(st.lists(ids, max_size=20), st.booleans())
    def check(seq_ids, skip):
        for o, r, label in ((ours, ref, "cleanup on"), (ours2, ref2, "cleanup off")):
            u = o.decode(seq_ids, skip_special_tokens=skip)
            v = r.decode(seq_ids, skip_special_tokens=skip)
            assert u == v, (
                f"decode({seq_ids}, skip_special_tokens={skip}) ({label}):\n"
                f" ours {u!r}\n ref  {v!r}"
            )

    check()
