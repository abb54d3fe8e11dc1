"""Byte-level BPE parity: tokenprism.BpeTokenizer against the references, id for id.

- tiktoken 0.14.0: o200k_base, cl100k_base, p50k_base, r50k_base (and its "gpt2", built from
  encoder.json + vocab.bpe), loaded offline from the files scripts/data/bpe_data.sh fetched
  (their SHA-256 are the ones tiktoken checks);
- mistral-common 1.13.1 (in a venv of its own, see paths.TekkenOracle): Mistral's Tekken file
  tekken_240911.json (ids, with and without bos and eos; decode dropping and keeping the special
  tokens); tekken_240718.json has the same vocabulary and pattern, and is checked on a sample;
- tokenizers 0.23.3: GPT-2, Qwen3, Llama 3.2 and DeepSeek V4 tokenizer.json (Qwen3: NFC, a
  Split regex, ByteLevel; Llama 3.2: a Split regex, ByteLevel, a template that adds
  <|begin_of_text|>; DeepSeek V4: three Split regexes in turn, ByteLevel).

Inputs: the development corpora (ids compared, FNV-1a hash printed), every code point
U+0000..U+10FFFF in several contexts, at least 20,000 hypothesis-generated strings per run
(whitespace runs, digits, apostrophes in every case, mixed scripts, emoji, newlines, \\r\\n,
special tokens), runs of 100,000 identical chars, and the special-token rules.

CI runs a share of this that keeps every kind of check (TOKENPRISM_EXHAUSTIVE=1 runs all of it,
`scripts/parity/exhaustive.sh`): the tokenizer.json files' ids on every code point through
encode_full only (it compares ids too), their corpora as the first MB of each (of the later
corpora, chat with every file and the others with two files each), and a quarter of the
generated strings, at least 5,000 per file. Every generated
string also checks decode(encode(x)) == x (for Qwen: x normalized, as the reference decodes it)
and that decode_pieces joins to it; for the tokenizer.json files, decode equals the reference's
decode, with special tokens kept and skipped.

For the tokenizer.json files, encode_full is compared with the reference's Tokenizer.encode
field by field (ids, tokens, offsets, type ids, word ids, sequence ids, both masks), with
add_special_tokens on and off and on pairs: on the corpora (ids and offsets hashed), on every
code point in two contexts, on generated strings with special tokens typed in. The same file
through tokenprism.Tokenizer (the general pipeline, run by the byte-level engine) is compared
with the same reference Encoding everywhere encode_full is, and its ids (encode_ids and
encode_batch_ids too, as lists and arrays) and decode on every generated string. Llama 3's and DeepSeek V4's pre-tokenizers are checked split for split against the
reference's Splits on their regexes.

Also checked here: that both references match \\p{L}, \\p{N}, \\s ... exactly as the Unicode
16.0.0 tables of crate/src/unicode/generated/bpe_classes.rs, and that the table is current.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parity import FIELDS, codepoints, encoding_diff
from paths import (
    CORPORA,
    ROOT,
    TekkenOracle,
    bpe_dir,
    data_dir,
    reference,
    require,
    tekken_json,
    tiktoken_module,
)

TIKTOKEN = ("o200k_base", "cl100k_base", "p50k_base", "r50k_base")
HF = ("gpt2.json", "qwen3.json", "llama3.2.json", "deepseek-v4.json")
# Mistral's tekken files: tekken_240718 has the same vocabulary and pattern (test_tekken_files).
TEKKEN = ("tekken_240911",)
ALL_NAMES = TIKTOKEN + TEKKEN + HF
GENERATED: dict[str, int] = {}
EXHAUSTIVE = os.environ.get("TOKENPRISM_EXHAUSTIVE") == "1"
# Generated strings per run (each goes through every file): the CI share is a quarter.
SCALE = 4 if EXHAUSTIVE else 1
MINIMUM_GENERATED = 5_000 * SCALE
# The tokenizer.json references are the slow half of this file: in CI they see the first MB of
# each corpus.
HF_CORPUS_CHARS = None if EXHAUSTIVE else 1_000_000


class Pair:
    """Ours and the reference, behind one `encode(text)` (all special tokens allowed for the
    tokenizer.json files, whose references always split them; none for tiktoken)."""

    def __init__(self, name: str):
        import tokenprism

        self.name = name
        if name in TIKTOKEN:
            require(bpe_dir() / f"{name}.tiktoken")
            self.ref = tiktoken_module().get_encoding(name)
            self.ours = tokenprism.BpeTokenizer.from_tiktoken_file(
                str(bpe_dir() / f"{name}.tiktoken"), name
            )
            self.ref_encode = self.ref.encode_ordinary
            self.ours_encode = self.ours.encode_ordinary
            self.ref_decode = lambda ids: self.ref.decode_bytes(ids)
            # The rank file through the general pipeline (its stem names the encoding).
            self.general = tokenprism.Tokenizer.from_file(str(bpe_dir() / f"{name}.tiktoken"))
        elif name in TEKKEN:
            path = tekken_json(name)
            self.ref = TekkenOracle(path)
            self.ours = tokenprism.BpeTokenizer.from_file(str(path))
            self.ref_encode = lambda text: self.ref.encode(text)["ids"]
            self.ours_encode = self.ours.encode_ordinary
            self.ref_decode = None
            # The general pipeline: its special tokens are added tokens, found in any text.
            self.general = tokenprism.Tokenizer.from_file(str(path))
        else:
            path = require(bpe_dir() / name.replace(".json", "") / "tokenizer.json")
            self.ref = reference().Tokenizer.from_file(str(path))
            self.ours = tokenprism.BpeTokenizer.from_file(str(path))
            # The same file through the general pipeline (run by the byte-level engine), and
            # through its stages one by one (the regexes on Oniguruma).
            self.general = tokenprism.Tokenizer.from_file(str(path))
            self.staged = tokenprism.Tokenizer.from_file(str(path))
            self.staged.set_fast_paths(fused=False)
            self.ref_encode = lambda text: self.ref.encode(text, add_special_tokens=False).ids
            self.ours_encode = lambda text: self.ours.encode(text, allowed_special="all")
            self.ref_decode = None

    def check(self, text: str) -> list[int]:
        want = self.ref_encode(text)
        got = self.ours_encode(text)
        if got != want:
            i = next(
                (k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want))
            )
            lo = max(0, i - 3)

            def show(ids):
                return [self.ours.decode_single_token_bytes(t) for t in ids[lo : i + 4]]

            pytest.fail(
                f"{self.name}: ids differ at token {i} for text={codepoints(text)}\n"
                f"  ours {got[lo : i + 4]} {show(got)}\n  ref  {want[lo : i + 4]} {show(want)}",
                pytrace=False,
            )
        return got


@pytest.fixture(scope="module")
def pairs() -> dict[str, Pair]:
    made = {name: Pair(name) for name in ALL_NAMES}
    yield made
    for name in TEKKEN:
        made[name].ref.close()


@pytest.fixture(scope="module", autouse=True)
def summary():
    yield
    total = sum(GENERATED.values())
    print(
        f"\nBPE: generated strings compared: {total:,} ("
        + ", ".join(f"{k} {v:,}" for k, v in GENERATED.items())
        + ")"
    )


def fnv1a(ids: list[int]) -> str:
    h = 0xCBF29CE484222325
    for i in ids:
        for b in i.to_bytes(4, "little"):
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# ------------------------------------------------------------------------------ corpora


@pytest.mark.parametrize("lang", CORPORA)
@pytest.mark.parametrize("name", ALL_NAMES)
def test_corpus(pairs, name, lang):
    if name in HF and not EXHAUSTIVE:
        pytest.skip("CI compares the tokenizer.json files' corpus ids in test_full_corpus")
    text = require(data_dir() / "corpora" / f"{lang}.txt").read_text(encoding="utf-8")
    p = pairs[name]
    t0 = time.perf_counter()
    want = p.ref_encode(text)
    t1 = time.perf_counter()
    got = p.ours_encode(text)
    t2 = time.perf_counter()
    assert len(got) == len(want) and fnv1a(got) == fnv1a(want), p.check(text)
    mb = len(text.encode()) / 1e6
    print(
        f"\n{name} {lang}: {len(got):,} ids, fnv1a {fnv1a(got)}, reference {mb / (t1 - t0):.1f} MB/s, "
        f"ours {mb / (t2 - t1):.1f} MB/s",
        end="",
    )
    if name in TIKTOKEN + TEKKEN:
        assert p.ours.decode_bytes(got) == text.encode()
    if name in TEKKEN:
        check_tekken_general(p, text, got)
    if name in TIKTOKEN:
        check_tiktoken_general(p, text)


def test_tiktoken_gpt2_is_r50k(pairs):
    """tiktoken's "gpt2" (from encoder.json and vocab.bpe) against ours from r50k_base."""
    import tokenprism

    ref = tiktoken_module().get_encoding("gpt2")
    ours = tokenprism.BpeTokenizer.from_tiktoken_file(str(bpe_dir() / "r50k_base.tiktoken"), "gpt2")
    text = require(data_dir() / "corpora" / "en.txt").read_text(encoding="utf-8")[:500_000]
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.encode("<|endoftext|>", allowed_special="all") == [50256]


# ------------------------------------------------------------------------- code points

ALL_CPS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
# Each context puts {c} next to something a pattern branch cares about: a letter on each side
# (o200k's upper/lower runs, the prefix char), a space before (` ?X+`), digits, an apostrophe
# before and a contraction after, a combining mark after (and NFC), whitespace and newlines.
CONTEXTS = ("{c}", " {c}a", "A{c}1'", "'{c}\u0301 ", "1{c}'s\r\n", "\n{c}{c}  ")
CHUNK = 4096


@pytest.mark.parametrize(
    "context", CONTEXTS, ids=[c.encode("unicode_escape").decode() for c in CONTEXTS]
)
@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_code_point(pairs, name, context):
    if name in HF and not EXHAUSTIVE:
        pytest.skip("CI compares the tokenizer.json files' ids in test_full_every_code_point")
    p = pairs[name]
    bad = []
    for start in range(0, len(ALL_CPS), CHUNK):
        chunk = ALL_CPS[start : start + CHUNK]
        text = "".join(context.format(c=chr(c)) for c in chunk)
        if p.ours_encode(text) != p.ref_encode(text):
            # Name the code points: each one alone in its context.
            for c in chunk:
                t = context.format(c=chr(c))
                if p.ours_encode(t) != p.ref_encode(t):
                    bad.append(c)
            if not bad:
                bad.append(f"chunk from U+{chunk[0]:04X}")
        if len(bad) > 20:
            break
    assert not bad, f"{name}, context {context!r}: ids differ for " + ", ".join(
        f"U+{c:04X}" if isinstance(c, int) else c for c in bad[:20]
    )


# ------------------------------------------------------------------------- hypothesis

WHITESPACE = [
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "\r\n\r\n",
    " \n",
    "\n ",
    " \t ",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\u2029",
    "\x0b",
    "\x0c",
    "\x85",
    "\u202f",
    "\u205f",
    "\u1680",
    "\u2003",
    "\u200b",
    "\ufeff",
]
CONTRACTIONS = [
    a + b
    for a in ("'", "\u2019")
    for b in (
        "s",
        "S",
        "t",
        "T",
        "re",
        "RE",
        "Re",
        "rE",
        "ve",
        "VE",
        "Ve",
        "m",
        "M",
        "ll",
        "LL",
        "Ll",
        "lL",
        "d",
        "D",
        "\u017f",
        "\u212a",
        "x",
        "",
        "'",
        "ss",
        "st",
        "ré",
    )
]
DIGITS = list("0123456789") + ["٠١٢", "१२३", "½", "²", "①", "Ⅻ", "１２", "\U0001d7ce", "𝟙𝟚"]
SCRIPTS = [
    "Привет",
    "мир",
    "Ελληνικά",
    "ΑΒΓ",
    "שָׁלוֹם",
    "مَرْحَبًا",
    "بِسْمِ",
    "中文",
    "日本語",
    "ひらがな",
    "カタカナ",
    "한국어",
    "हिन्दी",
    "ไทย",
    "ქართული",
    "Ǆǅǆ",
    "ǈ",
    "ʰʲ",
    "ﬁ",
    "İı",
    "ß",
    "ẞ",
    "e\u0301",
    "a\u0308\u0301",
    "\u0301",
    "\u093c",
    "\u1df6",
    "\u20dd",
    "Å",
    "Ω",
    "ǅungla",
    "HTTPServer",
    "iPhone",
    "McDonald",
    "camelCase",
    "SCREAMING",
    "ǅǅa",
    "ABCdef",
]
EMOJI = ["😀", "👍🏽", "👨\u200d👩\u200d👧", "🇺🇸", "❤️", "🤷\u200d♀️", "\U0001fae8", "✓", "™", "©"]
PUNCT = list('!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~') + [
    "...",
    "—",
    "–",
    "“",
    "”",
    "«",
    "»",
    "//",
    "/*",
    "*/",
    "->",
    "=>",
    "!=",
    "¿",
    "。",
    "、",
]
SPECIALS = [
    "<|endoftext|>",
    "<|endofprompt|>",
    "<|fim_prefix|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<|endoftext|",
    "<|",
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|reserved_special_token_17|>",
    "<|image|>",
    "<|eot_id",
    "<｜begin▁of▁sentence｜>",
    "<｜end▁of▁sentence｜>",
    "<｜User｜>",
    "<｜Assistant｜>",
    "<｜tool▁calls▁begin｜>",
    "｜DSML｜",
    "<dsml:",
    "<｜/table>｜",
    "<｜tr｜>",
    "<｜begin▁of",
]

word = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), min_size=1, max_size=12
)
number = st.text(st.sampled_from("0123456789"), min_size=1, max_size=9)
piece = st.one_of(
    word,
    number,
    st.sampled_from(WHITESPACE),
    st.sampled_from(CONTRACTIONS),
    st.sampled_from(DIGITS),
    st.sampled_from(SCRIPTS),
    st.sampled_from(EMOJI),
    st.sampled_from(PUNCT),
    st.sampled_from(SPECIALS),
    st.characters(codec="utf-8"),
)
mixed = st.lists(piece, max_size=30).map("".join)
spaces = st.lists(
    st.one_of(st.sampled_from(WHITESPACE), word, st.sampled_from(PUNCT), number), max_size=40
).map("".join)
apostrophes = st.lists(
    st.one_of(
        st.sampled_from(CONTRACTIONS),
        word,
        st.sampled_from(" \n"),
        st.sampled_from(SCRIPTS),
        st.sampled_from(PUNCT),
    ),
    max_size=25,
).map("".join)
anything = st.text(st.characters(codec="utf-8"), max_size=60)
# Words of scripts whose vowel signs are combining marks (pointed Arabic and Hebrew,
# Devanagari, Thai), which GPT-2's, cl100k's and Qwen's \p{L}+ stop at: the encoders look such
# words up whole (crate/src/pre_tokenizers/byte_level/spans.rs, span_end), so they come back, after spaces,
# newlines, no-break spaces and punctuation, inside and at the end of the text.
MARKED = [
    "ب",
    "ِ",
    "س",
    "ْ",
    "م",
    "ٱ",
    "ل",
    "َّ",
    "ه",
    "ـٰ",
    "ن",
    "ُ",
    "ً",
    "ש",
    "ָ",
    "ל",
    "ו",
    "ֹ",
    "ם",
    "क",
    "ि",
    "्",
    "ष",
    "ा",
    "ं",
    "ท",
    "ี",
    "่",
    "ม",
    "e",
    "\u0301",
    "'",
    "s",
]
marked_word = st.lists(st.sampled_from(MARKED), min_size=1, max_size=10).map("".join)
marked = st.lists(
    st.one_of(
        marked_word,
        marked_word,
        st.sampled_from([" ", " ", " ", "  ", "\n", "\u00a0", "\u3000", ", ", "."]),
    ),
    max_size=30,
).map("".join)


# DeepSeek V4 splits numbers, then runs of Han (U+4E00..U+9FA5) and kana (U+3040..U+30FF),
# then the rest: the edges of those ranges, the kana block's marks, symbols and punctuation,
# numbers of several scripts, controls, format and unassigned chars (which no branch of the
# third pattern matches alone), ASCII punctuation before letters, spaces and newlines.
KANA_HAN = [
    "中文",
    "日本語",
    "\u4e00",
    "\u9fa5",
    "\u9fa6",
    "\u9fff",
    "\u4dff",
    "ひらがな",
    "カタカナ",
    "\u3040",
    "\u3097",
    "\u3099",
    "\u309b",
    "\u309d",
    "\u30a0",
    "\u30fb",
    "\u30fc",
    "\u30ff",
    "\u303f",
    "\u3100",
    "ｱ",
    "、",
    "。",
    "1",
    "12",
    "1234",
    "٣٤",
    "½",
    "一二三",
    "〇",
    "\u200d",
    "\u200b",
    "\ufeff",
    "\x00",
    "\x7f",
    "\ue000",
    "\u0378",
    "\u0301",
    "'s",
    ".x",
    "(abc",
    "a",
    "Zé",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\u3000",
    "\t",
    "!",
    "€",
]
kana_han = st.lists(st.sampled_from(KANA_HAN), max_size=30).map("".join)


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


def check_all(pairs, text: str, kind: str):
    for p in pairs.values():
        ids = p.check(text)
        # Qwen normalizes (NFC) before encoding: its round trip gives the normalized text.
        want = text if p.ours.normalizer is None else p.ref.decode(ids, skip_special_tokens=False)
        assert p.ours.decode(ids, errors="strict") == want, (
            f"{p.name}: decode(encode(x)) != x for {codepoints(text)}"
        )
        assert "".join(p.ours.decode_pieces(ids)) == want
        if p.name in HF:
            assert p.ours.decode(ids) == p.ref.decode(ids, skip_special_tokens=False)
            assert p.ours.decode(ids, skip_special_tokens=True) == p.ref.decode(ids), (
                f"{p.name}: decode(ids, skip_special_tokens=True) for {codepoints(text)}"
            )
            assert p.general.encode(text, add_special_tokens=False).ids == ids, (
                f"{p.name}: Tokenizer's ids for {codepoints(text)}"
            )
            check_general_ids(p, [text], [ids], add_special_tokens=False)
            for skip in (True, False):
                assert p.general.decode(ids, skip_special_tokens=skip) == p.ref.decode(
                    ids, skip_special_tokens=skip
                ), f"{p.name}: Tokenizer.decode (skip_special_tokens={skip}) for {codepoints(text)}"
        if p.name in TEKKEN:
            check_tekken_extras(p, text, ids)
        if p.name in TIKTOKEN:
            check_tiktoken_general(p, text)
    GENERATED[kind] = GENERATED.get(kind, 0) + 1


def check_tiktoken_general(p: Pair, text: str) -> None:
    """Tokenizer on a .tiktoken file: tiktoken's ids with every special token allowed (the
    general pipeline finds added tokens in any text), and its decode."""
    want = p.ref.encode(text, allowed_special="all")
    got = p.general.encode(text, add_special_tokens=False).ids
    assert got == want, f"{p.name}: Tokenizer's ids for {codepoints(text)}"
    check_general_ids(p, [text], [want], add_special_tokens=False)
    assert p.general.decode(want, skip_special_tokens=False) == p.ref.decode(want)


def check_tekken_extras(p: Pair, text: str, ids: list[int]) -> None:
    """What mistral-common gives besides encode(text, bos=False, eos=False): with bos and eos,
    and decode of that dropping (its default) and keeping the special tokens; the same through
    Tokenizer, for a text without a special token's text in it (Tokenizer finds those)."""
    want = p.ref.encode(text)
    bos = p.ours.encode("", add_special_tokens=True)
    eos = [p.ours.special_tokens["</s>"]]
    with_both = p.ours.encode(text, disallowed_special=(), add_special_tokens=True) + eos
    assert with_both == bos + ids + eos == want["bos_eos"], f"{p.name}: bos/eos {codepoints(text)}"
    for t in (p.ours, p.general):
        assert t.decode(with_both, skip_special_tokens=True) == want["ignore"], type(t)
        assert t.decode(with_both, skip_special_tokens=False) == want["keep"], (
            f"{p.name} {type(t)}: decode keeping {codepoints(text)}"
        )
    check_tekken_general(p, text, ids)


def check_tekken_general(p: Pair, text: str, ids: list[int]) -> None:
    """Tokenizer on a tekken file: mistral-common's ids (`ids`) where the text holds no special
    token's text, else the byte-level engine's with every special token recognized."""
    # Every special token past the first twenty is <SPECIAL_n>.
    named = p.ref.info["specials"][:20] + ["<SPECIAL_"]
    if any(s in text for s in named):
        ids = p.ours.encode(text, allowed_special="all")
    bos = p.ours.encode("", add_special_tokens=True)
    assert p.general.encode(text).ids == bos + ids, f"{p.name}: Tokenizer for {codepoints(text)}"
    assert p.general.encode(text, add_special_tokens=False).ids == ids
    check_general_ids(p, [text], [bos + ids])
    check_general_ids(p, [text], [ids], add_special_tokens=False)


def check_general_ids(
    p: Pair, texts: list[str], want: list[list[int]], add_special_tokens: bool = True
) -> None:
    """Tokenizer's ids-only calls (which skip the Encoding) give the reference's ids `want`:
    encode_ids and encode_batch_ids, as lists and as arrays."""
    t = p.general
    where = f"{p.name} add_special_tokens={add_special_tokens}"
    for text, w in zip(texts, want):
        assert t.encode_ids(text, add_special_tokens) == w, (
            f"{where}: encode_ids {codepoints(text)}"
        )
        got = t.encode_ids(text, add_special_tokens, as_array=True).tolist()
        assert got == w, f"{where}: encode_ids as_array {codepoints(text)}"
    assert t.encode_batch_ids(texts, add_special_tokens, num_threads=1) == want, where
    ids, offsets = t.encode_batch_ids(texts, add_special_tokens, num_threads=1, as_array=True)
    flat = ids.tolist()
    got = [flat[offsets[i] : offsets[i + 1]] for i in range(len(texts))]
    assert got == want, f"{where}: encode_batch_ids as_array"


GENERATED_KINDS = [
    ("mixed", mixed, 1400 * SCALE),
    ("whitespace", spaces, 1000 * SCALE),
    ("apostrophes", apostrophes, 900 * SCALE),
    ("any text", anything, 900 * SCALE),
    ("marked words", marked, 800 * SCALE),
    ("kana and Han", kana_han, 500 * SCALE),
]


@pytest.mark.parametrize(
    "kind,strategy,n",
    GENERATED_KINDS,
    ids=["mixed", "whitespace", "apostrophes", "any", "marks", "kana"],
)
def test_generated(pairs, kind, strategy, n):
    @hsettings(n)
    @given(strategy)
    def run(text):
        check_all(pairs, text, kind)

    run()
    # Each kind compares nearly all of its examples, so a run that runs them all compares at
    # least MINIMUM_GENERATED strings per file (whichever worker each kind runs on).
    assert GENERATED.get(kind, 0) >= n * 95 // 100, f"only {GENERATED.get(kind, 0)} {kind} strings"


def test_generated_total_is_enough():
    assert sum(n for _, _, n in GENERATED_KINDS) * 95 // 100 >= MINIMUM_GENERATED


# ---------------------------------------------------------------------- adversarial


@pytest.mark.parametrize(
    "unit", ["a", "A", " ", "\n", "1", "!", "é", "中", "😀", "ab", " a", "\r\n", "'s"]
)
def test_long_runs(pairs, unit):
    """100,000 copies: one huge pre-token for most units. That their work is linear (no time
    bound here: load fails one) is counted in crate/src/tokenizer/bpe/tests.rs,
    real_encodings_long_runs_cost_linear_work, on the same units and encodings."""
    text = unit * (100_000 // len(unit))
    for p in pairs.values():
        got = p.ours_encode(text)
        assert got == p.ref_encode(text), f"{p.name}: {unit!r} * {len(text) // len(unit)}"


def test_special_tokens_like_tiktoken(pairs):
    for name in ("o200k_base", "cl100k_base", "r50k_base"):
        ours, ref = pairs[name].ours, pairs[name].ref
        assert ours.special_tokens_set == ref.special_tokens_set
        text = "hello <|endoftext|> world<|endoftext|>"
        # Disallowed by default: both raise.
        with pytest.raises(ValueError):
            ref.encode(text)
        with pytest.raises(ValueError, match="endoftext"):
            ours.encode(text)
        for kw in (
            {"allowed_special": "all"},
            {"allowed_special": {"<|endoftext|>"}},
            {"disallowed_special": ()},
            {"disallowed_special": set()},
            {"allowed_special": set(), "disallowed_special": ()},
        ):
            assert ours.encode(text, **kw) == ref.encode(text, **kw), (name, kw)
        assert ours.encode(text, allowed_special="all").count(ref.eot_token) == 2
        if name == "cl100k_base":
            t2 = "<|fim_prefix|>x<|endoftext|>"
            with pytest.raises(ValueError, match="endoftext"):
                ours.encode(t2, allowed_special={"<|fim_prefix|>"})
            kw = {"allowed_special": {"<|fim_prefix|>"}, "disallowed_special": ()}
            assert ours.encode(t2, **kw) == ref.encode(t2, **kw)
            kw = {"disallowed_special": {"<|fim_prefix|>"}}
            with pytest.raises(ValueError):
                ours.encode(t2, **kw)
        assert ours.encode_batch([text, "x"], allowed_special="all") == ref.encode_batch(
            [text, "x"], allowed_special="all"
        )
        assert ours.encode_ordinary_batch([text] * 5) == ref.encode_ordinary_batch([text] * 5)


def test_hf_added_tokens(pairs):
    qwen = pairs["qwen3.json"]
    text = "<|im_start|>user\nHi<think>x</think><|im_end|>\n<|im_start|>assistant"
    assert (
        qwen.ours.encode(text, allowed_special="all")
        == qwen.ref.encode(text, add_special_tokens=False).ids
    )
    # Special tokens typed by a user: refused by default, text when told so. Non-special added
    # tokens (<think>) are part of the vocabulary and always recognized, as in tokenizers.
    with pytest.raises(ValueError, match="im_start"):
        qwen.ours.encode(text)
    ids = qwen.ours.encode(text, disallowed_special=())
    assert qwen.ours.token_to_id("<|im_start|>") not in ids
    assert qwen.ours.token_to_id("<think>") in ids
    assert qwen.ours.decode(ids) == text


def test_decode_mid_character(pairs):
    p = pairs["cl100k_base"]
    ids = p.ours.encode_ordinary("🤷\u200d♀️ é 中")
    parts = p.ours.decode_tokens_bytes(ids)
    assert any(not _is_utf8(b) for b in parts), "expected a token that ends inside a character"
    pieces = p.ours.decode_pieces(ids)
    assert "".join(pieces) == "🤷\u200d♀️ é 中"
    assert "" in pieces
    assert p.ours.decode_bytes(ids) == p.ref.decode_bytes(ids)
    assert p.ours.decode(ids[:1]) == p.ref.decode(ids[:1])  # U+FFFD replacement, as tiktoken


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_trace_piece(pairs):
    o = pairs["o200k_base"].ours
    tr = o.trace_piece(" tokenization")
    assert tr["ids"] == o.encode_ordinary(" tokenization")
    assert tr["initial"] == [o.token_to_id(bytes([b])) for b in b" tokenization"]
    assert all(len(s["parts"]) == len(tr["initial"]) - k - 1 for k, s in enumerate(tr["steps"]))
    last = tr["steps"][-1]["parts"] if tr["steps"] else tr["initial"]
    assert last == tr["ids"] or tr["whole_token"] == tr["ids"][0]
    assert o.pre_tokenize_str("Hello world's 123") == ["Hello", " world's", " ", "123"]


def test_errors(pairs):
    o = pairs["o200k_base"].ours
    with pytest.raises(ValueError, match="not in the vocabulary"):
        o.decode([10**9])
    with pytest.raises(ValueError, match="surrogate"):
        o.encode_ordinary("a\ud800b")
    with pytest.raises(ValueError, match="allowed_special"):
        o.encode("x", allowed_special="some")
    import tokenprism

    with pytest.raises(ValueError, match="unsupported"):
        tokenprism.BpeTokenizer.from_file(str(data_dir() / "bert-base-uncased" / "tokenizer.json"))


# ---------------------------------------------------------------- unicode tables


def _probe_sets():
    """For each property, the code points each reference's regex engine puts in it."""
    import tokenizers

    tiktoken = tiktoken_module()
    ranks = {bytes([i]): i for i in range(256)}
    text = "".join(map(chr, ALL_CPS))
    out = {}
    for prop in ("L", "N", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "s"):
        pat = r"\s" if prop == "s" else rf"\p{{{prop}}}"
        enc = tiktoken.Encoding("probe", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
        tk = {ord(c) for c in bytes(enc.encode_ordinary(text)).decode()}
        split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pat), "removed", invert=True)
        hf = {ord(c) for piece, _ in split.pre_tokenize_str(text) for c in piece}
        out[prop] = (tk, hf)
    return out


def test_references_match_unicode_16():
    """The class table is Unicode 16.0.0 because both references are: check it on every code point."""
    import gen_bpe_classes as gen

    ud = gen.load_unicodedata(gen.default_unicodedata_path())
    ws = gen.white_space(gen.DEFAULT_PROPLIST)
    for prop, (tk, hf) in _probe_sets().items():
        if prop == "s":
            want = ws
        else:
            want = {c for c in ALL_CPS if ud.category(chr(c)).startswith(prop)}
        assert tk == want, (
            f"tiktoken \\p{{{prop}}} differs from Unicode 16.0 on {len(tk ^ want)} code points"
        )
        assert hf == want, (
            f"tokenizers \\p{{{prop}}} differs from Unicode 16.0 on {len(hf ^ want)} code points"
        )


def test_class_table_is_current():
    r = subprocess.run(
        [sys.executable, str(ROOT / "crate" / "tools" / "gen_bpe_classes.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------- tokenizer.json: encode_full

FULL_FIELDS = FIELDS + ("sequence_ids",)
# A special token of each file, to cut a text into segments the references encode alone.
CUT = {
    "gpt2.json": "<|endoftext|>",
    "qwen3.json": "<|endoftext|>",
    "llama3.2.json": "<|eot_id|>",
    "deepseek-v4.json": "<｜end▁of▁sentence｜>",
}


def nfc_changes(p: Pair, *texts) -> bool:
    """Whether the file's normalizer (Qwen's NFC, as the reference computes it) changes a text."""
    n = p.ref.normalizer
    return n is not None and any(t is not None and n.normalize_str(t) != t for t in texts)


def check_full(p: Pair, text: str, pair: str | None = None, add_special_tokens: bool = True):
    """encode_full against the reference's Tokenizer.encode, every field. Offsets through NFC
    are not implemented: a text the normalizer changes must be refused, never answered. The
    general pipeline (the pair's Tokenizer, when it has one) answers every text."""
    ref = p.ref.encode(text, pair, add_special_tokens=add_special_tokens)
    where = f"add_special_tokens={add_special_tokens} text={codepoints(text)}" + (
        f" pair={codepoints(pair)}" if pair is not None else ""
    )
    if getattr(p, "general", None) is not None:
        diff = encoding_diff(
            p.general.encode(text, pair, add_special_tokens=add_special_tokens), ref, FULL_FIELDS
        )
        assert diff is None, f"{p.name} through Tokenizer {where}\n{diff}"
        if pair is None:
            check_general_ids(p, [text], [ref.ids], add_special_tokens)
    try:
        ours = p.ours.encode_full(text, pair, add_special_tokens=add_special_tokens)
    except ValueError as e:
        assert "NFC" in str(e) and nfc_changes(p, text, pair), (
            f"{p.name}: encode_full refused {codepoints(text)}: {e}"
        )
        return
    assert not nfc_changes(p, text, pair), f"{p.name}: NFC changes {codepoints(text)}"
    diff = encoding_diff(ours, ref, FULL_FIELDS)
    assert diff is None, f"{p.name} {where}\n{diff}"


def flat_hash(pairs) -> str:
    return fnv1a([x for p in pairs for x in p])


# In CI each file reads the first six corpora and chat (its own special tokens typed in), and the
# other later corpora two files each, in turn.
FIRST_CORPORA = 6


def full_corpus_in_ci(name: str, lang: str) -> bool:
    k = CORPORA.index(lang) - FIRST_CORPORA
    return k < 0 or lang == "chat" or (HF.index(name) - 2 * k) % len(HF) < 2


@pytest.mark.parametrize("lang", CORPORA)
@pytest.mark.parametrize("name", HF)
def test_full_corpus(pairs, name, lang):
    """Ids and offsets (hashed), word ids and masks of a whole corpus, as one text, through
    BpeTokenizer.encode_full and through Tokenizer; decode of the ids through both."""
    if not EXHAUSTIVE and not full_corpus_in_ci(name, lang):
        pytest.skip("CI reads each later corpus but chat with two tokenizer.json files")
    text = require(data_dir() / "corpora" / f"{lang}.txt").read_text(encoding="utf-8")
    text = text[:HF_CORPUS_CHARS]
    p = pairs[name]
    ref = p.ref.encode(text)
    engines = {"Tokenizer": p.general.encode(text)}
    try:
        engines["BpeTokenizer"] = p.ours.encode_full(text)
    except ValueError as e:
        assert "NFC" in str(e) and nfc_changes(p, text), e
    for engine, ours in engines.items():
        assert len(ours.ids) == len(ref.ids) and fnv1a(ours.ids) == fnv1a(ref.ids), engine
        assert flat_hash(ours.offsets) == flat_hash(ref.offsets), (
            engine,
            encoding_diff(ours, ref, ("offsets",)),
        )
        for field in (
            "type_ids",
            "special_tokens_mask",
            "attention_mask",
            "word_ids",
            "sequence_ids",
        ):
            assert getattr(ours, field) == getattr(ref, field), (engine, field)
        assert ours.tokens == ref.tokens, engine
    # The staged pipeline on the first 20,000 chars.
    head = text[:20_000]
    diff = encoding_diff(p.staged.encode(head), p.ref.encode(head), FULL_FIELDS)
    assert diff is None, f"{name} {lang}: the staged pipeline\n{diff}"
    assert p.staged.encode_ids(head, add_special_tokens=False) == p.ref_encode(head)
    # The ids-only calls on the whole text and line by line (a batch).
    check_general_ids(p, [text], [ref.ids])
    lines = text.splitlines(keepends=True)[:2000]
    want_lines = [e.ids for e in p.ref.encode_batch(lines, add_special_tokens=False)]
    check_general_ids(p, lines, want_lines, add_special_tokens=False)
    want = p.ref.decode(ref.ids)
    assert (
        p.general.decode(ref.ids) == want
        and p.ours.decode(ref.ids, skip_special_tokens=True) == want
    )
    print(f"\n{name} {lang}: ids {fnv1a(ref.ids)}, offsets {flat_hash(ref.offsets)}", end="")


# "{c}" between special tokens: each code point a segment of its own, encoded alone (the
# references split special tokens out before anything else runs).
FULL_CONTEXTS = ("{c}<cut>", " {c}a", "1{c}'s\r\n")


@pytest.mark.parametrize(
    "context", FULL_CONTEXTS, ids=[c.encode("unicode_escape").decode() for c in FULL_CONTEXTS]
)
@pytest.mark.parametrize("name", HF)
def test_full_every_code_point(pairs, name, context):
    if context == FULL_CONTEXTS[2] and not EXHAUSTIVE:
        pytest.skip("CI takes every code point in two contexts")
    p = pairs[name]
    context = context.replace("<cut>", CUT[name])
    bad = []
    for start in range(0, len(ALL_CPS), CHUNK):
        chunk = ALL_CPS[start : start + CHUNK]
        text = "".join(context.format(c=chr(c)) for c in chunk)
        try:
            check_full(p, text)
            continue
        except AssertionError:
            pass
        for c in chunk:  # name the code points: each one alone in its context
            try:
                check_full(p, context.format(c=chr(c)))
            except AssertionError:
                bad.append(c)
        if not bad and not nfc_changes(p, text):
            bad.append(f"chunk from U+{chunk[0]:04X}")
        if len(bad) > 20:
            break
    assert not bad, f"{name}, context {context!r}: encode_full differs for " + ", ".join(
        f"U+{c:04X}" if isinstance(c, int) else c for c in bad[:20]
    )


@pytest.mark.parametrize("name", HF)
def test_full_generated(pairs, name):
    """Generated strings (special tokens typed in among them), alone and as pairs, with
    add_special_tokens on and off."""
    p = pairs[name]

    @hsettings(400 * SCALE)
    @given(st.one_of(mixed, anything, spaces, marked, kana_han), st.one_of(st.none(), mixed))
    def run(text, pair):
        check_full(p, text, pair)
        check_full(p, text, pair, add_special_tokens=False)
        GENERATED["encode_full " + name] = GENERATED.get("encode_full " + name, 0) + 1

    run()


def test_llama_special_tokens(pairs):
    p = pairs["llama3.2.json"]
    ours, ref = p.ours, p.ref
    text = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
    for add in (True, False):
        check_full(p, text, add_special_tokens=add)
        check_full(p, text, "<|eot_id|>x", add_special_tokens=add)
        want = ref.encode(text, add_special_tokens=add).ids
        assert ours.encode(text, allowed_special="all", add_special_tokens=add) == want
        assert ours.encode_batch([text, ""], allowed_special="all", add_special_tokens=add) == [
            want,
            ref.encode("", add_special_tokens=add).ids,
        ]
    assert ours.encode("Hello", add_special_tokens=True) == ref.encode("Hello").ids
    assert (
        ours.encode("Hello")
        == ours.encode_ordinary("Hello")
        == ref.encode("Hello", add_special_tokens=False).ids
    )
    # tiktoken's rules for typed special tokens are unchanged: refused unless allowed.
    with pytest.raises(ValueError, match="begin_of_text"):
        ours.encode(text, add_special_tokens=True)
    ids = ours.encode(text, disallowed_special=())
    assert ours.token_to_id("<|eot_id|>") not in ids and ours.decode(ids) == text
    full = ours.encode_full(text)
    assert full.ids == ref.encode(text).ids and full.tokens[0] == "<|begin_of_text|>"
    assert ours.decode(full.ids, skip_special_tokens=True) == ref.decode(full.ids) == "user\n\nHi"
    assert ours.pattern == "llama3" and ours.special_tokens["<|image|>"] == 128256


def test_deepseek_special_tokens(pairs):
    """DeepSeek V4's chat tokens (special), its non-special added tokens (<think>, ｜DSML｜,
    matched after the empty normalizer) and special tokens that overlap them."""
    import json

    p = pairs["deepseek-v4.json"]
    ours, ref = p.ours, p.ref
    texts = [
        "<｜begin▁of▁sentence｜><｜User｜>Hi 123<｜Assistant｜><think>x</think>答案<｜end▁of▁sentence｜>",
        "<｜/table>｜DSML｜<dsml:x><｜tr｜>｜DSML｜>",
        "<｜begin▁of ｜DSML｜<｜tool▁calls▁begin｜>",
    ]
    for text in texts:
        for add in (True, False):
            check_full(p, text, add_special_tokens=add)
            check_full(p, text, texts[0], add_special_tokens=add)
            want = ref.encode(text, add_special_tokens=add).ids
            assert ours.encode(text, allowed_special="all", add_special_tokens=add) == want
    # Special tokens typed by a user: refused unless allowed, as tiktoken does.
    with pytest.raises(ValueError, match="begin▁of▁sentence"):
        ours.encode(texts[0])
    assert ours.encode(texts[1]) == ref.encode(texts[1], add_special_tokens=False).ids
    tj = json.loads(
        require(bpe_dir() / "deepseek-v4" / "tokenizer.json").read_text(encoding="utf-8")
    )
    regexes = [s["pattern"]["Regex"] for s in tj["pre_tokenizer"]["pretokenizers"][:3]]
    assert ours.pattern == "deepseek" and ours.split_regexes == regexes and ours.pat_str is None


def test_tiktoken_files_through_from_file(tmp_path):
    """from_file on a .tiktoken file: the encoding from the file's stem (with or without
    _base) or from name=; both engines."""
    import shutil

    import tokenprism

    src = require(bpe_dir() / "cl100k_base.tiktoken")
    ref = tiktoken_module().get_encoding("cl100k_base")
    text = "Hello <|endoftext|> world  \n\n 12345 'LL"
    want = ref.encode(text, allowed_special="all")
    short = tmp_path / "cl100k.tiktoken"
    other = tmp_path / "ranks.tiktoken"
    shutil.copyfile(src, short)
    shutil.copyfile(src, other)
    for path, name in ((src, None), (short, None), (other, "cl100k_base")):
        bpe = tokenprism.BpeTokenizer.from_file(str(path), name=name)
        assert bpe.encode(text, allowed_special="all") == want and bpe.pattern == "cl100k"
        general = tokenprism.Tokenizer.from_file(str(path), name=name)
        assert general.encode(text, add_special_tokens=False).ids == want
    with pytest.raises(ValueError, match="unknown tiktoken encoding"):
        tokenprism.BpeTokenizer.from_file(str(other))
    with pytest.raises(ValueError, match="unknown tiktoken encoding"):
        tokenprism.Tokenizer.from_file(str(other))
    import pickle

    general = tokenprism.Tokenizer.from_file(str(short))
    assert pickle.loads(pickle.dumps(general)).encode(text).ids == want


def test_tekken_files(pairs):
    """The tekken files' special tokens, sizes and pattern as mistral-common reads them; its
    encode never takes a typed special token as one (tiktoken-style encode refuses it unless
    told); tekken_240718 (same vocabulary and pattern) gives the same ids as mistral-common."""
    import json

    import tokenprism

    p = pairs["tekken_240911"]
    info = p.ref.info
    assert info["num_special_tokens"] == 1000 and info["specials"][:3] == ["<unk>", "<s>", "</s>"]
    assert all(t == f"<SPECIAL_{i}>" for i, t in enumerate(info["specials"]) if i >= 20)
    assert {t: i for i, t in enumerate(info["specials"])} == p.ours.special_tokens
    assert p.ours.n_vocab == info["n_words"]
    assert p.ours.encode("", add_special_tokens=True) == [info["bos"]]
    file = json.loads(tekken_json("tekken_240911").read_text(encoding="utf-8"))
    conf = file["config"]
    assert p.ours.pattern == "tekken" and p.ours.pat_str == conf["pattern"]
    text = "[INST] Hi <s>[/INST] 2024 don't"
    assert p.ours.encode_ordinary(text) == p.ref.encode(text)["ids"]
    with pytest.raises(ValueError, match="INST"):
        p.ours.encode(text)
    import pickle

    copy = pickle.loads(pickle.dumps(p.general))
    assert (
        copy.encode(text).ids
        == p.general.encode(text).ids
        == p.ours.encode(text, allowed_special="all", add_special_tokens=True)
    )
    old_path = tekken_json("tekken_240718")
    # The proofs of tekken_240911 hold for it: the same vocabulary and settings (it only lacks
    # the image settings).
    old_file = json.loads(old_path.read_text(encoding="utf-8"))
    assert old_file["vocab"] == file["vocab"] and old_file["config"] == conf
    old = tokenprism.BpeTokenizer.from_file(str(old_path))
    oracle = TekkenOracle(old_path)
    try:
        corpus = require(data_dir() / "corpora" / "en.txt").read_text(encoding="utf-8")
        for sample in (corpus[:100_000], text, "ünïcödé 中文 1234567 😀"):
            assert old.encode_ordinary(sample) == oracle.encode(sample)["ids"]
        assert oracle.info["specials"] == info["specials"]
    finally:
        oracle.close()


def _hf_splits(name):
    """The Split steps of a tokenizer.json's pre-tokenizer (a Sequence), as the reference runs
    them."""
    import json

    tj = json.loads(require(bpe_dir() / name / "tokenizer.json").read_text(encoding="utf-8"))
    tk = reference()
    steps = [
        tk.pre_tokenizers.Split(tk.Regex(step["pattern"]["Regex"]), "isolated")
        for step in tj["pre_tokenizer"]["pretokenizers"]
        if step["type"] == "Split"
    ]
    return tk.pre_tokenizers.Sequence(steps)


@pytest.mark.parametrize("name", ["llama3.2", "deepseek-v4"])
def test_pre_tokenizer_is_its_splits(pairs, name):
    """The hand-written matcher splits exactly as the reference's Splits on the file's regexes
    (Llama 3's one, DeepSeek V4's three in turn): on every code point in every context and on
    generated strings."""
    ours = pairs[name + ".json"].ours
    splits = _hf_splits(name)

    def check(text):
        want = [piece for piece, _ in splits.pre_tokenize_str(text)]
        assert ours.pre_tokenize_str(text) == want, codepoints(text)

    for context in CONTEXTS if EXHAUSTIVE else CONTEXTS[1:3]:
        for start in range(0, len(ALL_CPS), CHUNK):
            check("".join(context.format(c=chr(c)) for c in ALL_CPS[start : start + CHUNK]))

    @hsettings(750 * SCALE)
    @given(st.one_of(mixed, spaces, apostrophes, anything, marked, kana_han))
    def run(text):
        check(text)

    run()


def test_llama_is_not_cl100k(pairs):
    """Why Llama 3 has a matcher of its own: cl100k's `\\s++$` keeps a whitespace run that ends
    the text whole."""
    import tokenprism

    ours = pairs["llama3.2.json"].ours
    cl100k = tokenprism.BpeTokenizer.from_tiktoken_file(
        str(require(bpe_dir() / "cl100k_base.tiktoken")), "cl100k_base"
    )
    assert cl100k.pre_tokenize_str("x\n ") == ["x", "\n "]
    assert (
        ours.pre_tokenize_str("x\n ")
        == ["x", "\n", " "]
        == [piece for piece, _ in _hf_splits("llama3.2").pre_tokenize_str("x\n ")]
    )


def _tiny_json(**parts) -> str:
    """A byte-level tokenizer.json of 256 byte tokens and one merge, with Llama 3.2's
    pre-tokenizer, post-processor, decoder and first added token unless `parts` replace them."""
    import json

    llama = json.loads(
        require(bpe_dir() / "llama3.2" / "tokenizer.json").read_text(encoding="utf-8")
    )
    alphabet = reference().pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    vocab["ab"] = 256
    tj = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [dict(llama["added_tokens"][0], id=257)],
        "normalizer": None,
        "pre_tokenizer": llama["pre_tokenizer"],
        "post_processor": json.loads(json.dumps(llama["post_processor"]).replace("128000", "257")),
        "decoder": llama["decoder"],
        "model": dict(llama["model"], vocab=vocab, merges=["a b"]),
    }
    for path, value in parts.items():
        *outer, last = path.split("__")
        node = tj
        for k in outer:
            node = node[int(k)] if isinstance(node, list) else node[k]
        node[int(last) if isinstance(node, list) else last] = value
    return json.dumps(tj)


def test_tiny_llama_like_file_matches():
    import tokenprism

    js = _tiny_json()
    ref = reference().Tokenizer.from_str(js)
    ours = tokenprism.BpeTokenizer.from_str(js)
    p = Pair.__new__(Pair)
    p.name, p.ref, p.ours = "tiny", ref, ours
    for text in ("ab cab", "", " ab\n\n  ", "<|begin_of_text|>ab"):
        check_full(p, text)
        check_full(p, text, "ab", add_special_tokens=False)


@pytest.mark.parametrize(
    "parts,path",
    [
        ({"post_processor__processors__0__type": "Foo"}, "post_processor.processors[0]"),
        (
            {"pre_tokenizer__pretokenizers__0__pattern": {"Regex": r"\s+|\S+"}},
            "pretokenizers[0].pattern",
        ),
        ({"pre_tokenizer__pretokenizers__0__behavior": "Removed"}, "pretokenizers[0].behavior"),
        ({"pre_tokenizer__pretokenizers__1__use_regex": True}, "pretokenizers[1]"),
        ({"truncation": {"max_length": 8}}, "truncation"),
        ({"padding": {"strategy": "BatchLongest"}}, "padding"),
        ({"decoder": {"type": "Metaspace"}}, "decoder"),
        ({"added_tokens__0__lstrip": True}, "added_tokens[0].lstrip"),
        ({"normalizer": {"type": "NFKC"}}, "normalizer"),
        ({"model__byte_fallback": True}, "model.byte_fallback"),
    ],
)
def test_what_cannot_be_honoured_is_refused(parts, path):
    """Settings that would change the result are refused on load, the error naming where."""
    import tokenprism

    with pytest.raises(ValueError, match="unsupported") as e:
        tokenprism.BpeTokenizer.from_str(_tiny_json(**parts))
    assert path in str(e.value)


@pytest.mark.parametrize("add_prefix_space", [True, False])
def test_trimmed_offsets(add_prefix_space):
    """A ByteLevel post-processor that trims offsets: every field as the reference."""
    import tokenprism

    js = _tiny_json(
        post_processor__processors__0__trim_offsets=True,
        post_processor__processors__0__add_prefix_space=add_prefix_space,
    )
    p = Pair.__new__(Pair)
    p.name, p.ref = "tiny trimmed", reference().Tokenizer.from_str(js)
    p.ours = tokenprism.BpeTokenizer.from_str(js)
    assert p.ours.encode(" ab", add_special_tokens=True) == p.ref.encode(" ab").ids
    for text in (" ab", "ab  cab ", "  ", "\n \n", "a\tb\u3000 c", "<|begin_of_text|> ab "):
        for add in (True, False):
            check_full(p, text, add_special_tokens=add)
            check_full(p, text, " b ", add_special_tokens=add)


def test_prefix_space_offsets():
    """GPT-2 with ByteLevel's add_prefix_space: the added space's offsets."""
    import json

    import tokenprism

    tj = json.loads(require(bpe_dir() / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    tj["pre_tokenizer"]["add_prefix_space"] = True
    js = json.dumps(tj)
    p = Pair.__new__(Pair)
    p.name, p.ref = "gpt2 prefix", reference().Tokenizer.from_str(js)
    p.ours = tokenprism.BpeTokenizer.from_str(js)
    for text in ("Hello world", " x", "é", "😀 a", "a<|endoftext|>b", "<|endoftext|>", "\n", ""):
        check_full(p, text)
        check_full(p, text, "é b")
