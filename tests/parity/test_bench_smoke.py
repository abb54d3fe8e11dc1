"""The benchmark harness (scripts/bench/bench.py) end to end, on a small input: a harness test, not
a timed one. It runs `bench.py --quick` (about 64 KB per corpus, one round, no callgrind)
with tokenprism and tokenizers 0.23.3 only, and checks that the results are complete and that
every cell's ids (and the normalizer's output) hash identical to the reference.

Set TOKENPRISM_BENCH_PEERS=1 to include tokenizers 1.0.0rc3, tokie and kitoken (each in its
own virtualenv, created on first use, which needs PyPI); their cells must then be present,
but a peer whose ids differ is the peer's business and is only reported, not failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from paths import CORPORA, ROOT, bert_json, corpus, reference

BENCH = ROOT / "scripts" / "bench" / "bench.py"
PEERS = os.environ.get("TOKENPRISM_BENCH_PEERS") == "1"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    reference()  # tokenizers 0.23.3 must be there: it is what the bench verifies against
    bert_json()
    for c in CORPORA:
        corpus(c)
    out = tmp_path_factory.mktemp("bench")
    cmd = [sys.executable, str(BENCH), "--quick", "--out", str(out), "--allow-debug"]
    if not PEERS:
        cmd.append("--no-peers")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert p.returncode == 0, f"bench.py exited {p.returncode}\n{p.stderr[-4000:]}"
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return out, data, p.stderr


def test_outputs_exist(results):
    out, data, _ = results
    for name in ("results.json", "results.md", "encode.png"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "encode.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "results.md").read_text(encoding="utf-8")
    for heading in ("## 1. Full encode", "## 2. The normalizer alone", "## 3. Short inputs"):
        assert heading in md
    assert "| array / list |" in md and "Ids as an array against the list" in md


def test_every_corpus_and_implementation(results):
    _, data, _ = results
    assert data["quick"] is True
    assert set(data["corpora"]) == set(CORPORA)
    ran = [r["name"] for r in data["implementations"] if r.get("status") == "ok"]
    assert "tokenizers-0.23.3" in ran
    assert {"tokenprism", "tokenprism-ids", "tokenprism-array"} <= set(ran)
    if PEERS:
        assert not data["not_run"], data["not_run"]
    for c in CORPORA:
        for name in ran:
            cell = data["encode"][c][name]
            assert cell.get("mbps", 0) > 0, (c, name, cell)
            assert cell["sha256"], (c, name)
        for name in ("tokenprism", "tokenizers-0.23.3"):
            assert data["normalize"][c][name]["mbps"] > 0
    for size in map(str, (8, 16, 32, 64, 256)):
        assert set(data["short"][size]["by_corpus"]) == set(CORPORA)


def test_tokenprism_matches_reference_everywhere(results):
    _, data, _ = results
    ours = [
        r["name"]
        for r in data["implementations"]
        if r["kind"] == "ours" and r.get("status") == "ok"
    ]
    # every fast path switched off in turn is measured too, and must give the same ids
    assert {f"tokenprism-no-{fp}" for fp in ("simd", "page_cache", "lazy_output", "fused")} <= set(
        ours
    )
    bad = [m for m in data["mismatches"] if m["implementation"].startswith("tokenprism")]
    assert not bad, bad
    ref = {c: data["encode"][c]["tokenizers-0.23.3"]["sha256"] for c in CORPORA}
    for c in CORPORA:
        for name in ours:
            cell = data["encode"][c][name]
            assert cell["ids_match"] is True and cell["sha256"] == ref[c], (c, name)
        for name, cell in data["normalize"][c].items():
            if name.startswith("tokenprism"):
                assert cell["ids_match"] is True, (c, name)
    for size, block in data["short"].items():
        for c, cells in block["by_corpus"].items():
            for name in ours:
                if name in cells:
                    assert cells[name]["ids_match"] is True, (size, c, name)


def test_mismatches_are_loud(results):
    """Any peer whose output differs is listed in the JSON and flagged in the table."""
    out, data, stderr = results
    md = (out / "results.md").read_text(encoding="utf-8")
    for m in data["mismatches"]:
        assert "OUTPUT DIFFERS" in md
        assert m["implementation"] in stderr
    if not data["mismatches"]:
        assert "**Verified:**" in md
