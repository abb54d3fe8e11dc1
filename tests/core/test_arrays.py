"""Ids as numpy arrays: Tokenizer.encode_ids / encode_batch_ids with as_array=True, and
BpeTokenizer's encode_to_numpy, encode_ordinary_to_numpy, encode_batch_to_numpy and
encode_ordinary_batch_to_numpy. The arrays own the Rust buffer (no copy), so besides their
values (the references' ids: tokenizers 0.23.3, tiktoken 0.14.0) the tests check that they
outlive their tokenizer, are freed with the last array, and that numpy stays optional."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import tokenprism
from paths import (
    bert_json,
    bert_pair,
    bpe_dir,
    corpus,
    reference,
    require,
    tiktoken_module,
    unigram_json,
)


def corpus_texts() -> list[str]:
    """Slices of several scripts and lengths, an empty text, a lone space and emoji."""
    out = ["", " ", "Hello, world! 🤗 <|endoftext|> [CLS] don't"]
    for lang, sizes in (
        ("en", (7, 300, 5000)),
        ("ru", (40, 3000)),
        ("zh", (90,)),
        ("code", (2500,)),
    ):
        text = corpus(lang).read_text(encoding="utf-8")
        start = len(text) // 3
        out += [text[start : start + n] for n in sizes]
    return out


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return corpus_texts()


@pytest.fixture(scope="module")
def long_text() -> str:
    """About 1 MB of English: one call well past every buffer and threshold."""
    return corpus("en").read_text(encoding="utf-8")[:1_000_000]


def assert_ids_array(arr, want: list[int]) -> None:
    assert isinstance(arr, np.ndarray)
    assert arr.dtype == np.uint32 and arr.ndim == 1
    assert arr.tolist() == want


def assert_flat(result, want: list[list[int]]) -> None:
    """(ids, offsets) of a batch against the reference's list of ids per text."""
    flat, offsets = result
    assert flat.dtype == np.uint32 and flat.ndim == 1
    assert offsets.dtype == np.int64 and offsets.ndim == 1
    assert len(offsets) == len(want) + 1
    assert offsets[0] == 0 and offsets[-1] == len(flat)
    assert (np.diff(offsets) >= 0).all()
    for i, w in enumerate(want):
        assert flat[offsets[i] : offsets[i + 1]].tolist() == w, f"text {i}"


# ----------------------------------------------------------------------- Hugging Face shape


@pytest.fixture(scope="module", params=["bert", "unigram-t5", "unigram-xlmr"])
def hf(request):
    """(ours, reference) for tokenizer.json files of WordPiece and Unigram models (byte-level
    BPE files load as BpeTokenizer, below), truncation and padding off."""
    if request.param == "bert":
        return bert_pair()
    path = str(unigram_json(request.param.removeprefix("unigram-")))
    pair = tokenprism.Tokenizer.from_file(path), reference().Tokenizer.from_file(path)
    for t in pair:
        t.no_padding()
        t.no_truncation()
    return pair


def test_tokenizer_arrays_equal_lists_and_reference(hf, texts, long_text):
    ours, ref = hf
    for add in (False, True):
        want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add)]
        for t, w in zip(texts, want):
            assert ours.encode_ids(t, add_special_tokens=add) == w
            assert_ids_array(ours.encode_ids(t, add_special_tokens=add, as_array=True), w)
        for threads in (1, 3):
            assert ours.encode_batch_ids(texts, add, num_threads=threads) == want
            assert_flat(ours.encode_batch_ids(texts, add, num_threads=threads, as_array=True), want)
    long_want = ref.encode(long_text, add_special_tokens=False).ids
    assert_ids_array(ours.encode_ids(long_text, False, as_array=True), long_want)
    assert_flat(ours.encode_batch_ids([long_text], False, as_array=True), [long_want])


def test_tokenizer_batch_ids_pad_as_encode_batch():
    """Padding to the longest of the batch: encode_batch_ids pads as encode_batch does."""
    ours, ref = bert_pair()
    texts = corpus_texts()
    for t in (ours, ref):
        t.enable_padding(pad_to_multiple_of=8)
        t.enable_truncation(max_length=64)
    want = [e.ids for e in ref.encode_batch(texts)]
    assert len({len(w) for w in want}) == 1
    assert ours.encode_batch_ids(texts) == want
    assert_flat(ours.encode_batch_ids(texts, as_array=True, num_threads=2), want)
    assert_ids_array(ours.encode_ids(texts[5], as_array=True), ref.encode(texts[5]).ids)


def test_tokenizer_empty_and_single_batches():
    ours, ref = bert_pair()
    flat, offsets = ours.encode_batch_ids([], as_array=True)
    assert flat.dtype == np.uint32 and len(flat) == 0
    assert offsets.dtype == np.int64 and offsets.tolist() == [0]
    assert ours.encode_batch_ids([]) == []
    assert_ids_array(ours.encode_ids("", add_special_tokens=False, as_array=True), [])
    assert_flat(ours.encode_batch_ids([""], False, as_array=True), [[]])
    assert_flat(ours.encode_batch_ids(["hello"], as_array=True), [ref.encode("hello").ids])


def test_tokenizer_batch_ids_refuse_what_encode_batch_refuses():
    ours, _ = bert_pair()
    with pytest.raises(TypeError):
        ours.encode_batch_ids(["ok", 3], as_array=True)
    with pytest.raises(ValueError, match="surrogate"):
        ours.encode_batch_ids(["ok", "\ud800"], as_array=True)
    with pytest.raises(TypeError):
        ours.encode_ids("ok", True, True)  # as_array is keyword-only


# ----------------------------------------------------------------------- tiktoken shape

BPE_ENCODINGS = ("o200k_base", "cl100k_base", "r50k_base")


def bpe_pair(name: str):
    ours = tokenprism.BpeTokenizer.from_tiktoken_file(
        str(require(bpe_dir() / f"{name}.tiktoken")), name
    )
    return ours, tiktoken_module().get_encoding(name)


@pytest.mark.parametrize("name", BPE_ENCODINGS)
def test_bpe_arrays_equal_lists_and_tiktoken(name, texts, long_text):
    ours, ref = bpe_pair(name)
    want = ref.encode_ordinary_batch(texts)
    for t, w in zip(texts, want):
        assert ours.encode_ordinary(t) == w
        assert_ids_array(ours.encode_ordinary_to_numpy(t), w)
        assert_ids_array(ours.encode_to_numpy(t, disallowed_special=()), w)
        assert_ids_array(
            ours.encode_to_numpy(t, disallowed_special=()),
            ref.encode_to_numpy(t, disallowed_special=()).tolist(),
        )
    special = [ref.encode(t, allowed_special="all") for t in texts]
    assert any(s != w for s, w in zip(special, want))  # a special token was cut out
    for threads in (1, 3):
        assert ours.encode_ordinary_batch(texts, num_threads=threads) == want
        assert_flat(ours.encode_ordinary_batch_to_numpy(texts, num_threads=threads), want)
        assert_flat(
            ours.encode_batch_to_numpy(texts, num_threads=threads, allowed_special="all"), special
        )
        assert ours.encode_batch(texts, num_threads=threads, allowed_special="all") == special
    for t, s in zip(texts, special):
        assert_ids_array(ours.encode_to_numpy(t, allowed_special="all"), s)
    long_want = ref.encode_ordinary(long_text)
    assert_ids_array(ours.encode_ordinary_to_numpy(long_text), long_want)
    assert_flat(ours.encode_ordinary_batch_to_numpy([long_text]), [long_want])
    assert_flat(
        ours.encode_batch_to_numpy([long_text, "", long_text[:10]], num_threads=2),
        [long_want, [], ref.encode(long_text[:10])],
    )


def test_bpe_disallowed_special_raises_in_arrays_too():
    ours, _ = bpe_pair("cl100k_base")
    with pytest.raises(ValueError):
        ours.encode_to_numpy("a <|endoftext|>")
    with pytest.raises(ValueError):
        ours.encode_batch_to_numpy(["fine", "a <|endoftext|>"], num_threads=2)
    assert_ids_array(
        ours.encode_ordinary_to_numpy("a <|endoftext|>"), ours.encode_ordinary("a <|endoftext|>")
    )


def test_bpe_empty_and_single_batches():
    ours, ref = bpe_pair("o200k_base")
    for call in (ours.encode_batch_to_numpy, ours.encode_ordinary_batch_to_numpy):
        flat, offsets = call([])
        assert flat.dtype == np.uint32 and len(flat) == 0
        assert offsets.dtype == np.int64 and offsets.tolist() == [0]
        assert_flat(call([""]), [[]])
        assert_flat(call(["hello world"]), [ref.encode("hello world")])
    assert_ids_array(ours.encode_to_numpy(""), [])
    assert_ids_array(ours.encode_ordinary_to_numpy(""), [])


def test_bpe_add_special_tokens_in_arrays():
    """Llama 3's post-processor puts <|begin_of_text|> first: as tokenizers 0.23.3 does."""
    path = require(bpe_dir() / "llama3.2" / "tokenizer.json")
    ours = tokenprism.BpeTokenizer.from_file(str(path))
    ref = reference().Tokenizer.from_file(str(path))
    texts = corpus_texts()[:6]
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)]
    assert_flat(ours.encode_batch_to_numpy(texts, add_special_tokens=True, num_threads=2), want)
    for t, w in zip(texts, want):
        assert_ids_array(ours.encode_to_numpy(t, add_special_tokens=True), w)
    assert ours.encode_batch(texts, add_special_tokens=True) == want


def test_trained_tokenizer_arrays():
    trained = tokenprism.train_bpe(["low lower lowest newer wider"] * 5, 300, byte_level=True)
    tok = trained.tokenizer()
    assert_ids_array(tok.encode_to_numpy("lower newest"), tok.encode("lower newest"))


# ----------------------------------------------------------------------- ownership and memory


def test_arrays_outlive_tokenizer_and_own_writable_buffers():
    ours, ref = bpe_pair("o200k_base")
    text = corpus("en").read_text(encoding="utf-8")[:20_000]
    want = ref.encode_ordinary(text)
    one = ours.encode_ordinary_to_numpy(text)
    flat, offsets = ours.encode_ordinary_batch_to_numpy([text, text])
    bert, bert_ref = bert_pair()
    b = bert.encode_ids(text, as_array=True)
    bflat, boffsets = bert.encode_batch_ids([text], as_array=True)
    del ours, bert
    gc.collect()
    # Reuse the freed memory, as a use after free would then show.
    junk = [bytes(4096) for _ in range(5000)]
    assert_ids_array(one, want)
    assert_flat((flat, offsets), [want, want])
    bwant = bert_ref.encode(text).ids
    assert_ids_array(b, bwant)
    assert_flat((bflat, boffsets), [bwant])
    del junk
    # The array's memory is the exporter's: writable, one element per id, not numpy's own.
    assert not one.flags.owndata and one.flags.writeable and one.flags.c_contiguous
    view = memoryview(one.base)
    assert (view.format, view.itemsize, view.shape, view.readonly) == ("I", 4, (len(want),), False)
    assert memoryview(offsets.base).format == "q"
    one[0] = 7
    assert one[0] == 7 and view[0] == 7
    other = one[10:20]
    del one, view
    gc.collect()
    assert other.tolist() == want[10:20]


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_dropped_arrays_free_their_buffers():
    """~400 MB of arrays made and dropped in turn: RSS stays flat (tracemalloc cannot see the
    buffers, they are Rust's)."""
    ours, _ = bpe_pair("o200k_base")
    bert, _ = bert_pair()
    text = " a" * 250_000  # 250,000 tokens: a 1 MB array per call

    def churn(n):
        for _ in range(n):
            a = ours.encode_ordinary_to_numpy(text)
            assert len(a) == 250_000
            flat, offsets = ours.encode_ordinary_batch_to_numpy([text, text], num_threads=2)
            assert offsets[-1] == 500_000
            b = bert.encode_ids(text, add_special_tokens=False, as_array=True)
            assert len(b) == 250_000
            del a, flat, offsets, b

    churn(5)
    gc.collect()
    before = rss_bytes()
    churn(100)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 64 * 2**20, f"RSS grew by {grown / 2**20:.0f} MB over 400 MB of arrays"


# ----------------------------------------------------------------------- numpy is optional


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    )


def test_import_does_not_load_numpy():
    r = run_python("import sys, tokenprism; print('numpy' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_without_numpy_lists_work_and_arrays_raise_import_error():
    o200k = str(require(bpe_dir() / "o200k_base.tiktoken"))
    bert = str(bert_json())
    code = f"""
import sys
sys.modules["numpy"] = None  # `import numpy` now fails
import tokenprism
bpe = tokenprism.BpeTokenizer.from_tiktoken_file({o200k!r}, "o200k_base")
bert = tokenprism.Tokenizer.from_file({bert!r})
assert bpe.encode_ordinary("hello world") == bpe.encode("hello world")
assert bert.encode_batch_ids(["hello"]) == [bert.encode_ids("hello")]
calls = [
    lambda: bpe.encode_to_numpy("hello"),
    lambda: bpe.encode_ordinary_to_numpy("hello"),
    lambda: bpe.encode_batch_to_numpy(["hello"]),
    lambda: bpe.encode_ordinary_batch_to_numpy(["hello"]),
    lambda: bert.encode_ids("hello", as_array=True),
    lambda: bert.encode_batch_ids(["hello"], as_array=True),
]
for call in calls:
    try:
        call()
    except ImportError as e:
        print(type(e).__name__, e)
    else:
        raise SystemExit("no ImportError")
"""
    r = run_python(code)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 6
    for line in lines:
        assert (
            line.startswith("ImportError ") and "need numpy" in line and "pip install numpy" in line
        )
