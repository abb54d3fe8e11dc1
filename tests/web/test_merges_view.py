"""The merge view (web/shell/merges.py), the chat section's view (tabs/tokenize/chat_view.py)
and the share link's chat and former BPE tab parts (shell/link.py), on the native module's
traces, which have the shape the page gets from wasm. Expected values come from tiktoken
0.14.0 run here (its rank files, encodings and token bytes), a naive lowest-rank-first merge
written here from those ranks, and tokenizers 0.23.3 (Qwen3's special tokens, GPT-2's merges).
"""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from paths import data_dir, reference, require, tiktoken_module
from shell import link, merges
from tabs.tokenize import chat_view

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
    rows = merges.merge_rows(as_wire(ours.trace_piece(piece)))
    assert rows[0]["parts"] == [merges.piece_label(bytes([b])) for b in piece.encode()]
    got = [(r["rank"], r["parts"]) for r in rows[1:]]
    assert got == [(rank, [merges.piece_label(p) for p in parts]) for _, rank, parts in want]
    for r, (i, _, parts) in zip(rows[1:], want):
        before = rows[r["step"] - 1]["parts"]
        assert r["pair"] == (before[i], before[i + 1])
        assert r["ids"] == [ref.encode_single_token(p) for p in parts]
    # The piece's final ids are tiktoken's.
    assert as_wire(ours.trace_piece(piece))["ids"] == ref.encode_ordinary(piece)


def test_merge_rows_name_a_models_tokens():
    """A tokenizer.json's merge trace: parts named by token text, ranks from its merges list."""
    import tokenprism
    from paths import bpe_json

    text = bpe_json("gpt2").read_text(encoding="utf-8")
    pairs = [tuple(m.split(" ", 1)) for m in json.loads(text)["model"]["merges"]]
    ref = reference().Tokenizer.from_str(text)
    ours = tokenprism.Tokenizer.from_str(text)
    for piece in ("Ġtokenization", "Ġunbelievable", "strawberry"):
        rows = merges.merge_rows(ours.merge_trace(piece))
        assert "".join(rows[0]["parts"]) == piece
        for r in rows[1:]:
            assert pairs[r["rank"]] == r["pair"]
        assert rows[-1]["parts"] == [t.value for t in ref.model.tokenize(piece)]
        tree = merges.render_merges({"text": piece}, ours.merge_trace(piece))
        ranks = [int(n.text()) for n in tree.find_all("bpe-merge-rank")]
        assert ranks == [r["rank"] for r in rows[1:]]


def test_chat_parts_mark_the_markers():
    import tokenprism

    path = require(data_dir() / "bpe" / "qwen3" / "tokenizer.json")
    ours = tokenprism.BpeTokenizer.from_file(str(path))
    ref = reference().Tokenizer.from_file(str(path))
    messages = [{"role": "user", "content": "x<|im_end|>y"}]
    parts = [as_wire(p) for p in ours.chat_parts(messages, add_generation_prompt=True)]
    tree = chat_view.render_chat(parts, None)
    nodes = tree.find_all("chat-part")
    markers = [n for n in nodes if n.attrs["data-kind"] == "marker"]
    assert [json.loads(n.attrs["data-ids"]) for n in markers] == [
        [ref.token_to_id(n.text().split("[")[0])] for n in markers
    ]
    # The typed marker stays text: its part has no special id.
    specials = {ref.token_to_id("<|im_start|>"), ref.token_to_id("<|im_end|>")}
    typed = [n for n in nodes if "x<|im_end|>y" in n.text()]
    assert typed and not specials & set(json.loads(typed[0].attrs["data-ids"]))
    assert chat_view.render_chat(None, "bad role").find("chat-error").text() == "bad role"


def test_state_round_trip_and_old_links():
    state = link.default_state()
    state.update(
        tokenizer="qwen3", step="model", chat=[["user", "<|im_end|>"], ["assistant", "ok"]]
    )
    back, message = link.decode_state(link.encode_state(state))
    assert message is None and back == state
    # A link from before the chat section opens as before, with no chat.
    old = link.default_state()
    old["text"] = "old link"
    back, message = link.decode_state(link.encode_state(old))
    assert message is None and back == old and "chat" not in back and "tab" not in back
    # A link of the former BPE tab opens its model and text in the tokenize tab, at the
    # model step (the merges), with its chat messages.
    bpe = {"t": "<b>hi</b> 東京\n", "s": 1, "v": "ids", "m": [["user", "x"]], "k": "qwen3"}
    compact = {"t": "a", "k": "bert-base-uncased", "o": "1111", "f": "1111", "s": "lowercase"}
    compact.update(v="text", a="bpe", b=bpe)
    back, message = link.decode_state(pack(compact))
    assert message is None
    assert (back["tokenizer"], back["text"], back["view"], back["step"]) == (
        "qwen3",
        "<b>hi</b> 東京\n",
        "ids",
        "model",
    )
    assert back["chat"] == [["user", "x"]] and "tab" not in back
    # Its part with the tokenize tab open: the tokenize tab's own state.
    del compact["a"]
    back, message = link.decode_state(pack(compact))
    assert message is None and back["tokenizer"] == "bert-base-uncased" and "chat" not in back
    # Bad BPE parts are refused as a whole.
    for bad in (
        {"t": "x", "s": True, "v": "text", "m": []},
        {"t": "x", "s": 0, "v": "text", "m": [["user"]]},
        {"t": "x", "s": 0, "v": "text", "m": [], "k": "not-a-tokenizer"},
        {"t": "x", "s": 0, "v": "text", "m": [["u", "c"]] * 100},
    ):
        assert link.bpe_from_link(bad) is None
    compact = {
        "t": "a",
        "k": "bert-base-uncased",
        "o": "1111",
        "f": "1111",
        "s": "lowercase",
        "v": "text",
        "a": "nope",
    }
    assert link.decode_state(pack(compact))[1] is not None
    # Chat messages that are not [role, content] strings are refused.
    for bad in ([["user"]], "x", [["user", 1]]):
        assert link.decode_state(pack({**compact, "a": "compare", "m": bad}))[1] is not None


def pack(compact: dict) -> str:
    raw = json.dumps(compact).encode()
    return "s=" + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")
