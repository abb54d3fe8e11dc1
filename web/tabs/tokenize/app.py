"""The tokenize tab's DOM layer (the BERT normalizer and WordPiece, step by step); runs only in
Pyodide, started by web/app.py.

It keeps the page's state (text, options, current step, view), asks the tokenizer worker
for a trace on every change (`tpcore.trace_input`, one request per change, debounced for
long text) and hands view.py's node trees to boot.js's builder. The logic worth testing
lives in view.py. It also keeps the address in step with the page's state (shell/link.py),
the BPE tab's part included.
"""

import asyncio
import json

import tpcore
from js import document, history, location, window
from pyodide.ffi import create_proxy, to_js

from shell import chars, link, models, tabbar
from shell.browser import found, guarded_task, on, render
from shell.dom import el
from tabs.compare import app as compare_app
from tabs.quirks import app as quirks_app
from tabs.tokenize import chat, gallery, view

app = document.getElementById("app")
text_box = document.getElementById("input")
notice = document.getElementById("notice")
busy = document.getElementById("busy")

state = link.default_state()
trace = None
cap = view.RENDER_CAP
inspect_at = -1  # char index of the current stage under inspection
seq = 0  # the latest trace request; older replies are dropped
has_bert = True
custom_name = None  # a user-loaded tokenizer's file name (never put in links)
custom_label = None  # the picker's text for it
model_id = models.DEFAULT  # the picked model in use (None while a visitor's file is)
sizes = {}  # the model files' sizes in bytes (shell/models.py's SIZES_FILE)
# The model step's picked pre-token and how the model split it (a Unigram lattice, WordPiece's
# search, BPE's merges: view.PIECE_VIEWS).
piece_pick = None  # the picked pre-token (index)
piece_shown = None  # (piece, its drawing) last fetched for the model step
piece_seq = 0  # the latest request; older replies are dropped


def show_notice(message):
    notice.hidden = not message
    notice.textContent = message or ""


# ------------------------------------------------------------------------------- state sync


def page_base():
    """The page's own address without the fragment, so links work under any sub-path."""
    return str(location.href).split("#", 1)[0]


def full_state():
    """The tab's state with its chat messages (chat.py), plus the Compare and Quirks tabs'
    parts (tabs/compare/app.py, tabs/quirks/app.py), as links carry them."""
    return {
        **state,
        **chat.link_state(),
        **compare_app.link_state(),
        **quirks_app.link_state(),
    }


def write_hash():
    if custom_name is not None:
        history.replaceState(None, "", page_base())
        return
    fragment = link.encode_state(full_state()) if state["text"] is not None else None
    history.replaceState(None, "", page_base() + ("#" + fragment if fragment else ""))


def current_link():
    if custom_name is not None:
        return None
    # The box's text as it is now, not the last trace's: a link taken right after typing
    # carries what was typed even while its trace is still on the way.
    if tpcore.input_length() > link.MAX_LINK_TEXT:
        return None
    fragment = link.encode_state({**full_state(), "text": tpcore.input_text()})
    return None if fragment is None else page_base() + "#" + fragment


def sync_controls():
    for box in document.querySelectorAll('input[name="opt"]'):
        box.checked = bool(state["options"][box.value])
    for box in document.querySelectorAll('input[name="fast"]'):
        box.checked = bool(state["fast"][box.value])
    for radio in document.querySelectorAll('input[name="mode"]'):
        radio.checked = radio.value == state["view"]


def flags(keys, values):
    return to_js([bool(values[k]) for k in keys])


async def configure():
    args = {"fast": [bool(state["fast"][k]) for k in view.FAST_KEYS]}
    if has_bert:
        args["options"] = [bool(state["options"][k]) for k in view.OPTION_KEYS]
    await tpcore.request("configure", to_js(args, dict_converter=js_object))


def js_object(entries):
    return window.Object.fromEntries(entries)


# --------------------------------------------------------------------------------- rendering


def current_step():
    return view.step_index(trace, state["step"])


def render_timeline():
    k = current_step()
    document.getElementById("prev").disabled = k == 0
    document.getElementById("next").disabled = k == len(view.steps(trace)) - 1
    box = document.getElementById("timeline")
    focused = box.contains(document.activeElement)
    render("timeline", view.render_timeline(trace, k))
    if focused:
        # The chart's nodes are new: keep the focus on the current step's row.
        box.querySelector(".current").focus()


def step_node():
    """The current step's tree; the model step's piece drawing if the one shown is the
    picked pre-token's."""
    drawing = None
    if piece_shown is not None and piece_shown[0] == picked_piece():
        drawing = piece_shown[1]
    return view.render_step(trace, current_step(), trace["stages"][0]["text"], piece_pick, drawing)


def picked_piece():
    k = view.picked_index(trace, piece_pick) if trace is not None else None
    return None if k is None else trace["pre_tokens"][k]["text"]


def render_step_body():
    render("step-box", step_node())
    tpcore.highlight_char("step-box", -1)
    show_inspector(-1)
    start_piece_view()


def start_piece_view():
    """Fetches the picked pre-token's view (a Unigram lattice, WordPiece's search, BPE's
    merges) when the model step shows one and its drawing is not the one shown."""
    box = document.querySelector("#step-box [data-testid=step-piece-box]")
    piece = picked_piece()
    if found(box) and (piece_shown is None or piece_shown[0] != piece):
        asyncio.ensure_future(guarded_task(show_piece_view(piece)))


# The worker's arguments for each model's view of one piece, besides the piece.
PIECE_ARGS = {
    "lattice": {"max_nodes": view.LATTICE_MAX_NODES},
    "wordpiece": {"max_attempts": view.WORDPIECE_MAX_ATTEMPTS},
    "merges": {},
}


async def show_piece_view(piece):
    """Asks the worker how the model splits `piece` (the request for this model's family) and
    draws the reply into the model step."""
    global piece_seq, piece_shown
    piece_seq += 1
    mine = piece_seq
    kind = view.piece_view(trace) or "lattice"
    draw = view.PIECE_RENDERERS[kind]
    if piece is None:
        drawing = draw(None, None)
    else:
        args = {"text": piece, **PIECE_ARGS[kind]}
        try:
            reply = await tpcore.request(kind, to_js(args, dict_converter=js_object))
            drawing = draw(piece, json.loads(reply))
        except Exception as e:
            drawing = draw(piece, None, str(e).removeprefix("Error: "))
    if mine != piece_seq or piece != picked_piece():
        return
    piece_shown = (piece, drawing)
    if not found(document.querySelector("#step-box [data-testid=step-piece-box]")):
        return
    # The step is drawn again with the piece's view in it: the focus stays on its chip.
    focused = document.activeElement
    in_step = found(focused) and found(focused.closest("#step-box"))
    chip = focused.getAttribute("data-step-piece") if in_step else None
    render("step-box", step_node())
    if chip is not None:
        again = document.querySelector(f'#step-box [data-step-piece="{chip}"]')
        if found(again):
            again.focus()


def render_step():
    render_timeline()
    render_step_body()


def render_tokens():
    render("counts-box", view.render_counts(trace))
    render("token-box", view.render_tokens_over_text(trace, state["view"]))


async def render_all():
    # Each part in its own task, so no single one holds the main thread for long.
    # Building a view's nodes and drawing them are separate tasks too (each costs tens of ms
    # in Pyodide for the 2,000 drawn chars; together they made a 1 MB paste's longest task).
    mine = seq
    await asyncio.sleep(0)  # after the trace's json.loads
    render_timeline()
    await asyncio.sleep(0)
    node = step_node()
    await asyncio.sleep(0)
    render("step-box", node)
    tpcore.highlight_char("step-box", -1)
    show_inspector(-1)
    start_piece_view()
    await asyncio.sleep(0)
    render("counts-box", view.render_counts(trace))
    token_node = view.render_tokens_over_text(trace, state["view"])
    await asyncio.sleep(0)
    render("token-box", token_node)
    await asyncio.sleep(0)
    render("fast-box", view.render_fast(trace))
    total = view.totals(trace)
    if total.get("truncated"):
        render(
            "cap-box",
            el(
                "p",
                {"class": "cap"},
                f"Showing the first {total['shown_chars']:,} of {total['chars']:,} characters; "
                "counts and times cover all of them. ",
                el("button", {"data-testid": "show-all"}, "Show all"),
            ),
        )
    else:
        render("cap-box", [])
    document.getElementById("copy-ids").disabled = False
    # A newer refresh (a link just opened, new text) owns the address now.
    if mine == seq:
        write_hash()


def show_all(event):
    global cap
    if not found(event.target.closest("button")):
        return None
    cap = 1 << 31
    return refresh()


async def refresh():
    global seq, trace
    seq += 1
    mine = seq
    busy.textContent = "working…"
    try:
        reply = await tpcore.trace_input(cap)
    except Exception as e:  # over the size limit, or the core crashed: boot.js said so
        if "tokenprism: " not in str(e):
            raise
        busy.textContent = ""
        return
    if mine != seq:
        return
    await asyncio.sleep(0)
    if mine != seq:
        return
    trace = json.loads(reply)
    busy.textContent = f"(worker: {trace['total']['worker_ms']:.1f} ms)"
    # The text for links: the trace's own copy when it is whole; too long ones are not shared
    # (and reading a megabyte out of the text box costs time).
    if not trace["total"]["truncated"]:
        state["text"] = trace["stages"][0]["text"]
    elif tpcore.input_length() <= link.MAX_LINK_TEXT:
        state["text"] = tpcore.input_text()
    else:
        state["text"] = None
    await render_all()
    app.dataset.state = "ready"


# --------------------------------------------------------------------------------- inspector


def stage_chars():
    k = current_step()
    if k >= len(trace["stages"]):
        return None, None
    stage = trace["stages"][k]
    return stage["text"], view.stage_orig(stage)


def show_inspector(index):
    global inspect_at
    box = document.getElementById("inspector")
    text, orig = stage_chars() if trace else (None, None)
    if text is None or not (0 <= index < len(text)):
        inspect_at = -1
        render(
            "inspector",
            el(
                "p",
                {"class": "muted"},
                "Point at a character (or focus the text and use ← →) to inspect it.",
            ),
        )
        return
    inspect_at = index
    info = chars.char_info(
        text[index], None if orig is None else orig[index], trace["stages"][0]["text"]
    )
    rows = [
        (
            "char",
            chars.visible(info["char"]) if chars.invisible_label(info["char"]) else info["char"],
        ),
        ("code point", info["code_point"]),
        ("name", info["name"]),
        ("category", info["category"]),
        ("UTF-8", info["utf8"]),
        ("from", info["origin"]),
    ]
    render(
        "inspector",
        el(
            "dl",
            {"class": "inspect", "data-testid": "inspect"},
            *(
                el(
                    "div",
                    {"data-testid": f"inspect-{k.replace(' ', '-')}"},
                    el("dt", {}, k),
                    el("dd", {}, v),
                )
                for k, v in rows
            ),
        ),
    )
    tpcore.highlight_char("step-box", index)
    del box


def on_step_pointer(event):
    if not found(event.target.closest(".stage-text")):
        return
    index = tpcore.char_at_point("step-box", event.clientX, event.clientY)
    if index >= 0 and index != inspect_at:
        show_inspector(index)


def on_step_key(event):
    if not found(event.target.closest(".stage-text")):
        return
    text, _ = stage_chars()
    if not text:
        return
    if event.key in ("ArrowLeft", "ArrowRight"):
        event.preventDefault()
        event.stopPropagation()
        step = 1 if event.key == "ArrowRight" else -1
        show_inspector(
            max(0, min(len(text) - 1, (inspect_at if inspect_at >= 0 else -step) + step))
        )
    elif event.key in ("Home", "End"):
        event.preventDefault()
        event.stopPropagation()
        show_inspector(0 if event.key == "Home" else len(text) - 1)


def on_step_focus(event):
    if found(event.target.closest(".stage-text")) and inspect_at < 0:
        show_inspector(0)


# ------------------------------------------------------------------------------------ events


def pick_piece(k):
    global piece_pick
    piece_pick = k
    render_step_body()
    chip = document.querySelector(f'#step-box [data-step-piece="{k}"]')
    if found(chip):
        chip.focus()


def on_piece_click(event):
    chip = event.target.closest("[data-step-piece]")
    if found(chip) and trace is not None:
        pick_piece(int(chip.dataset.stepPiece))


def on_piece_key(event):
    chip = event.target.closest("[data-step-piece]")
    if not found(chip) or trace is None:
        return
    k = int(chip.dataset.stepPiece)
    if event.key in ("Enter", " "):
        event.preventDefault()
        pick_piece(k)
    elif event.key in ("ArrowLeft", "ArrowRight"):
        # The chips' own arrows, not the stepper's.
        event.preventDefault()
        event.stopPropagation()
        n = min(len(trace.get("pre_tokens") or []), view.PIECE_PICK_CAP)
        pick_piece(max(0, min(n - 1, k + (1 if event.key == "ArrowRight" else -1))))


def go(delta):
    if trace is None:
        return
    all_steps = view.steps(trace)
    k = max(0, min(len(all_steps) - 1, current_step() + delta))
    state["step"] = all_steps[k]["name"]
    render_step()
    write_hash()


def on_key(event):
    tag = str(event.target.tagName).lower()
    if tag in ("textarea", "input", "select") or event.altKey or event.ctrlKey or event.metaKey:
        return
    if event.key == "ArrowLeft":
        event.preventDefault()
        go(-1)
    elif event.key == "ArrowRight":
        event.preventDefault()
        go(1)


def on_timeline_click(event):
    row = event.target.closest("[data-step]")
    if found(row) and trace is not None:
        state["step"] = view.steps(trace)[int(row.dataset.step)]["name"]
        render_step()
        write_hash()


debounce_handle = None


def on_input(_event):
    global debounce_handle, cap
    cap = view.RENDER_CAP
    if debounce_handle is not None:
        window.clearTimeout(debounce_handle)
    # Short text: at once. Long text: wait for a pause in typing.
    delay = 0 if tpcore.input_length() < 20_000 else 150
    debounce_handle = window.setTimeout(refresh_proxy, delay)


def start_refresh():
    asyncio.ensure_future(guarded_task(refresh()))


refresh_proxy = create_proxy(start_refresh)


async def on_option(event):
    box = event.target
    group = "options" if box.name == "opt" else "fast"
    state[group][box.value] = bool(box.checked)
    await configure()
    await refresh()


def on_mode(event):
    state["view"] = event.target.value
    if trace is not None:
        render_tokens()
        write_hash()


def on_token_hover(event):
    target = event.target.closest("[data-t]")
    k = int(target.dataset.t) if found(target) else -1
    tpcore.highlight_token(k)
    if trace is not None and 0 <= k < len(trace["ids"]):
        document.getElementById("token-status").textContent = view.token_summary(trace, k)


async def on_copy_ids(_event):
    ok = await tpcore.copy_ids()
    document.getElementById("copy-status").textContent = "copied" if ok else "copy failed"


async def on_copy_link(_event):
    address = current_link()
    status = document.getElementById("share-status")
    if address is None:
        status.textContent = (
            "links hold only the page's built-in models, not your file"
            if custom_name
            else f"text longer than {link.MAX_LINK_TEXT:,} chars cannot be shared"
        )
        return
    ok = await tpcore.copy_text(address)
    status.textContent = "link copied" if ok else address


def draw_picker():
    render("tokenizer", models.render_picker(sizes, custom_label))
    document.getElementById("tokenizer").value = "custom" if custom_name else model_id


async def load_sizes():
    global sizes
    try:
        sizes = json.loads(await tpcore.fetch_text(models.SIZES_FILE))
    except Exception:  # sizes are a courtesy: the picker works without them
        return
    draw_picker()


async def use_tokenizer_reply(reply, name, picked=None, from_link=False):
    """Takes the worker's answer to a load: a visitor's file called `name`, or the model
    `picked`. A link's own switches and step win over the file's (`from_link`)."""
    global has_bert, custom_name, custom_label, model_id, piece_shown
    data = json.loads(reply)
    piece_shown = None  # drawn by the previous model
    info = data.get("info", data)
    custom_name = name
    model_id = picked
    has_bert = info.get("bert_normalizer") is not None
    if has_bert and not from_link:
        state["options"] = {k: bool(info["bert_normalizer"][k]) for k in view.OPTION_KEYS}
    document.getElementById("options").disabled = not has_bert
    # BERT's normalizer switches and fast paths mean nothing to another pipeline: hidden.
    for element_id in ("options", "fast-options", "fast"):
        document.getElementById(element_id).hidden = not has_bert
    if name is not None:
        custom_label = f"{name} (local file, {info.get('model', 'WordPiece')})"
    else:
        custom_label = None
        state["tokenizer"] = picked
        # A step of another model's pipeline ("replace#2") means nothing in BERT's.
        if picked == models.DEFAULT and state["step"] not in link.STEP_NAMES:
            state["step"] = link.default_state()["step"]
    draw_picker()
    sync_controls()
    await configure()
    await refresh()
    # What is in use now, for tests and styles: a model's id, or "custom".
    app.dataset.model = picked or "custom"
    asyncio.ensure_future(guarded_task(chat.show_for(picked)))


async def pick_model(picked, from_link=False):
    """Loads model `picked` (its file downloaded on first use); on failure says why and keeps
    the tokenizer in use. Whether it loaded."""
    m = models.BY_ID[picked]
    try:
        reply = await tpcore.load_model(json.dumps(m.request()), m.label)
    except Exception as e:
        show_notice(f"Could not load {m.label}: {e}")
        draw_picker()
        return False
    show_notice(None)
    await use_tokenizer_reply(reply, None, picked, from_link)
    return True


async def load_file(file):
    """A visitor's tokenizer file (a File), read in the browser."""
    try:
        reply = await tpcore.load_file(file, json.dumps(models.file_request(str(file.name))))
    except Exception as e:  # a bad file: say so, keep the current tokenizer
        show_notice(f"Could not load that file: {e}")
        return
    show_notice(None)
    await use_tokenizer_reply(reply, json.loads(reply)["name"])


def on_file(event):
    if event.target.files.length:
        return load_file(event.target.files.item(0))


def on_drop(event):
    files = event.dataTransfer.files if event.dataTransfer else None
    if files and files.length:
        event.preventDefault()
        return load_file(files.item(0))


def on_dragover(event):
    if event.dataTransfer and "Files" in list(event.dataTransfer.types):
        event.preventDefault()


async def on_pick(event):
    picked = str(event.target.value)
    if picked in models.BY_ID and (picked != model_id or custom_name is not None):
        await pick_model(picked)


async def on_hash(event):
    # The fragment this event is about: by the time the handler runs, a render that was
    # already under way may have rewritten location.hash with the previous state.
    url = str(event.newURL)
    await restore("#" + url.split("#", 1)[1] if "#" in url else "")


async def restore(fragment, starting=False):
    global state, cap, seq
    new_state, message = link.decode_state(fragment)
    if message or not starting:  # at the start, boot.js may have said why a paste was refused
        show_notice(message)
    if link.encode_state(new_state) == link.encode_state(full_state()) and trace is not None:
        return
    seq += 1  # whatever is still rendering belongs to the previous state
    # Text typed (pasted, dropped) while the page started is the visitor's: it wins over the
    # default example and the link's text, and the page stays on the tab it was typed in.
    keep_input = starting and tpcore.input_edited()
    if keep_input:
        new_state.pop("tab", None)
        too_long = tpcore.input_length() > link.MAX_LINK_TEXT
        new_state["text"] = None if too_long else tpcore.input_text()
    state = new_state
    chat.restore(new_state.get("chat"))
    asyncio.ensure_future(guarded_task(compare_app.restore(new_state)))
    asyncio.ensure_future(guarded_task(quirks_app.restore(new_state)))
    cap = view.RENDER_CAP
    # At the start the box already holds the default example: writing it again would move a
    # caret the visitor may have just placed.
    if not keep_input and not (starting and tpcore.input_text() == state["text"]):
        tpcore.set_input(state["text"])
    if custom_name is not None or model_id != state["tokenizer"]:
        if await pick_model(state["tokenizer"], from_link=True):
            return
        state["tokenizer"] = model_id or models.DEFAULT
    sync_controls()
    asyncio.ensure_future(guarded_task(chat.show_for(model_id)))
    await configure()
    await refresh()


# ------------------------------------------------------------------------------------- start


def start():
    """Wires the tab's controls; web/app.py then opens the page's link with `restore`."""
    global has_bert
    tabbar.start(write_hash)
    chat.start(write_hash)
    render("gallery", gallery.render_gallery(page_base()))
    draw_picker()
    app.dataset.model = model_id
    asyncio.ensure_future(guarded_task(load_sizes()))
    step_box = document.getElementById("step-box")
    on(step_box, "mousemove", on_step_pointer)
    on(step_box, "keydown", on_step_key)
    on(step_box, "focusin", on_step_focus)
    on(step_box, "click", on_piece_click)
    on(step_box, "keydown", on_piece_key)
    on(document, "keydown", on_key)
    on(document.getElementById("prev"), "click", lambda e: go(-1))
    on(document.getElementById("next"), "click", lambda e: go(1))
    on(document.getElementById("timeline"), "click", on_timeline_click)
    on(text_box, "input", on_input)
    for box in document.querySelectorAll('input[name="opt"], input[name="fast"]'):
        on(box, "change", on_option)
    for radio in document.querySelectorAll('input[name="mode"]'):
        on(radio, "change", on_mode)
    for box_id in ("token-box", "step-box"):
        on(document.getElementById(box_id), "mouseover", on_token_hover)
    on(document.getElementById("copy-ids"), "click", on_copy_ids)
    on(document.getElementById("cap-box"), "click", show_all)
    on(document.getElementById("copy-link"), "click", on_copy_link)
    on(document.getElementById("tokenizer-file"), "change", on_file)
    on(document.getElementById("tokenizer"), "change", on_pick)
    on(document.body, "drop", on_drop)
    on(document.body, "dragover", on_dragover)
    on(window, "hashchange", on_hash)

    for control_id in ("tokenizer", "options", "fast-options", "copy-link"):
        document.getElementById(control_id).disabled = False
    has_bert = json.loads(tpcore.builtin_info()).get("bert_normalizer") is not None
