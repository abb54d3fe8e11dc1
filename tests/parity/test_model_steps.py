"""What the Tokenize tab's model step lays open for one pre-token, at the Python level:
`Tokenizer.wordpiece_steps` (WordPiece's longest-match-first search) and
`Tokenizer.merge_trace` (BPE's merges), on the words the reference's pipeline hands the model
for corpus lines and on random strings.

- WordPiece (bert-base-uncased): the lookups are those of a brute-force longest-match search
  over the file's vocabulary, computed here, and the matches (or the unk token) are
  tokenizers 0.23.3's model tokens for the word.
- BPE (the byte-level tokenizer.json files): each merge's rank is the index of its pair in
  the file's merges list, each step joins the pair its rank names, and the parts after the
  last merge are tokenizers 0.23.3's model tokens for the word; for the .tiktoken files the
  merged parts are tiktoken 0.14.0's tokens and each merged token's id is its tiktoken rank.
- SentencePiece's BPE (.model files, no merges list): each step joins the adjacent pair whose
  concatenation is the highest-scoring piece in sentencepiece 0.2.3's own scores (the
  leftmost of a tie), its rank counts the pieces scoring higher, and the ids are
  sentencepiece's.
"""

from __future__ import annotations

import json
import random

import pytest

from parity import gpt2_byte_chars, longest_match_search
from paths import (
    BPE_JSON_FILES,
    CORPORA,
    bert_json,
    bpe_dir,
    bpe_json,
    corpus,
    reference,
    tiktoken_module,
)

# Corpus lines read per corpus; every word of each is checked.
LINES = 60
RANDOM_WORDS = 400
# Letters, accents, CJK, an emoji, punctuation: long matches, misses and unk words.
ALPHABET = "abcdefghijklmnopqrstuvwxyz" + "éüñçø" + "東京語" + "😀" + "-'.#"


def corpus_lines(lang: str) -> list[str]:
    with corpus(lang).open(encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(LINES), f) if line.strip()]


def random_words(seed: int) -> list[str]:
    rng = random.Random(seed)
    words = [
        "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 14)))
        for _ in range(RANDOM_WORDS)
    ]
    # More chars than max_input_chars_per_word (100): no lookup at all.
    return [*words, "a" * 101, "ab" * 50]


def pipeline_words(ref, line: str) -> list[str]:
    text = ref.normalizer.normalize_str(line) if ref.normalizer else line
    return [w for w, _ in ref.pre_tokenizer.pre_tokenize_str(text)]


# ------------------------------------------------------------------------------- WordPiece


@pytest.fixture(scope="module")
def bert():
    import tokenprism

    text = bert_json().read_text(encoding="utf-8")
    model = json.loads(text)["model"]
    return tokenprism.Tokenizer.from_str(text), reference().Tokenizer.from_str(text), model


def check_wordpiece(bert, words):
    ours, ref, model = bert
    vocab = model["vocab"]
    for word in words:
        got = ours.wordpiece_steps(word)
        lookups, matches = longest_match_search(
            vocab, word, model["max_input_chars_per_word"], model["continuing_subword_prefix"]
        )
        assert [
            (a["start"], a["end"], a["piece"], a["id"] is not None) for a in got["attempts"]
        ] == lookups, word
        assert all(a["id"] == vocab.get(a["piece"]) for a in got["attempts"]), word
        want = [t.value for t in ref.model.tokenize(word)]
        hits = [a["piece"] for a in got["attempts"] if a["id"] is not None]
        if matches is None:
            assert got["unk"] and want == [got["unk_token"]] == [model["unk_token"]], word
            assert got["unk_id"] == vocab[model["unk_token"]], word
            assert got["too_long"] == (len(word) > model["max_input_chars_per_word"]), word
        else:
            assert not got["unk"] and hits == matches == want, word


@pytest.mark.parametrize("lang", CORPORA)
def test_wordpiece_search_on_corpus_words(bert, lang):
    ref = bert[1]
    words = [w for line in corpus_lines(lang) for w in pipeline_words(ref, line)]
    assert words
    check_wordpiece(bert, words)


def test_wordpiece_search_on_random_words(bert):
    check_wordpiece(bert, random_words(1))


def test_wordpiece_steps_refuse_other_models_and_added_tokens(bert):
    import tokenprism

    with pytest.raises(ValueError):
        bert[0].wordpiece_steps("[CLS]")
    gpt2 = tokenprism.Tokenizer.from_file(str(bpe_json("gpt2")))
    with pytest.raises(ValueError):
        gpt2.wordpiece_steps("hello")


# ------------------------------------------------------------------------------------- BPE


def check_merges(ours, words, merge_rank, want_tokens):
    """Each word's merge trace: ranks name the pair joined, the parts end as `want_tokens`."""
    for word in words:
        t = ours.merge_trace(word)
        names = t["tokens"]
        parts = list(names[: len(t["initial"])])
        n0 = len(parts)
        for k, s in enumerate(t["steps"]):
            i = s["index"]
            assert merge_rank(parts[i], parts[i + 1], names[n0 + k]) == s["rank"], word
            parts[i : i + 2] = [names[n0 + k]]
        want = want_tokens(word)
        if t["whole_token"] is None:
            assert parts == want, word
        assert [ours.id_to_token(i) for i in t["ids"]] == want, word


@pytest.mark.parametrize("name", BPE_JSON_FILES)
def test_bpe_merges_follow_the_merges_list(name):
    import tokenprism

    text = bpe_json(name).read_text(encoding="utf-8")
    model = json.loads(text)["model"]
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    # A pair listed twice has its later index.
    rank = {pair: i for i, pair in enumerate(merges)}
    ours = tokenprism.Tokenizer.from_str(text)
    ref = reference().Tokenizer.from_str(text)
    words = [
        w for lang in CORPORA for line in corpus_lines(lang) for w in pipeline_words(ref, line)
    ]
    words += [w for s in random_words(2) for w in pipeline_words(ref, s)]
    added = {t.content for t in ref.get_added_tokens_decoder().values()}
    words = [w for w in dict.fromkeys(words) if w not in added]

    def merge_rank(a, b, merged):
        assert a + b == merged
        return rank[(a, b)]

    check_merges(ours, words, merge_rank, lambda w: [t.value for t in ref.model.tokenize(w)])


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_bpe_merges_of_tiktoken_files(name):
    import tokenprism

    enc = tiktoken_module().get_encoding(name)
    ours = tokenprism.Tokenizer.from_file(str(bpe_dir() / f"{name}.tiktoken"))
    byte_of = {c: b for b, c in gpt2_byte_chars().items()}
    raw = lambda token: bytes(byte_of[c] for c in token)  # noqa: E731
    lines = [line for lang in CORPORA for line in corpus_lines(lang)]
    words = [w for line in lines + random_words(3) for w in dict.fromkeys(_pieces(ours, line))]

    def merge_rank(a, b, merged):
        # A token's id is its tiktoken rank, and a merge's rank orders as the merged token's.
        assert raw(a) + raw(b) == raw(merged)
        return enc.encode_single_token(raw(merged)) - 256

    def want(word):
        ids = enc.encode_ordinary(raw(word).decode("utf-8", "surrogateescape"))
        return [ours.id_to_token(i) for i in ids]

    words = [w for w in words if w not in enc.special_tokens_set and _whole_utf8(raw(w))]
    check_merges(ours, words, merge_rank, want)


def test_traces_take_pieces_up_to_the_limit():
    """merge_trace and trace_piece share one length limit: the longest piece traces to the
    reference's ids, one byte more is refused with the same message."""
    import re

    import tokenprism

    path = str(bpe_json("gpt2"))
    ours, bpe = tokenprism.Tokenizer.from_file(path), tokenprism.BpeTokenizer.from_file(path)
    with pytest.raises(ValueError) as too_long:
        bpe.trace_piece("a" * 100_000)
    limit = int(re.search(r"at most (\d+) bytes", str(too_long.value))[1])
    word = "a" * limit
    want = [t.id for t in reference().Tokenizer.from_file(path).model.tokenize(word)]
    assert ours.merge_trace(word)["ids"] == want
    assert bpe.trace_piece(word)["ids"] == want
    for trace in (ours.merge_trace, bpe.trace_piece):
        with pytest.raises(ValueError, match=f"at most {limit} bytes, this one has {limit + 1}"):
            trace(word + "a")


def _pieces(ours, line: str) -> list[str]:
    return [p["text"] for p in ours.trace(line)["pre_tokens"]]


def _whole_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# --------------------------------------------------------------------- SentencePiece's BPE

SPM_BPE = ("bpe", "bpe-bytes", "bpe-code", "bpe-suffix", "mistral-v1")


@pytest.mark.parametrize("name", SPM_BPE)
def test_sentencepiece_bpe_merges_the_highest_scoring_pair(name):
    """Each step joins the adjacent pair whose concatenation is the highest-scoring piece
    (the leftmost of a tie), found here from sentencepiece 0.2.3's own pieces and scores; the
    rank is the number of pieces that score higher; the ids are sentencepiece's."""
    import sentencepiece

    import tokenprism
    from paths import spm_model

    path = spm_model(name)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    ours = tokenprism.Tokenizer.from_file(str(path))
    n = sp.get_piece_size()
    # What a merge may make: normal and unused pieces (control, unknown and byte ones never).
    mergeable = {
        sp.id_to_piece(i): i
        for i in range(n)
        if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i))
    }
    scores = sorted((sp.get_score(i) for i in mergeable.values()), reverse=True)
    lines = [line for lang in CORPORA for line in corpus_lines(lang)] + random_words(4)
    unk = sp.unk_id()
    checked = 0
    for line in lines:
        for word in dict.fromkeys(_pieces(ours, line)):
            t = ours.merge_trace(word)
            names = t["tokens"]
            parts = list(names[: len(t["initial"])])
            if unk in t["initial"]:
                # A char that is no piece has no text to join here; its word is still sentencepiece's.
                parts = None
            for k, s in enumerate(t["steps"]):
                if parts is None:
                    break
                pairs = [
                    (sp.get_score(mergeable[a + b]), -i)
                    for i, (a, b) in enumerate(zip(parts, parts[1:]))
                    if a + b in mergeable
                ]
                score, neg_i = max(pairs)
                assert s["index"] == -neg_i, (name, word, k)
                assert names[len(t["initial"]) + k] == parts[-neg_i] + parts[-neg_i + 1]
                assert s["rank"] == sum(1 for x in scores if x > score), (name, word, k)
                parts[-neg_i : -neg_i + 2] = [parts[-neg_i] + parts[-neg_i + 1]]
            if parts is not None:
                # No pair left to join.
                assert not [a + b for a, b in zip(parts, parts[1:]) if a + b in mergeable], word
                checked += 1
        assert ours.encode(line, add_special_tokens=False).ids == sp.encode(line), (name, line)
    assert checked > 100, checked
