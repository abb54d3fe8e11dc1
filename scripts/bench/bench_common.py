"""What scripts/bench/bench_worker.py (BERT) and scripts/bench/bpe_bench_worker.py (byte-level BPE) share:
the line protocol's loop, loading documents, the timed loop and the tokenizer.json peers that
both run (tokie, kitoken).

Standard library only: the workers run in the peers' virtualenvs. They are started as
`python scripts/bench/<worker>.py ...`, so this file's directory is on sys.path.
"""

from __future__ import annotations

import gc
import json
import sys
import time


def load_docs(path: str) -> tuple[list[str], int]:
    """The documents of a JSON list file and their total UTF-8 size in bytes."""
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    return d, sum(len(x.encode("utf-8")) for x in d)


def timed_passes(f, docs: list[str], min_seconds: float) -> dict:
    """Whole passes of `f` over `docs` until at least `min_seconds` have elapsed (at least
    one pass), timed with perf_counter and process_time with the garbage collector off.
    Returns {"results": the last pass's outputs, "seconds", "cpu_seconds", "passes",
    "calls"}."""
    gc.collect()
    gc.disable()
    try:
        passes = 0
        c0 = time.process_time()
        t0 = time.perf_counter()
        while True:
            res = [f(x) for x in docs]
            passes += 1
            if time.perf_counter() - t0 >= min_seconds:
                break
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
    finally:
        gc.enable()
    return {
        "results": res,
        "seconds": wall,
        "cpu_seconds": cpu,
        "passes": passes,
        "calls": passes * len(docs),
    }


def serve(handle) -> None:
    """The protocol loop: one JSON request per line on stdin, one JSON reply per line on
    stdout. `handle(req)` returns the reply dict; "quit" ends the loop, and an exception
    becomes {"ok": false, "error": ...} (reported to the coordinator, which records it)."""
    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "quit":
            break
        try:
            reply = handle(req)
        except Exception as e:
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def tokie_encode(tokenizer_json: str):
    """tokie's per-document encode of a tokenizer.json, padding and truncation off: ids as a
    list."""
    import tokie

    tok = tokie.Tokenizer.from_json(tokenizer_json)
    tok.no_truncation()
    tok.no_padding()
    enc = tok.encode

    def encode(d):
        return enc(d, add_special_tokens=False).ids

    return encode


def kitoken_encode(tokenizer_json: str):
    """kitoken's per-document encode of a tokenizer.json, special tokens off: ids as a list.
    kitoken keeps a file's padding and truncation as "processing" steps: they are dropped, as
    no_padding()/no_truncation() do for the others."""
    import kitoken

    tok = kitoken.Kitoken.from_tokenizers_file(tokenizer_json)
    cfg = tok.config()
    cfg["processing"] = [p for p in cfg.get("processing", []) if not ({"Pad", "Truncate"} & set(p))]
    tok.set_config(cfg)
    enc = tok.encode

    def encode(d):
        return enc(d, False)

    return encode
