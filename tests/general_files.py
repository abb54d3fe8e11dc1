"""tokenizer.json files beyond BERT's, for the page's general module (tests/web): a Unigram file,
GPT-2's byte-level BPE, small pipelines trained here with `tokenizers` 0.23.3, and one file no
module reads. Each is JSON text, which the page and the reference both load.
"""

from __future__ import annotations

from paths import CORPORA, bpe_dir, corpus, reference, require, unigram_json

# Texts in several scripts, with what the pipelines below rewrite: runs of spaces, curly
# apostrophes, compatibility chars (ﬁ, ①), accents, CJK, an emoji sequence, tabs and newlines.
TEXTS = [
    "Héllo, Wörld! It’s   a naïve ﬁrst ① test.",
    "Привет, мир! 東京タワーは 333 m — ΟΔΥΣΣΕΥΣ",
    "مرحبا بالعالم\tdef f(x):\n    return x ** 2  # 👩🏽‍💻",
]
# GPT-4's pre-tokenizer pattern (Llama 3's): case-insensitive contractions and a lookahead.
SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def unigram() -> str:
    """The T5-style SentencePiece Unigram file (Precompiled normalizer, Metaspace, a template)."""
    return unigram_json("t5").read_text(encoding="utf-8")


def gpt2() -> str:
    """GPT-2's byte-level BPE file (ByteLevel pre-tokenizer, post-processor and decoder)."""
    return require(bpe_dir() / "gpt2" / "tokenizer.json").read_text(encoding="utf-8")


def _training_lines(per_corpus: int = 400) -> list[str]:
    lines = []
    for name in CORPORA:
        with open(corpus(name), encoding="utf-8") as f:
            lines += [line for _, line in zip(range(per_corpus), f)]
    return lines + TEXTS


def regex_bpe() -> str:
    """A small byte-level BPE behind a regex Split (Qwen's and Llama 3's layout): NFKC, two
    Replace stages, Split with a lookahead, ByteLevel, a ByteLevel decoder."""
    t = reference()
    n, p = t.normalizers, t.pre_tokenizers
    tok = t.Tokenizer(t.models.BPE())
    tok.normalizer = n.Sequence([n.NFKC(), n.Replace(t.Regex(" {2,}"), " "), n.Replace("’", "'")])
    tok.pre_tokenizer = p.Sequence(
        [
            p.Split(t.Regex(SPLIT_PATTERN), "isolated"),
            p.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = t.decoders.ByteLevel()
    trainer = t.trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=p.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(_training_lines(), trainer)
    return tok.to_str()


def prefixed_wordlevel() -> str:
    """A WordLevel model behind Llama 2's normalizer (Prepend "▁", spaces to "▁") and a
    Replace that puts a char before the text, which no input char gives (the reference
    allows no rewrite after it), split before each "▁", with [CLS] and [SEP] around.

    The pattern is \\A, not ^: Oniguruma (the reference natively) reads ^ as the start of any
    line, fancy-regex (its wasm build, and the page's) as the start of the text."""
    t = reference()
    n = t.normalizers
    tok = t.Tokenizer(t.models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = n.Sequence(
        [n.Lowercase(), n.Prepend("▁"), n.Replace(" ", "▁"), n.Replace(t.Regex(r"\A"), "«")]
    )
    tok.pre_tokenizer = t.pre_tokenizers.Split("▁", "merged_with_next")
    trainer = t.trainers.WordLevelTrainer(
        vocab_size=2000, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False
    )
    tok.train_from_iterator(_training_lines(), trainer)
    tok.post_processor = t.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    return tok.to_str()


def refused() -> str:
    """A file the reference reads and no module of ours does: BPE dropout (random merges)."""
    t = reference()
    return t.Tokenizer(t.models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], dropout=0.1)).to_str()


def reference_tokenizer(spec: str):
    """tokenizers 0.23.3 on `spec`, without truncation or padding (as the page encodes)."""
    tok = reference().Tokenizer.from_str(spec)
    tok.no_truncation()
    tok.no_padding()
    return tok
