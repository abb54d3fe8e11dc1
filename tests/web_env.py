"""What the browser tests share: the built site (dist/), a local server for it (scripts/build/serve.py)
and Debian's Chromium. A missing dist/ fails the test with instructions; it is never skipped."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

import serve
from paths import CHROMIUM, CHROMIUM_ARGS, ROOT

# The built site the page tests run against: dist/, or another build in $TOKENPRISM_DIST.
DIST = Path(os.environ.get("TOKENPRISM_DIST") or ROOT / "dist")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


# An init script: collects long tasks (>50 ms on the main thread) from the very start of a page.
LONGTASK_SCRIPT = """
window.__longtasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longtasks.push({start: e.startTime, ms: e.duration});
}).observe({type: "longtask", buffered: true});
"""


def require_dist(path: Path = DIST / "index.html") -> None:
    if not path.exists():
        pytest.fail(f"{path} is missing: run ./build.sh build", pytrace=False)


@contextmanager
def served(directory: Path = DIST, prefix: str = "/", plain: bool = False):
    """scripts/build/serve.py serving `directory` on a free port under `prefix`; yields the site's
    URL. plain=True: MIME types only, as a plain static host (default: serve.py's headers)."""
    require_dist(directory / "index.html")
    with serve.background(directory, prefix=prefix, plain=plain) as url:
        yield url


# The app once it stops loading: "ready", or "failed" (the page then shows why).
APP_SETTLED = '[data-testid="app"]:is([data-state="ready"], [data-state="failed"])'
# Pyodide's start on a loaded machine.
READY_TIMEOUT_MS = 180_000


def wait_ready(page, timeout_ms: int = READY_TIMEOUT_MS) -> None:
    """Waits until the app stops loading; fails unless it is ready, with the page's error."""
    page.wait_for_selector(APP_SETTLED, state="attached", timeout=timeout_ms)
    state = page.get_by_test_id("app").get_attribute("data-state")
    assert state == "ready", page.get_by_test_id("error").text_content()
    assert not page.get_by_test_id("loading").is_visible()


def open_page(browser, url, *, context=None, init_script=None, while_loading=None, **context_args):
    """`url` in a new page, once the app is ready: (page, Watch). The page opens in `context`,
    or in a new context of `browser` made with Playwright's `context_args` (viewport,
    color_scheme, permissions, bypass_csp...) and `init_script` run first in every page.
    `while_loading(page)` checks or waits for what shows before the app is ready."""
    if context is None:
        context = browser.new_context(**context_args)
        if init_script is not None:
            context.add_init_script(init_script)
    page = context.new_page()
    watch = Watch(page)
    page.goto(url)
    if while_loading is not None:
        while_loading(page)
    wait_ready(page)
    return page, watch


def launch(playwright):
    """Debian's Chromium with the tests' flags."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@contextmanager
def chromium():
    """A running Playwright and one Chromium in it."""
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        browser = launch(p)
        try:
            yield browser
        finally:
            browser.close()


class Watch:
    """What went wrong on a page: console errors (the page's and its workers'), page errors,
    failed requests, HTTP errors and dialogs (dismissed), in `problems`; and every URL it
    requested, in `requests`."""

    def __init__(self, page):
        self.problems: list[str] = []
        self.requests: list[str] = []
        page.on(
            "console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}")
        )
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} {r.failure}"))
        page.on(
            "response",
            lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"),
        )
        page.on("request", lambda r: self.requests.append(r.url))

        def dialog(d):
            self.problems.append(f"dialog: {d.type} {d.message}")
            d.dismiss()

        page.on("dialog", dialog)
