"""Long pieces against the references: texts the pre-tokenizer leaves as one long piece (or a run
of unusual ones) are merged a window at a time (crate/src/models/bpe/merge.rs), and must give
the references' ids all the same.

Inputs: the five 100,000-byte texts of scripts/bench/long_pieces.py (a repeated letter, a base64
blob, minified JavaScript, a DNA string, 33,000 Han chars), each also cut to lengths around the
window sizes (127-129, 191-193, 1,000 and 4,099 bytes), and runs of 100,000 of a few chars that
form long tokens ('-', ' ', '=', '0', 'é'). References: tiktoken 0.14.0 (o200k_base,
cl100k_base), tokenizers 0.23.3 (GPT-2 and Llama 3.2 tokenizer.json through BpeTokenizer and
through the general Tokenizer, whose offsets are compared too; bert-base-uncased; the T5
Unigram file).
"""

from __future__ import annotations

import pytest

import long_pieces
from parity import encoding_diff
from paths import bert_json, bpe_dir, bpe_json, reference, tiktoken_module, unigram_json

RUNS = ("-", " ", "=", "0", "é")
CUTS = (127, 128, 129, 191, 192, 193, 1_000, 4_099)


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    out = {}
    for name, text in long_pieces.inputs().items():
        if name == "en":
            continue
        out[name] = text
        data = text.encode()
        for n in CUTS:
            out[f"{name}[:{n}]"] = data[:n].decode(errors="ignore")
    for c in RUNS:
        out[f"{c!r}x100000"] = c * (100_000 // len(c.encode()))
    return out


def first_difference(got: list[int], want: list[int]) -> str:
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"first difference at {at} of {len(got)} / {len(want)} ids: {got[at : at + 5]} / {want[at : at + 5]}"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_tiktoken_encodings(name, texts):
    import tokenprism

    ours = tokenprism.BpeTokenizer.from_tiktoken_file(str(bpe_dir() / f"{name}.tiktoken"), name)
    ref = tiktoken_module().get_encoding(name)
    for label, text in texts.items():
        got, want = ours.encode_ordinary(text), ref.encode_ordinary(text)
        assert got == want, f"{name} {label}: {first_difference(got, want)}"


@pytest.mark.parametrize("name", ["gpt2", "llama3.2"])
def test_tokenizer_json_bpe(name, texts):
    import tokenprism

    path = str(bpe_json(name))
    fast = tokenprism.BpeTokenizer.from_file(path)
    general = tokenprism.Tokenizer.from_file(path)
    ref = reference().Tokenizer.from_file(path)
    for t in (general, ref):
        t.no_truncation()
        t.no_padding()
    for label, text in texts.items():
        want = ref.encode(text, add_special_tokens=False)
        got = fast.encode_ordinary(text)
        assert got == want.ids, f"{name} BpeTokenizer {label}: {first_difference(got, want.ids)}"
        diff = encoding_diff(general.encode(text, add_special_tokens=False), want)
        assert diff is None, f"{name} Tokenizer {label}: {diff}"


@pytest.mark.parametrize("kind", ["bert", "t5"])
def test_wordpiece_and_unigram(kind, texts):
    import tokenprism

    path = str(bert_json() if kind == "bert" else unigram_json("t5"))
    ours = tokenprism.Tokenizer.from_file(path)
    ref = reference().Tokenizer.from_file(path)
    for t in (ours, ref):
        t.no_truncation()
        t.no_padding()
    for label, text in texts.items():
        want = ref.encode(text, add_special_tokens=False)
        assert ours.encode_ids(text, add_special_tokens=False) == want.ids, f"{kind} {label}"
        diff = encoding_diff(ours.encode(text, add_special_tokens=False), want)
        assert diff is None, f"{kind} {label}: {diff}"
