"""The textbook chapter's BPE code ("Глава 1. Токенизация", section 1.3), the one
copy the tests and scripts/bench/train_bench.py run as the reference.

`train_bpe` is split into its set-up and its loop body (statements verbatim) so the benchmark
can time the body from any training state; `chapter_train_bpe` runs them as the chapter's loop
does and also returns the count of each chosen pair (the one addition, marked "added").
`chapter_tokenize` is the chapter's `tokenize`, verbatim.
"""

from __future__ import annotations

from collections import Counter

# The chapter's worked example corpus.
CHAPTER_CORPUS = " ".join(["низ"] * 5 + ["низко"] * 3 + ["близко"] * 2 + ["низина"] * 2)


def chapter_setup(corpus: str):
    words = Counter(corpus.split())
    splits = {w: list(w) + ["_"] for w in words}
    merges = []
    vocab = {c for w in splits.values() for c in w}
    return words, splits, merges, vocab


def chapter_iteration(words, splits, merges, vocab, counts=None) -> bool:
    pair_freq = Counter()
    for w, freq in words.items():
        parts = splits[w]
        for i in range(len(parts) - 1):
            pair_freq[(parts[i], parts[i+1])] += freq
    if not pair_freq:
        return False
    best = max(pair_freq, key=pair_freq.get)
    if counts is not None:
        counts.append(pair_freq[best])  # added

    a, b = best
    for w in splits:
        parts, i, out = splits[w], 0, []
        while i < len(parts):
            if i < len(parts)-1 and parts[i] == a and parts[i+1] == b:
                out.append(a + b); i += 2
            else:
                out.append(parts[i]); i += 1
        splits[w] = out

    merges.append(best)
    vocab.add(a + b)
    return True


def chapter_train_bpe(corpus: str, vocab_size: int):
    """Обучает BPE. Возвращает список правил слияния (and, added, the count of each)."""
    words, splits, merges, vocab = chapter_setup(corpus)
    counts = []
    while len(vocab) < vocab_size:
        if not chapter_iteration(words, splits, merges, vocab, counts):
            break
    return merges, counts


def chapter_tokenize(word: str, merges) -> list[str]:
    """Токенизирует слово обученными правилами."""
    parts = list(word) + ["_"]
    for a, b in merges:
        i, out = 0, []
        while i < len(parts):
            if i < len(parts)-1 and parts[i] == a and parts[i+1] == b:
                out.append(a + b); i += 2
            else:
                out.append(parts[i]); i += 1
        parts = out
    return parts
