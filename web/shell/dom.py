"""The page's DOM as data: a tree of plain nodes that every tab's view builds.

Pure Python with no browser imports, so the same code runs under CPython (pytest renders
traces from the native module) and under Pyodide, where each tab's app hands the trees to
boot.js's DOM builder (shell/browser.py's `render`). User text only ever becomes a text node
or an attribute value, never markup: there are no HTML strings.

    >>> el("p", {"class": "muted"}, "a", None, el("code", {}, "b")).to_json()
    ['p', {'class': 'muted'}, 'a', ['code', {}, 'b']]
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    """An element: tag, attributes, and children that are nodes or text."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """The concatenated text below this node, like the DOM's textContent."""
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find(self, testid: str) -> Node | None:
        """The first node (depth first) whose data-testid is `testid`."""
        if self.attrs.get("data-testid") == testid:
            return self
        for child in self.children:
            if isinstance(child, Node) and (found := child.find(testid)) is not None:
                return found
        return None

    def find_all(self, testid: str) -> list[Node]:
        found = [self] if self.attrs.get("data-testid") == testid else []
        for child in self.children:
            if isinstance(child, Node):
                found.extend(child.find_all(testid))
        return found

    def walk(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def to_json(self) -> list:
        """[tag, attrs, *children]: the form boot.js's builder turns into DOM nodes."""
        return [
            self.tag,
            self.attrs,
            *(c if isinstance(c, str) else c.to_json() for c in self.children),
        ]


def el(tag: str, attrs: dict[str, str] | None = None, *children: Node | str | None) -> Node:
    """A node; None children are dropped so optional parts can be written inline."""
    return Node(tag, dict(attrs or {}), [c for c in children if c is not None and c != ""])
