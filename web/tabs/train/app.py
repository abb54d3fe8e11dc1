"""The Train tab's DOM layer (Pyodide only; started by web/app.py): the training
controls and the three exercises. It talks to worker.js (its own module worker with the
BPE wasm module) and draws view.py's node trees with boot.js's builder.
"""

import asyncio
import json
import traceback

import tpcore
from js import URL, Blob, Object, Worker, document, window
from pyodide.ffi import create_proxy, to_js
from pyodide.http import pyfetch

from shell.browser import guarded_task, on, render
from tabs.train import view as tv

pending = {}  # request id -> (future, progress callback)
next_id = 0
merges = []  # the main trainer's merges so far: [left, right, count, new]
byte_level = False
target_vocab = 0
trained = False  # the main slot holds a trainer
training = None  # the main training under way (its request id and what the page shows of it)
latest = None  # the main training the page shows (under way, cancelled or over)
render_due = False
ex1_merges = []
texts = {}  # bundled text name -> text (fetched once)
timings = {}


def js_obj(d):
    return to_js(d, dict_converter=Object.fromEntries)


def by_id(name):
    return document.getElementById(name)


# ------------------------------------------------------------------------------- the worker


def on_message(event):
    data = event.data
    entry = pending.get(data.id)
    if entry is None:
        return
    future, progress = entry
    if hasattr(data, "progress") and data.progress is not None and not hasattr(data, "ok"):
        if progress is not None:
            try:
                progress(data.progress)
            except Exception:
                tpcore.show_error(traceback.format_exc())
        return
    del pending[data.id]
    if data.ok:
        future.set_result(data.result)
    else:
        future.set_exception(RuntimeError(str(data.error)))


worker = None  # the tab's module worker, started by `start`
message_proxy = create_proxy(on_message)


def request(kind, progress=None, **args):
    global next_id
    next_id += 1
    future = asyncio.get_event_loop().create_future()
    pending[next_id] = (future, progress)
    worker.postMessage(js_obj({"id": next_id, "type": kind, **args}))
    return future


def to_py(value):
    return value.to_py() if hasattr(value, "to_py") else value


# ------------------------------------------------------------------------------ training


def mode():
    box = document.querySelector('input[name="train-mode"]:checked')
    return str(box.value) if box is not None and box else "chapter"


def set_message(text):
    box = by_id("train-message")
    box.hidden = not text
    box.textContent = text or ""


def set_status(count, initial, ms, state, wasm_ms=None):
    status = by_id("train-status")
    status.textContent = tv.status_text(count, initial, target_vocab, ms, state)
    status.dataset.count = str(count)
    status.dataset.state = state
    status.dataset.ms = f"{ms:.3f}"
    if wasm_ms is not None:
        status.dataset.wasmMs = f"{wasm_ms:.3f}"


shown_rows = 0  # rows the merges table holds
merge_count = 0  # merges made (the worker holds them all; `merges` only the table's rows)
all_merges = None  # (count, every merge's pair), fetched from the worker for the word box


def draw_merges(final=True):
    """Redraws the table; while training, only when it has rows to add (past TABLE_ROWS
    rows the table stays as it is and only the count moves)."""
    global render_due, shown_rows
    render_due = False
    rows = min(len(merges), tv.TABLE_ROWS)
    if not final and rows == shown_rows:
        return
    shown_rows = rows
    render("train-merges", tv.render_merges(merges, byte_level, total=merge_count))


def draw_soon():
    global render_due
    if not render_due:
        render_due = True
        window.setTimeout(draw_proxy, 100)


draw_proxy = create_proxy(lambda: draw_merges(final=False) if render_due else None)


def stop_training():
    """Cancel, decided here and at once (in the click's own turn): the status says "cancelled"
    at the count on screen, the table and count stop there, and the worker is told to keep just
    those merges. Whatever the worker did meanwhile (it may be far ahead of what this thread has
    drawn, or done) is not shown; its later answer to the training only confirms this."""
    global training
    run, training = training, None
    if run is None:
        return
    run["cancelled"] = True
    asyncio.ensure_future(
        guarded_task(request("cancel", slot="main", train=run["id"], keep=run["count"]))
    )
    draw_merges()
    set_status(run["count"], run["initial"], run["ms"], "cancelled", run["wasm_ms"])
    by_id("train-cancel").disabled = True
    by_id("train-start").disabled = False


async def start_training(text=None, vocab_raw=None, train_mode=None):
    global \
        merges, \
        byte_level, \
        target_vocab, \
        trained, \
        shown_rows, \
        merge_count, \
        all_merges, \
        training, \
        latest
    text = str(by_id("train-text").value) if text is None else text
    vocab_raw = str(by_id("train-vocab").value) if vocab_raw is None else vocab_raw
    train_mode = mode() if train_mode is None else train_mode
    vocab, message = tv.parse_vocab(vocab_raw, train_mode, text)
    set_message(message)
    if vocab is None:
        return None
    stop_training()  # one still under way (the chapter button) ends where it is
    merges = []
    merge_count = 0
    all_merges = None
    byte_level = train_mode == "byte"
    target_vocab = vocab
    trained = True
    render("train-merges", tv.render_merges([], byte_level))
    shown_rows = 0
    render("train-steps", [])
    by_id("train-cancel").disabled = False
    by_id("train-start").disabled = True
    by_id("train-download").disabled = True
    run = {"count": 0, "initial": 0, "ms": 0.0, "wasm_ms": 0.0}

    def progress(p):
        global merge_count
        if training is not run:
            return  # cancelled: the worker's batches after that are not shown
        if p.merges.length:
            merges.extend(to_py(p.merges))
        run.update(
            count=int(p.count), initial=int(p.initial), ms=float(p.ms), wasm_ms=float(p.wasmMs)
        )
        merge_count = run["count"]
        set_status(run["count"], run["initial"], run["ms"], "running", run["wasm_ms"])
        draw_soon()

    set_status(0, 0, 0.0, "running")
    future = request(
        "train",
        progress,
        slot="main",
        text=text,
        vocab=vocab,
        byteLevel=byte_level,
        tableRows=tv.TABLE_ROWS,
    )
    run["id"] = next_id
    training = latest = run
    try:
        result = to_py(await future)
    finally:
        if training is run:
            training = None
        if latest is run:
            by_id("train-cancel").disabled = True
            by_id("train-start").disabled = False
    if latest is not run:
        return None  # a newer training owns the page
    if run.get("cancelled"):
        # What the page showed when Cancel was clicked (the worker may have gone on, even to the end).
        result = {
            "count": run["count"],
            "initial": run["initial"],
            "ms": run["ms"],
            "wasmMs": run["wasm_ms"],
            "state": "cancelled",
        }
    merge_count = result["count"]
    draw_merges()
    set_status(result["count"], result["initial"], result["ms"], result["state"], result["wasmMs"])
    by_id("train-download").disabled = not byte_level
    await tokenize_word()
    return result


def on_cancel(_event):
    stop_training()


async def tokenize_word(_event=None):
    word = str(by_id("train-word").value)
    if not trained or not word:
        render("train-steps", [])
        return
    global all_merges
    final = json.loads(str(await request("tokenize", slot="main", word=word)))
    if all_merges is None or all_merges[0] != merge_count:
        everything = json.loads(str(await request("merges", slot="main")))
        all_merges = (len(everything), [(m[0], m[1]) for m in everything])
    pairs = all_merges[1]
    steps = tv.merge_steps(word, pairs, byte_level)
    render("train-steps", tv.render_steps(word, steps, final, byte_level))


async def on_chapter(_event):
    by_id("train-text").value = tv.CHAPTER_CORPUS
    by_id("train-vocab").value = str(tv.CHAPTER_VOCAB)
    by_id("train-mode-chapter").checked = True
    by_id("train-corpus").value = ""
    if not str(by_id("train-word").value):
        by_id("train-word").value = "низко"
    result = await start_training()
    if result:
        timings["chapter_ms"] = result["ms"]


async def bundled(name):
    if name not in texts:
        response = await pyfetch(f"data/train/{name}.txt")
        if not response.ok:
            raise RuntimeError(f"data/train/{name}.txt: HTTP {response.status}")
        texts[name] = await response.string()
    return texts[name]


async def on_corpus(_event):
    name = str(by_id("train-corpus").value)
    if name:
        by_id("train-text").value = await bundled(name)


async def on_download(_event):
    text = str(await request("tokenizerJson", slot="main"))
    blob = Blob.new(to_js([text]), js_obj({"type": "application/json"}))
    link = document.createElement("a")
    link.href = URL.createObjectURL(blob)
    link.download = "tokenizer.json"
    link.click()
    window.setTimeout(create_proxy(lambda: URL.revokeObjectURL(link.href)), 1000)


async def fill_corpora():
    response = await pyfetch("data/train/index.json")
    index = await response.json()
    select = by_id("train-corpus")
    for entry in index:
        option = document.createElement("option")
        option.value = entry["name"]
        option.textContent = f"{entry['label']} — {entry['bytes']:,} bytes"
        select.appendChild(option)


# ----------------------------------------------------------------------------- exercises


async def on_ex1(_event):
    global ex1_merges
    text = await bundled(tv.EXERCISE1_TEXT)
    ex1_merges = []
    by_id("ex1-run").disabled = True
    box = by_id("ex1-status")
    box.textContent = "training…"

    def progress(p):
        ex1_merges.extend(to_py(p.merges))

    try:
        result = to_py(
            await request(
                "train",
                progress,
                slot="ex1",
                text=text,
                vocab=tv.MAX_VOCAB,
                byteLevel=False,
                maxMerges=tv.EXERCISE1_MERGES,
            )
        )
    finally:
        by_id("ex1-run").disabled = False
    box.textContent = f"{result['count']} merges on {len(text.encode()):,} bytes of Russian in {tv.format_ms(result['ms'])}"
    box.dataset.count = str(result["count"])
    render("ex1-box", tv.render_exercise1(ex1_merges))


async def exercise_request(n, kind, texts):
    """The references' answer for exercise n: `kind` ("counts" or "spans") of `texts` by every
    tokenizer of the table; its Run button is disabled meanwhile and its status says what
    loads. Returns (status box, answer)."""
    box = by_id(f"ex{n}-status")
    button = by_id(f"ex{n}-run")
    button.disabled = True

    def progress(p):
        if getattr(p, "loading", None):
            box.textContent = f"loading {p.loading}…"

    try:
        names = [k for k, _ in tv.FERTILITY]
        return box, to_py(
            await request(kind, progress, names=names, texts=js_obj(texts), slot="main")
        )
    finally:
        button.disabled = False


async def on_ex2(_event):
    en, ru = await bundled("parallel-en"), await bundled("parallel-ru")
    box, counts = await exercise_request(2, "counts", {"en": en, "ru": ru})
    n_words = {"en": tv.words(en), "ru": tv.words(ru)}
    box.textContent = (
        "" if "trained" in counts else "Train a tokenizer above to add it to the table."
    )
    by_id("ex2-box").dataset.ready = "1"
    render("ex2-box", tv.render_fertility(tv.fertility_rows(counts, n_words), n_words))


async def on_ex3(_event):
    box, spans = await exercise_request(3, "spans", {"code": tv.INDENT_SNIPPET})
    box.textContent = ""
    table = tv.indent_table({k: [tuple(t) for t in v["code"]] for k, v in spans.items()})
    render("ex3-box", tv.render_indent(table))


def start():
    global worker
    worker = Worker.new(
        URL.new("tabs/train/worker.js", document.baseURI).href, js_obj({"type": "module"})
    )
    worker.addEventListener("message", message_proxy)
    # Tab switching is the BPE tab's (every tab: the panel its aria-controls names).
    on(by_id("train-start"), "click", lambda e: start_training())
    on(by_id("train-cancel"), "click", on_cancel)
    on(by_id("train-chapter"), "click", on_chapter)
    on(by_id("train-corpus"), "change", on_corpus)
    on(by_id("train-word"), "input", tokenize_word)
    on(by_id("train-download"), "click", on_download)
    on(by_id("ex1-run"), "click", on_ex1)
    on(by_id("ex2-run"), "click", on_ex2)
    on(by_id("ex3-run"), "click", on_ex3)
    render("ex3-snippet-box", tv.render_snippet())
    asyncio.ensure_future(guarded_task(fill_corpora()))
    for control in ("train-start", "train-chapter", "ex1-run", "ex2-run", "ex3-run"):
        by_id(control).disabled = False
    by_id("train-panel").dataset.state = "ready"
