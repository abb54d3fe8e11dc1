"""The Unigram lattice (`Unigram.lattice`, `Tokenizer.lattice`: the page's Unigram model step)
against tokenizers 0.23.3 and a brute-force scan of each file's vocabulary.

For the Unigram tokenizer.json files of tests/parity/test_unigram.py (T5 and XLM-R style, one
with byte fallback, and mon-tokenizer's), on the words the pipeline hands the model for corpus
lines and on generated words:

- the tokens on the lattice's best path are the reference model's tokens for that word (ids,
  texts, spans), and the path's nodes tile the word, a run of unk-id nodes giving the span of
  one fused unknown;
- the lattice's nodes are exactly every vocabulary piece that occurs at each char (its last id
  when listed twice, with the file's score), plus an unknown node (the lowest score minus 10)
  at each char that starts no one-char piece.

The SentencePiece `.model` files beside the converted ones (the whole text is one piece there)
give sentencepiece 0.2.3's ids on the lattice's path.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as S
from paths import (
    CORPORA,
    UNIGRAM_FILES,
    UNIGRAM_TRAINED,
    bert_json,
    corpus,
    reference,
    unigram_json,
    unigram_spm,
)

# Corpus lines read per corpus and file; every word of each is checked.
LINES = 150
# Every node of these words is listed: no word here comes near it.
MAX_NODES = 100_000


class File:
    """One tokenizer file: the reference's tokenizer, ours, and its vocabulary by piece."""

    def __init__(self, name: str):
        import tokenprism

        text = unigram_json(name).read_text(encoding="utf-8")
        model = json.loads(text)["model"]
        self.ref = reference().Tokenizer.from_str(text)
        self.ours = tokenprism.Tokenizer.from_str(text)
        self.model = tokenprism.Unigram.from_str(json.dumps(model))
        # The scores as the reference reads them: its JSON parser can be a last bit off
        # Python's (-10.098767280578613 in t5's file reads as ...612), and ours reads as it does.
        ref_model = json.loads(self.ref.to_str())["model"]
        self.vocab = [(p, float(s)) for p, s in ref_model["vocab"]]
        self.unk_id = model["unk_id"]
        # A piece listed twice is found with its last id; the empty piece is never found.
        self.ids = {p: i for i, (p, _) in enumerate(self.vocab) if p}
        self.longest = max(len(p) for p in self.ids)
        self.unk_score = min(s for _, s in self.vocab) - 10.0
        self.added = {t.content for t in self.ref.get_added_tokens_decoder().values()}

    def words(self, line: str) -> list[str]:
        """What the reference's pipeline hands the model for `line`."""
        text = self.ref.normalizer.normalize_str(line) if self.ref.normalizer else line
        if self.ref.pre_tokenizer is None:
            return [text]
        return [w for w, _ in self.ref.pre_tokenizer.pre_tokenize_str(text)]

    def brute_force_nodes(self, word: str) -> set[tuple]:
        """(start, end, id, piece, score, unknown) of every piece at every char, by scanning."""
        nodes = set()
        for i in range(len(word)):
            for j in range(i + 1, min(len(word), i + self.longest) + 1):
                i_d = self.ids.get(word[i:j])
                if i_d is not None:
                    nodes.add((i, j, i_d, word[i:j], self.vocab[i_d][1], False))
            if word[i] not in self.ids:
                nodes.add((i, i + 1, self.unk_id, word[i], self.unk_score, True))
        return nodes


_FILES: dict[str, File] = {}


def get_file(name: str) -> File:
    if name not in _FILES:
        _FILES[name] = File(name)
    return _FILES[name]


def char_span(word: str, start: int, end: int) -> tuple[int, int]:
    """Byte offsets in `word`'s UTF-8 as char offsets."""
    data = word.encode("utf-8")
    return len(data[:start].decode("utf-8")), len(data[:end].decode("utf-8"))


def check_word(f: File, word: str) -> None:
    lattice = f.model.lattice(word, MAX_NODES)
    if word in f.added:
        # The pipeline cuts an added token out before the model: the Tokenizer refuses it.
        with pytest.raises(ValueError, match="added token"):
            f.ours.lattice(word, MAX_NODES)
    else:
        assert lattice == f.ours.lattice(word, MAX_NODES), f"{word!r}: the Tokenizer's differs"
    assert not lattice["truncated"] and lattice["chars"] == len(word)
    want = [(t.id, t.value, char_span(word, *t.offsets)) for t in f.ref.model.tokenize(word)]
    got = [(t["id"], t["token"], (t["start"], t["end"])) for t in lattice["tokens"]]
    assert got == want, f"{word!r}: path {got}, reference {want}"
    best = [n for n in lattice["nodes"] if n["best"]]
    ends = [n["end"] for n in best]
    assert [n["start"] for n in best] == [0, *ends][: len(best)], word
    assert ([0, *ends])[-1] == len(word), word
    # The path's spans once its unk-id runs are fused: the reference's distinct spans.
    spans: list[list[int]] = []
    for k, n in enumerate(best):
        if n["id"] == f.unk_id and k > 0 and best[k - 1]["id"] == f.unk_id:
            spans[-1][1] = n["end"]
        else:
            spans.append([n["start"], n["end"]])
    ref_spans = list(dict.fromkeys(span for _, _, span in want))
    assert [tuple(s) for s in spans] == ref_spans, f"{word!r}: path {spans}, reference {ref_spans}"
    assert lattice["score"] == pytest.approx(sum(n["score"] for n in best), abs=1e-9)
    listed = {
        (n["start"], n["end"], n["id"], n["piece"], n["score"], n["unknown"])
        for n in lattice["nodes"]
    }
    assert len(listed) == len(lattice["nodes"]), f"{word!r}: a node listed twice"
    assert listed == f.brute_force_nodes(word), f"{word!r}: nodes differ from the scan"


def corpus_lines(lang: str) -> list[str]:
    with open(corpus(lang), encoding="utf-8") as fh:
        return [line for _, line in zip(range(LINES), fh)]


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_corpus_words(name):
    """Every word of the first lines of each corpus, as the pipeline hands it to the model."""
    f = get_file(name)
    words = {w for lang in CORPORA for line in corpus_lines(lang) for w in f.words(line)}
    for w in sorted(words):
        check_word(f, w)
    assert len(words) > 1_000, len(words)


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_random_words(name):
    """Words drawn at random from the file's own pieces, its chars and any code point: dense
    lattices, unknown runs (bytes with byte fallback) and the unk and byte pieces as text."""
    f = get_file(name)
    rng = random.Random(f"lattice {name}")
    pieces = [p for p in f.ids if len(p) <= 8]
    chars = sorted({c for p in pieces for c in p})
    odd = ["▁", "<unk>", "<0x41>", "\0", "日本", "😀", "\u0301"]
    for t in sorted(f.added):
        check_word(f, t)
    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(1, 6)):
            pick = rng.random()
            if pick < 0.5:
                parts.append(rng.choice(pieces))
            elif pick < 0.75:
                parts.append(rng.choice(chars))
            elif pick < 0.9:
                parts.append(rng.choice(odd))
            else:
                parts.append(
                    chr(rng.choice([rng.randint(0x20, 0xD7FF), rng.randint(0xE000, 0x10FFFF)]))
                )
        check_word(f, "".join(parts))


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_generated_words(name):
    f = get_file(name)

    @settings(
        max_examples=300,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.one_of(S.piece, S.text, S.native_text))
    def check(word):
        check_word(f, word)

    check()


def test_long_pieces_are_cut_between_starts():
    """A long word's nodes stop at a char with at most `max_nodes` listed; the tokens that
    start before it are the reference's first ones."""
    f = get_file("t5")
    word = "▁" + "internationalization" * 40
    lattice = f.model.lattice(word, 200)
    assert lattice["truncated"] and 0 < lattice["shown_chars"] < len(word)
    assert lattice["chars"] == len(word)
    assert len(lattice["nodes"]) <= 200
    full = f.brute_force_nodes(word)
    cut = {t for t in full if t[0] < lattice["shown_chars"]}
    listed = {
        (n["start"], n["end"], n["id"], n["piece"], n["score"], n["unknown"])
        for n in lattice["nodes"]
    }
    assert listed == cut
    want = [(t.id, t.value) for t in f.ref.model.tokenize(word)]
    got = [(t["id"], t["token"]) for t in lattice["tokens"]]
    assert got == want[: len(got)] and len(got) < len(want)
    assert all(t["start"] < lattice["shown_chars"] for t in lattice["tokens"])


@pytest.mark.parametrize("name", UNIGRAM_TRAINED)
def test_sentencepiece_models_lattice_path_is_sentencepieces(name):
    """A SentencePiece .model file's Unigram sees the whole normalized text as one piece: its
    lattice's tokens are sentencepiece 0.2.3's ids for the line, and the best path tiles it."""
    import sentencepiece

    import tokenprism

    assert sentencepiece.__version__ == "0.2.3", sentencepiece.__version__
    path = str(unigram_spm(name))
    ours = tokenprism.Tokenizer.from_sentencepiece_file(path)
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    lines = [line.rstrip("\n") for lang in CORPORA for line in corpus_lines(lang)[:60]]
    for line in [*lines, "Hello wörld, internationalization! 東京 😀"]:
        pieces = [p["text"] for p in ours.trace(line)["pre_tokens"]]
        assert len(pieces) <= 1, line
        lattice = ours.lattice(pieces[0], MAX_NODES) if pieces else None
        got = [t["id"] for t in lattice["tokens"]] if lattice else []
        assert got == sp.encode(line), line
        if lattice:
            best = [n for n in lattice["nodes"] if n["best"]]
            assert [n["start"] for n in best] == [0, *(n["end"] for n in best[:-1])], line
            assert best[-1]["end"] == len(pieces[0]), line


def test_other_models_have_no_lattice():
    import tokenprism

    with pytest.raises(ValueError, match="added token"):
        get_file("t5").ours.lattice("</s>")
    with pytest.raises(ValueError, match="only Unigram"):
        tokenprism.Tokenizer.from_file(str(bert_json())).lattice("hello")
