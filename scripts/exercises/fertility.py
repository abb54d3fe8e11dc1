"""Exercises 2 and 3 of the Train tab, natively (tokenprism): fertility of the same text in
English and Russian for every tokenizer we have, and how each encodes Python indentation.

    python scripts/exercises/fertility.py                       # the fertility table (markdown)
    python scripts/exercises/fertility.py --train ru-10k --vocab 1000 --byte-level
                                                      # ... with a tokenizer trained on a bundled text
    python scripts/exercises/fertility.py --indent              # exercise 3: tokens of each indentation run

The texts are the page's (scripts/data/train_corpora.py: the LibreOffice help pages in en-US and ru);
the table is built by web/tabs/train/view.py, the same code that draws it in the page.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "web"))
sys.path.insert(0, str(ROOT / "scripts" / "data"))

from tabs.train import view as tv  # noqa: E402

TIKTOKEN = ("cl100k_base", "o200k_base")
HF_JSON = ("gpt2", "qwen3")


def data_dir() -> Path:
    return Path(os.environ.get("TOKENPRISM_DATA") or os.path.expanduser("~/.cache/tokenprism/data"))


def byte_offsets(text: str) -> list[int]:
    """Byte offset of every char of `text` (and of its end)."""
    out = [0]
    for c in text:
        out.append(out[-1] + len(c.encode("utf-8", "surrogatepass")))
    return out


def spans_from_bytes(pieces: list[bytes]) -> list[tuple[int, int, str]]:
    out, at = [], 0
    for b in pieces:
        out.append((at, at + len(b), b.decode("utf-8", "replace")))
        at += len(b)
    return out


def native_tokenizers(trained=None) -> dict:
    """name -> text -> [(start byte, end byte, text)], with tokenprism."""
    import tokenprism

    out = {}
    bert = tokenprism.Tokenizer.from_file(str(data_dir() / "bert-base-uncased" / "tokenizer.json"))
    bert.no_truncation()
    bert.no_padding()

    def bert_spans(text):
        enc = bert.encode(text, add_special_tokens=False)
        at = byte_offsets(text)
        return [(at[s], at[e], t) for t, (s, e) in zip(enc.tokens, enc.offsets)]

    out["bert-base-uncased"] = bert_spans
    for name in HF_JSON:
        tok = tokenprism.BpeTokenizer.from_file(str(data_dir() / "bpe" / name / "tokenizer.json"))
        out[name] = lambda text, tok=tok: spans_from_bytes(
            tok.decode_tokens_bytes(tok.encode_ordinary(text))
        )
    for name in TIKTOKEN:
        tok = tokenprism.BpeTokenizer.from_tiktoken_file(
            str(data_dir() / "bpe" / f"{name}.tiktoken"), name
        )
        out[name] = lambda text, tok=tok: spans_from_bytes(
            tok.decode_tokens_bytes(tok.encode_ordinary(text))
        )
    if trained is not None:
        out["trained"] = trained_spans(trained)
    return out


def trained_spans(result):
    """A tokenprism.train_bpe result as an encoder: byte-level through its tokenizer, chapter
    mode word by word with the chapter's tokenize (the "_" mark spans no bytes)."""
    if result.byte_level:
        tok = result.tokenizer()
        return lambda text: spans_from_bytes(tok.decode_tokens_bytes(tok.encode_ordinary(text)))

    def chapter(text):
        import re

        at = byte_offsets(text)
        out = []
        for m in re.finditer(r"\S+", text):
            pos = at[m.start()]
            for piece in result.tokenize(m.group()):
                n = len(piece.removesuffix(tv.END_OF_WORD).encode())
                out.append((pos, pos + n, piece))
                pos += n
        return out

    return chapter


def counts(encoders: dict, texts: dict) -> dict:
    return {name: {k: len(f(t)) for k, t in texts.items()} for name, f in encoders.items()}


def parallel_texts() -> dict:
    import train_corpora

    en, ru = train_corpora.parallel()
    return {"en": en, "ru": ru}


def train(name: str, vocab: int, byte_level: bool):
    import tokenprism
    import train_corpora

    text = train_corpora.texts()[name][1]
    return tokenprism.train_bpe(text, vocab, byte_level=byte_level)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", help="a bundled text to train on (e.g. ru-10k)")
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--byte-level", action="store_true")
    ap.add_argument(
        "--indent", action="store_true", help="exercise 3 instead of the fertility table"
    )
    args = ap.parse_args()
    trained = train(args.train, args.vocab, args.byte_level) if args.train else None
    enc = native_tokenizers(trained)
    if args.indent:
        rows = tv.indent_table({k: f(tv.INDENT_SNIPPET) for k, f in enc.items()})
        print("| tokenizer | line | spaces | tokens | verdict |\n|---|---|---|---|---|")
        for r in rows:
            toks = " ".join(repr(t) for t in r["tokens"])
            print(f"| {r['label']} | {r['line']} | {r['width']} | {toks} | {r['verdict']} |")
        return
    texts = parallel_texts()
    n_words = {k: tv.words(t) for k, t in texts.items()}
    rows = tv.fertility_rows(counts(enc, texts), n_words)
    print(f"words: en {n_words['en']}, ru {n_words['ru']}\n")
    print("| tokenizer | en tokens | ru tokens | en tokens/word | ru tokens/word | ru ÷ en |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['label']} | {r['en']} | {r['ru']} | {r['fert_en']:.2f} | {r['fert_ru']:.2f} | {r['ratio']:.2f} |"
        )


if __name__ == "__main__":
    main()
