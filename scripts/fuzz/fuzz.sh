#!/usr/bin/env bash
# Builds the libFuzzer targets of crate/fuzz and runs them one after another.
#
#   scripts/fuzz/fuzz.sh [SECONDS] [TARGET...]     default: 10 seconds each, every target
#
# Each target starts from its seed corpus (scripts/fuzz/fuzz_seeds.py: the tests' strings and
# small tokenizer files) plus whatever earlier runs added to crate/fuzz/corpus/<target>/.
# A finding stops that target with its input in crate/fuzz/artifacts/<target>/ (rerun
# it with `crate/fuzz/target/.../<target> <file>`); the script then exits non-zero.
# Each run's log goes to crate/fuzz/logs/<target>.log and one summary line per target
# (executions, seconds, corpus size) to stdout.
#
# Toolchain: the stable compiler that builds the crate, with RUSTC_BOOTSTRAP=1 for the
# -Z flags cargo-fuzz passes (-Zsanitizer=address): the stable toolchain ships the ASan
# runtime, so neither a nightly toolchain nor a download is needed. `./build.sh setup`
# installs cargo-fuzz into the cache; FUZZ_SANITIZER=none builds without ASan.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FUZZ=$ROOT/crate/fuzz
CACHE=${TOKENPRISM_CACHE:-$HOME/.cache/tokenprism}
CARGO_FUZZ_VERSION=${CARGO_FUZZ_VERSION:-0.13.2}
CARGO_FUZZ=${CARGO_FUZZ:-$CACHE/cargo-fuzz-$CARGO_FUZZ_VERSION/bin/cargo-fuzz}
PY=${PYTHON:-python3}
TARGETS_ALL=(normalizer simd pretokenizer bert_encode bpe tokenizer_json tiktoken train)

seconds=${1:-10}
shift || true
targets=("$@")
((${#targets[@]})) || targets=("${TARGETS_ALL[@]}")

[[ -x $CARGO_FUZZ ]] || { echo "cargo-fuzz not found at $CARGO_FUZZ: run ./build.sh setup" >&2; exit 1; }

export RUSTC_BOOTSTRAP=1
triple=$(rustc -vV | awk '/^host:/ {print $2}')
(cd "$FUZZ" && "$CARGO_FUZZ" fuzz build --release --sanitizer "${FUZZ_SANITIZER:-address}" \
    --target "$triple" >/dev/null 2>"$FUZZ/build.log" || { cat "$FUZZ/build.log" >&2; exit 1; })
bin=$FUZZ/target/$triple/release

"$PY" "$ROOT/scripts/fuzz/fuzz_seeds.py" --out "$FUZZ/corpus" >/dev/null
mkdir -p "$FUZZ/logs"
status=0
for t in "${targets[@]}"; do
    mkdir -p "$FUZZ/artifacts/$t"
    dict=()
    [[ -f $FUZZ/dicts/$t.dict ]] && dict=("-dict=$FUZZ/dicts/$t.dict")
    # -timeout: one input may take at most 20 s (a hang is a finding); -rss_limit_mb: a
    # runaway allocation is a finding too; -max_len: inputs up to 64 KiB (the loaders'
    # seeds are bigger and are read whole).
    if "$bin/$t" "$FUZZ/corpus/$t" "${dict[@]}" -max_total_time="$seconds" -timeout=20 \
        -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$FUZZ/artifacts/$t/" >"$FUZZ/logs/$t.log" 2>&1; then
        result=clean
    else
        result="FINDING (see crate/fuzz/logs/$t.log and crate/fuzz/artifacts/$t/)"
        status=1
    fi
    runs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$FUZZ/logs/$t.log" | tail -n1 || true)
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$FUZZ/logs/$t.log" | tail -n1 | awk '{print $5}' || true)
    printf 'fuzz %-15s %12s executions in %5s s, corpus %6s inputs: %s\n' "$t" "${runs:-?}" "${secs:-?}" \
        "$(find "$FUZZ/corpus/$t" -type f | wc -l)" "$result"
done
exit $status
