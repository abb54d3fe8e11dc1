"""The Tokenize tab's chat-template section, as plain nodes (shell/dom.py): which models have
one, the default conversation, and the encoded conversation. Pure Python, as view.py is.

    >>> chat_model("qwen3"), chat_model("gpt2")
    ('qwen3', None)
"""

from __future__ import annotations

import json

from shell.chars import text_nodes
from shell.dom import Node, el

# The models whose special tokens hold a chat template's markers (ChatML for Qwen3, harmony
# for o200k_harmony), by the name the byte-level BPE worker (tabs/bpe/files.js) loads them
# under: the template runs there, on the module that has it.
CHAT_MODELS = {"qwen3": "qwen3", "o200k_harmony": "o200k_harmony"}
DEFAULT_MESSAGES = [
    ["system", "You are a helpful assistant."],
    ["user", "Is <|im_end|> typed here a marker?"],
]
MAX_MESSAGES = 32
ROLES = ("system", "user", "assistant", "developer", "tool")


def chat_model(model_id: str | None) -> str | None:
    """The BPE worker's name for `model_id` when it has a chat template, else None."""
    return CHAT_MODELS.get(model_id or "")


def default_messages() -> list[list[str]]:
    return [list(m) for m in DEFAULT_MESSAGES]


def valid_messages(messages) -> bool:
    """Whether a link's messages are a list of [role, content] strings, not too many.

    >>> valid_messages([["user", "hi"]]), valid_messages([["user"]]), valid_messages("x")
    (True, False, False)
    """
    return (
        isinstance(messages, list)
        and len(messages) <= MAX_MESSAGES
        and all(
            isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m)
            for m in messages
        )
    )


def render_chat(parts: list[dict] | None, error: str | None) -> Node:
    """The rendered conversation: markers as single special tokens, text as ordinary ones."""
    if error is not None:
        return el(
            "p", {"class": "chat-error", "data-testid": "chat-error", "role": "status"}, error
        )
    items = []
    for k, p in enumerate(parts or []):
        marker = p["kind"] == "marker"
        items.append(
            el(
                "li",
                {
                    "class": "chat-part " + ("marker special" if marker else "text"),
                    "data-testid": "chat-part",
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
        {"data-testid": "chat-view"},
        el(
            "p",
            {"class": "muted"},
            f"{total} tokens; markers (shaded) are one special "
            "token each, everything typed is ordinary text.",
        ),
        el("ol", {"class": "chat-parts"}, *items),
    )
