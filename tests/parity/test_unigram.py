"""The Unigram model and the Precompiled normalizer against tokenizers 0.23.3.

Files: the SentencePiece Unigram tokenizer.json files of scripts/data/unigram_data.py (T5 and
XLM-R style, one with byte fallback, and mon-tokenizer's). Checked:

- the model: `tokenprism.Unigram` against the reference's `model.tokenize` on corpus lines
  (as the pipeline hands them over, and raw), generated strings, and small random models
  (repeated pieces, ties, byte pieces, no unk id: errors must agree too);
- the Precompiled normalizer: every code point (in chunks, with and without cluster breaks
  between them) and generated strings (combining sequences, Hangul, full-width and
  compatibility chars, whitespace of every kind), text and per-char alignment;
- the data itself: the reference's ids on each trained file equal SentencePiece's ids for the
  same text, except where two splits score the same (SentencePiece sums float32 scores, the
  reference float64, so such ties may break apart).

TOKENPRISM_EXHAUSTIVE=1 runs the long variant: every code point alone and before combining
marks, whole corpora, and ten times the generated examples.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as S
from paths import (
    CORPORA,
    UNIGRAM_FILES,
    UNIGRAM_TRAINED,
    corpus,
    reference,
    unigram_json,
    unigram_spm,
)

EXHAUSTIVE = os.environ.get("TOKENPRISM_EXHAUSTIVE") == "1"
SCALE = 10 if EXHAUSTIVE else 1
# Bytes of each corpus read per file (whole corpora when exhaustive).
CORPUS_BYTES = None if EXHAUSTIVE else 40_000


def hsettings(n: int):
    return settings(
        max_examples=n * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def read_corpus(lang: str) -> list[str]:
    with open(corpus(lang), encoding="utf-8") as f:
        text = f.read(CORPUS_BYTES) if CORPUS_BYTES else f.read()
    lines = text.split("\n")
    return lines[:-1] if CORPUS_BYTES else lines


class File:
    """One tokenizer file: its JSON, the reference's tokenizer, our model."""

    def __init__(self, name: str):
        import tokenprism

        with open(unigram_json(name), encoding="utf-8") as f:
            self.text = f.read()
        self.json = json.loads(self.text)
        self.ref = reference().Tokenizer.from_str(self.text)
        self.ours = tokenprism.Unigram.from_str(json.dumps(self.json["model"]))
        self.pieces = [p for p, _ in self.json["model"]["vocab"]]

    def precompiled(self) -> list[dict]:
        n = self.json["normalizer"] or {}
        return [x for x in n.get("normalizers", [n]) if x.get("type") == "Precompiled"]

    def words(self, line: str) -> list[str]:
        """What the pipeline hands the model for `line`: normalized, pre-tokenized."""
        text = self.ref.normalizer.normalize_str(line) if self.ref.normalizer else line
        if self.ref.pre_tokenizer is None:
            return [text]
        return [w for w, _ in self.ref.pre_tokenizer.pre_tokenize_str(text)]


_FILES: dict[str, File] = {}


def get_file(name: str) -> File:
    if name not in _FILES:
        _FILES[name] = File(name)
    return _FILES[name]


def outcome(f, text: str):
    """The result of f(text), or "error" if it raises (the reference raises a bare Exception)."""
    try:
        return f(text)
    except Exception:
        return "error"


def ref_tokens(model, text: str):
    return outcome(lambda t: [tok.as_tuple() for tok in model.tokenize(t)], text)


def assert_same_tokens(ours, ref_model, text: str):
    got = outcome(ours.tokenize, text)
    want = ref_tokens(ref_model, text)
    assert got == want, f"{text!r}: ours {got}, reference {want}"


# ---------------------------------------------------------------------------------- the model


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_vocab_scores_are_the_references_bits(name):
    """Each score parses to the reference's f64 exactly (a last-bit difference can flip a
    split), and unk_id and byte_fallback are read alike."""
    f = get_file(name)
    model = json.loads(f.ref.to_str())["model"]
    assert f.ours.vocab == [(p, float(s)) for p, s in model["vocab"]]
    assert f.ours.unk_id == model["unk_id"]
    assert f.ours.byte_fallback == model.get("byte_fallback", False)
    assert f.ours.get_vocab_size() == f.ref.get_vocab_size(with_added_tokens=False)


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_corpus_lines(name):
    """Every word of the corpora's lines as the pipeline hands it over, and each raw line."""
    f = get_file(name)
    model = f.ref.model
    n = 0
    for lang in CORPORA:
        for line in read_corpus(lang):
            for w in [*f.words(line), line]:
                assert_same_tokens(f.ours, model, w)
                n += 1
    assert n > 10_000


def file_text(name: str):
    """Strings made of the file's own pieces (so the lattice is dense), "▁", the unk and
    byte pieces spelled out, and the generated pieces of strategies.py."""
    pieces = st.sampled_from(get_file(name).pieces[:4000])
    odd = st.sampled_from(
        ["▁", "<unk>", "<0x41>", "<0xE6>", "<s>", "</s>", "<pad>", "<mask>", "\0"]
    )
    part = st.one_of(pieces, pieces, odd, S.piece, S.native_text)
    return st.lists(part, max_size=12).map("".join)


@pytest.mark.parametrize("name", UNIGRAM_FILES)
def test_generated_strings(name):
    f = get_file(name)

    @hsettings(400)
    @given(file_text(name))
    def check(text):
        assert_same_tokens(f.ours, f.ref.model, text)

    check()


# Small alphabets make pieces overlap; "x" and "日" are mostly unknown; byte pieces of "a", "é".
ALPHABET = ["a", "b", "é", "▁", "日"]
BYTE_PIECES = ["<0x61>", "<0xC3>", "<0xA9>", "<0x78>", "<0xE6>", "<0x97>", "<0xA5>"]


@st.composite
def random_model(draw):
    piece = st.one_of(
        st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=3).map("".join),
        st.sampled_from(BYTE_PIECES + ["<unk>", ""]),
    )
    # Few distinct scores: ties between splits are common.
    score = st.one_of(st.sampled_from([-1.0, -2.0, -0.5, 0.0, -10.0]), st.floats(-30, 5))
    vocab = draw(st.lists(st.tuples(piece, score), max_size=14))
    unk_id = draw(st.one_of(st.none(), st.integers(0, max(len(vocab) - 1, 0))))
    if draw(st.booleans()) and unk_id is None:
        unk_id = draw(st.integers(0, len(vocab) + 1))  # out of range or with an empty vocab
    return vocab, unk_id, draw(st.booleans())


@hsettings(800)
@given(
    random_model(),
    st.lists(st.lists(st.sampled_from([*ALPHABET, "x", "<unk>", "<0x61>"]), max_size=8)),
)
def test_random_models(model, texts):
    """Models the files do not have: repeated and empty pieces, an unk id out of range or
    absent, byte pieces partly present. Building and tokenizing must fail alike."""
    import tokenprism

    tk = reference()
    vocab, unk_id, byte_fallback = model
    try:
        ref = tk.models.Unigram(vocab, unk_id, byte_fallback)
    except Exception:
        ref = None
    model_json = json.dumps(
        {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": byte_fallback}
    )
    if ref is None:
        with pytest.raises(ValueError):
            tokenprism.Unigram.from_str(model_json)
        return
    # The reference's own serialization, as a tokenizer.json holds it.
    ours = tokenprism.Unigram.from_str(json.dumps(json.loads(tk.Tokenizer(ref).to_str())["model"]))
    for t in texts:
        assert_same_tokens(ours, ref, "".join(t))


BAD_MODELS = {
    "vocab is missing": {"type": "Unigram", "unk_id": 0},
    "vocab[1]": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a"]]},
    "vocab[0]": {"type": "Unigram", "vocab": [["a", "-1"]]},
    "unk_id": {"type": "Unigram", "unk_id": -1, "vocab": [["a", 0.0]]},
    "unk_id 1": {"type": "Unigram", "unk_id": 1, "vocab": [["a", 0.0]]},
    "vocab is empty": {"type": "Unigram", "unk_id": 0, "vocab": []},
    "byte_fallback": {"type": "Unigram", "unk_id": 0, "vocab": [["a", 0.0]], "byte_fallback": None},
    "vocab must be an array": {"type": "Unigram", "vocab": {"a": 0.0}},
}


@pytest.mark.parametrize("says", BAD_MODELS)
def test_bad_models_are_rejected_naming_the_field(says):
    import tokenprism

    model = BAD_MODELS[says]
    assert not reference_accepts(with_model(model=model))
    with pytest.raises(ValueError, match=f"model.{says.split()[0]}".replace("[", r"\[")):
        tokenprism.Unigram.from_str(json.dumps(model))


def test_models_without_unk_or_vocab_behave_as_the_reference():
    import tokenprism

    tk = reference()
    for vocab, unk_id in [([], None), ([("a", -1.0), ("ab", -1.0)], None), ([("<unk>", 0.0)], 0)]:
        ref = tk.models.Unigram(vocab, unk_id, False)
        ours = tokenprism.Unigram.from_str(
            json.dumps(json.loads(tk.Tokenizer(ref).to_str())["model"])
        )
        for text in ["", "a", "ab", "abb", "b", "x"]:
            assert_same_tokens(ours, ref, text)


# ---------------------------------------------------------------------------------- Precompiled


def charsmaps() -> dict[str, str]:
    """The distinct Precompiled normalizers of the files: JSON by the file that has it first."""
    seen: dict[str, str] = {}
    for name in UNIGRAM_FILES:
        for n in get_file(name).precompiled():
            if n["precompiled_charsmap"] not in {
                json.loads(j)["precompiled_charsmap"] for j in seen.values()
            }:
                seen[name] = json.dumps(n)
    return seen


@pytest.fixture(scope="module")
def normalizers():
    """(our JSON, the reference's normalizer) per distinct char map (nmt_nfkc, nmt_nfkc_cf)."""
    out = {}
    for name, j in charsmaps().items():
        f = get_file(name)
        ref = (
            reference()
            .Tokenizer.from_str(json.dumps({**f.json, "normalizer": json.loads(j)}))
            .normalizer
        )
        out[name] = (j, ref)
    assert len(out) == 2, f"expected two char maps (nmt_nfkc, nmt_nfkc_cf), found {list(out)}"
    return out


def all_code_points() -> list[str]:
    return [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def ref_alignment(ref, text: str):
    """The reference's normalized text and each normalized char's span in the input (chars)."""
    from tokenizers import PreTokenizedString, Regex

    pts = PreTokenizedString(text)
    pts.normalize(lambda n: ref.normalize(n))
    pts.split(lambda _, n: n.split(Regex("(?m)."), "isolated"))
    splits = pts.get_splits(offset_referential="original", offset_type="char")
    return "".join(s for s, _, _ in splits), [o for _, o, _ in splits]


@functools.lru_cache(maxsize=4)
def ours_normalizer(json_text: str):
    """Ours from its JSON, kept: the char maps are ~250 KB and the tests reuse a few."""
    import tokenprism

    return tokenprism.Normalizer.from_str(json_text)


def assert_same_normalization(ours_json, ref, text: str, aligned: bool = False):
    ours = ours_normalizer(ours_json)
    want = ref.normalize_str(text)
    got = ours.normalize_str(text)
    assert got == want, f"{text!r}: ours {got!r}, reference {want!r}"
    if aligned:
        ref_text, spans = ref_alignment(ref, text)
        assert ref_text == want
        assert ours.alignments(text) == spans, f"{text!r}: alignment differs"


@pytest.mark.parametrize("sep", ["\n", ""])
def test_every_code_point(normalizers, sep):
    """All code points in chunks of 4096: with "\\n" between them every one is its own
    cluster (bar "\\r\\n"); joined directly, marks and joiners cluster with what precedes."""
    cps = all_code_points()
    for j, ref in normalizers.values():
        for i in range(0, len(cps), 4096):
            assert_same_normalization(j, ref, sep.join(cps[i : i + 4096]))


@pytest.mark.skipif(not EXHAUSTIVE, reason="TOKENPRISM_EXHAUSTIVE=1: each code point alone")
def test_every_code_point_alone_and_before_marks(normalizers):
    cps = all_code_points()
    followers = ["\u0301", "\u0308\u0323", "\u200d", "\ufe0f", "\u3099", "\u1160"]
    for j, ref in normalizers.values():
        for c in cps:
            assert_same_normalization(j, ref, c)
        for fol in followers:
            for i in range(0, len(cps), 2048):
                assert_same_normalization(j, ref, "".join(c + fol for c in cps[i : i + 2048]))


def crange(a: int, b: int) -> list[str]:
    return [chr(c) for c in range(a, b + 1)]


POOLS = {
    "hangul": crange(0xAC00, 0xD7A3)
    + crange(0x1100, 0x11FF)
    + crange(0x3130, 0x318F)
    + crange(0xA960, 0xA97F),
    "fullwidth": crange(0xFF00, 0xFFEF),
    "compat": (
        crange(0xFB00, 0xFB4F)
        + crange(0x2460, 0x24FF)
        + crange(0x3300, 0x33FF)
        + crange(0xF900, 0xFAFF)
        + crange(0x2070, 0x209F)
        + crange(0x2150, 0x218B)
        + crange(0x1D400, 0x1D7FF)
        + crange(0x2100, 0x214F)
        + crange(0xFE30, 0xFE6F)
        + crange(0x3200, 0x32FF)
    ),
    "space": S.WHITESPACE + ["\r\n", "\u00ad", "\u200b", "\u200c", "\u2060", "\ufeff"],
    "control": S.CONTROLS,
    "marks": S.MARKS + crange(0x1AB0, 0x1AFF) + crange(0x20D0, 0x20FF) + ["\u3099", "\u309a"],
    "latin": S.LATIN_BASES + list("aeiouAEIOU"),
    "emoji": S.EMOJI,
}


@st.composite
def normalizer_text(draw):
    """Runs of chars from the pools, marks often following bases (clusters of every length)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    kinds = draw(st.lists(st.sampled_from(sorted(POOLS)), min_size=1, max_size=10))
    out = []
    for k in kinds:
        out.append("".join(rng.choice(POOLS[k]) for _ in range(rng.randint(1, 4))))
        if rng.random() < 0.4:
            out.append("".join(rng.choice(POOLS["marks"]) for _ in range(rng.randint(1, 5))))
    return "".join(out)


@hsettings(1500)
@given(st.one_of(normalizer_text(), S.text, S.native_text))
def test_generated_strings_and_alignment(normalizers, text):
    for j, ref in normalizers.values():
        assert_same_normalization(j, ref, text, aligned=True)


def test_corpus_lines_normalized_and_aligned(normalizers):
    for lang in CORPORA:
        lines = read_corpus(lang)[:300]
        for j, ref in normalizers.values():
            for line in lines:
                assert_same_normalization(j, ref, line, aligned=True)


def with_model(model=None, normalizer=None) -> str:
    """A tokenizer.json the reference accepts but for the part under test."""
    tk = reference()
    base = json.loads(tk.Tokenizer(tk.models.Unigram([("a", 0.0)], 0, False)).to_str())
    if model is not None:
        base["model"] = model
    if normalizer is not None:
        base["normalizer"] = normalizer
    return json.dumps(base)


def reference_accepts(tokenizer_json: str) -> bool:
    """Whether the reference loads it and normalizes "abc" (it panics on some bad char maps:
    a PanicException is no Exception)."""
    try:
        t = reference().Tokenizer.from_str(tokenizer_json)
        if t.normalizer is not None:
            t.normalizer.normalize_str("abc")
        return True
    except BaseException:
        return False


# A size of 1024 and 256 zero units: a trie that matches nothing, and no lookup runs past it.
EMPTY_TRIE = struct.pack("<I", 1024) + bytes(1024)
GOOD = base64.b64encode(EMPTY_TRIE).decode()
CHARSMAPS = {
    "padded": (GOOD, True),
    "unpadded": (GOOD.rstrip("="), True),
    "strings after the trie": (base64.b64encode(EMPTY_TRIE + b"x\0").decode(), True),
    "trailing bits": (GOOD[:-2] + "B=", False),
    "over-padded": (GOOD + "=", False),
    "a space": (GOOD[:8] + " " + GOOD[8:], False),
    "url alphabet": (GOOD[:8] + "_" + GOOD[9:], False),
    "strings not UTF-8": (base64.b64encode(EMPTY_TRIE + b"\xff").decode(), False),
    "shorter than its trie": (base64.b64encode(struct.pack("<I", 8) + bytes(3)).decode(), False),
    "empty": ("", False),
}


@pytest.mark.parametrize("case", CHARSMAPS)
def test_charsmaps_load_as_the_reference_loads_them(case):
    """base64 as the reference decodes it (padding optional, trailing bits zero), a charsmap
    shorter than its trie or with strings that are not UTF-8: accepted or refused alike."""
    import tokenprism

    b64, ok = CHARSMAPS[case]
    n = {"type": "Precompiled", "precompiled_charsmap": b64}
    assert reference_accepts(with_model(normalizer=n)) == ok
    if ok:
        assert tokenprism.Normalizer.from_str(json.dumps(n)).normalize_str("abc") == "abc"
    else:
        with pytest.raises(ValueError, match="normalizer.precompiled_charsmap"):
            tokenprism.Normalizer.from_str(json.dumps(n))


# ---------------------------------------------------------------------------------- the data


def spm_to_file_id(name: str, i: int) -> int:
    """SentencePiece's id as the converted file numbers it (XLM-R: fairseq's order)."""
    if name != "xlmr":
        return i
    return {0: 3, 1: 0, 2: 2}.get(i, i + 1)


@pytest.mark.parametrize("name", UNIGRAM_TRAINED)
def test_reference_ids_equal_sentencepiece(name):
    """The converted file tokenizes as SentencePiece does: the data is what it claims to be."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(unigram_spm(name)))
    tok = get_file(name).ref
    file_to_spm = {spm_to_file_id(name, i): i for i in range(sp.get_piece_size())}
    # The file's special tokens are split out of any text; SentencePiece reads them as text.
    specials = [t.content for t in tok.get_added_tokens_decoder().values()]
    same = ties = 0
    for lang in CORPORA:
        for line in read_corpus(lang)[:1000]:
            if any(s in line for s in specials):
                continue
            if name == "bytes":
                # Its converter prepends "▁" only when the text does not start with one; SentencePiece
                # always does, so lines that start with a space once normalized (U+200F is one
                # there) differ by design.
                while line and tok.normalizer.normalize_str(line[0]) in (" ", "▁"):
                    line = line[1:]
            want = [spm_to_file_id(name, i) for i in sp.encode(line)]
            got = tok.encode(line, add_special_tokens=False).ids
            if got == want:
                same += 1
                continue
            score = lambda ids: sum(sp.get_score(file_to_spm[i]) for i in ids)  # noqa: E731
            assert abs(score(got) - score(want)) < 1e-4, f"{line!r}: {got} vs SentencePiece {want}"
            ties += 1
    assert same > 20 * max(ties, 1), f"{same} lines equal, {ties} ties"
