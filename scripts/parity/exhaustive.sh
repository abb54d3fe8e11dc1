#!/usr/bin/env bash
# The parity tests in full: what CI runs a share of (every corpus whole for the tokenizer.json
# files, every code point in every context, four times the generated strings, every random
# component seed). Run after `./build.sh test` (or `./build.sh build`), which installs the module,
# the references and the data. Arguments go to pytest (e.g. -k llama).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
TOKENPRISM_EXHAUSTIVE=1 exec "${PYTHON:-python3}" -m pytest -q -n "${PYTEST_WORKERS:-2}" --dist loadfile \
    --durations=25 tests/parity "$@"
