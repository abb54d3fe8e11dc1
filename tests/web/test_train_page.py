"""The Train tab end to end: dist/ served over HTTP in Debian's Chromium (one browser and one
page for the whole module, reused by every test in order).

Expected values come from the textbook chapter's own code (tests/chapter.py), tokenizers
0.23.3 and tiktoken 0.14.0, run here:
- the chapter example shows the chapter's 11 merges in order, and the word box the chapter's
  tokenize() with every merge's effect;
- a pasted text trains live (the merge count grows between looks) and Cancel freezes it at
  once, and the trainer kept just the merges shown (its tokenizer.json is the native one's);
- exercise 1 shows the chapter code's first 50 merges on the Russian text;
- exercise 2's table equals the references' token counts, exercise 3's indentation table the
  one built from the references' tokens.
Figures (the worked example's training time, 100 KB to vocabulary 500) go to
tests/artifacts/train_page.json; only generous sanity bounds are asserted.

Needs `./build.sh build` first (dist/ is its output).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_train_view import reference_spans

import tokenprism
from chapter import CHAPTER_CORPUS, chapter_tokenize, chapter_train_bpe
from paths import corpus, reference
from tabs.train import view as tv
from web_env import ARTIFACTS, DIST

TRAIN_DATA = DIST / "data" / "train"

READY_MS = 300_000  # a loaded 2-core machine can take minutes to start Pyodide
FIGURES: dict = {}


def require_dist():
    if not (TRAIN_DATA / "index.json").is_file():
        pytest.fail("dist/data/train is missing: run ./build.sh build", pytrace=False)


@pytest.fixture(scope="module")
def page(base_url, browser):
    require_dist()
    problems: list[str] = []
    context = browser.new_context(accept_downloads=True)
    pg = context.new_page()
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    pg.goto(base_url)
    pg.wait_for_selector(
        '[data-testid="train-panel"][data-state="ready"]', state="attached", timeout=READY_MS
    )
    pg.get_by_test_id("tab-train").click()
    assert pg.get_by_test_id("train-panel").is_visible()
    assert not pg.get_by_test_id("app").is_visible()
    pg.problems = problems
    yield pg
    context.close()
    if FIGURES:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "train_page.json").write_text(json.dumps(FIGURES, indent=2) + "\n")


def status(page) -> dict:
    return page.evaluate("""() => { const s = document.querySelector('[data-testid=train-status]');
        return {count: Number(s.dataset.count ?? -1), state: s.dataset.state ?? '',
                ms: Number(s.dataset.ms ?? -1), wasm: Number(s.dataset.wasmMs ?? -1)}; }""")


def wait_state(page, states, timeout=120_000):
    try:
        page.wait_for_function(
            "states => states.includes(document.querySelector('[data-testid=train-status]').dataset.state)",
            arg=states,
            timeout=timeout,
        )
    except PlaywrightTimeout:
        # Say where it stopped: the status (state, merge count, time), any error shown.
        raise AssertionError(
            f"state never became one of {states} in {timeout / 1000:.0f} s: {status(page)}, "
            f"error box: {page.get_by_test_id('error').text_content()!r}"
        ) from None
    return status(page)


def merge_rows(page, testid="train-merges"):
    """[(left, right, count, new)] as the table shows them."""
    return [
        tuple(r)
        for r in page.evaluate(
            """id => Array.from(document.querySelectorAll(`[data-testid=${id}-row]`), row => {
        const pair = row.querySelectorAll('[data-testid=pair] code');
        const cells = row.querySelectorAll('[role=cell]');
        return [pair[0].textContent, pair[1].textContent, Number(cells[2].textContent),
                row.querySelector('[data-testid=new]').textContent];
    })""",
            testid,
        )
    ]


def set_text(page, text):
    page.evaluate(
        "t => { document.getElementById('train-corpus').value = '';"
        " document.getElementById('train-text').value = t; }",
        text,
    )


def forget_state(page):
    """Clears the shown state, so a wait after the next click cannot see the previous run's."""
    page.evaluate(
        "() => { document.querySelector('[data-testid=train-status]').dataset.state = 'clicked'; }"
    )


def train(page, vocab, mode):
    page.get_by_test_id("train-vocab").fill(str(vocab))
    page.get_by_test_id(f"train-mode-{mode}").check()
    forget_state(page)
    page.get_by_test_id("train-start").click()


def test_chapter_example_shows_the_chapters_merges(page):
    merges, counts = chapter_train_bpe(CHAPTER_CORPUS, 20)
    page.get_by_test_id("train-chapter").click()
    s = wait_state(page, ["done", "exhausted"])
    assert page.get_by_test_id("train-text").input_value() == CHAPTER_CORPUS
    shown = merge_rows(page)
    assert shown == [(a, b, c, a + b) for (a, b), c in zip(merges, counts)]
    assert len(shown) == 11 and s["count"] == 11
    FIGURES["chapter_example_ms"] = s["ms"]
    FIGURES["chapter_example_wasm_ms"] = s["wasm"]
    assert s["ms"] < 5_000  # sanity only: the target (50 ms) is reported, not asserted


@pytest.mark.parametrize("word", ["низко", "низменность", "низина", "близкий"])
def test_tokenize_a_word_step_by_step(page, word):
    merges, _ = chapter_train_bpe(CHAPTER_CORPUS, 20)
    if (
        page.get_by_test_id("train-text").input_value() != CHAPTER_CORPUS
        or status(page)["count"] != 11
    ):
        forget_state(page)
        page.get_by_test_id("train-chapter").click()
        wait_state(page, ["done", "exhausted"])
    page.get_by_test_id("train-word").fill(word)
    want = chapter_tokenize(word, merges)
    page.wait_for_function(
        "want => JSON.stringify(Array.from(document.querySelectorAll('[data-testid=train-token]'),"
        " e => e.textContent)) === want",
        arg=json.dumps(want, ensure_ascii=False, separators=(",", ":")),
        timeout=30_000,
    )
    steps = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=train-step]'),"
        " li => Array.from(li.querySelectorAll('.part'), e => e.textContent))"
    )
    expected = tv.merge_steps(word, merges)
    assert steps == [s["parts"] for s in expected]
    assert steps[0] == list(word) + ["_"] and steps[-1] == want
    # each step is one of the chapter's merges, applied
    labels = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=train-step] .step-label'),"
        " e => e.textContent)"
    )
    assert labels[1:] == [
        f"merge {s['rank']}: {s['pair'][0]} + {s['pair'][1]}" for s in expected[1:]
    ]


def test_bad_vocab_sizes_are_explained(page):
    set_text(page, "some text")
    for vocab, mode, words in [
        ("abc", "chapter", "whole number"),
        ("100", "byte", "at least 256"),
        ("", "chapter", "Type"),
    ]:
        page.get_by_test_id("train-vocab").fill(vocab)
        page.get_by_test_id(f"train-mode-{mode}").check()
        page.get_by_test_id("train-start").click()
        page.wait_for_function(
            "w => document.querySelector('[data-testid=train-message]').textContent.includes(w)",
            arg=words,
            timeout=10_000,
        )
        assert page.get_by_test_id("train-message").is_visible()
    set_text(page, "   ")
    train(page, 300, "byte")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=train-message]').textContent.includes('Paste')"
    )


def test_pasted_text_trains_live_and_cancel_stops_it(page):
    # 1.5 M chars of three languages and a vocabulary it never reaches: natively ~74,000 merges
    # in ~0.4 s, in wasm a second or two; so Cancel is clicked from inside the page, in the
    # same turn as it draws a live count past the table's rows (the third count or later). The
    # worker may be far ahead of what the page has drawn by then, or done: the page still stops
    # at what it shows.
    text = "".join(
        corpus(lang).read_text(encoding="utf-8")[:500_000] for lang in ("en", "ru", "el")
    )
    page.get_by_test_id("train-vocab").fill("900000")
    page.get_by_test_id("train-mode-byte").check()
    set_text(page, text)
    forget_state(page)
    page.evaluate(
        """past => {
        const status = document.querySelector('[data-testid=train-status]');
        const cancel = document.querySelector('[data-testid=train-cancel]');
        const seen = [];
        window.__cancel = null;
        const watch = new MutationObserver(() => {
            const count = Number(status.dataset.count);
            if (status.dataset.state !== 'running' || count === 0 || count <= (seen.at(-1) ?? 0)) return;
            seen.push(count);
            if (seen.length < 3 || count <= past || cancel.disabled) return;
            watch.disconnect();
            cancel.click();
            window.__cancel = {seen, state: status.dataset.state, count: Number(status.dataset.count),
                               start: document.querySelector('[data-testid=train-start]').disabled};
        });
        watch.observe(status, {attributes: true, attributeFilter: ['data-state', 'data-count']});
        window.__watch = watch;
    }""",
        tv.TABLE_ROWS,
    )
    page.get_by_test_id("train-start").click(timeout=120_000)
    try:
        page.wait_for_function("() => window.__cancel !== null", timeout=120_000)
    except PlaywrightTimeout:
        page.evaluate("() => window.__watch.disconnect()")
        raise AssertionError(
            f"no live progress to cancel: {status(page)}, "
            f"error box: {page.get_by_test_id('error').text_content()!r}"
        ) from None
    clicked = page.evaluate("() => window.__cancel")
    seen = clicked["seen"]
    # stopped in the click's own turn: cancelled, at the count it showed, Train usable again
    assert clicked["state"] == "cancelled" and clicked["count"] == seen[-1] > tv.TABLE_ROWS, clicked
    assert not clicked["start"], clicked
    s = wait_state(page, ["cancelled"], timeout=10_000)
    rows = len(merge_rows(page))
    time.sleep(1.0)
    after = status(page)
    assert after["state"] == "cancelled" and after["count"] == s["count"] == seen[-1]
    assert len(merge_rows(page)) == rows == min(s["count"], tv.TABLE_ROWS)
    assert not page.get_by_test_id("train-start").is_disabled()
    # The worker kept exactly those merges (it was cut back to them): its tokenizer.json is
    # the native trainer's for that vocabulary.
    with page.expect_download() as info:
        page.get_by_test_id("train-download").click(timeout=60_000)
    downloaded = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    initial = 256
    native = json.loads(
        tokenprism.train_bpe(text, initial + s["count"], byte_level=True).to_tokenizer_json()
    )
    assert len(downloaded["model"]["merges"]) == s["count"]
    assert downloaded["model"]["merges"] == native["model"]["merges"]
    FIGURES["live_counts_seen"] = seen
    FIGURES["cancelled_at_merges"] = s["count"]


def test_100kb_to_vocabulary_500(page):
    for mode in ("byte", "chapter"):
        page.get_by_test_id("train-corpus").select_option("en-100k")
        page.wait_for_function("() => document.getElementById('train-text').value.length > 90000")
        train(page, 500, mode)
        s = wait_state(page, ["done", "exhausted"])
        assert s["ms"] < 60_000  # sanity; the target (1 s) is reported
        FIGURES[f"en_100k_vocab_500_{mode}_ms"] = s["ms"]
        FIGURES[f"en_100k_vocab_500_{mode}_wasm_ms"] = s["wasm"]
        text = (TRAIN_DATA / "en-100k.txt").read_text(encoding="utf-8")
        if mode == "chapter":
            merges, counts = chapter_train_bpe(text, 500)
            assert merge_rows(page) == [(a, b, c, a + b) for (a, b), c in zip(merges, counts)]
        else:
            # byte-level: the count of merges the native trainer makes (checked against
            # tokenizers in test_train.py), and the download below against tokenizers
            assert s["count"] == len(tokenprism.train_bpe(text, 500, byte_level=True).merges)
    # the byte-level one again, for the download and exercise 2
    train(page, 500, "byte")
    wait_state(page, ["done", "exhausted"])
    with page.expect_download() as info:
        page.get_by_test_id("train-download").click()
    downloaded = Path(info.value.path()).read_text(encoding="utf-8")
    theirs = reference().Tokenizer.from_str(downloaded)
    assert theirs.get_vocab_size() == 500
    ours = tokenprism.train_bpe(text, 500, byte_level=True)
    assert theirs.encode("Hello there, people!").ids == ours.tokenizer().encode_ordinary(
        "Hello there, people!"
    )


def test_exercise1_russian_merges(page):
    text = (TRAIN_DATA / f"{tv.EXERCISE1_TEXT}.txt").read_text(encoding="utf-8")
    initial = len({c for w in text.split() for c in w} | {"_"})
    merges, counts = chapter_train_bpe(text, initial + 50)
    page.get_by_test_id("ex1-run").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=ex1-status]').dataset.count === '50'",
        timeout=120_000,
    )
    assert merge_rows(page, "ex1-merges") == [(a, b, c, a + b) for (a, b), c in zip(merges, counts)]
    notes = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=morpheme]'), e => e.textContent)"
    )
    want = [tv.morpheme_for(a + b) for a, b in merges]
    assert notes == [
        "" if m is None else f"{m['form']} ({m['kind']}: {m['example']})" for m in want
    ]
    assert sum(bool(n) for n in notes) >= 5


def test_exercise2_fertility_equals_the_references(page):
    text = (TRAIN_DATA / "en-100k.txt").read_text(encoding="utf-8")
    trained = tokenprism.train_bpe(text, 500, byte_level=True).to_tokenizer_json()
    refs = reference_spans(trained)
    texts = {
        k: (TRAIN_DATA / f"parallel-{k}.txt").read_text(encoding="utf-8") for k in ("en", "ru")
    }
    want = {name: {k: len(f(t)) for k, t in texts.items()} for name, f in refs.items()}
    page.get_by_test_id("ex2-run").click()
    page.wait_for_selector("[data-testid=ex2-table]", timeout=300_000)
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid=ex2-table-row]'), row => [
        row.querySelector('[data-testid=ex2-name]').dataset.key,
        Number(row.querySelector('[data-testid=ex2-en]').textContent),
        Number(row.querySelector('[data-testid=ex2-ru]').textContent),
        row.querySelector('[data-testid=ex2-ratio]').textContent])""")
    assert [r[0] for r in shown] == [k for k, _ in tv.FERTILITY]
    for key, en, ru, ratio in shown:
        assert (en, ru) == (want[key]["en"], want[key]["ru"]), key
        assert ratio == f"{ru / en:.2f}×"
    assert page.locator("[data-testid=ex2-chart] [data-testid=ex2-bar-ru]").count() == len(shown)
    FIGURES["fertility"] = {
        key: {"en": en, "ru": ru, "ru_over_en": round(ru / en, 3)} for key, en, ru, _ in shown
    }


def test_exercise3_indentation_equals_the_references(page):
    text = (TRAIN_DATA / "en-100k.txt").read_text(encoding="utf-8")
    trained = tokenprism.train_bpe(text, 500, byte_level=True).to_tokenizer_json()
    refs = {k: f(tv.INDENT_SNIPPET) for k, f in reference_spans(trained).items()}
    rows = tv.indent_table(refs)
    page.get_by_test_id("ex3-run").click()
    page.wait_for_selector("[data-testid=ex3-table]", timeout=300_000)
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid=ex3-table-row]'), row => [
        Array.from(row.querySelectorAll('[data-testid=ex3-tokens] code'), e => e.textContent),
        row.querySelector('[data-testid=ex3-verdict]').textContent])""")
    # Each token's own chars (whitespace is drawn by the page's switch, not spelled out).
    assert shown == [[r["tokens"], r["verdict"]] for r in rows]
    assert page.get_by_test_id("ex3-snippet").text_content() == tv.INDENT_SNIPPET
    FIGURES["indentation"] = {
        r["key"]: r["verdict"] for r in rows if r["width"] == 4 and r["line"] == 2
    }


def test_no_page_errors(page):
    assert page.problems == []
