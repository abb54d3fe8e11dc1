"""BPE training (tokenprism.train_bpe) against the textbook chapter on tokenization and tokenizers.

- The chapter's worked example (corpus and vocab_size=20, see /work/shared/REFERENCE.md):
  its 11 merges with their counts, and its three tokenize() results.
- Random corpora (hypothesis, small alphabets so that counts tie often, "_" in the text, odd
  whitespace): the merges equal those of the chapter's own Python code (section 1.3,
  transcribed below and run here), and so do the tokenize() results.
- Byte-level: the exported tokenizer.json loads in tokenizers 0.23.3 and gives our ids on
  slices of every development corpus it was not trained on.
- Progress is reported after each merge, a callback can stop training, its exceptions
  propagate, and bad input raises.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenprism

# The textbook chapter's code (section 1.3): one copy, in tests/chapter.py.
from chapter import CHAPTER_CORPUS, chapter_tokenize, chapter_train_bpe
from paths import CORPORA, corpus, reference

# The textbook chapter's merges and counts (its worked example, as REFERENCE.md gives it).
CHAPTER_MERGES = [
    ("и", "з", 12),
    ("н", "из", 10),
    ("низ", "_", 5),
    ("к", "о", 5),
    ("ко", "_", 5),
    ("низ", "ко_", 3),
    ("б", "л", 2),
    ("бл", "из", 2),
    ("близ", "ко_", 2),
    ("низ", "и", 2),
    ("низи", "н", 2),
]


def test_chapter_worked_example():
    r = tokenprism.train_bpe(CHAPTER_CORPUS, 20)
    assert [(a, b, c) for (a, b), c in zip(r.merges, r.counts)] == CHAPTER_MERGES
    merges, counts = chapter_train_bpe(CHAPTER_CORPUS, 20)
    assert list(zip(merges, counts)) == list(zip(r.merges, r.counts))
    assert r.initial_vocab_size == 9 and len(r.vocab) == 20 and not r.cancelled and not r.byte_level
    assert r.tokenize("низко") == ["низко_"]
    assert r.tokenize("низменность") == ["низ", "м", "е", "н", "н", "о", "с", "т", "ь", "_"]
    assert r.tokenize("низина") == ["низин", "а", "_"]
    assert set(r.vocab) == {c for w in CHAPTER_CORPUS.split() for c in w} | {"_"} | {
        a + b for a, b in r.merges
    }
    # a list of texts is the same corpus as their concatenation with whitespace
    assert tokenprism.train_bpe(CHAPTER_CORPUS.split(" "), 20).merges == r.merges


# Small alphabets make ties common; "_" is the end-of-word marker too; the separators
# include Python-only whitespace (U+001C..U+001F) and Unicode spaces.
ALPHABET = st.sampled_from(["ab", "abc", "aб_", "ab_c", "низко", "xyzw", "aaab"])
SEPARATORS = st.sampled_from(
    [" ", " ", " ", "\n", "\t", "\x1c", "\x1f", "\xa0", "\u3000", "  ", "\x85"]
)


@st.composite
def corpora(draw):
    alphabet = draw(ALPHABET)
    words = draw(st.lists(st.text(alphabet, min_size=1, max_size=8), max_size=25))
    text = "".join(w + draw(SEPARATORS) for w in words)
    return text, draw(st.integers(0, 45))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.text("abcнизкоб_", max_size=10))
def test_random_corpora_match_the_chapters_code(case, word):
    text, vocab_size = case
    merges, counts = chapter_train_bpe(text, vocab_size)
    r = tokenprism.train_bpe(text, vocab_size)
    assert r.merges == merges
    assert r.counts == counts
    assert r.tokenize(word) == chapter_tokenize(word, merges)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            st.lists(
                st.sampled_from(["ab", "ba", "abab", "aab", "bba", "ababab", "c"]),
                min_size=1,
                max_size=40,
            ),
            st.integers(0, 30),
        )
    )
)
def test_many_ties(case):
    words, vocab_size = case
    text = " ".join(words)
    assert tokenprism.train_bpe(text, vocab_size).merges == chapter_train_bpe(text, vocab_size)[0]


def _slices(lang: str, n: int, size: int) -> list[str]:
    data = corpus(lang).read_text(encoding="utf-8")
    step = len(data) // n
    return [data[i * step : i * step + size] for i in range(n)]


def test_byte_level_export_loads_in_tokenizers_and_gives_our_ids():
    ref = reference()
    train = [s for lang in CORPORA for s in _slices(lang, 4, 15_000)[:2]]
    r = tokenprism.train_bpe(train, 256 + 3000, byte_level=True)
    assert r.byte_level and len(r.vocab) == 256 + 3000 and len(r.merges) >= 3000
    text = r.to_tokenizer_json()
    theirs = ref.Tokenizer.from_str(text)
    ours = r.tokenizer()
    assert theirs.get_vocab_size() == ours.n_vocab == len(r.vocab)
    assert json.loads(text)["model"]["vocab"] == r.vocab
    total = 0
    for lang in CORPORA:
        for s in _slices(lang, 4, 40_000)[2:]:  # slices not trained on
            want = theirs.encode(s).ids
            assert ours.encode_ordinary(s) == want, lang
            assert ours.decode(want) == s
            total += len(want)
    assert total > 50_000
    # the learned merges do something: fewer tokens than bytes on text like the training text
    sample = _slices("en", 4, 40_000)[3]
    assert len(ours.encode_ordinary(sample)) < len(sample.encode()) / 2


def test_byte_level_tokenize_follows_the_merges():
    r = tokenprism.train_bpe(["hello hello hello world world"], 270, byte_level=True)
    # GPT-2's pre-tokens: "hello", " hello" x2, " world" x2 ("Ġ" spells the space)
    assert r.merges[0] in {("l", "l"), ("Ġ", "h"), ("e", "l"), ("h", "e")}
    inv = {i: t for t, i in r.vocab.items()}
    tok = r.tokenizer()
    for word in (" hello", "hello", " world", "héllo"):
        assert r.tokenize(word) == [inv[i] for i in tok.encode_ordinary(word)]
    assert r.tokenize(" hello") == ["Ġhello"]


def test_progress_is_reported_and_can_stop():
    seen = []
    r = tokenprism.train_bpe(
        CHAPTER_CORPUS, 20, progress=lambda done, pair, count: seen.append((done, pair, count))
    )
    assert seen == [(i + 1, m, c) for i, (m, c) in enumerate(zip(r.merges, r.counts))]
    assert len(seen) == 11 and not r.cancelled

    for stop in (False, "stop"):
        r = tokenprism.train_bpe(
            CHAPTER_CORPUS, 20, progress=lambda done, pair, count, s=stop: s if done == 3 else None
        )
        assert (
            r.cancelled
            and [(a, b, c) for (a, b), c in zip(r.merges, r.counts)] == CHAPTER_MERGES[:3]
        )

    class Boom(Exception):
        pass

    def boom(done, pair, count):
        if done == 2:
            raise Boom("stop here")

    with pytest.raises(Boom, match="stop here"):
        tokenprism.train_bpe(CHAPTER_CORPUS, 20, progress=boom)


def test_cancel_a_long_byte_level_run():
    text = corpus("en").read_text(encoding="utf-8")[:300_000]
    calls = []
    r = tokenprism.train_bpe(
        text,
        256 + 5000,
        byte_level=True,
        progress=lambda done, pair, count: calls.append(done) or (done < 50),
    )
    assert r.cancelled and len(r.merges) == 50 and calls == list(range(1, 51))


def test_min_frequency():
    r = tokenprism.train_bpe(CHAPTER_CORPUS, 20, min_frequency=3)
    assert [(a, b, c) for (a, b), c in zip(r.merges, r.counts)] == CHAPTER_MERGES[:6]


def test_bad_input():
    with pytest.raises(ValueError, match="256"):
        tokenprism.train_bpe("abc", 100, byte_level=True)
    with pytest.raises(ValueError):
        tokenprism.train_bpe("abc", -1)
    with pytest.raises(TypeError):
        tokenprism.train_bpe(["abc", 5], 10)
    with pytest.raises(TypeError):
        tokenprism.train_bpe(5, 10)
    with pytest.raises(TypeError):
        tokenprism.train_bpe(b"abc", 10)
    with pytest.raises(ValueError, match="surrogate"):
        tokenprism.train_bpe("a\ud800b", 10)
    with pytest.raises(TypeError):
        tokenprism.train_bpe("abc", 10, progress=5)
    with pytest.raises(ValueError):
        tokenprism.train_bpe(CHAPTER_CORPUS, 20).to_tokenizer_json()
    with pytest.raises(TypeError):
        tokenprism.train_bpe(CHAPTER_CORPUS, 20).tokenize(3)
    # the chapter's code returns no merges for an empty corpus or a small vocab_size; so do we
    assert tokenprism.train_bpe("", 100).merges == [] == chapter_train_bpe("", 100)[0]
    assert tokenprism.train_bpe(CHAPTER_CORPUS, 5).merges == []
