"""The Compare tab's DOM layer (Pyodide only; web/app.py calls `start`): one text through two
to four of the picker's models, a row each (view.py).

Each model loads into its own slot of the tokenize tab's worker (tpcore.load_model with a
`slot`: the model's id), once, when it is first picked; the two models dropped from the set
last stay loaded, older ones are unloaded. Every change traces the text with each model and
redraws the rows. Only a link opening writes the text box, so what is typed while models load
stays and is what gets traced.
"""

import asyncio
import json

import tpcore
from js import document, window
from pyodide.ffi import create_proxy, to_js

from shell import models, tabbar
from shell.browser import found, guarded_task, on, render
from tabs.compare import view
from tabs.tokenize import view as tokenize_view

state = view.default_compare()
used = False  # the tab was opened at least once (its state then goes into links)
loads = {}  # model id -> the task loading it into its worker slot
dropped = []  # loaded models no longer in the set, the most recently dropped last
KEEP_DROPPED = 2
traces = {}  # model id -> its trace of `traced_text`
traced_text = None
seq = 0  # the latest refresh; older ones stop at their next await
sizes = {}  # the model files' sizes (shell/models.py's SIZES_FILE)
users = []  # other tabs' model sets (callables): their slots are not unloaded
changed = None  # the tokenize tab's write_hash: the state changed, rewrite the address
link_of = None  # the tokenize tab's current_link

panel = document.getElementById("compare-panel")
box = document.getElementById("compare-input")
busy = document.getElementById("compare-busy")


def by_id(name):
    return document.getElementById(name)


def active():
    return not panel.hidden


def show_notice(message):
    notice = by_id("compare-notice")
    notice.hidden = not message
    notice.textContent = message or ""


def link_state():
    """What the share link carries for this tab (nothing until it was used)."""
    if not used:
        return {}
    out = {"compare": {"models": list(state["models"]), "text": str(box.value)}}
    if active():
        out["tab"] = "compare"
    return out


def notify():
    if changed is not None:
        changed()


def js_object(entries):
    return window.Object.fromEntries(entries)


# ---------------------------------------------------------------------------------- models


async def load(model_id, progress):
    m = models.BY_ID[model_id]
    spec = {**m.request(), "slot": model_id}
    await tpcore.load_model(json.dumps(spec), m.label, progress)


def ensure_loaded(model_id, progress="compare-progress"):
    """The task loading `model_id` into its slot, started on first use (by this tab or the
    Quirks tab: both trace with the same slots). `progress`: the status line of the tab that
    asked first."""
    task = loads.get(model_id)
    if task is None:
        task = asyncio.ensure_future(load(model_id, progress))
        loads[model_id] = task
    return task


def in_use() -> set:
    """The models some tab shows: this tab's set and every other user's (`users`)."""
    out = set(state["models"])
    for more in users:
        out |= set(more())
    return out


def unload_unused():
    """Unloads the models no tab shows, but the last KEEP_DROPPED of them: picking one back
    (trying one model against another, say) then needs no second load."""
    keep = in_use()
    for model_id in list(loads):
        if model_id in keep:
            if model_id in dropped:
                dropped.remove(model_id)
        elif model_id not in dropped:
            dropped.append(model_id)
    while len(dropped) > KEEP_DROPPED:
        model_id = dropped.pop(0)
        del loads[model_id]
        traces.pop(model_id, None)
        asyncio.ensure_future(
            guarded_task(
                tpcore.request("unload", to_js({"slot": model_id}, dict_converter=js_object))
            )
        )


def draw_model_pickers(prefix, ids):
    """A picker per model in `ids` (the tokenize tab's families) into `{prefix}-pickers`, each
    with a remove button while more than two are left; `{prefix}-add` is off at four."""
    holder = by_id(f"{prefix}-pickers")
    holder.replaceChildren()
    for k, model_id in enumerate(ids):
        item = document.createElement("div")
        item.className = "cmp-picker"
        select = document.createElement("select")
        select.id = f"{prefix}-model-{k}"
        select.dataset.testid = f"{prefix}-model-{k}"
        select.dataset.slot = str(k)
        select.setAttribute("aria-label", f"model {k + 1}")
        item.appendChild(select)
        if len(ids) > view.MIN_MODELS:
            remove = document.createElement("button")
            remove.type = "button"
            remove.className = "cmp-remove"
            remove.dataset.slot = str(k)
            remove.dataset.testid = f"{prefix}-remove-{k}"
            remove.setAttribute("aria-label", f"remove model {k + 1}")
            remove.textContent = "×"
            item.appendChild(remove)
        holder.appendChild(item)
        render(select.id, models.render_picker(sizes))
        select.value = model_id
    by_id(f"{prefix}-add").disabled = len(ids) >= view.MAX_MODELS


def picked_models(event, ids):
    """The model set after a pick in one of `ids`' pickers, or None when nothing changes."""
    select = event.target.closest("select")
    if not found(select):
        return None
    k, picked = int(select.dataset.slot), str(select.value)
    ids = list(ids)
    if picked not in models.BY_ID or ids[k] == picked:
        return None
    # A model already in the set trades places with the one it replaces.
    if picked in ids:
        ids[ids.index(picked)] = ids[k]
    ids[k] = picked
    return ids


def removed_models(event, ids):
    """The model set after a click on a remove button, or None when nothing changes."""
    button = event.target.closest("button.cmp-remove")
    if not found(button) or len(ids) <= view.MIN_MODELS:
        return None
    ids = list(ids)
    del ids[int(button.dataset.slot)]
    return ids


def added_model(ids):
    """The model set with the first catalogue model not in it added, or None at four."""
    if len(ids) >= view.MAX_MODELS:
        return None
    spare = next(m.id for m in models.MODELS if m.id not in ids)
    return [*ids, spare]


def draw_pickers():
    draw_model_pickers("compare", state["models"])


async def set_models(ids):
    state["models"] = ids
    draw_pickers()
    unload_unused()
    await refresh()
    notify()


async def on_pick(event):
    ids = picked_models(event, state["models"])
    if ids is not None:
        await set_models(ids)


async def on_remove(event):
    ids = removed_models(event, state["models"])
    if ids is not None:
        await set_models(ids)


async def on_add(_event):
    ids = added_model(state["models"])
    if ids is not None:
        await set_models(ids)


async def load_sizes():
    global sizes
    try:
        sizes = json.loads(await tpcore.fetch_text(models.SIZES_FILE))
    except Exception:  # sizes are a courtesy: the pickers work without them
        return
    draw_pickers()


# ---------------------------------------------------------------------------------- tracing


def draw(ids, text, statuses):
    # Traces of an older text are not drawn against this one.
    shown = traces if traced_text == text else {}
    render("compare-rows", view.render_rows(ids, text, shown, statuses))


async def refresh():
    global seq, traced_text, traces
    seq += 1
    mine = seq
    text = str(box.value)
    if len(text) > view.MAX_TEXT:
        show_notice(
            f"Compare takes up to {view.MAX_TEXT:,} characters; this text has {len(text):,}."
        )
        return
    show_notice(None)
    ids = list(state["models"])
    panel.dataset.state = "working"
    busy.textContent = "working…"
    tasks = {m: ensure_loaded(m) for m in ids}
    statuses = {m: "loading…" for m in ids if not tasks[m].done()}
    # Rows are redrawn as each trace comes in only while some model loads; else once, when
    # all are in, so typing does not flicker.
    progressive = bool(statuses)
    if progressive:
        draw(ids, text, statuses)
    fresh = {}
    for m in ids:
        try:
            await tasks[m]
        except Exception as e:  # a failed download: say so, try again on the next change
            if loads.get(m) is tasks[m]:
                del loads[m]
            statuses[m] = f"Could not load {models.BY_ID[m].label}: {e}"
            progressive = True
            continue
        if mine != seq:
            return
        args = to_js(
            {"text": text, "cap": tokenize_view.RENDER_CAP, "slot": m}, dict_converter=js_object
        )
        try:
            reply = await tpcore.request("trace", args)
        except Exception as e:  # the core failed on this text; it restarts with every slot
            if mine == seq:
                show_notice(
                    f"The tokenizer core failed on this text with {models.BY_ID[m].label} ({e}). "
                    "It has been restarted with the same models: edit the text to go on."
                )
                busy.textContent = ""
                panel.dataset.state = "failed"
            return
        if mine != seq:
            return
        fresh[m] = json.loads(str(reply.trace))
        statuses.pop(m, None)
        if progressive:
            traces, traced_text = dict(fresh), text
            draw(ids, text, statuses)
            await asyncio.sleep(0)
            if mine != seq:
                return
    traces, traced_text = fresh, text
    draw(ids, text, statuses)
    busy.textContent = ""
    state["text"] = text
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
    # Short text at once; long text after a pause in typing (every model traces all of it).
    delay = 0 if len(str(box.value)) < 5_000 else 150
    debounce_handle = window.setTimeout(refresh_proxy, delay)


# ------------------------------------------------------------------------------------ tabs


async def open_tab(write=True):
    global used
    tabbar.show_tab("compare")
    used = True
    if traced_text != str(box.value) or set(traces) != set(state["models"]):
        await refresh()
    if write:
        notify()


async def restore(new_state):
    """Opens a link's Compare state (the tokenize tab's restore): its models and text."""
    global state, used
    if new_state.get("compare") is not None:
        state = dict(new_state["compare"])
        used = True
        box.value = state["text"]
        draw_pickers()
        unload_unused()
    if new_state.get("tab") == "compare":
        await open_tab(write=False)
    elif active():
        tabbar.show_tab("wordpiece")


async def on_copy_link(_event):
    status = by_id("compare-share-status")
    address = link_of() if link_of is not None else None
    if address is None:
        status.textContent = "this text is too long to share"
        return
    ok = await tpcore.copy_text(address)
    status.textContent = "link copied" if ok else address


def start(on_change, current_link):
    global changed, link_of
    changed, link_of = on_change, current_link
    box.value = state["text"]
    draw_pickers()
    asyncio.ensure_future(guarded_task(load_sizes()))
    on(by_id("tab-compare"), "click", lambda e: open_tab())
    pickers = by_id("compare-pickers")
    on(pickers, "change", on_pick)
    on(pickers, "click", on_remove)
    on(by_id("compare-add"), "click", on_add)
    on(box, "input", on_input)
    on(by_id("compare-copy-link"), "click", on_copy_link)
    by_id("tab-compare").disabled = False
