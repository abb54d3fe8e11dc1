"""The Bench tab's DOM layer (Pyodide only; web/app.py calls `start`): runs driver.js's
benchmark (workers) and draws view.py's chart. Tab switching (every tab) is shell/tabbar.py's:
it shows the panel a tab's aria-controls names.
"""

import json

from js import document, window
from pyodide.ffi import create_proxy, to_js

from shell.browser import found, on, render
from tabs.bench import view


async def on_bench_run(event):
    bench = window.tokenprismBench
    button = document.getElementById("bench-run")
    status = document.getElementById("bench-status")
    button.disabled = True
    progress = create_proxy(lambda text: setattr(status, "textContent", text))
    try:
        options = {
            "corpora": [str(document.getElementById("bench-corpus").value)],
            "tokenizers": [str(document.getElementById("bench-tokenizer").value)],
            "onProgress": progress,
        }
        # Tests pass a smaller protocol through data attributes of the panel.
        panel = document.getElementById("bench")
        if panel.dataset.rounds:
            options["rounds"] = int(panel.dataset.rounds)
        if panel.dataset.minMs:
            options["minMs"] = float(panel.dataset.minMs)
        js_options = to_js(options, dict_converter=window.Object.fromEntries)
        results = json.loads(await bench.run(js_options))
        native = await bench.native()
        native = native.to_py() if found(native) else None
        render("bench-out", view.render(results, native))
        status.textContent = "done"
        document.getElementById("bench").dataset.state = "done"
    finally:
        button.disabled = False
        progress.destroy()


def start():
    on(document.getElementById("bench-run"), "click", on_bench_run)
    document.getElementById("bench").dataset.state = "ready"
