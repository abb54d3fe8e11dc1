"""The Compare tab end to end: dist/ served over HTTP, opened in Debian's Chromium. Three models
(bert-base-uncased's WordPiece, GPT-2's byte-level BPE, a T5-style Unigram) on mixed-script text:
each row's ids, drawn token spans, counts and marked tokens against tokenizers 0.23.3 run here,
the boundaries computed in this file from the reference's offsets. Then: text typed while the
models load is kept, a share link reopens the models and text, the whitespace switch draws
glyphs without changing the text, and the rows stack at phone width.

Needs `./build.sh build` (or `./build.sh dist`) first (dist/ is its output).
"""

from __future__ import annotations

import pytest

from paths import data_dir, reference, require
from shell import link
from web_env import open_page

READY_TIMEOUT_MS = 180_000
MODELS = ["bert-base-uncased", "unigram-t5", "gpt2"]
FILES = {
    "bert-base-uncased": "bert-base-uncased/tokenizer.json",
    "gpt2": "bpe/gpt2/tokenizer.json",
    "unigram-t5": "unigram/t5/tokenizer.json",
}
# Latin with accents, Cyrillic, Han and kana, an emoji, digits, a tab and a newline.
TEXT = "Héllo wörld!\tПривет, мир.\n東京タワーは333m 😀 naïve café"
TYPED = "Typed while loading: Ünïcode 東京 don't"


@pytest.fixture(scope="module")
def refs():
    made = {}
    for model_id, path in FILES.items():
        tok = reference().Tokenizer.from_file(str(require(data_dir() / path)))
        tok.no_padding()
        tok.no_truncation()
        made[model_id] = tok
    return made


@pytest.fixture(scope="module")
def opened(browser, base_url):
    page, watch = open_page(browser, base_url)
    yield page, watch
    page.context.close()
    assert watch.problems == []


@pytest.fixture(scope="module")
def page(opened):
    return opened[0]


def wait_rows(page, ids, text):
    """Until the panel shows `ids`' rows, every one drawn from `text`."""
    page.wait_for_function(
        """([ids, text]) => {
          const panel = document.querySelector('[data-testid=compare-panel]');
          if (panel.dataset.state !== 'ready' || panel.dataset.models !== ids.join(',')) return false;
          const rows = [...document.querySelectorAll('[data-testid=cmp-row]')];
          return rows.length === ids.length && rows.every((r, k) => r.dataset.model === ids[k]
            && r.querySelector('[data-testid=cmp-tokens]')?.textContent === text);
        }""",
        arg=[ids, text],
        timeout=READY_TIMEOUT_MS,
    )


def type_text(page, text):
    page.get_by_test_id("compare-input").fill(text)


def row_data(page, model_id) -> dict:
    """One row as drawn: ids, the drawn tokens (index, text, marked) and the figures."""
    return page.evaluate(
        """id => {
          const row = document.querySelector(`[data-testid=cmp-row][data-model="${id}"]`);
          const spans = [...row.querySelectorAll('[data-testid=cmp-tokens] [data-testid=token-span]')];
          const figure = (t) => row.querySelector(`[data-testid=${t}] dd`).textContent;
          return {
            ids: JSON.parse(row.querySelector('[data-testid=cmp-ids]').textContent),
            spans: spans.map((s) => [Number(s.dataset.t), s.textContent, s.classList.contains('differ')]),
            tokens: figure('cmp-count-tokens'),
            chars_per_token: figure('cmp-count-chars-per-token'),
            tokens_per_word: figure('cmp-count-tokens-per-word'),
          };
        }""",
        model_id,
    )


def drawn(encoding) -> list[int]:
    """The tokens a token view draws over the text: in order, each starting at or after the
    previous one's end (byte-level pieces of one char share its span: the first is drawn),
    special tokens with an empty span left out."""
    out, pos = [], 0
    for k, ((start, end), special) in enumerate(
        zip(encoding.offsets, encoding.special_tokens_mask)
    ):
        if (special and start == end) or start < pos:
            continue
        out.append(k)
        pos = end
    return out


def expected_marks(encodings: dict) -> dict[str, set[int]]:
    """Per model, the tokens holding an offset where one model starts a token and another
    does not (tokens with an empty span start none)."""
    starts = {m: {s for s, e in enc.offsets if e > s} for m, enc in encodings.items()}
    differ = set().union(*starts.values()) - set.intersection(*starts.values())
    return {
        m: {k for k, (s, e) in enumerate(enc.offsets) if any(s <= p < e for p in differ)}
        for m, enc in encodings.items()
    }


def check_rows(page, refs, text):
    encodings = {m: refs[m].encode(text) for m in MODELS}
    marks = expected_marks(encodings)
    assert any(marks.values()), "the text should make the models disagree somewhere"
    for m in MODELS:
        enc, row = encodings[m], row_data(page, m)
        assert row["ids"] == enc.ids, m
        want = [(k, text[enc.offsets[k][0] : enc.offsets[k][1]]) for k in drawn(enc)]
        assert [(k, t) for k, t, _ in row["spans"]] == want, m
        marked = {k for k, _, is_marked in row["spans"] if is_marked}
        assert marked == marks[m] & set(drawn(enc)), m
        n = len(enc.ids)
        assert row["tokens"] == f"{n:,}", m
        assert row["chars_per_token"] == f"{len(text) / n:.2f}", m
        assert row["tokens_per_word"] == f"{n / len(text.split()):.2f}", m
        assert (
            page.locator(f'[data-testid=cmp-row][data-model="{m}"] [data-testid=cmp-differ-count]')
            .text_content()
            .startswith(f"{len(marks[m])} token")
        ), m


# -------------------------------------------------------------------------------- tests


def test_typing_while_the_models_load_is_kept(page, refs):
    page.get_by_test_id("tab-compare").click()
    assert page.get_by_test_id("compare-panel").is_visible()
    # The default pair: its files are not loaded until the tab opens.
    page.wait_for_selector('[data-testid=cmp-row][data-state="loading"]', state="attached")
    type_text(page, TYPED)
    wait_rows(page, ["bert-base-uncased", "gpt2"], TYPED)
    assert page.get_by_test_id("compare-input").input_value() == TYPED
    for m in ("bert-base-uncased", "gpt2"):
        assert row_data(page, m)["ids"] == refs[m].encode(TYPED).ids


def test_three_models_match_their_references(page, refs):
    # The second picker to the Unigram model, then a third model: the next in the catalogue.
    page.get_by_test_id("compare-model-1").select_option("unigram-t5")
    wait_rows(page, ["bert-base-uncased", "unigram-t5"], TYPED)
    page.get_by_test_id("compare-add").click()
    wait_rows(page, MODELS, TYPED)
    assert [page.get_by_test_id(f"compare-model-{k}").input_value() for k in range(3)] == MODELS
    type_text(page, TEXT)
    wait_rows(page, MODELS, TEXT)
    check_rows(page, refs, TEXT)


def test_each_model_file_loads_once_when_picked(opened):
    page, watch = opened
    # gpt2 left the set (for unigram-t5, above) and came back; here once more: removed, then
    # added again (the first model not in the set). Still loaded, never fetched again.
    page.get_by_test_id("compare-remove-2").click()
    wait_rows(page, MODELS[:2], TEXT)
    page.get_by_test_id("compare-add").click()
    wait_rows(page, MODELS, TEXT)
    fetched = [u.split("/data/", 1)[1] for u in watch.requests if "/data/" in u]
    files = [f for f in fetched if f.startswith(("bpe/", "models/"))]
    assert sorted(files) == ["bpe/gpt2/tokenizer.json", "models/unigram/t5/tokenizer.json"]
    general = [u for u in watch.requests if u.endswith("pkg-general/tokenprism_bg.wasm")]
    assert len(general) == 1, general


def test_a_share_link_reopens_the_models_and_text(browser, page, refs):
    page.wait_for_function("() => location.hash.startsWith('#s=')")
    address = page.evaluate("location.href")
    fresh, watch = open_page(browser, address)
    try:
        wait_rows(fresh, MODELS, TEXT)
        assert fresh.get_by_test_id("compare-panel").is_visible()
        assert fresh.get_by_test_id("compare-input").input_value() == TEXT
        assert [
            fresh.get_by_test_id(f"compare-model-{k}").input_value() for k in range(3)
        ] == MODELS
        check_rows(fresh, refs, TEXT)
    finally:
        fresh.context.close()
    assert watch.problems == []


GLYPHS = """() => {
  const glyph = (sel) => [...document.querySelectorAll(sel)].map(
    (e) => getComputedStyle(e, '::before').content);
  return {
    space: glyph('[data-testid=cmp-tokens] .inv.sp'),
    tab: glyph('[data-testid=cmp-tokens] .inv.tab'),
    newline: glyph('[data-testid=cmp-tokens] .inv.nl'),
    tokenize: glyph('[data-testid=token-view] .inv.sp'),
    texts: [...document.querySelectorAll('[data-testid=cmp-tokens]')].map((e) => e.textContent),
  };
}"""


def test_whitespace_switch_draws_glyphs_and_keeps_the_text(page):
    switch = page.get_by_test_id("ws-glyphs")
    assert switch.is_checked()
    on = page.evaluate(GLYPHS)
    assert set(on["space"]) == {'"·"'} and set(on["tab"]) == {'"→"'}
    assert set(on["newline"]) == {'"↵"'}
    # One tab and one newline per row; the tokenize tab's view follows the same switch.
    assert len(on["tab"]) == len(on["newline"]) == len(MODELS)
    assert set(on["tokenize"]) == {'"·"'}
    switch.uncheck()
    off = page.evaluate(GLYPHS)
    assert set(off["space"] + off["tab"] + off["newline"] + off["tokenize"]) == {"none"}
    assert on["texts"] == off["texts"] == [TEXT] * len(MODELS)
    assert page.evaluate("document.documentElement.dataset.ws") == "plain"
    switch.check()
    assert set(page.evaluate(GLYPHS)["tab"]) == {'"→"'}


# crate/src/bindings/wasm/mod.rs PANIC_TEST_INPUT: the one input on which the core panics.
PANIC_TEST_INPUT = "\0tokenprism: panic test\0"


def test_a_core_crash_keeps_the_models(page, refs):
    crashes = page.evaluate("window.tokenprismCore.crashes()")
    type_text(page, PANIC_TEST_INPUT)
    page.wait_for_selector('[data-testid=compare-panel][data-state="failed"]', state="attached")
    notice = page.get_by_test_id("compare-notice")
    assert notice.is_visible() and "restarted" in notice.text_content()
    assert page.evaluate("window.tokenprismCore.crashes()") == crashes + 1
    # The restarted worker has every model back: the next text is traced by all three.
    type_text(page, TEXT)
    wait_rows(page, MODELS, TEXT)
    assert notice.is_hidden()
    check_rows(page, refs, TEXT)


def test_rows_stack_at_phone_width(page):
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        layout = page.evaluate(
            """() => {
              const row = document.querySelector('[data-testid=cmp-row]');
              const head = row.querySelector('.cmp-head').getBoundingClientRect();
              const tokens = row.querySelector('[data-testid=cmp-tokens]').getBoundingClientRect();
              return {scroll: document.documentElement.scrollWidth, head: head.bottom,
                      tokens: tokens.top, right: tokens.right};
            }"""
        )
        assert layout["scroll"] <= 390, layout
        assert layout["tokens"] >= layout["head"] and layout["right"] <= 390, layout
    finally:
        page.set_viewport_size({"width": 1280, "height": 720})


def test_links_carry_the_compare_part_and_old_links_open_without_it():
    state = {
        **link.default_state(),
        "tab": "compare",
        "compare": {"models": MODELS, "text": TEXT},
    }
    assert link.decode_state(link.encode_state(state)) == (state, None)
    # A link from before the tab: no compare part, the tab it named.
    old = link.encode_state(link.default_state())
    assert link.decode_state(old) == (link.default_state(), None)
    for models in (
        [],
        ["gpt2"],
        ["gpt2", "gpt2"],
        ["gpt2", "nope"],
        MODELS + ["qwen3", "o200k_base"],
    ):
        bad = {**state, "compare": {"models": models, "text": TEXT}}
        decoded, message = link.decode_state(link.encode_state(bad))
        assert decoded == link.default_state() and "malformed" in message, models
