"""The page's accessibility: axe-core 4.14.1 (./build.sh setup installs it into the cache;
the page never loads it) on every tab in the light and the dark theme, and every control
reachable with the Tab key.

Needs `./build.sh dist` first (dist/ is its output).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from web_env import launch, open_page

READY_TIMEOUT_MS = 120_000
AXE = (
    Path(os.environ.get("TOKENPRISM_CACHE") or Path.home() / ".cache" / "tokenprism")
    / "npm-test"
    / "node_modules"
    / "axe-core"
    / "axe.min.js"
)
# Each tab's button and the selector that says its panel is ready to read.
TABS = {
    "tokenize": ("tab-wordpiece", '[data-testid="app"][data-state="ready"]'),
    # The tokenize tab again with Qwen3: its chat template and a pre-token's merges.
    "chat": ("tab-wordpiece", '[data-testid="app"][data-state="ready"]'),
    "files": ("tab-files", '[data-testid="files-panel"][data-state="ready"]'),
    "bench": ("tab-bench", '[data-testid="bench"]'),
    "train": ("tab-train", '[data-testid="train-panel"][data-state="ready"]'),
}
# Experimental in axe 4.14, so off unless asked for: a control whose accessible name does not
# hold its visible label (speech users say what they see).
AXE_OPTIONS = {"rules": {"label-content-name-mismatch": {"enabled": True}}}


@pytest.fixture
def browser(playwright):
    browser = launch(playwright)
    yield browser
    browser.close()


def show_tab(page, name):
    button, ready = TABS[name]
    page.locator(f"#{button}").click()
    page.wait_for_selector(ready, timeout=READY_TIMEOUT_MS)
    assert page.locator(f"#{button}").get_attribute("aria-selected") == "true"


def fill_tab(page, name):
    """What a visitor would open on the tab: every <details>, a chat template and a
    pre-token's merges (Qwen3 in the tokenize tab), a text's chunks (Files), a trained example
    and a word split by it (Train)."""
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    if name == "chat":
        page.get_by_test_id("tokenizer").select_option("qwen3")
        page.wait_for_selector(
            '[data-testid="chat-section"][data-state="ready"][data-model="qwen3"]',
            timeout=READY_TIMEOUT_MS,
        )
        model = page.locator('[data-testid="timeline"] [data-step]').count() - 2
        page.locator(f'[data-testid="timeline"] [data-step="{model}"] .tl-hit').click()
        page.get_by_test_id("step-piece").nth(1).click()
        page.wait_for_selector('[data-testid="bpe-merges"] .merges')
    elif name == "files":
        page.get_by_test_id("chunk-max").fill("12")
        page.get_by_test_id("chunk-run").click()
        page.wait_for_selector('[data-testid="files-panel"][data-chunk="done"]')
    elif name == "train":
        page.get_by_test_id("train-chapter").click()
        page.wait_for_function(
            "() => ['done', 'exhausted'].includes("
            "document.querySelector('[data-testid=train-status]').dataset.state)",
            timeout=READY_TIMEOUT_MS,
        )
        page.get_by_test_id("train-word").fill("низменность")
        page.wait_for_selector("[data-testid=train-token]")


def axe_findings(page) -> list[str]:
    """axe's violations of impact serious or critical on the page as it is, one line each."""
    if page.evaluate("typeof axe") == "undefined":
        page.add_script_tag(content=AXE.read_text())
    result = page.evaluate("options => axe.run(document, options)", AXE_OPTIONS)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} -> {node['target']} {node['failureSummary']}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
        for node in v["nodes"]
    ]


def test_axe_every_tab_light_and_dark(browser, base_url):
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run ./build.sh setup", pytrace=False)
    found: dict[str, list[str]] = {}
    problems = []
    for scheme in ("light", "dark"):
        # bypass_csp: the page's policy refuses the script tag that brings axe in.
        page, watch = open_page(browser, base_url, bypass_csp=True, color_scheme=scheme)
        try:
            for name in TABS:
                show_tab(page, name)
                fill_tab(page, name)
                found[f"{name}/{scheme}"] = axe_findings(page)
        finally:
            page.context.close()
        problems += watch.problems
    for where, lines in found.items():
        print(f"{where}: {len(lines)} serious or critical")
        for line in lines:
            print("   ", line)
    assert all(not lines for lines in found.values()), {k: len(v) for k, v in found.items()}
    assert problems == []


# A focusable element's name for the comparison: radios and tabs by group, elements with a tabindex
# by the nearest element with an id (a roving group: one stop, arrow keys within), so that
# reaching one of a group counts for the group.
KEY = """e => e.type === 'radio' ? 'radio:' + e.name
  : e.getAttribute('role') === 'tab' ? 'tabs'
  : e.hasAttribute('tabindex') && !e.id ? 'group:' + (e.parentElement.closest('[id]')?.id ?? '')
  : (e.id || e.outerHTML.slice(0, 80))"""
# What should take keyboard focus: visible, enabled controls (not those of a disabled fieldset:
# the BERT switches while another model is in use).
CONTROLS = f"""() => [...document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex], [role=button], [role=tab]')]
  .filter(e => !e.matches(':disabled') && !e.closest('[hidden]')
               && (e.getClientRects().length > 0 || e.classList.contains('visually-hidden'))
               && getComputedStyle(e).visibility !== 'hidden')
  .map({KEY})"""
FOCUSED = f"() => ({KEY})(document.activeElement)"


def test_every_control_is_reachable_with_the_tab_key(browser, base_url):
    page, watch = open_page(browser, base_url, bypass_csp=True)
    try:
        for name in TABS:
            show_tab(page, name)
            fill_tab(page, name)
            want = set(page.evaluate(CONTROLS))
            # From the top of the page: Tab until focus comes round again.
            page.evaluate("document.activeElement?.blur()")
            page.locator("h1").click()
            reached: list[str] = []
            for _ in range(4 * len(want) + 10):
                page.keyboard.press("Tab")
                focused = page.evaluate(FOCUSED)
                if reached and focused == reached[0]:
                    break
                reached.append(focused)
            missing = want - set(reached)
            assert not missing, (name, sorted(missing))
    finally:
        page.context.close()
    assert watch.problems == []
