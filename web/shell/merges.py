"""The merge view: how BPE joins one pre-token's symbols, merge by merge with each pair's
rank (the Tokenize tab's BPE model step; the BPE tab's merges). Pure Python, as the tabs'
views are.

    >>> byte_label(bytes([0xE4, 0xBD]))
    '<E4><BD>'
    >>> piece_label("a東".encode()[:3])
    'a<E6><9D>'
"""

from __future__ import annotations

import json

from shell.chars import visible
from shell.dom import Node, el

# ----------------------------------------------------------------------------------- bytes


def byte_label(data: bytes) -> str:
    """Bytes as <XX> labels, the way the page writes a token that is not whole characters."""
    return "".join(f"<{b:02X}>" for b in data)


def _char_len(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def piece_label(data: bytes) -> str:
    """Bytes as text where they are whole UTF-8 characters and <XX> where they are not.

    >>> piece_label(b" hi"), piece_label(bytes([0xBD, 0xA0])), piece_label("é".encode())
    (' hi', '<BD><A0>', 'é')
    """
    out = []
    i = 0
    while i < len(data):
        n = _char_len(data[i])
        if n and i + n <= len(data):
            try:
                out.append(data[i : i + n].decode("utf-8"))
                i += n
                continue
            except UnicodeDecodeError:
                pass
        out.append(byte_label(data[i : i + 1]))
        i += 1
    return "".join(out)


def is_whole(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# ---------------------------------------------------------------------------------- merges


def merge_rows(piece: dict) -> list[dict]:
    """The merge sequence of one pre-token: row 0 its symbols, then one row per merge with the
    pair (as labels), its rank, the merged id and every part after it (as labels).

    A byte-level piece trace (`BpeTokenizer.trace_piece`: "bytes") labels parts by their
    bytes: parts after a merge are contiguous byte ranges of the piece, tracked here as the
    merges join neighbours. A model's merge trace (`mergeTrace`: "tokens") labels them by
    token text.

    >>> rows = merge_rows({"bytes": list(b"aab"), "initial": [0, 0, 1], "ids": [5],
    ...     "steps": [{"index": 0, "left": 0, "right": 0, "rank": 3, "merged": 4,
    ...                "parts": [4, 1]},
    ...               {"index": 0, "left": 4, "right": 1, "rank": 7, "merged": 5, "parts": [5]}]})
    >>> [(r["pair"], r["rank"], r["parts"]) for r in rows]
    [(None, None, ['a', 'a', 'b']), (('a', 'a'), 3, ['aa', 'b']), (('aa', 'b'), 7, ['aab'])]
    """
    if "bytes" not in piece:
        return _token_rows(piece)
    data = bytes(piece["bytes"])
    spans = [(i, i + 1) for i in range(len(data))]
    ids = list(piece["initial"])
    rows = [
        {
            "step": 0,
            "pair": None,
            "rank": None,
            "merged": None,
            "parts": [piece_label(data[a:b]) for a, b in spans],
            "ids": ids,
            "partial": [not is_whole(data[a:b]) for a, b in spans],
        }
    ]
    for n, s in enumerate(piece["steps"], 1):
        i = s["index"]
        left, right = spans[i], spans[i + 1]
        spans[i : i + 2] = [(left[0], right[1])]
        rows.append(
            {
                "step": n,
                "pair": (
                    piece_label(data[left[0] : left[1]]),
                    piece_label(data[right[0] : right[1]]),
                ),
                "rank": s["rank"],
                "merged": s["merged"],
                "parts": [piece_label(data[a:b]) for a, b in spans],
                "ids": list(s["parts"]),
                "partial": [not is_whole(data[a:b]) for a, b in spans],
            }
        )
    return rows


def _token_rows(piece: dict) -> list[dict]:
    """merge_rows of a trace that names its tokens: the initial symbols' texts, then each
    merged token's.

    >>> rows = _token_rows({"initial": [0, 1], "ids": [2], "tokens": ["a", "b", "ab"],
    ...     "steps": [{"index": 0, "left": 0, "right": 1, "rank": 0, "merged": 2, "parts": [2]}]})
    >>> [(r["pair"], r["rank"], r["parts"]) for r in rows]
    [(None, None, ['a', 'b']), (('a', 'b'), 0, ['ab'])]
    """
    ids = list(piece["initial"])
    names = piece["tokens"]
    parts = list(names[: len(ids)])
    rows = [
        {
            "step": 0,
            "pair": None,
            "rank": None,
            "merged": None,
            "parts": list(parts),
            "ids": ids,
            "partial": [False] * len(ids),
        }
    ]
    for n, s in enumerate(piece["steps"], 1):
        i = s["index"]
        pair = (parts[i], parts[i + 1])
        parts[i : i + 2] = [names[len(ids) + n - 1]]
        rows.append(
            {
                "step": n,
                "pair": pair,
                "rank": s["rank"],
                "merged": s["merged"],
                "parts": list(parts),
                "ids": list(s["parts"]),
                "partial": [False] * len(parts),
            }
        )
    return rows


def _part_chips(row: dict) -> Node:
    return el(
        "ol",
        {"class": "chips parts"},
        *(
            el(
                "li",
                {
                    "class": "chip" + (" partial" if bad else ""),
                    "data-testid": "bpe-merge-part",
                    "data-part": lab,
                    "title": f"id {i}" + (" · bytes, not whole characters" if bad else ""),
                },
                visible(lab),
            )
            for lab, i, bad in zip(row["parts"], row["ids"], row["partial"])
        ),
    )


def render_merges(pre: dict | None, piece: dict | None) -> Node:
    if pre is None or piece is None:
        return el(
            "p",
            {"class": "muted", "data-testid": "bpe-merges"},
            "Select a pre-token (click it, or Tab to it and press Enter) to see its merges.",
        )
    rows = merge_rows(piece)
    items = []
    for r in rows:
        if r["pair"] is None:
            what = "bytes" if "bytes" in piece else "symbols"
            head = el("span", {"class": "merge-head"}, f"{what} ({len(r['parts'])})")
        else:
            a, b = r["pair"]
            head = el(
                "span",
                {"class": "merge-head"},
                el(
                    "code",
                    {"data-testid": "bpe-merge-pair", "data-left": a, "data-right": b},
                    f"{visible(a)} + {visible(b)}",
                ),
                el("span", {"class": "muted"}, " rank "),
                el("span", {"data-testid": "bpe-merge-rank"}, str(r["rank"])),
                el("span", {"class": "muted"}, f" → id {r['merged']}"),
            )
        items.append(
            el(
                "li",
                {"class": "merge-row", "data-testid": "bpe-merge-row", "data-step": str(r["step"])},
                head,
                _part_chips(r),
            )
        )
    final = list(piece["ids"])
    note = None
    if piece.get("whole_token") is not None:
        note = el(
            "p",
            {"class": "note", "data-testid": "bpe-whole-note"},
            f"The whole pre-token is one token (id {piece['whole_token']}), so the "
            "tokenizer takes it as is; the merges below show how BPE would get there.",
        )
    return el(
        "div",
        {"data-testid": "bpe-merges", "data-piece": pre["text"]},
        el(
            "p",
            {},
            "Pre-token ",
            el("code", {"data-testid": "bpe-merge-piece"}, visible(pre["text"])),
            f": {len(rows) - 1} merge{'s' if len(rows) != 2 else ''}, ids ",
            el("code", {"data-testid": "bpe-merge-ids"}, json.dumps(final)),
        ),
        note,
        el("ol", {"class": "merges"}, *items),
    )
