"""Page load times of one or more builds of the page, alternated in one run.

    python scripts/bench/bench_load.py dist [other-dist ...] [--rounds 5] [--incognito] [--json out]

Each round opens every build in turn, in Debian's Chromium (the tests' flags): a fresh visit
(a new, empty browser profile), then a repeat visit in the same profile once the service worker
has cached the build. Builds alternate within a round, so a machine whose load drifts affects
each alike; the figures are medians over the rounds. By default every visit gets a real
(on-disk) profile, as a user's browser has one: only there does Chromium keep its code cache
(compiled JavaScript and WebAssembly) between visits. `--incognito` uses Playwright's
in-memory contexts instead (as tests/web/test_page_core.py does).

Figures are milliseconds since navigation start, from window.tokenprismTimes (boot.js) and
the paint timing; wasm_compile_ms is the time Pyodide's WebAssembly.instantiateStreaming took.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from paths import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

# Times every WebAssembly instantiation of the page (Pyodide's is the big one).
INIT_SCRIPT = """
if (typeof window !== "undefined") {
  window.__wasm = [];
  for (const name of ["instantiateStreaming", "compileStreaming"]) {
    const original = WebAssembly[name];
    WebAssembly[name] = async function (source, ...rest) {
      const t0 = performance.now();
      const response = await source;
      const result = await original.call(this, response, ...rest);
      window.__wasm.push({name, url: response.url, start: t0, ms: performance.now() - t0});
      return result;
    };
  }
}
"""

FIGURES = """() => {
  const t = window.tokenprismTimes;
  const paint = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null;
  const pyWasm = window.__wasm.find((w) => w.url.endsWith("pyodide.asm.wasm"));
  return {shell_visible: paint, core_started: t.coreStarted, core_loaded: t.coreLoaded,
          first_tokens: t.firstResult,
          python_downloaded: t.pythonDownloaded, python_start: t.pythonStart,
          wasm_compile: pyWasm ? pyWasm.ms : null,
          python_ready: t.pythonReady, app_start: t.appStart ?? null, page_ready: t.ready};
}"""


def visit(context, url):
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(
        '[data-testid="app"]:is([data-state="ready"], [data-state="failed"])', timeout=180_000
    )
    state = page.get_by_test_id("app").get_attribute("data-state")
    if state != "ready":
        raise RuntimeError(page.get_by_test_id("error").text_content())
    figures = page.evaluate(FIGURES)
    return page, figures


def fresh_and_repeat(playwright, url, incognito, browser):
    with tempfile.TemporaryDirectory(prefix="tp-profile-") as profile:
        if incognito:
            context = browser.new_context()
        else:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS
            )
        context.add_init_script(INIT_SCRIPT)
        try:
            page, fresh = visit(context, url)
            page.evaluate("navigator.serviceWorker.ready.then(() => true)")
            # Let the browser write its caches (the code cache is written after the fact).
            page.wait_for_timeout(3000)
            page.close()
            page, repeat = visit(context, url)
            page.close()
        finally:
            context.close()
    return fresh, repeat


def median(rows, key):
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(values)) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--incognito", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from playwright import sync_api

    sys.path.insert(0, str(ROOT / "scripts" / "build"))
    import serve

    runs = {str(b): {"fresh": [], "repeat": []} for b in args.builds}
    loads = []
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(serve.background(b)) for b in args.builds]
        p = stack.enter_context(sync_api.sync_playwright())
        browser = (
            p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            if args.incognito
            else None
        )
        for r in range(args.rounds):
            for build, url in zip(args.builds, urls):
                loads.append(os.getloadavg()[0])
                fresh, repeat = fresh_and_repeat(p, url, args.incognito, browser)
                runs[str(build)]["fresh"].append(fresh)
                runs[str(build)]["repeat"].append(repeat)
                print(f"round {r} {build}: fresh {fresh}\n    repeat {repeat}", flush=True)
        if browser:
            browser.close()
    keys = [
        "shell_visible",
        "core_started",
        "core_loaded",
        "first_tokens",
        "python_downloaded",
        "python_start",
        "wasm_compile",
        "python_ready",
        "app_start",
        "page_ready",
    ]
    summary = {
        "load_avg_1min": [round(min(loads), 1), round(max(loads), 1)],
        "cores": os.cpu_count(),
        "rounds": args.rounds,
        "profile": "incognito" if args.incognito else "on-disk",
    }
    print(f"load average {summary['load_avg_1min']} on {os.cpu_count()} cores; medians, ms")
    print(f"{'build':<28} {'visit':<7} " + " ".join(f"{k:>17}" for k in keys))
    for build, visits in runs.items():
        summary[build] = {}
        for kind, rows in visits.items():
            med = {k: median(rows, k) for k in keys}
            summary[build][kind] = med
            print(f"{build:<28} {kind:<7} " + " ".join(f"{str(med[k]):>17}" for k in keys))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
