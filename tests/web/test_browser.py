"""The page end to end: dist/ served over HTTP, opened in Debian's Chromium, with Pyodide
running web/app.py and the wasm core in a Web Worker. Expected values come from
`tokenizers` 0.23.3 run here (its normalizers, pre-tokenizer and encodings).

Needs `./build.sh build` first (dist/ is its output). Figures (load times, the longest
main-thread task of a 1 MB paste) go to tests/artifacts/figures.json, screenshots next to it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import zlib
from functools import partial

import pytest

import web_env
from parity import reference_stages
from web_env import ARTIFACTS, DIST, LONGTASK_SCRIPT, launch

BERT_JSON = DIST / "data" / "bert-base-uncased" / "tokenizer.json"
EXAMPLE = "Héllo, Wörld! 東京"
INPUTS = [
    EXAMPLE,
    "Crème brûlée,\tnaïve\nfaçade",
    "zero\u200bwidth soft\u00adhyphen \x07bell",
    "İstanbul ΟΔΥΣΣΕΥΣ Ἀθῆναι",
    "def f(x):\n\treturn x ** 2  # square 👩🏽‍💻",
]
# Long unbroken words and a URL: token views must wrap them at phone width.
PHONE_TEXT = (
    "Donaudampfschifffahrtsgesellschaftskapitänswitwe "
    "https://example.com/a/very/long/path/without/any/break/at/all?query=string_value "
    "Supercalifragilisticexpialidocious東京大学大学院情報理工学系研究科"
)
# The elements that reach past the window's right edge, leaving out those inside a box that
# scrolls or clips them.
WIDE_ELEMENTS = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
  .filter(e => { for (let a = e.parentElement; a; a = a.parentElement)
                   if (getComputedStyle(a).overflowX !== 'visible') return false;
                 return true; })
  .map(e => `${e.tagName.toLowerCase()}#${e.id}.${e.getAttribute('class') ?? ''}`).slice(0, 6)"""
# Pyodide takes ~5 s in a fresh headless Chromium; leave room for a loaded CI machine.
READY_TIMEOUT_MS = 120_000
LONG_TASK_LIMIT_MS = 200
# On a machine busier than one runnable task per core every task stretches in wall-clock time
# (it waits for a core); there the 200 ms bound holds for the main thread's CPU time per task
# (from a Chrome trace), and the wall-clock one is loosened to this.
OVERLOADED_LIMIT_MS = 1000
FIGURES: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def figures():
    yield
    if FIGURES:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / "figures.json"
        old = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**old, **FIGURES}, indent=2) + "\n")


@pytest.fixture
def browser(playwright):
    # One browser per test (not conftest's one per module): a renderer crash on a loaded machine
    # stays in its own test.
    browser = launch(playwright)
    yield browser
    browser.close()


def test_reference_values_match_the_issue(bert_reference):
    # Guards the oracle itself: if these drift, the page tests below would chase them.
    assert reference_stages(EXAMPLE)["lowercase"] == "hello, world!  東  京 "
    assert bert_reference.encode(EXAMPLE).ids == [101, 7592, 1010, 2088, 999, 1879, 1755, 102]


def progress_then_early_tokens(page):
    # The progress indicator is what a visitor sees first.
    assert page.get_by_test_id("loading").is_visible(), "no progress indicator while loading"
    if "#" not in page.url:
        # The core in its worker answers before Python is ready.
        page.wait_for_function(
            "() => document.querySelector('[data-testid=early]').textContent.includes('tokens')",
            timeout=READY_TIMEOUT_MS,
        )


# Every page records its long tasks and is seen loading.
open_page = partial(
    web_env.open_page, init_script=LONGTASK_SCRIPT, while_loading=progress_then_early_tokens
)


class Shared:
    """One page for the tests that only type text, change options and read the views: a
    Pyodide start-up each is most of their time. Reopened (in a new browser) when the
    renderer crashed, so a crash on a loaded machine still stays in its own test."""

    def __init__(self, playwright, url):
        self.playwright, self.url = playwright, url
        self.browser = self.page = self.watch = None
        self.crashed = False

    def open(self):
        self.close()
        self.browser = launch(self.playwright)
        self.crashed = False
        self.page, self.watch = open_page(self.browser, self.url)
        self.page.on("crash", lambda _: setattr(self, "crashed", True))

    def close(self):
        if self.browser is not None:
            self.browser.close()
            self.browser = None

    def reset(self):
        """The page's defaults back (text view, every option and fast path on), no problems
        counted yet."""
        if self.page is None or self.crashed:
            self.open()
        page = self.page
        page.get_by_test_id("mode-text").check()
        # lowercase first: the options that follow it may depend on it.
        page.locator('input[name="opt"][value="lowercase"]').check()
        for box in page.locator('input[name="opt"], input[name="fast"]').all():
            box.check()
        self.watch.problems.clear()
        return page, self.watch


@pytest.fixture(scope="module")
def shared_page(playwright, base_url):
    shared = Shared(playwright, base_url)
    yield shared
    shared.close()


@pytest.fixture
def shared(shared_page):
    """(page, watch) on the shared page, reset to its defaults."""
    return shared_page.reset()


def wait_for_text(page, text, timeout=30_000):
    """Waits until the token view shows `text` (the trace for it has been drawn)."""
    page.wait_for_function(
        "want => document.querySelector('[data-testid=token-view]')?.textContent === want",
        arg=text,
        timeout=timeout,
    )


def type_text(page, text):
    box = page.get_by_test_id("input")
    box.fill(text)
    wait_for_text(page, text)


def step_name(page):
    return page.locator('[data-testid="step"]').get_attribute("data-step")


def go_to_step(page, k):
    page.locator(f'[data-testid="timeline"] [data-step="{k}"] .tl-hit').click()
    page.wait_for_function(
        "k => document.querySelector('[data-testid=step]') && "
        "document.querySelector('.timeline .current')?.dataset.step === String(k)",
        arg=k,
    )


def test_page_steps_through_every_stage(browser, base_url, bert_reference):
    page, watch = open_page(browser, base_url)
    try:
        FIGURES["shell_visible_ms"] = round(
            page.evaluate(
                "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"
            ),
            1,
        )
        FIGURES["python_ready_ms"] = round(page.evaluate("window.tokenprismTimes.pythonReady"), 1)
        FIGURES["page_ready_ms"] = round(page.evaluate("window.tokenprismTimes.ready"), 1)
        FIGURES["core_first_result_ms"] = round(
            page.evaluate("window.tokenprismTimes.firstResult"), 1
        )
        # The default text is there at once, drawn from the first trace.
        wait_for_text(page, EXAMPLE)
        for text in INPUTS:
            type_text(page, text)
            expected = reference_stages(text)
            encoding = bert_reference.encode(text)
            words = [
                w for w, _ in bert_reference.pre_tokenizer.pre_tokenize_str(expected["lowercase"])
            ]
            go_to_step(page, 0)
            names = [*expected, "pre_tokens", "wordpiece", "ids"]
            for k, name in enumerate(names):
                assert step_name(page) == name
                assert page.locator(".step-count").text_content() == f"{k + 1}/{len(names)}"
                if name in expected:
                    # Exact textContent: the badges and removal marks are drawn by CSS, so the
                    # element's text is exactly the stage's text.
                    got = page.get_by_test_id("step-text").text_content()
                    assert got == expected[name], (text, name)
                elif name == "pre_tokens":
                    assert page.get_by_test_id("pre-token").all_text_contents() == words
                elif name == "wordpiece":
                    assert page.get_by_test_id("wp-token").all_text_contents() == encoding.tokens
                else:
                    assert (
                        json.loads(page.get_by_test_id("step-ids").text_content()) == encoding.ids
                    )
                if k < len(names) - 1:
                    # Alternate the Next button and the arrow key.
                    if k % 2:
                        page.get_by_test_id("next").click()
                    else:
                        page.keyboard.press("ArrowRight")
                    page.wait_for_function(
                        "n => document.querySelector('[data-testid=step]')?.dataset.step === n",
                        arg=names[k + 1],
                    )
            assert page.get_by_test_id("next").is_disabled()
            page.keyboard.press("ArrowLeft")
            assert step_name(page) == "wordpiece"
        assert page.get_by_test_id("error").is_hidden(), page.get_by_test_id("error").text_content()
        assert "simd128" in page.get_by_test_id("engine").text_content()
    finally:
        page.context.close()
    assert watch.problems == []


def test_inspector_tokens_and_counts(shared, bert_reference):
    page, watch = shared
    text = "Héllo [UNK]? ☃ xyzzyq"
    type_text(page, text)
    go_to_step(page, 0)
    # Focus the text, move with the arrow keys: the inspector follows.
    page.get_by_test_id("step-text").focus()
    page.keyboard.press("ArrowRight")
    assert page.get_by_test_id("inspect-code-point").text_content() == "code pointU+00E9"
    assert (
        page.get_by_test_id("inspect-name").text_content() == "nameLATIN SMALL LETTER E WITH ACUTE"
    )
    assert page.get_by_test_id("inspect-UTF-8").text_content() == "UTF-8C3 A9"
    assert page.get_by_test_id("inspect-from").text_content().startswith("frominput char 1")
    go_to_step(page, 3)  # NFD: é became e + U+0301, both from input char 1
    page.get_by_test_id("step-text").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.get_by_test_id("inspect-code-point").text_content() == "code pointU+0301"
    assert page.get_by_test_id("inspect-from").text_content().startswith("frominput char 1")
    # Pointer: hovering a char inspects it.
    box = page.locator('[data-testid="step-text"] [data-s="0"]').bounding_box()
    page.mouse.move(box["x"] + 3, box["y"] + box["height"] / 2)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=inspect-char]')?.textContent === 'charH'"
    )

    encoding = bert_reference.encode(text)
    spans = page.get_by_test_id("token-span")
    assert spans.count() == len(encoding.ids) - 2
    unk = page.locator('[data-testid="token-span"].unk')
    assert unk.count() == encoding.tokens.count("[UNK]") > 0
    # Hovering a token marks it in every view.
    spans.nth(0).hover()
    page.wait_for_function("() => document.querySelectorAll('.tok-hl').length >= 1")
    assert page.locator(".tok-hl").first.get_attribute("data-t") == "1"
    status = page.get_by_test_id("token-status").text_content()
    assert f"→ id {encoding.ids[1]} · input chars 0–5: 'Héllo'" in status
    assert page.get_by_test_id("count-tokens").text_content() == f"tokens{len(encoding.ids)}"
    assert page.get_by_test_id("count-chars").text_content() == f"chars{len(text)}"
    assert page.get_by_test_id("count-bytes").text_content() == f"bytes{len(text.encode())}"
    page.get_by_test_id("mode-ids").check()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=token-id]').length > 0")
    ids = [int(x) for x in page.get_by_test_id("token-id").all_text_contents()]
    assert ids == encoding.ids
    assert watch.problems == []


def step_times(page):
    """The timeline's step times in µs (None for ids), and the clock step the page names."""
    values = page.locator('[data-testid="timeline"] [data-step]').evaluate_all(
        "rows => rows.map(r => r.dataset.micros)"
    )
    basis = page.get_by_test_id("timing-basis")
    return [float(v) if v else None for v in values], float(basis.get_attribute("data-resolution"))


def test_short_input_step_times_are_medians_per_run(shared):
    page, watch = shared
    text = "Naïve café, 東京 2024!"
    assert len(text) == 20
    shown = []
    for _ in range(2):
        type_text(page, "x")
        type_text(page, text)
        micros, resolution = step_times(page)
        # Every step but the input (no work) and the ids (not timed).
        timed = micros[1:-1]
        shown.append(timed)
        assert 0 < resolution <= 100, resolution
        basis = page.get_by_test_id("timing-basis").text_content()
        assert "Times per run" in basis and f"{resolution:.2f} µs" in basis, basis
        assert all(m is not None and m >= 0 for m in timed), timed
        per_batch = int(re.search(r"batches of ([\d,]+) runs", basis)[1].replace(",", ""))
        assert per_batch > 1, basis
        # One run would show multiples of the clock step (0, 5, 10 µs). A loaded machine fits
        # few runs in a batch, so sub-µs steps may all round to one value: two distinct times.
        assert any(abs(m / resolution - round(m / resolution)) > 0.02 for m in timed), timed
        assert len({round(m, 2) for m in timed}) >= 2, timed
    go_to_step(page, 1)
    assert " (" in page.get_by_test_id("stage-time").text_content()
    FIGURES["short_input_step_micros"] = [[round(m, 3) for m in t] for t in shown]
    # Stable: the same text twice gives about the same total (a loaded machine: within 2x).
    first, second = sum(shown[0]), sum(shown[1])
    assert 0.5 < first / second < 2, shown
    assert watch.problems == []


def test_options_change_the_stages(shared, bert_reference):
    page, watch = shared
    text = "Crème BRÛLÉE\t東京"
    type_text(page, text)
    page.locator('input[name="opt"][value="lowercase"]').uncheck()
    page.locator('input[name="opt"][value="handle_chinese_chars"]').uncheck()
    expected = reference_stages(text, cjk=False, lower=False)
    go_to_step(page, 5)
    page.wait_for_function(
        "want => document.querySelector('[data-testid=step-text]')?.textContent === want",
        arg=expected["lowercase"],
    )
    for k, name in enumerate(expected):
        go_to_step(page, k)
        assert page.get_by_test_id("step-text").text_content() == expected[name], name
    # The fast paths never change a result: all off gives the same ids.
    go_to_step(page, 8)
    before = page.get_by_test_id("step-ids").text_content()
    for name in ("simd", "page_cache", "lazy_output", "fused"):
        page.locator(f'input[name="fast"][value="{name}"]').uncheck()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=fast]')?.textContent.includes('scalar')"
    )
    assert page.get_by_test_id("step-ids").text_content() == before
    assert watch.problems == []


def test_fast_path_view_on_the_input_bytes(shared):
    page, watch = shared
    text = "plain ascii text that spans a few sixteen-byte blocks, then Ünïcödé"
    type_text(page, text)
    cells = page.get_by_test_id("block")
    assert cells.count() >= len(text.encode()) // 16 - 1
    kinds = {
        c.split()[1]
        for c in cells.evaluate_all("cs => cs.map(c => c.className.baseVal ?? c.className)")
    }
    assert kinds <= {"skipped", "folded", "decoded"} and len(kinds) >= 2
    summary = page.get_by_test_id("fast-summary").text_content()
    assert "kernel simd128" in summary and "allocation" in summary
    assert page.get_by_test_id("fast-times").locator("rect").count() == 5
    type_text(page, "already normalized text")
    assert "zero copy" in page.get_by_test_id("fast-summary").text_content()
    assert watch.problems == []


def test_share_link_restores_the_view_in_a_fresh_page(browser, base_url, bert_reference):
    page, watch = open_page(browser, base_url)
    text = "Ἀθῆναι İstanbul"
    try:
        type_text(page, text)
        page.locator('input[name="opt"][value="strip_accents"]').uncheck()
        wait_for_text(page, text)
        go_to_step(page, 6)
        page.get_by_test_id("mode-ids").check()
        page.wait_for_function("() => location.hash.length > 3")
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=token-id]').length > 0"
        )
        link = page.evaluate("location.href")
        assert link.startswith(base_url + "#s=")
    finally:
        page.context.close()
    assert watch.problems == []

    fresh, watch = open_page(browser, link)
    try:
        fresh.wait_for_function(
            "() => document.querySelectorAll('[data-testid=token-id]').length > 0"
        )
        assert fresh.get_by_test_id("input").input_value() == text
        assert step_name(fresh) == "pre_tokens"
        assert not fresh.locator('input[name="opt"][value="strip_accents"]').is_checked()
        assert fresh.locator('input[name="opt"][value="lowercase"]').is_checked()
        assert fresh.get_by_test_id("mode-ids").is_checked()
        expected = reference_stages(text, strip=False)["lowercase"]
        words = [w for w, _ in bert_reference.pre_tokenizer.pre_tokenize_str(expected)]
        assert fresh.get_by_test_id("pre-token").all_text_contents() == words
        assert fresh.get_by_test_id("notice").is_hidden()
        # The gallery: every example is a link to this page; one opens its state.
        hrefs = fresh.get_by_test_id("example").evaluate_all("as => as.map(a => a.href)")
        assert len(hrefs) == 8 and all(h.startswith(base_url + "#s=") for h in hrefs)
        fresh.locator("#examples summary").click()
        fresh.get_by_test_id("example").nth(1).click()  # CJK
        fresh.wait_for_function(
            "() => document.querySelector('[data-testid=step]')?.dataset.step === 'cjk'"
        )
        assert "東京" in fresh.get_by_test_id("input").input_value()
    finally:
        fresh.context.close()
    assert watch.problems == []


def test_long_text_is_capped_with_show_all(shared, bert_reference):
    page, watch = shared
    text = "Ünïcödé words, repeated to make a text longer than the drawing cap. " * 50
    page.get_by_test_id("input").fill(text)
    page.get_by_test_id("show-all").wait_for()
    shown = page.get_by_test_id("token-view").text_content()
    assert len(shown) == 2000 and text.startswith(shown)
    n = len(bert_reference.encode(text).ids)
    assert page.get_by_test_id("count-tokens").text_content() == f"tokens{n:,}"
    page.get_by_test_id("show-all").click()
    wait_for_text(page, text)
    assert page.get_by_test_id("show-all").count() == 0
    go_to_step(page, 5)
    assert page.get_by_test_id("step-text").text_content() == reference_stages(text)["lowercase"]
    assert watch.problems == []


def test_local_tokenizer_files_and_copy_buttons(browser, base_url, bert_reference, tmp_path):
    page, watch = open_page(browser, base_url, permissions=["clipboard-read", "clipboard-write"])
    text = "Héllo, Wörld! naïve 東京"
    try:
        type_text(page, text)
        page.get_by_test_id("copy-ids").click()
        page.wait_for_function(
            "() => document.querySelector('#copy-status').textContent === 'copied'"
        )
        assert (
            json.loads(page.evaluate("navigator.clipboard.readText()"))
            == bert_reference.encode(text).ids
        )
        page.get_by_test_id("copy-link").click()
        page.wait_for_function(
            "() => document.querySelector('#share-status').textContent === 'link copied'"
        )
        assert page.evaluate("navigator.clipboard.readText()") == page.evaluate("location.href")

        # A vocab.txt picked from disk: read locally, the same ids as the reference.
        page.get_by_test_id("tokenizer-file").set_input_files(
            str(DIST / "data" / "bert-base-uncased" / "vocab.txt")
        )
        page.wait_for_function(
            "() => document.querySelector('[data-testid=tokenizer]').value === 'custom'"
        )
        page.wait_for_function("() => !location.hash")  # a local file is never put in a link
        go_to_step(page, 8)
        assert (
            json.loads(page.get_by_test_id("step-ids").text_content())
            == bert_reference.encode(text).ids
        )
        page.get_by_test_id("copy-link").click()
        # The handler is async: wait for its message rather than read the previous one.
        page.wait_for_function(
            "() => document.querySelector('#share-status').textContent.includes('built-in')",
            timeout=30_000,
        )

        # A tokenizer.json whose normalizer keeps case: the options follow the file.
        cased = json.loads(BERT_JSON.read_text(encoding="utf-8"))
        cased["normalizer"]["lowercase"] = False
        cased["normalizer"]["strip_accents"] = False
        path = tmp_path / "cased.json"
        path.write_text(json.dumps(cased), encoding="utf-8")
        page.get_by_test_id("tokenizer-file").set_input_files(str(path))
        page.wait_for_function(
            "() => !document.querySelector('input[name=opt][value=lowercase]').checked"
        )
        go_to_step(page, 5)
        page.wait_for_function(
            "want => document.querySelector('[data-testid=step-text]')?.textContent === want",
            arg=reference_stages(text, strip=False, lower=False)["lowercase"],
        )

        # A broken file: a short message, the tokenizer in use stays.
        bad = tmp_path / "bad.json"
        bad.write_text('{"model": <img src=x onerror=alert(1)>', encoding="utf-8")
        page.get_by_test_id("tokenizer-file").set_input_files(str(bad))
        page.wait_for_function("() => !document.querySelector('[data-testid=notice]').hidden")
        assert "Could not load" in page.get_by_test_id("notice").text_content()

        # Back to the built-in one.
        page.get_by_test_id("tokenizer").select_option("bert-base-uncased")
        page.wait_for_function("() => location.hash.startsWith('#s=')")
        assert page.locator('input[name="opt"][value="lowercase"]').is_checked()
    finally:
        page.context.close()
    assert watch.problems == []


def timeline_steps(page) -> int:
    return page.locator('[data-testid="timeline"] [data-step]').count()


def use_file(page, path):
    """Opens tokenizer file `path` as a visitor picking it would, and waits until the page
    uses it (its name is in the tokenizer list)."""
    page.get_by_test_id("tokenizer-file").set_input_files(str(path))
    page.wait_for_function(
        "name => document.querySelector('[data-testid=tokenizer] option[data-custom]')"
        "?.textContent.startsWith(name + ' ')",
        arg=path.name,
        timeout=60_000,
    )


def page_ids(page) -> list[int]:
    """The ids step's ids (the last step of the stepper)."""
    go_to_step(page, timeline_steps(page) - 1)
    return json.loads(page.get_by_test_id("step-ids").text_content())


def general_files_in_the_page(page, tmp_path):
    """Each general tokenizer file opened in the page: its ids, its last normalizer stage and
    its model's step agree with tokenizers 0.23.3 on mixed-script texts."""
    import general_files as g

    files = {
        "unigram-t5.json": g.unigram(),
        "gpt2-byte-level.json": g.gpt2(),
        "split-regex-bpe.json": g.regex_bpe(),
        "prefixed-wordlevel.json": g.prefixed_wordlevel(),
    }
    for k, (name, spec) in enumerate(files.items()):
        path = tmp_path / name
        path.write_text(spec, encoding="utf-8")
        t0 = page.evaluate("performance.now()")
        use_file(page, path)
        if k == 0:  # the general module's download and start included
            FIGURES["general_module_first_file_ms"] = round(page.evaluate("performance.now()") - t0)
        reference = g.reference_tokenizer(spec)
        model = json.loads(spec)["model"]["type"]
        for text in g.TEXTS:
            type_text(page, text)
            assert page_ids(page) == reference.encode(text).ids, (name, text)
            # The stages, "raw" first, then one per normalizer component, and the model's step.
            stages = timeline_steps(page) - 3
            assert stages >= 1
            go_to_step(page, stages - 1)
            normalized = reference.normalizer.normalize_str(text) if reference.normalizer else text
            assert page.get_by_test_id("step-text").text_content() == normalized, (name, text)
            go_to_step(page, stages + 1)
            assert page.get_by_test_id("step-name").text_content() == model
            tokens = page.get_by_test_id("model-token").all_text_contents()
            assert tokens == reference.encode(text).tokens, (name, text)
            go_to_step(page, stages)
            assert page.get_by_test_id("pre-token").count() > 0
    return reference


def test_any_tokenizer_file_loads_the_general_module(browser, base_url, bert_reference, tmp_path):
    import general_files as g

    page, watch = open_page(browser, base_url)
    try:
        # The first view never fetches the general module.
        assert not [u for u in watch.requests if "pkg-general" in u]
        last = general_files_in_the_page(page, tmp_path)
        assert [u for u in watch.requests if u.endswith("pkg-general/tokenprism_bg.wasm")]

        # Past the drawn part of a long text the stages are cut, the chars put before the
        # text kept: "«" (from no input char), "▁" and 2,000 chars from the input.
        text = "Long text, " * 250
        page.get_by_test_id("input").fill(text)
        page.get_by_test_id("show-all").wait_for()
        go_to_step(page, timeline_steps(page) - 4)
        shown = page.get_by_test_id("step-text").text_content()
        assert len(shown) == 2002 and shown == last.normalizer.normalize_str(text)[:2002]

        # A file that no module reads: a message, and the tokenizer in use stays.
        refused = tmp_path / "dropout.json"
        refused.write_text(g.refused(), encoding="utf-8")
        page.get_by_test_id("tokenizer-file").set_input_files(str(refused))
        page.wait_for_function("() => !document.querySelector('[data-testid=notice]').hidden")
        notice = page.get_by_test_id("notice").text_content()
        assert "Could not load" in notice and "dropout" in notice, notice
        type_text(page, g.TEXTS[1])
        assert page_ids(page) == last.encode(g.TEXTS[1]).ids

        # Back to the built-in BERT file: the BERT module again.
        page.get_by_test_id("tokenizer").select_option("bert-base-uncased")
        page.wait_for_function("() => location.hash.startsWith('#s=')")
        for text in g.TEXTS:
            type_text(page, text)
            assert page_ids(page) == bert_reference.encode(text).ids
            go_to_step(page, 5)
            lowercase = reference_stages(text)["lowercase"]
            assert page.get_by_test_id("step-text").text_content() == lowercase
        assert page.get_by_test_id("error").is_hidden(), page.get_by_test_id("error").text_content()
    finally:
        page.context.close()
    assert watch.problems == []


def pack(obj) -> str:
    raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return "s=" + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")


def compact(text):
    return {"t": text, "k": "bert-base-uncased", "o": "1111", "f": "1111", "s": "raw", "v": "text"}


def test_hostile_links(browser, base_url):
    xss = "<img src=x onerror=alert(1)>"
    cases = [
        # (fragment, text the box must then hold, whether a notice is expected)
        (pack(compact(xss)), xss, False),
        (
            pack(compact("</script><script>alert(1)</script>")),
            "</script><script>alert(1)</script>",
            False,
        ),
        (pack(compact("javascript:alert(1)")), "javascript:alert(1)", False),
        ("s=javascript:alert(1)", None, True),
        ("javascript:alert(document.cookie)", None, True),
        (pack(compact("a" * 10_000_000)), None, True),  # 10 MB of text
        (
            "s=" + base64.urlsafe_b64encode(zlib.compress(b'{"t":"\xff\xfe\xfd"}')).decode(),
            None,
            True,
        ),
        ("s=%E0%A4%A", None, True),  # broken percent-encoding
        ("s=" + "A" * 200_000, None, True),
    ]
    default = "Héllo, Wörld! 東京"
    fresh, watch = open_page(browser, base_url + "#" + cases[0][0])
    try:
        for k, (fragment, text, notice) in enumerate(cases):
            if k:
                fresh.evaluate("f => { location.hash = f; }", fragment)
            want = default if text is None else text
            print("hostile case", k, fragment[:40], flush=True)
            fresh.wait_for_function(
                "want => document.querySelector('[data-testid=input]').value === want",
                arg=want,
                timeout=90_000,
            )
            wait_for_text(fresh, want)
            if notice:
                # The default text may already be showing: wait for the link to be handled.
                fresh.wait_for_function(
                    "() => !document.querySelector('[data-testid=notice]').hidden", timeout=30_000
                )
            else:
                assert fresh.get_by_test_id("notice").is_hidden(), fragment[:40]
            # A link's own step (raw) or the default view's (lowercase).
            shown = want if text is not None else reference_stages(default)["lowercase"]
            assert fresh.get_by_test_id("step-text").text_content() == shown
            assert fresh.locator("#step-box img, #token-box img, script:not([src])").count() == 0
            # Each hostile case starts from a different state, so reset between them.
            fresh.evaluate("() => { location.hash = ''; }")
            fresh.wait_for_function(
                "want => document.querySelector('[data-testid=input]').value === want", arg=default
            )
        assert fresh.get_by_test_id("error").is_hidden(), fresh.get_by_test_id(
            "error"
        ).text_content()
    finally:
        fresh.context.close()
    assert watch.problems == []


def main_thread_task_cpu_ms(trace_path):
    """The CPU time (ms) of each task over 10 ms on the page's main thread in a Chrome trace."""
    data = json.loads(trace_path.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e["args"].get("name") == "CrRendererMain"
    }
    return [
        e["tdur"] / 1000
        for e in events
        if (e.get("pid"), e.get("tid")) in main
        and e.get("ph") == "X"
        and e.get("name") == "RunTask"
        and e.get("dur", 0) > 10_000
        and "tdur" in e
    ]


def test_one_megabyte_paste_keeps_the_main_thread_free(browser, base_url, bert_reference):
    page, watch = open_page(browser, base_url, permissions=["clipboard-read", "clipboard-write"])
    unit = "Héllo, Wörld! The quick brown fox jumps over the lazy dog; naïve café 東京.\n"
    big = unit * (1_000_000 // len(unit.encode()) + 1)
    try:
        page.evaluate("text => navigator.clipboard.writeText(text)", big)
        box = page.get_by_test_id("input")
        box.focus()
        box.press("Control+A")
        # Let start-up's last tasks be reported first, then count only what follows the paste.
        page.wait_for_timeout(1000)
        trace_path = ARTIFACTS / "paste_1mb_trace.json"
        ARTIFACTS.mkdir(exist_ok=True)
        browser.start_tracing(
            page=page,
            path=str(trace_path),
            categories=["devtools.timeline", "disabled-by-default-devtools.timeline"],
        )
        pasted_at = page.evaluate("performance.now()")
        box.press("Control+V")  # a real paste, from the clipboard
        page.wait_for_function(
            "n => document.querySelector('[data-testid=count-chars]')?.textContent === 'chars' + n",
            arg=f"{len(big):,}",
            timeout=60_000,
        )
        page.wait_for_timeout(500)
        browser.stop_tracing()
        cpu = main_thread_task_cpu_ms(trace_path)
        trace_path.unlink()
        FIGURES["paste_1mb_longest_task_cpu_ms"] = round(max(cpu, default=0.0), 1)
        tasks = [t for t in page.evaluate("window.__longtasks") if t["start"] >= pasted_at - 1]
        longest = max((t["ms"] for t in tasks), default=0.0)
        FIGURES["paste_1mb_bytes"] = len(big.encode())
        FIGURES["paste_1mb_longest_task_ms"] = round(longest, 1)
        FIGURES["paste_1mb_long_tasks_ms"] = [round(t["ms"]) for t in tasks]
        FIGURES["paste_1mb_worker_ms"] = round(
            page.evaluate(
                "parseFloat(document.querySelector('[data-testid=busy]').textContent.match(/[\\d.]+/)[0])"
            ),
            1,
        )
        n_tokens = len(bert_reference.encode(big).ids)
        assert page.get_by_test_id("count-tokens").text_content() == f"tokens{n_tokens:,}"
        assert page.get_by_test_id("count-bytes").text_content() == f"bytes{len(big.encode()):,}"
        # The box shows the start of the text; the drawing is capped, with a way to see all.
        assert page.get_by_test_id("big-input").is_visible()
        assert f"({len(big.encode()):,} bytes)" in page.get_by_test_id("big-input").text_content()
        assert big.startswith(box.input_value()) and len(box.input_value()) == 5000
        assert page.get_by_test_id("show-all").is_visible()
        assert page.get_by_test_id("token-view").text_content() == big[:2000]
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
        FIGURES["paste_1mb_load_per_core"] = round(load, 1)
        assert longest <= (LONG_TASK_LIMIT_MS if load <= 1.0 else OVERLOADED_LIMIT_MS), (
            load,
            tasks,
        )
        assert cpu and max(cpu) <= LONG_TASK_LIMIT_MS, sorted(cpu)[-5:]
    finally:
        page.context.close()
    assert watch.problems == []


def test_screenshots_light_dark_and_phone(browser, base_url):
    ARTIFACTS.mkdir(exist_ok=True)
    page, watch = open_page(browser, base_url, color_scheme="light")
    try:
        wait_for_text(page, EXAMPLE)
        go_to_step(page, 3)
        page.screenshot(path=str(ARTIFACTS / "page-light.png"), full_page=True)
        bg_light = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.get_by_test_id("theme").click()  # auto → light
        page.get_by_test_id("theme").click()  # light → dark
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        bg_dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg_dark != bg_light
        page.screenshot(path=str(ARTIFACTS / "page-dark.png"), full_page=True)
        page.get_by_test_id("theme").click()  # back to auto
    finally:
        page.context.close()
    phone, watch2 = open_page(
        browser, base_url, color_scheme="dark", viewport={"width": 390, "height": 844}
    )
    # Every tab, and every step of the stepper, with text that has long unbroken words.
    widths: dict[str, int] = {}

    wide: dict[str, list[str]] = {}

    def measure(where):
        widths[where] = phone.evaluate("document.documentElement.scrollWidth")
        if widths[where] > 390:
            wide[where] = phone.evaluate(WIDE_ELEMENTS)

    try:
        wait_for_text(phone, EXAMPLE)
        phone.screenshot(path=str(ARTIFACTS / "page-phone-dark.png"), full_page=True)
        type_text(phone, PHONE_TEXT)
        for k in range(len(phone.locator('[data-testid="timeline"] [data-step]').all())):
            go_to_step(phone, k)
            measure(f"tokenize step {k}")
        phone.get_by_test_id("mode-ids").check()
        measure("tokenize ids")
        # The model step's pre-token views: WordPiece's search, then (Qwen3) BPE's merges and
        # the chat template.
        model_step = len(phone.locator('[data-testid="timeline"] [data-step]').all()) - 2
        go_to_step(phone, model_step)
        phone.get_by_test_id("step-piece").nth(2).click()
        phone.wait_for_selector('[data-testid="wordpiece-steps"] ol')
        measure("wordpiece search")
        phone.get_by_test_id("tokenizer").select_option("qwen3")
        phone.wait_for_selector(
            '[data-testid="chat-section"][data-state="ready"][data-model="qwen3"]',
            timeout=READY_TIMEOUT_MS,
        )
        go_to_step(phone, len(phone.locator('[data-testid="timeline"] [data-step]').all()) - 2)
        phone.get_by_test_id("step-piece").nth(2).click()
        phone.wait_for_selector('[data-testid="bpe-merges"] .merges')
        measure("bpe merges and chat")
        phone.get_by_test_id("tab-bench").click()
        measure("bench")
        phone.get_by_test_id("tab-files").click()
        phone.get_by_test_id("chunk-input").fill(PHONE_TEXT)
        phone.get_by_test_id("chunk-max").fill("4")
        phone.get_by_test_id("chunk-run").click()
        phone.wait_for_selector('[data-testid="files-panel"][data-chunk="done"]')
        measure("files")
        phone.get_by_test_id("tab-train").click()
        phone.wait_for_selector('[data-testid="train-panel"][data-state="ready"]')
        phone.get_by_test_id("train-chapter").click()
        phone.wait_for_function(
            "() => ['done', 'exhausted'].includes("
            "document.querySelector('[data-testid=train-status]').dataset.state)",
            timeout=READY_TIMEOUT_MS,
        )
        phone.get_by_test_id("train-word").fill("низменность")
        phone.wait_for_selector("[data-testid=train-token]")
        measure("train chapter")
        phone.get_by_test_id("ex1-run").click()
        phone.wait_for_function(
            "() => document.querySelector('[data-testid=ex1-status]').dataset.count === '50'",
            timeout=READY_TIMEOUT_MS,
        )
        phone.get_by_test_id("ex3-run").click()
        phone.wait_for_selector("[data-testid=ex3-table]", timeout=300_000)
        phone.get_by_test_id("ex2-run").click()
        phone.wait_for_selector("[data-testid=ex2-table]", timeout=300_000)
        measure("train exercises")
        phone.screenshot(path=str(ARTIFACTS / "page-phone-train.png"), full_page=True)
    finally:
        phone.context.close()
    FIGURES.update({f"phone_width {k}": v for k, v in widths.items()})
    print(widths)
    assert all(w <= 390 for w in widths.values()), f"horizontal scroll at 390 px: {widths}, {wide}"
    assert watch.problems == [] and watch2.problems == []
