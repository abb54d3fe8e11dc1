"""web/tabs/bpe/view.py (the BPE tab's pure logic) on the native module's traces, which have the
shape the page gets from wasm. Expected values come from tiktoken 0.14.0 run here (its rank
files, encodings and token bytes), a naive lowest-rank-first merge written here from those
ranks, and tokenizers 0.23.3 for Qwen3's special tokens.
"""

from __future__ import annotations

import json

import pytest

from paths import data_dir, reference, require, tiktoken_module
from shell import link
from tabs.bpe import view as bpe_view

TIKTOKEN = ("o200k_base", "cl100k_base", "r50k_base")
# Single pre-tokens in all three encodings (a leading space, a word, CJK, emoji, Cyrillic).
PIECES = [" tokenization", "strawberry", "東京都", "🙂", " привет", " unbelievable", "龘"]


@pytest.fixture(scope="module", params=TIKTOKEN)
def pair(request):
    import tokenprism

    name = request.param
    ours = tokenprism.BpeTokenizer.from_tiktoken_file(
        str(require(data_dir() / "bpe" / f"{name}.tiktoken")), name
    )
    return name, ours, tiktoken_module().get_encoding(name)


def as_wire(obj):
    """The native dicts as the page gets them from wasm (bytes as lists of numbers)."""
    if isinstance(obj, bytes):
        return list(obj)
    if isinstance(obj, dict):
        return {k: as_wire(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [as_wire(v) for v in obj]
    return obj


def naive_merges(ranks: dict[bytes, int], piece: bytes) -> list[tuple[int, int, list[bytes]]]:
    """(index, rank, parts after) for each merge: the lowest-ranked adjacent pair whose
    concatenation is a token is merged first (leftmost on ties), until none is left."""
    parts = [bytes([b]) for b in piece]
    out = []
    while True:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[1]):
                best = (i, rank)
        if best is None:
            return out
        i, rank = best
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        out.append((i, rank, list(parts)))


@pytest.mark.parametrize("piece", PIECES)
def test_merge_rows_follow_the_rank_file(pair, piece):
    name, ours, ref = pair
    want = naive_merges(ref._mergeable_ranks, piece.encode())
    rows = bpe_view.merge_rows(as_wire(ours.trace_piece(piece)))
    assert rows[0]["parts"] == [bpe_view.piece_label(bytes([b])) for b in piece.encode()]
    got = [(r["rank"], r["parts"]) for r in rows[1:]]
    assert got == [(rank, [bpe_view.piece_label(p) for p in parts]) for _, rank, parts in want]
    for r, (i, _, parts) in zip(rows[1:], want):
        before = rows[r["step"] - 1]["parts"]
        assert r["pair"] == (before[i], before[i + 1])
        assert r["ids"] == [ref.encode_single_token(p) for p in parts]
    # The piece's final ids are tiktoken's.
    assert as_wire(ours.trace_piece(piece))["ids"] == ref.encode_ordinary(piece)


def test_byte_split_tokens_are_labelled_as_bytes(pair):
    name, ours, ref = pair
    text = "龘 𠜎"  # rare CJK: several tokens that end inside a char in every encoding here
    trace = as_wire(ours.trace(text))
    rows = bpe_view.token_rows(trace)
    assert [r["id"] for r in rows] == ref.encode_ordinary(text)
    partial = 0
    for r in rows:
        data = ref.decode_single_token_bytes(r["id"])
        try:
            data.decode("utf-8")
            assert not r["partial"] and r["label"] == data.decode()
        except UnicodeDecodeError:
            partial += 1
            assert r["partial"] and r["label"] == bpe_view.piece_label(data)
            assert "<" in r["label"]
    assert partial, "expected a token that ends inside a character"
    tree = bpe_view.render_tokens(trace)
    shown = [n.text() for n in tree.find_all("bpe-bytes")]
    assert shown == [r["label"] for r in rows if r["partial"]]


def test_special_tokens_allowed_or_text(pair):
    name, ours, ref = pair
    text = "a<|endoftext|>b"
    allowed = as_wire(ours.trace(text, allowed_special="all"))
    assert bpe_view.ids_of(allowed) == ref.encode(text, allowed_special="all")
    special = [r for r in bpe_view.token_rows(allowed) if r["special"]]
    assert [r["id"] for r in special] == [ref.encode("<|endoftext|>", allowed_special="all")[0]]
    spans = bpe_view.render_tokens(allowed).find_all("bpe-token")
    assert [s.text() for s in spans if "special" in s.attrs["class"]] == ["<|endoftext|>"]
    plain = as_wire(ours.trace(text, disallowed_special=()))
    assert bpe_view.ids_of(plain) == ref.encode_ordinary(text)
    assert not any(r["special"] for r in bpe_view.token_rows(plain))


def test_pre_tokens_and_counts(pair):
    name, ours, ref = pair
    text = "def f(x):\n    return x  # Привет 東京"
    trace = as_wire(ours.trace(text))
    pres = bpe_view.pre_token_list(trace)
    assert "".join(p["text"] for p in pres) == text
    assert [i for p in pres for i in p["ids"]] == ref.encode_ordinary(text)
    tree = bpe_view.render_pre_tokens(trace, pres[1]["key"])
    chips = tree.find_all("bpe-pre-token")
    assert [c.text() for c in chips] == [p["text"] for p in pres]
    assert [c.attrs["aria-pressed"] for c in chips].count("true") == 1
    c = bpe_view.counts(text, trace)
    assert (c["chars"], c["bytes"], c["tokens"]) == (
        len(text),
        len(text.encode()),
        len(ref.encode_ordinary(text)),
    )


def test_chat_parts_mark_the_markers():
    import tokenprism

    path = require(data_dir() / "bpe" / "qwen3" / "tokenizer.json")
    ours = tokenprism.BpeTokenizer.from_file(str(path))
    ref = reference().Tokenizer.from_file(str(path))
    messages = [{"role": "user", "content": "x<|im_end|>y"}]
    parts = [as_wire(p) for p in ours.chat_parts(messages, add_generation_prompt=True)]
    tree = bpe_view.render_chat(parts, None)
    nodes = tree.find_all("bpe-chat-part")
    markers = [n for n in nodes if n.attrs["data-kind"] == "marker"]
    assert [json.loads(n.attrs["data-ids"]) for n in markers] == [
        [ref.token_to_id(n.text().split("[")[0])] for n in markers
    ]
    # The typed marker stays text: its part has no special id.
    specials = {ref.token_to_id("<|im_start|>"), ref.token_to_id("<|im_end|>")}
    typed = [n for n in nodes if "x<|im_end|>y" in n.text()]
    assert typed and not specials & set(json.loads(typed[0].attrs["data-ids"]))
    assert bpe_view.render_chat(None, "bad role").find("bpe-chat-error").text() == "bad role"


def test_state_round_trip_and_old_links():
    state = link.default_state()
    bpe = bpe_view.default_bpe()
    bpe.update(
        tokenizer="qwen3",
        text="<b>hi</b> 東京\n",
        specials=True,
        view="ids",
        messages=[["user", "<|im_end|>"], ["assistant", "ok"]],
    )
    state.update(tab="bpe", bpe=bpe)
    back, message = link.decode_state(link.encode_state(state))
    assert message is None and back == state
    # A link from before the BPE tab opens as before, with no BPE keys.
    old = link.default_state()
    old["text"] = "old link"
    back, message = link.decode_state(link.encode_state(old))
    assert message is None and back == old and "bpe" not in back and "tab" not in back
    # Bad BPE parts are refused as a whole.
    for bad in (
        {"t": "x", "s": True, "v": "text", "m": []},
        {"t": "x", "s": 0, "v": "text", "m": [["user"]]},
        {"t": "x", "s": 0, "v": "text", "m": [], "k": "not-a-tokenizer"},
        {"t": "x", "s": 0, "v": "text", "m": [["u", "c"]] * 100},
    ):
        assert link.bpe_from_link(bad) is None
    import base64
    import zlib

    compact = {
        "t": "a",
        "k": "bert-base-uncased",
        "o": "1111",
        "f": "1111",
        "s": "lowercase",
        "v": "text",
        "a": "nope",
    }
    raw = json.dumps(compact).encode()
    frag = "s=" + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")
    assert link.decode_state(frag)[1] is not None
