#!/usr/bin/env python3
"""Writes a Hugging Face tokenizer.json for a tiktoken encoding (cl100k_base, o200k_base), so
that `tokenizers` can be benchmarked on it (scripts/bench/bpe_bench.py).

    python3 scripts/data/tiktoken_to_hf.py o200k_base [OUT]   # default OUT: <data>/bpe/o200k/tokenizer.json

How the file is derived from the rank file (facts of the format, no other converter used):
- vocab: each token's bytes through GPT-2's byte-to-unicode table, id = rank;
- merges: token T of rank r (two bytes or more) is what BPE makes of T's bytes using only the
  ranks below r; that leaves exactly two parts (a, b), and "a b" is merge number k, in rank
  order. BPE with these merges takes the same steps as tiktoken's (lowest rank first);
- ignore_merges: true, as tiktoken takes a pre-token that is a token as that token;
- pre_tokenizer: Split on the encoding's regex (isolated), then ByteLevel without its regex.
Before writing, the result is checked: its ids must equal tiktoken's on every corpus sample
given with --check (default: the first 200 KB of each corpus in <data>/corpora).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from pathlib import Path

DATA = Path(os.environ.get("TOKENPRISM_DATA", Path.home() / ".cache/tokenprism/data"))


# tiktoken's cl100k regex ends in `\s++$`, and `$` in Oniguruma (which `tokenizers` uses) also
# matches before a newline: the older spelling has no `$`. It splits the same except on a
# whitespace run that ends the text and has a newline before other whitespace ("x\n " is x, \n,
# space there; x, "\n " in tiktoken), which the --check samples do not meet.
HF_PATTERNS = {
    "cl100k_base": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-level alphabet: printable Latin-1 bytes stand for themselves, the others
    are shifted to U+0100 and up, in byte order."""
    keep = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    out, n = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


def read_ranks(path: Path) -> dict[bytes, int]:
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def split_of(token: bytes, rank: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """The last pair BPE merges on `token`'s bytes using only ranks below `rank`."""
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, at = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < rank and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    if len(parts) != 2:
        raise SystemExit(f"token {token!r} (rank {rank}) does not reduce to a pair: {parts}")
    return parts[0], parts[1]


def build(encoding: str) -> dict:
    import tiktoken

    enc = tiktoken.get_encoding(encoding)
    ranks = read_ranks(DATA / "bpe" / f"{encoding}.tiktoken")
    b2u = bytes_to_unicode()

    def show(b):
        return "".join(b2u[x] for x in b)

    vocab = {show(t): r for t, r in ranks.items()}
    merges = []
    for t, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(t) >= 2:
            a, b = split_of(t, r, ranks)
            merges.append([show(a), show(b)])
    added = [
        {
            "id": i,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for s, i in sorted(enc._special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": HF_PATTERNS.get(encoding, enc._pat_str)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": merges,
        },
    }


def check(encoding: str, path: Path, sample: int) -> None:
    import tiktoken
    import tokenizers

    enc = tiktoken.get_encoding(encoding)
    tok = tokenizers.Tokenizer.from_file(str(path))
    for f in sorted((DATA / "corpora").glob("*.txt")):
        text = f.read_text(encoding="utf-8")[:sample]
        docs = text.split("\n\n") + ["a" * 1000, "  hello\n\n  world  ", "I'LL DON'T 12345 😀😀"]
        want = enc.encode_ordinary_batch(docs)
        got = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
        bad = [i for i, (a, b) in enumerate(zip(want, got)) if a != b]
        if bad:
            raise SystemExit(
                f"{path}: ids differ from tiktoken on {f.name}, document {bad[0]}: {docs[bad[0]][:80]!r}"
            )
        print(
            f"{encoding} {f.name}: {len(docs)} documents, ids identical to tiktoken",
            file=sys.stderr,
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("encoding", choices=["cl100k_base", "o200k_base"])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument(
        "--check", type=int, default=200_000, help="chars of each corpus to compare on (0: none)"
    )
    a = ap.parse_args(argv)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(DATA / "bpe" / "tiktoken-cache"))
    out = a.out or DATA / "bpe" / a.encoding.removesuffix("_base") / "tokenizer.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(build(a.encoding), ensure_ascii=False), encoding="utf-8")
    if a.check:
        try:
            check(a.encoding, tmp, a.check)
        except BaseException:
            tmp.unlink()
            raise
    tmp.replace(out)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
