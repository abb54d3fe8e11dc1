"""Build the Unigram tokenizer files (SentencePiece Unigram models, converted) into <data>/unigram/.

    python scripts/data/unigram_data.py           # build what is stale, print the directory
    python scripts/data/unigram_data.py --force   # rebuild

No model hub is reachable from these machines, so the T5- and XLM-R-style files are made here
the way the real ones were: a SentencePiece Unigram model is trained on slices of the
development corpora (scripts/data/corpora.py), then `transformers`' convert_slow_tokenizer turns
it into a tokenizer.json (Precompiled normalizer holding SentencePiece's compiled char map,
Metaspace, a Unigram model with SentencePiece's scores):

    <data>/unigram/t5/      T5TokenizerFast from T5Tokenizer: en+ru+el, no byte fallback,
                            T5's ids (pad 0, eos 1, unk 2, no bos), 100 <extra_id_N>
    <data>/unigram/xlmr/    XLMRobertaTokenizerFast: en+ru+el+ar+zh, no byte fallback,
                            fairseq's ids (<s> <pad> </s> <unk>, pieces shifted by one, <mask>)
    <data>/unigram/bytes/   MoshiConverter (a converter that keeps byte fallback): zh+ru+en
                            with byte fallback, rule nmt_nfkc_cf (case folding), spaces kept

each holding spm.model (SentencePiece's own, the end-to-end oracle) and tokenizer.json;

    <data>/unigram/mon/tokenizer.json   the file PyPI `mon-tokenizer==1.0.1` ships (Unigram
                                        with byte fallback, NFC, a regex Replace, Metaspace)

and SentencePiece models read as they are (`Tokenizer.from_file("x.model")`), with no
tokenizer.json, in <data>/sentencepiece/ (see SPM_MODELS): BPE models with and without byte
fallback, split digits, spaces after words, user-defined and control pieces, no whitespace
split; a Unigram model with user-defined pieces and no dummy prefix; and the Llama-style BPE
models PyPI `mistral-common==1.13.1` ships (mistral-v1, -v3, -v7: byte fallback, extra
whitespace kept, control pieces).

The conversion needs transformers 4.57 (the last line whose converters wrote these files), which
pins tokenizers<=0.23.0 and huggingface-hub<1.0: it runs in a venv of its own
(<cache>/venv-unigram-data, the pinned CONVERT_PACKAGES), never in the test environment. The
output is rebuilt only when this script or a corpus slice it reads changes (a stamp of their
SHA-256 in <data>/unigram/.stamp); files are written under a temporary name, then renamed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

CONVERT_PACKAGES = [
    "transformers==4.57.6",
    "tokenizers==0.22.1",
    "sentencepiece==0.2.3",
    "protobuf==7.36.2",
]
MISTRAL_SPEC = "mistral-common==1.13.1"
MISTRAL_WHEEL = "mistral_common-1.13.1-py3-none-any.whl"
MISTRAL_MEMBERS = {
    "mistral-v1": "mistral_common/data/tokenizer.model.v1",
    "mistral-v2": "mistral_common/data/mistral_instruct_tokenizer_240216.model.v2",
    "mistral-v3": "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
    "mistral-v7": "mistral_common/data/mistral_instruct_tokenizer_241114.model.v7",
}
MON_SPEC = "mon-tokenizer==1.0.1"
MON_WHEEL = "mon_tokenizer-1.0.1-py3-none-any.whl"
MON_MEMBER = "mon_tokenizer/data/mon_tokenizer.json"

# name: (corpus slices as (lang, bytes), SentencePiece trainer options, converter)
MODELS = {
    "t5": (
        [("en", 400_000), ("ru", 400_000), ("el", 400_000)],
        {"vocab_size": 6000, "pad_id": 0, "eos_id": 1, "unk_id": 2, "bos_id": -1},
        "t5",
    ),
    "xlmr": (
        [("en", 250_000), ("ru", 250_000), ("el", 250_000), ("ar", 250_000), ("zh", 250_000)],
        {"vocab_size": 8000},
        "xlmr",
    ),
    "bytes": (
        [("zh", 300_000), ("ru", 300_000), ("en", 300_000)],
        {
            "vocab_size": 4000,
            "byte_fallback": True,
            "character_coverage": 0.995,
            "normalization_rule_name": "nmt_nfkc_cf",
            # The converter maps every space to "▁" and prepends one (Moshi's model keeps runs
            # of spaces): SentencePiece must not collapse them either.
            "remove_extra_whitespaces": False,
        },
        "moshi",
    ),
}


# name: (corpus slices, SentencePiece trainer options): models kept as <data>/sentencepiece/<name>.model
SPM_MODELS = {
    "bpe": (
        [("en", 300_000), ("ru", 200_000), ("el", 200_000)],
        {"model_type": "bpe", "vocab_size": 4000},
    ),
    "bpe-bytes": (
        [("zh", 250_000), ("en", 250_000), ("ar", 150_000)],
        {
            "model_type": "bpe",
            "vocab_size": 4000,
            "byte_fallback": True,
            "split_digits": True,
            "character_coverage": 0.995,
        },
    ),
    "bpe-code": (
        [("code", 300_000), ("en", 100_000)],
        {
            "model_type": "bpe",
            "vocab_size": 3000,
            "byte_fallback": True,
            "normalization_rule_name": "identity",
            "remove_extra_whitespaces": False,
            # Pieces may then hold "▁" anywhere: merges run over the whole text.
            "split_by_whitespace": False,
            "user_defined_symbols": ["<sep>", "def", "::"],
            "control_symbols": ["<ctl>"],
        },
    ),
    "bpe-suffix": (
        [("en", 200_000), ("ru", 100_000)],
        {
            "model_type": "bpe",
            "vocab_size": 2000,
            "treat_whitespace_as_suffix": True,
            "normalization_rule_name": "nfkc_cf",
        },
    ),
    "unigram-user": (
        [("en", 200_000), ("el", 200_000)],
        {
            "model_type": "unigram",
            "vocab_size": 3000,
            "user_defined_symbols": ["<sep>", "ab", "\u25a0"],
            "control_symbols": ["<ctl>"],
            "add_dummy_prefix": False,
            "split_digits": True,
        },
    ),
}


def cache_dir() -> Path:
    return Path(os.environ.get("TOKENPRISM_CACHE") or os.path.expanduser("~/.cache/tokenprism"))


def data_dir() -> Path:
    return Path(os.environ.get("TOKENPRISM_DATA") or cache_dir() / "data")


def out_dir() -> Path:
    return data_dir() / "unigram"


def spm_dir() -> Path:
    return data_dir() / "sentencepiece"


def corpus_slice(lang: str, size: int) -> str:
    """The first `size` bytes of a corpus, cut back to a line end."""
    with open(data_dir() / "corpora" / f"{lang}.txt", "rb") as f:
        data = f.read(size)
    return data[: data.rfind(b"\n") + 1].decode("utf-8")


def stamp() -> str:
    h = hashlib.sha256(Path(__file__).read_bytes())
    slices = [s for s, _, _ in MODELS.values()] + [s for s, _ in SPM_MODELS.values()]
    for model_slices in slices:
        for lang, size in model_slices:
            h.update(corpus_slice(lang, size).encode())
    return h.hexdigest()


def outputs() -> list[Path]:
    files = [out_dir() / name / f for name in MODELS for f in ("spm.model", "tokenizer.json")]
    files += [spm_dir() / f"{name}.model" for name in SPM_MODELS]
    return files + [out_dir() / "mon" / "tokenizer.json"]


def write_atomic(dst: Path, data: bytes) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    part = dst.with_name(dst.name + ".part")
    part.write_bytes(data)
    os.replace(part, dst)


# --------------------------------------------------------------------------- in the venv


def train_and_convert(name: str, work: Path) -> None:
    """Train model `name` in `work` and write spm.model and tokenizer.json into it."""
    import sentencepiece as spm
    from transformers import T5TokenizerFast, XLMRobertaTokenizerFast
    from transformers.convert_slow_tokenizer import MoshiConverter

    slices, options, converter = MODELS[name]
    text = work / "train.txt"
    text.write_text("".join(corpus_slice(lang, size) for lang, size in slices), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(work / "spm"),
        model_type="unigram",
        num_threads=2,
        minloglevel=2,
        **options,
    )
    model = str(work / "spm.model")
    if converter == "moshi":
        MoshiConverter(model).converted().save(str(work / "tokenizer.json"))
        return
    # A vocab_file alone makes the fast class convert the slow tokenizer, as the Hub's files were
    # made. T5's fast class passes add_prefix_space=None on to the slow one unless it is given,
    # which would write Metaspace's prepend_scheme "never"; the Hub's t5 files prepend always.
    if converter == "t5":
        fast = T5TokenizerFast(vocab_file=model, add_prefix_space=True)
    else:
        fast = XLMRobertaTokenizerFast(vocab_file=model)
    fast.save_pretrained(str(work / "saved"))
    shutil.copyfile(work / "saved" / "tokenizer.json", work / "tokenizer.json")


def train_spm(name: str, work: Path) -> bytes:
    """Train SentencePiece-only model `name` in `work`; its .model file's bytes."""
    import sentencepiece as spm

    slices, options = SPM_MODELS[name]
    text = work / "train.txt"
    text.write_text("".join(corpus_slice(lang, size) for lang, size in slices), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(work / "spm"), num_threads=2, minloglevel=2, **options
    )
    return (work / "spm.model").read_bytes()


def build_in_venv() -> None:
    for name in MODELS:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            train_and_convert(name, work)
            for f in ("spm.model", "tokenizer.json"):
                write_atomic(out_dir() / name / f, (work / f).read_bytes())
        print(f"  built {out_dir() / name}", flush=True)
    for name in SPM_MODELS:
        with tempfile.TemporaryDirectory() as tmp:
            write_atomic(spm_dir() / f"{name}.model", train_spm(name, Path(tmp)))
        print(f"  built {spm_dir() / name}.model", flush=True)


# --------------------------------------------------------------------------- outside


def convert_python() -> Path:
    """The venv's python, with CONVERT_PACKAGES installed (once per machine)."""
    env = cache_dir() / "venv-unigram-data"
    py = env / "bin" / "python"
    done = env / ".done"
    want = " ".join(CONVERT_PACKAGES)
    if not (done.is_file() and done.read_text() == want):
        print(f"  creating {env} with {want}", flush=True)
        shutil.rmtree(env, ignore_errors=True)
        venv.create(env, with_pip=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *CONVERT_PACKAGES], check=True)
        done.write_text(want)
    return py


def wheel_path(spec: str, filename: str) -> Path:
    """The wheel `spec` (pinned) in the cache, downloaded once."""
    return corpora.pip_wheel(spec, filename, cache_dir() / "wheels")


def fetch_mon() -> None:
    dst = out_dir() / "mon" / "tokenizer.json"
    if dst.is_file():
        return
    with zipfile.ZipFile(wheel_path(MON_SPEC, MON_WHEEL)) as z:
        data = z.read(MON_MEMBER)
    json.loads(data)  # a broken download fails here, not in a test
    write_atomic(dst, data)


def fetch_mistral() -> None:
    dsts = {name: spm_dir() / f"{name}.model" for name in MISTRAL_MEMBERS}
    if all(p.is_file() for p in dsts.values()):
        return
    with zipfile.ZipFile(wheel_path(MISTRAL_SPEC, MISTRAL_WHEEL)) as z:
        for name, member in MISTRAL_MEMBERS.items():
            write_atomic(dsts[name], z.read(member))


def main() -> None:
    if "--in-venv" in sys.argv:
        build_in_venv()
        return
    fetch_mon()
    fetch_mistral()
    want = stamp()
    stamp_file = out_dir() / ".stamp"
    fresh = stamp_file.is_file() and stamp_file.read_text() == want
    if "--force" in sys.argv or not fresh or not all(p.is_file() for p in outputs()):
        print(
            "unigram: training SentencePiece models (and converting the Unigram ones)", flush=True
        )
        env = dict(os.environ, TOKENPRISM_DATA=str(data_dir()), TOKENPRISM_CACHE=str(cache_dir()))
        # Offline: transformers must not look for anything on the Hub.
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
        subprocess.run([str(convert_python()), __file__, "--in-venv"], check=True, env=env)
        write_atomic(stamp_file, want.encode())
    print(out_dir())


if __name__ == "__main__":
    main()
