"""Decoders against tokenizers 0.23.3.

Each test builds a reference decoder with `tokenizers.decoders` (random kind and parameters
from a seeded RNG), loads its JSON (`__getstate__`) into `tokenprism.Decoder` and compares
`decode` on random token lists: byte tokens such as <0xE2>, pieces with the metaspace char,
WordPiece continuations, byte-level chars of random UTF-8 cut at random bytes, padding and
delimiters, and any text. Where the reference fails (its Strip decoder on a token shorter
than the cuts) ours must raise a ValueError.

Set TOKENPRISM_EXHAUSTIVE=1 for the long run (more examples and seeds).
"""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenprism
from components import METASPACE_CHARS, random_decoder
from paths import reference

EXHAUSTIVE = os.environ.get("TOKENPRISM_EXHAUSTIVE") == "1"

PIECES = ["", " ", "a", "hello", "\u2581", "\u2581\u2581", "##", "##ing", "</w>", "<pad>", "|"]
PIECES += [" .", " ,", " n't", " 'm", " ' ", " do not", "'s", "東", "\U0001f600", "Ġ", "Ċ"]


def byte_level(bytes_: bytes) -> str:
    """Bytes in GPT-2's byte-level alphabet."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table, n = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + n)
            n += 1
    return "".join(table[b] for b in bytes_)


def random_token(rng: random.Random) -> str:
    k = rng.randrange(9)
    if k == 0:
        return f"<0x{rng.choice([0xE2, 0x96, 0x81, 0x41, 0xC3, 0xA9, 0xFF, 0x0A, rng.randrange(256)]):02X}>"
    if k == 1:
        return rng.choice(["<0x+A>", "<0xe2>", "<0X41>", "<0x4>", "<0x411>", "<0xGG>", "<0x-1>"])
    if k == 2:
        return rng.choice(METASPACE_CHARS) + rng.choice(PIECES)
    if k == 3:
        return rng.choice(PIECES) + rng.choice(PIECES)
    if k in (4, 5):
        # a byte-level token: a slice of some UTF-8, possibly cutting a char
        raw = "".join(rng.choice("ab é東\U0001f600\n") for _ in range(rng.randint(1, 4))).encode()
        i = rng.randrange(len(raw))
        return byte_level(raw[i : rng.randint(i + 1, len(raw))])
    if k == 6:
        return "".join(rng.choice("▁_aé ##|") for _ in range(rng.randint(0, 4)))
    if k == 7:
        return chr(rng.choice([rng.randrange(0x80), rng.randrange(0x800), rng.randrange(0xD800)]))
    return rng.choice(PIECES)


def check(ref, tokens: list[str], seed) -> None:
    state = ref.__getstate__().decode()
    ours = tokenprism.Decoder.from_str(state)
    where = f"seed {seed}, decoder {state}\ntokens={tokens!r}"
    try:
        theirs = ref.decode(tokens)
    except BaseException as e:  # a Rust panic in the reference is a BaseException
        if isinstance(e, KeyboardInterrupt):
            raise
        with pytest.raises(ValueError):
            ours.decode(tokens)
        return
    got = ours.decode(tokens)
    assert got == theirs, f"{where}\nours {got!r}\nref  {theirs!r}"


seeds = st.integers(0, 2**32 - 1)


@settings(
    max_examples=5000 if EXHAUSTIVE else 600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=seeds, token_seed=seeds, n=st.integers(0, 12))
def test_random_decoder_on_random_tokens(seed, token_seed, n):
    ref = random_decoder(random.Random(seed))
    rng = random.Random(token_seed)
    check(ref, [random_token(rng) for _ in range(n)], seed)


@settings(max_examples=2000 if EXHAUSTIVE else 300, deadline=None)
@given(seed=seeds, tokens=st.lists(st.text(max_size=6), max_size=8))
def test_random_decoder_on_any_text(seed, tokens):
    check(random_decoder(random.Random(seed)), tokens, seed)


@pytest.mark.parametrize("seed", range(300 if EXHAUSTIVE else 60))
def test_random_decoder_on_edge_lists(seed):
    ref = random_decoder(random.Random(seed))
    for tokens in [[], [""], ["", ""], ["\u2581"], ["<0xE2>"], ["a", "a", "a"], ["ĠÃ", "©"]]:
        check(ref, tokens, seed)


def test_byte_level_decodes_every_byte_pair():
    """Every pair of bytes as byte-level tokens: UTF-8 and invalid sequences alike."""
    ref = reference().decoders.ByteLevel()
    ours = tokenprism.Decoder.from_str(ref.__getstate__().decode())
    tokens = [byte_level(bytes([a, b])) for a in range(256) for b in range(0, 256, 7)]
    for i in range(0, len(tokens), 64):
        chunk = tokens[i : i + 64]
        assert ours.decode(chunk) == ref.decode(chunk), chunk


def test_loader_errors_name_the_json_path():
    bad = {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Strip", "content": "ab"}]}
    with pytest.raises(ValueError, match=r"decoder\.decoders\[1\]\.content"):
        tokenprism.Decoder.from_str(json.dumps(bad))
    bad["decoders"][1] = {"type": "Metaspace", "replacement": "_", "prepend_scheme": "sometimes"}
    with pytest.raises(ValueError, match=r"decoder\.decoders\[1\]\.prepend_scheme"):
        tokenprism.Decoder.from_str(json.dumps(bad))
    with pytest.raises(ValueError, match=r"decoder\.suffix"):
        tokenprism.Decoder.from_str('{"type": "BPEDecoder"}')
    with pytest.raises(ValueError, match="Nope"):
        tokenprism.Decoder.from_str('{"type": "Nope"}')
