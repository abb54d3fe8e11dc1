"""One byte-level BPE implementation under benchmark, driven by scripts/bench/bpe_bench.py.

Same line protocol as scripts/bench/bench_worker.py (hello / load / run / output / tokens / quit),
standard library only, started in the Python that has the implementation installed:

    python bpe_bench_worker.py IMPL ENCODING OPTIONS_JSON

IMPL: tokenprism | tokenprism-numpy | tokenprism-json | tokenprism-json-numpy | tiktoken |
tiktoken-numpy | tiktoken-json | gigatoken | gigatoken-json | fastokens | fastokens-json | tokie |
kitoken | tokenizers | tokenizers-batch | tokenizers1. The -json variants load the tokenizer.json
(tiktoken-json builds an Encoding from its vocab and Split regexes). ENCODING is the tiktoken name (o200k_base,
cl100k_base) or a tokenizer.json's (llama3.2); OPTIONS_JSON gives "rank_file" (the .tiktoken
file), "pattern" (the encoding's regex, for fastokens), "tokenizer_json" (for tokenizers and
tokenprism-json) and "tiktoken_cache" (for tiktoken). Every call encodes one string with special
tokens off (tokenprism-json matches the file's added tokens in the text, as tokenizers' encode
does) and returns its ids as a Python list (the timed work includes building the list);
the -numpy variants return a numpy uint32 array instead (tokenprism's encode_ordinary_to_numpy,
tiktoken's encode_to_numpy with no special token); tokenizers-batch encodes all documents in
one encode_batch_fast call per pass. gigatoken-json and tiktoken-json (encode_to_numpy) return
arrays too: each peer's fastest per-document call.

Hash: FNV-1a 64 with one step per id (h = (h ^ id) * prime) over each document, then over the
document count and the per-document hashes; doc_digests are the per-document hashes.
"""

from __future__ import annotations

import json
import platform
import sys
from functools import partial

from bench_common import kitoken_encode, load_docs, serve, timed_passes, tokie_encode

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = 0xFFFFFFFFFFFFFFFF


def fnv_ids(ids) -> int:
    if hasattr(ids, "tolist"):  # a numpy array: hash Python ints, not wrapping uint32s
        ids = ids.tolist()
    h = FNV_OFFSET
    for i in ids:
        h = ((h ^ i) * FNV_PRIME) & MASK
    return h


def byte_level_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet: the character standing for each byte in a vocab entry."""
    keep = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars = {b: chr(b) for b in keep}
    n = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + n)
            n += 1
    return {c: b for b, c in chars.items()}


def tiktoken_from_json(tiktoken, path: str):
    """A tiktoken.Encoding from a byte-level BPE tokenizer.json: the vocab's ids as ranks and the
    file's Split regexes, joined as alternatives when there are several (tiktoken applies one
    regex; whether that gives the file's ids is what the hash check tells)."""
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    dec = byte_level_decoder()
    added = {t["id"] for t in j.get("added_tokens", [])}
    # Entries outside the byte-level alphabet are added tokens (special tokens) kept in the vocab.
    ranks = {
        bytes(dec[c] for c in tok): i
        for tok, i in j["model"]["vocab"].items()
        if i not in added and all(c in dec for c in tok)
    }
    pre = j["pre_tokenizer"]
    steps = pre.get("pretokenizers", [pre])
    regexes = [p["pattern"]["Regex"] for p in steps if p["type"] == "Split"]
    return tiktoken.Encoding(
        name=path, pat_str="|".join(regexes), mergeable_ranks=ranks, special_tokens={}
    )


def load_impl(impl: str, encoding: str, opts: dict):
    """(version, encode(str) -> list[int], id_to_token or None, encode_all(list[str]) ->
    list[list[int]] or None)."""
    import importlib.metadata as md

    if impl == "tokenprism":
        import tokenprism

        tok = tokenprism.BpeTokenizer.from_tiktoken_file(opts["rank_file"], encoding)
        return tokenprism.__version__, tok.encode_ordinary, None, None
    if impl == "tokenprism-numpy":
        import tokenprism

        tok = tokenprism.BpeTokenizer.from_tiktoken_file(opts["rank_file"], encoding)
        return tokenprism.__version__, tok.encode_ordinary_to_numpy, None, None
    if impl in ("tokenprism-json", "tokenprism-json-numpy"):
        import tokenprism

        tok = tokenprism.BpeTokenizer.from_file(opts["tokenizer_json"])
        # The file's added tokens are matched in the text, as the reference's encode does
        # (add_special_tokens=False only leaves out the template's tokens).
        if impl == "tokenprism-json-numpy":
            return (
                tokenprism.__version__,
                partial(tok.encode_to_numpy, allowed_special="all"),
                None,
                None,
            )
        return tokenprism.__version__, partial(tok.encode, allowed_special="all"), None, None
    if impl == "tiktoken-json":
        import tiktoken

        enc = tiktoken_from_json(tiktoken, opts["tokenizer_json"])
        to_numpy = enc.encode_to_numpy

        def encode(d):
            return to_numpy(d, disallowed_special=())

        return tiktoken.__version__, encode, None, None
    if impl == "gigatoken-json":
        import gigatoken

        # Returns a numpy uint32 array per call.
        tok = gigatoken.Tokenizer(opts["tokenizer_json"])
        return md.version("gigatoken"), tok.encode, None, None
    if impl == "fastokens-json":
        from fastokens import Tokenizer

        enc = Tokenizer.from_file(opts["tokenizer_json"]).encode_ordinary

        def encode(d):
            return enc(d).ids

        return md.version("fastokens"), encode, None, None
    if impl in ("tokie", "kitoken"):
        encode = (tokie_encode if impl == "tokie" else kitoken_encode)(opts["tokenizer_json"])
        return md.version(impl), encode, None, None
    if impl in ("tiktoken", "tiktoken-numpy"):
        import os

        os.environ["TIKTOKEN_CACHE_DIR"] = opts["tiktoken_cache"]
        import tiktoken

        enc = tiktoken.get_encoding(encoding)

        def token(i):
            return enc.decode_single_token_bytes(i).decode("utf-8", "replace")

        if impl == "tiktoken-numpy":
            to_numpy = enc.encode_to_numpy

            def encode(d):
                return to_numpy(d, disallowed_special=())

            return tiktoken.__version__, encode, token, None
        return tiktoken.__version__, enc.encode_ordinary, token, None
    if impl == "gigatoken":
        import gigatoken

        # gigatoken picks the pre-tokenizer and specials from the file name (o200k_base.tiktoken).
        tok = gigatoken.Tokenizer.from_tiktoken(opts["rank_file"]).as_tiktoken()
        return md.version("gigatoken"), tok.encode_ordinary, None, None
    if impl == "fastokens":
        from fastokens import Tokenizer

        tok = Tokenizer.from_tiktoken(opts["rank_file"], pattern=opts["pattern"], special_tokens={})
        enc = tok.encode_ordinary

        def encode(d):
            return enc(d).ids

        return md.version("fastokens"), encode, None, None
    if impl in ("tokenizers", "tokenizers1", "tokenizers-batch"):
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(opts["tokenizer_json"])
        enc = tok.encode

        def encode(d):
            return enc(d, add_special_tokens=False).ids

        def encode_all(ds):
            return [e.ids for e in tok.encode_batch_fast(ds, add_special_tokens=False)]

        return (
            tokenizers.__version__,
            encode,
            None,
            encode_all if impl == "tokenizers-batch" else None,
        )
    raise SystemExit(f"unknown implementation {impl!r}")


def main() -> None:
    impl, encoding = sys.argv[1], sys.argv[2]
    opts = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    version, encode, token, batch = load_impl(impl, encoding, opts)
    # One short call, so that what a library sets up on its first call (imports, tables) is
    # not counted in the first pass over the first corpus.
    encode("Set up.")
    if batch is not None:
        batch(["Set up."])

    docs: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}

    def handle(req: dict) -> dict:
        cmd = req["cmd"]
        if cmd == "hello":
            return {
                "ok": True,
                "impl": impl,
                "version": version,
                "ops": ["encode"],
                "python": platform.python_version(),
            }
        if cmd == "load":
            docs[req["key"]], sizes[req["key"]] = load_docs(req["path"])
            return {"ok": True, "docs": len(docs[req["key"]]), "bytes": sizes[req["key"]]}
        if cmd == "run":
            if req["op"] != "encode":
                raise ValueError(f"no op {req['op']!r}")
            these = docs[req["key"]]
            if batch is not None:
                # One call per pass on all documents (RAYON_NUM_THREADS=1: one thread).
                t = timed_passes(batch, [these], float(req.get("min_seconds", 0.0)))
                res = t.pop("results")[0]
                t["calls"] = t["passes"] * len(these)
            else:
                t = timed_passes(encode, these, float(req.get("min_seconds", 0.0)))
                res = t.pop("results")
            reply = {
                "ok": True,
                **t,
                "bytes": sizes[req["key"]],
                "tokens": sum(len(r) for r in res),
            }
            if req.get("hash"):
                per_doc = [fnv_ids(r) for r in res]
                h = fnv_ids([len(per_doc)] + per_doc)
                reply["fnv1a64"] = f"{h:016x}"
                reply["doc_digests"] = [f"{x:016x}" for x in per_doc]
            return reply
        if cmd == "output":
            ids = encode(docs[req["key"]][req["index"]])
            return {"ok": True, "value": ids.tolist() if hasattr(ids, "tolist") else list(ids)}
        if cmd == "tokens":
            if token is None:
                raise ValueError("no token texts")
            return {"ok": True, "value": [token(i) for i in req["ids"]]}
        return {"ok": False, "error": f"unknown command {cmd!r}"}

    serve(handle)


if __name__ == "__main__":
    main()
