"""DOM helpers every tab's DOM layer shares (Pyodide only: each tab's app.py): event
listeners whose errors are reported instead of lost, the JS-null test, and drawing node trees
(shell/dom.py) with boot.js's builder."""

import asyncio
import json
import traceback

import tpcore
from pyodide.ffi import create_proxy

from shell.dom import Node

proxies = []  # event listeners must outlive the scripts that add them


def found(element):
    """Whether a DOM look-up found something (JS null arrives as JsNull, not None)."""
    return element is not None and bool(element)


async def guarded_task(coroutine, report=None):
    """Awaits `coroutine`; an exception goes to `report` (default: the page's error box)."""
    try:
        await coroutine
    except Exception:
        (report or tpcore.show_error)(traceback.format_exc())


def on(element, event, handler, report=None):
    """Adds `handler` (plain or async) for `event`; its exceptions go to `report`."""
    report = report or tpcore.show_error

    def guarded(e):
        try:
            result = handler(e)
            if asyncio.iscoroutine(result):
                asyncio.ensure_future(guarded_task(result, report))
        except Exception:
            report(traceback.format_exc())

    proxy = create_proxy(guarded)
    proxies.append(proxy)
    element.addEventListener(event, proxy)


def render(target, node):
    """Draws a node, or a list of nodes, as the children of the element with id `target`."""
    tpcore.render(
        target,
        json.dumps(node.to_json() if isinstance(node, Node) else [n.to_json() for n in node]),
    )
