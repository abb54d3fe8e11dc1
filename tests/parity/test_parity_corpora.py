"""The development corpora (scripts/data/corpora.py), truncation and padding off: one SHA-256
of all ids per corpus, identical to tokenizers 0.23.3's (offsets hashed too).

Both sides get the same chunks: consecutive lines (line ends kept, so every separator character
in the text reaches the tokenizer) grouped up to CHUNK characters, encoded with encode_batch.
On a mismatch the first differing line is reported.
"""

from __future__ import annotations

import hashlib
import time
from array import array

import pytest

from parity import codepoints, first_diff
from paths import CORPORA, corpus

CHUNK = 4096
BATCH = 256


def chunks(text: str) -> list[str]:
    out, cur, n = [], [], 0
    for line in text.splitlines(keepends=True):
        cur.append(line)
        n += len(line)
        if n >= CHUNK:
            out.append("".join(cur))
            cur, n = [], 0
    if cur:
        out.append("".join(cur))
    return out


def digest(tok, parts: list[str]):
    ids_h, offs_h = hashlib.sha256(), hashlib.sha256()
    n_tokens = 0
    t0 = time.perf_counter()
    for i in range(0, len(parts), BATCH):
        for e in tok.encode_batch(parts[i : i + BATCH]):
            ids = e.ids
            n_tokens += len(ids)
            ids_h.update(array("I", [len(ids)] + ids).tobytes())
            offs_h.update(array("I", [x for o in e.offsets for x in o]).tobytes())
    return ids_h.hexdigest(), offs_h.hexdigest(), n_tokens, time.perf_counter() - t0


def locate(ours, ref, parts: list[str]) -> str:
    """The first line (within the first chunk) whose encoding differs."""
    for p in parts:
        a, b = ours.encode(p), ref.encode(p)
        if a.ids == b.ids and a.offsets == b.offsets:
            continue
        for line in p.splitlines(keepends=True):
            x, y = ours.encode(line), ref.encode(line)
            if x.ids != y.ids:
                return f"line {codepoints(line)}\n ids: {first_diff(x.ids, y.ids)}"
            if x.offsets != y.offsets:
                return f"line {codepoints(line)}\n offsets: {first_diff(x.offsets, y.offsets)}"
        what = "ids" if a.ids != b.ids else "offsets"
        k = (a.ids, b.ids) if a.ids != b.ids else (a.offsets, b.offsets)
        return f"chunk {codepoints(p)} (no single line differs)\n {what}: {first_diff(*k)}"
    return "no single chunk differs (batching?)"


@pytest.mark.parametrize("lang", CORPORA)
def test_corpus_hash(toks, lang):
    ours, ref = toks
    path = corpus(lang)
    with open(path, encoding="utf-8", newline="") as f:  # newline="": keep \r and \r\n
        text = f.read()
    parts = chunks(text)
    assert "".join(parts) == text
    a_ids, a_offs, a_n, a_t = digest(ours, parts)
    b_ids, b_offs, b_n, b_t = digest(ref, parts)
    size = path.stat().st_size
    print(
        f"\n{lang}: {size:,} bytes, {len(text):,} chars, {len(parts):,} chunks, {b_n:,} tokens; "
        f"ids sha256 {b_ids[:16]}; ours {a_t:.1f}s ({size / a_t / 1e6:.1f} MB/s), "
        f"reference {b_t:.1f}s ({size / b_t / 1e6:.1f} MB/s) [encode_batch]"
    )
    # A short file is a build cut off; the smallest whole corpus, he, has 660 KB.
    assert size > 500_000, f"{path} is only {size} bytes: rebuild it with ./build.sh setup"
    if (a_ids, a_offs) != (b_ids, b_offs):
        which = "ids" if a_ids != b_ids else "offsets (ids identical)"
        pytest.fail(
            f"{lang}: {which} hash differs: ours {a_ids if a_ids != b_ids else a_offs} vs "
            f"reference {b_ids if a_ids != b_ids else b_offs} ({a_n} vs {b_n} tokens)\n"
            + locate(ours, ref, parts)
        )
