"""The page's DOM layer; runs only in Pyodide, started by boot.js.

It reads the text box, calls the wasm core once per change (`tpcore.trace`, registered by
boot.js, returns the trace as JSON) and puts view.py's node tree into the page. Everything
worth testing lives in view.py.
"""

import json
import traceback

from js import document
from pyodide.ffi import create_proxy

import tpcore
import view

app = document.getElementById("app")
text_box = document.getElementById("input")
output = document.getElementById("output")
error_box = document.getElementById("error")


def to_dom(node):
    """Builds DOM elements for a view.Node; text becomes text nodes, never parsed markup."""
    if isinstance(node, str):
        return document.createTextNode(node)
    element = document.createElement(node.tag)
    for name, value in node.attrs.items():
        element.setAttribute(name, value)
    for child in node.children:
        element.appendChild(to_dom(child))
    return element


def update(_event=None):
    try:
        trace = json.loads(tpcore.trace(text_box.value))
        output.replaceChildren(to_dom(view.render_trace(trace)))
    except Exception:
        tpcore.show_error(traceback.format_exc())


# Kept in a module global: the proxy must outlive this script for the listener to work.
on_input = create_proxy(update)
text_box.addEventListener("input", on_input)
update()
document.getElementById("loading").hidden = True
app.dataset.state = "ready"
