"""scripts/bench/general_pipelines.py end to end on a small input (a harness test, not a timed
one): it makes a pipeline of general components with tokenizers 0.23.3's trainer, runs
bench.py --quick on it with tokenprism and tokenizers 0.23.3 only, and the ids of every cell
must hash identical to the reference's."""

from __future__ import annotations

import json
import subprocess
import sys

from paths import ROOT, corpus, reference

SCRIPT = ROOT / "scripts" / "bench" / "general_pipelines.py"


def test_a_general_pipeline_is_benchmarked_and_verified(tmp_path):
    reference()
    for c in ("en", "ru", "el", "code", "zh"):
        corpus(c)
    cmd = [
        sys.executable,
        str(SCRIPT),
        "--pipelines",
        "wordlevel-whitespace-split,bpe-nfd-whitespace",
        "--corpora",
        "en,zh",
        "--out",
        str(tmp_path),
        "--quick",
        "--no-peers",
        "--allow-debug",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert p.returncode == 0, f"general_pipelines.py exited {p.returncode}\n{p.stderr[-4000:]}"
    for name in ("wordlevel-whitespace-split", "bpe-nfd-whitespace"):
        data = json.loads((tmp_path / name / "results.json").read_text(encoding="utf-8"))
        assert data["tokenizer"] == f"{name}.json"
        for c in ("en", "zh"):
            cell = data["encode"][c]
            for impl in ("tokenprism", "tokenprism-ids", "tokenizers-0.23.3"):
                assert cell[impl]["ids_match"] is True, (name, c, impl, cell[impl])
                assert cell[impl]["mbps"] > 0
        assert not data["mismatches"]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.count("| wordlevel-whitespace-split |") == 2, summary
