"""The lists of ids the bindings build (crate/src/python.rs, IntCache): their ints are shared
between calls and tokenizers (on CPython 3.11, copies in one block owned by the module), so
they must behave as ordinary ints, stay valid after the tokenizer that made them is gone, and
keep correct reference counts. Expected ids come from tiktoken 0.14.0."""

from __future__ import annotations

import gc
import pickle
import sys

import tokenprism
from paths import bpe_dir, require, tiktoken_module

TEXT = "Hello world, the 42 quick brown foxes jumped over 1234567 lazy dogs. Привет, 世界! " * 20


def test_ids_outlive_their_tokenizer_and_behave_as_ints():
    require(bpe_dir() / "o200k_base.tiktoken")
    want = tiktoken_module().get_encoding("o200k_base").encode_ordinary(TEXT)
    tok = tokenprism.BpeTokenizer.from_tiktoken_file(
        str(bpe_dir() / "o200k_base.tiktoken"), "o200k_base"
    )
    ids = tok.encode_ordinary(TEXT)
    big = [i for i in ids if i > 256]
    assert big and any(i <= 256 for i in ids)
    del tok
    gc.collect()
    # A second tokenizer of another size shares the block (or has its own ints).
    other = tokenprism.BpeTokenizer.from_tiktoken_file(
        str(bpe_dir() / "cl100k_base.tiktoken"), "cl100k_base"
    )
    assert ids == want
    for i, w in zip(ids, want):
        assert type(i) is int and i == w and hash(i) == hash(w) and str(i) == str(w)
        assert i + 1 == w + 1 and i * 3 == w * 3 and (i < w + 1)
    assert pickle.loads(pickle.dumps(ids)) == want
    assert sorted(set(ids)) == sorted(set(want))
    assert other.encode_ordinary(TEXT) == tiktoken_module().get_encoding(
        "cl100k_base"
    ).encode_ordinary(TEXT)


def test_reference_counts_balance():
    require(bpe_dir() / "o200k_base.tiktoken")
    tok = tokenprism.BpeTokenizer.from_tiktoken_file(
        str(bpe_dir() / "o200k_base.tiktoken"), "o200k_base"
    )
    first = tok.encode_ordinary(TEXT)
    probe = max(first)  # an id above the small ints
    base = sys.getrefcount(probe)
    lists = [tok.encode_ordinary(TEXT) for _ in range(50)]
    n = sum(lst.count(probe) for lst in lists)
    assert n >= 50
    assert sys.getrefcount(probe) == base + n
    del lists
    gc.collect()
    assert sys.getrefcount(probe) == base
    assert tok.encode_ordinary("") == [] and tok.encode("") == []
