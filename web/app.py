"""The page's Python, run by boot.js (in __main__, from its folder, with top-level await):
starts every tab's DOM layer (tabs/<tab>/app.py) once boot.js has the runtimes up.

The tokenize tab answers first: it opens the link the page came with (an old BPE tab's
link included) and draws its trace; then the page is ready, and the Bench and Train tabs wire up.
"""

from js import document, location

from tabs.bench import app as bench_app
from tabs.compare import app as compare_app
from tabs.files import app as files_app
from tabs.quirks import app as quirks_app
from tabs.tokenize import app as tokenize_app
from tabs.train import app as train_app

tokenize_app.start()
compare_app.start(tokenize_app.write_hash, tokenize_app.current_link)
quirks_app.start(tokenize_app.write_hash, tokenize_app.current_link)
# Top-level await: boot.js compiles this file as runPythonAsync does.
await tokenize_app.restore(str(location.hash), starting=True)  # noqa: F704
document.getElementById("loading").hidden = True
document.getElementById("app").dataset.state = "ready"
bench_app.start()
train_app.start()
files_app.start()
