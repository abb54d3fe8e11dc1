"""The corpus command and library (tokenprism.corpus, tokenprism.cli): every document's ids
against the references (tokenizers 0.23.3 for tokenizer.json files, tiktoken 0.14.0 for a
.tiktoken file) in input order, for each input format; the same output bytes with one or two
workers, threads, a Dask LocalCluster and a `dask scheduler` with two `dask worker`
processes; a run killed with SIGKILL and resumed; bad inputs' messages and exit codes.

The documents the references see are split here, from the format's definition (not by
tokenprism's reader), from small corpora made of the test data's own texts."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from paths import bert_json, bpe_dir, bpe_json, corpus, reference, require, tiktoken_module
from tokenprism import corpus as tpc
from tokenprism.cli import main as cli_main

TOKENIZERS = ("bert", "gpt2")
FORMATS = ("line", "blank-line", "file", "jsonl", "jsonl.gz", "parquet")
# Small shards, so that every corpus here spans several of them.
SHARD = 8 << 10
ASCII_SPACE = " \t\n\r\x0b\x0c"


def tokenizer_path(name: str) -> Path:
    if name == "bert":
        return bert_json()
    if name == "gpt2":
        return bpe_json("gpt2")
    return require(bpe_dir() / f"{name}.tiktoken")


class Reference:
    """ids of a list of documents from the reference of one tokenizer file."""

    def __init__(self, name: str):
        self.name = name
        if name in TOKENIZERS:
            self.tok = reference().Tokenizer.from_file(str(tokenizer_path(name)))
            self.tok.no_padding()
            self.tok.no_truncation()
        else:
            self.enc = tiktoken_module().get_encoding(name)

    def ids(self, docs: list[str], add_special_tokens: bool = False) -> list[list[int]]:
        if self.name in TOKENIZERS:
            encs = self.tok.encode_batch(docs, add_special_tokens=add_special_tokens)
            return [e.ids for e in encs]
        return [self.enc.encode_ordinary(d) for d in docs]

    def token_id(self, token: str) -> int:
        if self.name in TOKENIZERS:
            return self.tok.token_to_id(token)
        return self.enc.encode_single_token(token)


@pytest.fixture(scope="module")
def references():
    cache: dict[str, Reference] = {}

    def get(name: str) -> Reference:
        if name not in cache:
            cache[name] = Reference(name)
        return cache[name]

    return get


def sample_lines() -> list[str]:
    """About 600 lines of several scripts, some empty, some blank, some long."""
    lines: list[str] = []
    for lang, n in (("en", 260), ("ru", 120), ("zh", 60), ("el", 60), ("code", 100)):
        text = corpus(lang).read_text(encoding="utf-8")
        start = len(text) // 4
        lines += text[start:].split("\n")[1 : n + 1]
    lines += ["", "   ", "\t", "x" * 3000, "ünïcödé 😀 ok", "a\u3000b"]
    # A fixed shuffle: scripts interleave, blank lines fall everywhere.
    order = sorted(range(len(lines)), key=lambda i: (i * 7919) % len(lines))
    return [lines[i] for i in order]


def line_docs(text: str) -> list[str]:
    out = []
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        if line:
            out.append(line)
    return out


def blank_line_docs(text: str) -> list[str]:
    docs, run = [], []
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        if line.strip(ASCII_SPACE):
            run.append(line)
        elif run:
            docs.append("\n".join(run))
            run = []
    if run:
        docs.append("\n".join(run))
    return docs


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> dict[str, tuple[list[Path], list[str], dict]]:
    """format -> (input files, the documents in order, options)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path_factory.mktemp("corpora")
    lines = sample_lines()
    out: dict[str, tuple[list[Path], list[str], dict]] = {}

    text = "\n".join(lines[:300]) + "\r\n" + "\r\n".join(lines[300:]) + "\n"
    a, b = root / "a.txt", root / "b.txt"
    a.write_text(text, encoding="utf-8", newline="")
    b.write_text("\n".join(lines[::3]), encoding="utf-8")
    docs = line_docs(text) + line_docs("\n".join(lines[::3]))
    out["line"] = ([a, b], docs, {"docs": "line"})

    paras = "\n".join(lines) + "\n\n\n"
    c = root / "paras.txt"
    c.write_text(paras, encoding="utf-8")
    out["blank-line"] = (
        [c, b],
        blank_line_docs(paras) + blank_line_docs(b.read_text()),
        {"docs": "blank-line"},
    )

    files, docs = [], []
    for i in range(12):
        p = root / f"doc{i:02d}.txt"
        body = "\n".join(lines[i * 40 : i * 40 + 40 + i * 7]) + ("\n" if i % 2 else "")
        p.write_text(body, encoding="utf-8")
        files.append(p)
        docs.append(body)
    out["file"] = (files, docs, {"docs": "file"})

    records = [{"id": i, "text": t, "meta": {"n": i}} for i, t in enumerate(lines) if i % 5]
    j = root / "a.jsonl"
    j.write_text(
        "".join(json.dumps(r, ensure_ascii=bool(r["id"] % 2)) + "\n" for r in records[:400]) + "\n",
        encoding="utf-8",
    )
    j2 = root / "b.jsonl"
    j2.write_text("".join(json.dumps(r) + "\n" for r in records[400:]), encoding="utf-8")
    out["jsonl"] = ([j, j2], [r["text"] for r in records], {"field": "text"})

    g = root / "c.jsonl.gz"
    with gzip.open(g, "wt", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps({"body": r["text"]}) + "\n")
    out["jsonl.gz"] = ([g], [r["text"] for r in records], {"field": "body"})

    pqs, docs = [], []
    for k, chunk in enumerate((lines[:250], lines[250:])):
        p = root / f"part{k}.parquet"
        table = pa.table({"n": list(range(len(chunk))), "content": chunk})
        pq.write_table(table, p, row_group_size=60)
        pqs.append(p)
        docs += chunk
    out["parquet"] = (pqs, docs, {"field": "content"})
    return out


def read_shards(out: Path) -> tuple[dict, list[list[int]]]:
    index = json.loads((out / "index.json").read_text())
    docs: list[list[int]] = []
    for shard in index["shards"]:
        ids = np.load(out / shard["ids"])
        offs = np.load(out / shard["offsets"])
        assert ids.dtype == np.dtype(index["dtype"]) and offs.dtype == np.int64
        assert offs[0] == 0 and offs[-1] == len(ids) == shard["tokens"]
        assert len(offs) - 1 == shard["documents"]
        docs += [ids[offs[i] : offs[i + 1]].tolist() for i in range(len(offs) - 1)]
    return index, docs


def tree_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", TOKENIZERS)
def test_ids_equal_the_reference(name, fmt, corpora, references, tmp_path):
    files, docs, opts = corpora[fmt]
    index = tpc.encode_files(
        files, tokenizer_path(name), tmp_path, shard_size=SHARD, workers=1, **opts
    )
    assert len(index["shards"]) >= 2
    assert [i["path"] for i in index["inputs"]] == [str(f) for f in files]
    assert index["tokenizer"]["file"] == "tokenizer.json"
    assert index["dtype"] == "uint16"
    got_index, got = read_shards(tmp_path)
    assert got_index == index
    want = references(name).ids(docs)
    assert len(got) == len(want) == index["documents"]
    assert got == want


def test_special_tokens_and_eos(corpora, references, tmp_path):
    files, docs, opts = corpora["jsonl"]
    ref = references("bert")
    tpc.encode_files(
        files,
        tokenizer_path("bert"),
        tmp_path / "a",
        shard_size=SHARD,
        workers=1,
        add_special_tokens=True,
        append_eos=True,
        **opts,
    )
    sep = ref.token_id("[SEP]")
    assert read_shards(tmp_path / "a")[1] == [ids + [sep] for ids in ref.ids(docs, True)]

    gpt2 = references("gpt2")
    eot = gpt2.token_id("<|endoftext|>")
    tpc.encode_files(
        files,
        tokenizer_path("gpt2"),
        tmp_path / "b",
        shard_size=SHARD,
        workers=1,
        append_eos=True,
        **opts,
    )
    assert read_shards(tmp_path / "b")[1] == [ids + [eot] for ids in gpt2.ids(docs)]


def test_tiktoken_file_uint32(corpora, references, tmp_path):
    files, docs, opts = corpora["line"]
    ref = references("o200k_base")
    index = tpc.encode_files(
        files,
        tokenizer_path("o200k_base"),
        tmp_path,
        shard_size=SHARD,
        workers=2,
        executor="thread",
        append_eos=True,
        eos_token="<|endoftext|>",
        **opts,
    )
    assert index["dtype"] == "uint32"
    eot = ref.token_id("<|endoftext|>")
    assert read_shards(tmp_path)[1] == [ids + [eot] for ids in ref.ids(docs)]


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tokenprism.cli", *args],
        capture_output=True,
        text=True,
        **kwargs,
    )


def encode_args(files, out, name="bert") -> list[str]:
    return [
        "encode",
        "--tokenizer",
        str(tokenizer_path(name)),
        "--out",
        str(out),
        "--shard-size",
        str(SHARD),
        *map(str, files),
    ]


@pytest.fixture(scope="module")
def one_worker_run(corpora, tmp_path_factory) -> tuple[list[Path], dict[str, bytes]]:
    """The reference bytes: the command with one worker on text and JSON lines inputs."""
    files = corpora["line"][0] + corpora["jsonl"][0]
    out = tmp_path_factory.mktemp("one") / "out"
    r = cli(*encode_args(files, out), "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "documents" in r.stdout
    assert r.stderr == "", "no progress bar when stderr is not a terminal"
    return files, tree_bytes(out)


def test_same_bytes_with_two_workers(one_worker_run, tmp_path):
    files, want = one_worker_run
    r = cli(*encode_args(files, tmp_path / "p"), "--workers", "2", "--executor", "process", "-q")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert tree_bytes(tmp_path / "p") == want
    runner = CliRunner()
    # The default for text by lines and JSONL: threads.
    res = runner.invoke(cli_main, encode_args(files, tmp_path / "t") + ["--workers", "2"])
    assert res.exit_code == 0, res.output
    assert tree_bytes(tmp_path / "t") == want


def test_auto_executor(corpora):
    def sources(fmt):
        return [tpc._Source(p) for p in corpora[fmt][0]]

    assert tpc._executor_for("auto", sources("line") + sources("jsonl.gz")) == "thread"
    assert tpc._executor_for("auto", sources("line") + sources("parquet")) == "process"
    assert tpc._executor_for("process", sources("line")) == "process"


def test_same_bytes_on_a_dask_local_cluster(one_worker_run, tmp_path):
    from distributed import Client, LocalCluster

    files, want = one_worker_run
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        tpc.encode_files(
            files, tokenizer_path("bert"), tmp_path / "d", shard_size=SHARD, dask=client
        )
    assert tree_bytes(tmp_path / "d") == want


def test_same_bytes_on_dask_scheduler_and_workers(one_worker_run, tmp_path):
    files, want = one_worker_run
    dask = Path(sys.executable).with_name("dask")
    sched_file = tmp_path / "scheduler.json"
    procs = [
        subprocess.Popen(
            [
                str(dask),
                "scheduler",
                "--scheduler-file",
                str(sched_file),
                "--port",
                "0",
                "--no-dashboard",
                "--host",
                "127.0.0.1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + 30
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [str(dask), "worker", address, "--nthreads", "1", "--no-dashboard"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        from distributed import Client

        with Client(address) as client:
            client.wait_for_workers(2, timeout=60)
        r = cli(*encode_args(files, tmp_path / "d"), "--dask", address, timeout=120)
        assert r.returncode == 0, r.stderr
        assert tree_bytes(tmp_path / "d") == want
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.mark.parametrize("executor", ["process", "thread"])
def test_killed_run_resumes_to_the_same_bytes(executor, corpora, tmp_path):
    files = corpora["line"][0] + corpora["jsonl"][0]

    def args(out: Path) -> list[str]:
        a = encode_args(files, out, "gpt2")
        a[a.index("--shard-size") + 1] = "2K"
        return a

    r = cli(*args(tmp_path / "full"), "--workers", "1")
    assert r.returncode == 0, r.stderr
    want = tree_bytes(tmp_path / "full")
    total = sum(1 for n in want if n.endswith(".offsets.npy"))

    proc = subprocess.Popen(
        [sys.executable, "-m", "tokenprism.cli", *args(tmp_path / "k"), "--workers", "2"]
        + ["--executor", executor],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out = tmp_path / "k"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.is_dir() and len(list(out.glob("*.offsets.npy"))) >= 3:
            break
        time.sleep(0.002)
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert workers or executor == "thread", "the run has no worker processes"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # The workers end on their own once the command is gone.
    _, alive = psutil.wait_procs(workers, timeout=15)
    assert not alive
    done = len(list(out.glob("*.offsets.npy")))
    assert not (out / "index.json").exists(), "the run ended before it could be killed"
    assert 3 <= done < total
    assert (out / "plan.json").exists()

    r = cli(*args(out), "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert f"resuming: {done} of {total} shards" in r.stderr
    assert tree_bytes(out) == want


def test_count(corpora, references):
    files, docs, opts = corpora["jsonl"]
    res = CliRunner().invoke(
        cli_main,
        [
            "count",
            "--tokenizer",
            str(tokenizer_path("gpt2")),
            "--json",
            "--field",
            "text",
            "--shard-size",
            str(SHARD),
            "--workers",
            "1",
            *map(str, files),
        ],
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    ref = references("gpt2")
    parts = (docs[:400], docs[400:])
    for entry, part, f in zip(got["inputs"], parts, files):
        tokens = sum(len(ids) for ids in ref.ids(part))
        assert entry["path"] == str(f)
        assert entry["documents"] == len(part)
        assert entry["tokens"] == tokens
        assert entry["bytes"] == sum(len(d.encode()) for d in part)
        assert entry["chars_per_token"] == pytest.approx(sum(map(len, part)) / tokens)
        assert entry["tokens_per_word"] == pytest.approx(tokens / sum(len(d.split()) for d in part))
    assert got["total"]["tokens"] == sum(e["tokens"] for e in got["inputs"])
    assert tpc.count_files(files, tokenizer_path("gpt2"), workers=1, **opts) == got
    table = CliRunner().invoke(
        cli_main, ["count", "--tokenizer", str(tokenizer_path("gpt2")), *map(str, files)]
    )
    assert table.exit_code == 0
    assert table.output.splitlines()[-1].split()[:4] == [
        "total",
        str(got["total"]["documents"]),
        str(got["total"]["bytes"]),
        str(got["total"]["tokens"]),
    ]


def test_explain(references):
    text = "Héllo, Wörld! 東京"
    res = CliRunner().invoke(cli_main, ["explain", "--tokenizer", str(bert_json()), text])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    names = [line.split()[0] for line in lines]
    assert names[:6] == ["raw", "clean", "cjk", "nfd", "strip_accents", "lowercase"]
    assert "bert_pre_tokenizer" in names
    ref = references("bert").tok.encode(text)
    assert lines[-2] == f"{'tokens':<20} {ref.tokens!r}"
    assert lines[-1] == f"{'ids':<20} {ref.ids!r}"


# ------------------------------------------------------------------------------ bad input


def fails(args: list[str], *messages: str) -> None:
    res = CliRunner().invoke(cli_main, args)
    assert res.exit_code != 0, res.output
    for m in messages:
        assert m in res.output, res.output


def test_invalid_utf8(tmp_path, references):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good line\nsecond \xff\xfe line\nthird\n")
    tok = str(bert_json())
    fails(
        ["encode", "--tokenizer", tok, "--out", str(tmp_path / "o"), str(bad)],
        f"{bad}:2: invalid UTF-8",
    )
    big = tmp_path / "big.jsonl"
    rows = [json.dumps({"text": f"row {i}"}).encode() for i in range(3000)]
    rows[2500] = b'{"text": "caf\xe9"}'
    big.write_bytes(b"\n".join(rows) + b"\n")
    fails(
        ["count", "--tokenizer", tok, "--shard-size", "4K", "--workers", "1", str(big)],
        f"{big}:2501: invalid UTF-8",
    )
    paras = tmp_path / "paras.txt"
    rows = [f"para {i}\r\nline two\n".encode() for i in range(3000)]
    rows[2500] = b"para\nline \xe9 two\n"
    paras.write_bytes(b"\n".join(rows))
    for size in ("4K", "64M"):
        fails(
            ["count", "--tokenizer", tok, "--docs", "blank-line", "--shard-size", size, str(paras)],
            f"{paras}:{2500 * 3 + 2}: invalid UTF-8",
        )
    for errors, docs in (
        ("skip", ["good line", "third"]),
        ("replace", ["good line", "second \ufffd\ufffd line", "third"]),
    ):
        out = tmp_path / errors
        res = CliRunner().invoke(
            cli_main,
            ["encode", "--tokenizer", tok, "--out", str(out), "--errors", errors, str(bad)],
        )
        assert res.exit_code == 0, res.output
        assert read_shards(out)[1] == references("bert").ids(docs)


def test_bad_json_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"text": "a"}\n\n{"text": "b",}\n', encoding="utf-8")
    fails(["count", "--tokenizer", str(bert_json()), str(p)], f"{p}:3: not valid JSON")


def test_missing_field(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf-8")
    fails(["count", "--tokenizer", str(bert_json()), str(p)], f"{p}:2: no field 'text'")
    p.write_text('{"text": "a"}\n{"text": 3}\n', encoding="utf-8")
    fails(["count", "--tokenizer", str(bert_json()), str(p)], f"{p}:2: field 'text' is a int")


def test_missing_column(corpora):
    p = corpora["parquet"][0][0]
    fails(
        ["count", "--tokenizer", str(bert_json()), "--field", "text", str(p)],
        f"{p}: no column 'text' (columns: n, content)",
    )


def test_empty_file(tmp_path):
    for name in ("e.txt", "e.jsonl"):
        p = tmp_path / name
        p.write_bytes(b"")
        fails(["count", "--tokenizer", str(bert_json()), str(p)], f"{p}: empty file")
    g = tmp_path / "e.jsonl.gz"
    with gzip.open(g, "wb"):
        pass
    fails(["count", "--tokenizer", str(bert_json()), str(g)], f"{g}: empty file")


def test_unwritable_output(tmp_path, corpora):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    out = blocker / "out"
    fails(
        ["encode", "--tokenizer", str(bert_json()), "--out", str(out), str(corpora["line"][0][0])],
        f"{out}: cannot write to the output folder",
    )


def test_another_job_in_the_output(tmp_path, corpora):
    files = corpora["line"][0]
    tpc.encode_files(files, bert_json(), tmp_path, workers=1, shard_size=SHARD)
    with pytest.raises(tpc.CorpusError, match="holds the output of another job"):
        tpc.encode_files(files, bpe_json("gpt2"), tmp_path, workers=1, shard_size=SHARD)


def test_parquet_without_pyarrow(corpora, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    p = corpora["parquet"][0][0]
    fails(
        ["count", "--tokenizer", str(bert_json()), "--field", "content", str(p)],
        "reading Parquet files needs pyarrow, which is not installed",
    )


def test_unreachable_dask_scheduler(tmp_path, corpora):
    import dask
    import distributed  # noqa: F401

    # With distributed's defaults loaded first: setting a key under a section that does not
    # exist yet deletes the whole section on exit, and later clusters in this process fail.
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        fails(
            [
                "encode",
                "--tokenizer",
                str(bert_json()),
                "--out",
                str(tmp_path),
                "--dask",
                "tcp://127.0.0.1:1",
                str(corpora["line"][0][0]),
            ],
            "cannot reach the Dask scheduler at tcp://127.0.0.1:1",
        )


def test_console_script_is_declared():
    from importlib.metadata import entry_points

    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts.get("tokenprism") == "tokenprism.cli:main"


def test_without_numpy(corpora, monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)
    fails(
        ["count", "--tokenizer", str(bert_json()), str(corpora["line"][0][0])],
        "the corpus commands need numpy, which is not installed",
    )


# ---------------------------------------------------------------- blocks of lines read in Rust


def python_reading(block: bytes, mode: str, field: str | None):
    """The documents of a block of lines by the formats' definitions (Python's UTF-8 decoder,
    `json.loads`, `str.split`), or None where a line breaks them (or a document is not
    Unicode text) and the command must read the block line by line to say where."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if field is None:
        return {
            "line": line_docs,
            "blank-line": blank_line_docs,
            "file": lambda t: [t] if t else [],
        }[mode](text)
    docs = []
    for line in text.split("\n"):
        if not line.strip(ASCII_SPACE):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get(field), str):
            return None
        docs.append(obj[field])
    try:
        for d in docs:
            d.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return docs


TEXTS = st.text(
    st.one_of(
        st.sampled_from(list(' \t\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000\u200b\ufeff"\\/é')),
        st.characters(codec="utf-8"),
    ),
    max_size=12,
)
JSON_LINES = st.one_of(
    st.builds(lambda s, a: json.dumps({"id": 1, "text": s}, ensure_ascii=a), TEXTS, st.booleans()),
    st.builds(lambda s: json.dumps({"meta": {"text": 1}, "text": s, "n": [1.5, None]}), TEXTS),
    # A repeated key: the last one counts.
    st.builds(lambda a, b: f'{{"text": {json.dumps(a)}, "text": {json.dumps(b)}}}', TEXTS, TEXTS),
    st.builds(lambda a: f'{{"text": 3, "text": {json.dumps(a)}}}', TEXTS),
    st.sampled_from(
        [
            "",
            " \t\x0b\x0c",
            "\r",
            ' {"text": "padded"}\r',
            '{"text": "a",}',
            '{"text": 3}',
            '{"body": "b"}',
            "[1]",
            '"text"',
            '{"text": "\\ud800"}',
            '{"text": "\\ud83d\\ude00 pair"}',
            '{"text": "tab\tinside"}',
            '{"text": NaN}',
            '{"text": "x"} {}',
            "\x0c{}",
        ]
    ),
)


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["line", "blank-line", "file", "jsonl"]),
    st.lists(st.one_of(TEXTS, JSON_LINES), max_size=12),
    st.sampled_from([None, 102]),
    st.booleans(),
    st.one_of(st.none(), st.binary(max_size=3)),
)
def test_blocks_read_in_rust_as_python_reads_them(mode, lines, eos, special, junk):
    """`Tokenizer._encode_lines`, the command's reader of clean blocks, against the formats'
    definitions: the same documents (ids from tokenizers 0.23.3), bytes, chars and
    `str.split()` words, and None wherever Python's reading fails."""
    field = "text" if mode == "jsonl" else None
    mode = "line" if mode == "jsonl" else mode
    block = "\n".join(lines).encode("utf-8", "surrogatepass")
    if junk is not None:
        block += junk
    ref = Reference("bert")
    tok = tpc.load_tokenizer(bert_json())
    got = tok._encode_lines(block, mode, field, special, eos, True, 2)
    docs = python_reading(block, mode, field)
    if docs is None:
        assert got is None
        return
    assert got is not None, (block, docs)
    ids, offsets, nbytes, nchars, nwords = got
    want = ref.ids(docs, add_special_tokens=special)
    if eos is not None:
        want = [w + [eos] for w in want]
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    assert offsets[0] == 0 and offsets[-1] == len(ids) and len(offsets) == len(docs) + 1
    assert nbytes == sum(len(d.encode("utf-8")) for d in docs)
    assert nchars == sum(map(len, docs))
    assert nwords == sum(len(d.split()) for d in docs)


def test_words_split_on_python_whitespace():
    """Every code point between two letters: one word or two, as `str.split()` says."""
    tok = tpc.load_tokenizer(bert_json())
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for k in range(0, len(chars), 50_000):
        docs = [f"a{c}b" for c in chars[k : k + 50_000]]
        block = "\n".join(json.dumps({"text": d}) for d in docs).encode()
        got = tok._encode_lines(block, "line", "text", False, None, True, 1)
        assert got is not None
        assert got[4] == sum(len(d.split()) for d in docs), k
