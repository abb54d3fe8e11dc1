"""What the page shows, as a tree of plain nodes, plus the page's state as a share link.

Pure Python with no browser imports, so the same code runs under CPython (pytest renders
traces from the native module) and under Pyodide, where app.py hands the nodes to boot.js's
DOM builder. User text only ever becomes a text node or an attribute value, never markup:
there are no HTML strings.

    >>> tree = render_trace({"stages": [{"name": "raw", "text": "Hi", "micros": 0.5}],
    ...                      "pre_tokens": [], "tokens": ["[CLS]", "hi", "[SEP]"],
    ...                      "ids": [101, 7632, 102], "offsets": [[0, 0], [0, 2], [0, 0]],
    ...                      "micros": 3.0})
    >>> tree.find("ids").text()
    '[101, 7632, 102]'
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
import unicodedata
import zlib
from dataclasses import dataclass, field

# Stage names as the core reports them, with the label and the one-line explanation shown.
STAGES: dict[str, tuple[str, str]] = {
    "raw": ("Input", "the text as typed"),
    "clean": ("Clean text", "drop control characters, map every whitespace to a space"),
    "cjk": ("CJK spacing", "put spaces around CJK ideographs, so each becomes a word"),
    "nfd": ("NFD", "canonical decomposition: é becomes e + U+0301"),
    "nfc": ("NFC", "canonical composition"),
    "nfkc": ("NFKC", "compatibility composition"),
    "nfkd": ("NFKD", "compatibility decomposition"),
    "strip_accents": ("Strip accents", "drop combining marks (category Mn)"),
    "lowercase": ("Lowercase", "lowercase every character"),
    "pre_tokens": ("Pre-tokens", "split on whitespace and around punctuation and ideographs"),
    "wordpiece": ("WordPiece", "longest-match-first pieces from the vocabulary; ## continues a word"),
    "ids": ("Ids", "vocabulary ids, with [CLS] and [SEP] added around them"),
}
# The steps after the normalizer's stages, always in this order.
MODEL_STEPS = ("pre_tokens", "wordpiece", "ids")

# difflib's matcher is quadratic in the worst case; used only when a trace has no alignment.
DIFF_LIMIT = 4000
# The most input chars the stepper and the token view draw until "Show all" is pressed.
RENDER_CAP = 2000


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

    def walk(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def to_json(self) -> list:
        """[tag, attrs, *children]: the form boot.js's builder turns into DOM nodes."""
        return [self.tag, self.attrs,
                *(c if isinstance(c, str) else c.to_json() for c in self.children)]


def el(tag: str, attrs: dict[str, str] | None = None, *children: Node | str | None) -> Node:
    """A node; None children are dropped so optional parts can be written inline."""
    return Node(tag, dict(attrs or {}), [c for c in children if c is not None and c != ""])


def stage_label(name: str) -> str:
    return STAGES.get(name, (name, ""))[0]


def format_micros(micros: float) -> str:
    """A duration for people: '0.42 µs', '12.5 µs', '1.25 ms'."""
    if micros < 10:
        return f"{micros:.2f} µs"
    if micros < 1000:
        return f"{micros:.1f} µs"
    return f"{micros / 1000:.2f} ms"


# ------------------------------------------------------------------------------- invisibles

# Short labels for characters that do not show, or look like another one.
INVISIBLE_LABELS = {
    " ": "·", "\t": "TAB", "\n": "LF", "\r": "CR", "\u00a0": "NBSP", "\u00ad": "SHY",
    "\u200b": "ZWSP", "\u200c": "ZWNJ", "\u200d": "ZWJ", "\u200e": "LRM", "\u200f": "RLM",
    "\u2028": "LSEP", "\u2029": "PSEP", "\u2060": "WJ", "\ufeff": "BOM", "\u034f": "CGJ",
    "\u3000": "IDSP", "\u180e": "MVS", "\ufffd": "U+FFFD", "\u0000": "NUL", "\u001b": "ESC",
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
    return {"Cc": "<control>", "Cs": "<surrogate>", "Co": "<private use>",
            "Cn": "<unassigned>"}.get(cat, "<no name>")


CATEGORY_NAMES = {
    "Lu": "uppercase letter", "Ll": "lowercase letter", "Lt": "titlecase letter",
    "Lm": "modifier letter", "Lo": "other letter", "Mn": "nonspacing mark",
    "Mc": "spacing mark", "Me": "enclosing mark", "Nd": "decimal number",
    "Nl": "letter number", "No": "other number", "Pc": "connector punctuation",
    "Pd": "dash punctuation", "Ps": "open punctuation", "Pe": "close punctuation",
    "Pi": "initial punctuation", "Pf": "final punctuation", "Po": "other punctuation",
    "Sm": "math symbol", "Sc": "currency symbol", "Sk": "modifier symbol", "So": "other symbol",
    "Zs": "space separator", "Zl": "line separator", "Zp": "paragraph separator",
    "Cc": "control", "Cf": "format", "Cs": "surrogate", "Co": "private use", "Cn": "unassigned",
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
    if origin is not None:
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
    if spans and spans[-1].kind == kind and (kind != "equal" or spans[-1].start
                                             + len(spans[-1].text) == start):
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
    """
    spans: list[Span] = []
    if before_orig is None or after_orig is None:
        if len(before) > DIFF_LIMIT or len(after) > DIFF_LIMIT:
            _append(spans, "replace" if before != after else "equal", after,
                    "" if before == after else before, 0)
            return spans
        _local_diff(spans, before, after, 0)
        return spans
    i = j = 0
    nb, na = len(before_orig), len(after_orig)
    while i < nb or j < na:
        # The next input char either side still holds; both sides are in input order.
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
        cls = "inv" + (" " + base if base else "") + (" sp" if c == " " else "")
        nodes.append(el("span", {"class": cls, "data-label": label, "data-s": str(start + k),
                                 "title": f"U+{ord(c):04X} {char_name(c)}"}, c))
        run_start = k + 1
    flush(len(text))
    return nodes


def render_diff(spans: list[Span], testid: str) -> Node:
    """A stage's text with its changes marked; textContent equals the stage's text."""
    children: list[Node] = []
    for s in spans:
        if s.kind == "delete":
            children.append(el("span", {"class": "del", "data-old": visible(s.old),
                                        "title": f"removed: {visible(s.old)}",
                                        "role": "img",
                                        "aria-label": f"removed {visible(s.old)}"}))
        else:
            children.extend(text_nodes(s.text, s.start, s.kind, s.old))
    return el("div", {"class": "stage-text", "data-testid": testid, "tabindex": "0",
                      "aria-label": "stage text; arrow keys move the inspected character"},
              *children)


# -------------------------------------------------------------------------------- the trace

def totals(trace: dict) -> dict:
    """Counts over the whole input (a trimmed trace carries them in `total`)."""
    if "total" in trace:
        return trace["total"]
    text = trace["stages"][0]["text"]
    return {
        "chars": len(text),
        "bytes": len(text.encode("utf-8", "surrogatepass")),
        "tokens": len(trace["ids"]),
        "unk": sum(1 for t in trace["tokens"] if t == "[UNK]"),
        "truncated": False,
    }


def steps(trace: dict) -> list[dict]:
    """The stepper's steps: every stage of the trace, then pre-tokens, WordPiece, ids."""
    out = [{"name": s["name"], "micros": float(s.get("micros", 0.0))} for s in trace["stages"]]
    out.append({"name": "pre_tokens", "micros": float(trace.get("pre_tokenize_micros") or 0.0)})
    out.append({"name": "wordpiece", "micros": float(trace.get("model_micros") or 0.0)})
    out.append({"name": "ids", "micros": None})
    return out


def step_index(trace: dict, name: str | None) -> int:
    """The index of step `name`; the last normalizer stage when unknown."""
    names = [s["name"] for s in steps(trace)]
    if name in names:
        return names.index(name)
    return len(trace["stages"]) - 1


def stage_orig(stage: dict) -> list[int] | None:
    runs = stage.get("runs")
    return None if runs is None else expand_runs(runs)


def render_timeline(trace: dict, current: int) -> Node:
    """All steps as a small SVG bar chart of their times; each bar is a button."""
    all_steps = steps(trace)
    slowest = max((s["micros"] or 0.0 for s in all_steps), default=0.0) or 1.0
    row, width, label_w = 18, 320, 110
    bars = []
    for k, s in enumerate(all_steps):
        y = k * row
        micros = s["micros"]
        w = 0.0 if micros is None else max(1.0, (width - label_w - 70) * micros / slowest)
        cls = "tl-row" + (" current" if k == current else "")
        time = "—" if micros is None else format_micros(micros)
        bars.append(el(
            "g", {"class": cls, "data-step": str(k), "role": "button", "tabindex": "-1",
                  "aria-label": f"step {k + 1}: {stage_label(s['name'])}, {time}"},
            el("title", {}, f"{stage_label(s['name'])}: {time}"),
            el("rect", {"class": "tl-hit", "x": "0", "y": str(y), "width": str(width),
                        "height": str(row)}),
            el("text", {"class": "tl-label", "x": "4", "y": str(y + 13)}, stage_label(s["name"])),
            el("rect", {"class": "tl-bar", "x": str(label_w), "y": str(y + 4),
                        "width": f"{w:.1f}", "height": str(row - 8), "rx": "2"}),
            el("text", {"class": "tl-time", "x": str(label_w + w + 6), "y": str(y + 13)}, time),
        ))
    return el("svg", {"class": "timeline", "data-testid": "timeline", "role": "group",
                      "aria-label": "time per step", "viewBox": f"0 0 {width} {row * len(all_steps)}",
                      "width": str(width), "height": str(row * len(all_steps))}, *bars)


def render_pre_tokens(trace: dict) -> Node:
    chips = [el("li", {"class": "chip", "data-testid": "pre-token",
                       "title": f"input chars {p['offsets'][0]}–{p['offsets'][1]}"},
                *text_nodes(p["text"], 0, "equal"))
             for p in trace.get("pre_tokens", [])]
    return el("ol", {"class": "chips", "data-testid": "step-pre-tokens"}, *chips)


def render_wordpiece(trace: dict) -> Node:
    chips = []
    special = trace.get("special_tokens_mask") or [0] * len(trace["ids"])
    for k, (token, (start, end), is_special) in enumerate(
            zip(trace["tokens"], trace["offsets"], special)):
        cls = "chip token" + (" special" if is_special else "") + \
            (" unk" if token == "[UNK]" else "") + (" cont" if token.startswith("##") else "")
        chips.append(el("li", {"class": cls, "data-t": str(k), "data-testid": "wp-token",
                               "title": f"input chars {start}–{end}"}, token))
    return el("ol", {"class": "chips", "data-testid": "step-wordpiece"}, *chips)


def render_step(trace: dict, current: int, original: str) -> Node:
    """The stepper's body for step `current`: header, then that step's view."""
    all_steps = steps(trace)
    current = max(0, min(current, len(all_steps) - 1))
    s = all_steps[current]
    name = s["name"]
    label, about = STAGES.get(name, (name, ""))
    stages = trace["stages"]
    body: Node
    unchanged = False
    if current < len(stages):
        stage = stages[current]
        if current == 0:
            spans = [Span("equal", stage["text"], "", 0)] if stage["text"] else []
        else:
            prev = stages[current - 1]
            spans = diff_stages(prev["text"], stage["text"], stage_orig(prev), stage_orig(stage))
            unchanged = prev["text"] == stage["text"]
        body = render_diff(spans, "step-text")
    elif name == "pre_tokens":
        body = render_pre_tokens(trace)
    elif name == "wordpiece":
        body = render_wordpiece(trace)
    else:
        body = el("code", {"class": "ids-line", "data-testid": "step-ids"},
                  json.dumps(trace["ids"]))
    time = "—" if s["micros"] is None else format_micros(s["micros"])
    changes = None
    if current < len(stages) and current > 0 and not unchanged:
        n = sum(1 for sp in spans if sp.kind != "equal")
        changes = el("span", {"class": "badge"}, f"{n} change{'s' if n != 1 else ''}")
    return el(
        "section", {"class": "step", "data-testid": "step", "data-step": name},
        el("div", {"class": "step-head"},
           el("span", {"class": "step-count"}, f"{current + 1}/{len(all_steps)}"),
           el("h3", {"class": "step-name", "data-testid": "step-name"}, label),
           el("span", {"class": "badge", "data-testid": "unchanged"}, "unchanged")
           if unchanged else changes,
           el("span", {"class": "stage-time"}, time)),
        el("p", {"class": "stage-about"}, about),
        body,
    )


# ------------------------------------------------------------------------------------ tokens

def render_tokens_over_text(trace: dict, mode: str = "text") -> Node:
    """Tokens as coloured spans over the original text (via offsets), or their ids."""
    original = trace["stages"][0]["text"]
    special = trace.get("special_tokens_mask") or [0] * len(trace["ids"])
    rows = list(zip(trace["tokens"], trace["ids"], trace["offsets"], special))
    if mode == "ids":
        chips = [el("li", {"class": f"chip tok c{k % 6}" + (" unk" if t == "[UNK]" else "")
                           + (" special" if sp else ""),
                           "data-t": str(k), "data-testid": "token-id", "title": t}, str(i))
                 for k, (t, i, _, sp) in enumerate(rows)]
        return el("ol", {"class": "chips", "data-testid": "token-view"}, *chips)
    children: list[Node] = []
    pos = 0
    colour = 0
    for k, (token, token_id, (start, end), is_special) in enumerate(rows):
        if is_special and start == end:
            continue
        if start < pos:  # several pieces of one char (never in WordPiece): skip overlap
            continue
        if start > pos:
            children.extend(text_nodes(original[pos:start], pos, "equal"))
        cls = f"tok c{colour % 6}" + (" unk" if token == "[UNK]" else "")
        colour += 1
        children.append(el("span", {"class": cls, "data-t": str(k), "data-testid": "token-span",
                                    "title": f"{token} → {token_id}"},
                           *text_nodes(original[start:end], start, "equal")))
        pos = end
    if pos < len(original):
        children.extend(text_nodes(original[pos:], pos, "equal"))
    return el("div", {"class": "token-text", "data-testid": "token-view"}, *children)


def token_summary(trace: dict, k: int) -> str:
    """One line about token k: text, id, and the input chars it covers.

    >>> token_summary({"tokens": ["[CLS]", "hi"], "ids": [101, 7632],
    ...                "offsets": [[0, 0], [0, 2]], "stages": [{"text": "Hi"}]}, 1)
    "'hi' → id 7632 · input chars 0–2: 'Hi'"
    """
    token, token_id, (start, end) = trace["tokens"][k], trace["ids"][k], trace["offsets"][k]
    original = trace["stages"][0]["text"]
    where = f" · input chars {start}–{end}: {visible(original[start:end])!r}" if end > start else ""
    return f"{token!r} → id {token_id}{where}"


def render_counts(trace: dict) -> Node:
    t = totals(trace)
    per = t["chars"] / t["tokens"] if t["tokens"] else 0.0
    parts = [
        ("chars", f"{t['chars']:,}"), ("bytes", f"{t['bytes']:,}"),
        ("tokens", f"{t['tokens']:,}"), ("chars/token", f"{per:.2f}"),
    ]
    items = [el("div", {"class": "count", "data-testid": f"count-{key.replace('/', '-per-')}"},
                el("dt", {}, key), el("dd", {}, value)) for key, value in parts]
    if t.get("unk"):
        items.append(el("div", {"class": "count unk", "data-testid": "count-unk"},
                        el("dt", {}, "[UNK]"), el("dd", {}, str(t["unk"]))))
    return el("dl", {"class": "counts", "data-testid": "counts"}, *items)


# ------------------------------------------------------------------------------- fast paths

BLOCK_KINDS = {0: ("skipped", "all ASCII, unchanged: never decoded"),
               1: ("folded", "all ASCII, lowercased in one go"),
               2: ("decoded", "held a byte that needs char-by-char work")}
MAX_BLOCK_CELLS = 512


def render_fast(trace: dict) -> Node | None:
    """What the fast paths did: a cell per 16-byte block, the pages, zero copy, times."""
    fast = trace.get("fast")
    if not fast:
        return el("p", {"class": "muted", "data-testid": "fast"},
                  "This tokenizer's normalizer has no fast path trace.")
    st = fast["stats"]
    size = st.get("block_bytes") or 16
    cells = []
    for at, kind in st.get("blocks", [])[:MAX_BLOCK_CELLS]:
        name, about = BLOCK_KINDS.get(kind, ("?", ""))
        cells.append(el("span", {"class": f"blk {name}", "data-testid": "block",
                                 "title": f"bytes {at}–{at + size - 1}: {name} ({about})"}))
    shown = len(cells)
    more = len(st.get("blocks", [])) - shown
    pages = [el("li", {"class": "chip page" + (" built" if p["built"] else ""),
                       "title": f"U+{p['page'] * 256:04X}–U+{p['page'] * 256 + 255:04X}"},
                f"U+{p['page'] * 256:04X}… ×{p['lookups']}" + (" built" if p["built"] else " hit"))
             for p in st.get("pages", [])[:200]]
    times = fast.get("normalize_micros", [])
    slowest = max((m for _, m in times), default=0.0) or 1.0
    rows = []
    for k, (variant, micros) in enumerate(times):
        w = max(1.0, 150 * micros / slowest)
        rows.append(el("g", {},
                       el("text", {"x": "0", "y": str(k * 18 + 13), "class": "tl-label"}, variant),
                       el("rect", {"class": "tl-bar", "x": "120", "y": str(k * 18 + 4),
                                   "width": f"{w:.1f}", "height": "10", "rx": "2"}),
                       el("text", {"class": "tl-time", "x": str(126 + w), "y": str(k * 18 + 13)},
                          format_micros(micros))))
    paths = fast.get("paths", {})
    summary = (
        f"kernel {fast.get('kernel', '?')} · {st.get('blocks_skipped', 0)} blocks skipped, "
        f"{st.get('blocks_folded', 0)} folded, {st.get('blocks_stopped', 0)} decoded "
        f"({st.get('chars_decoded', 0)} chars one by one) · "
        f"{st.get('page_hits', 0)} page hits, {st.get('pages_built', 0)} pages built · "
        + ("output is a new allocation" if st.get("allocated") else "zero copy: output is the input")
        + (" · staged fallback" if st.get("staged_fallback") else "")
    )
    return el(
        "div", {"class": "fast", "data-testid": "fast"},
        el("p", {"data-testid": "fast-summary"}, summary),
        el("p", {"class": "muted"}, "on: " + ", ".join(k for k, v in paths.items() if v) or "none"),
        el("div", {"class": "blocks", "data-testid": "blocks", "role": "img",
                   "aria-label": f"{shown} blocks of {size} bytes"}, *cells),
        el("p", {"class": "muted"}, f"… and {more} more blocks") if more > 0 else None,
        el("ol", {"class": "chips pages", "data-testid": "pages"}, *pages),
        el("svg", {"class": "timeline", "data-testid": "fast-times", "role": "img",
                   "aria-label": "normalizer time with each fast path off",
                   "viewBox": f"0 0 360 {18 * len(times)}", "width": "360",
                   "height": str(18 * len(times))}, *rows),
    )


# ------------------------------------------------------------------------ the old full view

def render_trace(trace: dict) -> Node:
    """Every stage at once (used by tests and as a summary): stages, pre-tokens, ids."""
    stages = trace["stages"]
    items, previous = [], None
    for k, stage in enumerate(stages):
        if previous is None:
            spans = [Span("equal", stage["text"], "", 0)] if stage["text"] else []
        else:
            spans = diff_stages(previous["text"], stage["text"], stage_orig(previous),
                                stage_orig(stage))
        items.append(el("li", {"class": "stage", "data-testid": f"stage-{stage['name']}"},
                        el("span", {"class": "stage-name"}, stage_label(stage["name"])),
                        render_diff(spans, f"stage-{stage['name']}-text")))
        previous = stage
    special = trace.get("special_tokens_mask") or [0] * len(trace["ids"])
    chips = [el("li", {"class": "chip token" + (" special" if sp else ""), "data-testid": "token"},
                el("span", {"class": "token-text"}, t), el("span", {"class": "token-id"}, str(i)))
             for t, i, sp in zip(trace["tokens"], trace["ids"], special)]
    return el("div", {"class": "trace"},
              el("ol", {"class": "stages", "data-testid": "stages"}, *items),
              el("ol", {"class": "chips", "data-testid": "tokens"}, *chips),
              el("code", {"data-testid": "ids"}, json.dumps(trace["ids"])))


# ------------------------------------------------------------------------------ share links

BUILTIN_TOKENIZERS = ("bert-base-uncased",)
OPTION_KEYS = ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase")
FAST_KEYS = ("simd", "page_cache", "lazy_output", "fused")
STEP_NAMES = tuple(STAGES)
TABS = ("wordpiece", "bpe")
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
    compact = {"t": state["text"], "k": state["tokenizer"], "o": _bits(state["options"], OPTION_KEYS),
               "f": _bits(state["fast"], FAST_KEYS), "s": state["step"], "v": state["view"]}
    # The BPE tab (bpe_view.py): which tab is open, and the BPE view's own state.
    if state.get("tab", "wordpiece") != "wordpiece":
        compact["a"] = state["tab"]
    if state.get("bpe") is not None:
        import bpe_view
        bpe = bpe_view.to_link(state["bpe"])
        if bpe is None:
            return None
        compact["b"] = bpe
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
    if tok not in BUILTIN_TOKENIZERS:
        return default_state(), "This link names a tokenizer the page does not have; " \
                                "showing the default view."
    for bits, keys in ((opts, OPTION_KEYS), (fast, FAST_KEYS)):
        if not isinstance(bits, str) or len(bits) != len(keys) or not set(bits) <= {"0", "1"}:
            return malformed
    if step not in STEP_NAMES or mode not in ("text", "ids"):
        return malformed
    state.update(text=text, tokenizer=tok, step=step, view=mode,
                 options={k: b == "1" for k, b in zip(OPTION_KEYS, opts)},
                 fast={k: b == "1" for k, b in zip(FAST_KEYS, fast)})
    # Older links have neither key and open as before.
    tab = compact.get("a", "wordpiece")
    if tab not in TABS:
        return malformed
    if tab != "wordpiece":
        state["tab"] = tab
    if "b" in compact:
        import bpe_view
        bpe = bpe_view.from_link(compact["b"])
        if bpe is None:
            return malformed
        state["bpe"] = bpe
    return state, None


# The gallery: each example is a share link to a state.
RUSSIAN = "Большие языковые модели обрабатывают текст как последовательности токенов."
EXAMPLES: list[tuple[str, str, str]] = [
    ("Accents", "Crème brûlée, naïve façade, Ångström", "strip_accents"),
    ("CJK", "東京タワーは高い。北京欢迎你!", "cjk"),
    ("Turkish dotted I", "İstanbul ISTANBUL ıi", "lowercase"),
    ("Greek capitals", "ΟΔΥΣΣΕΥΣ Ἀθῆναι ΣΊΣΥΦΟΣ", "strip_accents"),
    ("Zero-width and soft hyphen", "zero\u200bwidth\u200d join, soft\u00adhyphen\u2060!", "clean"),
    ("Emoji", "I ❤️ tokenizers 👩🏽‍💻 🇺🇦", "wordpiece"),
    ("Python code", "def f(x):\n\treturn x ** 2  # square\n", "pre_tokens"),
    ("Russian (the textbook)", RUSSIAN, "wordpiece"),
]


def example_links() -> list[tuple[str, str]]:
    """(title, fragment) for each gallery example."""
    out = []
    for title, text, step in EXAMPLES:
        state = default_state()
        state.update(text=text, step=step)
        out.append((title, encode_state(state)))
    return out


def render_gallery(base: str) -> Node:
    """Links to examples; `base` is the page's own address without its fragment."""
    items = [el("li", {}, el("a", {"href": f"{base}#{frag}", "data-testid": "example"}, title))
             for title, frag in example_links()]
    return el("ul", {"class": "gallery", "data-testid": "gallery"}, *items)
