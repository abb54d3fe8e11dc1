"""SentencePiece `.model` files read by tokenprism against sentencepiece 0.2.3 itself.

Every model of paths.SPM_MODELS (the Unigram models trained for the converted files, BPE and
Unigram models trained with user-defined and control pieces, byte fallback, split digits,
spaces after words, no whitespace split, and Mistral's Llama-style BPE models) is loaded with
`Tokenizer.from_file` and compared with `SentencePieceProcessor` run here: ids
(`encode(text, out_type=int)`, and `encode_ids`), pieces (`out_type=str` against the
Encoding's tokens) and `decode`. Inputs: corpus lines of every corpus and longer stretches as
one text (Unigram sums float32 scores over the whole text and shifts them back to 0 when they
pass 100000, so long inputs round differently than short ones), generated strings (whitespace runs, leading and trailing spaces, unknown
chars, emoji, controls, digits, the pieces that are not matched in text), every code point
(in chunks, joined and space-separated), and random id sequences for decode.

CI runs a share: the lines of 40 KB and 300 KB as long texts of each corpus (each of the six
later, 1 MB corpora with two models in turn), every 16th chunk of code points, fewer generated
strings. TOKENPRISM_EXHAUSTIVE=1 runs whole corpora, every code point and ten times the
generated strings.
"""

from __future__ import annotations

import functools
import os
import pickle
import random
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as S
from paths import CORPORA, SPM_MODELS, corpus, spm_model

EXHAUSTIVE = os.environ.get("TOKENPRISM_EXHAUSTIVE") == "1"
SCALE = 10 if EXHAUSTIVE else 1
CORPUS_BYTES = None if EXHAUSTIVE else 40_000
# Chars of each corpus encoded as long texts.
LONG_CHARS = None if EXHAUSTIVE else 300_000
# Code points per chunk, and every how many chunks the CI share takes.
CHUNK = 512
CHUNK_STRIDE = 1 if EXHAUSTIVE else 16


def sentencepiece():
    import sentencepiece as spm  # an ImportError fails the test: the reference is required

    if spm.__version__ != "0.2.3":
        pytest.fail(f"the reference must be sentencepiece==0.2.3, found {spm.__version__}")
    return spm


@functools.cache
def pair(name: str):
    """(ours, sentencepiece's processor) for model `name`."""
    import tokenprism

    path = str(spm_model(name))
    return tokenprism.Tokenizer.from_file(path), sentencepiece().SentencePieceProcessor(
        model_file=path
    )


def check(name: str, texts: list[str]) -> None:
    """Ids, pieces and decoding of each text equal sentencepiece's."""
    ours, ref = pair(name)
    want_ids = ref.encode(texts, out_type=int)
    want_pieces = ref.encode(texts, out_type=str)
    for text, ids, pieces in zip(texts, want_ids, want_pieces):
        enc = ours.encode(text)
        assert enc.ids == ids, f"{name}: ids of {text[:300]!r}"
        assert ours.encode_ids(text) == ids, f"{name}: encode_ids of {text[:300]!r}"
        assert enc.tokens == pieces, f"{name}: pieces of {text[:300]!r}"
        assert ours.decode(ids) == ref.decode(ids), f"{name}: decode of {text[:300]!r}"


def read_corpus(lang: str) -> str:
    with open(corpus(lang), encoding="utf-8") as f:
        return f.read(CORPUS_BYTES) if CORPUS_BYTES else f.read()


@pytest.mark.parametrize("lang", CORPORA)
@pytest.mark.parametrize("name", SPM_MODELS)
def test_corpus_lines(name: str, lang: str) -> None:
    check(name, read_corpus(lang).split("\n"))


# The long texts are about the models' score sums, not the script: every model reads the first
# six corpora, and each later corpus is read by the next two models in turn (every model reads
# one or two of them).
FIRST_CORPORA = 6


def long_texts_in_ci(name: str, lang: str) -> bool:
    k = CORPORA.index(lang) - FIRST_CORPORA
    return k < 0 or (SPM_MODELS.index(name) - 2 * k) % len(SPM_MODELS) < 2


@pytest.mark.parametrize("lang", CORPORA)
@pytest.mark.parametrize("name", SPM_MODELS)
def test_corpus_as_long_texts(name: str, lang: str) -> None:
    if not EXHAUSTIVE and not long_texts_in_ci(name, lang):
        pytest.skip("CI reads each later corpus as long texts with two models")
    with open(corpus(lang), encoding="utf-8") as f:
        text = f.read(LONG_CHARS) if LONG_CHARS else f.read()
    # Unigram path scores pass 100000 after some 40 KB of English, where SentencePiece shifts
    # them back to 0: the stretches and the whole text cross that several times.
    step = 100_000
    check(name, [text[i : i + step] for i in range(0, len(text), step)] + [text])


# Strings that test SentencePiece's own rules: whitespace runs at either end and inside, the
# space symbol itself, the texts of pieces never matched in text, user-defined pieces.
SPM_BITS = [
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\u3000",
    "\u00a0",
    "\u2581",
    "\u2581\u2581",
    "<unk>",
    "<s>",
    "</s>",
    "<pad>",
    "<0x41>",
    "<0xE2>",
    "<ctl>",
    "<sep>",
    "ab",
    "\u25a0",
    "def",
    "::",
    "[INST]",
    "0",
    "123",
    "4567",
    "\ufffd",
    "\x00",
    "\x7f",
    "\u200b",
    "\ufeff",
    "\U0001f600",
    "\U0001f468\u200d\U0001f469",
    "e\u0301",
    "\uff21",
    "\u2163",
    "\U0010ffff",
    "\U000e0001",
]

spm_text = st.lists(st.one_of(st.sampled_from(SPM_BITS), S.piece), max_size=16).map("".join)


def hsettings(n: int):
    return settings(
        max_examples=n * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.mark.parametrize("name", SPM_MODELS)
@hsettings(120)
@given(texts=st.lists(st.one_of(spm_text, S.text, S.native_text), min_size=1, max_size=8))
def test_generated_strings(name: str, texts: list[str]) -> None:
    check(name, texts)


@pytest.mark.parametrize("name", SPM_MODELS)
def test_every_code_point(name: str) -> None:
    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    chunks = [cps[i : i + CHUNK] for i in range(0, len(cps), CHUNK)][::CHUNK_STRIDE]
    texts = []
    for chunk in chunks:
        chars = [chr(c) for c in chunk]
        texts += ["".join(chars), " ".join(chars)]
    check(name, texts)


@pytest.mark.parametrize("name", SPM_MODELS)
def test_decode_random_ids(name: str) -> None:
    ours, ref = pair(name)
    n = ref.get_piece_size()
    rng = random.Random(name)
    # Ids of every kind, the special ones (control, unknown, byte pieces: the low ids) often.
    low = list(range(min(n, 300)))
    for _ in range(300 * SCALE):
        ids = [rng.choice(low) if rng.random() < 0.5 else rng.randrange(n) for _ in range(12)]
        assert ours.decode(ids) == ref.decode(ids), f"{name}: decode {ids}"
    for bad in ([n], [0, n + 5]):
        with pytest.raises(IndexError):
            ref.decode(bad)
        with pytest.raises(ValueError, match="out of range"):
            ours.decode(bad)


@pytest.mark.parametrize("name", SPM_MODELS)
def test_vocabulary(name: str) -> None:
    ours, ref = pair(name)
    n = ref.get_piece_size()
    assert ours.get_vocab_size() == n
    for i in range(n):
        piece = ref.id_to_piece(i)
        assert ours.id_to_token(i) == piece
        assert ours.token_to_id(piece) == i


def test_loading_by_content_and_pickling(tmp_path) -> None:
    import tokenprism

    name = SPM_MODELS[0]
    src = spm_model(name)
    ours, ref = pair(name)
    text = "Hello  world, \u00e9t\u00e9 \U0001f600 42"
    want = ref.encode(text)
    # No .model name: found by its contents.
    other = tmp_path / "tokenizer.bin"
    shutil.copyfile(src, other)
    assert tokenprism.Tokenizer.from_file(str(other)).encode(text).ids == want
    assert tokenprism.Tokenizer.from_sentencepiece_file(str(other)).encode(text).ids == want
    with open(src, "rb") as f:
        data = f.read()
    assert tokenprism.Tokenizer.from_sentencepiece_bytes(data).encode(text).ids == want
    assert pickle.loads(pickle.dumps(ours)).encode(text).ids == want
    # A broken file is an error that says so.
    with pytest.raises(ValueError, match="SentencePiece"):
        tokenprism.Tokenizer.from_sentencepiece_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("model_type", ["word", "char"])
def test_unsupported_model_types_are_refused(tmp_path, model_type: str) -> None:
    import tokenprism

    text = tmp_path / "train.txt"
    text.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 20, encoding="utf-8")
    prefix = tmp_path / "m"
    sentencepiece().SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(prefix),
        model_type=model_type,
        vocab_size=10,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    with pytest.raises(ValueError, match="trainer_spec.model_type"):
        tokenprism.Tokenizer.from_file(f"{prefix}.model")


@pytest.mark.parametrize("name", ["t5", "bpe-bytes"])
def test_damaged_files_load_or_fail_cleanly(name: str) -> None:
    """Truncated and corrupted model bytes: a ValueError, or a tokenizer that encodes and
    decodes (a flipped score or char is still a model), never a crash."""
    import tokenprism

    with open(spm_model(name), "rb") as f:
        data = f.read()
    rng = random.Random(name)
    for i in range(100 * SCALE):
        b = bytearray(data)
        if i % 3 == 0:
            b = b[: rng.randrange(len(b))]
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            t = tokenprism.Tokenizer.from_sentencepiece_bytes(bytes(b))
        except ValueError:
            continue
        ids = t.encode_ids("Hello wörld 😀 \u3000 12")
        t.decode(ids)
