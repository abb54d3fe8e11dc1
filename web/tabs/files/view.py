"""The Files tab's views: a file's count and a text's chunks, as node trees (shell/dom.py).

Pure Python with no browser imports, tested under CPython.

    >>> summary({"bytes": 2_000_000, "documents": 3, "tokens": 500_000, "docs": "line",
    ...          "seconds": 2.0, "name": "a.txt"}).find("file-tokens").text()
    '500,000'
"""

from __future__ import annotations

from shell.dom import Node, el

DOCS_LABELS = {
    "line": "a line (empty lines skipped)",
    "blank-line": "a run of non-blank lines",
    "file": "the whole file",
}
# Chars of the text the chunk view draws; the JSONL download holds every chunk.
SHOWN_CHARS = 20_000
SAMPLE = (
    "Tokenizers cut text into tokens. A model sees only those tokens, so how many a text "
    "takes decides what fits in its window.\n\n"
    "Long documents are split into chunks before they are embedded or retrieved. A good cut "
    "falls between paragraphs, or at least between sentences! Only when a sentence alone is "
    "too long does it fall between two tokens.\n\n"
    "Each chunk's count here is the count of its own text encoded alone."
)
CUT_LABELS = {"paragraph": "¶", "sentence": "sentence", "token": "token", "end": "end"}


def summary(result: dict) -> Node:
    """A finished count: the file, its size, documents (and what one is), tokens, speed."""
    seconds = max(result["seconds"], 1e-9)
    rows = [
        ("file", result["name"], "file-name"),
        ("bytes", f"{result['bytes']:,}", "file-bytes"),
        ("a document is", DOCS_LABELS[result["docs"]], "file-docs"),
        ("documents", f"{result['documents']:,}", "file-documents"),
        ("tokens", f"{result['tokens']:,}", "file-tokens"),
        ("time", f"{seconds:.1f} s ({result['bytes'] / 1e6 / seconds:.1f} MB/s)", "file-time"),
    ]
    return el(
        "dl",
        {"class": "inspect", "data-testid": "file-summary"},
        *(el("div", {}, el("dt", {}, k), el("dd", {"data-testid": tid}, v)) for k, v, tid in rows),
    )


def parse_max(raw: str) -> int | None:
    """The chunk size the box asks for, or None when it is not a whole number from 1 on.

    >>> parse_max(" 64 "), parse_max("0"), parse_max("x")
    (64, None, None)
    """
    raw = raw.strip()
    if not raw.isdigit() or int(raw) < 1:
        return None
    return min(int(raw), 1_000_000)


def chunk_status(reply: dict, max_tokens: int) -> str:
    chunks = reply["chunks"]
    over = sum(1 for tokens, _ in chunks if tokens > max_tokens)
    kinds = {k: sum(1 for _, cut in chunks if cut == k) for k in ("paragraph", "sentence", "token")}
    text = (
        f"{len(chunks):,} chunks of at most {max_tokens:,} tokens: "
        f"{kinds['paragraph']:,} end at a paragraph, {kinds['sentence']:,} at a sentence, "
        f"{kinds['token']:,} between tokens"
    )
    if over:
        text += f"; {over:,} over the limit (a single char of more tokens)"
    return text


def render_chunks(reply: dict) -> list[Node]:
    """The shown part of the text, chunk by chunk, with a marker after each whole chunk
    giving its token count and what it ends at.

    >>> nodes = render_chunks({"shown": [["A b. ", 3, "sentence"], ["C", 1, "end"]],
    ...                        "length": 6, "shown_length": 6})
    >>> [n.text() for n in nodes]
    ['A b. ', '3 · sentence', 'C', '1 · end']
    """
    out: list[Node] = []
    whole = reply["shown_length"] == reply["length"]
    for k, (text, tokens, cut) in enumerate(reply["shown"]):
        out.append(el("span", {"class": f"chunk c{k % 6}", "data-testid": "chunk"}, text))
        if whole or k + 1 < len(reply["shown"]):
            out.append(
                el(
                    "span",
                    {
                        "class": "chunk-cut",
                        "data-testid": "chunk-cut",
                        "title": f"chunk {k + 1}: {tokens} tokens, ends at: {cut}",
                    },
                    f"{tokens} · {CUT_LABELS[cut]}",
                )
            )
    if not whole:
        out.append(
            el(
                "p",
                {"class": "muted"},
                f"Showing the first {reply['shown_length']:,} of {reply['length']:,} characters; "
                "the download holds every chunk.",
            )
        )
    return out
