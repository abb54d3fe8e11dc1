"""Random components of tokenizers 0.23.3 (normalizers, pre-tokenizers, decoders) with random
parameters, drawn from a `random.Random`: what the parity tests of each component and the random
pipelines (tests/parity/test_pipelines.py) build. Each drawer returns a reference component;
its JSON (`__getstate__`, or the tokenizer's `to_str`) is what ours loads.
"""

from __future__ import annotations

import random

from paths import reference

# --- normalizers ------------------------------------------------------------------------------

# Texts that exercise each normalizer: whitespace at the edges, marks, CJK, bytes of every
# length, the metaspace char, regex metacharacters.
NORMALIZER_CHARS = list(" \t\n\u3000aAbé\u0301\u0323e\u0130ßΣ東\U0001f600\u2581.*\\^$")
NORMALIZER_CHARS += ["\u1df6", "\x01"]
REPLACE_LITERALS = ["", " ", "a", "é", "\u2581", "  ", "ab", ".", "\\", "e\u0301", "東", "\n"]
REPLACE_REGEXES = [
    "^",
    "$",
    r"\s+",
    r"\s",
    "[aeiou]",
    r"\p{L}+",
    r"(?<=a)",
    "a|b",
    r"\d+",
    ".",
    "",
    "(?=b)",
    r"\p{Mn}",
    "[^a-z]+",
    " ?",
    r"\p{Zs}",
    r"\P{Zs}",
    r"[\u00AD\u200B\u200C\u200D\u2060\uFEFF]",
    r"[^a-e \u3000]",
]
REPLACE_CONTENTS = ["", "\u2581", " ", "XY", "é", "東", "  ", "\U0001f600"]


def random_normalizer(rng: random.Random, depth: int = 0):
    """A reference normalizer of a random kind with random parameters."""
    n = reference().normalizers
    kinds = [
        "Bert",
        "NFC",
        "NFD",
        "NFKC",
        "NFKD",
        "Lowercase",
        "StripAccents",
        "Strip",
        "Replace",
        "Replace",
        "Prepend",
        "ByteLevel",
        "Nmt",
    ]
    if depth < 2:
        kinds += ["Sequence"] * 3
    kind = rng.choice(kinds)
    if kind == "Bert":
        return n.BertNormalizer(
            clean_text=rng.random() < 0.5,
            handle_chinese_chars=rng.random() < 0.5,
            strip_accents=rng.choice([None, True, False]),
            lowercase=rng.random() < 0.5,
        )
    if kind == "Strip":
        return n.Strip(left=rng.random() < 0.6, right=rng.random() < 0.6)
    if kind == "Replace":
        content = rng.choice(REPLACE_CONTENTS)
        if rng.random() < 0.5:
            return n.Replace(rng.choice(REPLACE_LITERALS + [rng.choice(NORMALIZER_CHARS)]), content)
        return n.Replace(reference().Regex(rng.choice(REPLACE_REGEXES)), content)
    if kind == "Prepend":
        return n.Prepend(rng.choice(["\u2581", "", " ", "ab", "é"]))
    if kind == "Sequence":
        return n.Sequence([random_normalizer(rng, depth + 1) for _ in range(rng.randint(0, 4))])
    return getattr(n, kind)()


# --- pre-tokenizers ---------------------------------------------------------------------------

BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
# Literal Split patterns: separators, regex metachars (escaped by the reference), multi-char and
# empty strings, chars that are several bytes or several code points.
SPLIT_STRINGS = [" ", "-", ".", "ab", "", "a.b", "\\", "'s", "▁", "🙂", "é", "e\u0301", "$", "[",
                 "(?", "-&~#", "\n", "  ", "1", "東"]  # fmt: skip
# Regex Split patterns: the model files' own, lookarounds, empty matches, classes.
SPLIT_REGEXES = [
    r"\s+",
    r"\s",
    r"\p{L}+",
    r"\d",
    r"\p{N}{1,3}",
    r"(?=a)",
    r"",
    r"a|",
    r"\b",
    r"[aeiou]",
    r"(?i)ab",
    r"$",
    r"^",
    r".",
    r"\s+(?!\S)",
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"[\p{Han}\p{Hiragana}]+",
    r"\X",
    r"[^\x00-\x7f]",
    r"(a)(b)?",
]
DELIMITER_CHARS = [" ", "_", "-", "a", "▁", "é", "🙂", "\n", "\u3000", "1", "東", "\u0301"]
PRE_TOKENIZER_KINDS = [
    "BertPreTokenizer",
    "ByteLevel",
    "Whitespace",
    "WhitespaceSplit",
    "Punctuation",
    "Split",
    "Metaspace",
    "Digits",
    "CharDelimiterSplit",
    "UnicodeScripts",
    "FixedLength",
    "Sequence",
]


def any_char(rng: random.Random) -> str:
    while True:
        c = rng.randrange(0x110000)
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def draw_char(rng: random.Random) -> str:
    return rng.choice(DELIMITER_CHARS) if rng.random() < 0.8 else any_char(rng)


def random_pre_tokenizer(kind: str, rng: random.Random, depth: int = 0):
    """A reference pre-tokenizer of `kind` (one of PRE_TOKENIZER_KINDS) with random parameters."""
    P = reference().pre_tokenizers
    if kind == "BertPreTokenizer":
        return P.BertPreTokenizer()
    if kind == "ByteLevel":
        return P.ByteLevel(
            add_prefix_space=rng.random() < 0.5,
            use_regex=rng.random() < 0.7,
            trim_offsets=rng.random() < 0.5,
        )
    if kind == "Whitespace":
        return P.Whitespace()
    if kind == "WhitespaceSplit":
        return P.WhitespaceSplit()
    if kind == "Punctuation":
        return P.Punctuation(rng.choice(BEHAVIORS))
    if kind == "Split":
        if rng.random() < 0.4:
            pattern = rng.choice(SPLIT_STRINGS) if rng.random() < 0.8 else draw_char(rng)
        else:
            pattern = reference().Regex(rng.choice(SPLIT_REGEXES))
        return P.Split(pattern, rng.choice(BEHAVIORS), invert=rng.random() < 0.3)
    if kind == "Metaspace":
        return P.Metaspace(
            replacement=rng.choice(["▁", "▁", "_", " ", "a", "é", "🙂", "-"]),
            prepend_scheme=rng.choice(["always", "first", "never"]),
            split=rng.random() < 0.7,
        )
    if kind == "Digits":
        return P.Digits(individual_digits=rng.random() < 0.5)
    if kind == "CharDelimiterSplit":
        return P.CharDelimiterSplit(draw_char(rng))
    if kind == "UnicodeScripts":
        return P.UnicodeScripts()
    if kind == "FixedLength":
        return P.FixedLength(length=rng.randint(1, 8))
    if kind == "Sequence":
        kinds = [k for k in PRE_TOKENIZER_KINDS if k != "Sequence" or depth == 0]
        return P.Sequence(
            [
                random_pre_tokenizer(rng.choice(kinds), rng, depth + 1)
                for _ in range(rng.randint(2, 4))
            ]
        )
    raise AssertionError(kind)


# --- decoders ---------------------------------------------------------------------------------

METASPACE_CHARS = ["\u2581", "_", " ", "é", "a"]
DECODER_REGEXES = ["^", "$", r"\s+", "\u2581", "[aeiou]", "", "(?=b)", "a|b", r"\p{L}+"]


def random_decoder(rng: random.Random, depth: int = 0):
    """A reference decoder of a random kind with random parameters."""
    d = reference().decoders
    kinds = ["ByteLevel", "WordPiece", "Metaspace", "BPEDecoder", "ByteFallback", "Fuse"]
    kinds += ["Replace", "Strip", "CTC"]
    if depth < 2:
        kinds += ["Sequence"] * 3
    kind = rng.choice(kinds)
    if kind == "WordPiece":
        return d.WordPiece(prefix=rng.choice(["##", "", "▁", "a"]), cleanup=rng.random() < 0.5)
    if kind == "Metaspace":
        return d.Metaspace(
            replacement=rng.choice(METASPACE_CHARS),
            prepend_scheme=rng.choice(["always", "first", "never"]),
            split=rng.random() < 0.5,
        )
    if kind == "BPEDecoder":
        return d.BPEDecoder(suffix=rng.choice(["</w>", "", "a", "▁", "##"]))
    if kind == "Replace":
        content = rng.choice(["", " ", "\u2581", "XY", "é"])
        if rng.random() < 0.5:
            return d.Replace(rng.choice(["\u2581", "", " ", "a", "##", "."]), content)
        return d.Replace(reference().Regex(rng.choice(DECODER_REGEXES)), content)
    if kind == "Strip":
        return d.Strip(
            content=rng.choice(METASPACE_CHARS), left=rng.randint(0, 3), right=rng.randint(0, 3)
        )
    if kind == "CTC":
        return d.CTC(
            pad_token=rng.choice(["<pad>", "", "a", "▁"]),
            word_delimiter_token=rng.choice(["|", "", " ", "▁"]),
            cleanup=rng.random() < 0.5,
        )
    if kind == "Sequence":
        return d.Sequence([random_decoder(rng, depth + 1) for _ in range(rng.randint(0, 4))])
    return getattr(d, kind)()


def leaves(component: dict | None) -> list[dict]:
    """The components in a normalizer's or pre-tokenizer's JSON, in order, nested Sequences
    flattened (the stages the trace shows)."""
    if not component:
        return []
    if component["type"] == "Sequence":
        inner = component.get("normalizers") or component.get("pretokenizers") or []
        return [leaf for c in inner for leaf in leaves(c)]
    return [component]
