"""The Files tab end to end (dist/ in Debian's Chromium): a ~100 MB text file counted in the
tab's worker with bert-base-uncased, the page's main thread free meanwhile, Cancel, errors,
and the chunker. Expected values come from tokenizers 0.23.3 run here on the same documents.

The big file repeats lines of several corpora with variation: each round shuffles them, some
rounds end lines with CRLF, and empty lines come between. A line's count does not depend on
where it stands, so the reference count is each distinct line's count (encode_batch) times
the rounds.
"""

from __future__ import annotations

import doctest
import json
import random
import re
import time

import pytest

from paths import corpus
from web_env import LONGTASK_SCRIPT

READY_TIMEOUT_MS = 180_000
PAGE_READY = '[data-testid="app"]:is([data-state="ready"], [data-state="failed"])'
TARGET_BYTES = 100_000_000
# Lines of each corpus the big file repeats (bytes of it), mixing scripts so slices cut
# multi-byte chars.
SOURCES = {"en": 300_000, "ru": 250_000, "zh": 250_000, "code": 150_000, "ar": 100_000}
LONGEST_TASK_MS = 200
CANCEL_MS = 1000


def base_lines() -> list[str]:
    lines: list[str] = []
    for lang, size in SOURCES.items():
        text = corpus(lang).read_bytes()[:size].decode("utf-8", "ignore")
        # The last line may be cut anywhere: drop it.
        lines += [x.removesuffix("\r") for x in text.split("\n")[:-1]]
    return lines


@pytest.fixture(scope="module")
def big_file(tmp_path_factory, bert_reference):
    """(path, size, documents, tokens): the file and the reference's count of its lines."""
    lines = base_lines()
    round_bytes = sum(len(x.encode()) + 1 for x in lines)
    rounds = TARGET_BYTES // round_bytes + 1
    path = tmp_path_factory.mktemp("files") / "big.txt"
    rng = random.Random(7)
    with open(path, "wb") as f:
        for r in range(rounds):
            order = lines[:]
            rng.shuffle(order)
            end = "\r\n" if r % 3 == 1 else "\n"
            for k in range(0, len(order), 500):
                order.insert(k, "")  # empty lines: no document
            f.write((end.join(order) + end).encode())
    docs = [x for x in lines if x]
    per_line = bert_reference.encode_batch(docs, add_special_tokens=False)
    tokens = sum(len(e.ids) for e in per_line) * rounds
    return path, path.stat().st_size, len(docs) * rounds, tokens


@pytest.fixture(scope="module")
def page(browser, base_url):
    context = browser.new_context(accept_downloads=True)
    context.add_init_script(LONGTASK_SCRIPT)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base_url)
    page.wait_for_selector(PAGE_READY, state="attached", timeout=READY_TIMEOUT_MS)
    assert page.get_by_test_id("app").get_attribute("data-state") == "ready"
    page.get_by_test_id("tab-files").click()
    page.wait_for_selector('[data-testid="files-panel"][data-state="ready"]', state="visible")
    yield page
    assert errors == []
    context.close()


def wait_state(page, *states, timeout=120_000):
    wanted = ", ".join(f'[data-state="{s}"]' for s in states)
    page.wait_for_selector(
        f'[data-testid="files-panel"]:is({wanted})', state="attached", timeout=timeout
    )
    return page.get_by_test_id("files-panel").get_attribute("data-state")


def open_file(page, path):
    """Opens `path` in the count's file input, the panel's last state cleared first so that
    waiting for the next one cannot see the previous count's."""
    page.evaluate("document.getElementById('files-panel').dataset.state = 'ready'")
    page.get_by_test_id("count-file").set_input_files(str(path))


def number(page, testid) -> int:
    return int(page.get_by_test_id(testid).text_content().replace(",", ""))


FIGURES: dict[str, float] = {}


def test_a_100_mb_file_counts_as_the_reference_with_the_page_free(page, big_file):
    path, size, documents, tokens = big_file
    assert size >= TARGET_BYTES
    since = page.evaluate("performance.now()")
    t0 = time.monotonic()
    open_file(page, path)
    assert wait_state(page, "done", "error") == "done", page.get_by_test_id(
        "count-error"
    ).text_content()
    seconds = time.monotonic() - t0
    assert number(page, "file-bytes") == size
    assert number(page, "file-documents") == documents
    assert number(page, "file-tokens") == tokens
    assert "a line" in page.get_by_test_id("file-docs").text_content()
    # The observer sees long tasks: Pyodide's start made some.
    assert page.evaluate("window.__longtasks.length") > 0
    tasks = page.evaluate(f"window.__longtasks.filter((t) => t.start >= {since}).map((t) => t.ms)")
    longest = max(tasks, default=0)
    FIGURES.update(
        bytes=size,
        tokens=tokens,
        seconds=seconds,
        mb_per_s=size / 1e6 / seconds,
        longest_task_ms=longest,
    )
    assert longest <= LONGEST_TASK_MS, tasks


def test_cancel_stops_a_count_within_a_second(page, big_file, tmp_path):
    path = big_file[0]
    open_file(page, path)
    wait_state(page, "counting")
    page.wait_for_function(
        "() => document.getElementById('count-status').textContent.includes('tokens so far')",
        timeout=60_000,
    )
    ms = page.evaluate(
        """() => new Promise((done) => {
          const panel = document.getElementById("files-panel");
          const t0 = performance.now();
          new MutationObserver((_, seen) => {
            if (panel.dataset.state !== "counting") {
              seen.disconnect();
              done(performance.now() - t0);
            }
          }).observe(panel, { attributes: true });
          document.getElementById("count-cancel").click();
        })"""
    )
    FIGURES["cancel_ms"] = ms
    assert page.get_by_test_id("files-panel").get_attribute("data-state") == "cancelled"
    assert ms <= CANCEL_MS
    # Stopped: the bar moves no more; and the page still counts.
    bar = page.get_by_test_id("count-bar")
    value = bar.evaluate("b => b.value")
    page.wait_for_timeout(500)
    assert bar.evaluate("b => b.value") == value
    small = tmp_path / "small.txt"
    small.write_text("Hello, world!\n\nSecond line here.\r\n", encoding="utf-8")
    open_file(page, small)
    assert wait_state(page, "done", "error") == "done"
    assert number(page, "file-documents") == 2
    print("files figures:", json.dumps(FIGURES))
    assert FIGURES


def documents(text: str, docs: str) -> list[str]:
    """The documents of a text file as the package's count_files reads them (--docs)."""
    if docs == "file":
        return [text]
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    lines = [x.removesuffix("\r") for x in lines]
    out: list[str] = []
    run: list[str] = []
    for line in lines + [""]:
        if line.strip(" \t\n\r\x0b\x0c"):
            run.append(line)
        elif run:
            out.append("\n".join(run))
            run = []
    return out


@pytest.mark.parametrize("docs", ["blank-line", "file"])
def test_paragraphs_and_whole_files_count_as_the_reference(page, bert_reference, tmp_path, docs):
    lines = base_lines()[:3000]
    rng = random.Random(3)
    # Blank lines of several kinds between runs of lines, some lines ending in CRLF.
    text = "".join(
        x + rng.choice(["\n", "\n", "\r\n", "\n\n", "\n \t\n", "\r\n\r\n"]) for x in lines
    )
    path = tmp_path / "paragraphs.txt"
    path.write_bytes(text.encode())
    want = documents(text, docs)
    tokens = sum(len(e.ids) for e in bert_reference.encode_batch(want, add_special_tokens=False))
    page.get_by_test_id(f"count-docs-{docs}").check()
    try:
        open_file(page, path)
        assert wait_state(page, "done", "error") == "done"
    finally:
        page.get_by_test_id("count-docs-line").check()
    assert number(page, "file-documents") == len(want)
    assert number(page, "file-tokens") == tokens


def test_a_file_dropped_on_the_panel_counts_as_the_reference(page, bert_reference):
    lines = [x for x in base_lines()[:400] if x]
    text = "\n".join(lines) + "\n"
    tokens = sum(len(e.ids) for e in bert_reference.encode_batch(lines, add_special_tokens=False))
    picked_before = page.get_by_test_id("tokenizer").input_value()
    page.evaluate("document.getElementById('files-panel').dataset.state = 'ready'")
    # A drop as the browser delivers it: a DataTransfer holding one File.
    page.evaluate(
        """text => {
          const data = new DataTransfer();
          data.items.add(new File([text], "dropped.txt", {type: "text/plain"}));
          const panel = document.getElementById("files-panel");
          for (const type of ["dragenter", "dragover", "drop"]) {
            panel.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: data}));
          }
        }""",
        text,
    )
    assert wait_state(page, "done", "error") == "done"
    assert number(page, "file-documents") == len(lines)
    assert number(page, "file-tokens") == tokens
    assert "dropped.txt" in page.get_by_test_id("count-status").text_content()
    # The drop stayed in the panel: the Tokenize tab did not try to open it as a tokenizer.
    page.wait_for_timeout(500)
    assert page.get_by_test_id("tokenizer").input_value() == picked_before
    assert page.get_by_test_id("notice").is_hidden()


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"", "empty"), (b"fine\n\xff\xfe broken\n", "not UTF-8"), (b"PK\x03\x04\x00\x00", "binary")],
)
def test_a_file_that_is_not_text_says_why(page, tmp_path, content, says):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    open_file(page, bad)
    assert wait_state(page, "done", "error") == "error"
    assert says in page.get_by_test_id("count-error").text_content()


def fortunes(count: int) -> list[str]:
    """Prose from the English corpus (a fortune file): fortunes of a few sentences, each on
    one line."""
    out = []
    for entry in corpus("en").read_text(encoding="utf-8").split("\n%\n"):
        one = " ".join(entry.split())
        if len(one) > 100 and ". " in one and "--" not in one:
            out.append(one)
        if len(out) == count:
            break
    return out


def chunk(page, text: str, max_tokens: int) -> list[dict]:
    page.get_by_test_id("chunk-input").fill(text)
    page.get_by_test_id("chunk-max").fill(str(max_tokens))
    page.get_by_test_id("chunk-run").click()
    page.wait_for_selector('[data-testid="files-panel"][data-chunk="done"]', state="attached")
    with page.expect_download() as download:
        page.get_by_test_id("chunk-download").click()
    chunks = [json.loads(x) for x in open(download.value.path(), encoding="utf-8")]
    # Ready for the next run to wait on.
    page.evaluate("document.getElementById('files-panel').dataset.chunk = ''")
    return chunks


def check_chunks(chunks, text, max_tokens, reference):
    assert "".join(c["text"] for c in chunks) == text
    want = reference.encode_batch([c["text"] for c in chunks], add_special_tokens=False)
    assert [c["tokens"] for c in chunks] == [len(e.ids) for e in want]
    assert all(c["tokens"] <= max_tokens for c in chunks)


def test_chunks_end_at_paragraphs_then_sentences_then_tokens(page, bert_reference):
    def count(text):
        return len(bert_reference.encode(text, add_special_tokens=False).ids)

    paragraphs = fortunes(30)
    text = "\n\n".join(paragraphs) + "\n"
    longest = max(map(count, paragraphs))
    # Every paragraph fits: every cut is at a paragraph's end.
    chunks = chunk(page, text, longest)
    check_chunks(chunks, text, longest, bert_reference)
    assert len(chunks) > 1
    assert all(c["text"].endswith("\n\n") for c in chunks[:-1])
    shown = "".join(page.get_by_test_id("chunk").all_text_contents())
    assert shown == text
    # One paragraph of short sentences, a budget of several: cuts after sentence ends.
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(paragraphs))
    short = [s for s in sentences if s[-1] in ".!?" and 3 <= count(s) <= 30][:25]
    one = " ".join(short)
    chunks = chunk(page, one, 48)
    check_chunks(chunks, one, 48, bert_reference)
    assert len(chunks) > 2
    for c in chunks[:-1]:
        end = c["text"].rstrip().rstrip("\"')")
        assert c["text"].endswith(" ") and end[-1] in ".!?", c["text"][-60:]
    # No punctuation at all: cuts between tokens, each chunk still within the budget.
    words = "".join(ch for ch in one if ch.isalnum() or ch == " ")
    chunks = chunk(page, words, 20)
    check_chunks(chunks, words, 20, bert_reference)
    assert len(chunks) > 3


def test_the_views_examples():
    from tabs.files import view

    assert doctest.testmod(view).failed == 0
