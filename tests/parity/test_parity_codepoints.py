"""Every code point U+0000..U+10FFFF except the surrogates (1,112,064 of them), alone and in
context, through the normalizer and the full encode: identical to tokenizers 0.23.3.

Batching, so that it runs in CI time: each context is instantiated for many code points and the
instances are joined with a single U+0020 into one string per chunk. A space can't interact with
its neighbours in this pipeline: it is a starter (canonical reordering never crosses it), NFD
composes nothing, lowercase has no context, and it is a word boundary for the pre-tokenizer.
clean_text deletes controls, so `a{c}b` can become `ab`: fine, both sides see the same string, so a
joined chunk is still a valid differential test. When a chunk differs, each instance in it is run
alone to name the code points; if none differs alone, the chunk itself is reported.

The "alone" passes are exact: one normalize_str call per code point, and one encode per code point
(encode_batch of 1-character strings), for all 1,112,064.
"""

from __future__ import annotations

import time

import pytest

from parity import codepoints, first_diff

TOTAL = 1_112_064
ALL = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
SEP = " "
CHUNK = 2048  # code points per joined string
BATCH = 32  # joined strings per encode_batch call

# {c} after an accented letter: precomposed é (NFD -> e U+0301, ccc 230) and ệ (NFD -> e U+0323
# U+0302, ccc 220 and 230) so a mark {c} with any combining class is reordered among them.
CONTEXTS = ("{c}", "a{c}b", "{c}{c}", "\u00e9{c}", "\u1ec7{c}", "\u6771{c}\u4eac")
ENCODE_CONTEXTS = CONTEXTS
MAX_REPORT = 25


def chunks():
    for i in range(0, len(ALL), CHUNK):
        yield ALL[i : i + CHUNK]


def instances(context: str, cps) -> list[str]:
    return [context.replace("{c}", chr(c)) for c in cps]


def report(what: str, bad: list[str], compared: int) -> str:
    head = f"{what}: {len(bad)} mismatches out of {compared} compared"
    return head + "\n" + "\n".join(bad[:MAX_REPORT]) + ("\n..." if len(bad) > MAX_REPORT else "")


def test_code_point_count():
    assert len(ALL) == TOTAL
    assert ALL[0] == 0 and ALL[-1] == 0x10FFFF and 0xD800 not in ALL and 0xDFFF not in ALL


def test_normalizer_alone(toks):
    ours, ref = toks
    t0 = time.perf_counter()
    strs = [chr(c) for c in ALL]
    a = list(map(ours.normalizer.normalize_str, strs))
    t1 = time.perf_counter()
    b = list(map(ref.normalizer.normalize_str, strs))
    t2 = time.perf_counter()
    bad = [
        f"  {codepoints(s)}: ours {x!r} vs reference {y!r}" for s, x, y in zip(strs, a, b) if x != y
    ]
    print(
        f"\nnormalizer alone: {len(strs):,} code points compared "
        f"(ours {t1 - t0:.1f}s, reference {t2 - t1:.1f}s)"
    )
    assert len(strs) == TOTAL
    assert not bad, report("normalize_str(c)", bad, len(strs))


@pytest.mark.parametrize("context", CONTEXTS)
def test_normalizer_in_context(toks, context):
    ours, ref = toks
    no, nr = ours.normalizer, ref.normalizer
    bad: list[str] = []
    compared = 0
    t_ours = t_ref = 0.0
    for cps in chunks():
        inst = instances(context, cps)
        joined = SEP.join(inst)
        t0 = time.perf_counter()
        x = no.normalize_str(joined)
        t1 = time.perf_counter()
        y = nr.normalize_str(joined)
        t_ours += t1 - t0
        t_ref += time.perf_counter() - t1
        compared += len(cps)
        if x == y:
            continue
        alone = [
            f"  {codepoints(s)}: ours {no.normalize_str(s)!r} vs reference {nr.normalize_str(s)!r}"
            for s in inst
            if no.normalize_str(s) != nr.normalize_str(s)
        ]
        bad.extend(
            alone
            or [
                f"  chunk U+{cps[0]:04X}..U+{cps[-1]:04X} joined with {SEP!r} differs "
                f"(no single instance does): {first_diff(list(x), list(y))}"
            ]
        )
    print(
        f"\nnormalizer, context {context!r}: {compared:,} code points compared "
        f"(ours {t_ours:.1f}s, reference {t_ref:.1f}s)"
    )
    assert compared == TOTAL
    assert not bad, report(f"normalize_str({context!r})", bad, compared)


def _encode_diff(ours, ref, s: str) -> str | None:
    a, b = ours.encode(s), ref.encode(s)
    if a.ids == b.ids and a.offsets == b.offsets:
        return None
    return (
        f"  {codepoints(s)}:\n    ids     ours {a.ids} vs reference {b.ids}\n"
        f"    offsets ours {a.offsets} vs reference {b.offsets}\n"
        f"    tokens  ours {a.tokens} vs reference {b.tokens}"
    )


def test_encode_alone(toks):
    """encode(c), one string per code point, all of them: ids and offsets (special tokens
    included). The most expensive test here (~30-40 us a call in the reference)."""
    ours, ref = toks
    bad: list[str] = []
    compared = 0
    t_ours = t_ref = 0.0
    step = 1 << 15
    for i in range(0, len(ALL), step):
        strs = [chr(c) for c in ALL[i : i + step]]
        t0 = time.perf_counter()
        ea = ours.encode_batch(strs)
        a = [(e.ids, e.offsets) for e in ea]
        t1 = time.perf_counter()
        eb = ref.encode_batch(strs)
        b = [(e.ids, e.offsets) for e in eb]
        t_ours += t1 - t0
        t_ref += time.perf_counter() - t1
        compared += len(strs)
        for s, x, y in zip(strs, a, b):
            if x != y:
                bad.append(_encode_diff(ours, ref, s))
    print(
        f"\nencode alone: {compared:,} code points compared "
        f"(ours {t_ours:.1f}s, reference {t_ref:.1f}s)"
    )
    assert compared == TOTAL
    assert not bad, report("encode(c)", bad, compared)


@pytest.mark.parametrize("context", ENCODE_CONTEXTS)
def test_encode_in_context(toks, context):
    """Full encode of the joined chunks: ids and character offsets."""
    ours, ref = toks
    bad: list[str] = []
    compared = 0
    t_ours = t_ref = 0.0
    all_chunks = list(chunks())
    for i in range(0, len(all_chunks), BATCH):
        group = all_chunks[i : i + BATCH]
        inst = [instances(context, cps) for cps in group]
        joined = [SEP.join(x) for x in inst]
        t0 = time.perf_counter()
        a = [(e.ids, e.offsets) for e in ours.encode_batch(joined)]
        t1 = time.perf_counter()
        b = [(e.ids, e.offsets) for e in ref.encode_batch(joined)]
        t_ours += t1 - t0
        t_ref += time.perf_counter() - t1
        for cps, ins, x, y in zip(group, inst, a, b):
            compared += len(cps)
            if x == y:
                continue
            alone = [d for d in (_encode_diff(ours, ref, s) for s in ins) if d]
            if not alone:
                what = "ids" if x[0] != y[0] else "offsets"
                k = 0 if x[0] != y[0] else 1
                alone = [
                    f"  chunk U+{cps[0]:04X}..U+{cps[-1]:04X} joined with {SEP!r}: {what} "
                    f"differ (no single instance does): {first_diff(x[k], y[k])}"
                ]
            bad.extend(alone)
    print(
        f"\nencode, context {context!r}: {compared:,} code points compared "
        f"(ours {t_ours:.1f}s, reference {t_ref:.1f}s)"
    )
    assert compared == TOTAL
    assert not bad, report(f"encode({context!r})", bad, compared)
