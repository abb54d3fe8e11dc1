"""The Tokenize tab's chat-template section (Pyodide only; app.py drives it): shown for the
models that have a chat template (chat_view.CHAT_MODELS), whose conversation is encoded in the
byte-level BPE worker (tabs/bpe/worker.js, via tpcore.bpe_*), the module with the templates.
User text reaches the DOM only as form values and text nodes."""

import json

import tpcore
from js import document

from shell.browser import found, on, render
from tabs.tokenize import chat_view

messages = chat_view.default_messages()
used = False  # the messages were edited or came with a link (then links carry them)
loaded = None  # the BPE worker's tokenizer
model = None  # the chat model shown, None while the section is hidden
seq = 0
changed = None  # app.py's callback: the state changed, rewrite the address

section = document.getElementById("chat-section")


def by_id(name):
    return document.getElementById(name)


def link_state():
    return {"chat": [list(m) for m in messages]} if used else {}


def build_messages():
    """The message list editor: role and content per message, with a remove button each."""
    holder = by_id("chat-messages")
    holder.replaceChildren()
    for k, (role, content) in enumerate(messages):
        row = document.createElement("div")
        row.className = "msg-row"
        row.setAttribute("data-testid", "chat-message")
        role_id, content_id = f"chat-role-{k}", f"chat-content-{k}"
        role_label = document.createElement("label")
        role_label.htmlFor = role_id
        role_label.textContent = f"Message {k + 1} role"
        role_label.className = "visually-hidden"
        select = document.createElement("select")
        select.id = role_id
        select.setAttribute("data-testid", "chat-role")
        select.setAttribute("data-k", str(k))
        for r in (*chat_view.ROLES, *([] if role in chat_view.ROLES else [role])):
            option = document.createElement("option")
            option.value = r
            option.textContent = r
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
        area.setAttribute("data-testid", "chat-content")
        area.setAttribute("data-k", str(k))
        remove = document.createElement("button")
        remove.type = "button"
        remove.textContent = "Remove"
        remove.setAttribute("aria-label", f"Remove message {k + 1}")
        remove.setAttribute("data-remove", str(k))
        remove.setAttribute("data-testid", "chat-remove-message")
        row.append(role_label, select, content_label, area, remove)
        holder.appendChild(row)
    by_id("chat-add-message").disabled = len(messages) >= chat_view.MAX_MESSAGES


def edited():
    global used
    used = True
    section.dataset.state = "working"
    if changed is not None:
        changed()
    return refresh()


def on_messages_input(event):
    k = event.target.getAttribute("data-k")
    if k is None or int(k) >= len(messages):
        return None
    column = 0 if event.target.getAttribute("data-testid") == "chat-role" else 1
    messages[int(k)][column] = str(event.target.value)
    return edited()


def on_messages_click(event):
    button = event.target.closest("[data-remove]")
    if not found(button):
        return None
    del messages[int(button.getAttribute("data-remove"))]
    build_messages()
    return edited()


def on_add_message(_event):
    if len(messages) >= chat_view.MAX_MESSAGES:
        return None
    last = messages[-1][0] if messages else "assistant"
    messages.append(["assistant" if last == "user" else "user", ""])
    build_messages()
    area = document.querySelector(f'[data-testid="chat-content"][data-k="{len(messages) - 1}"]')
    if found(area):
        area.focus()
    return edited()


async def refresh():
    """Encodes the conversation with the shown model's template and draws it."""
    global loaded, seq
    if model is None:
        return
    seq += 1
    mine = seq
    section.dataset.state = "working"
    try:
        if loaded != model:
            loaded = None
            await tpcore.bpe_builtin(model)
            loaded = model
        args = {
            "messages": json.dumps([{"role": r, "content": c} for r, c in messages]),
            "generation": bool(by_id("chat-generation").checked),
        }
        parts = json.loads(await tpcore.bpe_request("chat", json.dumps(args)))
        node = chat_view.render_chat(parts, None)
    except Exception as e:
        node = chat_view.render_chat(None, str(e).removeprefix("Error: "))
    if mine == seq:
        render("chat-output", node)
        section.dataset.state = "ready"
        section.dataset.model = model


async def show_for(model_id):
    """Shows the section for a model with a chat template (and encodes the conversation with
    it), hides it for any other."""
    global model
    model = chat_view.chat_model(model_id)
    section.hidden = model is None
    if model is not None:
        await refresh()


def restore(link_messages):
    """A link's messages (None: the default conversation)."""
    global messages, used
    used = link_messages is not None
    messages = [list(m) for m in link_messages] if used else chat_view.default_messages()
    build_messages()


def start(on_change):
    global changed
    changed = on_change
    build_messages()
    holder = by_id("chat-messages")
    on(holder, "input", on_messages_input)
    on(holder, "change", on_messages_input)
    on(holder, "click", on_messages_click)
    on(by_id("chat-add-message"), "click", on_add_message)
    on(by_id("chat-generation"), "change", lambda e: refresh())
