"""web/tabs/train/view.py (the Train tab's logic) and the exercise scripts, natively.

Expected values come from the textbook chapter's own code (tests/chapter.py), tokenizers
0.23.3 and tiktoken 0.14.0, run here:
- the chapter example's corpus, and merge_steps() ending where the chapter's tokenize() ends;
- byte-level spelling (GPT-2's byte alphabet) and merge_steps() against tokenizers loading the
  trained tokenizer.json;
- exercise 1 (scripts/exercises/russian_merges.py): the chapter's code's first 50 merges;
- exercise 2 (scripts/exercises/fertility.py): our token counts per tokenizer equal the references' on the
  parallel texts, the trained tokenizer's too;
- exercise 3: the indentation table from our tokens equals the one from the references' tokens.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fertility
import russian_merges
import tokenprism
import train_corpora
from chapter import CHAPTER_CORPUS, chapter_tokenize, chapter_train_bpe
from paths import data_dir, reference, require, tiktoken_module
from tabs.train import view as tv


def reference_spans(trained_json: str | None = None) -> dict:
    """name -> text -> [(start byte, end byte, text)] from tokenizers 0.23.3 and tiktoken."""
    tk = reference()
    out = {}
    bert = tk.Tokenizer.from_file(str(require(data_dir() / "bert-base-uncased" / "tokenizer.json")))
    bert.no_padding()
    bert.no_truncation()

    def bert_spans(text):
        enc = bert.encode(text, add_special_tokens=False)
        at = fertility.byte_offsets(text)
        return [(at[s], at[e], t) for t, (s, e) in zip(enc.tokens, enc.offsets)]

    out["bert-base-uncased"] = bert_spans

    def hf(tok):
        def spans(text):
            ids = tok.encode(text, add_special_tokens=False).ids
            return fertility.spans_from_bytes([tv.token_bytes(tok.id_to_token(i)) for i in ids])

        return spans

    for name in ("gpt2", "qwen3"):
        out[name] = hf(
            tk.Tokenizer.from_file(str(require(data_dir() / "bpe" / name / "tokenizer.json")))
        )
    tt = tiktoken_module()
    for name in ("cl100k_base", "o200k_base"):
        enc = tt.get_encoding(name)
        out[name] = lambda text, enc=enc: fertility.spans_from_bytes(
            [enc.decode_single_token_bytes(t) for t in enc.encode_ordinary(text)]
        )
    if trained_json is not None:
        out["trained"] = hf(tk.Tokenizer.from_str(trained_json))
    return out


def test_chapter_corpus_is_the_chapters():
    assert tv.CHAPTER_CORPUS == CHAPTER_CORPUS
    merges, counts = chapter_train_bpe(tv.CHAPTER_CORPUS, tv.CHAPTER_VOCAB)
    assert len(merges) == 11
    steps = tv.merge_steps("низко", merges)
    assert steps[-1]["parts"] == chapter_tokenize("низко", merges)
    # every step is one merge applied: joining its pair shortens the parts
    for before, after in zip(steps, steps[1:]):
        assert len(after["parts"]) < len(before["parts"])
        assert "".join(after["parts"]) == "".join(before["parts"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text("abнизко_ ", min_size=1, max_size=6), min_size=1, max_size=20),
    st.integers(0, 40),
    st.text("abнизкоx_", max_size=8),
)
def test_merge_steps_end_at_the_chapters_tokenize(words, vocab, word):
    merges, _ = chapter_train_bpe(" ".join(words), vocab)
    assert tv.merge_steps(word, merges)[-1]["parts"] == chapter_tokenize(word, merges)


def test_byte_chars_are_gpt2s_byte_alphabet():
    tk = reference()
    assert set(tv.BYTE_CHARS) == set(tk.pre_tokenizers.ByteLevel.alphabet())
    level = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    text = "".join(chr(c) for c in range(1, 0x800)) + "東京👩🏽‍💻\U0010fffd\u0000"
    assert "".join(p for p, _ in level.pre_tokenize_str(text)) == "".join(
        tv.base_units(text, byte_level=True)
    )


def test_byte_level_steps_follow_tokenizers():
    text = train_corpora.texts()["en-10k"][1]
    r = tokenprism.train_bpe(text, 600, byte_level=True)
    ref = reference().Tokenizer.from_str(r.to_tokenizer_json())
    for word in ("the", " the", " people", "hello", " naïve", " 東京"):
        steps = tv.merge_steps(word, r.merges, byte_level=True)
        assert steps[-1]["parts"] == r.tokenize(word)
        # one pre-token: tokenizers' tokens are the same
        assert steps[-1]["parts"] == ref.encode(word, add_special_tokens=False).tokens, word


def test_parse_vocab_messages():
    assert tv.parse_vocab(" 20 ", "chapter", "a b") == (20, None)
    assert tv.parse_vocab("256", "byte", "a") == (256, None)
    for raw, mode, text, words in [
        ("", "chapter", "a", "Type"),
        ("x1", "chapter", "a", "whole number"),
        ("12.5", "chapter", "a", "whole number"),
        ("0", "chapter", "a", "at least 1"),
        ("255", "byte", "a", "at least 256"),
        ("20", "chapter", "  \n", "Paste"),
        ("10000000", "chapter", "a", "at most"),
        ("20", "other", "a", "mode"),
    ]:
        value, message = tv.parse_vocab(raw, mode, text)
        assert value is None and words in message, (raw, mode, message)
    # the byte-level limit is the trainer's own
    with pytest.raises(ValueError):
        tokenprism.train_bpe("abc", 255, byte_level=True)


def test_exercise1_is_the_chapters_first_50_merges():
    text = train_corpora.texts()[tv.EXERCISE1_TEXT][1]
    assert len(text.encode()) >= 8_000
    assert all(not ("a" <= c.lower() <= "z") for c in text)
    ours = russian_merges.first_merges(text)
    initial = len({c for w in text.split() for c in w} | {"_"})
    merges, counts = chapter_train_bpe(text, initial + tv.EXERCISE1_MERGES)
    assert [(a, b, c) for a, b, c, _, _ in ours] == [(a, b, c) for (a, b), c in zip(merges, counts)]
    assert len(ours) == tv.EXERCISE1_MERGES
    found = [m for *_, m in ours if m]
    assert len(found) >= 5  # BPE does find Russian morphemes
    tree = tv.render_exercise1([[a, b, c, n] for a, b, c, n, _ in ours])
    assert len(tree.find_all("ex1-merges-row")) == 50


def test_morpheme_list_is_consistent():
    for form, kind, example in tv.MORPHEMES:
        assert kind in ("prefix", "suffix", "ending")
        assert form in example, (form, example)
        if kind == "prefix":
            assert example.startswith(form)
        if kind == "ending":
            assert example.endswith(form)
    assert tv.morpheme_for("ость_")["form"] == "-ость"
    assert tv.morpheme_for("пере")["form"] == "пере-"
    assert tv.morpheme_for("ого_")["kind"] == "ending"
    assert tv.morpheme_for("ого") is None  # not at a word's end
    assert tv.morpheme_for("._") is None


@pytest.fixture(scope="module")
def trained():
    text = train_corpora.texts()["en-10k"][1]
    return tokenprism.train_bpe(text, 1000, byte_level=True)


def test_fertility_counts_equal_the_references(trained):
    texts = fertility.parallel_texts()
    assert len(texts["en"]) > 5000 and len(texts["ru"]) > 5000
    assert texts["en"].count("\n") == texts["ru"].count("\n")  # line for line
    ours = fertility.counts(fertility.native_tokenizers(trained), texts)
    refs = fertility.counts(reference_spans(trained.to_tokenizer_json()), texts)
    assert set(ours) == {k for k, _ in tv.FERTILITY}
    assert ours == refs
    n_words = {k: tv.words(t) for k, t in texts.items()}
    rows = tv.fertility_rows(refs, n_words)
    tree = tv.render_fertility(rows, n_words)
    assert [n.text() for n in tree.find_all("ex2-en")] == [
        str(refs[k]["en"]) for k, _ in tv.FERTILITY
    ]
    assert len(tree.find("ex2-chart").find_all("ex2-bar-ru")) == len(rows)
    # Russian costs more than English for every pretrained tokenizer
    assert all(r["ratio"] > 1 for r in rows if r["key"] != "trained")


def test_fertility_of_a_chapter_mode_tokenizer():
    text = train_corpora.texts()["ru-10k"][1]
    r = tokenprism.train_bpe(text, 300)
    merges, _ = chapter_train_bpe(text, 300)
    sample = fertility.parallel_texts()["ru"][:3000]
    want = sum(len(chapter_tokenize(w, merges)) for w in sample.split())
    assert len(fertility.trained_spans(r)(sample)) == want


def test_indentation_table_equals_the_references(trained):
    ours = {k: f(tv.INDENT_SNIPPET) for k, f in fertility.native_tokenizers(trained).items()}
    refs = {
        k: f(tv.INDENT_SNIPPET) for k, f in reference_spans(trained.to_tokenizer_json()).items()
    }
    assert ours == refs
    rows = tv.indent_table(refs)
    widths = sorted({r["width"] for r in rows})
    assert widths == [4, 8, 12]
    for r in rows:
        joined = "".join(r["tokens"])
        if r["key"] == "bert-base-uncased":
            assert r["tokens"] == [] and "dropped" in r["verdict"]
        else:
            assert " " * r["width"] in joined  # the run's spaces are all in its tokens
    tree = tv.render_indent(rows)
    assert [n.text() for n in tree.find_all("ex3-verdict")] == [r["verdict"] for r in rows]


def test_whitespace_in_symbols_follows_the_page_switch():
    # Chips keep a symbol's own chars; spaces, tabs and newlines carry the classes the page's
    # whitespace switch draws as glyphs (shell/style.css), never glyphs in the text.
    node = tv.render_merges([("\n", " ", 3, "\n "), ("a", "\t", 2, "a\t")])
    rows = node.find_all("train-merges-row")
    assert [r.find("new").text() for r in rows] == ["\n ", "a\t"]
    classes = [n.attrs.get("class", "") for r in rows for n in r.walk()]
    assert {"inv sp", "inv nl", "inv tab"} <= set(classes)
    assert tv.render_merges([("Ġ", "t", 1, "Ġt")], byte_level=True).find("new").text() == "Ġt"
