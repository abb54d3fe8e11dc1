"""Post-processors against tokenizers 0.23.3, through tokenprism.Tokenizer (the general loader).

- The GPT-2 (ByteLevel), Qwen3 (ByteLevel) and Llama 3.2 (Sequence of ByteLevel and a template)
  tokenizer.json files, loaded by both from the file: generated strings (runs of spaces at the
  start, end and middle, tabs, newlines, \\r\\n, other white space, combining marks, CJK, emoji,
  the file's special tokens typed in) and slices of the corpora, 1,200 per file, each alone and
  paired with another, with add_special_tokens on and off; every fourth with truncation (with a
  stride, both directions), so that the overflowing parts are compared too; decode of the ids,
  special tokens kept and skipped; encode_batch of all of them.
- Random post-processors on a small byte-level BPE trained here by the reference: ByteLevel and
  RobertaProcessing with trim_offsets and add_prefix_space each way, BertProcessing, templates
  (including ones that repeat an input or put B first) and Sequences of them (nested too), with
  the pre-tokenizer's add_prefix_space each way and random truncation. A configuration the
  reference cannot apply (it panics) must fail on our side too. Without truncation, the
  byte-level engine (BpeTokenizer.encode_full) reads the same file and is compared as well.
- The JSON forms the reference reads (it ignores `type` for RobertaProcessing, BertProcessing and
  TemplateProcessing), and errors that name the JSON path.

Every Encoding field is compared: ids, tokens, offsets, type ids, word ids, sequence ids, both
masks, n_sequences, and the overflowing parts, nested as the reference nests a pair's. The seed
is printed on failure; TOKENPRISM_POSTPROC_SEED=<seed> replays it.

Also here: the end-to-end figure of docs/PERFORMANCE.md (the first 200 KB of the English corpus
through GPT-2 and Llama 3.2, ids and offsets equal, time ours / reference).
"""

from __future__ import annotations

import functools
import json
import os
import random
import time

import pytest

import strategies as S
from parity import FIELDS, describe_input, encoding_diff
from paths import CORPORA, bpe_dir, data_dir, reference, require

FIELDS_ALL = FIELDS + ("sequence_ids",)
FILES = ("gpt2", "qwen3", "llama3.2")
STRINGS_PER_FILE = 1200
SEED = int(os.environ.get("TOKENPRISM_POSTPROC_SEED") or random.randrange(1 << 32))

SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n ", "\u3000", "\xa0", "\u2028", " \t "]
WORDS = [
    "hello",
    "World",
    "don't",
    "I'M",
    "123",
    "45678",
    "é",
    "nai\u0308ve",
    "東京",
    "ДОМ",
    "🙂",
    "👩\u200d👩\u200d👧",
    "x",
    ",",
    "...",
    "!?",
    "'s",
    "\u0300",
    "a\u0301\u0301",
]


def outcome(f):
    """f()'s value, or what it raised (the reference panics where it cannot go on)."""
    try:
        return f()
    except BaseException as e:  # noqa: BLE001 - PanicException is a BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return e


def same(x, y, where: str, path: str = "encoding"):
    """x and y agree in every field, and so do their overflowing parts (nested)."""
    d = encoding_diff(x, y, FIELDS_ALL)
    assert d is None, f"{where}\n{path}:\n{d}"
    assert x.n_sequences == y.n_sequences, f"{where}\n{path}: n_sequences"
    xo, yo = x.overflowing, y.overflowing
    assert len(xo) == len(yo), f"{where}\n{path}: {len(xo)} overflowing parts, reference {len(yo)}"
    for i, (a, b) in enumerate(zip(xo, yo)):
        same(a, b, where, f"{path}.overflowing[{i}]")


def same_encode(ours, ref, text, pair, add, where=""):
    """Both encode alike (or both fail); the Encodings agree, and so does decoding their ids."""
    x = outcome(lambda: ours.encode(text, pair, add_special_tokens=add))
    y = outcome(lambda: ref.encode(text, pair, add_special_tokens=add))
    where = f"{where}\n{describe_input(text, pair)} add_special_tokens={add} (seed {SEED})"
    if isinstance(x, BaseException) or isinstance(y, BaseException):
        assert isinstance(x, Exception) and isinstance(y, BaseException), (
            f"{where}: ours {x!r}, reference {y!r}"
        )
        return None
    same(x, y, where)
    for skip in (True, False):
        assert ours.decode(y.ids, skip_special_tokens=skip) == ref.decode(
            y.ids, skip_special_tokens=skip
        ), f"{where}: decode differs (skip_special_tokens={skip}) on ids {y.ids}"
    return y


@functools.cache
def corpus_lines() -> list[str]:
    """Lines of every corpus (the first 100 KB of each)."""
    out = []
    for lang in CORPORA:
        text = require(data_dir() / "corpora" / f"{lang}.txt").read_text(encoding="utf-8")
        out += [line for line in text[:100_000].splitlines() if line.strip()]
    return out


def random_text(rng: random.Random, specials: list[str]) -> str:
    """A corpus slice with spaces around it, or pieces: spaces, words, special tokens, and the
    pieces of the BERT strategies (every kind of char)."""
    if rng.random() < 0.3:
        line = rng.choice(corpus_lines())
        at = rng.randrange(len(line))
        return (
            rng.choice(["", " ", "  ", "\n"])
            + line[at : at + rng.randint(1, 80)]
            + rng.choice(["", " ", "   ", "\n", " \n"])
        )
    parts = []
    for _ in range(rng.randint(0, 9)):
        r = rng.random()
        if r < 0.35:
            parts.append(rng.choice(SPACES))
        elif r < 0.7:
            parts.append(rng.choice(WORDS))
        elif r < 0.78 and specials:
            parts.append(rng.choice(specials))
        else:
            parts.append(S.build_piece(rng.randrange(1 << 40)))
    return "".join(parts)


# ----------------------------------------------------------------------- the model files


@functools.cache
def nfc_gap_chars() -> frozenset[str]:
    """The chars on which the reference's NFC (Unicode 9.0) and ours (15.0) may differ."""
    from test_pipelines import form_gap_chars

    return form_gap_chars()


def file_pair(name: str):
    import tokenprism

    path = require(bpe_dir() / name / "tokenizer.json")
    return tokenprism.Tokenizer.from_file(str(path)), reference().Tokenizer.from_file(str(path))


TRUNCATIONS = [
    None,
    dict(max_length=16, stride=4),
    dict(max_length=9, stride=2, direction="left"),
    dict(max_length=12, stride=1, strategy="only_first"),
]


@pytest.mark.parametrize("name", FILES)
def test_model_files(name):
    ours, ref = file_pair(name)
    specials = [t.content for t in ref.get_added_tokens_decoder().values()][:40]
    gap = nfc_gap_chars() if ref.normalizer is not None else frozenset()
    rng = random.Random(f"{SEED}-{name}")
    texts = []
    while len(texts) < STRINGS_PER_FILE:
        t = random_text(rng, specials)
        if gap.isdisjoint(t):
            texts.append(t)
    for i, text in enumerate(texts):
        truncation = TRUNCATIONS[i % len(TRUNCATIONS)]
        for t in (ours, ref):
            if truncation is None:
                t.no_truncation()
            else:
                t.enable_truncation(**truncation)
        where = f"{name}, truncation {truncation}"
        for add in (True, False):
            same_encode(ours, ref, text, None, add, where)
            same_encode(ours, ref, text, texts[i - 1], add, where)
    for t in (ours, ref):
        t.no_truncation()
    for i, (x, y) in enumerate(zip(ours.encode_batch(texts), ref.encode_batch(texts), strict=True)):
        same(x, y, f"{name}: encode_batch item {i}: {describe_input(texts[i])}")


# ------------------------------------------------------- random post-processors, byte-level


@functools.cache
def byte_level_json() -> str:
    """A byte-level BPE of 600 tokens trained by the reference on the corpora, with BERT's and
    RoBERTa's special tokens."""
    tk = reference()
    tok = tk.Tokenizer(tk.models.BPE())
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<s>", "</s>", "[CLS]", "[SEP]", "<pad>"],
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus_lines()[::7], trainer)
    return tok.to_str()


def _byte_level(rng):
    return {
        "type": "ByteLevel",
        "add_prefix_space": rng.random() < 0.5,
        "trim_offsets": rng.random() < 0.7,
        "use_regex": rng.random() < 0.5,
    }


def _roberta(rng):
    return {
        "type": "RobertaProcessing",
        "sep": ["</s>", 1],
        "cls": ["<s>", 0],
        "trim_offsets": rng.random() < 0.6,
        "add_prefix_space": rng.random() < 0.5,
    }


def _bert(rng):
    return {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}


# (single, pair) in the reference's string form; the JSON allows pairs its constructor refuses
# (one that leaves B out).
TEMPLATES = [
    ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    ("<s> $A:2", "<s> $A <s>:1 $B:1"),
    ("$A:1 [SEP]", "$B:1 [SEP] $A:0 </s>"),
    ("$A", "$A"),
    ("[CLS] $A $A:1", "$A $B:1 $A:2 [SEP]"),
    ("$A [SEP] [CLS]", "[SEP] $B $A [CLS]"),
]
SPECIAL_IDS = {"<s>": 0, "</s>": 1, "[CLS]": 2, "[SEP]": 3}


def _pieces(template: str) -> list:
    out = []
    for word in template.split():
        name, _, type_id = word.partition(":")
        type_id = int(type_id or 0)
        if name.startswith("$"):
            out.append({"Sequence": {"id": name[1:], "type_id": type_id}})
        else:
            out.append({"SpecialToken": {"id": name, "type_id": type_id}})
    return out


def _template(rng):
    single, pair = rng.choice(TEMPLATES)
    return {
        "type": "TemplateProcessing",
        "single": _pieces(single),
        "pair": _pieces(pair),
        "special_tokens": {t: {"id": t, "ids": [i], "tokens": [t]} for t, i in SPECIAL_IDS.items()},
    }


def _sequence(rng, depth=0):
    kinds = [_byte_level, _byte_level, _roberta, _bert, _template]
    if depth == 0:
        kinds.append(lambda r: _sequence(r, 1))
    steps = [rng.choice(kinds)(rng) for _ in range(rng.randint(0, 3))]
    return {"type": "Sequence", "processors": steps}


POST_PROCESSORS = [_byte_level, _roberta, _template, _sequence, _sequence, _sequence]


def repeats_an_input(pp: dict) -> bool:
    if pp["type"] == "Sequence":
        return any(repeats_an_input(p) for p in pp["processors"])
    for key in ("single", "pair"):
        ids = [p["Sequence"]["id"] for p in pp.get(key, []) if "Sequence" in p]
        if len(ids) != len(set(ids)):
            return True
    return False


def random_config(rng: random.Random):
    """(reference tokenizer, its JSON, truncation or None) for a random post-processor."""
    state = json.loads(byte_level_json())
    state["pre_tokenizer"]["add_prefix_space"] = rng.random() < 0.5
    state["post_processor"] = rng.choice(POST_PROCESSORS)(rng)
    text = json.dumps(state)
    truncation = None
    # A template that repeats an input multiplies the overflowing parts of every merge (the
    # reference takes seconds on one pair cut in short windows): no truncation with it.
    if rng.random() < 0.4 and not repeats_an_input(state["post_processor"]):
        truncation = dict(
            max_length=rng.randint(1, 14),
            stride=rng.randint(0, 3),
            strategy=rng.choice(["longest_first", "only_first", "only_second"]),
            direction=rng.choice(["left", "right"]),
        )
    return reference().Tokenizer.from_str(text), text, truncation


def test_random_post_processors():
    import tokenprism

    rng = random.Random(SEED)
    specials = ["<s>", "</s>", "[SEP]"]
    kinds: dict[str, int] = {}
    for k in range(60):
        ref, text, truncation = random_config(rng)
        desc = f"config {k}: {json.loads(text)['post_processor']}, truncation {truncation}"
        ours = tokenprism.Tokenizer.from_str(text)
        if truncation is not None:
            a = outcome(lambda: ours.enable_truncation(**truncation))  # noqa: B023
            b = outcome(lambda: ref.enable_truncation(**truncation))  # noqa: B023
            assert isinstance(a, BaseException) == isinstance(b, BaseException), (
                f"{desc}: ours {a!r}, reference {b!r}"
            )
            if isinstance(b, BaseException):
                continue
        kind = json.loads(text)["post_processor"]["type"]
        kinds[kind] = kinds.get(kind, 0) + 1
        # The byte-level engine reads the same file (it has no truncation of its own).
        engine = tokenprism.BpeTokenizer.from_str(text) if truncation is None else None
        for _ in range(120):
            t = random_text(rng, specials)
            pair = random_text(rng, specials) if rng.random() < 0.5 else None
            add = rng.random() < 0.75
            y = same_encode(ours, ref, t, pair, add, desc)
            if engine is not None:
                x = outcome(lambda: engine.encode_full(t, pair, add_special_tokens=add))  # noqa: B023
                where = f"BpeTokenizer, {desc}\n{describe_input(t, pair)} add_special_tokens={add}"
                if y is None:
                    assert isinstance(x, Exception), f"{where}: the reference failed, ours {x!r}"
                else:
                    assert not isinstance(x, BaseException), f"{where}: ours failed: {x!r}"
                    same(x, y, where)
    print(f"\nseed {SEED}: post-processors {kinds}")


# ----------------------------------------------------------------------- reading the JSON

SEP, CLS = ["</s>", 1], ["<s>", 0]
READS = [
    {"type": "RobertaProcessing", "sep": SEP, "cls": CLS},  # BertProcessing: no trim fields
    {"sep": SEP, "cls": CLS, "trim_offsets": True, "add_prefix_space": False},  # Roberta
    {
        "type": "BertProcessing",
        "sep": SEP,
        "cls": CLS,
        "trim_offsets": True,
        "add_prefix_space": True,
    },
    {"type": "ByteLevel", "sep": SEP, "cls": CLS, "trim_offsets": False, "add_prefix_space": True},
    {
        "type": "RobertaProcessing",
        "sep": SEP,
        "cls": CLS,
        "trim_offsets": 1,
        "add_prefix_space": True,
    },
    {"type": "Foo", "sep": SEP, "cls": CLS},
    {"type": "ByteLevel", "trim_offsets": True, "add_prefix_space": False, "foo": 1},
    {"type": "ByteLevel", "trim_offsets": True},
    {"type": "ByteLevel", "trim_offsets": True, "add_prefix_space": False, "use_regex": 3},
    {"type": "Sequence", "processors": []},
    {"type": "Sequence", "processors": [{"type": "Sequence", "processors": []}]},
    {"type": "Sequence", "processors": [{"type": "Foo"}]},
    {"type": "BertProcessing", "sep": ["</s>", 2, 3], "cls": CLS},
    {"type": "BertProcessing", "sep": ["</s>", -2], "cls": CLS},
    {"single": [{"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {}},
    {
        "type": "ByteLevel",
        "trim_offsets": True,
        "single": [{"Sequence": {"id": "A", "type_id": 1}}],
        "pair": [],
        "special_tokens": {},
    },
    {"type": "TemplateProcessing", "single": [], "pair": []},
]


@pytest.mark.parametrize("post_processor", READS, ids=[json.dumps(r)[:60] for r in READS])
def test_post_processor_json_as_the_reference_reads_it(post_processor):
    """Ours loads what the reference loads (reading it as the same kind: the encodings agree)
    and refuses what it refuses."""
    import tokenprism

    state = json.loads(byte_level_json())
    state["post_processor"] = post_processor
    text = json.dumps(state)
    ref = outcome(lambda: reference().Tokenizer.from_str(text))
    ours = outcome(lambda: tokenprism.Tokenizer.from_str(text))
    assert isinstance(ours, BaseException) == isinstance(ref, BaseException), (ours, ref)
    if isinstance(ref, BaseException):
        assert isinstance(ours, ValueError) and "post_processor" in str(ours), ours
        return
    for t, pair in (("  hello world ", None), (" a", "b  ")):
        for add in (True, False):
            same_encode(ours, ref, t, pair, add, json.dumps(post_processor))


def test_errors_name_the_json_path():
    import tokenprism

    state = json.loads(byte_level_json())
    state["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
            {"type": "Sequence", "processors": [{"type": "ByteLevel", "add_prefix_space": True}]},
        ],
    }
    with pytest.raises(ValueError, match=r"post_processor\.processors\[1\]\.processors\[0\]"):
        tokenprism.Tokenizer.from_str(json.dumps(state))
    state["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<x>", "type_id": 0}}],
        "pair": [],
        "special_tokens": {"<x>": {"id": "<x>", "ids": ["7"], "tokens": ["<x>"]}},
    }
    with pytest.raises(ValueError, match=r'post_processor\.special_tokens\["<x>"\]\.ids'):
        tokenprism.Tokenizer.from_str(json.dumps(state))


# ----------------------------------------------------------------------- the end-to-end figure


@pytest.mark.parametrize("name", ["gpt2", "llama3.2"])
def test_corpus_end_to_end(name):
    """The first 200 KB of the English corpus through both sides' Tokenizer: line by line in one
    encode_batch (each side's default threads), line by line in a loop of encode calls, and as
    one encode: ids and offsets equal; time ratios ours / reference (best of 3) printed."""
    ours, ref = file_pair(name)
    head = require(data_dir() / "corpora" / "en.txt").read_bytes()[:200_000]
    head = head.decode("utf-8", "ignore")
    lines = head.splitlines()

    def best(f):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            out = f()
            times.append(time.perf_counter() - t0)
        return out, min(times)

    ratios = []
    for what, run in (
        ("encode_batch", lambda t: t.encode_batch(lines)),
        ("encode per line", lambda t: [t.encode(line) for line in lines]),
        ("one encode", lambda t: [t.encode(head)]),
    ):
        x, t_ours = best(lambda: run(ours))  # noqa: B023
        y, t_ref = best(lambda: run(ref))  # noqa: B023
        for i, (a, b) in enumerate(zip(x, y, strict=True)):
            assert a.ids == b.ids and a.offsets == b.offsets, f"{name} {what} {i}: {lines[i]!r}"
        ratios.append(f"{what} {t_ours * 1e3:.1f} / {t_ref * 1e3:.1f} ms = {t_ours / t_ref:.2f}")
    n = sum(len(e.ids) for e in x)
    print(f"\n{name}: 200 KB en, {n:,} tokens, ours / reference: " + "; ".join(ratios), end="")
