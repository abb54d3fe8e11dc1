"""The Quirks tab's DOM layer (Pyodide only; web/app.py calls `start`): the editable examples
of view.py through two to four models, each section drawn per model.

The models load into the tokenize tab's worker slots the Compare tab uses (compare/app.py's
`ensure_loaded`): a model picked in both tabs loads once, and neither tab unloads one the
other shows. Every change traces each example with each model and redraws the sections.
"""

import asyncio
import json

import tpcore
from js import document, window
from pyodide.ffi import create_proxy, to_js

from shell import tabbar
from shell.browser import guarded_task, on, render
from tabs.compare import app as compare_app
from tabs.quirks import view
from tabs.tokenize import view as tokenize_view

state = view.default_quirks()
used = False  # the tab was opened at least once (its state then goes into links)
traces = {}  # model id -> its traces of `traced`, in view.texts order
traced = None
scans = {}  # model id -> its vocabulary's entries that do not encode back (the worker's JSON)
seq = 0  # the latest refresh; older ones stop at their next await
changed = None  # the tokenize tab's write_hash
link_of = None  # the tokenize tab's current_link

panel = document.getElementById("quirks-panel")
busy = document.getElementById("quirks-busy")
PREFIX = "quirks"


def by_id(name):
    return document.getElementById(name)


def active():
    return not panel.hidden


def inputs():
    """The example inputs: (state key, index or None, element)."""
    out = [("word", None, by_id("quirks-word")), ("letter", None, by_id("quirks-letter"))]
    out += [("numbers", j, by_id(f"quirks-number-{j}")) for j in range(len(state["numbers"]))]
    out += [("variants", j, by_id(f"quirks-variant-{j}")) for j in range(len(state["variants"]))]
    out.append(("rare", None, by_id("quirks-rare")))
    return out


def write_inputs():
    for key, j, box in inputs():
        box.value = state[key] if j is None else state[key][j]


def read_inputs():
    for key, j, box in inputs():
        if j is None:
            state[key] = str(box.value)
        else:
            state[key][j] = str(box.value)


def link_state():
    """What the share link carries for this tab (nothing until it was used)."""
    if not used:
        return {}
    out = {"quirks": json.loads(json.dumps(state))}
    if active():
        out["tab"] = "quirks"
    return out


def notify():
    if changed is not None:
        changed()


def show_notice(message):
    notice = by_id("quirks-notice")
    notice.hidden = not message
    notice.textContent = message or ""


# ---------------------------------------------------------------------------------- models


def draw_pickers():
    compare_app.draw_model_pickers(PREFIX, state["models"])


async def set_models(ids):
    state["models"] = ids
    draw_pickers()
    compare_app.unload_unused()
    await refresh()
    notify()


async def on_pick(event):
    ids = compare_app.picked_models(event, state["models"])
    if ids is not None:
        await set_models(ids)


async def on_remove(event):
    ids = compare_app.removed_models(event, state["models"])
    if ids is not None:
        await set_models(ids)


async def on_add(_event):
    ids = compare_app.added_model(state["models"])
    if ids is not None:
        await set_models(ids)


# ---------------------------------------------------------------------------------- tracing


def draw(ids, statuses):
    # Traces of older examples are not drawn against these.
    shown = traces if traced == view.texts(state) else {}
    render("quirks-letters", view.render_letters(state, ids, shown, statuses))
    render("quirks-numbers", view.render_numbers(state, ids, shown, statuses))
    render("quirks-variants", view.render_variants(state, ids, shown, statuses))
    render("quirks-rare-rows", view.render_rare(state, ids, shown, statuses, scans))


async def scan():
    """Each picked model's vocabulary entries that do not encode back to them, and those the
    bundled corpora never produce (computed once per model by the core, in its worker slot)."""
    button = by_id("quirks-scan")
    button.disabled = True
    try:
        for m in list(state["models"]):
            if m in scans:
                continue
            busy.textContent = f"scanning {m}…"
            await compare_app.ensure_loaded(m, "quirks-progress")
            args = to_js(
                {"slot": m, "limit": view.MISSES_SHOWN}, dict_converter=compare_app.js_object
            )
            scans[m] = json.loads(str(await tpcore.request("roundTrip", args)))
            busy.textContent = f"encoding the bundled corpora with {m}…"
            scans[m]["unseen"] = json.loads(str(await tpcore.request("neverProduced", args)))
            draw(list(state["models"]), {})
    finally:
        busy.textContent = ""
        button.disabled = False
        panel.dataset.scanned = ",".join(m for m in state["models"] if m in scans)


async def refresh():
    global seq, traces, traced
    seq += 1
    mine = seq
    read_inputs()
    texts = view.texts(state)
    ids = list(state["models"])
    panel.dataset.state = "working"
    busy.textContent = "working…"
    tasks = {m: compare_app.ensure_loaded(m, "quirks-progress") for m in ids}
    statuses = {m: "loading…" for m in ids if not tasks[m].done()}
    if statuses:
        draw(ids, statuses)
    fresh = {}
    for m in ids:
        try:
            await tasks[m]
        except Exception as e:  # a failed download: say so, try again on the next change
            if compare_app.loads.get(m) is tasks[m]:
                del compare_app.loads[m]
            statuses[m] = f"Could not load {m}: {e}"
            continue
        if mine != seq:
            return
        got = []
        for text in texts:
            args = to_js(
                {"text": text, "cap": tokenize_view.RENDER_CAP, "slot": m},
                dict_converter=compare_app.js_object,
            )
            try:
                reply = await tpcore.request("trace", args)
            except Exception as e:  # the core failed; it restarts with every slot
                if mine == seq:
                    show_notice(f"The tokenizer core failed on {text!r} with {m} ({e}).")
                    busy.textContent = ""
                    panel.dataset.state = "failed"
                return
            if mine != seq:
                return
            got.append(json.loads(str(reply.trace)))
        fresh[m] = got
        statuses.pop(m, None)
        traces, traced = dict(fresh), texts
        draw(ids, statuses)
        await asyncio.sleep(0)
        if mine != seq:
            return
    traces, traced = fresh, texts
    show_notice(None)
    draw(ids, statuses)
    busy.textContent = ""
    panel.dataset.models = ",".join(ids)
    panel.dataset.state = "ready"
    notify()


def start_refresh():
    asyncio.ensure_future(guarded_task(refresh()))


refresh_proxy = create_proxy(start_refresh)
debounce_handle = None


def on_input(_event):
    global debounce_handle
    if debounce_handle is not None:
        window.clearTimeout(debounce_handle)
    debounce_handle = window.setTimeout(refresh_proxy, 60)


# ------------------------------------------------------------------------------------ tabs


async def open_tab(write=True):
    global used
    tabbar.show_tab("quirks")
    used = True
    draw_pickers()
    if traced != view.texts(state) or set(traces) != set(state["models"]):
        await refresh()
    if write:
        notify()


async def restore(new_state):
    """Opens a link's Quirks state (the tokenize tab's restore): its models and examples."""
    global state, used
    if new_state.get("quirks") is not None:
        state = json.loads(json.dumps(new_state["quirks"]))
        used = True
        write_inputs()
        draw_pickers()
        compare_app.unload_unused()
    if new_state.get("tab") == "quirks":
        await open_tab(write=False)
    elif active():
        tabbar.show_tab("wordpiece")


async def on_copy_link(_event):
    status = by_id("quirks-share-status")
    address = link_of() if link_of is not None else None
    if address is None:
        status.textContent = "these examples are too long to share"
        return
    ok = await tpcore.copy_text(address)
    status.textContent = "link copied" if ok else address


def start(on_change, current_link):
    global changed, link_of
    changed, link_of = on_change, current_link
    compare_app.users.append(lambda: state["models"])
    write_inputs()
    draw_pickers()
    on(by_id("tab-quirks"), "click", lambda e: open_tab())
    pickers = by_id("quirks-pickers")
    on(pickers, "change", on_pick)
    on(pickers, "click", on_remove)
    on(by_id("quirks-add"), "click", on_add)
    on(by_id("quirks-examples"), "input", on_input)
    on(by_id("quirks-copy-link"), "click", on_copy_link)
    on(by_id("quirks-scan"), "click", lambda e: scan())
    by_id("tab-quirks").disabled = False
