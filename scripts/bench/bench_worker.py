"""One implementation under benchmark, driven by scripts/bench/bench.py over stdin/stdout.

Runs in whatever Python has the implementation installed (the system Python for tokenprism
and tokenizers 0.23.3, a virtualenv for each peer whose package name clashes or that we keep
apart), so it uses the standard library only and is started as

    python bench_worker.py IMPL TOKENIZER_JSON [OPTIONS_JSON]

IMPL is one of: tokenprism, tokenizers, tokenizers1, tokie, kitoken. OPTIONS_JSON (tokenprism
only) is e.g. {"api": "encode_ids", "fast_paths": {"simd": false}}; the api "encode_ids_array"
returns each document's ids as a numpy uint32 array (encode_ids(..., as_array=True)).

Protocol: one JSON object per line in each direction; every request gets exactly one reply.

    {"cmd": "hello"}                       -> {"ok": true, "impl": ..., "version": ..., "ops": [...]}
    {"cmd": "load", "key": K, "path": P}   -> {"ok": true, "docs": n, "bytes": b}
        P is a JSON file holding a list of strings (the documents); kept in memory under K.
    {"cmd": "run", "key": K, "op": OP, "min_seconds": s, "hash": bool}
        OP is "encode" (ids of each document) or "normalize" (normalized string of each).
        Runs whole passes over the documents until at least min_seconds have elapsed (at
        least one pass), timed with perf_counter with the garbage collector off.
        -> {"ok": true, "seconds": wall, "cpu_seconds": cpu, "passes": p, "calls": c,
            "bytes": utf8 bytes of one pass, "tokens": ids of one pass,
            "sha256": ..., "doc_digests": [...]}      (the last two only when hash is true)
    {"cmd": "output", "key": K, "op": OP, "index": i}  -> {"ok": true, "value": ids or string}
    {"cmd": "tokens", "ids": [...]}        -> {"ok": true, "value": [token strings]}  (tokenizers only)
    {"cmd": "quit"}                        -> exits

Hash: sha256 over the documents in order; a document contributes its u32 little-endian
count followed by its ids as u32 little-endian (for "normalize": the byte count of its UTF-8
text, then the text). doc_digests are 8-byte blake2b digests of the same per-document bytes,
so that bench.py can point at the first document where two implementations differ.
"""

from __future__ import annotations

import array
import hashlib
import json
import platform
import sys

from bench_common import kitoken_encode, load_docs, serve, timed_passes, tokie_encode


def load_impl(impl: str, tokenizer_json: str, opts: dict):
    """(version, {op: function(document) -> ids or str})."""
    if impl == "tokenprism":
        import tokenprism

        tok = tokenprism.Tokenizer.from_file(tokenizer_json)
        tok.no_truncation()
        tok.no_padding()
        if opts.get("fast_paths"):
            tok.set_fast_paths(**opts["fast_paths"])
        if hasattr(tokenprism, "set_num_threads"):
            tokenprism.set_num_threads(1)
        api = opts.get("api", "encode")
        if api == "encode_ids":
            enc = tok.encode_ids

            def encode(d):
                return enc(d, add_special_tokens=False)
        elif api == "encode_ids_array":
            enc = tok.encode_ids

            def encode(d):
                return enc(d, add_special_tokens=False, as_array=True)
        else:
            enc = tok.encode

            def encode(d):
                return enc(d, add_special_tokens=False).ids

        # The normalizer object snapshots the tokenizer (fast paths included): take it once.
        norm = tok.normalizer.normalize_str
        extra = {"fast_paths": dict(tok.fast_paths), "module": tokenprism.__file__}
        core = getattr(tokenprism, "_core", None)
        if core is not None and getattr(core, "__file__", None):
            with open(core.__file__, "rb") as f:
                extra["extension_sha256"] = hashlib.sha256(f.read()).hexdigest()[:16]
            extra["debug_build"] = elf_has_debug_info(core.__file__)
        return tokenprism.__version__, {"encode": encode, "normalize": norm}, extra

    if impl == "tokenizers":  # the 0.x line (0.23.3 is the reference)
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(tokenizer_json)
        tok.no_truncation()
        tok.no_padding()
        enc = tok.encode

        def encode(d):
            return enc(d, add_special_tokens=False).ids

        return (
            tokenizers.__version__,
            {
                "encode": encode,
                "normalize": tok.normalizer.normalize_str,
                "id_to_token": tok.id_to_token,
            },
            {},
        )

    if impl == "tokenizers1":  # the 1.x line: no normalizer in its Python API
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(tokenizer_json)
        tok.padding = None
        tok.truncation = None
        enc = tok.encode

        def encode(d):
            return enc(d, add_special_tokens=False).ids

        return tokenizers.__version__, {"encode": encode}, {}

    if impl in ("tokie", "kitoken"):
        import importlib.metadata

        encode = (tokie_encode if impl == "tokie" else kitoken_encode)(tokenizer_json)
        return importlib.metadata.version(impl), {"encode": encode}, {}

    raise SystemExit(f"unknown implementation {impl!r}")


def elf_has_debug_info(path: str) -> bool | None:
    """Whether an ELF64 little-endian file has a .debug_info section (a debug build), or None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            return None
        shoff = int.from_bytes(data[0x28:0x30], "little")
        entsize = int.from_bytes(data[0x3A:0x3C], "little")
        num = int.from_bytes(data[0x3C:0x3E], "little")
        strndx = int.from_bytes(data[0x3E:0x40], "little")

        def sec(i):
            h = data[shoff + i * entsize : shoff + (i + 1) * entsize]
            return (
                int.from_bytes(h[0:4], "little"),
                int.from_bytes(h[0x18:0x20], "little"),
                int.from_bytes(h[0x20:0x28], "little"),
            )

        _, stroff, _ = sec(strndx)
        for i in range(num):
            name_off = sec(i)[0]
            end = data.index(b"\0", stroff + name_off)
            if data[stroff + name_off : end] == b".debug_info":
                return True
        return False
    except (OSError, ValueError, IndexError):
        return None


def doc_bytes(op: str, out) -> bytes:
    if op == "normalize":
        b = out.encode("utf-8")
        return len(b).to_bytes(4, "little") + b
    a = array.array("I", [len(out)])
    a.extend(out.tolist() if hasattr(out, "tolist") else out)
    if sys.byteorder != "little":
        a.byteswap()
    return a.tobytes()


def main() -> None:
    impl, tokenizer_json = sys.argv[1], sys.argv[2]
    opts = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    version, ops, extra = load_impl(impl, tokenizer_json, opts)
    docs: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}

    def handle(req: dict) -> dict:
        cmd = req["cmd"]
        if cmd == "hello":
            return {
                "ok": True,
                "impl": impl,
                "version": version,
                "ops": sorted(set(ops) - {"id_to_token"}),
                "python": platform.python_version(),
                **extra,
            }
        if cmd == "load":
            docs[req["key"]], sizes[req["key"]] = load_docs(req["path"])
            return {"ok": True, "docs": len(docs[req["key"]]), "bytes": sizes[req["key"]]}
        if cmd == "run":
            op = req["op"]
            if op not in ("encode", "normalize") or op not in ops:
                return {"ok": False, "error": f"{impl} has no {op!r} in its Python API"}
            t = timed_passes(ops[op], docs[req["key"]], float(req.get("min_seconds", 0.0)))
            res = t.pop("results")
            reply = {
                "ok": True,
                **t,
                "bytes": sizes[req["key"]],
                "tokens": sum(len(r) for r in res) if op == "encode" else None,
            }
            if req.get("hash"):
                h = hashlib.sha256()
                digests = []
                for r in res:
                    b = doc_bytes(op, r)
                    h.update(b)
                    digests.append(hashlib.blake2b(b, digest_size=8).hexdigest())
                reply["sha256"] = h.hexdigest()
                reply["doc_digests"] = digests
            return reply
        if cmd == "tokens":
            return {"ok": True, "value": [ops["id_to_token"](i) for i in req["ids"]]}
        if cmd == "output":
            v = ops[req["op"]](docs[req["key"]][req["index"]])
            if hasattr(v, "tolist"):  # a numpy array
                v = v.tolist()
            return {"ok": True, "value": v if isinstance(v, str) else list(v)}
        return {"ok": False, "error": f"unknown command {cmd!r}"}

    serve(handle)


if __name__ == "__main__":
    main()
