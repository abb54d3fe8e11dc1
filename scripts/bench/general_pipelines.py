#!/usr/bin/env python3
"""Tokenizers built only from general components (no BERT, byte-level or SentencePiece fast
path applies to them), against tokenizers 0.23.3, 1.0.0rc3, tokie and kitoken.

    python3 scripts/bench/general_pipelines.py [--pipelines bpe-nfd-whitespace,...]
        [--corpora en,ru,code] [--out bench/general] [BENCH_ARGS...]

Each pipeline is made with tokenizers 0.23.3's own Python API (its trainers on the first
2,000,000 chars of the en, ru, el and code corpora together) and saved as a tokenizer.json
under <data>/general-pipelines/ (made once; delete the folder to remake them). Then
scripts/bench/bench.py runs on each file with the same protocol as on bert-base-uncased (one
thread, every implementation in its own process, rotating rounds, every cell's ids hashed and
compared with tokenizers 0.23.3's), writing <out>/<pipeline>/results.{json,md}. Arguments
this script does not know go to bench.py (e.g. --quick, --rounds 3, --tokenprism-wheel W).
A summary table of ours over the fastest verified peer, per pipeline and corpus, is printed
and written to <out>/summary.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402

TRAIN_CHARS = 2_000_000
TRAIN_CORPORA = ("en", "ru", "el", "code")


def _bpe_nfd_whitespace(t):
    """A classic word-level BPE: accents stripped, lowercased, \\w+ and punctuation runs."""
    tok = t.Tokenizer(t.models.BPE(unk_token="[UNK]"))
    tok.normalizer = t.normalizers.Sequence(
        [t.normalizers.NFD(), t.normalizers.Lowercase(), t.normalizers.StripAccents()]
    )
    tok.pre_tokenizer = t.pre_tokenizers.Whitespace()
    trainer = t.trainers.BpeTrainer(vocab_size=16000, special_tokens=["[UNK]"])
    return tok, trainer


def _bpe_suffix_digits(t):
    """BPE with an end-of-word suffix, digits one by one, punctuation isolated (NFKC)."""
    tok = t.Tokenizer(t.models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = t.normalizers.NFKC()
    tok.pre_tokenizer = t.pre_tokenizers.Sequence(
        [
            t.pre_tokenizers.WhitespaceSplit(),
            t.pre_tokenizers.Punctuation("isolated"),
            t.pre_tokenizers.Digits(individual_digits=True),
        ]
    )
    trainer = t.trainers.BpeTrainer(
        vocab_size=16000, special_tokens=["<unk>"], end_of_word_suffix="</w>"
    )
    return tok, trainer


def _wordlevel_whitespace_split(t):
    """One token per whitespace-separated word (lowercased), else the unk token."""
    tok = t.Tokenizer(t.models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = t.normalizers.Lowercase()
    tok.pre_tokenizer = t.pre_tokenizers.WhitespaceSplit()
    trainer = t.trainers.WordLevelTrainer(vocab_size=30000, special_tokens=["[UNK]"])
    return tok, trainer


def _wordpiece_nfkc_punct(t):
    """A WordPiece that is not BERT's pipeline: NFKC, whitespace, then punctuation."""
    tok = t.Tokenizer(t.models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = t.normalizers.Sequence([t.normalizers.NFKC(), t.normalizers.Lowercase()])
    tok.pre_tokenizer = t.pre_tokenizers.Sequence(
        [t.pre_tokenizers.WhitespaceSplit(), t.pre_tokenizers.Punctuation()]
    )
    trainer = t.trainers.WordPieceTrainer(vocab_size=16000, special_tokens=["[UNK]"])
    return tok, trainer


PIPELINES = {
    "bpe-nfd-whitespace": _bpe_nfd_whitespace,
    "bpe-suffix-digits": _bpe_suffix_digits,
    "wordlevel-whitespace-split": _wordlevel_whitespace_split,
    "wordpiece-nfkc-punctuation": _wordpiece_nfkc_punct,
}


def pipeline_file(name: str) -> Path:
    """The tokenizer.json of pipeline `name`, made (with tokenizers 0.23.3) when missing."""
    path = bench.data_dir() / "general-pipelines" / f"{name}.json"
    if path.is_file():
        return path
    import tokenizers as t

    if t.__version__ != bench.REF_VERSION:
        raise SystemExit(f"making {path} needs tokenizers {bench.REF_VERSION}, not {t.__version__}")
    text = "".join(
        (bench.data_dir() / "corpora" / f"{c}.txt").read_text(encoding="utf-8")[
            : TRAIN_CHARS // len(TRAIN_CORPORA)
        ]
        for c in TRAIN_CORPORA
    )
    lines = text.splitlines()
    tok, trainer = PIPELINES[name](t)
    tok.train_from_iterator(lines, trainer=trainer)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tok.save(str(tmp))
    tmp.replace(path)
    bench.log(f"made {path} ({tok.get_vocab_size()} tokens)")
    return path


def summary(out: Path, names: list[str]) -> str:
    rows = ["| pipeline | corpus | ours MB/s | fastest verified peer | its MB/s | ours / it |"]
    rows.append("|---|---|---:|---|---:|---:|")
    for name in names:
        res = json.loads((out / name / "results.json").read_text(encoding="utf-8"))
        for corpus, cell in res["encode"].items():
            ours = cell.get("tokenprism-ids") or {}
            best = cell.get("_fastest_peer")
            peer = cell.get(best) or {} if best else {}
            rows.append(
                f"| {name} | {corpus} | {bench.fmt(ours.get('mbps'))} | {best or '-'} | "
                f"{bench.fmt(peer.get('mbps'))} | {bench.fmt_ratio(ours.get('vs_fastest_peer'))} |"
            )
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pipelines", default=",".join(PIPELINES))
    ap.add_argument("--corpora", default="en,ru,el,zh,code")
    ap.add_argument(
        "--out",
        type=Path,
        help="default: bench/general, or a temporary folder with --quick (a smoke run never "
        "overwrites the real results)",
    )
    a, rest = ap.parse_known_args()
    if a.out is None:
        quick = "--quick" in rest
        a.out = (
            Path(tempfile.mkdtemp(prefix="general-")) if quick else bench.REPO / "bench" / "general"
        )
    names = [n for n in a.pipelines.split(",") if n]
    for n in names:
        if n not in PIPELINES:
            ap.error(f"unknown pipeline {n!r} (known: {', '.join(PIPELINES)})")
    status = 0
    for n in names:
        path = pipeline_file(n)
        cmd = [sys.executable, str(HERE / "bench.py"), "--tokenizer", str(path)]
        cmd += ["--corpora", a.corpora, "--out", str(a.out / n), "--no-ablations"]
        cmd += ["--skip-normalize", "--skip-short", "--skip-callgrind", "--no-chart", *rest]
        bench.log(f"== {n}: {' '.join(cmd[2:])}")
        status = max(status, subprocess.run(cmd).returncode)
    table = summary(a.out, names)
    (a.out / "summary.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    return status


if __name__ == "__main__":
    sys.exit(main())
