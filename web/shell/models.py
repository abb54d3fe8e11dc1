"""The models the page offers, grouped by family: which file each one is, how the tokenizer
worker reads it and which wasm module runs it.

Pure Python with no browser imports: share links (shell/link.py) name a model by its id, and
pytest checks the catalogue against dist/ and the references.

Kinds (what the file is): "json" a tokenizer.json or Mistral tekken.json (text), "model" a
SentencePiece .model (bytes), "tiktoken" a .tiktoken rank file of the encoding `encoding`
(bytes). Modules: "bert" the BERT core the page starts with (it falls back to the general
module for a file it refuses), "general" the module for every other pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from shell.dom import Node, el

# The file with the sizes of the model files (bytes), written by build.sh into dist/.
SIZES_FILE = "data/model-sizes.json"


@dataclass(frozen=True)
class Model:
    id: str
    family: str
    label: str
    path: str  # relative to the site's root
    kind: str = "json"
    module: str = "general"
    encoding: str | None = None  # the tiktoken encoding of a .tiktoken file

    def request(self) -> dict:
        """The tokenizer worker's load request for this model (tabs/tokenize/worker.js)."""
        out = {"kind": self.kind, "url": self.path, "module": self.module, "model": self.id}
        if self.encoding is not None:
            out["name"] = self.encoding
        return out


def _tiktoken(encoding: str, file: str | None = None) -> Model:
    file = file or encoding
    return Model(
        encoding, "OpenAI", encoding, f"data/bpe/{file}.tiktoken", "tiktoken", encoding=encoding
    )


MODELS: tuple[Model, ...] = (
    Model(
        "bert-base-uncased",
        "BERT family",
        "bert-base-uncased (WordPiece)",
        "data/bert-base-uncased/tokenizer.json",
        module="bert",
    ),
    Model("gpt2", "OpenAI", "gpt2", "data/bpe/gpt2/tokenizer.json"),
    _tiktoken("r50k_base"),
    _tiktoken("p50k_base"),
    _tiktoken("cl100k_base"),
    _tiktoken("o200k_base"),
    # harmony is o200k_base's ranks with its own special tokens.
    _tiktoken("o200k_harmony", "o200k_base"),
    Model("llama3.2", "Llama", "Llama 3.2", "data/models/llama3.2/tokenizer.json"),
    Model("deepseek-v4", "DeepSeek", "DeepSeek V4", "data/models/deepseek-v4/tokenizer.json"),
    Model(
        "mistral-v1",
        "Mistral",
        "Mistral v1 (SentencePiece BPE)",
        "data/models/mistral/mistral-v1.model",
        "model",
    ),
    Model(
        "mistral-v3",
        "Mistral",
        "Mistral v3 (SentencePiece BPE)",
        "data/models/mistral/mistral-v3.model",
        "model",
    ),
    Model(
        "mistral-v7",
        "Mistral",
        "Mistral v7 (SentencePiece BPE)",
        "data/models/mistral/mistral-v7.model",
        "model",
    ),
    Model("tekken-240718", "Mistral", "Tekken 240718", "data/models/mistral/tekken_240718.json"),
    Model("qwen3", "Qwen", "Qwen3", "data/bpe/qwen3/tokenizer.json"),
    Model(
        "unigram-t5",
        "Unigram (T5 / XLM-R style)",
        "T5-style Unigram (Precompiled, Metaspace)",
        "data/models/unigram/t5/tokenizer.json",
    ),
    Model(
        "unigram-xlmr",
        "Unigram (T5 / XLM-R style)",
        "XLM-R-style Unigram",
        "data/models/unigram/xlmr/tokenizer.json",
    ),
    Model(
        "unigram-mon",
        "Unigram with byte fallback",
        "Mon (Unigram, byte fallback)",
        "data/models/unigram/mon/tokenizer.json",
    ),
)

BY_ID = {m.id: m for m in MODELS}
DEFAULT = "bert-base-uncased"


def families() -> list[tuple[str, list[Model]]]:
    """The models by family, in catalogue order (the picker's option groups)."""
    out: dict[str, list[Model]] = {}
    for m in MODELS:
        out.setdefault(m.family, []).append(m)
    return list(out.items())


def size_label(size: int | None) -> str:
    """A file size as the picker shows it.

    >>> size_label(9_085_825), size_label(466_247), size_label(None)
    ('9.1 MB', '466 KB', '')
    """
    if size is None:
        return ""
    if size >= 1_000_000:
        return f"{size / 1e6:.1f} MB"
    return f"{round(size / 1e3)} KB"


def option_text(model: Model, sizes: dict) -> str:
    """The picker's text for `model`: its label and its file's size when known."""
    size = size_label(sizes.get(model.path))
    return f"{model.label} · {size}" if size else model.label


def render_picker(sizes: dict, custom: str | None = None) -> list[Node]:
    """The picker's options: one group per family, and the visitor's file (`custom`: its
    label) when one is open.

    >>> [g.attrs["label"] for g in render_picker({})][:2]
    ['BERT family', 'OpenAI']
    """
    groups = [
        el(
            "optgroup",
            {"label": family},
            *(el("option", {"value": m.id}, option_text(m, sizes)) for m in group),
        )
        for family, group in families()
    ]
    if custom is not None:
        groups.append(
            el(
                "optgroup",
                {"label": "Your file"},
                el("option", {"value": "custom", "data-custom": "1"}, custom),
            )
        )
    return groups


def file_request(name: str) -> dict:
    """How the worker reads a visitor's file called `name` (contents aside): a vocab.txt, a
    SentencePiece .model, a .tiktoken file (of the encoding its stem names) or a JSON file.

    >>> file_request("cl100k_base.tiktoken")
    {'kind': 'tiktoken', 'module': 'general', 'name': 'cl100k_base'}
    >>> file_request("tokenizer.model")["kind"], file_request("vocab.txt")["kind"]
    ('model', 'vocab')
    """
    lower = name.lower()
    if lower.endswith(".tiktoken"):
        return {"kind": "tiktoken", "module": "general", "name": name[: -len(".tiktoken")]}
    if lower.endswith(".model") or ".model." in lower:
        return {"kind": "model", "module": "general"}
    if lower.endswith(".txt"):
        return {"kind": "vocab", "module": "bert"}
    return {"kind": "json", "module": "bert"}
