"""The tab bar (Pyodide only): which panel shows, and the arrow keys between tabs (the
WAI-ARIA tabs pattern). A tab with work to do on opening (Compare, Quirks) listens to its own
button as well; this only shows its panel."""

from js import document

from shell.browser import found, on

changed = None  # the tokenize tab's callback: the state changed, rewrite the address


def show_tab(name):
    """Shows the panel of tab `name` (its button's aria-controls) and hides the others."""
    for tab in document.querySelectorAll('.tabs [role="tab"]'):
        is_it = tab.id == f"tab-{name}"
        tab.setAttribute("aria-selected", "true" if is_it else "false")
        tab.tabIndex = 0 if is_it else -1
        target = document.getElementById(tab.getAttribute("aria-controls"))
        if found(target):
            target.hidden = not is_it


def on_tab_click(event):
    tab = event.target.closest('[role="tab"]')
    if not found(tab):
        return
    show_tab(tab.id.removeprefix("tab-"))
    if changed is not None:
        changed()


def on_tab_key(event):
    if event.key not in ("ArrowLeft", "ArrowRight"):
        return
    tabs = [t for t in document.querySelectorAll('.tabs [role="tab"]') if not t.disabled]
    current = event.target.closest('[role="tab"]')
    if not found(current) or not tabs:
        return
    event.preventDefault()
    event.stopPropagation()
    k = next((i for i, t in enumerate(tabs) if t.id == current.id), 0)
    nxt = tabs[(k + (1 if event.key == "ArrowRight" else -1)) % len(tabs)]
    nxt.focus()
    nxt.click()


def start(on_change):
    global changed
    changed = on_change
    nav = document.querySelector("nav.tabs")
    on(nav, "click", on_tab_click)
    on(nav, "keydown", on_tab_key)
