"""The tokenize tab's gallery: examples of what the BERT normalizer does, each a share link to
a state (shell/link.py). Pure Python with no browser imports.
"""

from __future__ import annotations

from shell import link
from shell.dom import Node, el

# The Russian sentence of the textbook chapter on tokenization.
RUSSIAN = "Большие языковые модели обрабатывают текст как последовательности токенов."
EXAMPLES: list[tuple[str, str, str]] = [
    ("Accents", "Crème brûlée, naïve façade, Ångström", "strip_accents"),
    ("CJK", "東京タワーは高い。北京欢迎你!", "cjk"),
    ("Turkish dotted I", "İstanbul ISTANBUL ıi", "lowercase"),
    ("Greek capitals", "ΟΔΥΣΣΕΥΣ Ἀθῆναι ΣΊΣΥΦΟΣ", "strip_accents"),
    ("Zero-width and soft hyphen", "zero\u200bwidth\u200d join, soft\u00adhyphen\u2060!", "clean"),
    ("Emoji", "I ❤️ tokenizers 👩🏽‍💻 🇺🇦", "wordpiece"),
    ("Python code", "def f(x):\n\treturn x ** 2  # square\n", "pre_tokens"),
    ("Russian (the textbook)", RUSSIAN, "wordpiece"),
]


def example_links() -> list[tuple[str, str]]:
    """(title, fragment) for each gallery example."""
    out = []
    for title, text, step in EXAMPLES:
        state = link.default_state()
        state.update(text=text, step=step)
        out.append((title, link.encode_state(state)))
    return out


def render_gallery(base: str) -> Node:
    """Links to examples; `base` is the page's own address without its fragment."""
    items = [
        el("li", {}, el("a", {"href": f"{base}#{frag}", "data-testid": "example"}, title))
        for title, frag in example_links()
    ]
    return el("ul", {"class": "gallery", "data-testid": "gallery"}, *items)
