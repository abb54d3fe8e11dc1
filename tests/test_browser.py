"""The page end to end: dist/ served over HTTP, opened in Debian's Chromium, with Pyodide
running web/app.py over the wasm core. Expected values come from `tokenizers` 0.23.3.

Needs `./build.sh build` first (dist/ is its output).
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
BERT_JSON = DIST / "data" / "bert-base-uncased" / "tokenizer.json"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EXAMPLE = "Héllo, Wörld! 東京"
# Pyodide takes ~5 s in a fresh headless Chromium; leave room for a loaded CI machine.
READY_TIMEOUT_MS = 90_000

sync_api = pytest.importorskip("playwright.sync_api")
tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.skipif(
    not (DIST / "index.html").exists(), reason="dist/ is missing: run ./build.sh build"
)


def _load_serve_module():
    spec = importlib.util.spec_from_file_location("serve", ROOT / "scripts" / "serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def base_url():
    server = _load_serve_module().make_server(DIST, port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def reference_stages(text: str) -> dict[str, str]:
    """Each BERT normalizer step's cumulative output, from `tokenizers`' own normalizers.

    BertNormalizer runs clean → CJK spacing → strip accents (NFD, then drop marks) →
    lowercase; switching its options on one at a time gives each intermediate text.
    """
    from tokenizers import normalizers as n

    def bert(**options):
        flags = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False,
                     lowercase=False)
        flags.update(options)
        return n.BertNormalizer(**flags)

    clean_cjk = bert(clean_text=True, handle_chinese_chars=True)
    return {
        "clean": bert(clean_text=True).normalize_str(text),
        "cjk": clean_cjk.normalize_str(text),
        "nfd": n.Sequence([clean_cjk, n.NFD()]).normalize_str(text),
        "strip_accents": bert(clean_text=True, handle_chinese_chars=True,
                              strip_accents=True).normalize_str(text),
        "lowercase": bert(clean_text=True, handle_chinese_chars=True, strip_accents=True,
                          lowercase=True).normalize_str(text),
    }


def reference_ids(text: str) -> list[int]:
    reference = tokenizers.Tokenizer.from_file(str(BERT_JSON))
    # The file switches on padding to 128; the page shows the unpadded encoding.
    reference.no_padding()
    reference.no_truncation()
    return reference.encode(text).ids


def test_reference_values_match_the_issue():
    # Guards the oracle itself: if these drift, the page test below would chase them.
    assert reference_stages(EXAMPLE)["lowercase"] == "hello, world!  東  京 "
    assert reference_ids(EXAMPLE) == [101, 7592, 1010, 2088, 999, 1879, 1755, 102]


def test_page_shows_stages_and_ids(browser, base_url):
    problems: list[str] = []
    page = browser.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status}: {r.url}"))
    try:
        page.goto(base_url)
        # The progress indicator is what a visitor sees first.
        assert page.get_by_test_id("loading").is_visible(), "no progress indicator while loading"
        # "failed" ends the wait early; the page then shows why, and so does the assertion.
        page.wait_for_selector(
            '[data-testid="app"]:is([data-state="ready"], [data-state="failed"])',
            timeout=READY_TIMEOUT_MS,
        )
        state = page.get_by_test_id("app").get_attribute("data-state")
        assert state == "ready", page.get_by_test_id("error").text_content()
        assert not page.get_by_test_id("loading").is_visible()

        box = page.get_by_test_id("input")
        box.fill("")
        box.press_sequentially(EXAMPLE)
        expected = reference_stages(EXAMPLE)
        # Exact comparison of textContent (Playwright's to_have_text would fold the spaces
        # the CJK step inserts, and those spaces are the point).
        page.wait_for_function(
            "want => document.querySelector('[data-testid=stage-lowercase-text]')"
            "?.textContent === want",
            arg=expected["lowercase"],
            timeout=10_000,
        )
        assert page.get_by_test_id("stage-raw-text").text_content() == EXAMPLE
        for name, text in expected.items():
            assert page.get_by_test_id(f"stage-{name}-text").text_content() == text, name
        assert expected["lowercase"] == "hello, world!  東  京 "

        ids = json.loads(page.get_by_test_id("ids").text_content())
        assert ids == reference_ids(EXAMPLE) == [101, 7592, 1010, 2088, 999, 1879, 1755, 102]
        tokens = page.get_by_test_id("token").all_text_contents()
        assert len(tokens) == len(ids)

        assert page.get_by_test_id("error").is_hidden(), page.get_by_test_id("error").text_content()
        assert "simd128" in page.get_by_test_id("engine").text_content()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "page.png"), full_page=True)
    finally:
        page.close()
    assert problems == []
