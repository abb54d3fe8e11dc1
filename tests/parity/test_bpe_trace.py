"""BpeTokenizer.trace, which the page shows: its ids, pre-tokens and token bytes against the
references (tiktoken 0.14.0 and its own regex for cl100k/o200k; tokenizers 0.23.3 for Qwen3).
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paths import bpe_dir, reference, require, tiktoken_module

SAMPLES = [
    "",
    "Hello, world!  It's 2026.\n\n  indented\tcode()",
    "Привет, мир! Ελληνικά ΣΟΦΟΣ",
    "日本語のテキスト、中文文本。😀👍🏽",
    "e\u0301 + A\u030a = é Å",  # NFC changes these for Qwen
    "<|endoftext|>between<|im_start|>user\nhi<|im_end|>",
    " " * 9 + "x" + "\n" * 3,
]


def tiktoken_pair(name):
    import regex

    import tokenprism

    ref = tiktoken_module().get_encoding(name)
    ours = tokenprism.BpeTokenizer.from_tiktoken_file(
        str(require(bpe_dir() / f"{name}.tiktoken")), name
    )
    return ours, ref, regex.compile(ref._pat_str)


@pytest.fixture(scope="module")
def o200k():
    return tiktoken_pair("o200k_base")


@pytest.fixture(scope="module")
def cl100k():
    return tiktoken_pair("cl100k_base")


@pytest.fixture(scope="module")
def qwen():
    import tokenprism

    path = require(bpe_dir() / "qwen3" / "tokenizer.json")
    return tokenprism.BpeTokenizer.from_file(str(path)), reference().Tokenizer.from_file(str(path))


def check_tiktoken(pair, text):
    ours, ref, pat = pair
    specials = ref.special_tokens_set
    tr = ours.trace(text, allowed_special="all")
    ids = [t["id"] for t in tr["tokens"]]
    assert ids == ref.encode(text, allowed_special="all")
    assert "".join(t["text"] for t in tr["tokens"]) == text
    for t in tr["tokens"]:
        raw = ref.decode_single_token_bytes(t["id"])
        assert bytes(t["bytes"]) == raw
        try:
            raw.decode("utf-8")
            assert not t["partial"]
        except UnicodeDecodeError:
            assert t["partial"]
        assert t["special"] == (raw.decode("utf-8", "replace") in specials)
    for seg in tr["segments"]:
        piece = text.encode()[seg["start"] : seg["end"]].decode()
        if seg["kind"] == "special":
            assert piece in specials and seg["pre_tokens"] == []
            continue
        assert seg["normalized"] is None  # tiktoken does not normalize
        # Pre-tokens: tiktoken's own regex, run by the `regex` module, whose Unicode version
        # (17.0 and later) is newer than tiktoken's and ours (16.0): compared only where every
        # char was already assigned in this Python's older unicodedata, so all versions agree.
        if all(unicodedata.category(c) != "Cn" for c in piece):
            assert [p["text"] for p in seg["pre_tokens"]] == pat.findall(piece)
        # Each pre-token's ids: tiktoken on that piece.
        for p in seg["pre_tokens"]:
            assert p["ids"] == ref.encode_ordinary(p["text"])
            assert piece.encode()[p["start"] : p["end"]].decode() == p["text"]
        assert [i for p in seg["pre_tokens"] for i in p["ids"]] == ids[
            seg["first_token"] : seg["end_token"]
        ]


@pytest.mark.parametrize("text", SAMPLES)
def test_tiktoken_samples(o200k, cl100k, text):
    check_tiktoken(o200k, text)
    check_tiktoken(cl100k, text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.text(max_size=10), st.sampled_from(["<|endoftext|>", " ", "\n", "'s", "123"])),
        max_size=8,
    ).map("".join)
)
def test_tiktoken_generated(o200k, text):
    check_tiktoken(o200k, text)


@pytest.mark.parametrize("text", SAMPLES)
def test_qwen_samples(qwen, text):
    ours, ref = qwen
    tr = ours.trace(text, allowed_special="all")
    ids = [t["id"] for t in tr["tokens"]]
    assert ids == ref.encode(text, add_special_tokens=False).ids
    assert "".join(t["text"] for t in tr["tokens"]) == ref.decode(ids, skip_special_tokens=False)
    for seg in tr["segments"]:
        if seg["kind"] == "text":
            raw = text.encode()[seg["start"] : seg["end"]].decode()
            # Qwen normalizes with NFC: the reference's normalizer gives the same text.
            want = ref.normalizer.normalize_str(raw)
            assert (seg["normalized"] or raw) == want
            assert "".join(p["text"] for p in seg["pre_tokens"]) == want
