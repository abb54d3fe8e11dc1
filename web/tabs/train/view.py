"""The Train tab's logic and drawing: pure Python, no browser imports.

Its companion app.py wires it to the DOM and to worker.js (the trainer in the BPE wasm
module); pytest runs these functions under CPython. Everything drawn is a tree of
shell/dom.py's Node, so user text only ever becomes text nodes.

    >>> parse_vocab("20", "chapter", "низ низко")
    (20, None)
    >>> parse_vocab("100", "byte", "abc")[1]
    'Byte-level training starts from the 256 bytes: the vocabulary size must be at least 256.'
    >>> [s["parts"] for s in merge_steps("низко", [("и", "з"), ("н", "из"), ("к", "о")])]
    [['н', 'и', 'з', 'к', 'о', '_'], ['н', 'из', 'к', 'о', '_'], ['низ', 'к', 'о', '_'], ['низ', 'ко', '_']]
"""

from __future__ import annotations

from shell.chars import text_nodes
from shell.dom import Node, el

# The worked example of the textbook chapter on tokenization (section 1.3): its corpus and
# vocabulary size.
CHAPTER_CORPUS = " ".join(["низ"] * 5 + ["низко"] * 3 + ["близко"] * 2 + ["низина"] * 2)
CHAPTER_VOCAB = 20
END_OF_WORD = "_"
MAX_VOCAB = 1_000_000
MAX_TEXT = 5_000_000  # UTF-16 units; more is refused with a message
MODES = ("chapter", "byte")
# The merges table draws at most this many rows (the count above it covers all).
TABLE_ROWS = 1000
EXERCISE1_MERGES = 50
EXERCISE1_TEXT = "ru-help-10k"  # a bundled text (scripts/train_corpora.py)


def parse_vocab(raw: str, mode: str, text: str) -> tuple[int | None, str | None]:
    """The vocabulary size typed in the box, or None and a message saying what is wrong."""
    if mode not in MODES:
        return None, f"Unknown mode {mode!r}."
    if not text.strip():
        return None, "Paste some text or pick a corpus first."
    if len(text) > MAX_TEXT:
        return None, f"The text is too long to train on here (more than {MAX_TEXT:,} characters)."
    raw = raw.strip()
    try:
        value = int(raw)
    except ValueError:
        return (
            None,
            f"The vocabulary size must be a whole number, not {raw!r}."
            if raw
            else "Type a vocabulary size.",
        )
    if mode == "byte" and value < 256:
        return (
            None,
            "Byte-level training starts from the 256 bytes: the vocabulary size must be at least 256.",
        )
    if value < 1:
        return None, "The vocabulary size must be at least 1."
    if value > MAX_VOCAB:
        return None, f"The vocabulary size must be at most {MAX_VOCAB:,}."
    return value, None


def byte_chars() -> list[str]:
    """GPT-2's byte-to-char table: printable Latin-1 bytes stand for themselves, the others
    for the chars from U+0100 on, in byte order (how byte-level tokens are spelled)."""
    keep = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    out, extra = [], 0
    for b in range(256):
        if b in keep:
            out.append(chr(b))
        else:
            out.append(chr(0x100 + extra))
            extra += 1
    return out


BYTE_CHARS = byte_chars()
CHAR_BYTES = {c: b for b, c in enumerate(BYTE_CHARS)}


def token_bytes(token: str) -> bytes:
    """The bytes a byte-level token spells."""
    return bytes(CHAR_BYTES[c] for c in token)


def base_units(word: str, byte_level: bool = False) -> list[str]:
    """The units training starts from: chars plus the end-of-word mark, or byte chars."""
    if byte_level:
        return [BYTE_CHARS[b] for b in word.encode("utf-8", "surrogatepass")]
    return list(word) + [END_OF_WORD]


def merge_steps(word: str, merges, byte_level: bool = False) -> list[dict]:
    """`word` from its base units through every merge that changes it, in training order
    (each merge applied left to right: the chapter's tokenize). The first step is the base
    units (merge None); each later one names the merge (1-based rank, pair) and the parts."""
    parts = base_units(word, byte_level)
    steps = [{"rank": 0, "pair": None, "parts": list(parts)}]
    for rank, (a, b) in enumerate(merges, 1):
        if len(parts) < 2:
            break
        i, out, hit = 0, [], False
        while i < len(parts):
            if i < len(parts) - 1 and parts[i] == a and parts[i + 1] == b:
                out.append(a + b)
                i += 2
                hit = True
            else:
                out.append(parts[i])
                i += 1
        if hit:
            parts = out
            steps.append({"rank": rank, "pair": (a, b), "parts": list(parts)})
    return steps


def show(symbol: str, byte_level: bool = False) -> str:
    """A symbol as written in a line of text: spaces as ·, newlines as ↵ (and byte-level
    spelling kept)."""
    if byte_level:
        return symbol
    return symbol.replace(" ", "·").replace("\n", "↵").replace("\t", "→")


def symbol_nodes(symbol: str, byte_level: bool = False) -> list:
    """A symbol as drawn in a chip: its own chars, whitespace marked for the page's
    whitespace switch (shell/chars.py), byte-level spelling kept."""
    return [symbol] if byte_level else text_nodes(symbol, 0, "equal")


# ----------------------------------------------------------------------------- drawing


def _table(testid: str, header: list[str], rows: list[list], cls: str = "") -> Node:
    cols = len(header)
    return el(
        "div",
        {"class": f"ttable cols-{cols} {cls}".strip(), "role": "table", "data-testid": testid},
        el(
            "div",
            {"class": "trow thead", "role": "row"},
            *(el("span", {"role": "columnheader"}, h) for h in header),
        ),
        *(
            el(
                "div",
                {"class": "trow", "role": "row", "data-testid": f"{testid}-row"},
                *(c if isinstance(c, Node) else el("span", {"role": "cell"}, str(c)) for c in row),
            )
            for row in rows
        ),
    )


def _sym(nodes: list, testid: str | None = None) -> Node:
    attrs = {"class": "sym", "role": "cell"}
    if testid:
        attrs["data-testid"] = testid
    return el("span", attrs, el("code", {}, *nodes))


def render_merges(
    merges: list,
    byte_level: bool = False,
    limit: int = TABLE_ROWS,
    testid: str = "train-merges",
    notes: list | None = None,
    total: int | None = None,
) -> Node:
    """The merges table: rank, pair, count, new symbol (and a note column when given).
    `total` is the number of merges when `merges` holds only the first ones."""
    total = len(merges) if total is None else total
    header = ["#", "pair", "count", "new symbol"] + (["morpheme"] if notes is not None else [])
    rows = []
    for k, (a, b, count, new) in enumerate(merges[:limit]):
        row = [
            str(k + 1),
            el(
                "span",
                {"role": "cell", "class": "pair", "data-testid": "pair"},
                el("code", {}, *symbol_nodes(a, byte_level)),
                " + ",
                el("code", {}, *symbol_nodes(b, byte_level)),
            ),
            str(count),
            _sym(symbol_nodes(new, byte_level), "new"),
        ]
        if notes is not None:
            note = notes[k]
            row.append(
                el(
                    "span",
                    {"role": "cell", "data-testid": "morpheme", "class": "morpheme"},
                    "" if note is None else f"{note['form']} ({note['kind']}: {note['example']})",
                )
            )
        rows.append(row)
    table = _table(testid, header, rows, "merges")
    if total > min(limit, len(merges)):
        return el(
            "div",
            {},
            table,
            el(
                "p",
                {"class": "muted", "data-testid": f"{testid}-more"},
                f"Showing the first {min(limit, len(merges)):,} of {total:,} merges.",
            ),
        )
    return table


def render_steps(word: str, steps: list[dict], final: list[str], byte_level: bool = False) -> Node:
    """How `word` is tokenized, merge by merge; `final` is the core's own answer."""
    items = []
    for s in steps:
        label = (
            "start"
            if s["pair"] is None
            else f"merge {s['rank']}: {show(s['pair'][0], byte_level)} + {show(s['pair'][1], byte_level)}"
        )
        items.append(
            el(
                "li",
                {"data-testid": "train-step"},
                el("span", {"class": "step-label"}, label),
                el(
                    "span",
                    {"class": "parts"},
                    *(
                        el("code", {"class": "part"}, *symbol_nodes(p, byte_level))
                        for p in s["parts"]
                    ),
                ),
            )
        )
    agree = steps[-1]["parts"] == final
    return el(
        "div",
        {},
        el("ol", {"class": "steps"}, *items),
        el(
            "p",
            {"data-testid": "train-word-result"},
            "Tokens: ",
            *(
                el(
                    "code",
                    {"class": "part", "data-testid": "train-token"},
                    *symbol_nodes(p, byte_level),
                )
                for p in final
            ),
        ),
        None
        if agree
        else el("p", {"class": "warn"}, "The core's tokens differ from the steps above."),
    )


def format_ms(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def status_text(count: int, initial: int, target: int, ms: float, state: str) -> str:
    vocab = initial + count
    where = {
        "running": "training…",
        "done": "done",
        "cancelled": "cancelled",
        "exhausted": "done (no pair left to merge)",
    }.get(state, state)
    return f"{count:,} merges, vocabulary {vocab:,} of {target:,} — {where} ({format_ms(ms)})"


# ------------------------------------------------------------------ exercise 1: morphemes

# Common Russian morphemes, from the standard descriptions of Russian word formation and
# inflection: Русская грамматика, т. 1 (АН СССР, 1980), §§ on word formation and declension/
# conjugation endings; Wiktionary, Category:Russian prefixes / suffixes. (form, kind, example)
MORPHEMES = [
    ("пере", "prefix", "переход"),
    ("при", "prefix", "приход"),
    ("про", "prefix", "проход"),
    ("под", "prefix", "подход"),
    ("раз", "prefix", "разговор"),
    ("рас", "prefix", "рассказ"),
    ("без", "prefix", "безумный"),
    ("вы", "prefix", "выход"),
    ("за", "prefix", "заход"),
    ("на", "prefix", "написать"),
    ("по", "prefix", "поход"),
    ("от", "prefix", "отход"),
    ("до", "prefix", "доход"),
    ("об", "prefix", "обход"),
    ("пред", "prefix", "предмет"),
    ("ость", "suffix", "радость"),
    ("ени", "suffix", "движение"),
    ("ани", "suffix", "знание"),
    ("ова", "suffix", "рисовать"),
    ("ева", "suffix", "воевать"),
    ("тель", "suffix", "учитель"),
    ("ник", "suffix", "работник"),
    ("ств", "suffix", "братство"),
    ("енн", "suffix", "военный"),
    ("ическ", "suffix", "исторический"),
    ("ск", "suffix", "русский"),
    ("ок", "suffix", "кружок"),
    ("мент", "suffix", "документ"),
    ("ка", "suffix", "ручка"),
    ("ого", "ending", "нового"),
    ("его", "ending", "синего"),
    ("ому", "ending", "новому"),
    ("ами", "ending", "руками"),
    ("ями", "ending", "днями"),
    ("ах", "ending", "руках"),
    ("ях", "ending", "днях"),
    ("ый", "ending", "новый"),
    ("ий", "ending", "синий"),
    ("ой", "ending", "большой"),
    ("ая", "ending", "новая"),
    ("ое", "ending", "новое"),
    ("ые", "ending", "новые"),
    ("ие", "ending", "синие"),
    ("ся", "ending", "учится"),
    ("ть", "ending", "читать"),
    ("ет", "ending", "читает"),
    ("ют", "ending", "читают"),
    ("ешь", "ending", "читаешь"),
    ("ит", "ending", "говорит"),
    ("ат", "ending", "лежат"),
    ("ов", "ending", "столов"),
    ("ей", "ending", "людей"),
    ("ом", "ending", "столом"),
    ("ем", "ending", "полем"),
    ("ал", "ending", "читал"),
    ("ла", "ending", "читала"),
    ("ли", "ending", "читали"),
    ("ите", "ending", "выберите"),
    ("ам", "ending", "рукам"),
    ("ие", "ending", "движение"),
    ("ия", "ending", "функция"),
    ("а", "ending", "рука"),
    ("я", "ending", "земля"),
    ("е", "ending", "поле"),
    ("и", "ending", "руки"),
    ("ы", "ending", "столы"),
    ("у", "ending", "руку"),
    ("ю", "ending", "землю"),
    ("о", "ending", "окно"),
]


def morpheme_for(symbol: str) -> dict | None:
    """The listed morpheme a merged symbol matches, if any.

    Symbols carry "_" at a word's end. An ending matches a symbol that ends a word with it
    ("ого_"); a suffix of three letters or more one that contains it, a shorter one only
    itself; a prefix likewise, but never at a word's end (there it is a whole word, like the
    preposition "по"). Longer morphemes are tried first.

    >>> morpheme_for("ение_")["form"], morpheme_for("ся_")["form"], morpheme_for("по"), morpheme_for("ст")
    ('-ени', '-ся', {'form': 'по-', 'kind': 'prefix', 'example': 'поход'}, None)
    """
    core = symbol.rstrip(END_OF_WORD)
    at_end = symbol.endswith(END_OF_WORD)
    if not core:
        return None
    for form, kind, example in sorted(MORPHEMES, key=lambda m: -len(m[0])):
        if kind == "ending":
            hit = at_end and core.endswith(form)
        elif kind == "suffix":
            hit = form in core if len(form) >= 3 else core == form
        else:
            hit = not at_end and (core.startswith(form) if len(form) >= 3 else core == form)
        if hit:
            return {
                "form": ("-" + form if kind != "prefix" else form + "-"),
                "kind": kind,
                "example": example,
            }
    return None


def render_exercise1(merges: list) -> Node:
    notes = [morpheme_for(m[3]) for m in merges]
    found = sum(n is not None for n in notes)
    return el(
        "div",
        {},
        el(
            "p",
            {"data-testid": "ex1-summary"},
            f"{found} of the first {len(merges)} merges match a listed Russian morpheme.",
        ),
        render_merges(merges, testid="ex1-merges", notes=notes),
    )


# ------------------------------------------------------------------ exercise 2: fertility

# The tokenizers of the fertility table, in order: (key, label). "trained" is the Train tab's.
FERTILITY = [
    ("bert-base-uncased", "bert-base-uncased (WordPiece)"),
    ("gpt2", "GPT-2"),
    ("cl100k_base", "cl100k_base (GPT-4)"),
    ("o200k_base", "o200k_base (GPT-4o)"),
    ("qwen3", "Qwen3"),
    ("trained", "just trained"),
]


def words(text: str) -> int:
    """Whitespace-separated words (str.split), the denominator of fertility."""
    return len(text.split())


def fertility_rows(counts: dict, n_words: dict) -> list[dict]:
    """One row per tokenizer that has counts: tokens, tokens per word, and the Russian
    text's cost relative to the English one (ru tokens / en tokens)."""
    rows = []
    for key, label in FERTILITY:
        c = counts.get(key)
        if not c:
            continue
        rows.append(
            {
                "key": key,
                "label": c.get("label", label),
                "en": c["en"],
                "ru": c["ru"],
                "fert_en": c["en"] / n_words["en"],
                "fert_ru": c["ru"] / n_words["ru"],
                "ratio": c["ru"] / c["en"],
            }
        )
    return rows


def render_fertility(rows: list[dict], n_words: dict) -> Node:
    table = _table(
        "ex2-table",
        ["tokenizer", "en tokens", "ru tokens", "en tokens/word", "ru tokens/word", "ru cost ÷ en"],
        [
            [
                el(
                    "span",
                    {"role": "cell", "data-testid": "ex2-name", "data-key": r["key"]},
                    r["label"],
                ),
                el("span", {"role": "cell", "data-testid": "ex2-en"}, str(r["en"])),
                el("span", {"role": "cell", "data-testid": "ex2-ru"}, str(r["ru"])),
                f"{r['fert_en']:.2f}",
                f"{r['fert_ru']:.2f}",
                el("span", {"role": "cell", "data-testid": "ex2-ratio"}, f"{r['ratio']:.2f}×"),
            ]
            for r in rows
        ],
    )
    return el(
        "div",
        {},
        el(
            "p",
            {"class": "muted"},
            f"Words (split on whitespace): English {n_words['en']:,}, Russian {n_words['ru']:,}.",
        ),
        table,
        fertility_chart(rows),
    )


def fertility_chart(rows: list[dict]) -> Node:
    """Grouped horizontal bars: tokens per word, English and Russian, per tokenizer."""
    if not rows:
        return el("p", {}, "")
    top = max(max(r["fert_en"], r["fert_ru"]) for r in rows) or 1.0
    label_w, bar_w, row_h, pad = 190, 360, 34, 4
    height = row_h * len(rows) + 24
    items = []
    for i, r in enumerate(rows):
        y = i * row_h
        items.append(el("text", {"x": "0", "y": str(y + 20), "class": "chart-label"}, r["label"]))
        for j, (lang, value) in enumerate((("en", r["fert_en"]), ("ru", r["fert_ru"]))):
            w = max(1, round(bar_w * value / top))
            yy = y + pad + j * 14
            items.append(
                el(
                    "rect",
                    {
                        "x": str(label_w),
                        "y": str(yy),
                        "width": str(w),
                        "height": "12",
                        "class": f"bar-{lang}",
                        "data-testid": f"ex2-bar-{lang}",
                    },
                    el("title", {}, f"{r['label']}, {lang}: {value:.2f} tokens per word"),
                )
            )
            items.append(
                el(
                    "text",
                    {"x": str(label_w + w + 4), "y": str(yy + 10), "class": "chart-value"},
                    f"{value:.2f}",
                )
            )
    items.append(
        el(
            "text",
            {"x": str(label_w), "y": str(height - 4), "class": "chart-legend"},
            "tokens per word: upper bar English, lower bar Russian",
        )
    )
    return el(
        "svg",
        {
            "viewBox": f"0 0 {label_w + bar_w + 60} {height}",
            "width": str(label_w + bar_w + 60),
            "height": str(height),
            "role": "img",
            "data-testid": "ex2-chart",
            "aria-label": "tokens per word, English and Russian, per tokenizer",
        },
        *items,
    )


# ------------------------------------------------------------------ exercise 3: indentation

INDENT_SNIPPET = """def total(prices, tax):
    result = 0
    for price in prices:
        if price > 0:
            result += price * (1 + tax)
    return result
"""


def indent_runs(text: str) -> list[tuple[int, int, int]]:
    """(line number from 1, start byte, end byte) of every line's leading spaces."""
    runs, at = [], 0
    for n, line in enumerate(text.split("\n"), 1):
        width = len(line) - len(line.lstrip(" "))
        start = at
        if width:
            runs.append((n, start, start + width))
        at += len(line.encode()) + 1
    return runs


def indent_tokens(
    spans: list[tuple[int, int, str]], run: tuple[int, int, int]
) -> list[tuple[int, int, str]]:
    """The tokens (start byte, end byte, text) that overlap an indentation run."""
    _, s, e = run
    return [t for t in spans if t[0] < e and t[1] > s]


def indent_verdict(tokens: list, run: tuple[int, int, int]) -> str:
    """Is the indentation one token? Says which tokens hold its spaces.

    >>> indent_verdict([(1, 4, "   "), (4, 11, " result")], (2, 0, 4))
    '1 token (3 spaces); the last space begins " result"'
    >>> indent_verdict([(0, 4, "    ")], (2, 0, 4))
    'one token'
    """
    _, s, e = run
    if not tokens:
        return "no token: whitespace is dropped"
    inside = [t for t in tokens if t[0] >= s and t[1] <= e]
    if len(tokens) == 1 and (tokens[0][0], tokens[0][1]) == (s, e):
        return "one token"
    parts = []
    if inside:
        widths = "+".join(str(t[1] - t[0]) for t in inside)
        parts.append(f"{len(inside)} token{'s' if len(inside) > 1 else ''} ({widths} spaces)")
    for t in tokens:
        if t in inside:
            continue
        if t[0] < s:
            parts.append(f'the first spaces end "{t[2]}"')
        else:
            parts.append(
                f'the last space{"s" if e - t[0] > 1 else ""} begin{"" if e - t[0] > 1 else "s"} "{t[2]}"'
            )
    return "; ".join(parts)


def indent_table(spans_by_name: dict, text: str = INDENT_SNIPPET) -> list[dict]:
    """Per tokenizer and indented line: the run's width, its tokens and the verdict."""
    out = []
    for key, label in FERTILITY:
        spans = spans_by_name.get(key)
        if spans is None:
            continue
        for run in indent_runs(text):
            toks = indent_tokens(spans, run)
            out.append(
                {
                    "key": key,
                    "label": label,
                    "line": run[0],
                    "width": run[2] - run[1],
                    "tokens": [t[2] for t in toks],
                    "verdict": indent_verdict(toks, run),
                }
            )
    return out


def render_indent(rows: list[dict]) -> Node:
    return _table(
        "ex3-table",
        ["tokenizer", "line", "spaces", "tokens over the indentation", "verdict"],
        [
            [
                r["label"],
                str(r["line"]),
                str(r["width"]),
                el(
                    "span",
                    {"role": "cell", "data-testid": "ex3-tokens"},
                    *(el("code", {"class": "part"}, *symbol_nodes(t)) for t in r["tokens"]),
                ),
                el("span", {"role": "cell", "data-testid": "ex3-verdict"}, r["verdict"]),
            ]
            for r in rows
        ],
    )


def render_snippet(text: str = INDENT_SNIPPET) -> Node:
    return el("code", {"class": "snippet", "data-testid": "ex3-snippet"}, text)
