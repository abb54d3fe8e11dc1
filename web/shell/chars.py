"""Characters and how a text changed: what the inspector says about a char, badges for the
chars that do not show, and the diff between two stages of a text (shared by the tabs' views).

Pure Python with no browser imports (see shell/dom.py).
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass

from shell.dom import Node, el

# difflib's matcher is quadratic in the worst case; used only when a trace has no alignment.
DIFF_LIMIT = 4000
# The input char index the core gives chars a normalizer put before the text (Prepend).
AT_START = 0xFFFFFFFF


# ------------------------------------------------------------------------------- invisibles

# Short labels for characters that do not show, or look like another one.
INVISIBLE_LABELS = {
    " ": "·",
    "\t": "TAB",
    "\n": "LF",
    "\r": "CR",
    "\u00a0": "NBSP",
    "\u00ad": "SHY",
    "\u200b": "ZWSP",
    "\u200c": "ZWNJ",
    "\u200d": "ZWJ",
    "\u200e": "LRM",
    "\u200f": "RLM",
    "\u2028": "LSEP",
    "\u2029": "PSEP",
    "\u2060": "WJ",
    "\ufeff": "BOM",
    "\u034f": "CGJ",
    "\u3000": "IDSP",
    "\u180e": "MVS",
    "\ufffd": "U+FFFD",
    "\u0000": "NUL",
    "\u001b": "ESC",
    "\u007f": "DEL",
}


def invisible_label(c: str) -> str | None:
    """The badge for a char that would not show, or None for an ordinary visible char.

    >>> [invisible_label(c) for c in " a\\u200b\\u00ad\\x07\\u2003"]
    ['·', None, 'ZWSP', 'SHY', 'U+0007', 'U+2003']
    """
    if c in INVISIBLE_LABELS:
        return INVISIBLE_LABELS[c]
    # str.isprintable is False exactly for categories C* (controls, format, unassigned,
    # surrogates, private use) and Z* other than ' ': the chars that do not show.
    if not c.isprintable():
        return f"U+{ord(c):04X}"
    return None


def char_name(c: str) -> str:
    """The Unicode name, or a descriptive stand-in for chars that have none (controls)."""
    name = unicodedata.name(c, "")
    if name:
        return name
    cat = unicodedata.category(c)
    return {
        "Cc": "<control>",
        "Cs": "<surrogate>",
        "Co": "<private use>",
        "Cn": "<unassigned>",
    }.get(cat, "<no name>")


CATEGORY_NAMES = {
    "Lu": "uppercase letter",
    "Ll": "lowercase letter",
    "Lt": "titlecase letter",
    "Lm": "modifier letter",
    "Lo": "other letter",
    "Mn": "nonspacing mark",
    "Mc": "spacing mark",
    "Me": "enclosing mark",
    "Nd": "decimal number",
    "Nl": "letter number",
    "No": "other number",
    "Pc": "connector punctuation",
    "Pd": "dash punctuation",
    "Ps": "open punctuation",
    "Pe": "close punctuation",
    "Pi": "initial punctuation",
    "Pf": "final punctuation",
    "Po": "other punctuation",
    "Sm": "math symbol",
    "Sc": "currency symbol",
    "Sk": "modifier symbol",
    "So": "other symbol",
    "Zs": "space separator",
    "Zl": "line separator",
    "Zp": "paragraph separator",
    "Cc": "control",
    "Cf": "format",
    "Cs": "surrogate",
    "Co": "private use",
    "Cn": "unassigned",
}


def char_info(c: str, origin: int | None, original: str | None = None) -> dict[str, str]:
    """What the inspector shows for one char; `origin` is its input char index.

    >>> char_info("é", 1, "Héllo")["utf8"]
    'C3 A9'
    """
    cat = unicodedata.category(c)
    info = {
        "char": c,
        "code_point": f"U+{ord(c):04X}",
        "name": char_name(c),
        "category": f"{cat} ({CATEGORY_NAMES.get(cat, '?')})",
        "utf8": " ".join(f"{b:02X}" for b in c.encode("utf-8", "surrogatepass")),
        "origin": "—",
    }
    if origin == AT_START:
        info["origin"] = "no input char: inserted before the text"
    elif origin is not None:
        info["origin"] = f"input char {origin}"
        if original is not None and 0 <= origin < len(original):
            o = original[origin]
            info["origin"] += f": {invisible_label(o) or o} (U+{ord(o):04X})"
    return info


# ----------------------------------------------------------------------------------- diffs


def expand_runs(runs) -> list[int]:
    """The core's run-length alignment, (first, len, step) per run, one index per char.

    >>> expand_runs([(0, 3, 1), (3, 2, 0)])
    [0, 1, 2, 3, 3]
    """
    out: list[int] = []
    for first, length, step in runs:
        if step:
            out.extend(range(first, first + length))
        else:
            out.extend([first] * length)
    return out


@dataclass
class Span:
    """A run of one stage's text: kind is equal, insert or replace (text is the new text,
    old the text it replaced), or delete (text empty, old what was removed). `start` is the
    index of its first char in the stage's text."""

    kind: str
    text: str
    old: str
    start: int


def _append(spans: list[Span], kind: str, text: str, old: str, start: int) -> None:
    if not text and not old:
        return
    if (
        spans
        and spans[-1].kind == kind
        and (kind != "equal" or spans[-1].start + len(spans[-1].text) == start)
    ):
        spans[-1].text += text
        spans[-1].old += old
    else:
        spans.append(Span(kind, text, old, start))


def _local_diff(spans: list[Span], before: str, after: str, start: int) -> None:
    """The changes between two short strings, appended to `spans`."""
    if before == after:
        _append(spans, "equal", after, "", start)
        return
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        old, new = before[i1:i2], after[j1:j2]
        kind = {"equal": "equal", "insert": "insert", "delete": "delete"}.get(op, "replace")
        _append(spans, kind, new, "" if kind == "equal" else old, start + j1)


def diff_stages(before: str, after: str, before_orig=None, after_orig=None) -> list[Span]:
    """How `after` differs from `before`, as spans covering `after` plus deletion markers.

    With alignments (each char's input index, from the trace), chars are grouped by the
    input char they came from and only within a group are the two texts compared: linear
    in the text, and exact about where each change came from. Without, difflib on the whole.

    >>> [(s.kind, s.text, s.old) for s in diff_stages("Héllo", "Hello")]
    [('equal', 'H', ''), ('replace', 'e', 'é'), ('equal', 'llo', '')]
    >>> [(s.kind, s.text) for s in diff_stages("ab", "_ab", [0, 1], [AT_START, 0, 1])]
    [('insert', '_'), ('equal', 'ab')]
    """
    spans: list[Span] = []
    if before_orig is None or after_orig is None:
        if len(before) > DIFF_LIMIT or len(after) > DIFF_LIMIT:
            _append(
                spans,
                "replace" if before != after else "equal",
                after,
                "" if before == after else before,
                0,
            )
            return spans
        _local_diff(spans, before, after, 0)
        return spans
    i = j = 0
    nb, na = len(before_orig), len(after_orig)
    while i < nb or j < na:
        # The next input char either side still holds; both sides are in input order, after
        # the chars a normalizer put before the text (Prepend), which come from none.
        if (i < nb and before_orig[i] == AT_START) or (j < na and after_orig[j] == AT_START):
            o = AT_START
        else:
            o = min(before_orig[i] if i < nb else 1 << 62, after_orig[j] if j < na else 1 << 62)
        i2 = i
        while i2 < nb and before_orig[i2] == o:
            i2 += 1
        j2 = j
        while j2 < na and after_orig[j2] == o:
            j2 += 1
        _local_diff(spans, before[i:i2], after[j:j2], j)
        i, j = i2, j2
    return spans


def diff_spans(before: str, after: str) -> list[tuple[str, bool]]:
    """Splits `after` into runs, each marked True where it differs from `before`.

    >>> diff_spans("Héllo", "Hello")
    [('H', False), ('e', True), ('llo', False)]
    """
    out: list[tuple[str, bool]] = []
    for span in diff_stages(before, after):
        if not span.text:
            continue
        changed = span.kind != "equal"
        if out and out[-1][1] == changed:
            out[-1] = (out[-1][0] + span.text, changed)
        else:
            out.append((span.text, changed))
    return out


def visible(text: str) -> str:
    """Text with invisible chars spelled as their labels (for removed text and titles)."""
    return "".join(f"⟨{lab}⟩" if (lab := invisible_label(c)) and c != " " else c for c in text)


# The whitespace the page's whitespace switch draws as glyphs (space ·, tab →, newline ↵;
# shell/style.css), by these classes.
WHITESPACE_CLASSES = {" ": " sp", "\t": " tab", "\n": " nl"}


def text_nodes(text: str, start: int, kind: str, old: str = "") -> list[Node]:
    """One span's nodes: plain runs, and a badge per invisible char (the char itself stays
    inside, so the element's textContent is exactly the stage text; the label is drawn by
    CSS from data-label)."""
    base = {"equal": "", "insert": "ins", "replace": "rep"}[kind]
    nodes: list[Node] = []
    run_start = 0
    attrs_extra = {}
    if kind == "replace":
        attrs_extra["data-old"] = visible(old)
        attrs_extra["title"] = f"was: {visible(old)}"
    elif kind == "insert":
        attrs_extra["title"] = "inserted"

    def flush(k: int) -> None:
        if k > run_start:
            attrs = {"data-s": str(start + run_start), **attrs_extra}
            if base:
                attrs["class"] = base
            nodes.append(el("span", attrs, text[run_start:k]))

    if text.isprintable() and " " not in text:  # the common case: nothing to label
        flush(len(text))
        return nodes
    for k, c in enumerate(text):
        if c != " " and c.isprintable():
            continue
        label = invisible_label(c)
        flush(k)
        cls = "inv" + (" " + base if base else "") + WHITESPACE_CLASSES.get(c, "")
        nodes.append(
            el(
                "span",
                {
                    "class": cls,
                    "data-label": label,
                    "data-s": str(start + k),
                    "title": f"U+{ord(c):04X} {char_name(c)}",
                },
                c,
            )
        )
        run_start = k + 1
    flush(len(text))
    return nodes
