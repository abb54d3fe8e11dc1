"""Where the tests find their data, and the two tokenizers they compare.

The data is fetched and built by `./build.sh setup` (never committed):

    <data>/bert-base-uncased/tokenizer.json, vocab.txt
    <data>/corpora/<CORPORA>.txt                     (scripts/data/corpora.py)
    <data>/unigram/{t5,xlmr,bytes}/{spm.model,tokenizer.json}, <data>/unigram/mon/tokenizer.json,
    <data>/sentencepiece/*.model                     (scripts/data/unigram_data.py)
    <data>/bpe/*.tiktoken, <data>/bpe/{gpt2,qwen3,llama3.2,deepseek-v4}/tokenizer.json,
    <data>/bpe/tekken/*.json                         (scripts/data/bpe_data.sh)

<data> is $TOKENPRISM_DATA, else ~/.cache/tokenprism/data. A missing file fails the test (it is
never skipped): a parity suite that silently skips proves nothing.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

# The repository (this file is tests/paths.py).
ROOT = Path(__file__).resolve().parent.parent


def _corpus_names() -> tuple[str, ...]:
    # Read from the script that builds them, by path: scripts import this file with only tests/
    # on their path.
    spec = importlib.util.spec_from_file_location("corpora", ROOT / "scripts/data/corpora.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LANGS


# en, ru, el, ar, zh, code, then ja, ko, hi, th, he and chat (the chat-template markers).
CORPORA = _corpus_names()


def data_dir() -> Path:
    return Path(os.environ.get("TOKENPRISM_DATA") or os.path.expanduser("~/.cache/tokenprism/data"))


def require(path: Path) -> Path:
    """`path` if it exists, else fail the calling test with instructions."""
    if not path.is_file():
        pytest.fail(
            f"test data missing: {path} does not exist. Run ./build.sh setup to fetch the "
            f"tokenizer files and build the corpora (data dir: $TOKENPRISM_DATA or "
            f"~/.cache/tokenprism/data).",
            pytrace=False,
        )
    return path


def bert_dir() -> Path:
    return data_dir() / "bert-base-uncased"


def bert_json() -> Path:
    return require(bert_dir() / "tokenizer.json")


def bert_vocab() -> Path:
    return require(bert_dir() / "vocab.txt")


def corpus(lang: str) -> Path:
    if lang not in CORPORA:
        raise ValueError(f"unknown corpus {lang!r}")
    return require(data_dir() / "corpora" / f"{lang}.txt")


def reference():
    """The oracle module, tokenizers==0.23.3 exactly (the ids models were trained on)."""
    import tokenizers  # an ImportError fails the test: the reference is required

    if tokenizers.__version__ != "0.23.3":
        pytest.fail(
            f"the parity reference must be tokenizers==0.23.3, found {tokenizers.__version__}"
            " (pip install tokenizers==0.23.3)",
            pytrace=False,
        )
    return tokenizers


def bpe_dir() -> Path:
    """The byte-level BPE files (scripts/data/bpe_data.sh): *.tiktoken and the folders of
    BPE_JSON_FILES."""
    return data_dir() / "bpe"


# The byte-level BPE tokenizer.json files (scripts/data/bpe_data.sh), each <bpe_dir>/<name>/.
BPE_JSON_FILES = ("gpt2", "qwen3", "llama3.2", "deepseek-v4")


def bpe_json(name: str) -> Path:
    if name not in BPE_JSON_FILES:
        raise ValueError(f"unknown byte-level BPE file {name!r}")
    return require(bpe_dir() / name / "tokenizer.json")


# Mistral's tekken files (scripts/data/bpe_data.sh, from mistral-common 1.13.1's wheel).
TEKKEN_FILES = ("tekken_240718", "tekken_240911")


def tekken_json(name: str) -> Path:
    if name not in TEKKEN_FILES:
        raise ValueError(f"unknown tekken file {name!r}")
    return require(bpe_dir() / "tekken" / f"{name}.json")


class TekkenOracle:
    """mistral-common 1.13.1's Tekkenizer on one tekken file, in its own venv (which
    scripts/data/bpe_data.sh makes): a process that tests/tekken_oracle.py runs. Answers are
    remembered by text, as each test asks about a text more than once."""

    def __init__(self, path: Path):
        import subprocess

        cache = Path(
            os.environ.get("TOKENPRISM_CACHE") or os.path.expanduser("~/.cache/tokenprism")
        )
        python = require(cache / "venv-mistral-common" / "bin" / "python")
        self.proc = subprocess.Popen(
            [str(python), str(ROOT / "tests" / "tekken_oracle.py"), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.info = self.ask({"op": "info"})
        if self.info["version"] != "1.13.1":
            pytest.fail(f"the Tekken reference must be mistral-common 1.13.1, found {self.info}")
        self.last: tuple[str, dict] | None = None

    def ask(self, req: dict) -> dict:
        import json

        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def encode(self, text: str) -> dict:
        """encode(text) without and with bos and eos, and decode of the latter (see
        tests/tekken_oracle.py)."""
        if self.last is None or self.last[0] != text:
            self.last = (text, self.ask({"op": "encode", "text": text}))
        return self.last[1]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def tiktoken_module():
    """The byte-level BPE oracle, tiktoken==0.14.0, reading its files from bpe_dir() (offline)."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(bpe_dir() / "tiktoken-cache")
    import tiktoken

    if tiktoken.__version__ != "0.14.0":
        pytest.fail(
            f"the reference must be tiktoken==0.14.0, found {tiktoken.__version__}", pytrace=False
        )
    return tiktoken


def bert_pair(*, keep_file_settings: bool = False):
    """(ours, reference) for bert-base-uncased; truncation and padding off unless kept."""
    import tokenprism

    path = bert_json()
    ours = tokenprism.Tokenizer.from_file(str(path))
    ref = reference().Tokenizer.from_file(str(path))
    if not keep_file_settings:
        for t in (ours, ref):
            t.no_truncation()
            t.no_padding()
    return ours, ref


# The SentencePiece Unigram files (scripts/data/unigram_data.py): three trained and converted
# here, with SentencePiece's own model beside each, and the one mon-tokenizer ships.
UNIGRAM_TRAINED = ("t5", "xlmr", "bytes")
UNIGRAM_FILES = (*UNIGRAM_TRAINED, "mon")


def unigram_json(name: str) -> Path:
    if name not in UNIGRAM_FILES:
        raise ValueError(f"unknown Unigram file {name!r}")
    return require(data_dir() / "unigram" / name / "tokenizer.json")


def unigram_spm(name: str) -> Path:
    if name not in UNIGRAM_TRAINED:
        raise ValueError(f"no SentencePiece model for {name!r}")
    return require(data_dir() / "unigram" / name / "spm.model")


# SentencePiece models read as they are: the Unigram models beside the converted files, the
# models trained for this alone, and Mistral's (scripts/data/unigram_data.py, SPM_MODELS and
# MISTRAL_MEMBERS there).
SPM_MODELS = (
    *UNIGRAM_TRAINED,
    "unigram-user",
    "bpe",
    "bpe-bytes",
    "bpe-code",
    "bpe-suffix",
    "mistral-v1",
    "mistral-v2",
    "mistral-v3",
    "mistral-v7",
)


def spm_model(name: str) -> Path:
    if name in UNIGRAM_TRAINED:
        return unigram_spm(name)
    if name not in SPM_MODELS:
        raise ValueError(f"unknown SentencePiece model {name!r}")
    return require(data_dir() / "sentencepiece" / f"{name}.model")


# Debian's Chromium, for the Playwright tests (browser and dist).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Debian's Chromium samples allocations in some renderers (a heap profiler, GWP-ASan) and
    # takes each sampled allocation's stack by walking frame pointers up to the end of the
    # thread's stack. Pyodide runs on wasm stacks of its own (JSPI) on the main thread: there
    # the walk runs past the small wasm stack into its guard page and the renderer dies
    # (SIGSEGV, "Target crashed"), at random, a few times a suite. Every crash dump of the
    # tests had that one instruction and a renderer with one of these on.
    "--disable-features=HeapProfilerReporting,GwpAsanMalloc,GwpAsanPartitionAlloc",
]
# Extra flags for a debugging run, e.g. TOKENPRISM_CHROMIUM_ARGS="--enable-logging=stderr --v=0"
# (with DEBUG=pw:browser Playwright copies the browser's stderr to the test run's stderr).
CHROMIUM_ARGS += os.environ.get("TOKENPRISM_CHROMIUM_ARGS", "").split()
