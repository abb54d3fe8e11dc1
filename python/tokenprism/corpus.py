"""Tokenize text corpora into shards of ids, or count their tokens.

Inputs are text files (one document per file, per line, or per run of non-blank lines), JSON
Lines (optionally gzipped; one string field per line) and Parquet files (one string column).
The work is cut into shards by a plan that depends only on the inputs and the shard size, so
the output is the same bytes whatever runs it: one process, several, threads or Dask workers.

    index = encode_files(["a.jsonl"], "tokenizer.json", "out/")   # out/shard-00000.ids.npy ...
    index["shards"][0]["documents"], index["shards"][0]["tokens"]
    count_files(["a.jsonl"], "tokenizer.json")["total"]["tokens"]

A shard is two files: ``shard-NNNNN.ids.npy`` (uint16 when every id fits, else uint32) and
``shard-NNNNN.offsets.npy`` (int64, one more than its documents; document ``i`` is
``ids[offsets[i]:offsets[i + 1]]``). ``index.json`` names the tokenizer, the options, the
inputs and the shards in input order. Files appear under their final names only when complete
(written to a hidden temporary name, synced, renamed), and ``plan.json`` lets the same call
resume a stopped run, skipping the shards already written.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

DOCS_MODES = ("file", "line", "blank-line")
ERRORS_MODES = ("strict", "replace", "skip")
EXECUTORS = ("auto", "process", "thread")
DEFAULT_SHARD_SIZE = 64 << 20
INDEX_NAME = "index.json"
PLAN_NAME = "plan.json"
FORMAT_NAME = "tokenprism-corpus"
FORMAT_VERSION = 1
# End-of-text tokens by convention (GPT-2 and tiktoken, Llama 3, SentencePiece and Mistral,
# DeepSeek, Gemma, BERT's separator); the first one the tokenizer holds as a single token wins.
EOS_CANDIDATES = (
    "<|endoftext|>",
    "<|end_of_text|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "<eos>",
    "[SEP]",
)
# Documents are sent to the tokenizer in batches of about this many bytes of text.
_BATCH_BYTES = 1 << 20
_READ_BLOCK = 1 << 20


class CorpusError(Exception):
    """A problem with an input, the tokenizer or the output folder; the message names the file
    (and the line, where there is one)."""


# ------------------------------------------------------------------------------ inputs


def input_format(path: str | os.PathLike[str]) -> tuple[str, bool]:
    """(format, gzipped) told by the file name: "jsonl" (.jsonl, .ndjson, .json), "parquet"
    (.parquet) or "text" (anything else); a .gz suffix is gzip."""
    name = os.fspath(path).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl", gz
    if name.endswith(".parquet"):
        if gz:
            raise CorpusError(f"{path}: a Parquet file is compressed inside; drop the .gz")
        return "parquet", False
    return "text", gz


def _pyarrow_parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError(
            "reading Parquet files needs pyarrow, which is not installed (pip install pyarrow)"
        ) from None
    return pq


class _Source:
    """One input: where it is, how to read it, and how it was named on the command line."""

    def __init__(self, path: str | os.PathLike[str]):
        self.shown = os.fspath(path)
        self.path = os.path.abspath(self.shown)
        self.format, self.gz = input_format(self.shown)

    def job(self) -> dict[str, Any]:
        return {"shown": self.shown, "path": self.path, "format": self.format, "gz": self.gz}


def _open_binary(path: str, gz: bool):
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _stat(src: _Source) -> os.stat_result:
    try:
        return os.stat(src.path)
    except OSError as e:
        raise CorpusError(f"{src.shown}: {e.strerror}") from None


def _plan_lines(src: _Source, target: int, blank: bool) -> tuple[int, list[tuple[int, int]]]:
    """(size, ranges) of a line-based input, cut at line ends (after a blank line when
    `blank`) at the first chance past every `target` bytes."""
    if src.gz:
        return _plan_lines_stream(src, target, blank)
    size = _stat(src).st_size
    if size == 0:
        raise CorpusError(f"{src.shown}: empty file")
    cuts = [0]
    with open(src.path, "rb") as f:
        while size - cuts[-1] > target:
            cut = _boundary_at(f, cuts[-1] + target, size, blank)
            if cut >= size:
                break
            cuts.append(cut)
    cuts.append(size)
    return size, list(zip(cuts, cuts[1:]))


# What a blank line may hold (bytes.strip's set, for str lines too).
_ASCII_SPACE = " \t\n\r\x0b\x0c"


def _is_blank(line: bytes) -> bool:
    return not line.strip()


def _boundary_at(f, want: int, size: int, blank: bool) -> int:
    """The end of the first line ending at or after `want` (line mode), or of the first blank
    line starting at or after `want` (blank-line mode); `size` when there is none."""
    f.seek(want - 1)
    base = want - 1  # the file offset of buf[0]
    buf = b""
    started = False  # blank mode: buf starts at a line start
    while block := f.read(1 << 16):
        buf += block
        start = 0
        while (nl := buf.find(b"\n", start)) >= 0:
            if not blank:
                return base + nl + 1
            if started and _is_blank(buf[start:nl]):
                return base + nl + 1
            started = True
            start = nl + 1
        if not started:
            start = len(buf)
        base += start
        buf = buf[start:]
    return size


def _plan_lines_stream(src: _Source, target: int, blank: bool) -> tuple[int, list[tuple[int, int]]]:
    """_plan_lines for a stream read once from the start (gzip): the same cuts."""
    cuts = [0]
    pos = 0
    try:
        with _open_binary(src.path, src.gz) as f:
            for line in f:
                start, pos = pos, pos + len(line)
                want = cuts[-1] + target
                if not line.endswith(b"\n"):
                    continue
                if blank:
                    if start >= want and _is_blank(line):
                        cuts.append(pos)
                elif pos >= want:
                    cuts.append(pos)
    except (OSError, EOFError) as e:
        raise CorpusError(f"{src.shown}: cannot read ({e})") from None
    if pos == 0:
        raise CorpusError(f"{src.shown}: empty file")
    if cuts[-1] == pos:
        cuts.pop()
    cuts.append(pos)
    return pos, list(zip(cuts, cuts[1:]))


def _plan_file(src: _Source) -> tuple[int, list[tuple[int, int]]]:
    if src.gz:
        n = 0
        with _open_binary(src.path, True) as f:
            while block := f.read(_READ_BLOCK):
                n += len(block)
    else:
        n = _stat(src).st_size
    if n == 0:
        raise CorpusError(f"{src.shown}: empty file")
    return n, [(0, n)]


def _plan_parquet(src: _Source, field: str) -> tuple[int, list[tuple[int, int, int]]]:
    """(size, ranges) of a Parquet file: one range per row group, with its uncompressed bytes."""
    pq = _pyarrow_parquet()
    _stat(src)
    try:
        pf = pq.ParquetFile(src.path)
    except Exception as e:  # pyarrow raises its own error types for a file that is not Parquet
        raise CorpusError(f"{src.shown}: not a Parquet file ({e})") from None
    names = pf.schema_arrow.names
    if field not in names:
        raise CorpusError(f"{src.shown}: no column {field!r} (columns: {', '.join(names)})")
    meta = pf.metadata
    if meta.num_rows == 0:
        raise CorpusError(f"{src.shown}: empty file (no rows)")
    col = names.index(field)
    ranges = []
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        if rg.num_rows:
            ranges.append((i, i + 1, rg.column(col).total_uncompressed_size))
    return sum(r[2] for r in ranges), ranges


def plan(
    inputs: Sequence[str | os.PathLike[str]],
    *,
    docs: str = "line",
    field: str = "text",
    shard_size: int = DEFAULT_SHARD_SIZE,
) -> tuple[list[_Source], list[dict[str, Any]], list[dict[str, Any]]]:
    """(sources, their descriptions, shards). Each shard is a list of segments [input, start,
    end] (bytes of the decompressed file; row groups for Parquet) and its size in bytes:
    consecutive ranges packed until a shard holds `shard_size` bytes."""
    if docs not in DOCS_MODES:
        raise CorpusError(f"--docs must be one of {', '.join(DOCS_MODES)}, not {docs!r}")
    if shard_size <= 0:
        raise CorpusError("the shard size must be positive")
    if not inputs:
        raise CorpusError("no inputs")
    sources = [_Source(p) for p in inputs]
    described = []
    shards: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for i, src in enumerate(sources):
        if src.format == "parquet":
            size, ranges = _plan_parquet(src, field)
        elif src.format == "text" and docs == "file":
            size, plain = _plan_file(src)
            ranges = [(a, b, b - a) for a, b in plain]
        else:
            blank = src.format == "text" and docs == "blank-line"
            size, plain = _plan_lines(src, shard_size, blank)
            ranges = [(a, b, b - a) for a, b in plain]
        st = _stat(src)
        described.append(
            {
                "path": src.shown,
                "format": src.format + (".gz" if src.gz else ""),
                "size": size,
                "file_size": st.st_size,
                "mtime_ns": st.st_mtime_ns,
            }
        )
        for a, b, nbytes in ranges:
            if current is None:
                current = {"segments": [], "bytes": 0}
                shards.append(current)
            segs = current["segments"]
            if segs and segs[-1][0] == i and segs[-1][2] == a:
                segs[-1][2] = b
            else:
                segs.append([i, a, b])
            current["bytes"] += nbytes
            if current["bytes"] >= shard_size:
                current = None
    for n, shard in enumerate(shards):
        shard["name"] = f"shard-{n:05d}"
    return sources, described, shards


# ------------------------------------------------------------------------------ reading


def _line_number(src: dict[str, Any], offset: int) -> int:
    """1 + the newlines before byte `offset` of the (decompressed) file."""
    n = 0
    left = offset
    with _open_binary(src["path"], src["gz"]) as f:
        while left > 0:
            block = f.read(min(_READ_BLOCK, left))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n + 1


def _read_range(src: dict[str, Any], start: int, end: int) -> Iterator[bytes]:
    """The bytes [start, end) of the (decompressed) file, in blocks."""
    with _open_binary(src["path"], src["gz"]) as f:
        if src["gz"]:
            left = start
            while left > 0:
                block = f.read(min(_READ_BLOCK, left))
                if not block:
                    return
                left -= len(block)
        else:
            f.seek(start)
        left = end - start
        while left > 0:
            block = f.read(min(_READ_BLOCK, left))
            if not block:
                return
            left -= len(block)
            yield block


def _line_blocks(src: dict[str, Any], start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """(file offset, block of whole lines) over [start, end)."""
    carry = b""
    at = start
    for block in _read_range(src, start, end):
        buf = carry + block
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            carry = buf
            continue
        chunk, carry = buf[:cut], buf[cut:]
        yield at, chunk
        at += cut
    if carry:
        yield at, carry


def _split_lines(block: bytes) -> list[bytes]:
    """The lines of a block, without newlines or final carriage returns."""
    lines = block.split(b"\n")
    if block.endswith(b"\n"):
        lines.pop()
    return [x[:-1] if x.endswith(b"\r") else x for x in lines]


# Where a line is: (file offset of its block, its index in the block). The line number is
# counted from the file's start only for an error message.
_Pos = tuple[int, int]


class _Decoder:
    """Bytes to text under the --errors policy, with the file and line in strict errors."""

    def __init__(self, src: dict[str, Any], errors: str):
        self.src, self.errors = src, errors
        self.skipped = 0

    def where(self, pos: _Pos) -> str:
        return f"{self.src['shown']}:{_line_number(self.src, pos[0]) + pos[1]}"

    def __call__(self, data: bytes, pos: _Pos) -> str | None:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            if self.errors == "replace":
                return data.decode("utf-8", "replace")
            if self.errors == "skip":
                self.skipped += 1
                return None
            line = pos[1] + data.count(b"\n", 0, e.start)
            col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
            raise CorpusError(
                f"{self.where((pos[0], line))}: invalid UTF-8 (byte {data[e.start]:#04x} at column {col});"
                " --errors replace or --errors skip to go on"
            ) from None


def _json_value(text: str, field: str, dec: _Decoder, pos: _Pos) -> str:
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise CorpusError(f"{dec.where(pos)}: not valid JSON ({e})") from None
    if not isinstance(obj, dict) or field not in obj:
        raise CorpusError(f"{dec.where(pos)}: no field {field!r}")
    value = obj[field]
    if not isinstance(value, str):
        kind = type(value).__name__
        raise CorpusError(f"{dec.where(pos)}: field {field!r} is a {kind}, not a string")
    return value


def _by_chunks(src: dict[str, Any]) -> bool:
    """Whether an input is read in chunks of whole documents' bytes that Rust splits (text
    and JSONL), not a document at a time in Python (Parquet rows)."""
    return src["format"] in ("text", "jsonl")


def _chunks(
    src: dict[str, Any], start: int, end: int, opts: dict[str, Any]
) -> Iterator[tuple[int, bytes]]:
    """(file offset, bytes) of a segment of a text or JSONL input, cut only between
    documents: blocks of whole lines; for runs of lines, after a blank line (a run may span
    blocks); for whole files, the segment."""
    if src["format"] == "text" and opts["docs"] == "file":
        yield start, b"".join(_read_range(src, start, end))
        return
    if src["format"] == "jsonl" or opts["docs"] == "line":
        yield from _line_blocks(src, start, end)
        return
    held: list[bytes] = []  # the lines of an open run, from offset `at`
    at = start
    for pos, block in _line_blocks(src, start, end):
        cut = _after_last_blank_line(block)
        if cut == 0:
            held.append(block)
            continue
        held.append(block[:cut])
        yield at, b"".join(held)
        held, at = [block[cut:]], pos + cut
    if any(held):
        yield at, b"".join(held)


def _after_last_blank_line(block: bytes) -> int:
    """The end of the last whole blank line of a block of lines (0 when there is none)."""
    end = block.rfind(b"\n")
    while end >= 0:
        start = block.rfind(b"\n", 0, end) + 1
        if _is_blank(block[start:end]):
            return end + 1
        end = start - 1
    return 0


def _chunk_docs(
    src: dict[str, Any], at: int, chunk: bytes, opts: dict[str, Any], dec: _Decoder
) -> tuple[list[str], int | None]:
    """The documents of a chunk (at file offset `at`) as str, with their UTF-8 bytes when
    known cheaply; line by line where the chunk is not valid UTF-8, to say where."""
    fmt, docs = src["format"], opts["docs"]
    if fmt == "jsonl":
        try:
            lines = chunk.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            lines = [dec(x, (at, k)) for k, x in enumerate(chunk.split(b"\n"))]
        values = []
        for k, line in enumerate(lines):
            if line is None or not line.strip(_ASCII_SPACE):
                continue
            values.append(_json_value(line, opts["field"], dec, (at, k)))
        return values, None
    if docs == "file":
        text = dec(chunk, (at, 0))
        return ([] if text is None else [text]), None
    if docs == "blank-line":
        numbered = [((at, k), x) for k, x in enumerate(_split_lines(chunk))]
        return list(_runs(numbered, dec)), None
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError:
        raw = _split_lines(chunk)
        texts = [dec(x, (at, k)) for k, x in enumerate(raw) if x]
        return [t for t in texts if t], None
    lines = text.split("\n")
    newlines = len(lines) - 1
    cr = 0
    if "\r" in text:
        cr = sum(1 for x in lines if x.endswith("\r"))
        lines = [x[:-1] if x.endswith("\r") else x for x in lines]
    return list(filter(None, lines)), len(chunk) - newlines - cr


def _runs(lines: Iterable[tuple[_Pos, bytes]], dec: _Decoder) -> Iterator[str]:
    """The runs of non-blank lines, each joined by "\n"."""
    run: list[bytes] = []
    first = (0, 0)
    for pos, line in lines:
        if _is_blank(line):
            if run:
                text = dec(b"\n".join(run), first)
                if text is not None:
                    yield text
                run = []
            continue
        if not run:
            first = pos
        run.append(line)
    if run:
        text = dec(b"\n".join(run), first)
        if text is not None:
            yield text


def _parquet_docs(src: dict[str, Any], first: int, last: int, field: str) -> Iterator[str]:
    pq = _pyarrow_parquet()
    pf = pq.ParquetFile(src["path"])
    row = sum(pf.metadata.row_group(g).num_rows for g in range(first))
    for g in range(first, last):
        values = pf.read_row_group(g, columns=[field]).column(0).to_pylist()
        for value in values:
            row += 1
            if not isinstance(value, str):
                what = "missing (null)" if value is None else f"a {type(value).__name__}"
                raise CorpusError(
                    f"{src['shown']}: row {row}: field {field!r} is {what}, not a string"
                )
            yield value


# ------------------------------------------------------------------------------ tokenizer


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_READ_BLOCK):
            h.update(block)
    return h.hexdigest()


_TOKENIZERS: dict[tuple[str, str], Any] = {}
_TOKENIZERS_LOCK = threading.Lock()


def load_tokenizer(path: str | os.PathLike[str], sha256: str | None = None):
    """A Tokenizer for corpus work (no padding, no truncation), loaded once per process and
    checked against `sha256` when given (Dask workers on other machines read their own copy)."""
    from . import Tokenizer

    path = os.path.abspath(os.fspath(path))
    key = (path, sha256 or "")
    with _TOKENIZERS_LOCK:
        tok = _TOKENIZERS.get(key)
        if tok is not None:
            return tok
        try:
            if sha256 is not None and file_sha256(path) != sha256:
                raise CorpusError(f"{path}: not the tokenizer file the job was planned with")
            tok = Tokenizer.from_file(path)
        except OSError as e:
            raise CorpusError(f"{path}: {e.strerror}" if e.strerror else str(e)) from None
        except ValueError as e:
            raise CorpusError(f"cannot load the tokenizer: {e}") from None
        tok.no_padding()
        tok.no_truncation()
        _TOKENIZERS[key] = tok
        return tok


def eos_id(tok, eos_token: str | None = None) -> int:
    """The id of `eos_token`, or of the first of EOS_CANDIDATES the tokenizer encodes as one
    token."""
    if eos_token is not None:
        ids = tok.encode_ids(eos_token, add_special_tokens=False)
        tid = tok.token_to_id(eos_token)
        if tid is None or ids != [tid]:
            raise CorpusError(f"the tokenizer has no token {eos_token!r} (--eos-token)")
        return tid
    for cand in EOS_CANDIDATES:
        tid = tok.token_to_id(cand)
        if tid is not None and tok.encode_ids(cand, add_special_tokens=False) == [tid]:
            return tid
    raise CorpusError(
        "the tokenizer has none of the usual end-of-text tokens "
        f"({', '.join(EOS_CANDIDATES)}); name one with --eos-token"
    )


# ------------------------------------------------------------------------------ one shard


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Read, tokenize and (when job["out"]) write one shard; returns its counts per segment.
    The unit of work of every executor (a process, a thread, a Dask task)."""
    import numpy as np

    opts = job["options"]
    tok = load_tokenizer(job["tokenizer"], job["sha256"])
    add_special, threads, eos = opts["add_special_tokens"], job["threads"], job["eos_id"]
    counting = job["out"] is None
    dtype = np.dtype(job["dtype"])
    limit = np.iinfo(dtype).max
    id_chunks: list[Any] = []
    len_chunks: list[Any] = []

    def record(ids, offs, stats: dict[str, Any]) -> None:
        lens = np.diff(offs)
        stats["documents"] += len(lens)
        stats["tokens"] += int(lens.sum())
        if counting:
            return
        if len(ids) and int(ids.max()) > limit:
            raise CorpusError(
                f"{job['tokenizer_name']}: id {int(ids.max())} does not fit {dtype.name}"
            )
        id_chunks.append(ids.astype(dtype, copy=False))
        len_chunks.append(lens)

    def segment(input_index: int, start: int, end: int) -> dict[str, Any]:
        src = job["inputs"][input_index]
        dec = _Decoder(src, opts["errors"])
        stats = {"input": input_index, "documents": 0, "bytes": 0, "chars": 0, "tokens": 0}
        if counting:
            stats["words"] = 0
        # Documents waiting for the tokenizer, and their UTF-8 bytes.
        batch: list[str] = []
        batch_bytes = 0

        def flush() -> None:
            nonlocal batch_bytes
            if not batch:
                return
            ids, offs = tok.encode_batch_ids(batch, add_special, threads, as_array=True)
            if eos is not None:
                ids = np.insert(ids, offs[1:], np.uint32(eos))
                offs = offs + np.arange(len(offs))
            record(ids, offs, stats)
            batch.clear()
            batch_bytes = 0

        def add(texts: list[str], nbytes: int | None) -> None:
            nonlocal batch_bytes
            if nbytes is None:
                nbytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
            stats["bytes"] += nbytes
            stats["chars"] += sum(map(len, texts))
            if counting:
                stats["words"] += sum(len(t.split()) for t in texts)
            batch.extend(texts)
            batch_bytes += nbytes
            if batch_bytes >= _BATCH_BYTES:
                flush()

        if _by_chunks(src):
            mode = "line" if src["format"] == "jsonl" else opts["docs"]
            field = opts["field"] if src["format"] == "jsonl" else None
            for at, chunk in _chunks(src, start, end, opts):
                # Clean chunks are split, parsed and counted in Rust without a str per
                # document; a chunk that is not will say which line in the reading below.
                got = tok._encode_lines(chunk, mode, field, add_special, eos, counting, threads)
                if got is None:
                    add(*_chunk_docs(src, at, chunk, opts, dec))
                    continue
                flush()
                ids, offs, nbytes, nchars, nwords = got
                stats["bytes"] += nbytes
                stats["chars"] += nchars
                if counting:
                    stats["words"] += nwords
                record(ids, offs, stats)
        else:
            for doc in _parquet_docs(src, start, end, opts["field"]):
                add([doc], None)
        flush()
        stats["skipped"] = dec.skipped
        return stats

    seg_stats = [segment(*seg) for seg in job["segments"]]
    result = {
        "name": job["name"],
        "documents": sum(s["documents"] for s in seg_stats),
        "tokens": sum(s["tokens"] for s in seg_stats),
        "segments": seg_stats,
    }
    if not counting:
        ids = np.concatenate(id_chunks) if id_chunks else np.zeros(0, dtype)
        offsets = np.zeros(result["documents"] + 1, np.int64)
        if len_chunks:
            np.cumsum(np.concatenate(len_chunks), out=offsets[1:])
        _write_shard(Path(job["out"]), job["name"], ids, offsets)
    return result


def _shard_paths(out: Path, name: str) -> tuple[Path, Path]:
    return out / f"{name}.ids.npy", out / f"{name}.offsets.npy"


def _write_npy_synced(path: Path, array) -> Path:
    """`array` as .npy under a hidden temporary name beside `path`, flushed to disk."""
    import numpy as np

    # Unique per writer: Dask may run a shard twice at once, on machines sharing the folder.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        np.lib.format.write_array(f, array, allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_shard(out: Path, name: str, ids, offsets) -> None:
    # The offsets file is renamed last: its presence under the final name says the shard is
    # complete (and the resume check reads both).
    ids_path, offs_path = _shard_paths(out, name)
    try:
        ids_tmp = _write_npy_synced(ids_path, ids)
        offs_tmp = _write_npy_synced(offs_path, offsets)
        os.replace(ids_tmp, ids_path)
        _fsync_dir(out)
        os.replace(offs_tmp, offs_path)
        _fsync_dir(out)
    except OSError as e:
        raise CorpusError(f"{out}: cannot write {name} ({e.strerror or e})") from None


def _shard_done(out: Path, name: str, dtype: str) -> tuple[int, int] | None:
    """(documents, tokens) of a complete shard already in `out`, else None."""
    import numpy as np

    ids_path, offs_path = _shard_paths(out, name)
    if not offs_path.is_file() or not ids_path.is_file():
        return None
    try:
        offs = np.load(offs_path, mmap_mode="r", allow_pickle=False)
        ids = np.load(ids_path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None
    if offs.dtype != np.int64 or offs.ndim != 1 or len(offs) == 0 or offs[0] != 0:
        return None
    if ids.dtype != np.dtype(dtype) or ids.ndim != 1 or int(offs[-1]) != len(ids):
        return None
    return len(offs) - 1, len(ids)


# ------------------------------------------------------------------------------ running


def _si(x: float) -> str:
    for unit in ("", "k", "M", "G"):
        if x < 1000:
            return f"{x:.3g}{unit}"
        x /= 1000
    return f"{x:.3g}T"


class Progress:
    """Bytes done, bytes/s, tokens/s and ETA on stderr, shown once the work has taken a second
    and only on a terminal (tqdm when it is installed)."""

    def __init__(self, total: int, enabled: bool | None = None, label: str = ""):
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.enabled, self.total, self.label = enabled, total, label
        self.done = self.tokens = 0
        self.start = time.monotonic()
        self.last = 0.0
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                self.bar = tqdm(
                    total=total,
                    unit="B",
                    unit_scale=True,
                    unit_divisor=1000,
                    delay=1.0,
                    file=sys.stderr,
                    desc=label or None,
                )

    def update(self, nbytes: int, ntokens: int) -> None:
        self.done += nbytes
        self.tokens += ntokens
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        rate = f"{_si(self.tokens / elapsed)} tok/s" if elapsed > 0 else ""
        if self.bar is not None:
            self.bar.set_postfix_str(rate, refresh=False)
            self.bar.update(nbytes)
            return
        if elapsed < 1.0 or (elapsed - self.last < 0.2 and self.done < self.total):
            return
        self.last = elapsed
        mbs = self.done / elapsed / 1e6
        left = (self.total - self.done) / (self.done / elapsed) if self.done else 0
        pct = 100 * self.done / self.total if self.total else 100
        sys.stderr.write(
            f"\r{self.label} {pct:5.1f}% {self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB "
            f"{mbs:.1f} MB/s {rate} ETA {left:.0f}s "
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and self.last:
            sys.stderr.write("\n")


def _exit_with(pid: int) -> None:
    """Pool initializer: end this worker once process `pid` is gone (a command killed with
    SIGKILL cannot stop its pool, and its workers would wait for jobs forever)."""

    def watch() -> None:
        while True:
            time.sleep(0.5)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _job_error(job: dict[str, Any], err: BaseException) -> BaseException:
    """A worker's failure as a CorpusError naming the shard (a CorpusError already names its
    file)."""
    if isinstance(err, (CorpusError, KeyboardInterrupt)):
        return err
    return CorpusError(f"{job['name']} failed: {type(err).__name__}: {err}")


def _executor_for(executor: str, sources: Sequence[_Source]) -> str:
    """ "auto": threads when every input is read in blocks of lines (text by lines, JSONL),
    whose documents are split and encoded in Rust with the GIL released; processes when
    Python splits them (runs of lines, Parquet rows), which holds it."""
    if executor != "auto":
        return executor
    by_block = all(s.format in ("text", "jsonl") for s in sources)
    return "thread" if by_block else "process"


def _execute(
    jobs: list[dict[str, Any]],
    *,
    workers: int,
    executor: str,
    dask: str | Any | None,
    on_done: Callable[[int, dict[str, Any]], None],
) -> list[dict[str, Any]]:
    """Run every job; results in job order. On failures, jobs not started are dropped and the
    error of the first failing job in job order is raised."""
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    if dask is not None:
        return _execute_dask(jobs, dask, on_done)
    if workers <= 1 or len(jobs) <= 1:
        for i, job in enumerate(jobs):
            results[i] = run_job(job)
            on_done(i, results[i])
        return results  # type: ignore[return-value]
    import concurrent.futures as cf

    if executor == "thread":
        pool: cf.Executor = cf.ThreadPoolExecutor(max_workers=workers)
    else:
        import multiprocessing

        # forkserver: workers start from a clean process, not a copy of one holding threads;
        # it imports numpy and this module once for all of them.
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["numpy", __name__])
        pool = cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=ctx,
            initializer=_exit_with,
            initargs=(os.getpid(),),
        )
    errors: dict[int, BaseException] = {}
    try:
        futures = {pool.submit(run_job, job): i for i, job in enumerate(jobs)}
        for fut in cf.as_completed(futures):
            i = futures[fut]
            if fut.cancelled():
                continue
            err = fut.exception()
            if err is not None:
                errors[i] = _job_error(jobs[i], err)
                pool.shutdown(wait=False, cancel_futures=True)
                continue
            results[i] = fut.result()
            on_done(i, results[i])
    finally:
        # On an error or Ctrl-C, jobs not started are dropped and running ones finish.
        pool.shutdown(wait=True, cancel_futures=True)
    if errors:
        raise errors[min(errors)]
    return results  # type: ignore[return-value]


def _execute_dask(jobs, dask, on_done) -> list[dict[str, Any]]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise CorpusError(
            "--dask needs the distributed package (pip install distributed)"
        ) from None
    own = not hasattr(dask, "submit")
    try:
        client = Client(dask) if own else dask
    except (OSError, TimeoutError) as e:
        raise CorpusError(f"cannot reach the Dask scheduler at {dask} ({e})") from None
    try:
        futures = [client.submit(run_job, job, pure=False) for job in jobs]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[dict[str, Any] | None] = [None] * len(jobs)
        errors: dict[int, BaseException] = {}
        for fut in as_completed(futures):
            i = index[fut.key]
            if fut.status == "error":
                errors[i] = _job_error(jobs[i], fut.exception())
                for f in futures:
                    if not f.done():
                        f.cancel()
                continue
            if fut.cancelled():
                continue
            results[i] = fut.result()
            on_done(i, results[i])
        if errors:
            raise errors[min(errors)]
        return results  # type: ignore[return-value]
    finally:
        if own:
            client.close()


# A worker process costs about a quarter of a CPU second to start (numpy, the tokenizer), what
# encoding 10 MB takes; the default count gives each at least this much input.
_BYTES_PER_DEFAULT_WORKER = 16 << 20


def _default_workers(total_bytes: int) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, min(cores, total_bytes // _BYTES_PER_DEFAULT_WORKER))


def _require_numpy() -> None:
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise CorpusError(
            "the corpus commands need numpy, which is not installed "
            "(pip install 'tokenprism[corpus]')"
        ) from None


def _prepare(
    inputs, tokenizer, *, docs, field, errors, add_special_tokens, append_eos, eos_token, shard_size
):
    if errors not in ERRORS_MODES:
        raise CorpusError(f"--errors must be one of {', '.join(ERRORS_MODES)}, not {errors!r}")
    _require_numpy()
    tok_path = os.fspath(tokenizer)
    try:
        sha = file_sha256(tok_path)
    except OSError as e:
        raise CorpusError(f"{tok_path}: {e.strerror or e}") from None
    tok = load_tokenizer(tok_path, sha)
    eos = eos_id(tok, eos_token) if append_eos else None
    sources, described, shards = plan(inputs, docs=docs, field=field, shard_size=shard_size)
    vocab = tok.get_vocab_size(with_added_tokens=True)
    dtype = "uint16" if vocab <= 1 << 16 else "uint32"
    options = {
        "docs": docs,
        "field": field,
        "errors": errors,
        "add_special_tokens": add_special_tokens,
        "append_eos": append_eos,
        "eos_id": eos,
        "shard_size": shard_size,
    }
    tok_info = {"file": os.path.basename(tok_path), "sha256": sha, "vocab_size": vocab}
    return tok_path, tok_info, dtype, options, sources, described, shards


def _jobs(tok_path, tok_info, dtype, options, sources, shards, out, threads):
    jobs = []
    for shard in shards:
        used = sorted({seg[0] for seg in shard["segments"]})
        jobs.append(
            {
                "name": shard["name"],
                "segments": [tuple(s) for s in shard["segments"]],
                "inputs": {i: sources[i].job() for i in used},
                "options": options,
                "tokenizer": os.path.abspath(tok_path),
                "tokenizer_name": tok_info["file"],
                "sha256": tok_info["sha256"],
                "eos_id": options["eos_id"],
                "dtype": dtype,
                "out": None if out is None else os.path.abspath(out),
                "threads": threads,
            }
        )
    return jobs


def _write_json_atomic(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _check_out_dir(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".probe.{os.getpid()}.tmp"
        with open(probe, "wb"):
            pass
        probe.unlink()
    except OSError as e:
        raise CorpusError(f"{out}: cannot write to the output folder ({e.strerror or e})") from None


def _same_job(old: dict[str, Any], new: dict[str, Any], with_mtime: bool) -> bool:
    def key(d: dict[str, Any]) -> Any:
        inputs = [
            {k: v for k, v in inp.items() if with_mtime or k != "mtime_ns"}
            for inp in d.get("inputs", [])
        ]
        shards = [s.get("segments") for s in d.get("shards", [])]
        return (
            d.get("format"),
            d.get("version"),
            d.get("tokenizer"),
            d.get("dtype"),
            d.get("options"),
            inputs,
            shards,
        )

    return key(old) == key(new)


def encode_files(
    inputs: Sequence[str | os.PathLike[str]],
    tokenizer: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    docs: str = "line",
    field: str = "text",
    errors: str = "strict",
    add_special_tokens: bool = False,
    append_eos: bool = False,
    eos_token: str | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    workers: int | None = None,
    executor: str = "auto",
    dask: str | Any | None = None,
    progress: bool | None = False,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Tokenize `inputs` into shards in `out` and return the index (also `out`/index.json).
    Resumes a stopped run of the same job in `out`. `dask`: a scheduler address or a
    distributed.Client; then the workers write the shards (`out` must be a path they share)."""
    if executor not in EXECUTORS:
        raise CorpusError(f"--executor must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    out_dir = Path(out)
    _check_out_dir(out_dir)
    tok_path, tok_info, dtype, options, sources, described, shards = _prepare(
        inputs,
        tokenizer,
        docs=docs,
        field=field,
        errors=errors,
        add_special_tokens=add_special_tokens,
        append_eos=append_eos,
        eos_token=eos_token,
        shard_size=shard_size,
    )
    planned = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "tokenizer": tok_info,
        "dtype": dtype,
        "options": options,
        "inputs": described,
        "shards": [
            {
                "ids": f"{s['name']}.ids.npy",
                "offsets": f"{s['name']}.offsets.npy",
                "segments": s["segments"],
                "bytes": s["bytes"],
            }
            for s in shards
        ],
    }
    for name, with_mtime in ((PLAN_NAME, True), (INDEX_NAME, False)):
        path = out_dir / name
        if path.is_file():
            try:
                old = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                old = {}
            if not _same_job(old, planned, with_mtime):
                raise CorpusError(
                    f"{out_dir}: holds the output of another job ({name} differs: inputs, "
                    "tokenizer or options); choose another --out folder or empty this one"
                )
    for pattern in (".shard-*.tmp", f".{PLAN_NAME}.*.tmp", f".{INDEX_NAME}.*.tmp"):
        for stale in out_dir.glob(pattern):
            stale.unlink(missing_ok=True)
    _write_json_atomic(out_dir / PLAN_NAME, planned)

    done: dict[int, dict[str, Any]] = {}
    for i, shard in enumerate(shards):
        found = _shard_done(out_dir, shard["name"], dtype)
        if found is not None:
            done[i] = {"name": shard["name"], "documents": found[0], "tokens": found[1]}
    if done and log:
        log(f"resuming: {len(done)} of {len(shards)} shards already written")
    todo = [i for i in range(len(shards)) if i not in done]
    all_jobs = _jobs(tok_path, tok_info, dtype, options, sources, shards, out_dir, 1)
    jobs = [all_jobs[i] for i in todo]
    todo_bytes = sum(shards[i]["bytes"] for i in todo)
    bar = Progress(todo_bytes, progress, "encode")
    try:
        results = _execute(
            jobs,
            workers=workers or _default_workers(todo_bytes),
            executor=_executor_for(executor, sources),
            dask=dask,
            on_done=lambda k, r: bar.update(shards[todo[k]]["bytes"], r["tokens"]),
        )
    finally:
        bar.close()
    for k, r in zip(todo, results):
        done[k] = r
    index = dict(planned)
    index["inputs"] = [{k: v for k, v in d.items() if k != "mtime_ns"} for d in described]
    index["shards"] = [
        {**planned["shards"][i], "documents": done[i]["documents"], "tokens": done[i]["tokens"]}
        for i in range(len(shards))
    ]
    index["documents"] = sum(s["documents"] for s in index["shards"])
    index["tokens"] = sum(s["tokens"] for s in index["shards"])
    _write_json_atomic(out_dir / INDEX_NAME, index)
    (out_dir / PLAN_NAME).unlink(missing_ok=True)
    return index


def _ratios(d: dict[str, Any]) -> dict[str, Any]:
    d["chars_per_token"] = d["chars"] / d["tokens"] if d["tokens"] else None
    d["tokens_per_word"] = d["tokens"] / d["words"] if d["words"] else None
    return d


def count_files(
    inputs: Sequence[str | os.PathLike[str]],
    tokenizer: str | os.PathLike[str],
    *,
    docs: str = "line",
    field: str = "text",
    errors: str = "strict",
    add_special_tokens: bool = False,
    append_eos: bool = False,
    eos_token: str | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    workers: int | None = None,
    executor: str = "auto",
    dask: str | Any | None = None,
    progress: bool | None = False,
) -> dict[str, Any]:
    """Documents, bytes (UTF-8 of the documents), chars, words (split on whitespace), tokens,
    chars per token and tokens per word: {"inputs": [one per input, in order], "total"}."""
    if executor not in EXECUTORS:
        raise CorpusError(f"--executor must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    tok_path, tok_info, dtype, options, sources, described, shards = _prepare(
        inputs,
        tokenizer,
        docs=docs,
        field=field,
        errors=errors,
        add_special_tokens=add_special_tokens,
        append_eos=append_eos,
        eos_token=eos_token,
        shard_size=shard_size,
    )
    jobs = _jobs(tok_path, tok_info, dtype, options, sources, shards, None, 1)
    total_bytes = sum(s["bytes"] for s in shards)
    bar = Progress(total_bytes, progress, "count")
    try:
        results = _execute(
            jobs,
            workers=workers or _default_workers(total_bytes),
            executor=_executor_for(executor, sources),
            dask=dask,
            on_done=lambda k, r: bar.update(shards[k]["bytes"], r["tokens"]),
        )
    finally:
        bar.close()
    keys = ("documents", "bytes", "chars", "words", "tokens", "skipped")
    per = [{"path": d["path"], **dict.fromkeys(keys, 0)} for d in described]
    for r in results:
        for seg in r["segments"]:
            for k in keys:
                per[seg["input"]][k] += seg[k]
    total = {"path": None, **{k: sum(p[k] for p in per) for k in keys}}
    return {
        "tokenizer": tok_info,
        "inputs": [_ratios(p) for p in per],
        "total": _ratios(total),
    }


def iter_documents(
    inputs: Iterable[str | os.PathLike[str]],
    *,
    docs: str = "line",
    field: str = "text",
    errors: str = "strict",
) -> Iterator[str]:
    """The documents of `inputs` in order, as encode_files reads them."""
    for path in inputs:
        src = _Source(path)
        if src.format == "parquet":
            _, ranges = _plan_parquet(src, field)
            segs = [(a, b) for a, b, _ in ranges]
        elif src.format == "text" and docs == "file":
            segs = _plan_file(src)[1]
        else:
            blank = src.format == "text" and docs == "blank-line"
            segs = _plan_lines(src, DEFAULT_SHARD_SIZE, blank)[1]
        opts = {"docs": docs, "field": field, "errors": errors}
        job = src.job()
        for a, b in segs:
            if not _by_chunks(job):
                yield from _parquet_docs(job, a, b, field)
                continue
            dec = _Decoder(job, errors)
            for at, chunk in _chunks(job, a, b, opts):
                yield from _chunk_docs(job, at, chunk, opts, dec)[0]
