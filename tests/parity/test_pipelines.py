"""Random pipelines trained with tokenizers 0.23.3, loaded into ours, compared field by field.

Each pipeline is drawn slot by slot (normalizer, pre-tokenizer, model with its options,
post-processor, added tokens, decoder) from a seeded RNG, its model trained with the reference's
own trainer (BpeTrainer, WordPieceTrainer, WordLevelTrainer, UnigramTrainer) on a slice of the
corpora (text made up here when the corpora are absent), saved to JSON, and loaded by both. Then
generated strings, pairs and corpus lines go through encode, encode_batch and decode on both,
every Encoding field compared. Where the reference refuses a text or fails on it (a Rust
panic), ours must raise a ValueError.

The slots draw every component a tokenizer.json may name (tests/components.py, the drawers the
parity tests of each component use), the Precompiled char maps of the Unigram files, and the
coherent families of real files (GPT-2's byte level, SentencePiece's metaspace and byte
fallback, BERT's), whose decoders fit their models.

200 pipelines per run, EXAMPLES strings each plus corpus lines, in about a minute. The seed
is printed on failure; TOKENPRISM_PIPELINE_SEED=<seed> replays it, TOKENPRISM_PIPELINES=<n>
runs more pipelines (a longer local run), TOKENPRISM_PIPELINE_DUMP=<path> writes the failing
pipeline's tokenizer.json there.

To cover a new component, add a drawing function to the slot's list (NORMALIZERS, ...): each takes
the RNG and returns a reference component (or None).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import random
import string
from dataclasses import dataclass, field

import pytest

import strategies as S
from components import (
    PRE_TOKENIZER_KINDS,
    any_char,
    leaves,
    random_decoder,
    random_normalizer,
    random_pre_tokenizer,
)
from parity import FIELDS, describe_input, encoding_diff
from paths import CORPORA, data_dir, reference, unigram_json

PIPELINES = int(os.environ.get("TOKENPRISM_PIPELINES", "200"))
DUMP = os.environ.get("TOKENPRISM_PIPELINE_DUMP")  # where to write a failing tokenizer.json
EXAMPLES = 200  # generated inputs per pipeline (plus corpus lines)
CORPUS_LINES = 60
UNK = "[UNK]"
SPECIALS = [UNK, "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
SPACE = "\u2581"


def tk():
    return reference()


# --- slot drawers: each takes the RNG and returns a reference component or None ------------


def _bert_normalizer(rng):
    return tk().normalizers.BertNormalizer(
        clean_text=rng.random() < 0.8,
        handle_chinese_chars=rng.random() < 0.8,
        strip_accents=rng.choice([None, True, False]),
        lowercase=rng.random() < 0.7,
    )


@functools.cache
def charsmaps() -> tuple[bytes, ...]:
    """The Precompiled char maps of the SentencePiece Unigram files (T5's and the byte
    fallback model's: NFKC-like maps built by SentencePiece 0.2.3)."""
    out = []
    for name in ("t5", "bytes"):
        doc = json.loads(unigram_json(name).read_text(encoding="utf-8"))
        steps = doc["normalizer"].get("normalizers") or [doc["normalizer"]]
        out += [
            base64.b64decode(s["precompiled_charsmap"]) for s in steps if s["type"] == "Precompiled"
        ]
    return tuple(out)


def _precompiled(rng):
    return tk().normalizers.Precompiled(rng.choice(charsmaps()))


def _sentencepiece_normalizer(rng):
    """What the converters write for SentencePiece models: the char map, then spaces folded
    (T5, XLM-R), or Llama's metaspace by normalizer."""
    n = tk().normalizers
    if rng.random() < 0.5:
        return n.Sequence([_precompiled(rng), n.Replace(tk().Regex(" {2,}"), " ")])
    return n.Sequence([n.Prepend(SPACE), n.Replace(" ", SPACE)])


def _accent_folding(rng):
    """Decomposition, accents stripped, lowercase: the sequence many files write out."""
    n = tk().normalizers
    return n.Sequence([rng.choice([n.NFD, n.NFKD])(), n.StripAccents(), n.Lowercase()])


NORMALIZERS = [
    lambda rng: None,
    lambda rng: None,
    _bert_normalizer,
    _accent_folding,
    random_normalizer,
    random_normalizer,
    random_normalizer,
    _precompiled,
    _sentencepiece_normalizer,
    lambda rng: tk().normalizers.NFC(),
    lambda rng: tk().normalizers.ByteLevel(),
]


def _random_pre_tokenizer(rng):
    return random_pre_tokenizer(rng.choice(PRE_TOKENIZER_KINDS), rng)


def _gpt2_pre_tokenizer(rng):
    p = tk().pre_tokenizers
    byte_level = p.ByteLevel(add_prefix_space=rng.random() < 0.3, use_regex=rng.random() < 0.8)
    if rng.random() < 0.3:  # Llama 3 and Qwen: their own Split, then bytes without the regex
        pattern = tk().Regex(
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
            r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
        )
        return p.Sequence(
            [
                p.Split(pattern, "isolated", invert=False),
                p.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    return byte_level


def _metaspace_pre_tokenizer(rng):
    return tk().pre_tokenizers.Metaspace(
        replacement=SPACE,
        prepend_scheme=rng.choice(["always", "first", "never"]),
        split=rng.random() < 0.7,
    )


PRE_TOKENIZERS = [
    lambda rng: None,
    lambda rng: tk().pre_tokenizers.BertPreTokenizer(),
    _random_pre_tokenizer,
    _random_pre_tokenizer,
    _random_pre_tokenizer,
    _random_pre_tokenizer,
    lambda rng: random_pre_tokenizer("Sequence", rng),
    _gpt2_pre_tokenizer,
    _metaspace_pre_tokenizer,
]


@dataclass
class ModelPlan:
    """A model to train: its reference model and trainer, and the edits made to the trained
    file (options the trainers do not set)."""

    kind: str
    model: object
    trainer: object
    edits: dict = field(default_factory=dict)
    byte_tokens: int = 0  # how many <0xXX> tokens to add (byte fallback)
    corpus_bytes: int = 60_000  # training text per corpus slice


def _vocab_size(rng):
    return rng.choice([120, 300, 800, 2000, 5000])


def _bpe(rng):
    m, t = tk().models, tk().trainers
    prefix = rng.choice([None, None, "##", "@@"])
    suffix = rng.choice([None, None, "</w>"])
    unk = rng.choice([None, UNK, UNK, "<missing>"])
    extra = {}
    if prefix:
        extra["continuing_subword_prefix"] = prefix
    if suffix:
        extra["end_of_word_suffix"] = suffix
    for name, value in (
        ("limit_alphabet", rng.choice([None, 30, 80, 1000])),
        ("max_token_length", rng.choice([None, 4])),
    ):
        if value is not None:
            extra[name] = value
    if rng.random() < 0.2:
        extra["initial_alphabet"] = tk().pre_tokenizers.ByteLevel.alphabet()
    trainer = t.BpeTrainer(
        vocab_size=_vocab_size(rng),
        special_tokens=SPECIALS,
        min_frequency=rng.choice([0, 2]),
        show_progress=False,
        **extra,
    )
    for name in ("limit_alphabet", "max_token_length", "initial_alphabet"):
        extra.pop(name, None)
    model = m.BPE(unk_token=unk if unk != "<missing>" else None, **extra)
    edits = {
        "unk_token": unk,
        "fuse_unk": rng.random() < 0.5,
        "byte_fallback": rng.random() < 0.4,
        "ignore_merges": rng.random() < 0.3,
        "dropout": rng.choice([None, None, 0.0]),
    }
    n_bytes = rng.choice([256, 256, 40]) if edits["byte_fallback"] else 0
    return ModelPlan("BPE", model, trainer, edits, n_bytes)


def _wordpiece(rng):
    m, t = tk().models, tk().trainers
    limit = rng.choice([None, 30, 1000])
    trainer = t.WordPieceTrainer(
        vocab_size=_vocab_size(rng),
        special_tokens=SPECIALS,
        show_progress=False,
        **({} if limit is None else {"limit_alphabet": limit}),
    )
    model = m.WordPiece(unk_token=UNK, max_input_chars_per_word=rng.choice([100, 100, 8]))
    return ModelPlan("WordPiece", model, trainer)


def _wordlevel(rng):
    m, t = tk().models, tk().trainers
    trainer = t.WordLevelTrainer(
        vocab_size=_vocab_size(rng), special_tokens=SPECIALS, show_progress=False
    )
    unk = rng.choice([UNK, UNK, "<missing>"])
    return ModelPlan("WordLevel", m.WordLevel(unk_token=unk), trainer, {"unk_token": unk})


def _unigram(rng):
    # Unigram training (EM, then pruning) is the slowest: small slices of text.
    trainer = tk().trainers.UnigramTrainer(
        vocab_size=rng.choice([300, 800, 2000]),
        special_tokens=SPECIALS,
        unk_token=rng.choice([None, UNK, UNK]),
        max_piece_length=rng.choice([16, 16, 4]),
        shrinking_factor=rng.choice([0.75, 0.5]),
        n_sub_iterations=rng.choice([1, 2]),
        show_progress=False,
    )
    byte_fallback = rng.random() < 0.4
    n_bytes = rng.choice([256, 256, 40]) if byte_fallback else 0
    edits = {"byte_fallback": byte_fallback}
    return ModelPlan("Unigram", tk().models.Unigram(), trainer, edits, n_bytes, 6_000)


MODELS = [_bpe, _bpe, _bpe, _wordpiece, _wordlevel, _unigram, _unigram]


def _template(rng, ids: dict[str, int]):
    p = tk().processors
    single, pair = rng.choice(
        [
            ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
            ("$A [SEP]", "$A [SEP] $B:1 [SEP]:1"),
            ("[CLS] $A", "[CLS]:0 $A:0 [CLS]:1 $B:1"),
            ("$0", "$A:0 $B:1"),
            ("[CLS]:1 $A:1 [SEP]:1", "[SEP] $B:0 [CLS]:1 $A:2"),
        ]
    )
    return p.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, ids[t]) for t in ("[CLS]", "[SEP]")]
    )


def _bert_processing(rng, ids: dict[str, int]):
    return tk().processors.BertProcessing(("[SEP]", ids["[SEP]"]), ("[CLS]", ids["[CLS]"]))


def _roberta(rng, ids: dict[str, int]):
    return tk().processors.RobertaProcessing(
        ("[SEP]", ids["[SEP]"]),
        ("[CLS]", ids["[CLS]"]),
        trim_offsets=rng.random() < 0.6,
        add_prefix_space=rng.random() < 0.5,
    )


def _byte_level_and_more(rng, ids: dict[str, int]):
    """ByteLevel (its trimming reads the token texts of any model) with a step that adds
    tokens, in either order."""
    p = tk().processors
    trim = p.ByteLevel(trim_offsets=rng.random() < 0.7, add_prefix_space=rng.random() < 0.5)
    steps = [trim, rng.choice([_template, _roberta, _bert_processing])(rng, ids)]
    rng.shuffle(steps)
    return p.Sequence(steps)


POST_PROCESSORS = [
    lambda rng, ids: None,
    _template,
    _template,
    _bert_processing,
    _roberta,
    _byte_level_and_more,
]


def _components(state: dict | None, kind: str) -> list[dict]:
    """Every component of type `kind` in a normalizer's or pre-tokenizer's JSON."""
    return [c for c in leaves(state) if c["type"] == kind]


def fitting_decoders(state: dict) -> list:
    """Decoders that undo what this tokenizer's model, pre-tokenizer and normalizer do (as the
    real files pair them)."""
    d = tk().decoders
    model = state["model"]
    out = []
    if model["type"] == "WordPiece":
        out.append(lambda rng: d.WordPiece(cleanup=rng.random() < 0.5))
    prefix = model.get("continuing_subword_prefix")
    if model["type"] == "BPE" and prefix:
        out.append(lambda rng: d.WordPiece(prefix=prefix, cleanup=rng.random() < 0.5))
    if model.get("end_of_word_suffix"):
        out.append(lambda rng: d.BPEDecoder(suffix=model["end_of_word_suffix"]))
    if _components(state["pre_tokenizer"], "ByteLevel") or _components(
        state["normalizer"], "ByteLevel"
    ):
        out.append(lambda rng: d.ByteLevel())
    for m in _components(state["pre_tokenizer"], "Metaspace"):
        out.append(
            lambda rng, m=m: d.Metaspace(
                replacement=m["replacement"], prepend_scheme=m["prepend_scheme"], split=m["split"]
            )
        )
    if model.get("byte_fallback"):
        out.append(
            lambda rng: d.Sequence(
                [d.Replace(SPACE, " "), d.ByteFallback(), d.Fuse(), d.Strip(" ", 1, 0)]
            )
        )
        out.append(lambda rng: d.Sequence([d.ByteFallback(), d.Fuse(), d.Metaspace()]))
    if model["type"] == "WordLevel":
        out.append(lambda rng: d.CTC(pad_token="[PAD]", word_delimiter_token="[MASK]"))
    return out


def _decoder(rng, state: dict):
    fitting = fitting_decoders(state)
    r = rng.random()
    if fitting and r < 0.6:
        return rng.choice(fitting)(rng)
    if r < 0.85:
        return random_decoder(rng)
    return None


# Added tokens: words, spaces inside and around, a char that lowercases to two, CJK, a token
# the vocabulary holds already.
ADDED = ["<mask>", "hello world", "ß", "\u6771\u4eac", " x", "[SEP]", "\u2581a", "."]


def _added_tokens(rng) -> list:
    t = tk()
    return [
        t.AddedToken(
            content,
            single_word=rng.random() < 0.2,
            lstrip=rng.random() < 0.2,
            rstrip=rng.random() < 0.2,
            normalized=rng.random() < 0.6,
        )
        for content in rng.sample(ADDED, k=rng.randint(1, 3))
    ]


# --- building one pipeline ------------------------------------------------------------------


def corpus_text(rng: random.Random, size: int) -> tuple[list[str], list[str]]:
    """(training lines, held-out lines): `size`-byte slices of one to three corpora, or made-up
    text."""
    langs = [lang for lang in CORPORA if (data_dir() / "corpora" / f"{lang}.txt").is_file()]
    lines: list[str] = []
    held: list[str] = []
    if langs:
        for lang in rng.sample(langs, k=min(len(langs), rng.randint(1, 3))):
            data = (data_dir() / "corpora" / f"{lang}.txt").read_bytes()
            at = rng.randrange(0, max(1, len(data) - size))
            chunk = data[at : at + size].decode("utf-8", "ignore").splitlines()[1:-1]
            lines += chunk[: len(chunk) * 2 // 3]
            held += chunk[len(chunk) * 2 // 3 :]
    else:
        alphabet = string.ascii_letters + "éèüßжяδλ東京" + ".,!? "
        for _ in range(size // 20):
            words = [
                "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
                for _ in range(rng.randint(1, 12))
            ]
            (held if rng.random() < 0.2 else lines).append(" ".join(words))
    return lines, held


def fails(f) -> BaseException | None:
    """The exception f() raises, a Rust panic (a BaseException) included, or None."""
    try:
        f()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return e
    return None


def draw_untrained(rng: random.Random):
    """(model plan, reference tokenizer with its normalizer and pre-tokenizer, training lines,
    held-out lines)."""
    plan = rng.choice(MODELS)(rng)
    tok = tk().Tokenizer(plan.model)
    tok.normalizer = rng.choice(NORMALIZERS)(rng)
    tok.pre_tokenizer = rng.choice(PRE_TOKENIZERS)(rng)
    return plan, tok, *corpus_text(rng, plan.corpus_bytes)


def draw_trained(rng: random.Random):
    """draw_untrained's pipeline with its model trained. Where the normalizer fails on the
    training text (the reference fails on some texts: a panic, which leaves the tokenizer and
    the trainer unusable), the same pipeline is drawn again and trained without it, then given
    it back. None when it cannot be trained (a Unigram vocabulary too small for the alphabet)."""
    state = rng.getstate()
    plan, tok, lines, held = draw_untrained(rng)
    has_normalizer = tok.normalizer is not None
    if fails(lambda: tok.train_from_iterator(lines, plan.trainer)) is None:
        return plan, tok, held
    if not has_normalizer:
        return None
    again = random.Random()
    again.setstate(state)
    plan, tok, lines, held = draw_untrained(again)
    normalizer, tok.normalizer = tok.normalizer, None
    if fails(lambda: tok.train_from_iterator(lines, plan.trainer)) is not None:
        return None
    tok.normalizer = normalizer
    return plan, tok, held


def build(rng: random.Random):
    """(reference tokenizer or the error it refuses the file with, its JSON, description,
    held-out lines) for a random pipeline."""
    t = tk()
    trained = None
    while trained is None:
        trained = draw_trained(rng)
    plan, tok, held = trained
    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    tok.post_processor = rng.choice(POST_PROCESSORS)(rng, ids)
    if rng.random() < 0.4:
        added = _added_tokens(rng)
        special = t.AddedToken("<special>", normalized=rng.random() < 0.5)
        if not normalized_forms_collide(tok, [*added, special]):
            tok.add_tokens(added)
            tok.add_special_tokens([special])
    state = json.loads(tok.to_str())
    model = state["model"]
    model.update(plan.edits)
    if plan.byte_tokens:
        add_byte_tokens(model, rng, plan.byte_tokens)
    merges = model.get("merges")
    if merges and rng.random() < 0.3 and not any(" " in a + b for a, b in merges):
        model["merges"] = [f"{a} {b}" for a, b in merges]  # the older form
    decoder = _decoder(rng, state)
    state["decoder"] = None if decoder is None else json.loads(decoder.__getstate__())
    text = json.dumps(state, ensure_ascii=rng.random() < 0.5)
    desc = {k: state[k] for k in ("normalizer", "pre_tokenizer", "post_processor", "decoder")}
    desc["model"] = {k: v for k, v in model.items() if k not in ("vocab", "merges")}
    desc["model"]["vocab_size"] = len(model["vocab"])
    desc["added_tokens"] = [a["content"] for a in state["added_tokens"]]
    desc = json.dumps(desc, ensure_ascii=False)
    try:
        return t.Tokenizer.from_str(text), text, desc, held
    except Exception as e:  # the reference refuses the file (an edit it does not accept)
        return e, text, desc, held


def normalized_forms_collide(tok, added: list) -> bool:
    """Whether two of the `normalized` added tokens normalize to the same text (or the
    normalizer fails on one): the reference then picks the token of one of them by the order
    of a HashMap, at random per process."""
    forms = []
    for a in added:
        if a.normalized:
            if tok.normalizer is None:
                forms.append(a.content)
            elif fails(lambda a=a: forms.append(tok.normalizer.normalize_str(a.content))):
                return True
    return len(set(forms)) < len(forms)


def add_byte_tokens(model: dict, rng: random.Random, n: int) -> None:
    """Adds `n` of the <0xXX> tokens byte fallback needs to a trained model."""
    if model["type"] == "Unigram":
        have = {piece for piece, _ in model["vocab"]}
        low = min((score for _, score in model["vocab"]), default=0.0)
        for b in rng.sample(range(256), k=n):
            if f"<0x{b:02X}>" not in have:
                model["vocab"].append([f"<0x{b:02X}>", rng.choice([low - 1.0, 0.0, low])])
        return
    next_id = max(model["vocab"].values()) + 1
    for b in rng.sample(range(256), k=n):
        model["vocab"].setdefault(f"<0x{b:02X}>", next_id)
        next_id += 1


# --- comparing ------------------------------------------------------------------------------

# What the comparisons met: inputs compared, those the reference refused (ours too), and the
# pipelines whose file the reference refuses.
STATS = {"compared": 0, "refused": 0, "files_refused": 0}


def outcome(f):
    """(f()'s value, None), or (None, the exception it raised): a Rust panic (a BaseException)
    in the reference included."""
    try:
        return f(), None
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, e


def same_outcome(ea, eb, where: str) -> None:
    """Both sides succeeded, or both failed; where the reference fails, ours raises a
    ValueError."""
    assert (ea is None) == (eb is None), f"only one side failed on {where}: ours {ea!r}, ref {eb!r}"
    if eb is not None:
        assert isinstance(ea, ValueError), f"ours should raise ValueError, raised {ea!r}"


def same_decode(ours, ref, ids, where: str) -> None:
    for skip in (True, False):
        a, ea = outcome(lambda: ours.decode(ids, skip_special_tokens=skip))  # noqa: B023
        b, eb = outcome(lambda: ref.decode(ids, skip_special_tokens=skip))  # noqa: B023
        w = f"decode of ids {ids} from {where} (skip_special_tokens={skip})"
        same_outcome(ea, eb, w)
        assert a == b, f"{w}: ours {a!r}, ref {b!r}"


def random_text(rng: random.Random, held: list[str]) -> str:
    """An input: pieces of the tests' text strategy (whitespace, marks, CJK, controls, scripts,
    emoji, long words ...), a slice of a held-out corpus line, or any code points."""
    k = rng.random()
    if k < 0.45:
        return S.build_text([rng.randrange(1 << 40) for _ in range(rng.randint(0, 12))])
    if k < 0.8 and held:
        line = rng.choice(held)
        at = rng.randint(0, len(line))
        return line[at : at + rng.randint(0, 30)]
    alphabet = string.ascii_letters + " .,'-\n"
    return "".join(
        any_char(rng) if rng.random() < 0.4 else rng.choice(alphabet)
        for _ in range(rng.randint(0, 20))
    )


def same_encode(ours, ref, text, pair=None, add_special_tokens=True):
    a, ea = outcome(lambda: ours.encode(text, pair, add_special_tokens=add_special_tokens))
    b, eb = outcome(lambda: ref.encode(text, pair, add_special_tokens=add_special_tokens))
    where = f"{describe_input(text, pair)} add_special_tokens={add_special_tokens}"
    same_outcome(ea, eb, where)
    STATS["compared"] += 1
    if eb is not None:
        STATS["refused"] += 1
        return
    d = encoding_diff(a, b, FIELDS + ("sequence_ids",))
    assert d is None, f"encode differs on {where}\n{d}"
    if pair is None:
        ids = ours.encode_ids(text, add_special_tokens=add_special_tokens)
        assert ids == b.ids, f"encode_ids differs on {where}: ours {ids}, ref {b.ids}"
    same_decode(ours, ref, b.ids, where)


def compare(ours, ref, held: list[str], rng: random.Random, n_examples: int):
    assert ours.get_vocab_size() == ref.get_vocab_size()
    assert ours.get_vocab_size(with_added_tokens=False) == ref.get_vocab_size(
        with_added_tokens=False
    )
    for tok_id in list(range(0, ref.get_vocab_size() + 3, 7)):
        token = ref.id_to_token(tok_id)
        assert ours.id_to_token(tok_id) == token, tok_id
        if token is not None:
            assert ours.token_to_id(token) == ref.token_to_id(token), token

    lines = rng.sample(held, k=min(len(held), CORPUS_LINES))
    for line in lines:
        same_encode(ours, ref, line)
    # encode_batch, when no line fails.
    _, fail = outcome(lambda: ref.encode_batch(lines))
    if fail is None and lines:
        for i, (a, b) in enumerate(zip(ours.encode_batch(lines), ref.encode_batch(lines))):
            d = encoding_diff(a, b)
            assert d is None, f"encode_batch differs on {describe_input(lines[i])}\n{d}"
    # Ids the encodings never give (every token of the vocabulary in turn, unknown ids).
    vocab = ref.get_vocab_size()
    ids = [rng.randrange(vocab + 2) for _ in range(rng.randint(0, 12))]
    same_decode(ours, ref, ids, "random ids")

    for _ in range(n_examples):
        pair = random_text(rng, held) if rng.random() < 0.5 else None
        same_encode(ours, ref, random_text(rng, held), pair, rng.random() < 0.5)


def test_random_pipelines():
    import tokenprism

    seed = int(os.environ.get("TOKENPRISM_PIPELINE_SEED") or random.randrange(1 << 32))
    rng = random.Random(seed)
    kinds: dict[str, int] = {}
    for i in range(PIPELINES):
        ref, text, desc, held = build(rng)
        try:
            if isinstance(ref, BaseException):
                STATS["files_refused"] += 1
                with pytest.raises(ValueError):
                    tokenprism.Tokenizer.from_str(text)
                continue
            ours = tokenprism.Tokenizer.from_str(text)
            compare(ours, ref, held, rng, EXAMPLES)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            if DUMP:
                with open(DUMP, "w", encoding="utf-8") as f:
                    f.write(text)
            raise AssertionError(
                f"pipeline {i} of seed {seed} (TOKENPRISM_PIPELINE_SEED={seed} replays it):\n"
                f"{desc}\n{e}"
            ) from e
        kind = json.loads(desc)["model"]["type"]
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"\nseed {seed}: {PIPELINES} pipelines ({kinds}), inputs {STATS}")


def test_dropout_is_refused_by_name():
    import tokenprism

    t = tk()
    tok = t.Tokenizer(t.models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], dropout=0.1))
    with pytest.raises(ValueError, match="model.dropout"):
        tokenprism.Tokenizer.from_str(tok.to_str())


# --- mismatches the random pipelines found, each as the smallest pipeline that shows it -----


# A BPE model with the metaspace char, and a WordLevel one that knows only its unk token
# (one token per piece, with the piece's offsets).
BPE_MODEL = {
    "type": "BPE",
    "vocab": {"▁": 0, "D": 1, "▁D": 2, "e": 3, "De": 4, "▁De": 5},
    "merges": [["▁", "D"], ["▁D", "e"]],
}
UNK_MODEL = {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}


def _added(content, id, special=False, normalized=False, **flags):
    return {
        "id": id,
        "content": content,
        "special": special,
        "normalized": normalized,
        "lstrip": flags.get("lstrip", False),
        "rstrip": flags.get("rstrip", False),
        "single_word": flags.get("single_word", False),
    }


def _doc(normalizer=None, pre_tokenizer=None, model=BPE_MODEL, added=()):
    return {
        "version": "1.0",
        "added_tokens": [_added("<x>", 6, special=True), *added],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": None,
        "model": model,
    }


METASPACE_FIRST = {
    "type": "Metaspace",
    "replacement": "▁",
    "prepend_scheme": "first",
    "split": True,
}
REGRESSIONS = {
    # The reference fails (a Rust panic) where a normalizer rewrites text after another
    # inserted a char before its start; encode failed only in the Normalizer alone.
    "normalizer failure": (
        _doc(
            normalizer={
                "type": "Sequence",
                "normalizers": [
                    {"type": "Replace", "pattern": {"Regex": "^"}, "content": "XY"},
                    {"type": "NFD"},
                ],
            }
        ),
        ["a", "", "<x>", "<x>a", "é"],
    ),
    # Prepend("") aligns the first char to the empty span at the start: a text of that char
    # alone is rewritten at its end, past its chars (the reference fails).
    "normalizer failure on inserted chars alone": (
        _doc(
            normalizer={
                "type": "Sequence",
                "normalizers": [{"type": "Prepend", "prepend": ""}, {"type": "Lowercase"}],
            },
            model=UNK_MODEL,
        ),
        ["A", "a", "", "AB", "<x>A"],
    ),
    # Prepend("") aligns the first char to the empty span at the start; Metaspace's "first"
    # counts that as the start of the input (in the first segment only).
    "metaspace first after an inserted char": (
        _doc(normalizer={"type": "Prepend", "prepend": ""}, pre_tokenizer=METASPACE_FIRST),
        ["De", "D", "Dx e", "<x>De", "De<x>De", " De", ""],
    ),
    # ByteLevel rewrites each piece as normalizers rewrite text: a piece that begins with
    # chars inserted before the text's start is rewritten astray (the reference fails unless
    # the piece holds nothing else).
    **{
        f"byte level after an inserted char, use_regex={regex}, prefix={prefix}": (
            _doc(
                normalizer={"type": "Replace", "pattern": {"Regex": "^"}, "content": "XY"},
                pre_tokenizer={
                    "type": "ByteLevel",
                    "add_prefix_space": prefix,
                    "trim_offsets": False,
                    "use_regex": regex,
                },
                model=UNK_MODEL,
            ),
            [":", "é:", " :", "ab", "", "<x>:", ":<x>"],
        )
        for regex in (True, False)
        for prefix in (True, False)
    },
    # A normalized added token the normalizer erases is an empty pattern: it matches at every
    # byte where no longer token does, so the normalized text is cut into single bytes (the
    # reference fails where a cut falls inside a char).
    **{
        f"added token erased by the normalizer, {flag or 'no flag'}": (
            _doc(
                normalizer={"type": "Replace", "pattern": {"Regex": "[0-9]+"}, "content": ""},
                model={
                    "type": "WordLevel",
                    "vocab": {"[UNK]": 0, "a": 1, "b": 2, "ab": 3, " ": 4, "xy": 5},
                    "unk_token": "[UNK]",
                },
                added=[
                    _added("xy", 5, normalized=True),
                    _added("12", 7, normalized=True, **({flag: True} if flag else {})),
                ],
            ),
            ["ab", "a b", "xyab  b", "", "1", "aéb", "a1b xy", "é", "<x>ab", "a<x>", " x y "],
        )
        for flag in ("", "lstrip", "rstrip", "single_word")
    },
}


@pytest.mark.parametrize("name", REGRESSIONS)
def test_regressions(name):
    import tokenprism

    doc, texts = REGRESSIONS[name]
    text = json.dumps(doc)
    ref, ours = tk().Tokenizer.from_str(text), tokenprism.Tokenizer.from_str(text)
    for t in texts:
        same_encode(ours, ref, t)
        same_encode(ours, ref, t, t)
