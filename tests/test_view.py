"""web/view.py under CPython, fed by the native module: the page's view logic without a browser."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "web"))

import view  # noqa: E402

BERT_JSON = ROOT / "dist" / "data" / "bert-base-uncased" / "tokenizer.json"
EXAMPLE = "Héllo, Wörld! 東京"


@pytest.fixture(scope="module")
def bert():
    tokenprism = pytest.importorskip("tokenprism")
    if not BERT_JSON.exists():
        pytest.skip("dist/ is missing: run ./build.sh build")
    return tokenprism.Tokenizer.from_file(str(BERT_JSON))


def test_diff_spans_marks_what_changed():
    assert view.diff_spans("abc", "abc") == [("abc", False)]
    assert view.diff_spans("Héllo", "Hello") == [("H", False), ("e", True), ("llo", False)]
    assert view.diff_spans("東京", " 東  京 ") == [
        (" ", True), ("東", False), ("  ", True), ("京", False), (" ", True)
    ]
    assert view.diff_spans("abc", "") == []


@given(st.text(max_size=40), st.text(max_size=40))
def test_diff_spans_rebuild_the_new_text(before, after):
    spans = view.diff_spans(before, after)
    assert "".join(text for text, _ in spans) == after
    assert all(text for text, _ in spans)
    # Neighbouring runs always differ in kind; otherwise they would have been merged.
    assert all(a[1] != b[1] for a, b in zip(spans, spans[1:]))


def test_format_micros():
    assert view.format_micros(0.4213) == "0.42 µs"
    assert view.format_micros(12.46) == "12.5 µs"
    assert view.format_micros(1250) == "1.25 ms"


def test_render_trace_of_the_native_build(bert):
    trace = bert.trace(EXAMPLE)
    tree = view.render_trace(trace)
    for stage in trace["stages"]:
        assert tree.find(f"stage-{stage['name']}-text").text() == stage["text"]
        assert stage["name"] in view.STAGES
    assert tree.find("stage-lowercase-text").text() == "hello, world!  東  京 "
    assert tree.find("ids").text() == "[101, 7592, 1010, 2088, 999, 1879, 1755, 102]"
    assert tree.find("token").text() == "[CLS]101"
    assert len(tree.find_all("token")) == len(trace["ids"])


def test_user_text_never_becomes_markup(bert):
    text = '<img src=x onerror="alert(1)"> & <b>bold</b>'
    tree = view.render_trace(bert.trace(text))
    assert tree.find("stage-raw-text").text() == text

    def tags(node):
        yield node.tag
        for child in node.children:
            if isinstance(child, view.Node):
                yield from tags(child)

    assert set(tags(tree)) <= {"div", "h2", "ol", "li", "span", "mark", "p", "code"}
