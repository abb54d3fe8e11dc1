"""What the Compare tab shows: one text through two to four of the picker's models
(shell/models.py), a row per model with its tokens drawn over the text (the tokenize tab's
token view), its counts, and the tokens where the models' boundaries differ marked.

A boundary is a char offset where a model starts a token (tokens with an empty span, the
special tokens a post-processor adds, start none). An offset where some model starts a token
and another does not is a differing boundary; a token whose span [start, end) holds one is
marked in its row.

Pure Python with no browser imports: pytest checks it under CPython, the page runs it in
Pyodide on the worker's traces.

    >>> differing_boundaries([[(0, 2), (2, 4)], [(0, 1), (1, 4)]])
    [1, 2]
    >>> marked_tokens([(0, 0), (0, 2), (2, 4)], [1, 2])
    [1, 2]
"""

from __future__ import annotations

from shell import models
from shell.dom import Node, el
from tabs.tokenize import view as tokenize_view

MIN_MODELS = 2
MAX_MODELS = 4
DEFAULT_MODELS = ("bert-base-uncased", "gpt2")
DEFAULT_TEXT = "Tokenizers differ: naïve café, Привет мир, 東京タワー 😀"
# Longest text the tab tokenizes (chars): each model traces all of it.
MAX_TEXT = 100_000


def default_compare() -> dict:
    return {"models": list(DEFAULT_MODELS), "text": DEFAULT_TEXT}


def valid_models(ids) -> bool:
    """Whether `ids` is a set of models the tab can show: 2 to 4 distinct picker models."""
    return (
        isinstance(ids, list)
        and MIN_MODELS <= len(ids) <= MAX_MODELS
        and all(isinstance(m, str) and m in models.BY_ID for m in ids)
        and len(set(ids)) == len(ids)
    )


# ------------------------------------------------------------------------------ boundaries


def token_starts(offsets) -> set[int]:
    """The char offsets where this model starts a token."""
    return {start for start, end in offsets if end > start}


def differing_boundaries(all_offsets) -> list[int]:
    """The offsets where at least one model starts a token and at least one other does not."""
    starts = [token_starts(offsets) for offsets in all_offsets]
    if not starts:
        return []
    return sorted(set().union(*starts) - set.intersection(*starts))


def marked_tokens(offsets, boundaries) -> list[int]:
    """The indices of the tokens whose span holds a differing boundary."""
    points = sorted(boundaries)
    out = []
    for k, (start, end) in enumerate(offsets):
        if end <= start:
            continue
        # The first boundary at or after the token's start.
        lo, hi = 0, len(points)
        while lo < hi:
            mid = (lo + hi) // 2
            if points[mid] < start:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(points) and points[lo] < end:
            out.append(k)
    return out


# ---------------------------------------------------------------------------------- counts


def word_count(text: str) -> int:
    """Whitespace-separated words (str.split), the denominator of tokens per word."""
    return len(text.split())


def counts(text: str, tokens: int) -> dict:
    """A row's figures: tokens (with the special tokens the model adds), chars per token and
    tokens per word.

    >>> counts("Hi there", 4)
    {'tokens': 4, 'chars': 8, 'words': 2, 'chars_per_token': 2.0, 'tokens_per_word': 2.0}
    """
    chars = len(text)
    words = word_count(text)
    return {
        "tokens": tokens,
        "chars": chars,
        "words": words,
        "chars_per_token": chars / tokens if tokens else 0.0,
        "tokens_per_word": tokens / words if words else 0.0,
    }


def render_counts(c: dict) -> Node:
    parts = [
        ("tokens", f"{c['tokens']:,}"),
        ("chars/token", f"{c['chars_per_token']:.2f}"),
        ("tokens/word", f"{c['tokens_per_word']:.2f}"),
    ]
    return el(
        "dl",
        {"class": "counts", "data-testid": "cmp-counts"},
        *(
            el(
                "div",
                {"class": "count", "data-testid": f"cmp-count-{key.replace('/', '-per-')}"},
                el("dt", {}, key),
                el("dd", {}, value),
            )
            for key, value in parts
        ),
    )


# ---------------------------------------------------------------------------------- rows


def render_row(model_id: str, text: str, trace: dict | None, marked, status: str = "") -> Node:
    """One model's row for `text`: its name and figures beside its tokens over the text, the
    tokens with a differing boundary marked (`marked`: their indices); until its trace is in,
    `status`."""
    m = models.BY_ID[model_id]
    head = [el("h3", {"class": "cmp-name"}, m.label)]
    body: Node
    if trace is None:
        body = el("p", {"class": "muted", "data-testid": "cmp-status"}, status or "waiting…")
    else:
        total = tokenize_view.totals(trace)
        c = counts(text, total["tokens"])
        head.append(render_counts(c))
        n = len(marked)
        head.append(
            el(
                "p",
                {"class": "muted cmp-differ-count", "data-testid": "cmp-differ-count"},
                f"{n} token{'s' if n != 1 else ''} at a differing boundary",
            )
        )
        body = el(
            "div",
            {},
            tokenize_view.render_tokens_over_text(trace, "text", marked, "cmp-tokens"),
            el(
                "code",
                {"class": "ids-line cmp-ids", "data-testid": "cmp-ids"},
                "[" + ", ".join(str(i) for i in trace["ids"]) + "]",
            ),
        )
    return el(
        "section",
        {
            "class": "cmp-row",
            "data-testid": "cmp-row",
            "data-model": model_id,
            "data-state": "ready" if trace is not None else "loading",
            "aria-label": m.label,
        },
        el("div", {"class": "cmp-head"}, *head),
        body,
    )


def render_rows(model_ids, text: str, traces: dict, statuses: dict | None = None) -> list[Node]:
    """Every model's row for `text`; the boundaries compared are those of the models whose
    trace of it is in (`traces`: model id -> trace)."""
    ready = [m for m in model_ids if traces.get(m) is not None]
    boundaries = differing_boundaries([traces[m]["offsets"] for m in ready])
    statuses = statuses or {}
    rows = []
    for m in model_ids:
        trace = traces.get(m)
        marked = marked_tokens(trace["offsets"], boundaries) if trace is not None else []
        rows.append(render_row(m, text, trace, marked, statuses.get(m, "")))
    return rows
