"""What the BPE tab shows, as plain nodes (shell/dom.py), and its default state (its part of
a share link is shell/link.py's).

Pure Python, no browser imports: pytest runs it under CPython on the native module's traces,
the page under Pyodide on the wasm module's (the same JSON). The inputs are the core's own
shapes: a trace (`WasmBpeTokenizer.trace`: segments with their pre-tokens, tokens with their
bytes), a piece trace (`tracePiece`: the merge steps) and chat parts (`chatParts`).

    >>> byte_label(bytes([0xE4, 0xBD]))
    '<E4><BD>'
    >>> piece_label("a東".encode()[:3])
    'a<E6><9D>'
"""

from __future__ import annotations

import json

from shell.chars import text_nodes
from shell.dom import Node, el
from shell.merges import byte_label, is_whole, merge_rows, piece_label, render_merges  # noqa: F401

# The built-in tokenizers (files.js beside this file has their files) in the picker's order.
BUILTINS: dict[str, str] = {
    "o200k_base": "o200k_base (GPT-4o)",
    "cl100k_base": "cl100k_base (GPT-4)",
    "p50k_base": "p50k_base (tiktoken)",
    "r50k_base": "r50k_base (tiktoken)",
    "gpt2": "GPT-2 (tokenizer.json)",
    "qwen3": "Qwen3 (tokenizer.json, 11 MB)",
}
DEFAULT_TOKENIZER = "o200k_base"
DEFAULT_TEXT = "Hello, мир! 東京 🙂 <|endoftext|>"
DEFAULT_MESSAGES = [
    ["system", "You are a helpful assistant."],
    ["user", "Is <|im_end|> typed here a marker?"],
]
# The most tokens drawn over the text and as ids (counts cover all of them).
TOKEN_CAP = 3000
MAX_MESSAGES = 32


# ---------------------------------------------------------------------------------- tokens


def token_rows(trace: dict) -> list[dict]:
    """One row per token: id, bytes, the label drawn, and whether it is partial or special.

    A partial token (its bytes end or start inside a UTF-8 character) is drawn as its bytes;
    `text` is then the characters it completes (empty when it completes none).
    """
    rows = []
    for k, t in enumerate(trace["tokens"]):
        data = bytes(t["bytes"])
        partial = bool(t.get("partial")) or not is_whole(data)
        rows.append(
            {
                "k": k,
                "id": t["id"],
                "bytes": data,
                "text": t["text"],
                "partial": partial,
                "special": bool(t.get("special")),
                "label": piece_label(data) if partial else t["text"],
            }
        )
    return rows


def counts(text: str, trace: dict) -> dict:
    chars = len(text)
    tokens = trace.get("total_tokens", len(trace["tokens"]))
    return {
        "chars": chars,
        "bytes": len(text.encode("utf-8")),
        "tokens": tokens,
        "chars_per_token": chars / tokens if tokens else 0.0,
    }


def render_counts(text: str, trace: dict) -> Node:
    c = counts(text, trace)
    parts = [
        ("chars", f"{c['chars']:,}"),
        ("bytes", f"{c['bytes']:,}"),
        ("tokens", f"{c['tokens']:,}"),
        ("chars/token", f"{c['chars_per_token']:.2f}"),
    ]
    shown = min(len(trace["tokens"]), TOKEN_CAP)
    note = None
    if shown < c["tokens"]:
        note = el(
            "p",
            {"class": "cap", "data-testid": "bpe-cap"},
            f"Drawing the first {shown:,} of {c['tokens']:,} tokens; counts and ids cover all.",
        )
    return el(
        "div",
        {},
        el(
            "dl",
            {"class": "counts", "data-testid": "bpe-counts"},
            *(
                el(
                    "div",
                    {"class": "count", "data-testid": f"bpe-count-{k.replace('/', '-per-')}"},
                    el("dt", {}, k),
                    el("dd", {}, v),
                )
                for k, v in parts
            ),
        ),
        note,
    )


def token_title(row: dict) -> str:
    kind = (
        "special token"
        if row["special"]
        else ("bytes, not whole characters" if row["partial"] else "token")
    )
    return f"{kind} · id {row['id']} · bytes {row['bytes'].hex(' ').upper()}"


def render_tokens(trace: dict, mode: str = "text") -> Node:
    """Tokens as coloured spans (text mode) or id chips (ids mode); partial tokens as bytes."""
    rows = token_rows(trace)[:TOKEN_CAP]
    if mode == "ids":
        chips = [
            el(
                "li",
                {
                    "class": f"chip tok c{r['k'] % 6}"
                    + (" special" if r["special"] else "")
                    + (" partial" if r["partial"] else ""),
                    "data-t": str(r["k"]),
                    "data-testid": "bpe-token-id",
                    "title": token_title(r),
                },
                str(r["id"]),
            )
            for r in rows
        ]
        return el("ol", {"class": "chips", "data-testid": "bpe-token-view"}, *chips)
    children: list[Node] = []
    at = 0
    for r in rows:
        cls = f"tok c{r['k'] % 6}"
        attrs = {
            "data-t": str(r["k"]),
            "data-testid": "bpe-token",
            "title": token_title(r),
            "data-id": str(r["id"]),
        }
        if r["special"]:
            attrs["class"] = cls + " special"
            children.append(el("span", attrs, r["text"]))
        elif r["partial"]:
            attrs["class"] = cls + " partial"
            inner = [el("span", {"class": "bytes", "data-testid": "bpe-bytes"}, r["label"])]
            if r["text"]:
                inner.append(
                    el(
                        "span",
                        {"class": "completes", "title": "the characters these bytes complete"},
                        *text_nodes(r["text"], at, "equal"),
                    )
                )
            children.append(el("span", attrs, *inner))
        else:
            attrs["class"] = cls
            children.append(el("span", attrs, *text_nodes(r["text"], at, "equal")))
        at += len(r["text"])
    return el("div", {"class": "token-text", "data-testid": "bpe-token-view"}, *children)


def ids_of(trace: dict) -> list[int]:
    """Every id (a trace cut to its first tokens carries all of them in "ids")."""
    if "ids" in trace:
        return list(trace["ids"])
    return [t["id"] for t in trace["tokens"]]


# ------------------------------------------------------------------------------ pre-tokens


def pre_token_list(trace: dict) -> list[dict]:
    """Every pre-token and special token in order, with a key ('seg.piece') to select it."""
    out = []
    for si, seg in enumerate(trace["segments"]):
        if seg["kind"] == "special":
            tok = trace["tokens"][seg["first_token"]]
            out.append(
                {
                    "key": f"{si}.s",
                    "text": tok["text"],
                    "ids": [tok["id"]],
                    "special": True,
                    "whole": True,
                }
            )
            continue
        for pi, p in enumerate(seg["pre_tokens"]):
            out.append(
                {
                    "key": f"{si}.{pi}",
                    "text": p["text"],
                    "ids": list(p["ids"]),
                    "special": False,
                    "whole": bool(p.get("whole")),
                }
            )
    return out


def find_pre_token(trace: dict, key: str | None) -> dict | None:
    for p in pre_token_list(trace):
        if p["key"] == key:
            return p
    return None


def render_pre_tokens(trace: dict, selected: str | None) -> Node:
    """The regex split as chips; each chip is a button that shows its merges."""
    chips = []
    for p in pre_token_list(trace)[:TOKEN_CAP]:
        attrs = {
            "class": "chip pre"
            + (" special" if p["special"] else "")
            + (" selected" if p["key"] == selected else ""),
            "data-p": p["key"],
            "data-testid": "bpe-pre-token",
            "title": ("special token" if p["special"] else "pre-token")
            + f": {len(p['ids'])} token{'s' if len(p['ids']) != 1 else ''} {p['ids']}",
        }
        if not p["special"]:
            attrs.update(
                {
                    "role": "button",
                    "tabindex": "0",
                    "aria-pressed": "true" if p["key"] == selected else "false",
                }
            )
        chips.append(el("span", attrs, *text_nodes(p["text"], 0, "equal")))
    # A group, not a list: a list's items cannot be buttons.
    return el(
        "div",
        {
            "class": "chips",
            "data-testid": "bpe-pre-tokens",
            "role": "group",
            "aria-label": "pre-tokens",
        },
        *chips,
    )


# ------------------------------------------------------------------------------------ chat


def render_chat(parts: list[dict] | None, error: str | None) -> Node:
    """The rendered conversation: markers as single special tokens, text as ordinary ones."""
    if error is not None:
        hint = None
        if "no chat markers" in error:
            hint = el(
                "span",
                {"class": "muted"},
                " In this page: pick Qwen3 (ChatML), or open "
                "o200k_base's file renamed o200k_harmony.tiktoken (harmony).",
            )
        return el(
            "p",
            {"class": "chat-error", "data-testid": "bpe-chat-error", "role": "status"},
            error,
            hint,
        )
    items = []
    for k, p in enumerate(parts or []):
        marker = p["kind"] == "marker"
        items.append(
            el(
                "li",
                {
                    "class": "chat-part " + ("marker special" if marker else "text"),
                    "data-testid": "bpe-chat-part",
                    "data-kind": p["kind"],
                    "data-ids": json.dumps(p["ids"]),
                    "data-k": str(k),
                },
                el("span", {"class": "chat-text"}, *text_nodes(p["text"], 0, "equal")),
                el("span", {"class": "chat-ids"}, json.dumps(p["ids"])),
            )
        )
    total = sum(len(p["ids"]) for p in parts or [])
    return el(
        "div",
        {"data-testid": "bpe-chat-view"},
        el(
            "p",
            {"class": "muted"},
            f"{total} tokens; markers (shaded) are one special "
            "token each, everything typed is ordinary text.",
        ),
        el("ol", {"class": "chat-parts"}, *items),
    )


# --------------------------------------------------------------------------------- state


def default_bpe() -> dict:
    return {
        "tokenizer": DEFAULT_TOKENIZER,
        "text": DEFAULT_TEXT,
        "specials": False,
        "view": "text",
        "messages": [list(m) for m in DEFAULT_MESSAGES],
    }
