"""The Bench tab's pure logic: the benchmark results (driver.js's runBench) as a bar chart
and a table of shell/dom.py nodes, beside the native figures of `./build.sh bench` when present.

Imported by the tab's app.py in Pyodide and by the tests (pytest), so it uses no browser API.
"""

from __future__ import annotations

from shell.dom import Node, el

TOKENIZER_LABELS = {"bert": "bert-base-uncased", "o200k": "o200k_base"}
OP_LABELS = {"normalize": "normalizer alone", "encode": "full encode (ids)"}

BAR_H = 16
GAP = 4
LABEL_W = 190
BAR_W = 360
VALUE_W = 90


def native_figures(native: dict | None, corpus: str, tokenizer: str, op: str) -> dict | None:
    """The native module's MB/s for a cell, from the JSON of `./build.sh bench`
    (bench/results.json: BERT only; the ids-only encode, the normalizer alone), or from
    bench_web's own native runs on the same slices (key "native_web")."""
    if not native or tokenizer != "bert":
        return None
    table = native.get(op) or {}
    cell = table.get(corpus) or {}
    name = "tokenprism-ids" if op == "encode" and "tokenprism-ids" in cell else "tokenprism"
    row = cell.get(name)
    if not row or row.get("mbps") is None:
        return None
    return {
        "name": f"native ({name})",
        "mbps": row["mbps"],
        "sha256": row.get("sha256"),
        "date": native.get("date"),
        "bytes": row.get("bytes"),
    }


def fmt_mbps(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def fmt_ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def cell_title(cell: dict) -> str:
    return f"{cell['corpus']} · {TOKENIZER_LABELS.get(cell['tokenizer'], cell['tokenizer'])} · {OP_LABELS.get(cell['op'], cell['op'])}"


def bars(cell: dict, native: dict | None = None) -> list[dict]:
    """The bars of one cell: every run that has a speed, then the native figure if any.
    Each: label, mbps, kind (ours / peer / native), ok (its ids hash equals the first run's)."""
    out = []
    base = cell["runs"][0]["sha256"] if cell["runs"] else None
    for r in cell["runs"]:
        if r.get("mbps") is None:
            continue
        out.append(
            {
                "label": r["label"],
                "mbps": r["mbps"],
                "kind": r.get("kind", "ours"),
                "ok": r.get("sha256") == base,
            }
        )
    nat = native_figures(native, cell["corpus"], cell["tokenizer"], cell["op"])
    if nat:
        out.append(
            {"label": "native (same machine)", "mbps": nat["mbps"], "kind": "native", "ok": True}
        )
    return out


def chart(cell: dict, native: dict | None = None) -> Node:
    """One cell as a horizontal SVG bar chart of MB/s, bars scaled to the fastest."""
    bs = bars(cell, native)
    top = max((b["mbps"] for b in bs), default=0) or 1
    height = len(bs) * (BAR_H + GAP) + GAP
    width = LABEL_W + BAR_W + VALUE_W
    rows = []
    for i, b in enumerate(bs):
        y = GAP + i * (BAR_H + GAP)
        w = max(1, round(BAR_W * b["mbps"] / top))
        cls = f"bench-bar {b['kind']}" + ("" if b["ok"] else " mismatch")
        tip = f"{b['label']}: {fmt_mbps(b['mbps'])} MB/s" + ("" if b["ok"] else " (ids differ!)")
        rows.append(
            el(
                "g",
                {"data-testid": "bench-bar"},
                el("title", {}, tip),
                el(
                    "text",
                    {"x": str(LABEL_W - 6), "y": str(y + BAR_H - 4), "class": "bench-label"},
                    b["label"],
                ),
                el(
                    "rect",
                    {
                        "x": str(LABEL_W),
                        "y": str(y),
                        "width": str(w),
                        "height": str(BAR_H),
                        "class": cls,
                    },
                ),
                el(
                    "text",
                    {"x": str(LABEL_W + w + 4), "y": str(y + BAR_H - 4), "class": "bench-value"},
                    f"{fmt_mbps(b['mbps'])} MB/s",
                ),
            )
        )
    return el(
        "div",
        {"class": "bench-cell", "data-testid": "bench-cell"},
        el("h3", {}, cell_title(cell)),
        el(
            "svg",
            {
                "viewBox": f"0 0 {width} {height}",
                "width": str(width),
                "height": str(height),
                "role": "img",
                "aria-label": f"MB/s, {cell_title(cell)}",
                "data-testid": "bench-chart",
            },
            *rows,
        ),
    )


def hashes_agree(cell: dict) -> bool:
    """Whether every tokenprism run of the cell gave the same ids (or normalized text)."""
    hs = {r.get("sha256") for r in cell["runs"] if r.get("kind", "ours") == "ours"}
    return len(hs) == 1


def table(results: dict, native: dict | None = None) -> Node:
    """Every run as a row: cell, run, MB/s, ratio to wasm simd128, ids hash (short), match."""
    head = ["corpus", "tokenizer", "stage", "run", "MB/s", "vs simd128", "ids hash", "ids"]
    rows = [
        el(
            "div",
            {"role": "row", "class": "bench-row head"},
            *[el("span", {"role": "columnheader"}, h) for h in head],
        )
    ]
    for cell in results.get("cells", []):
        base = cell["runs"][0].get("sha256") if cell["runs"] else None
        for r in cell["runs"]:
            ok = r.get("sha256") == base
            rows.append(
                el(
                    "div",
                    {"role": "row", "class": "bench-row", "data-testid": "bench-row"},
                    el("span", {"role": "cell"}, cell["corpus"]),
                    el(
                        "span",
                        {"role": "cell"},
                        TOKENIZER_LABELS.get(cell["tokenizer"], cell["tokenizer"]),
                    ),
                    el("span", {"role": "cell"}, cell["op"]),
                    el("span", {"role": "cell"}, r["label"]),
                    el("span", {"role": "cell", "class": "num"}, fmt_mbps(r.get("mbps"))),
                    el("span", {"role": "cell", "class": "num"}, fmt_ratio(r.get("vs_base"))),
                    el("code", {"role": "cell"}, (r.get("sha256") or "")[:12]),
                    el(
                        "span",
                        {"role": "cell", "class": "ok" if ok else "bad"},
                        "same" if ok else "DIFFERENT",
                    ),
                )
            )
        nat = native_figures(native, cell["corpus"], cell["tokenizer"], cell["op"])
        if nat:
            rows.append(
                el(
                    "div",
                    {"role": "row", "class": "bench-row native", "data-testid": "bench-row"},
                    el("span", {"role": "cell"}, cell["corpus"]),
                    el(
                        "span",
                        {"role": "cell"},
                        TOKENIZER_LABELS.get(cell["tokenizer"], cell["tokenizer"]),
                    ),
                    el("span", {"role": "cell"}, cell["op"]),
                    el("span", {"role": "cell"}, f"{nat['name']}, {nat.get('date') or ''}"),
                    el("span", {"role": "cell", "class": "num"}, fmt_mbps(nat["mbps"])),
                    el("span", {"role": "cell", "class": "num"}, "–"),
                    el("code", {"role": "cell"}, (nat.get("sha256") or "")[:12]),
                    el("span", {"role": "cell"}, "other input" if nat.get("bytes") else ""),
                )
            )
    return el("div", {"role": "table", "class": "bench-table", "data-testid": "bench-table"}, *rows)


def summary(results: dict) -> str:
    cells = results.get("cells", [])
    bad = [c for c in cells if not hashes_agree(c)]
    text = f"{len(cells)} cell(s) in {results.get('seconds', 0):.1f} s; "
    text += (
        "every tokenprism run gave the same ids"
        if not bad
        else "ids DIFFER in: " + ", ".join(cell_title(c) for c in bad)
    )
    if results.get("problems"):
        text += f"; {len(results['problems'])} run(s) failed: " + "; ".join(
            f"{p['run']} ({p['corpus']}/{p['op']}): {p['error']}" for p in results["problems"][:3]
        )
    return text


def render(results: dict, native: dict | None = None) -> list[Node]:
    """The whole result area: summary line, one chart per cell, the table."""
    return [
        el("p", {"data-testid": "bench-summary"}, summary(results)),
        *[chart(c, native) for c in results.get("cells", [])],
        table(results, native),
    ]
