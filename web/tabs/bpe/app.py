"""The BPE tab's DOM layer; runs only in Pyodide (web/app.py calls `start`).

Its own worker (worker.js, via tpcore.bpe_*) holds the BPE wasm module, which loads
the first time the tab is used; a built-in tokenizer's file downloads when it is picked. Every
change asks the worker for a trace and hands view.py's node trees to boot.js's builder.
User text reaches the DOM only as text nodes or form values.
"""

import asyncio
import json

import tpcore
from js import document, window
from pyodide.ffi import create_proxy

from shell import browser
from shell.browser import found, render
from shell.dom import el
from tabs.bpe import view

state = view.default_bpe()
active = False  # the BPE tab is showing
used = False  # the tab was opened at least once (its state then goes into links)
loaded = None  # the tokenizer in the worker: a built-in name, or "file:<name>"
custom = None  # a user file's name
trace = None
selected = None  # the pre-token whose merges show
seq = 0
changed = None  # the tokenize tab's callback: the state changed, rewrite the address
link_of = None  # the tokenize tab's current_link

panel = document.getElementById("bpe-panel")
box = document.getElementById("bpe-input")


def by_id(name):
    return document.getElementById(name)


def guarded_task(coroutine):
    return browser.guarded_task(coroutine, show_error)


def on(element, event, handler):
    """browser.on, with errors shown in this tab's own error box."""
    browser.on(element, event, handler, show_error)


def show_error(message):
    box_ = by_id("bpe-error")
    box_.hidden = not message
    box_.textContent = message or ""
    if message:
        panel.dataset.state = "ready"


def show_notice(message):
    notice = by_id("bpe-notice")
    notice.hidden = not message
    notice.textContent = message or ""


def link_state():
    """What the share link carries for this tab (nothing until it was used)."""
    if not used:
        return {}
    return {"tab": "bpe" if active else "wordpiece", "bpe": dict(state)}


def notify():
    if changed is not None:
        changed()


# ------------------------------------------------------------------------------------ tabs


def show_tab(name):
    """Shows the panel of tab `name` (its button's aria-controls) and hides the others."""
    global active
    for tab in document.querySelectorAll('.tabs [role="tab"]'):
        mine = tab.getAttribute("aria-controls")
        is_it = tab.id == f"tab-{name}"
        tab.setAttribute("aria-selected", "true" if is_it else "false")
        tab.tabIndex = 0 if is_it else -1
        target = by_id(mine)
        if found(target):
            target.hidden = not is_it
    active = name == "bpe"


async def open_tab(write=True):
    global used
    show_tab("bpe")
    used = True
    if loaded is None or (custom is None and loaded != state["tokenizer"]):
        await load_builtin(state["tokenizer"])
    elif trace is None:
        await refresh()
    if write:
        notify()


def on_tab_click(event):
    tab = event.target.closest('[role="tab"]')
    if not found(tab):
        return None
    if tab.id == "tab-bpe":
        return open_tab()
    show_tab(tab.id.removeprefix("tab-"))
    notify()
    return None


def on_tab_key(event):
    # Arrow keys move between tabs (the WAI-ARIA tabs pattern).
    if event.key not in ("ArrowLeft", "ArrowRight"):
        return None
    tabs = [t for t in document.querySelectorAll('.tabs [role="tab"]') if not t.disabled]
    current = event.target.closest('[role="tab"]')
    if not found(current) or not tabs:
        return None
    event.preventDefault()
    event.stopPropagation()
    k = next((i for i, t in enumerate(tabs) if t.id == current.id), 0)
    nxt = tabs[(k + (1 if event.key == "ArrowRight" else -1)) % len(tabs)]
    nxt.focus()
    nxt.click()
    return None


# ---------------------------------------------------------------------------- tokenizers


async def load_builtin(name):
    global loaded, custom, trace
    panel.dataset.state = "loading"
    show_notice(None)
    try:
        await tpcore.bpe_builtin(name)
    except Exception as e:
        loaded = None
        show_error(f"Could not load {name}: {e}")
        return
    loaded, custom, trace = name, None, None
    state["tokenizer"] = name
    panel.dataset.tokenizer = name
    sync_controls()
    await refresh()


async def load_file(file_or_input):
    global loaded, custom, trace
    panel.dataset.state = "loading"
    try:
        name = await tpcore.bpe_file(file_or_input)
    except Exception as e:
        show_notice(f"Could not load that file: {e}")
        panel.dataset.state = "ready"
        # the worker keeps the tokenizer it had
        return
    show_notice(None)
    loaded, custom, trace = f"file:{name}", str(name), None
    panel.dataset.tokenizer = f"file:{name}"
    sync_controls()
    await refresh()


def on_pick(event):
    value = str(event.target.value)
    if value in view.BUILTINS and (value != loaded or custom is not None):
        return load_builtin(value)
    return None


def on_file(event):
    if event.target.files.length:
        return load_file(event.target)
    return None


def on_drop(event):
    files = event.dataTransfer.files if event.dataTransfer else None
    if files and files.length:
        event.preventDefault()
        event.stopPropagation()
        return load_file(files.item(0))
    return None


def on_dragover(event):
    if event.dataTransfer and "Files" in list(event.dataTransfer.types):
        event.preventDefault()
        event.stopPropagation()


# ------------------------------------------------------------------------------- controls


def sync_controls():
    select = by_id("bpe-tokenizer")
    for option in list(select.querySelectorAll("option[data-custom]")):
        option.remove()
    if custom is not None:
        option = document.createElement("option")
        option.value = "custom"
        option.textContent = f"{custom} (local file)"
        option.setAttribute("data-custom", "1")
        select.appendChild(option)
        select.value = "custom"
    else:
        select.value = state["tokenizer"]
    by_id("bpe-specials").checked = bool(state["specials"])
    for radio in document.querySelectorAll('input[name="bpe-mode"]'):
        radio.checked = radio.value == state["view"]


def build_messages():
    """The message list editor: role and content per message, with a remove button each.
    Built with DOM calls; user text goes in as form values only."""
    holder = by_id("bpe-messages")
    holder.replaceChildren()
    for k, (role, content) in enumerate(state["messages"]):
        row = document.createElement("div")
        row.className = "msg-row"
        row.setAttribute("data-testid", "bpe-message")
        role_id, content_id = f"bpe-role-{k}", f"bpe-content-{k}"
        role_label = document.createElement("label")
        role_label.htmlFor = role_id
        role_label.textContent = f"Message {k + 1} role"
        role_label.className = "visually-hidden"
        select = document.createElement("select")
        select.id = role_id
        select.setAttribute("data-testid", "bpe-role")
        select.setAttribute("data-k", str(k))
        for r in ("system", "user", "assistant", "developer", "tool"):
            option = document.createElement("option")
            option.value = r
            option.textContent = r
            select.appendChild(option)
        if role not in ("system", "user", "assistant", "developer", "tool"):
            option = document.createElement("option")
            option.value = role
            option.textContent = role
            select.appendChild(option)
        select.value = role
        content_label = document.createElement("label")
        content_label.htmlFor = content_id
        content_label.textContent = f"Message {k + 1} content"
        content_label.className = "visually-hidden"
        area = document.createElement("textarea")
        area.id = content_id
        area.rows = 2
        area.spellcheck = False
        area.value = content
        area.setAttribute("data-testid", "bpe-content")
        area.setAttribute("data-k", str(k))
        remove = document.createElement("button")
        remove.type = "button"
        remove.textContent = "Remove"
        remove.setAttribute("aria-label", f"Remove message {k + 1}")
        remove.setAttribute("data-remove", str(k))
        remove.setAttribute("data-testid", "bpe-remove-message")
        row.append(role_label, select, content_label, area, remove)
        holder.appendChild(row)
    by_id("bpe-add-message").disabled = len(state["messages"]) >= view.MAX_MESSAGES


def on_messages_input(event):
    target = event.target
    k = target.getAttribute("data-k")
    if k is None:
        return None
    k = int(k)
    if k >= len(state["messages"]):
        return None
    panel.dataset.chat = "working"
    if target.getAttribute("data-testid") == "bpe-role":
        state["messages"][k][0] = str(target.value)
    else:
        state["messages"][k][1] = str(target.value)
    notify()
    return refresh_chat()


def on_messages_click(event):
    button = event.target.closest("[data-remove]")
    if not found(button):
        return None
    panel.dataset.chat = "working"
    del state["messages"][int(button.getAttribute("data-remove"))]
    build_messages()
    notify()
    return refresh_chat()


def on_add_message(_event):
    if len(state["messages"]) >= view.MAX_MESSAGES:
        return None
    last = state["messages"][-1][0] if state["messages"] else "assistant"
    panel.dataset.chat = "working"
    state["messages"].append(["assistant" if last == "user" else "user", ""])
    build_messages()
    area = document.querySelector(
        f'[data-testid="bpe-content"][data-k="{len(state["messages"]) - 1}"]'
    )
    if found(area):
        area.focus()
    notify()
    return refresh_chat()


# ------------------------------------------------------------------------------- rendering


def render_tokens():
    render("bpe-counts", view.render_counts(state["text"], trace))
    render("bpe-tokens", view.render_tokens(trace, state["view"]))
    ids_line = by_id("bpe-ids")
    ids_line.textContent = json.dumps(view.ids_of(trace))


def render_pre():
    render("bpe-pre", view.render_pre_tokens(trace, selected))


async def show_merges():
    pre = view.find_pre_token(trace, selected) if trace is not None else None
    if pre is None or pre["special"]:
        render("bpe-merges", view.render_merges(None, None))
        return
    mine = seq
    try:
        piece = json.loads(await tpcore.bpe_request("piece", json.dumps({"text": pre["text"]})))
    except Exception as e:
        render(
            "bpe-merges",
            el(
                "p",
                {"class": "muted", "data-testid": "bpe-merges"},
                f"No merge trace for this pre-token: {e}",
            ),
        )
        return
    if mine == seq:
        render("bpe-merges", view.render_merges(pre, piece))


async def refresh():
    global seq, trace, selected
    if loaded is None:
        return
    seq += 1
    mine = seq
    panel.dataset.state = "working"
    by_id("bpe-busy").textContent = "working…"
    text = str(box.value)
    try:
        reply = await tpcore.bpe_request(
            "trace",
            json.dumps({"text": text, "specials": state["specials"], "cap": view.TOKEN_CAP}),
        )
    except Exception as e:
        if mine == seq:
            show_error(f"Could not encode: {e}")
        return
    if mine != seq:
        return
    show_error(None)
    trace = json.loads(reply.trace)
    state["text"] = text
    by_id("bpe-busy").textContent = f"(worker: {float(reply.ms):.1f} ms)"
    if view.find_pre_token(trace, selected) is None:
        selected = None
    render_tokens()
    render_pre()
    await show_merges()
    await refresh_chat(mine)
    if mine == seq:
        panel.dataset.state = "ready"
        notify()


chat_seq = 0


async def refresh_chat(mine=None):
    global chat_seq
    if loaded is None:
        return
    chat_seq += 1
    mine_chat = chat_seq
    messages = [{"role": r, "content": c} for r, c in state["messages"]]
    try:
        parts = json.loads(
            await tpcore.bpe_request(
                "chat",
                json.dumps(
                    {
                        "messages": json.dumps(messages),
                        "generation": bool(by_id("bpe-generation").checked),
                    }
                ),
            )
        )
        node = view.render_chat(parts, None)
    except Exception as e:
        node = view.render_chat(None, str(e).removeprefix("Error: "))
    if (mine is None or mine == seq) and mine_chat == chat_seq:
        render("bpe-chat", node)
        panel.dataset.chat = "ready"


# ---------------------------------------------------------------------------------- events

debounce = None


def on_input(_event):
    global debounce
    panel.dataset.state = "working"
    if debounce is not None:
        window.clearTimeout(debounce)
    delay = 0 if len(str(box.value)) < 20_000 else 150
    debounce = window.setTimeout(refresh_proxy, delay)


def start_refresh():
    asyncio.ensure_future(guarded_task(refresh()))


refresh_proxy = create_proxy(start_refresh)


def on_specials(event):
    panel.dataset.state = "working"
    state["specials"] = bool(event.target.checked)
    return refresh()


def on_mode(event):
    state["view"] = str(event.target.value)
    if trace is not None:
        render_tokens()
    notify()


def select_pre(key):
    global selected
    selected = key
    render_pre()
    chip = document.querySelector(f'#bpe-pre [data-p="{key}"]')
    if found(chip):
        chip.focus()
    return show_merges()


def on_pre_click(event):
    chip = event.target.closest("[data-p]")
    if found(chip) and trace is not None:
        return select_pre(str(chip.getAttribute("data-p")))
    return None


def on_pre_key(event):
    chip = event.target.closest("[data-p]")
    if not found(chip) or trace is None:
        return None
    key = str(chip.getAttribute("data-p"))
    if event.key in ("Enter", " "):
        event.preventDefault()
        return select_pre(key)
    if event.key in ("ArrowLeft", "ArrowRight"):
        event.preventDefault()
        event.stopPropagation()
        keys = [p["key"] for p in view.pre_token_list(trace) if not p["special"]]
        if key in keys:
            k = keys.index(key) + (1 if event.key == "ArrowRight" else -1)
            return select_pre(keys[max(0, min(len(keys) - 1, k))])
    return None


async def on_copy_ids(_event):
    ok = await tpcore.copy_text(by_id("bpe-ids").textContent)
    by_id("bpe-copy-status").textContent = "copied" if ok else "copy failed"


def on_chat_option(_event):
    panel.dataset.chat = "working"
    return refresh_chat()


async def restore(new_state):
    """Opens a link's BPE state (the tokenize tab's restore): its tokenizer, text, toggles, chat."""
    global state, used
    if new_state.get("bpe") is not None:
        state = new_state["bpe"]
        used = True
        box.value = state["text"]
        sync_controls()
        build_messages()
    if new_state.get("tab") == "bpe":
        await open_tab(write=False)
        if loaded == state["tokenizer"] and custom is None:
            await refresh()
    elif active:
        show_tab("wordpiece")


async def on_copy_link(_event):
    status = by_id("bpe-share-status")
    if custom is not None:
        status.textContent = "links hold only the built-in tokenizers"
        return
    link = link_of() if link_of is not None else None
    if link is None:
        status.textContent = "this text is too long to share"
        return
    ok = await tpcore.copy_text(link)
    status.textContent = "link copied" if ok else link


def start(on_change, current_link):
    global changed, link_of
    changed, link_of = on_change, current_link
    select = by_id("bpe-tokenizer")
    for name, label in view.BUILTINS.items():
        option = document.createElement("option")
        option.value = name
        option.textContent = label
        select.appendChild(option)
    box.value = state["text"]
    sync_controls()
    build_messages()
    render("bpe-merges", view.render_merges(None, None))
    nav = document.querySelector("nav.tabs")
    on(nav, "click", on_tab_click)
    on(nav, "keydown", on_tab_key)
    on(select, "change", on_pick)
    on(by_id("bpe-file"), "change", on_file)
    on(panel, "drop", on_drop)
    on(panel, "dragover", on_dragover)
    on(box, "input", on_input)
    on(by_id("bpe-specials"), "change", on_specials)
    for radio in document.querySelectorAll('input[name="bpe-mode"]'):
        on(radio, "change", on_mode)
    pre = by_id("bpe-pre")
    on(pre, "click", on_pre_click)
    on(pre, "keydown", on_pre_key)
    on(by_id("bpe-copy-ids"), "click", on_copy_ids)
    messages = by_id("bpe-messages")
    on(messages, "input", on_messages_input)
    on(messages, "change", on_messages_input)
    on(messages, "click", on_messages_click)
    on(by_id("bpe-add-message"), "click", on_add_message)
    on(by_id("bpe-generation"), "change", on_chat_option)
    on(by_id("bpe-copy-link"), "click", on_copy_link)
    by_id("tab-bpe").disabled = False
