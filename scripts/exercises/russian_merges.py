"""Exercise 1 of the Train tab, natively: the first 50 merges BPE learns (chapter mode) on the
page's 10 KB of Russian help text, each with the Russian morpheme it matches (the list and
rule of web/tabs/train/view.py, the same as the page's).

    python scripts/exercises/russian_merges.py [--merges 50] [--text ru-10k]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "web"))
sys.path.insert(0, str(ROOT / "scripts" / "data"))

from tabs.train import view as tv  # noqa: E402


def first_merges(
    text: str, n: int = tv.EXERCISE1_MERGES
) -> list[tuple[str, str, int, str, dict | None]]:
    """(left, right, count, new symbol, morpheme or None) for the first `n` merges."""
    import tokenprism

    initial = tokenprism.train_bpe(text, 0).initial_vocab_size
    r = tokenprism.train_bpe(text, initial + n)
    return [(a, b, c, a + b, tv.morpheme_for(a + b)) for (a, b), c in zip(r.merges, r.counts)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--merges", type=int, default=tv.EXERCISE1_MERGES)
    ap.add_argument("--text", default=tv.EXERCISE1_TEXT)
    args = ap.parse_args()
    import train_corpora

    text = train_corpora.texts()[args.text][1]
    rows = first_merges(text, args.merges)
    for k, (a, b, c, new, m) in enumerate(rows, 1):
        note = f"{m['form']} ({m['kind']}: {m['example']})" if m else ""
        print(f"{k:3}  {a!r:>10} + {b!r:<10} {c:6}  {new!r:<12} {note}")
    print(f"\n{sum(m is not None for *_, m in rows)} of {len(rows)} merges match a listed morpheme")


if __name__ == "__main__":
    main()
