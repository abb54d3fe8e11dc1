"""The Files tab's DOM layer (Pyodide only; started by web/app.py): counts a whole text file
and chunks a text with the Tokenize tab's model, through tabs/files/client.js (tpcore), which
runs both in a worker of their own and moves the progress bar itself. The views are in view.py.
"""

import json

import tpcore
from js import document

from shell import models
from shell.browser import on, render
from tabs.files import view
from tabs.tokenize import app as tokenize_app

panel = document.getElementById("files-panel")
counting = False


def by_id(name):
    return document.getElementById(name)


def model_label():
    if tokenize_app.custom_label is not None:
        return tokenize_app.custom_label
    return models.BY_ID[tokenize_app.model_id or models.DEFAULT].label


def js_message(error):
    """A JS Error's message as Pyodide passes it on ("Error: the file is empty"), without the
    error's name."""
    text = str(error).strip().splitlines()[-1] if str(error).strip() else repr(error)
    for prefix in ("JsException: ", "Error: ", "Cancelled: "):
        text = text.removeprefix(prefix)
    return text


def show_count_error(message):
    box = by_id("count-error")
    box.hidden = not message
    box.textContent = message or ""


# ------------------------------------------------------------------------------------- count


async def count(file):
    global counting
    if counting:
        return
    counting = True
    docs = next(
        (str(r.value) for r in document.querySelectorAll('input[name="count-docs"]') if r.checked),
        "line",
    )
    by_id("files-model").textContent = model_label()
    show_count_error(None)
    render("count-result", [])
    by_id("count-cancel").disabled = False
    panel.dataset.state = "counting"
    name = str(file.name)
    try:
        reply = await tpcore.count_file(file, docs, "count-bar", "count-status")
    except Exception as e:
        message = js_message(e)
        if message == "cancelled":
            by_id("count-status").textContent = f"Cancelled: {name} was not counted to the end."
            panel.dataset.state = "cancelled"
        else:
            by_id("count-status").textContent = ""
            show_count_error(f"Could not count {name}: {message}")
            panel.dataset.state = "error"
        return
    finally:
        counting = False
        by_id("count-cancel").disabled = True
    result = json.loads(reply)
    render("count-result", view.summary(result))
    by_id("count-status").textContent = f"Counted {name}."
    panel.dataset.state = "done"


def on_count_file(event):
    files = event.target.files
    if files.length:
        picked = files.item(0)
        event.target.value = ""  # the same file again is a new change
        return count(picked)
    return None


def on_drop(event):
    files = event.dataTransfer.files if event.dataTransfer else None
    if not files or not files.length:
        return None
    # Not the Tokenize tab's drop (a tokenizer file, on the page's body).
    event.preventDefault()
    event.stopPropagation()
    return count(files.item(0))


def on_dragover(event):
    if event.dataTransfer and "Files" in list(event.dataTransfer.types):
        event.preventDefault()
        event.stopPropagation()


def on_cancel(_event):
    tpcore.cancel_count()


# ------------------------------------------------------------------------------------- chunk


async def run_chunk(_event=None):
    status = by_id("chunk-status")
    max_tokens = view.parse_max(str(by_id("chunk-max").value))
    if max_tokens is None:
        status.textContent = "Tokens per chunk: a whole number from 1."
        return
    by_id("files-model").textContent = model_label()
    panel.dataset.chunk = "working"
    status.textContent = "chunking…"
    try:
        reply = json.loads(await tpcore.chunk_text("chunk-input", max_tokens, view.SHOWN_CHARS))
    except Exception as e:
        status.textContent = f"Could not chunk the text: {js_message(e)}"
        panel.dataset.chunk = "error"
        return
    render("chunk-box", view.render_chunks(reply))
    status.textContent = view.chunk_status(reply, max_tokens)
    by_id("chunk-download").disabled = False
    panel.dataset.chunk = "done"


async def on_chunk_file(event):
    files = event.target.files
    if not files.length:
        return
    file = files.item(0)
    event.target.value = ""
    source = by_id("chunk-source")
    try:
        size = await tpcore.chunk_open_file(file)
    except Exception as e:
        source.textContent = js_message(e)
        return
    source.textContent = f"Chunking {file.name} ({int(size):,} bytes), not the box."
    by_id("chunk-use-box").hidden = False
    await run_chunk()


async def on_use_box(_event):
    tpcore.chunk_close_file()
    by_id("chunk-source").textContent = ""
    by_id("chunk-use-box").hidden = True
    await run_chunk()


def on_download(_event):
    tpcore.chunk_download()


def start():
    """Wires the tab's controls."""
    box = by_id("chunk-input")
    if not str(box.value):
        box.value = view.SAMPLE
    on(by_id("count-file"), "change", on_count_file)
    on(panel, "drop", on_drop)
    on(panel, "dragover", on_dragover)
    on(by_id("count-cancel"), "click", on_cancel)
    on(by_id("chunk-run"), "click", run_chunk)
    on(by_id("chunk-file"), "change", on_chunk_file)
    on(by_id("chunk-use-box"), "click", on_use_box)
    on(by_id("chunk-download"), "click", on_download)
    by_id("files-model").textContent = model_label()
    by_id("chunk-run").disabled = False
    by_id("tab-files").disabled = False
    panel.dataset.state = "ready"
