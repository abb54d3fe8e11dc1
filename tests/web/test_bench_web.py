"""The browser benchmark's harness on a tiny slice of every corpus (a few KB): not timed.

Every tokenprism run (wasm simd128, wasm scalar, each fast path off; BERT normalizer and
encode, o200k_base encode) must give the reference's ids hash (tokenizers 0.23.3 for BERT,
tiktoken for o200k_base, both run here on the same documents); every JS peer that runs is
either equal to the reference or reported as mismatching by the analysis; the Bench tab of
the page renders a chart.
"""

from __future__ import annotations

import json

import pytest

import bench_slices
import bench_web
from paths import data_dir
from tabs.bench import view as bench_view
from web_env import DIST, chromium

TINY = 3000  # bytes of each corpus


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench-slices")
    bench_slices.write_slices(data_dir() / "corpora", out, TINY)
    return out


@pytest.fixture(scope="module")
def served(tiny, tmp_path_factory):
    """dist/ with the tiny slices over data/bench/ and the JS peers' bundle at /bench-peers/."""
    if not (DIST / "tabs" / "bench" / "worker.js").is_file():
        pytest.fail("dist/ has no tabs/bench/worker.js: run ./build.sh build", pytrace=False)
    peers = tmp_path_factory.mktemp("bench-peers")
    versions = bench_web.build_peers(peers)
    server, base = bench_web.serve(DIST, {"/bench-peers/": peers, "/data/bench/": tiny})
    yield base, versions
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def run(tiny, served):
    base, versions = served
    corpora = list(bench_slices.CORPORA)
    browser = bench_web.browser_run(
        base,
        {
            "corpora": corpora,
            "tokenizers": ["bert", "o200k"],
            "ops": ["normalize", "encode"],
            "rounds": 1,
            "minMs": 5,
            "peersUrl": "bench-peers/peers.js",
        },
        verbose=False,
    )
    res = {
        "references": bench_web.reference_hashes(tiny, corpora),
        "browser": browser,
        "native": {"cells": {}},
        "peer_versions": versions,
    }
    return res


def test_slices_are_whole_chars_and_documents(tiny):
    index = json.loads((tiny / "index.json").read_text())["corpora"]
    for c in bench_slices.CORPORA:
        docs = json.loads((tiny / f"{c}.json").read_text(encoding="utf-8"))
        text = (data_dir() / "corpora" / f"{c}.txt").read_text(encoding="utf-8")
        joined = "".join(docs)
        assert text.startswith(joined), c
        assert len(joined.encode("utf-8")) <= TINY
        assert len(text[: len(joined) + 1].encode("utf-8")) > TINY, c  # the longest such prefix
        assert index[c] == {"bytes": len(joined.encode("utf-8")), "documents": len(docs)}


def test_every_tokenprism_run_gives_the_reference_ids(run):
    refs = run["references"]
    assert run["browser"]["problems"] == []
    seen = set()
    for cell in run["browser"]["cells"]:
        ref = refs[cell["corpus"]][f"{cell['tokenizer']}/{cell['op']}"]
        for r in cell["runs"]:
            if r["kind"] == "ours":
                seen.add((cell["tokenizer"], cell["op"], r["name"]))
                assert r["sha256"] == ref, (
                    cell["corpus"],
                    cell["tokenizer"],
                    cell["op"],
                    r["name"],
                )
                assert r["mbps"] > 0
    # Every build and every fast path switched off ran, for both BERT stages and for o200k.
    # And each way of passing the text (encodeInto, wasm-bindgen's string glue, already in wasm memory).
    names = {
        "wasm-simd",
        "wasm-scalar",
        *(f"wasm-simd-no-{f}" for f in ("simd", "page_cache", "lazy_output", "fused")),
        "wasm-simd-wbg",
        "wasm-simd-resident",
        "wasm-scalar-resident",
    }
    for op in ("normalize", "encode"):
        assert {n for t, o, n in seen if t == "bert" and o == op} == names
    assert {n for t, o, n in seen if t == "o200k"} == {
        "wasm-simd",
        "wasm-simd-wbg",
        "wasm-simd-resident",
    }


def test_peers_run_and_are_checked_against_the_reference(run):
    refs = run["references"]
    peers_seen = {"bert": set(), "o200k": set()}
    for cell in run["browser"]["cells"]:
        for r in cell["runs"]:
            if r["kind"] == "peer":
                peers_seen[cell["tokenizer"]].add(r["name"])
    assert peers_seen["bert"] == {"transformers.js"}
    assert peers_seen["o200k"] == {"gpt-tokenizer", "js-tiktoken", "tiktoken-wasm", "ai-tokenizer"}
    res = bench_web.analyse(run)
    listed = {(m["corpus"], m["cell"], m["run"]) for m in res["peer_mismatches"]}
    for cell in res["browser"]["cells"]:
        ref = refs[cell["corpus"]][f"{cell['tokenizer']}/{cell['op']}"]
        for r in cell["runs"]:
            if r["kind"] != "peer":
                continue
            same = r["sha256"] == ref
            assert r["ids_match_ref"] == same
            assert ((cell["corpus"], f"{cell['tokenizer']}/{cell['op']}", r["name"]) in listed) == (
                not same
            )
            if not same:  # never the "fastest peer" a ratio is computed against
                assert cell.get("fastest_peer") != r["label"]
    md = bench_web.markdown(
        {**res, "machine": {}, "date": "test", "protocol": {"rounds": 1, "min_ms": 0}}
    )
    for m in res["peer_mismatches"]:
        assert m["run"] in md


def test_view_chart_marks_runs_whose_ids_differ():
    results = {
        "cells": [
            {
                "corpus": "en",
                "tokenizer": "bert",
                "op": "encode",
                "runs": [
                    {
                        "name": "wasm-simd",
                        "label": "wasm simd128",
                        "kind": "ours",
                        "sha256": "a",
                        "mbps": 40.0,
                    },
                    {
                        "name": "wasm-scalar",
                        "label": "wasm scalar",
                        "kind": "ours",
                        "sha256": "b",
                        "mbps": 10.0,
                    },
                    {"name": "p", "label": "peer", "kind": "peer", "sha256": "a", "mbps": 5.0},
                ],
            }
        ],
        "seconds": 1.0,
    }
    nodes = bench_view.render(results)
    chart = nodes[1]
    bars = chart.find_all("bench-bar")
    assert len(bars) == 3
    rects = [n for b in bars for n in b.walk() if n.tag == "rect"]
    widths = [int(r.attrs["width"]) for r in rects]
    assert widths[0] == bench_view.BAR_W and widths[1] == bench_view.BAR_W // 4
    assert "mismatch" in rects[1].attrs["class"] and "mismatch" not in rects[0].attrs["class"]
    assert "DIFFER" in nodes[0].text()
    native = {"date": "d", "encode": {"en": {"tokenprism-ids": {"mbps": 80.0, "sha256": "x"}}}}
    with_native = bench_view.render(results, native)[1].find_all("bench-bar")
    assert len(with_native) == 4 and "native" in with_native[-1].text()


def test_bench_tab_renders_a_chart(served):
    base, _ = served
    # Its own Chromium, not conftest's: the `run` fixture's harness starts a Playwright instance
    # of its own, and two cannot be open at once in one thread.
    with chromium() as browser:
        page = browser.new_context(service_workers="block").new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "index.html")
        page.wait_for_function(
            "() => document.getElementById('bench').dataset.state === 'ready'", timeout=240_000
        )
        page.get_by_test_id("tab-bench").click()
        assert page.get_by_test_id("bench").is_visible()
        assert not page.get_by_test_id("app").is_visible()
        page.evaluate(
            "Object.assign(document.getElementById('bench').dataset, {rounds: '1', minMs: '5'})"
        )
        page.get_by_test_id("bench-corpus").select_option("ru")
        page.get_by_test_id("bench-run").click()
        page.wait_for_function(
            "() => document.getElementById('bench').dataset.state === 'done'", timeout=240_000
        )
        charts = page.locator("[data-testid=bench-chart]")
        assert charts.count() == 2  # normalizer and encode
        assert page.locator("[data-testid=bench-chart] rect").count() >= 12
        assert "same ids" in page.get_by_test_id("bench-summary").text_content()
        assert errors == []
