"""The page's state as a share link: the address's fragment, compressed JSON in base64url.

It holds the tokenize tab's text, model (shell/models.py), switches, step and view, and its chat
messages once edited; which tab is open; and, once the Compare or Quirks tab was used, that tab's
state. A link from the former BPE tab opens its model and text in the tokenize tab. Pure Python with no browser imports: pytest checks
links under CPython, and the gallery's examples are links too (tabs/tokenize/gallery.py).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib

from shell import models
from tabs.compare import view as compare_view
from tabs.quirks import view as quirks_view
from tabs.tokenize import chat_view
from tabs.tokenize.view import FAST_KEYS, OPTION_KEYS, STAGES

# The BERT pipeline's steps; another model's are its own stages' names ("replace#2").
STEP_NAMES = tuple(STAGES)
_STEP = re.compile(r"[a-z0-9_]{1,40}(#[0-9]{1,3})?")
TABS = ("wordpiece", "compare", "quirks")
DEFAULT_TEXT = "Héllo, Wörld! 東京"
# Longest fragment accepted, and longest text a link may carry (decompressed bytes).
MAX_LINK_CHARS = 16_000
MAX_STATE_BYTES = 64_000
MAX_LINK_TEXT = 20_000


def default_state() -> dict:
    return {
        "text": DEFAULT_TEXT,
        "tokenizer": "bert-base-uncased",
        "options": dict.fromkeys(OPTION_KEYS, True),
        "fast": dict.fromkeys(FAST_KEYS, True),
        "step": "lowercase",
        "view": "text",
    }


def _bits(flags: dict, keys) -> str:
    return "".join("1" if flags.get(k) else "0" for k in keys)


def encode_state(state: dict) -> str | None:
    """The fragment (without '#') for a state, or None when the text is too long to share.

    >>> decode_state(encode_state(default_state()))[0] == default_state()
    True
    """
    if not isinstance(state["text"], str) or len(state["text"]) > MAX_LINK_TEXT:
        return None
    compact = {
        "t": state["text"],
        "k": state["tokenizer"],
        "o": _bits(state["options"], OPTION_KEYS),
        "f": _bits(state["fast"], FAST_KEYS),
        "s": state["step"],
        "v": state["view"],
    }
    if state.get("chat") is not None:
        if not valid_chat(state["chat"]):
            return None
        compact["m"] = [list(m) for m in state["chat"]]
    # Which tab is open.
    if state.get("tab", "wordpiece") != "wordpiece":
        compact["a"] = state["tab"]
    if state.get("compare") is not None:
        compare = compare_to_link(state["compare"])
        if compare is None:
            return None
        compact["c"] = compare
    if state.get("quirks") is not None:
        if not quirks_view.valid_quirks(state["quirks"]):
            return None
        compact["q"] = quirks_to_link(state["quirks"])
    raw = json.dumps(compact, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    packed = base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")
    if len(packed) > MAX_LINK_CHARS:
        return None
    return "s=" + packed


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def decode_state(fragment: str) -> tuple[dict, str | None]:
    """The state a link's fragment holds, and a message when it could not be used.

    Anything wrong (too long, not base64url, not zlib, not UTF-8, not the expected JSON,
    unknown tokenizer) gives the default state and a short message; never an exception.

    >>> decode_state("s=%%%")
    ({'text': 'Héllo, Wörld! 東京', 'tokenizer': 'bert-base-uncased', \
'options': {'clean_text': True, 'handle_chinese_chars': True, 'strip_accents': True, \
'lowercase': True}, 'fast': {'simd': True, 'page_cache': True, 'lazy_output': True, \
'fused': True}, 'step': 'lowercase', 'view': 'text'}, 'This link is malformed; showing the default view.')
    """
    fragment = (fragment or "").lstrip("#")
    if not fragment:
        return default_state(), None
    malformed = (default_state(), "This link is malformed; showing the default view.")
    too_long = (default_state(), "This link is too long; showing the default view.")
    if len(fragment) > MAX_LINK_CHARS + 2:
        return too_long
    if not fragment.startswith("s="):
        return malformed
    packed = fragment[2:]
    if not packed or not set(packed) <= _B64URL:
        return malformed
    try:
        data = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(data, MAX_STATE_BYTES)
        if inflater.unconsumed_tail:
            return too_long
        if not inflater.eof:
            return malformed
        compact = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, zlib.error, RecursionError):
        return malformed
    if not isinstance(compact, dict):
        return malformed
    state = default_state()
    text, tok = compact.get("t"), compact.get("k")
    opts, fast = compact.get("o"), compact.get("f")
    step, mode = compact.get("s"), compact.get("v")
    if not isinstance(text, str) or len(text) > MAX_LINK_TEXT:
        return too_long if isinstance(text, str) else malformed
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return malformed
    if tok not in models.BY_ID:
        return (
            default_state(),
            "This link names a tokenizer the page does not have; showing the default view.",
        )
    for bits, keys in ((opts, OPTION_KEYS), (fast, FAST_KEYS)):
        if not isinstance(bits, str) or len(bits) != len(keys) or not set(bits) <= {"0", "1"}:
            return malformed
    bert_step = step in STEP_NAMES
    other_step = isinstance(step, str) and tok != models.DEFAULT and _STEP.fullmatch(step)
    if not (bert_step or other_step) or mode not in ("text", "ids"):
        return malformed
    state.update(
        text=text,
        tokenizer=tok,
        step=step,
        view=mode,
        options={k: b == "1" for k, b in zip(OPTION_KEYS, opts)},
        fast={k: b == "1" for k, b in zip(FAST_KEYS, fast)},
    )
    if "m" in compact:
        if not valid_chat(compact["m"]):
            return malformed
        state["chat"] = [list(m) for m in compact["m"]]
    # Older links have neither key and open as before.
    tab = compact.get("a", "wordpiece")
    if tab not in (*TABS, "bpe"):
        return malformed
    if tab not in ("wordpiece", "bpe"):
        state["tab"] = tab
    if "b" in compact:
        bpe = bpe_from_link(compact["b"])
        if bpe is None:
            return malformed
        if tab == "bpe":
            # What the former BPE tab showed: its model and text, here with the merges.
            state.update(tokenizer=bpe["tokenizer"], text=bpe["text"], view=bpe["view"])
            state.update(step="model", chat=bpe["messages"])
    if "c" in compact:
        compare = compare_from_link(compact["c"])
        if compare is None:
            return malformed
        state["compare"] = compare
    if "q" in compact:
        quirks = quirks_from_link(compact["q"])
        if quirks is None:
            return malformed
        state["quirks"] = quirks
    return state, None


# ------------------------------------------------------------- the former BPE tab's links

# Its built-in tokenizers, all in the tokenize tab's picker under the same ids.
OLD_BPE_TOKENIZERS = ("o200k_base", "cl100k_base", "p50k_base", "r50k_base", "gpt2", "qwen3")


def _clean(s) -> bool:
    return (
        isinstance(s, str)
        and len(s) <= MAX_LINK_TEXT
        and not any(0xD800 <= ord(c) <= 0xDFFF for c in s)
    )


def bpe_from_link(compact) -> dict | None:
    """The former BPE tab's state a link's compact form holds, or None when it is not valid.

    >>> bpe_from_link({"t": "hi", "s": 0, "v": "ids", "m": [["user", "x"]], "k": "gpt2"})
    {'tokenizer': 'gpt2', 'text': 'hi', 'view': 'ids', 'messages': [['user', 'x']]}
    >>> bpe_from_link({"t": "x", "s": 2, "v": "text", "m": []}) is None
    True
    """
    if not isinstance(compact, dict):
        return None
    text, specials, mode, messages = (
        compact.get("t"),
        compact.get("s"),
        compact.get("v"),
        compact.get("m"),
    )
    name = compact.get("k", OLD_BPE_TOKENIZERS[0])
    if (
        not _clean(text)
        or specials not in (0, 1)
        or isinstance(specials, bool)
        or mode not in ("text", "ids")
        or name not in OLD_BPE_TOKENIZERS
        or not valid_chat(messages)
    ):
        return None
    return {"tokenizer": name, "text": text, "view": mode, "messages": [list(m) for m in messages]}


def valid_chat(messages) -> bool:
    """Whether chat messages can travel in a link: [role, content] pairs of clean text."""
    return chat_view.valid_messages(messages) and all(_clean(x) for m in messages for x in m)


# ------------------------------------------------------------------- the Compare tab's part


def compare_to_link(compare: dict) -> dict | None:
    """The compact form a link carries for the Compare tab (its models and text), or None when
    the text is too long to share."""
    if not _clean(compare.get("text")):
        return None
    return {"m": list(compare["models"]), "t": compare["text"]}


def compare_from_link(compact) -> dict | None:
    """The Compare state a link's compact form holds, or None when it is not valid.

    >>> compare_from_link(compare_to_link(compare_view.default_compare()))["models"]
    ['bert-base-uncased', 'gpt2']
    >>> compare_from_link({"m": ["gpt2"], "t": "x"}) is None
    True
    """
    if not isinstance(compact, dict):
        return None
    ids, text = compact.get("m"), compact.get("t")
    if not _clean(text) or not compare_view.valid_models(ids):
        return None
    return {"models": list(ids), "text": text}


# -------------------------------------------------------------------- the Quirks tab's part


def quirks_to_link(quirks: dict) -> dict:
    """The compact form a link carries for the Quirks tab: its models and examples."""
    return {
        "m": list(quirks["models"]),
        "w": quirks["word"],
        "l": quirks["letter"],
        "n": list(quirks["numbers"]),
        "v": list(quirks["variants"]),
        "r": quirks["rare"],
    }


def quirks_from_link(compact) -> dict | None:
    """The Quirks state a link's compact form holds, or None when it is not valid.

    >>> q = quirks_view.default_quirks()
    >>> quirks_from_link(quirks_to_link(q)) == q
    True
    >>> quirks_from_link({**quirks_to_link(q), "n": ["1"]}) is None
    True
    """
    if not isinstance(compact, dict):
        return None
    quirks = {
        "models": compact.get("m"),
        "word": compact.get("w"),
        "letter": compact.get("l"),
        "numbers": compact.get("n"),
        "variants": compact.get("v"),
        "rare": compact.get("r"),
    }
    if not quirks_view.valid_quirks(quirks):
        return None
    return {**quirks, "models": list(quirks["models"])}
