"""What the tokenize tab (the BERT normalizer and WordPiece step by step, or another
tokenizer.json's own stages and model) shows, as a tree of plain nodes (shell/dom.py).

Pure Python with no browser imports: pytest renders traces from the native module, the page
the wasm module's (the same JSON).

    >>> tree = render_trace({"stages": [{"name": "raw", "text": "Hi", "micros": 0.5}],
    ...                      "pre_tokens": [], "tokens": ["[CLS]", "hi", "[SEP]"],
    ...                      "ids": [101, 7632, 102], "offsets": [[0, 0], [0, 2], [0, 0]],
    ...                      "micros": 3.0})
    >>> tree.find("ids").text()
    '[101, 7632, 102]'
"""

from __future__ import annotations

import json

from shell.chars import Span, diff_stages, expand_runs, text_nodes, visible
from shell.dom import Node, el
from shell.merges import render_merges

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
    "strip": ("Strip", "remove whitespace at the start and end"),
    "replace": ("Replace", "replace every match of a pattern"),
    "prepend": ("Prepend", "put a string before the text"),
    "byte_level": ("Byte level", "each UTF-8 byte as one visible char (GPT-2's byte alphabet)"),
    "nmt": ("NMT", "drop control characters, map unusual spaces to a space"),
    "precompiled": ("Precompiled", "SentencePiece's own normalization rules, as a char map"),
    "pre_tokens": ("Pre-tokens", "split on whitespace and around punctuation and ideographs"),
    "wordpiece": (
        "WordPiece",
        "longest-match-first pieces from the vocabulary; ## continues a word",
    ),
    "model": ("Model", "the model's tokens for each pre-token"),
    "ids": ("Ids", "vocabulary ids, with [CLS] and [SEP] added around them"),
}
# What the steps after the normalizer say for a model other than WordPiece (any tokenizer.json
# the general module reads), by the model's type.
MODELS = {
    "BPE": "pairs of symbols merged in the order of the file's merges",
    "WordLevel": "each pre-token looked up whole in the vocabulary",
    "Unigram": "the most probable split into vocabulary pieces",
}
OTHER_PRE_TOKENS = "the pre-tokenizer's pieces, each tokenized on its own"
OTHER_IDS = "vocabulary ids, with the special tokens the post-processor adds"
# The most input chars the stepper and the token view draw until "Show all" is pressed.
RENDER_CAP = 2000
# The normalizer's switches and the fast paths, in the order the core takes them.
OPTION_KEYS = ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase")
FAST_KEYS = ("simd", "page_cache", "lazy_output", "fused")


def stage_label(name: str) -> str:
    """The label of stage `name`; a repeated stage ("replace#2") is numbered.

    >>> stage_label("nfd"), stage_label("replace#2"), stage_label("unknown")
    ('NFD', 'Replace 2', 'unknown')
    """
    base, _, k = name.partition("#")
    return STAGES.get(base, (base, ""))[0] + (f" {k}" if k else "")


def format_micros(micros: float) -> str:
    """A duration for people: '0.42 µs', '12.5 µs', '1.25 ms'."""
    if micros < 10:
        return f"{micros:.2f} µs"
    if micros < 1000:
        return f"{micros:.1f} µs"
    return f"{micros / 1000:.2f} ms"


def render_diff(spans: list[Span], testid: str) -> Node:
    """A stage's text with its changes marked; textContent equals the stage's text."""
    children: list[Node] = []
    for s in spans:
        if s.kind == "delete":
            children.append(
                el(
                    "span",
                    {
                        "class": "del",
                        "data-old": visible(s.old),
                        "title": f"removed: {visible(s.old)}",
                        "role": "img",
                        "aria-label": f"removed {visible(s.old)}",
                    },
                )
            )
        else:
            children.extend(text_nodes(s.text, s.start, s.kind, s.old))
    return el(
        "div",
        {
            "class": "stage-text",
            "data-testid": testid,
            "tabindex": "0",
            "aria-label": "stage text; arrow keys move the inspected character",
        },
        *children,
    )


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


def is_wordpiece(trace: dict) -> bool:
    return trace.get("model", "WordPiece") == "WordPiece"


def steps(trace: dict) -> list[dict]:
    """The stepper's steps: every stage of the trace, then pre-tokens, the model, ids; each
    with its name (unique: a stage repeated in a Sequence is "name#2"), label, explanation
    and time."""
    out = []
    seen: dict[str, int] = {}
    for s in trace["stages"]:
        seen[s["name"]] = seen.get(s["name"], 0) + 1
        name = s["name"] if seen[s["name"]] == 1 else f"{s['name']}#{seen[s['name']]}"
        about = STAGES.get(s["name"], (s["name"], ""))[1]
        out.append(
            {"name": name, "label": stage_label(name), "about": about, "micros": s.get("micros")}
        )
    model = trace.get("model", "WordPiece")
    wordpiece = is_wordpiece(trace)
    pre_about = STAGES["pre_tokens"][1] if wordpiece else OTHER_PRE_TOKENS
    model_about = STAGES["wordpiece"][1] if wordpiece else MODELS.get(model, STAGES["model"][1])
    ids_about = STAGES["ids"][1] if wordpiece else OTHER_IDS
    out += [
        {
            "name": "pre_tokens",
            "label": "Pre-tokens",
            "about": pre_about,
            "micros": trace.get("pre_tokenize_micros"),
        },
        {
            "name": "wordpiece" if wordpiece else "model",
            "label": model,
            "about": model_about,
            "micros": trace.get("model_micros"),
        },
        {"name": "ids", "label": "Ids", "about": ids_about, "micros": None},
    ]
    spread = (trace.get("timing") or {}).get("spread") or []
    for k, s in enumerate(out[:-1]):
        s["micros"] = float(s["micros"] or 0.0)
        s["spread"] = spread[k] if k < len(spread) else None
    out[-1]["spread"] = None
    return out


def timing_basis(trace: dict) -> Node | None:
    """What the step times are: one run, or the median per run over batches of runs (the
    worker repeats a short input's runs, timing.runs in all); with the clock's step when it
    matters."""
    timing = trace.get("timing")
    if not timing:
        return None
    runs, batches, res = timing["runs"], timing["batches"], timing["resolution_us"]
    tick = f"the worker's clock ticks every {format_micros(res)}"
    if runs > 1:
        text = (
            f"Times per run: the median over {batches} batches of {runs // batches:,} runs "
            f"({runs:,} runs), with the interquartile range; {tick}."
        )
    elif any(0 < s["micros"] < 100 * res for s in steps(trace)[1:-1]):
        text = f"Times from one run; {tick}, so times near it are rough."
    else:
        text = "Times from one run."
    return el(
        "p",
        {
            "class": "timing-basis muted",
            "data-testid": "timing-basis",
            "data-resolution": f"{res!r}",
        },
        text,
    )


def format_time(step: dict) -> str:
    """A step's time, with its spread when it has one: '1.23 µs (1.20–1.31)'."""
    if step["micros"] is None:
        return "—"
    if step["spread"] is None:
        return format_micros(step["micros"])
    lo, hi = step["spread"]
    return f"{format_micros(step['micros'])} ({format_micros(lo)}–{format_micros(hi)})"


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
        bars.append(
            el(
                "g",
                {
                    "class": cls,
                    "data-step": str(k),
                    "role": "button",
                    # One tab stop for the chart: the current step; ← → move it.
                    "tabindex": "0" if k == current else "-1",
                    "aria-current": "step" if k == current else "false",
                    # The visible label and time first, as speech input users say them.
                    "aria-label": f"{s['label']} {time}, step {k + 1} of {len(all_steps)}",
                    "data-micros": "" if micros is None else repr(micros),
                },
                el("title", {}, f"{s['label']}: {time}"),
                el(
                    "rect",
                    {
                        "class": "tl-hit",
                        "x": "0",
                        "y": str(y),
                        "width": str(width),
                        "height": str(row),
                    },
                ),
                el(
                    "rect",
                    {
                        "class": "tl-bar",
                        "x": str(label_w),
                        "y": str(y + 4),
                        "width": f"{w:.1f}",
                        "height": str(row - 8),
                        "rx": "2",
                    },
                ),
                # One text with a space between label and time: its text is "Input 0.52 µs",
                # which the row's accessible name must hold (not "Input0.52 µs").
                el(
                    "text",
                    {"y": str(y + 13)},
                    el("tspan", {"class": "tl-label", "x": "4"}, s["label"]),
                    " ",
                    el("tspan", {"class": "tl-time", "x": str(label_w + w + 6)}, time),
                ),
            )
        )
    return el(
        "svg",
        {
            "class": "timeline",
            "data-testid": "timeline",
            "role": "group",
            "aria-label": "time per step",
            "viewBox": f"0 0 {width} {row * len(all_steps)}",
            "width": str(width),
            "height": str(row * len(all_steps)),
        },
        *bars,
    )


def render_pre_tokens(trace: dict) -> Node:
    chips = [
        el(
            "li",
            {
                "class": "chip",
                "data-testid": "pre-token",
                "title": f"input chars {p['offsets'][0]}–{p['offsets'][1]}",
            },
            *text_nodes(p["text"], 0, "equal"),
        )
        for p in trace.get("pre_tokens", [])
    ]
    return el("ol", {"class": "chips", "data-testid": "step-pre-tokens"}, *chips)


def render_model_tokens(trace: dict) -> Node:
    """The model's tokens as chips (WordPiece's as "wp-token", marking ## continuations)."""
    wordpiece = is_wordpiece(trace)
    chips = []
    special = trace.get("special_tokens_mask") or [0] * len(trace["ids"])
    for k, (token, (start, end), is_special) in enumerate(
        zip(trace["tokens"], trace["offsets"], special)
    ):
        cls = (
            "chip token"
            + (" special" if is_special else "")
            + (" unk" if token == "[UNK]" else "")
            + (" cont" if wordpiece and token.startswith("##") else "")
        )
        chips.append(
            el(
                "li",
                {
                    "class": cls,
                    "data-t": str(k),
                    "data-testid": "wp-token" if wordpiece else "model-token",
                    "title": f"input chars {start}–{end}",
                },
                token,
            )
        )
    testid = "step-wordpiece" if wordpiece else "step-model"
    return el("ol", {"class": "chips", "data-testid": testid}, *chips)


# ------------------------------------------------------------------------- the Unigram lattice

# The most lattice nodes drawn for one pre-token (a SentencePiece model's whole text is one).
LATTICE_MAX_NODES = 400
# The pre-tokens offered to pick from in the model step.
PIECE_PICK_CAP = 300
# The drawing's grid: pixels per char across, per row of nodes down.
LATTICE_CELL = 46
LATTICE_ROW = 34
LATTICE_HEAD = 24


# What the model step lays open for one picked pre-token, by model: the worker's request.
PIECE_VIEWS = {"Unigram": "lattice", "WordPiece": "wordpiece", "BPE": "merges"}
PIECE_INTROS = {
    "lattice": "lattice: every vocabulary piece found at each char, with its score, and the "
    "best path through them.",
    "wordpiece": "longest-match-first search: at each position the substrings looked up, "
    "from the longest down to the first one the vocabulary has.",
    "merges": "merges: its symbols, then each pair BPE joins, lowest rank first.",
}
# The most WordPiece lookups listed for one pre-token.
WORDPIECE_MAX_ATTEMPTS = 2000


def piece_view(trace: dict) -> str | None:
    """The worker's request for the picked pre-token's view, None for a model without one.

    >>> piece_view({}), piece_view({"model": "BPE"}), piece_view({"model": "WordLevel"})
    ('wordpiece', 'merges', None)
    """
    return PIECE_VIEWS.get(trace.get("model", "WordPiece"))


def has_piece_view(trace: dict) -> bool:
    return piece_view(trace) is not None


def picked_index(trace: dict, picked: int | None) -> int | None:
    """The pre-token whose view shows: the one picked while it exists, else the first.

    >>> picked_index({"pre_tokens": [{"text": "a"}, {"text": "b"}]}, 5), picked_index({}, 0)
    (0, None)
    """
    n = min(len(trace.get("pre_tokens") or []), PIECE_PICK_CAP)
    if n == 0:
        return None
    return picked if picked is not None and 0 <= picked < n else 0


def render_piece_picker(trace: dict, picked: int | None, shown: Node | None = None) -> Node:
    """The pre-tokens as buttons (the one pressed is the piece whose view shows), then
    `shown`, that piece's view (PIECE_RENDERERS), or a note while it is on its way."""
    current = picked_index(trace, picked)
    chips = [
        el(
            "span",
            {
                "class": "chip pre" + (" selected" if k == current else ""),
                "data-step-piece": str(k),
                "data-testid": "step-piece",
                "role": "button",
                "tabindex": "0",
                "aria-pressed": "true" if k == current else "false",
                "title": f"how the model splits this pre-token (input chars {p['offsets'][0]}–"
                f"{p['offsets'][1]})",
            },
            *text_nodes(p["text"], 0, "equal"),
        )
        for k, p in enumerate((trace.get("pre_tokens") or [])[:PIECE_PICK_CAP])
    ]
    return el(
        "div",
        {"class": "step-pick"},
        el(
            "p",
            {"class": "muted"},
            "Pick a pre-token (click it, or Tab to it and press Enter; ← → move) to see its "
            + PIECE_INTROS[piece_view(trace) or "lattice"],
        ),
        el(
            "div",
            {
                "class": "chips",
                "data-testid": "step-pieces",
                "role": "group",
                "aria-label": "pre-tokens",
            },
            *chips,
        ),
        el(
            "div",
            {"class": "step-piece-box", "data-testid": "step-piece-box"},
            shown or el("p", {"class": "muted"}, "Asking the model…"),
        ),
    )


def lattice_lanes(nodes: list[dict]) -> list[int]:
    """A row for each node: the best path's nodes in row 0, the others packed below it, each
    in the first row where it overlaps nothing.

    >>> lattice_lanes([{"start": 0, "end": 2, "best": True}, {"start": 0, "end": 1, "best": False},
    ...                {"start": 1, "end": 2, "best": False}, {"start": 1, "end": 3, "best": False}])
    [0, 1, 1, 2]
    """
    ends: list[int] = [0]
    lanes = []
    for n in nodes:
        if n["best"]:
            lanes.append(0)
            continue
        lane = next((k for k in range(1, len(ends)) if ends[k] <= n["start"]), len(ends))
        if lane == len(ends):
            ends.append(0)
        ends[lane] = n["end"]
        lanes.append(lane)
    return lanes


def format_score(score: float) -> str:
    return f"{score:.2f}"


def render_lattice(piece: str | None, lattice: dict | None, error: str | None = None) -> Node:
    """The lattice of `piece` as an SVG: its chars across, one bar per node spanning its chars
    with the piece and its score (unknown chars dashed), the best path in the top row and
    highlighted; then the tokens the model emits for it."""
    if piece is None:
        return el("p", {"class": "muted", "data-testid": "lattice"}, "No pre-tokens.")
    if lattice is None:
        return el(
            "p", {"class": "muted", "data-testid": "lattice"}, f"No lattice for this piece: {error}"
        )
    nodes = lattice["nodes"]
    chars = list(piece)
    columns = max([lattice["shown_chars"], *(n["end"] for n in nodes)])
    lanes = lattice_lanes(nodes)
    rows = max(lanes, default=0) + 1
    cell, row, head = LATTICE_CELL, LATTICE_ROW, LATTICE_HEAD
    width, height = columns * cell + 2, head + rows * row + 2
    marks = [
        el(
            "text",
            {"class": "lat-char", "x": str(k * cell + cell // 2 + 1), "y": "16"},
            visible(c) if c != " " else "·",
        )
        for k, c in enumerate(chars[:columns])
    ]
    bars = []
    for n, lane in zip(nodes, lanes):
        x = n["start"] * cell + 3
        y = head + lane * row
        w = (n["end"] - n["start"]) * cell - 4
        label = visible(n["piece"])
        # A bar wider than the phone's screen would hide a centred label: long ones start left.
        wide = n["end"] - n["start"] > 3
        tx, anchor = (x + 6, "lat-piece wide") if wide else (x + w // 2, "lat-piece")
        what = "unknown char" if n["unknown"] else f"piece {label!r}"
        bars.append(
            el(
                "g",
                {
                    "class": "lat-node"
                    + (" best" if n["best"] else "")
                    + (" unk" if n["unknown"] else ""),
                    "data-testid": "lattice-node",
                    "data-piece": n["piece"],
                    "data-best": "1" if n["best"] else "0",
                },
                el(
                    "title",
                    {},
                    f"{what}, id {n['id']}, chars {n['start']}–{n['end']}, score "
                    f"{format_score(n['score'])}" + (" (on the best path)" if n["best"] else ""),
                ),
                el(
                    "rect",
                    {"x": str(x), "y": str(y), "width": str(w), "height": str(row - 4), "rx": "3"},
                ),
                el(
                    "text",
                    {"class": anchor, "x": str(tx), "y": str(y + 13)},
                    label if not n["unknown"] else f"{label} ?",
                ),
                el(
                    "text",
                    {
                        "class": anchor.replace("lat-piece", "lat-score"),
                        "x": str(tx),
                        "y": str(y + 26),
                    },
                    format_score(n["score"]),
                ),
            )
        )
    best = [n for n in nodes if n["best"]]
    summary = (
        f"{len(nodes)} node{'s' if len(nodes) != 1 else ''} over {columns} chars; best path: "
        + " + ".join(visible(n["piece"]) for n in best)
    )
    svg = el(
        "svg",
        {
            "class": "lattice",
            "data-testid": "lattice-svg",
            "role": "img",
            "aria-label": f"lattice of {visible(piece)}: {summary}",
            "viewBox": f"0 0 {width} {height}",
            "width": str(width),
            "height": str(height),
        },
        *marks,
        *bars,
    )
    tokens = [
        el(
            "li",
            {
                "class": "chip token"
                + (
                    " unk"
                    if any(
                        n["unknown"] and n["start"] < t["end"] and t["start"] < n["end"]
                        for n in best
                    )
                    else ""
                ),
                "data-testid": "lattice-path-token",
                "title": f"id {t['id']}, chars {t['start']}–{t['end']}",
            },
            t["token"],
        )
        for t in lattice["tokens"]
    ]
    cut = (
        el(
            "p",
            {"class": "note", "data-testid": "lattice-cut"},
            f"Nodes shown for the first {lattice['shown_chars']:,} of {lattice['chars']:,} chars "
            f"(at most {LATTICE_MAX_NODES:,} nodes); the tokens below are those starting there.",
        )
        if lattice["truncated"]
        else None
    )
    return el(
        "div",
        {"data-testid": "lattice", "data-piece": piece},
        el(
            "p",
            {},
            "Piece ",
            el("code", {"data-testid": "step-piece-text"}, visible(piece)),
            f": {len(nodes):,} node{'s' if len(nodes) != 1 else ''}, best path score "
            f"{format_score(lattice['score'])} (the highest sum of scores; an unknown char, "
            "dashed, scores 10 below the lowest piece).",
        ),
        cut,
        el(
            "div",
            {
                "class": "lattice-scroll",
                "tabindex": "0",
                "role": "group",
                "aria-label": "the lattice drawing (scrolls sideways)",
            },
            svg,
        ),
        el(
            "p",
            {"class": "muted"},
            "The tokens the model emits (the best path, unknown runs fused and, with byte fallback, spelled as bytes):",
        ),
        el("ol", {"class": "chips", "data-testid": "lattice-path"}, *tokens),
    )


def wordpiece_tokens(steps: dict) -> list[tuple[str, int]]:
    """(token, id) of what WordPiece gives the word: its matches, or the unk token alone.

    >>> wordpiece_tokens({"unk": False, "attempts": [{"piece": "ab", "id": None},
    ...     {"piece": "a", "id": 7}, {"piece": "##b", "id": 9}]})
    [('a', 7), ('##b', 9)]
    >>> wordpiece_tokens({"unk": True, "unk_token": "[UNK]", "unk_id": 100, "attempts": []})
    [('[UNK]', 100)]
    """
    if steps["unk"]:
        return [(steps["unk_token"], steps["unk_id"])]
    return [(a["piece"], a["id"]) for a in steps["attempts"] if a["id"] is not None]


def render_wordpiece_steps(piece: str | None, steps: dict | None, error: str | None = None) -> Node:
    """WordPiece's search on `piece`: one row per position with the substrings looked up there
    (misses struck through, the match marked), then the tokens (the unk token when a position
    has no match or the word is too long)."""
    if piece is None:
        return el("p", {"class": "muted", "data-testid": "wordpiece-steps"}, "No pre-tokens.")
    if steps is None:
        return el(
            "p", {"class": "muted", "data-testid": "wordpiece-steps"}, f"No search shown: {error}"
        )
    rows: list[Node] = []
    by_start: dict[int, list[dict]] = {}
    for a in steps["attempts"]:
        by_start.setdefault(a["start"], []).append(a)
    for start, attempts in by_start.items():
        chips = [
            el(
                "li",
                {
                    "class": "chip" + (" hit" if a["id"] is not None else " miss"),
                    "data-testid": "wp-attempt",
                    "data-piece": a["piece"],
                    "data-hit": "1" if a["id"] is not None else "0",
                    "title": f"chars {a['start']}–{a['end']}: "
                    + (f"id {a['id']}" if a["id"] is not None else "not in the vocabulary"),
                },
                visible(a["piece"]),
            )
            for a in attempts
        ]
        rows.append(
            el(
                "li",
                {"class": "merge-row", "data-testid": "wp-position", "data-start": str(start)},
                el("span", {"class": "merge-head"}, f"at char {start}"),
                el("ol", {"class": "chips parts"}, *chips),
            )
        )
    if steps["too_long"]:
        why = f"{steps['chars']} chars, more than max_input_chars_per_word: the unk token"
    elif steps["unk"]:
        why = "a position has no match: the whole word is the unk token"
    else:
        n = len(wordpiece_tokens(steps))
        why = f"{n} token{'s' if n != 1 else ''}"
    if steps["truncated"]:
        why += f" (the first {len(steps['attempts'])} lookups shown)"
    tokens = el(
        "ol",
        {"class": "chips", "data-testid": "wp-result"},
        *(
            el(
                "li",
                {"class": "chip", "data-testid": "wp-result-token", "title": f"id {i}"},
                visible(t),
            )
            for t, i in wordpiece_tokens(steps)
        ),
    )
    return el(
        "div",
        {"data-testid": "wordpiece-steps", "data-piece": piece},
        el("p", {}, "Pre-token ", el("code", {}, visible(piece)), f": {why}"),
        el("ol", {"class": "merges"}, *rows),
        tokens,
    )


def render_merge_trace(piece: str | None, trace: dict | None, error: str | None = None) -> Node:
    """BPE's merges on `piece` (the shared merge view), or why there are none."""
    if piece is None:
        return el("p", {"class": "muted", "data-testid": "bpe-merges"}, "No pre-tokens.")
    if trace is None:
        return el("p", {"class": "muted", "data-testid": "bpe-merges"}, f"No merges shown: {error}")
    return render_merges({"text": piece}, trace)


# How each model's view of one piece is drawn (piece, reply or None, error).
PIECE_RENDERERS = {
    "lattice": render_lattice,
    "wordpiece": render_wordpiece_steps,
    "merges": render_merge_trace,
}


def render_step(
    trace: dict,
    current: int,
    original: str,
    piece_pick: int | None = None,
    piece_drawing: Node | None = None,
) -> Node:
    """The stepper's body for step `current`: header, then that step's view (the model step
    with its pre-tokens to pick one, `piece_pick`, and how the model split that one,
    `piece_drawing`: a Unigram lattice, WordPiece's search or BPE's merges)."""
    all_steps = steps(trace)
    current = max(0, min(current, len(all_steps) - 1))
    s = all_steps[current]
    name, label, about = s["name"], s["label"], s["about"]
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
    elif name in ("wordpiece", "model"):
        body = render_model_tokens(trace)
        if has_piece_view(trace):
            body = el("div", {}, body, render_piece_picker(trace, piece_pick, piece_drawing))
    else:
        body = el(
            "code", {"class": "ids-line", "data-testid": "step-ids"}, json.dumps(trace["ids"])
        )
    time = format_time(s)
    changes = None
    if current < len(stages) and current > 0 and not unchanged:
        n = sum(1 for sp in spans if sp.kind != "equal")
        changes = el("span", {"class": "badge"}, f"{n} change{'s' if n != 1 else ''}")
    return el(
        "section",
        {"class": "step", "data-testid": "step", "data-step": name},
        el(
            "div",
            {"class": "step-head"},
            el("span", {"class": "step-count"}, f"{current + 1}/{len(all_steps)}"),
            el("h3", {"class": "step-name", "data-testid": "step-name"}, label),
            el("span", {"class": "badge", "data-testid": "unchanged"}, "unchanged")
            if unchanged
            else changes,
            el("span", {"class": "stage-time", "data-testid": "stage-time"}, time),
        ),
        el("p", {"class": "stage-about"}, about),
        timing_basis(trace),
        body,
    )


# ------------------------------------------------------------------------------------ tokens


def render_tokens_over_text(
    trace: dict, mode: str = "text", marked=(), testid: str = "token-view"
) -> Node:
    """Tokens as coloured spans over the original text (via offsets), or their ids; the
    tokens whose indices are in `marked` get the class "differ" (the Compare tab's)."""
    marked = frozenset(marked)
    original = trace["stages"][0]["text"]
    special = trace.get("special_tokens_mask") or [0] * len(trace["ids"])
    rows = list(zip(trace["tokens"], trace["ids"], trace["offsets"], special))
    if mode == "ids":
        chips = [
            el(
                "li",
                {
                    "class": f"chip tok c{k % 6}"
                    + (" unk" if t == "[UNK]" else "")
                    + (" special" if sp else "")
                    + (" differ" if k in marked else ""),
                    "data-t": str(k),
                    "data-testid": "token-id",
                    "title": t,
                },
                str(i),
            )
            for k, (t, i, _, sp) in enumerate(rows)
        ]
        return el("ol", {"class": "chips", "data-testid": testid}, *chips)
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
        cls = (
            f"tok c{colour % 6}"
            + (" unk" if token == "[UNK]" else "")
            + (" differ" if k in marked else "")
        )
        colour += 1
        children.append(
            el(
                "span",
                {
                    "class": cls,
                    "data-t": str(k),
                    "data-testid": "token-span",
                    "title": f"{token} → {token_id}",
                },
                *text_nodes(original[start:end], start, "equal"),
            )
        )
        pos = end
    if pos < len(original):
        children.extend(text_nodes(original[pos:], pos, "equal"))
    return el("div", {"class": "token-text", "data-testid": testid}, *children)


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
        ("chars", f"{t['chars']:,}"),
        ("bytes", f"{t['bytes']:,}"),
        ("tokens", f"{t['tokens']:,}"),
        ("chars/token", f"{per:.2f}"),
    ]
    items = [
        el(
            "div",
            {"class": "count", "data-testid": f"count-{key.replace('/', '-per-')}"},
            el("dt", {}, key),
            el("dd", {}, value),
        )
        for key, value in parts
    ]
    if t.get("unk"):
        items.append(
            el(
                "div",
                {"class": "count unk", "data-testid": "count-unk"},
                el("dt", {}, "[UNK]"),
                el("dd", {}, str(t["unk"])),
            )
        )
    return el("dl", {"class": "counts", "data-testid": "counts"}, *items)


# ------------------------------------------------------------------------------- fast paths

BLOCK_KINDS = {
    0: ("skipped", "all ASCII, unchanged: never decoded"),
    1: ("folded", "all ASCII, lowercased in one go"),
    2: ("decoded", "held a byte that needs char-by-char work"),
}
MAX_BLOCK_CELLS = 512


def render_fast(trace: dict) -> Node | None:
    """What the fast paths did: a cell per 16-byte block, the pages, zero copy, times."""
    fast = trace.get("fast")
    if not fast:
        return el(
            "p",
            {"class": "muted", "data-testid": "fast"},
            "This tokenizer's normalizer has no fast path trace.",
        )
    st = fast["stats"]
    size = st.get("block_bytes") or 16
    cells = []
    for at, kind in st.get("blocks", [])[:MAX_BLOCK_CELLS]:
        name, about = BLOCK_KINDS.get(kind, ("?", ""))
        cells.append(
            el(
                "span",
                {
                    "class": f"blk {name}",
                    "data-testid": "block",
                    "title": f"bytes {at}–{at + size - 1}: {name} ({about})",
                },
            )
        )
    shown = len(cells)
    more = len(st.get("blocks", [])) - shown
    pages = [
        el(
            "li",
            {
                "class": "chip page" + (" built" if p["built"] else ""),
                "title": f"U+{p['page'] * 256:04X}–U+{p['page'] * 256 + 255:04X}",
            },
            f"U+{p['page'] * 256:04X}… ×{p['lookups']}" + (" built" if p["built"] else " hit"),
        )
        for p in st.get("pages", [])[:200]
    ]
    times = fast.get("normalize_micros", [])
    slowest = max((m for _, m in times), default=0.0) or 1.0
    rows = []
    for k, (variant, micros) in enumerate(times):
        w = max(1.0, 150 * micros / slowest)
        rows.append(
            el(
                "g",
                {},
                el("text", {"x": "0", "y": str(k * 18 + 13), "class": "tl-label"}, variant),
                el(
                    "rect",
                    {
                        "class": "tl-bar",
                        "x": "120",
                        "y": str(k * 18 + 4),
                        "width": f"{w:.1f}",
                        "height": "10",
                        "rx": "2",
                    },
                ),
                el(
                    "text",
                    {"class": "tl-time", "x": str(126 + w), "y": str(k * 18 + 13)},
                    format_micros(micros),
                ),
            )
        )
    paths = fast.get("paths", {})
    summary = (
        f"kernel {fast.get('kernel', '?')} · {st.get('blocks_skipped', 0)} blocks skipped, "
        f"{st.get('blocks_folded', 0)} folded, {st.get('blocks_stopped', 0)} decoded "
        f"({st.get('chars_decoded', 0)} chars one by one) · "
        f"{st.get('page_hits', 0)} page hits, {st.get('pages_built', 0)} pages built · "
        + (
            "output is a new allocation"
            if st.get("allocated")
            else "zero copy: output is the input"
        )
        + (" · staged fallback" if st.get("staged_fallback") else "")
    )
    return el(
        "div",
        {"class": "fast", "data-testid": "fast"},
        el("p", {"data-testid": "fast-summary"}, summary),
        el("p", {"class": "muted"}, "on: " + ", ".join(k for k, v in paths.items() if v) or "none"),
        el(
            "div",
            {
                "class": "blocks",
                "data-testid": "blocks",
                "role": "img",
                "aria-label": f"{shown} blocks of {size} bytes",
            },
            *cells,
        ),
        el("p", {"class": "muted"}, f"… and {more} more blocks") if more > 0 else None,
        el("ol", {"class": "chips pages", "data-testid": "pages"}, *pages),
        el(
            "svg",
            {
                "class": "timeline",
                "data-testid": "fast-times",
                "role": "img",
                "aria-label": "normalizer time with each fast path off",
                "viewBox": f"0 0 360 {18 * len(times)}",
                "width": "360",
                "height": str(18 * len(times)),
            },
            *rows,
        ),
    )


# ------------------------------------------------------------------------ the old full view


def render_trace(trace: dict) -> Node:
    """Every stage at once (used by tests and as a summary): stages, pre-tokens, ids."""
    stages = trace["stages"]
    items, previous = [], None
    for stage in stages:
        if previous is None:
            spans = [Span("equal", stage["text"], "", 0)] if stage["text"] else []
        else:
            spans = diff_stages(
                previous["text"], stage["text"], stage_orig(previous), stage_orig(stage)
            )
        items.append(
            el(
                "li",
                {"class": "stage", "data-testid": f"stage-{stage['name']}"},
                el("span", {"class": "stage-name"}, stage_label(stage["name"])),
                render_diff(spans, f"stage-{stage['name']}-text"),
            )
        )
        previous = stage
    special = trace.get("special_tokens_mask") or [0] * len(trace["ids"])
    chips = [
        el(
            "li",
            {"class": "chip token" + (" special" if sp else ""), "data-testid": "token"},
            el("span", {"class": "token-text"}, t),
            el("span", {"class": "token-id"}, str(i)),
        )
        for t, i, sp in zip(trace["tokens"], trace["ids"], special)
    ]
    return el(
        "div",
        {"class": "trace"},
        el("ol", {"class": "stages", "data-testid": "stages"}, *items),
        el("ol", {"class": "chips", "data-testid": "tokens"}, *chips),
        el("code", {"data-testid": "ids"}, json.dumps(trace["ids"])),
    )
