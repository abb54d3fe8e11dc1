"""tokenprism.normalize(text, form): Unicode normalization forms NFC, NFD, NFKC, NFKD.

Proof against two independent sources: Unicode's own NormalizationTest.txt (every line, all
four forms, all five columns, plus the invariance of every code point it does not list), and
the `unicodedata2` package (Unicode 15.0.0) on hypothesis-generated strings.
"""

import bz2
import os
import subprocess
import sys
from pathlib import Path

import pytest
import unicodedata2
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenprism
from paths import ROOT

NORMALIZATION_TEST = Path(
    os.environ.get("NORMALIZATION_TEST", "/usr/share/unicode/NormalizationTest.txt.bz2")
)
FORMS = ("NFC", "NFD", "NFKC", "NFKD")
UNICODE_VERSION = "15.0.0"


def read_normalization_test():
    """Returns (lines, part1_chars): each line's five columns as strings, and Part 1's chars."""
    if not NORMALIZATION_TEST.exists():
        pytest.fail(
            f"{NORMALIZATION_TEST} is missing: install the Debian package unicode-data, "
            "or set NORMALIZATION_TEST to a copy of NormalizationTest.txt(.bz2)"
        )
    opener = bz2.open if NORMALIZATION_TEST.suffix == ".bz2" else open
    with opener(NORMALIZATION_TEST, "rt", encoding="utf-8") as f:
        text = f.read()
    first = text.split("\n", 1)[0]
    assert f"NormalizationTest-{UNICODE_VERSION}.txt" in first, first

    lines, part1_chars, part = [], set(), None
    for raw in text.splitlines():
        data = raw.split("#", 1)[0].strip()
        if not data:
            continue
        if data.startswith("@"):
            part = data[1:].split()[0]
            continue
        fields = data.split(";")
        columns = tuple("".join(chr(int(h, 16)) for h in f.split()) for f in fields[:5])
        if part == "Part1":
            assert len(columns[0]) == 1, raw
            part1_chars.add(columns[0])
        lines.append((columns, raw))
    return lines, part1_chars


@pytest.fixture(scope="module")
def normalization_test():
    return read_normalization_test()


def test_forms_tables_are_generated_and_current():
    """The checked-in tables are exactly what the generator makes from the UCD files."""
    generator = ROOT / "crate" / "tools" / "gen_forms.py"
    result = subprocess.run(
        [sys.executable, str(generator), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_forms_every_line_of_normalization_test(normalization_test):
    lines, _ = normalization_test
    assert len(lines) > 18_000
    nf = tokenprism.normalize
    for (c1, c2, c3, c4, c5), raw in lines:
        for x in (c1, c2, c3):
            assert nf(x, "NFC") == c2, raw
            assert nf(x, "NFD") == c3, raw
        for x in (c4, c5):
            assert nf(x, "NFC") == c4, raw
            assert nf(x, "NFD") == c5, raw
        for x in (c1, c2, c3, c4, c5):
            assert nf(x, "NFKC") == c4, raw
            assert nf(x, "NFKD") == c5, raw


def test_forms_code_points_outside_part1_are_invariant(normalization_test):
    _, part1_chars = normalization_test
    others = [
        chr(cp)
        for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF and chr(cp) not in part1_chars
    ]
    assert len(others) > 1_000_000
    # Checked in batches: a newline is a starter that never changes and never composes, so
    # the normal form of "x\ny\n..." is that of each char followed by a newline.
    batch = 4096
    for form in FORMS:
        for i in range(0, len(others), batch):
            chunk = "\n".join(others[i : i + batch])
            if tokenprism.normalize(chunk, form) != chunk:
                changed = [c for c in others[i : i + batch] if tokenprism.normalize(c, form) != c]
                pytest.fail(f"{form} changes {[f'U+{ord(c):04X}' for c in changed[:10]]}")


def test_forms_examples_and_names():
    assert tokenprism.normalize("e\u0301", "NFC") == "\u00e9"
    assert tokenprism.normalize("\u00e9", "nfd") == "e\u0301"
    assert tokenprism.normalize("\ufb01", "NFKC") == "fi"
    assert tokenprism.normalize("\u1e9b\u0323", "nfkd") == "s\u0323\u0307"
    assert tokenprism.normalize("", "NFC") == ""


def test_forms_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="NFX"):
        tokenprism.normalize("abc", "NFX")
    with pytest.raises(ValueError):
        tokenprism.normalize("a\ud800b", "NFC")


def _interesting_chars():
    """Chars that normalization acts on: marks, decomposables, halves of composites, Hangul."""
    chars = set()
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if unicodedata2.combining(c) or unicodedata2.decomposition(c):
            chars.add(c)
            nfd = unicodedata2.normalize("NFD", c)
            chars.update((nfd[0], nfd[-1]))
    chars.update(chr(cp) for cp in range(0x1100, 0x1200))
    chars.update("aeiouAEIOU sSlLRnN\u03b1\u03c9\u05d0\u0627\u0915\u0b47\u4e00\uac00")
    return sorted(chars)


INTERESTING = _interesting_chars()
# Two draws in three from the interesting chars, one from anywhere (boundaries, other scripts).
texts = st.text(
    alphabet=st.one_of(
        st.sampled_from(INTERESTING),
        st.sampled_from(INTERESTING),
        st.characters(exclude_categories=("Cs",)),
    ),
    max_size=24,
)


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=3000, deadline=None)
@given(text=texts)
def test_forms_match_unicodedata2(form, text):
    assert unicodedata2.unidata_version == UNICODE_VERSION
    assert tokenprism.normalize(text, form) == unicodedata2.normalize(form, text)


@settings(max_examples=500, deadline=None)
@given(words=st.lists(texts, min_size=1, max_size=40))
def test_forms_long_mixed_text_matches_unicodedata2(words):
    """Longer text: many segments, ASCII runs long enough for the word-at-a-time skip."""
    text = " plain ascii words in between ".join(words)
    for form in FORMS:
        assert tokenprism.normalize(text, form) == unicodedata2.normalize(form, text)
