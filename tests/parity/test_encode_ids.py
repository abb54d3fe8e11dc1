"""`Tokenizer.encode_ids`, the fast ids-only call, against tokenizers 0.23.3's `encode(...).ids`.

encode_ids has its own paths: short inputs (under 2 KB) go through a per-thread ids buffer, a
text with no added token skips the added-token split, and the last block of every text (all
of a short one) is classified from a zero-padded copy. So the inputs here are slices of every
byte length up to 80 from each corpus (every tail length of both block widths), texts around
added tokens, runs of non-ASCII word chars next to chars that change or vanish, and whole
documents; with and without special tokens.
"""

from __future__ import annotations

import random

import pytest

import strategies as S
from parity import codepoints, first_diff
from paths import CORPORA, UNIGRAM_FILES, corpus, reference, unigram_json


def check(ours, ref, texts):
    for add in (False, True):
        for t in texts:
            got = ours.encode_ids(t, add_special_tokens=add)
            want = ref.encode(t, add_special_tokens=add).ids
            assert got == want, f"add_special_tokens={add} {codepoints(t)}: {first_diff(got, want)}"


def byte_slices(text: str, rng: random.Random, max_bytes: int, per_len: int) -> list[str]:
    out = []
    for n in range(max_bytes + 1):
        for _ in range(per_len):
            p = rng.randrange(len(text) - max_bytes)
            s = text[p : p + n]
            while len(s.encode()) > n:
                s = s[:-1]
            out.append(s)
    return out


@pytest.mark.parametrize("lang", CORPORA)
def test_short_slices_of_every_length(toks, lang):
    text = corpus(lang).read_text(encoding="utf-8")[:300_000]
    check(*toks, byte_slices(text, random.Random(lang), 80, 6))


@pytest.mark.parametrize("lang", CORPORA)
def test_documents(toks, lang):
    text = corpus(lang).read_text(encoding="utf-8")
    rng = random.Random("doc" + lang)
    docs = []
    for size in (1000, 2047, 2048, 2049, 5000, 20000):
        p = rng.randrange(len(text) - size)
        docs.append(text[p : p + size])
    check(*toks, docs)


def test_added_tokens_and_brackets(toks):
    texts = [
        "[CLS]",
        "[SEP] hello",
        "x[MASK]y",
        "a [UNK] b [PAD]",
        "[cls] [Sep]",
        "[",
        "[[",
        "[CLS",
        "hello [world]",
        "[CLS][SEP]",
        " [MASK] ",
        "Привет [MASK] мир",
        "東京[SEP]大阪",
        "[" * 40,
        "a[" * 20 + "[SEP]",
    ]
    check(*toks, texts)


def test_non_ascii_runs(toks):
    rng = random.Random(7)
    pieces = [
        "привет",
        "ПРИВЕТ",
        "Ёлка",
        "καλημέρα",
        "ΆΈΉ",
        "مَرْحَبًا",
        "ـــ",
        "東京",
        "中文。",
        "ｱｲｳ",
        "é",
        "\u0301",
        "\u200b",
        "\u00a0",
        "\u3000",
        "ﬁ",
        "😀",
        "a",
        "A",
        " ",
        ".",
        ",",
        "\n",
    ]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30))) for _ in range(600)]
    check(*toks, texts)


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_unigram_files(name):
    """Unigram tokenizer.json files take the staged pipeline's ids alone (no Encoding): slices,
    whole lines and documents of every corpus, and texts around the files' added tokens."""
    import tokenprism

    path = str(unigram_json(name))
    ours = tokenprism.Tokenizer.from_file(path)
    ours.no_padding()
    ours.no_truncation()
    ref = reference().Tokenizer.from_file(path)
    ref.no_padding()
    ref.no_truncation()
    added = [t.content for t in ref.get_added_tokens_decoder().values()]
    texts = [f"a{t}b  {t.upper()} {t}" for t in added] + ["", " ", "  x  ", "\u3000y\t"]
    # An added token first (Metaspace "first" prepends only at the input's start).
    texts += (
        [f"{t}ab c" for t in added] + [f"{t} ab" for t in added] + [f"\u00ad{t}b" for t in added]
    )
    for lang in CORPORA:
        text = corpus(lang).read_text(encoding="utf-8")[:100_000]
        rng = random.Random(name + lang)
        texts += byte_slices(text, rng, 40, 1)
        texts += text.split("\n")[:40]
        p = rng.randrange(len(text) - 5000)
        texts.append(text[p : p + 5000])
    check(ours, ref, texts)


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_unigram_files_on_what_the_stages_rewrite(name):
    """Random joins of what the Unigram files' stages rewrite, each at the start, middle and end
    of a text: runs of spaces (a Replace of " {2,}"), the replacement char, chars the charsmap
    expands, removes or folds (ligatures, controls, combining marks, CR LF), other whitespace
    (Strip), and added tokens matched in normalized text."""
    import tokenprism

    path = str(unigram_json(name))
    ours = tokenprism.Tokenizer.from_file(path)
    ref = reference().Tokenizer.from_file(path)
    for t in (ours, ref):
        t.no_padding()
        t.no_truncation()
    rng = random.Random("rewrite" + name)
    parts = S.UNIGRAM_REWRITES
    texts = ["".join(rng.choice(parts) for _ in range(rng.randrange(12))) for _ in range(3000)]
    check(ours, ref, texts)
