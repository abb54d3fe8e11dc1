"""What the page shows for one trace, as a tree of plain nodes.

Pure Python with no browser imports, so the same code runs under CPython (pytest renders
traces from the native module) and under Pyodide, where app.py turns the nodes into DOM
elements. User text only ever becomes a text node, never markup: there are no HTML strings.

    >>> tree = render_trace({"stages": [{"name": "raw", "text": "Hi", "micros": 0.5}],
    ...                      "pre_tokens": [], "tokens": ["[CLS]", "hi", "[SEP]"],
    ...                      "ids": [101, 7632, 102], "offsets": [[0, 0], [0, 2], [0, 0]],
    ...                      "micros": 3.0})
    >>> tree.find("ids").text()
    '[101, 7632, 102]'
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

# Stage names as the core reports them, with the label and the one-line explanation shown.
STAGES: dict[str, tuple[str, str]] = {
    "raw": ("Input", "the text as typed"),
    "clean": ("Clean text", "drop control characters, map every whitespace to a space"),
    "cjk": ("CJK spacing", "put spaces around CJK ideographs, so each becomes a word"),
    "nfd": ("NFD", "canonical decomposition: é becomes e + U+0301"),
    "strip_accents": ("Strip accents", "drop combining marks (category Mn)"),
    "lowercase": ("Lowercase", "lowercase every character"),
}

# difflib's matcher is quadratic in the worst case; beyond this many characters a stage is
# shown without change highlighting so typing stays responsive.
DIFF_LIMIT = 4000


@dataclass
class Node:
    """An element: tag, attributes, and children that are nodes or text."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """The concatenated text below this node, like the DOM's textContent."""
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find(self, testid: str) -> Node | None:
        """The first node (depth first) whose data-testid is `testid`."""
        if self.attrs.get("data-testid") == testid:
            return self
        for child in self.children:
            if isinstance(child, Node) and (found := child.find(testid)) is not None:
                return found
        return None

    def find_all(self, testid: str) -> list[Node]:
        found = [self] if self.attrs.get("data-testid") == testid else []
        for child in self.children:
            if isinstance(child, Node):
                found.extend(child.find_all(testid))
        return found


def el(tag: str, attrs: dict[str, str] | None = None, *children: Node | str | None) -> Node:
    """A node; None children are dropped so optional parts can be written inline."""
    return Node(tag, dict(attrs or {}), [c for c in children if c is not None])


def stage_label(name: str) -> str:
    return STAGES.get(name, (name, ""))[0]


def format_micros(micros: float) -> str:
    """A duration for people: '0.42 µs', '12.5 µs', '1.25 ms'."""
    if micros < 10:
        return f"{micros:.2f} µs"
    if micros < 1000:
        return f"{micros:.1f} µs"
    return f"{micros / 1000:.2f} ms"


def diff_spans(before: str, after: str) -> list[tuple[str, bool]]:
    """Splits `after` into runs, each marked True where it differs from `before`.

    >>> diff_spans("Héllo", "Hello")
    [('H', False), ('e', True), ('llo', False)]
    """
    if before == after:
        return [(after, False)] if after else []
    if len(before) > DIFF_LIMIT or len(after) > DIFF_LIMIT:
        return [(after, True)]
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    spans: list[tuple[str, bool]] = []
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if j1 == j2:  # a pure deletion leaves nothing in `after` to mark
            continue
        changed = op != "equal"
        if spans and spans[-1][1] == changed:
            spans[-1] = (spans[-1][0] + after[j1:j2], changed)
        else:
            spans.append((after[j1:j2], changed))
    return spans


def render_stage(stage: dict, previous: str | None, slowest: float) -> Node:
    name, text, micros = stage["name"], stage["text"], float(stage["micros"])
    label, about = STAGES.get(name, (name, ""))
    spans = [(text, False)] if previous is None else diff_spans(previous, text)
    unchanged = previous is not None and previous == text
    width = 100.0 * micros / slowest if slowest > 0 else 0.0
    return el(
        "li",
        {"class": "stage" + (" unchanged" if unchanged else ""), "data-testid": f"stage-{name}"},
        el(
            "div",
            {"class": "stage-head"},
            el("span", {"class": "stage-name"}, label),
            el("span", {"class": "stage-about"}, about),
            el("span", {"class": "badge"}, "unchanged") if unchanged else None,
            el("span", {"class": "stage-time", "data-testid": f"stage-{name}-time"},
               format_micros(micros)),
        ),
        el("span", {"class": "time-bar", "style": f"width: {width:.1f}%"}),
        el(
            "div",
            {"class": "stage-text", "data-testid": f"stage-{name}-text"},
            *(el("mark", {}, run) if changed else run for run, changed in spans),
        ),
    )


def render_tokens(trace: dict) -> Node:
    chips = []
    special = trace.get("special_tokens_mask") or [0] * len(trace["ids"])
    rows = zip(trace["tokens"], trace["ids"], trace["offsets"], special)
    for token, token_id, (start, end), is_special in rows:
        chips.append(
            el(
                "li",
                {"class": "chip token" + (" special" if is_special else ""),
                 "data-testid": "token", "title": f"offsets {start}–{end}"},
                el("span", {"class": "token-text"}, token),
                el("span", {"class": "token-id"}, str(token_id)),
            )
        )
    return el("ol", {"class": "chips", "data-testid": "tokens"}, *chips)


def section_title(title: str, micros: float | None) -> Node:
    time = None if micros is None else el("span", {"class": "section-time"},
                                          format_micros(float(micros)))
    return el("h2", {}, title, time)


def render_trace(trace: dict) -> Node:
    """The whole output section for one run of the pipeline."""
    stages = trace["stages"]
    slowest = max((float(s["micros"]) for s in stages), default=0.0)
    items, previous = [], None
    for stage in stages:
        items.append(render_stage(stage, previous, slowest))
        previous = stage["text"]
    pre_tokens = [
        el("li", {"class": "chip", "title": f"offsets {p['offsets'][0]}–{p['offsets'][1]}"},
           p["text"])
        for p in trace.get("pre_tokens", [])
    ]
    return el(
        "div",
        {"class": "trace"},
        section_title("Normalizer", sum(float(s["micros"]) for s in stages)),
        el("ol", {"class": "stages", "data-testid": "stages"}, *items),
        section_title("Pre-tokenizer", trace.get("pre_tokenize_micros")),
        el("ol", {"class": "chips", "data-testid": "pre-tokens"}, *pre_tokens),
        section_title("Model: tokens and ids", trace.get("model_micros")),
        render_tokens(trace),
        el("p", {"class": "ids-line"}, "ids ", el("code", {"data-testid": "ids"},
                                                    json.dumps(trace["ids"]))),
        el(
            "p",
            {"class": "total", "data-testid": "total"},
            f"{len(trace['ids'])} tokens · whole pipeline {format_micros(float(trace['micros']))}",
        ),
    )
