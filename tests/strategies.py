"""Hypothesis strategies for tokenizer inputs: the places where a BERT pipeline goes wrong.

A text is a list of pieces joined together (pieces include whitespace, so words form and break
at random). Pieces: ASCII words, Latin letters with runs of combining marks (stacked, mixed
combining classes so canonical reordering matters), controls and format characters (deleted by
clean_text), every kind of whitespace, CJK (all the ranges the reference pads, their neighbours,
and the 2B81F/2B820/2B91F/2B920 boundary), other scripts, emoji with ZWJ and modifiers, case
oddities (İ, ß, final sigma, Kelvin sign ...), words around max_input_chars_per_word, the special
tokens inside text, punctuation and symbols of every category, and any code point at all.
"""

from __future__ import annotations

import random
import string

from hypothesis import strategies as st


def crange(a: int, b: int) -> list[str]:
    return [chr(c) for c in range(a, b + 1)]


def chars_in(*ranges: tuple[int, int]) -> st.SearchStrategy[str]:
    return st.one_of(*[st.integers(a, b).map(chr) for a, b in ranges])


# --- whitespace: every White_Space character, plus look-alikes that are not whitespace
WHITESPACE = (
    list(" \t\n\r\x0b\x0c")
    + ["\x85", "\xa0", "\u1680", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]
    + crange(0x2000, 0x200A)
    + ["\u180e", "\u200b", "\ufeff", "\u2060", "\x1c", "\x1d", "\x1e", "\x1f"]
)

# --- controls and format characters (Cc, Cf, Co, and the others clean_text deletes)
CONTROLS = (
    crange(0x00, 0x1F)
    + crange(0x7F, 0x9F)
    + crange(0x200B, 0x200F)
    + crange(0x202A, 0x202E)
    + crange(0x2060, 0x206F)
    + [
        "\u00ad",
        "\ufeff",
        "\ufffd",
        "\ufff9",
        "\ufffa",
        "\ufffb",
        "\u0600",
        "\u0605",
        "\u061c",
        "\u06dd",
        "\u070f",
        "\u08e2",
        "\u180e",
        "\U000110bd",
        "\U0001bca0",
        "\U0001d173",
        "\U000e0001",
        "\U000e0020",
        "\U000e007f",
        "\ue000",
        "\uf8ff",
        "\U000f0000",
        "\U0010fffd",
        "\U000e01ef",
        "\ufe0f",
        "\U00013430",
    ]
)

# --- combining marks: Latin block plus marks with other combining classes
MARKS = crange(0x0300, 0x036F) + [
    "\u0591",
    "\u05b0",
    "\u05bc",
    "\u064b",
    "\u0651",
    "\u0670",
    "\u093c",
    "\u094d",
    "\u0e38",
    "\u0e48",
    "\u0f71",
    "\u0f72",
    "\u0f74",
    "\u0f80",
    "\u0f39",
    "\u1dc0",
    "\u1dce",
    "\u1dfa",
    "\u20d0",
    "\u20e3",
    "\u20dd",
    "\u302a",
    "\u302e",
    "\u3099",
    "\u309a",
    "\ufe20",
    "\U0001d165",
    "\U0001d16d",
    "\U0001e944",
    "\u0903",
    "\u093e",
    "\u0bcd",
    "\u1ab0",
    "\u1abe",
    "\u1ac0",
    "\u0898",
    "\u0eb9",
    "\u0eba",
]

LATIN_BASES = (
    list(string.ascii_letters)
    + crange(0xC0, 0xFF)
    + crange(0x100, 0x17F)
    + crange(0x180, 0x24F)
    + crange(0x1E00, 0x1EFF)
    + [
        "\u0130",
        "\u0131",
        "\u00df",
        "\u1e9e",
        "\u01c5",
        "\u01c4",
        "\u212a",
        "\u212b",
        "\u2126",
        "\ufb01",
        "\ufb00",
        "\u0149",
        "\u1e96",
        "\u0390",
        "\u03a3",
        "\u03c2",
    ]
)

PUNCT = (
    list(string.punctuation)
    + list("¡¿«»‐‑‒–—―‖‗‘’‚‛“”„‟†‡•‣․‥…‧‰‱′″‴‵‹›※‼‽⁁⁂⁃⁅⁆⁇⁈⁉⁊⁋⁌⁍⁎⁏⁐⁑⁓⁔⁕⁖⁗⁘⁙⁚⁛⁜⁝⁞")
    + list(
        "、。〃〈〉《》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〽゠・！＂＃％＆＇（）＊，－．／：；？＠［＼］＿｛｝｡｢｣､･"
    )
    + list(
        "§¶·;·՚՛՜՝՞՟։֊־׀׃׆׳״؉؊،؍؛؞؟٪٫٬٭۔।॥॰෴๏๚๛༄༅༆༇༈༉༊་༌།༎༏༐༑༒༔༺༻༼༽྅࿐࿑࿒࿓࿔၊။၌၍၎၏჻፠፡።፣፤፥፦፧፨᐀᙭᙮᚛᚜᛫᛬᛭᜵᜶។៕៖៘៙៚᠀᠁᠂᠃᠄᠅᠆᠇᠈᠉᠊"
    )
    + [
        "\u2e2e",
        "\u2e3a",
        "\u2e3b",
        "\u2e42",
        "\u2e4f",
        "\u2e52",
        "\u2e5d",
        "\U00010100",
        "\U0001e95e",
        "\U00016ff0",
        "\U0001da87",
    ]
    # symbols: only the ASCII ones are punctuation for BERT
    + list("$+<=>^`|~£€¥©®°±×÷¤¦¨¬¯´¸¼½¾₹₽∑√∞≠≤≥←→⇒∀∃∅∈♠♣♥♦☺★✓✗")
)

DIGITS = (
    list(string.digits)
    + crange(0x660, 0x669)
    + crange(0x6F0, 0x6F9)
    + crange(0x966, 0x96F)
    + crange(0xFF10, 0xFF19)
    + list("²³¹¼½¾⁰⁴⁵ⅠⅡⅢⅰⅱ①②⑴⒈")
    + ["\U0001d7ce", "\U0001d7ff"]
)

CJK_RANGES = [
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2B91F),
    (0x2B920, 0x2CEAF),
    (0x2CEB0, 0x2EBEF),
    (0x30000, 0x3134F),
    (0x31350, 0x323AF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
    (0x2E80, 0x2FDF),
    (0x3040, 0x30FF),
    (0x3100, 0x31FF),
    (0xAC00, 0xD7A3),
    (0x1100, 0x11FF),
    (0xFF00, 0xFFEF),
    (0x3200, 0x33FF),
    (0xFE30, 0xFE4F),
]
CJK_EDGES = [
    chr(c)
    for c in (
        0x4DFF,
        0x4E00,
        0x9FFF,
        0xA000,
        0x33FF,
        0x3400,
        0x4DBF,
        0x4DC0,
        0x1FFFF,
        0x20000,
        0x2A6DF,
        0x2A6E0,
        0x2A6FF,
        0x2A700,
        0x2B73F,
        0x2B740,
        0x2B81F,
        0x2B820,
        0x2B91F,
        0x2B920,
        0x2CEAF,
        0x2CEB0,
        0xF8FF,
        0xF900,
        0xFAFF,
        0xFB00,
        0x2F7FF,
        0x2F800,
        0x2FA1F,
        0x2FA20,
        0xFA0E,
        0xFA10,
        0xFA6E,
        0xFA70,
    )
]

SCRIPT_RANGES = [
    (0x0370, 0x03FF),
    (0x1F00, 0x1FFF),
    (0x0400, 0x052F),
    (0x0590, 0x05FF),
    (0x0600, 0x06FF),
    (0x0750, 0x077F),
    (0x08A0, 0x08FF),
    (0x0900, 0x097F),
    (0x0980, 0x09FF),
    (0x0B80, 0x0BFF),
    (0x0E00, 0x0E7F),
    (0x0E80, 0x0EFF),
    (0x0F00, 0x0FFF),
    (0x10A0, 0x10FF),
    (0x1C90, 0x1CBF),
    (0x0530, 0x058F),
    (0x13A0, 0x13FF),
    (0xAB70, 0xABBF),
    (0x1E900, 0x1E95F),
    (0x10400, 0x1044F),
    (0x104B0, 0x104FF),
    (0x16E40, 0x16E9F),
    (0x1780, 0x17FF),
    (0x1000, 0x109F),
    (0x2C00, 0x2C5F),
    (0xA640, 0xA69F),
    (0x1D400, 0x1D7FF),
    (0x1F100, 0x1F1FF),
]

EMOJI = [
    "😀",
    "👍",
    "👍🏽",
    "👨‍👩‍👧‍👦",
    "👩🏾‍💻",
    "🏳️‍🌈",
    "🇫🇷",
    "🇯🇵",
    "1️⃣",
    "#️⃣",
    "❤️",
    "❤︎",
    "🧑‍🤝‍🧑",
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
    "☺",
    "✌🏿",
    "\u200d",
    "\U0001f3fb",
    "\ufe0f",
    "\ufe0e",
    "\U000e0100",
    "🫠",
    "🫶🏻",
    "🪿",
    "\U0001faf8",
]

SPECIALS = [
    "[MASK]",
    "[CLS]",
    "[SEP]",
    "[PAD]",
    "[UNK]",
    "[mask]",
    "[Mask]",
    "[MASK",
    "MASK]",
    "[ MASK ]",
    "[[MASK]]",
    "[MASK][MASK]",
    "##",
    "##a",
    "[unused0]",
    "[unused99]",
]

VOCAB_WORDS = [
    "the",
    "un",
    "##aff",
    "##able",
    "playing",
    "tokenization",
    "hello",
    "world",
    "naïve",
    "café",
    "résumé",
    "Straße",
    "İstanbul",
    "ΣΊΣΥΦΟΣ",
    "Οδυσσεύς",
    "москва",
    "東京",
    "こんにちは",
    "한국어",
    "مرحبا",
    "שלום",
    "नमस्ते",
    "สวัสดี",
    "don't",
    "U.S.A.",
    "3.14",
    "e-mail",
    "C++",
    "x86_64",
    "http://a.b/c?d=e",
    "ﬁnance",
    "Ⅻ",
    "ｆｕｌｌ",
]

# --- generators. Hypothesis is slow per draw (~50-100 us), so a piece is one drawn integer: the low
# bits pick the kind (lower = simpler, so shrinking simplifies), the rest seed a random.Random that
# builds the piece. A text is a list of such integers: Hypothesis still chooses, mutates and
# shrinks the structure (how many pieces, which kinds), and a failure shrinks to few, simple pieces.


def _run(rng: random.Random, table: list[str], lo: int, hi: int) -> str:
    return "".join(rng.choice(table) for _ in range(rng.randint(lo, hi)))


def _in_ranges(rng: random.Random, ranges: list[tuple[int, int]]) -> str:
    a, b = rng.choice(ranges)
    return chr(rng.randint(a, b))


def _any_char(rng: random.Random) -> str:
    r = rng.random()
    hi = 0x7FF if r < 0.2 else 0xFFFF if r < 0.6 else 0x3FFFF if r < 0.85 else 0x10FFFF
    while True:
        c = rng.randint(0, hi)
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def _long_word(rng: random.Random) -> str:
    k = rng.randrange(8)
    n = rng.randint(95, 106)
    if k == 0:
        return "a" * rng.randint(90, 130)
    if k == 1:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))
    if k == 2:
        return "\u00e9" * (n // 2)  # 2 chars each after NFD
    if k == 3:
        return "e\u0301" * (n // 2) + "x" * (n % 2)
    if k == 4:
        return "unaffable" * rng.randint(8, 14)
    if k == 5:
        return rng.choice("東я") * rng.randint(95, 110)
    if k == 6:
        return "".join(rng.choice(LATIN_BASES + MARKS) for _ in range(rng.randint(95, 140)))
    return "".join(rng.choice(string.ascii_letters) for _ in range(n)) + "[MASK]"


_KINDS = [
    lambda r: _run(r, list(string.ascii_letters + string.digits), 1, 12),  # ascii word
    lambda r: r.choice(VOCAB_WORDS),
    lambda r: _run(r, WHITESPACE, 1, 3),
    lambda r: _run(r, list(string.ascii_letters), 1, 8),  # ascii word
    lambda r: _run(r, PUNCT, 1, 3),
    lambda r: _run(r, DIGITS, 1, 6),
    lambda r: r.choice(SPECIALS),
    lambda r: r.choice(LATIN_BASES) + _run(r, MARKS, 0, 6),  # combining runs
    lambda r: _run(r, MARKS, 1, 5),
    lambda r: _run(r, CONTROLS, 1, 3),
    lambda r: _run(r, WHITESPACE + CONTROLS, 1, 4),
    lambda r: "".join(
        _in_ranges(r, CJK_RANGES) if r.random() < 0.7 else r.choice(CJK_EDGES)
        for _ in range(r.randint(1, 6))
    ),
    lambda r: "".join(_in_ranges(r, SCRIPT_RANGES) for _ in range(r.randint(1, 8))),
    lambda r: _run(r, EMOJI, 1, 3),
    lambda r: "".join(_any_char(r) for _ in range(r.randint(1, 4))),
    _long_word,
]
SEPARATORS = ["", "", " ", ""]


def build_piece(code: int) -> str:
    kind, seed = code % len(_KINDS), code // len(_KINDS)
    return _KINDS[kind](random.Random(seed))


def build_text(codes: list[int]) -> str:
    return "".join(build_piece(c) + SEPARATORS[(c >> 4) % len(SEPARATORS)] for c in codes)


piece_code = st.integers(0, 2**40)
piece = piece_code.map(build_piece)
# a text: pieces joined, mostly directly (special tokens adjacent to letters, marks after
# anything), sometimes with a space
text = st.lists(piece_code, max_size=12).map(build_text)
short_text = st.lists(piece_code, max_size=4).map(build_text)
# long enough to pass 128 tokens now and then
long_text = st.lists(piece_code, max_size=50).map(build_text)
# Hypothesis's own text generation, for what the tables above don't think of
native_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)

# What the Unigram tokenizer.json files' stages rewrite, to join at random: runs of spaces (a
# Replace of " {2,}"), the replacement char, chars the charsmap expands, removes or folds
# (ligatures, controls, combining marks, CR LF), other whitespace (Strip), and added tokens
# matched in normalized text.
UNIGRAM_REWRITES = [
    " ",
    "  ",
    "   ",
    "\u2581",
    "\u2581\u2581",
    "\u3000",
    "\u00a0",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "a",
    "ab",
    "\u00e9",
    "e\u0301",
    "\ufb01",
    "\u2122",
    "\x1e",
    "\x00",
    "\u200b",
    "\u00ad",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u2003",
    "\u202f",
    "\u180e",
    "<mask>",
    "<s>",
    "<unk>",
    "</s>",
    "\u65e5\u672c",
    "\U0001f600",
    "\uff21",
    ".",
]
