"""Writes the seed corpora of the fuzz targets (crate/fuzz/corpus/<target>/) from the string
literals of tests/**/*.py and small tokenizer files cut from the real ones in $TOKENPRISM_DATA.
Nothing here is committed: `./build.sh test` and scripts/fuzz/fuzz.sh run it before fuzzing, and
libFuzzer adds what it finds to the same folders.

    python3 scripts/fuzz/fuzz_seeds.py [--out crate/fuzz/corpus]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("TOKENPRISM_DATA") or Path.home() / ".cache/tokenprism/data")


def test_strings() -> list[str]:
    """Every str literal of the tests (1 to 400 chars), in a stable order."""
    seen: dict[str, None] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and 0 < len(node.value) <= 400
            ):
                try:
                    node.value.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate: not text the core can get
                    continue
                seen.setdefault(node.value, None)
    extra = [
        "Héllo, Wörld! 東京",
        "İstanbul ß ﬁ Ⅻ",
        "x\u0301\u0f73\u0316",
        "\u200b\u00ad\ufeff\u3000\u2028",
        "[CLS] hello [SEP] world [MASK]",
        "<|endoftext|> hi <|fim_prefix|>",
        "a" * 300,
        "  \t\n\r  ",
        "don't I'm we've 12345 3.14",
        "😀👍🏽👨‍👩‍👧",
        "Привет мир",
        "مرحبا بالعالم",
    ]
    return list(seen) + extra


def write(out: Path, target: str, blobs: list[bytes]) -> int:
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    for b in blobs:
        (d / ("seed-" + hashlib.sha1(b).hexdigest()[:16])).write_bytes(b)
    return len(blobs)


def mini_wordpiece_json() -> list[bytes]:
    """The bert tokenizer.json with its vocabulary cut to a few hundred entries, and variants."""
    full = json.loads((DATA / "bert-base-uncased/tokenizer.json").read_text(encoding="utf-8"))
    vocab = full["model"]["vocab"]
    keep = {
        t: i
        for t, i in vocab.items()
        if i < 120 or 1996 <= i < 2300 or t.startswith("##") and i < 3000
    }
    full["model"]["vocab"] = {t: n for n, t in enumerate(sorted(keep, key=keep.get))}
    full["added_tokens"] = [
        dict(a, id=full["model"]["vocab"].get(a["content"], 0)) for a in full["added_tokens"]
    ]
    for key in ("truncation", "padding"):
        full[key] = None
    out = [json.dumps(full, ensure_ascii=False)]
    v = json.loads(out[0])
    v["normalizer"] = {
        "type": "Sequence",
        "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}],
    }
    v["truncation"] = {"direction": "Left", "max_length": 8, "strategy": "OnlyFirst", "stride": 2}
    v["padding"] = {
        "strategy": {"Fixed": 12},
        "direction": "Left",
        "pad_to_multiple_of": 5,
        "pad_id": 0,
        "pad_type_id": 1,
        "pad_token": "[PAD]",
    }
    out.append(json.dumps(v, ensure_ascii=False))
    v = json.loads(out[0])
    v["added_tokens"].append(
        {
            "id": 7,
            "content": "héllo",
            "single_word": True,
            "lstrip": True,
            "rstrip": True,
            "normalized": True,
            "special": False,
        }
    )
    v["post_processor"] = {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}
    out.append(json.dumps(v, ensure_ascii=False))
    return [s.encode() for s in out]


def mini_bpe_json() -> list[bytes]:
    """GPT-2's tokenizer.json cut to the byte tokens and the first merges, and a Qwen-like variant."""
    full = json.loads((DATA / "bpe/gpt2/tokenizer.json").read_text(encoding="utf-8"))
    merges = full["model"]["merges"][:150]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    vocab = {t: i for t, i in full["model"]["vocab"].items() if i < 256}
    for a, b in pairs:
        vocab.setdefault(a + b, len(vocab))
    full["model"]["vocab"] = vocab
    full["model"]["merges"] = merges
    full["added_tokens"] = [
        {
            "id": len(vocab),
            "content": "<|endoftext|>",
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
    ]
    out = [json.dumps(full, ensure_ascii=False)]
    v = json.loads(out[0])
    v["normalizer"] = {"type": "NFC"}
    v["model"]["ignore_merges"] = True
    v["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [
            {
                "type": "Split",
                "pattern": {
                    "Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
                },
                "behavior": "Isolated",
                "invert": False,
            },
            {
                "type": "ByteLevel",
                "add_prefix_space": False,
                "trim_offsets": False,
                "use_regex": False,
            },
        ],
    }
    out.append(json.dumps(v, ensure_ascii=False))
    return [s.encode() for s in out]


def tiktoken_lines() -> list[bytes]:
    lines = (DATA / "bpe/cl100k_base.tiktoken").read_bytes().split(b"\n")
    return [
        b"\x00" + b"\n".join(lines[:400]) + b"\n",
        b"\x01" + b"\n".join(lines[256:400]) + b"\n",
        b"\x03" + b"\n".join(lines[256:300]) + b"\n",
        b"\x05IQ== 300\nIiI= 301\r\n\n",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "crate/fuzz/corpus")
    args = ap.parse_args()
    texts = [s.encode("utf-8") for s in test_strings()]
    n = {}
    n["normalizer"] = write(
        args.out, "normalizer", [bytes([i % 256]) + t for i, t in enumerate(texts)]
    )
    n["simd"] = write(args.out, "simd", [bytes([i % 4]) + t for i, t in enumerate(texts)])
    n["pretokenizer"] = write(
        args.out, "pretokenizer", [bytes([(i * 7) % 256]) + t for i, t in enumerate(texts)]
    )
    bert = []
    for i, t in enumerate(texts):
        head = bytes([i % 64, (i * 5) % 256 & 0x8F, 0 if i % 3 else (i * 11) % 256, (i * 13) % 256])
        pair = b"\xff" + texts[(i + 1) % len(texts)] if i % 4 == 0 else b""
        bert.append(head + t + pair)
    n["bert_encode"] = write(args.out, "bert_encode", bert)
    n["bpe"] = write(args.out, "bpe", [bytes([i % 5]) + t for i, t in enumerate(texts)])
    n["tokenizer_json"] = write(
        args.out,
        "tokenizer_json",
        mini_wordpiece_json()
        + mini_bpe_json()
        + [
            b'{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]"}}'
        ],
    )
    n["tiktoken"] = write(args.out, "tiktoken", tiktoken_lines())
    # [mode][vocab headroom][stop after] text: the textbook chapter's worked example in both
    # modes, then the test strings.
    chapter = " ".join(["низ"] * 5 + ["низко"] * 3 + ["близко"] * 2 + ["низина"] * 2).encode()
    train = [bytes([0, 20, 4]) + chapter, bytes([1, 30, 7]) + chapter]
    train += [bytes([i % 2, (i * 17) % 256, (i * 3) % 40]) + t[:2048] for i, t in enumerate(texts)]
    n["train"] = write(args.out, "train", train)
    print(" ".join(f"{k}={v}" for k, v in n.items()))


if __name__ == "__main__":
    main()
