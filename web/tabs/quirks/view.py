"""What the Quirks tab shows: the textbook's quirks explained by tokenization, live, through the
models picked (two to four, the Compare tab's pickers): where a letter's occurrences fall in a
word's tokens, how numbers split into tokens, and which small variants of a text change its ids.

Every example is editable and traced by every model picked; a trace is the tokenize tab's (ids,
tokens, char offsets). Pure Python with no browser imports: pytest checks it under CPython,
the page runs it in Pyodide.

    >>> letter_hits("strawberry", "r", [(0, 0), (0, 5), (5, 10), (0, 0)])
    [(2, 1, 2), (7, 2, 2), (8, 2, 3)]
    >>> differing_variants([[1, 2], [3], [1, 2], [1, 2, 4]])
    [False, True, False, True]
"""

from __future__ import annotations

from shell import models
from shell.dom import Node, el
from tabs.compare import view as compare_view
from tabs.tokenize import view as tokenize_view

DEFAULT_MODELS = ("bert-base-uncased", "gpt2", "cl100k_base")
DEFAULT_WORD = "strawberry"
DEFAULT_LETTER = "r"
DEFAULT_NUMBERS = ("1234567", "1999 2024 2025", "$1,234.56")
DEFAULT_VARIANTS = ("Привет", " Привет", "ПРИВЕТ", "Привет ")
# One token in r50k_base and GPT-2 that their training text hardly ever produced.
DEFAULT_RARE = " SolidGoldMagikarp"
# How many of a vocabulary's entries that do not encode back to themselves are listed.
MISSES_SHOWN = 50
# Longest example (chars) and letter the tab takes; the inputs' maxlength says the same.
MAX_EXAMPLE = 200
MAX_LETTER = 4


def default_quirks() -> dict:
    return {
        "models": list(DEFAULT_MODELS),
        "word": DEFAULT_WORD,
        "letter": DEFAULT_LETTER,
        "numbers": list(DEFAULT_NUMBERS),
        "variants": list(DEFAULT_VARIANTS),
        "rare": DEFAULT_RARE,
    }


def _example(s, limit=MAX_EXAMPLE) -> bool:
    return isinstance(s, str) and len(s) <= limit and not any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def valid_quirks(q) -> bool:
    """Whether `q` is a state the tab can show (a link's, say)."""
    return (
        isinstance(q, dict)
        and compare_view.valid_models(q.get("models"))
        and _example(q.get("word"))
        and _example(q.get("letter"), MAX_LETTER)
        and isinstance(q.get("numbers"), list)
        and len(q["numbers"]) == len(DEFAULT_NUMBERS)
        and all(_example(s) for s in q["numbers"])
        and isinstance(q.get("variants"), list)
        and len(q["variants"]) == len(DEFAULT_VARIANTS)
        and all(_example(s) for s in q["variants"])
        and _example(q.get("rare"))
    )


def texts(q: dict) -> list[str]:
    """Every text a model traces, in order: the word, the numbers, the variants, the rare
    token's text."""
    return [q["word"], *q["numbers"], *q["variants"], q["rare"]]


# --------------------------------------------------------------------------------- letters


def letter_hits(word: str, letter: str, offsets) -> list[tuple[int, int, int]]:
    """Where `letter` (its first char, any case) occurs in `word`: (char index, index of the
    first token whose span holds it, position inside that token's span) for each occurrence.
    An occurrence no token spans (a normalizer dropped it) has token -1."""
    if not letter:
        return []
    want = letter[0].casefold()
    out = []
    for i, c in enumerate(word):
        if c.casefold() != want:
            continue
        k = next((k for k, (s, e) in enumerate(offsets) if s <= i < e), -1)
        out.append((i, k, i - offsets[k][0] if k >= 0 else -1))
    return out


# -------------------------------------------------------------------------------- variants


def differing_variants(ids_list) -> list[bool]:
    """For each variant, whether its ids differ from the first variant's."""
    return [ids != ids_list[0] for ids in ids_list] if ids_list else []


# ---------------------------------------------------------------------------------- drawing


def render_ids(ids, testid: str = "q-ids") -> Node:
    return el(
        "code",
        {"class": "ids-line cmp-ids", "data-testid": testid},
        "[" + ", ".join(str(i) for i in ids) + "]",
    )


def render_tokens(trace: dict, marked=(), testid: str = "q-tokens") -> Node:
    return tokenize_view.render_tokens_over_text(trace, "text", marked, testid)


def _model_block(model_id: str, body: list[Node], status: str) -> Node:
    m = models.BY_ID[model_id]
    return el(
        "div",
        {
            "class": "cmp-row",
            "data-testid": "q-model",
            "data-model": model_id,
            "data-state": "ready" if not status else "loading",
        },
        el("div", {"class": "cmp-head"}, el("h3", {"class": "cmp-name"}, m.label)),
        el("div", {}, *body) if not status else el("p", {"class": "muted"}, status),
    )


def render_letters(q: dict, model_ids, traces: dict, statuses: dict) -> list[Node]:
    """Per model: the word's tokens (those holding the letter underlined), then each occurrence
    of the letter: which token holds it and where inside; and how many tokens share them."""
    out = []
    letter = q["letter"][:1]
    for m in model_ids:
        trace = (traces.get(m) or [None])[0]
        if trace is None:
            out.append(_model_block(m, [], statuses.get(m, "waiting…")))
            continue
        hits = letter_hits(q["word"], letter, trace["offsets"])
        holding = sorted({k for _, k, _ in hits if k >= 0})
        items = []
        for i, k, pos in hits:
            if k < 0:
                what = "dropped before the model"
            else:
                what = f"token {k} {trace['tokens'][k]!r}, position {pos}"
            items.append(
                el(
                    "li",
                    {
                        "data-testid": "q-hit",
                        "data-char": str(i),
                        "data-token": str(k),
                        "data-pos": str(pos),
                    },
                    f"char {i}: {what}",
                )
            )
        n = len(hits)
        summary = (
            f"{n} × {letter!r} in {len(holding)} of the word's tokens"
            if letter
            else "no letter to look for"
        )
        body = [
            render_tokens(trace, holding),
            render_ids(trace["ids"]),
            el("p", {"class": "muted", "data-testid": "q-letter-summary"}, summary),
            el("ol", {"class": "q-hits", "data-testid": "q-hits"}, *items),
        ]
        out.append(_model_block(m, body, ""))
    return out


def render_numbers(q: dict, model_ids, traces: dict, statuses: dict) -> list[Node]:
    """Per model: each number example's tokens (its digit grouping) and ids."""
    first = 1
    out = []
    for m in model_ids:
        got = traces.get(m)
        if got is None:
            out.append(_model_block(m, [], statuses.get(m, "waiting…")))
            continue
        body = []
        for j in range(len(q["numbers"])):
            trace = got[first + j]
            body.append(
                el(
                    "div",
                    {"class": "q-example", "data-testid": "q-number", "data-example": str(j)},
                    render_tokens(trace),
                    render_ids(trace["ids"]),
                )
            )
        out.append(_model_block(m, body, ""))
    return out


def render_variants(q: dict, model_ids, traces: dict, statuses: dict) -> list[Node]:
    """Per model: each variant's tokens and ids side by side, the variants whose ids differ
    from the first one's marked."""
    first = 1 + len(q["numbers"])
    out = []
    for m in model_ids:
        got = traces.get(m)
        if got is None:
            out.append(_model_block(m, [], statuses.get(m, "waiting…")))
            continue
        chosen = got[first : first + len(q["variants"])]
        differ = differing_variants([t["ids"] for t in chosen])
        rows = []
        for j, (trace, d) in enumerate(zip(chosen, differ)):
            mark = "first" if j == 0 else ("ids differ" if d else "same ids")
            rows.append(
                el(
                    "div",
                    {
                        "class": "q-variant" + (" differ" if d else ""),
                        "data-testid": "q-variant",
                        "data-example": str(j),
                        "data-differs": "1" if d else "0",
                    },
                    el("span", {"class": "q-mark muted", "data-testid": "q-mark"}, mark),
                    render_tokens(trace),
                    render_ids(trace["ids"]),
                )
            )
        out.append(_model_block(m, rows, ""))
    return out


def render_rare(q: dict, model_ids, traces: dict, statuses: dict, scans: dict) -> list[Node]:
    """Per model: the rare example's tokens and ids, and, once its vocabulary was scanned
    (`scans`: model id -> the worker's roundTrip answer, its neverProduced answer under
    "unseen"), the entries whose text does not encode back to them and those the bundled
    corpora never produce."""
    out = []
    for m in model_ids:
        got = traces.get(m)
        if got is None:
            out.append(_model_block(m, [], statuses.get(m, "waiting…")))
            continue
        trace = got[-1]
        n = len(trace["ids"])
        body = [
            render_tokens(trace),
            render_ids(trace["ids"]),
            el(
                "p",
                {"class": "muted", "data-testid": "q-rare-count"},
                f"{n} token{'s' if n != 1 else ''}",
            ),
        ]
        scan = scans.get(m)
        if scan is not None:
            items = [
                el(
                    "li",
                    {"data-testid": "q-miss", "data-id": str(miss["id"])},
                    f"{miss['id']} {miss['token']!r}: {miss['text']!r} → {miss['ids']}",
                )
                for miss in scan["first"]
            ]
            body.append(
                el(
                    "p",
                    {"data-testid": "q-miss-count", "data-count": str(scan["count"])},
                    f"{scan['count']:,} of {scan['vocab_size']:,} entries do not encode back to "
                    f"themselves; the first {len(items)}:",
                )
            )
            body.append(el("ol", {"class": "q-hits", "data-testid": "q-misses"}, *items))
            unseen = scan.get("unseen")
            if unseen is not None:
                body += render_unseen(unseen, scan["vocab_size"])
        out.append(_model_block(m, body, ""))
    return out


def render_unseen(unseen: dict, vocab_size: int) -> list[Node]:
    """How many vocabulary entries the bundled corpora never produce, and the longest of them.

    >>> got = {"count": 2, "corpora": ["en", "zh"], "bytes": 2048, "documents": 3,
    ...        "first": [{"id": 7, "token": "ĠSolid", "text": " Solid"}]}
    >>> [n.attrs.get("data-count") for n in render_unseen(got, 10)]
    ['2', None]
    """
    items = [
        el("li", {"data-testid": "q-unseen", "data-id": str(u["id"])}, f"{u['id']} {u['text']!r}")
        for u in unseen["first"]
    ]
    kb = unseen["bytes"] / 1024
    return [
        el(
            "p",
            {"data-testid": "q-unseen-count", "data-count": str(unseen["count"])},
            f"{unseen['count']:,} of {vocab_size:,} entries never come out of the bundled "
            f"corpora ({', '.join(unseen['corpora'])}: {unseen['documents']:,} documents, "
            f"{kb:,.0f} KB, each encoded alone; added tokens not counted); the longest "
            f"{len(items)}:",
        ),
        el("ol", {"class": "q-hits", "data-testid": "q-unseens"}, *items),
    ]
