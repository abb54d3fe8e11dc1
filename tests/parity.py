"""Helpers shared by the parity tests: compare our Encoding with the reference's."""

from __future__ import annotations

FIELDS = (
    "ids",
    "tokens",
    "offsets",
    "type_ids",
    "attention_mask",
    "special_tokens_mask",
    "word_ids",
)


def fields(enc, names=FIELDS) -> dict:
    return {
        name: [tuple(x) if isinstance(x, (tuple, list)) else x for x in getattr(enc, name)]
        for name in names
    }


def codepoints(s: str) -> str:
    """A string spelled out so a reproducer survives copy-paste: 'a\\u0301' [U+0061 U+0301]."""
    cps = " ".join(f"U+{ord(c):04X}" for c in s[:200])
    more = f" ... ({len(s)} chars)" if len(s) > 200 else ""
    return f"{s[:200]!r}{'...' if len(s) > 200 else ''} [{cps}{more}]"


def first_diff(a: list, b: list) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first difference at index {i}: ours {x!r} vs reference {y!r}"
    return f"lengths differ: ours {len(a)} vs reference {len(b)}"


def encoding_diff(ours, ref, names=FIELDS) -> str | None:
    """None when identical, else a description of every field that differs."""
    # Most calls find every field equal: compare the lists as they come first (offsets are
    # tuples on both sides), which costs a quarter of building normalized copies.
    names = [n for n in names if getattr(ours, n) != getattr(ref, n)]
    a, b = fields(ours, names), fields(ref, names)
    out = []
    for name in names:
        if a[name] != b[name]:
            out.append(
                f"  {name}: ours {a[name]!r}\n  {' ' * len(name)}  ref  {b[name]!r}\n"
                f"  ({first_diff(a[name], b[name])})"
            )
    return "\n".join(out) or None


def alignment_tokenizer(normalizer):
    """A reference tokenizer that shows `normalizer`'s alignments: a pre-tokenizer that
    isolates every char and a WordLevel model that knows only its unk token give one token per
    normalized char, with that char's original offsets (the reference shows alignments only
    through offsets)."""
    from paths import reference

    tk = reference()
    tok = tk.Tokenizer(tk.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = tk.pre_tokenizers.Split(tk.Regex(r"[\s\S]"), "isolated")
    return tok


def describe_input(text, pair=None) -> str:
    s = f"text={codepoints(text)}"
    if pair is not None:
        s += f"\npair={codepoints(pair)}"
    return s


def reference_stages(text: str, clean=True, cjk=True, strip=True, lower=True) -> dict[str, str]:
    """Each BERT normalizer step's cumulative output, from `tokenizers`' own normalizers.

    BertNormalizer runs clean → CJK spacing → strip accents (NFD, then drop marks) →
    lowercase; switching its options on one at a time gives each intermediate text.
    """
    from tokenizers import normalizers as n

    def bert(**options):
        flags = dict(
            clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False
        )
        flags.update(options)
        return n.BertNormalizer(**flags)

    clean_cjk = bert(clean_text=clean, handle_chinese_chars=cjk)
    return {
        "raw": text,
        "clean": bert(clean_text=clean).normalize_str(text),
        "cjk": clean_cjk.normalize_str(text),
        "nfd": n.Sequence([clean_cjk, n.NFD()]).normalize_str(text)
        if strip
        else clean_cjk.normalize_str(text),
        "strip_accents": bert(
            clean_text=clean, handle_chinese_chars=cjk, strip_accents=strip
        ).normalize_str(text),
        "lowercase": bert(
            clean_text=clean, handle_chinese_chars=cjk, strip_accents=strip, lowercase=lower
        ).normalize_str(text),
    }


def longest_match_search(vocab, word: str, max_chars: int, prefix: str):
    """WordPiece's longest-match-first search written plainly over a vocabulary: every
    (start, end, key, found) it looks up in order, and the matches (None: the word is the
    unknown token, for a position with no match or more than `max_chars` chars)."""
    if len(word) > max_chars:
        return [], None
    lookups, matches, start = [], [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            key = (prefix if start else "") + word[start:end]
            lookups.append((start, end, key, key in vocab))
            if key in vocab:
                matches.append(key)
                start = end
                break
        else:
            return lookups, None
    return lookups, matches


def gpt2_byte_chars() -> dict[int, str]:
    """GPT-2's byte-to-char map (the ByteLevel alphabet byte-level pieces are written in):
    printable Latin-1 bytes stand for themselves, the others for chars from U+0100 on."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    extra = iter(range(256, 512))
    return {b: chr(b) if b in keep else chr(next(extra)) for b in range(256)}
