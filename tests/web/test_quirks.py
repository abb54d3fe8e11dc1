"""The Quirks tab end to end: dist/ served over HTTP, opened in Debian's Chromium, with its
default models (bert-base-uncased's WordPiece, GPT-2's byte-level BPE, cl100k_base). Each
section's ids against tokenizers 0.23.3 and tiktoken run here; the letter's positions and the
variants marked as differing computed in this file from the references' offsets and ids.
Then an edited example reopens from a share link, and the tab fits a phone's width.

Needs `./build.sh build` (or `./build.sh dist`) first (dist/ is its output).
"""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from paths import data_dir, reference, require, tiktoken_module
from shell import link
from tabs.quirks import view as quirks_view
from web_env import DIST, open_page

READY_TIMEOUT_MS = 180_000
MODELS = ["bert-base-uncased", "gpt2", "cl100k_base"]
FILES = {
    "bert-base-uncased": "bert-base-uncased/tokenizer.json",
    "gpt2": "bpe/gpt2/tokenizer.json",
}
EDITED_WORD, EDITED_LETTER = "Mississippi", "S"
EDITED_NUMBER = "3.14159 10000000"


class Refs:
    """Each model's reference: ids and char spans of a text, as the page's trace has them
    (special tokens included)."""

    def __init__(self):
        self.tokenizers = {}
        for model_id, path in FILES.items():
            tok = reference().Tokenizer.from_file(str(require(data_dir() / path)))
            tok.no_padding()
            tok.no_truncation()
            self.tokenizers[model_id] = tok
        self.cl100k = tiktoken_module().get_encoding("cl100k_base")

    def encode(self, model_id, text) -> tuple[list[int], list[tuple[int, int]]]:
        if model_id in self.tokenizers:
            enc = self.tokenizers[model_id].encode(text)
            return enc.ids, [tuple(o) for o in enc.offsets]
        ids = self.cl100k.encode(text)
        _, starts = self.cl100k.decode_with_offsets(ids)
        ends = [*starts[1:], len(text)]
        return ids, list(zip(starts, ends))


@pytest.fixture(scope="module")
def refs():
    return Refs()


@pytest.fixture(scope="module")
def opened(browser, base_url):
    page, watch = open_page(browser, base_url)
    yield page, watch
    page.context.close()
    assert watch.problems == []


def wait_ready(page, ids, word):
    """Until every model's sections are drawn, the letters' from `word`."""
    page.wait_for_function(
        """([ids, word]) => {
          const panel = document.querySelector('[data-testid=quirks-panel]');
          if (panel.dataset.state !== 'ready' || panel.dataset.models !== ids.join(',')) return false;
          const blocks = [...document.querySelectorAll('[data-testid=quirks-letters] [data-testid=q-model]')];
          return blocks.length === ids.length && blocks.every((b, k) => b.dataset.model === ids[k]
            && b.querySelector('[data-testid=q-tokens]')?.textContent === word);
        }""",
        arg=[ids, word],
        timeout=READY_TIMEOUT_MS,
    )


def drawn(page, model_id) -> dict:
    """One model's sections as drawn: ids, letter hits, number ids, variant ids and marks."""
    return page.evaluate(
        """id => {
          const block = (name) => document.querySelector(
            `[data-testid=${name}] [data-testid=q-model][data-model="${id}"]`);
          const ids = (e) => JSON.parse(e.querySelector('[data-testid=q-ids]').textContent);
          const letters = block('quirks-letters');
          return {
            word: ids(letters),
            hits: [...letters.querySelectorAll('[data-testid=q-hit]')].map(
              (h) => [Number(h.dataset.char), Number(h.dataset.token), Number(h.dataset.pos)]),
            numbers: [...block('quirks-numbers').querySelectorAll('[data-testid=q-number]')].map(ids),
            variants: [...block('quirks-variants').querySelectorAll('[data-testid=q-variant]')].map(
              (v) => [ids(v), v.dataset.differs === '1']),
            rare: ids(block('quirks-rare-rows')),
          };
        }""",
        model_id,
    )


def expected_hits(word, letter, offsets) -> list[list[int]]:
    """Each occurrence of the letter (any case): its char, the first token spanning it and its
    position inside that token."""
    out = []
    for i, c in enumerate(word):
        if c.casefold() != letter[0].casefold():
            continue
        k = next((k for k, (s, e) in enumerate(offsets) if s <= i < e), -1)
        out.append([i, k, i - offsets[k][0] if k >= 0 else -1])
    return out


def check(page, refs, q):
    for m in q["models"]:
        got = drawn(page, m)
        word_ids, word_offsets = refs.encode(m, q["word"])
        assert got["word"] == word_ids, m
        assert got["hits"] == expected_hits(q["word"], q["letter"], word_offsets), m
        assert got["numbers"] == [refs.encode(m, t)[0] for t in q["numbers"]], m
        variant_ids = [refs.encode(m, t)[0] for t in q["variants"]]
        assert [ids for ids, _ in got["variants"]] == variant_ids, m
        assert [d for _, d in got["variants"]] == [ids != variant_ids[0] for ids in variant_ids], m
        assert got["rare"] == refs.encode(m, q["rare"])[0], m


# -------------------------------------------------------------------------------- tests


def test_default_examples_match_the_references(opened, refs):
    page, _ = opened
    page.get_by_test_id("tab-quirks").click()
    assert page.get_by_test_id("quirks-panel").is_visible()
    q = quirks_view.default_quirks()
    assert q["models"] == MODELS
    wait_ready(page, MODELS, q["word"])
    check(page, refs, q)
    # The lesson on the defaults: "strawberry"'s three r's span more than one token somewhere,
    # and the capitalised or spaced variants change some model's ids.
    assert any(len({k for _, k, _ in drawn(page, m)["hits"]}) > 1 for m in MODELS)
    assert any(d for m in MODELS for _, d in drawn(page, m)["variants"][1:])


def reference_misses(tok) -> list[int]:
    """The ids whose text (decoded alone, special tokens kept) does not encode to themselves."""
    ids = range(tok.get_vocab_size())
    texts = tok.decode_batch([[i] for i in ids], skip_special_tokens=False)
    encodings = tok.encode_batch(texts, add_special_tokens=False)
    return [i for i, enc in zip(ids, encodings) if enc.ids != [i]]


def reference_unseen(refs, model_id) -> tuple[list[int], list[str]]:
    """The vocabulary ids (added tokens left out) that no document of the bundled corpora
    (dist/data/bench/, each document encoded alone) yields, with each id's decoded text."""
    index = json.loads((DIST / "data/bench/index.json").read_text(encoding="utf-8"))
    docs = []
    for name in index["corpora"]:
        docs += json.loads((DIST / f"data/bench/{name}.json").read_text(encoding="utf-8"))
    seen: set[int] = set()
    if model_id in refs.tokenizers:
        tok = refs.tokenizers[model_id]
        for enc in tok.encode_batch(docs, add_special_tokens=False):
            seen.update(enc.ids)
        added = set(tok.get_added_tokens_decoder())
        vocab = tok.get_vocab_size(with_added_tokens=False)
        ids = [i for i in range(vocab) if i not in seen and i not in added]
        return ids, [tok.decode([i], skip_special_tokens=False) for i in ids]
    enc = refs.cl100k
    for doc in docs:
        seen.update(enc.encode_ordinary(doc))
    ids = [i for i in sorted(enc._mergeable_ranks.values()) if i not in seen]
    return ids, [enc.decode_single_token_bytes(i).decode("utf-8", "replace") for i in ids]


def test_the_vocabulary_scan_matches_the_references(opened, refs):
    page, _ = opened
    page.get_by_test_id("quirks-scan").click()
    page.wait_for_function(
        "ids => document.querySelector('[data-testid=quirks-panel]').dataset.scanned === ids",
        arg=",".join(MODELS),
        timeout=READY_TIMEOUT_MS,
    )
    for m in FILES:
        want = reference_misses(refs.tokenizers[m])
        got = page.evaluate(
            """id => {
              const block = document.querySelector(
                `[data-testid=quirks-rare-rows] [data-testid=q-model][data-model="${id}"]`);
              return {
                count: Number(block.querySelector('[data-testid=q-miss-count]').dataset.count),
                ids: [...block.querySelectorAll('[data-testid=q-miss]')].map((e) => Number(e.dataset.id)),
              };
            }""",
            m,
        )
        assert got["count"] == len(want), m
        assert got["ids"] == want[: quirks_view.MISSES_SHOWN], m
    # The entries the bundled corpora never produce: how many, and the longest ones shown.
    for m in MODELS:
        ids, texts = reference_unseen(refs, m)
        got = page.evaluate(
            """id => {
              const block = document.querySelector(
                `[data-testid=quirks-rare-rows] [data-testid=q-model][data-model="${id}"]`);
              return {
                count: Number(block.querySelector('[data-testid=q-unseen-count]').dataset.count),
                ids: [...block.querySelectorAll('[data-testid=q-unseen]')].map((e) => Number(e.dataset.id)),
              };
            }""",
            m,
        )
        assert got["count"] == len(ids) > 0, m
        longest = sorted(zip(ids, texts), key=lambda p: (-len(p[1]), p[0]))
        assert got["ids"] == [i for i, _ in longest[: quirks_view.MISSES_SHOWN]], m
    # r50k's known glitch token is one gpt2 shares, and nothing in the corpora produces it.
    assert (
        refs.tokenizers["gpt2"].token_to_id("ĠSolidGoldMagikarp")
        in reference_unseen(refs, "gpt2")[0]
    )
    # The known example: in GPT-2's vocabulary, and its text encodes to it alone.
    gpt2 = refs.tokenizers["gpt2"]
    magikarp = gpt2.token_to_id("ĠSolidGoldMagikarp")
    assert magikarp is not None and drawn(page, "gpt2")["rare"] == [magikarp]


def test_an_edited_example_reopens_from_a_share_link(browser, opened, refs):
    page, _ = opened
    page.get_by_test_id("quirks-word").fill(EDITED_WORD)
    page.get_by_test_id("quirks-letter").fill(EDITED_LETTER)
    page.get_by_test_id("quirks-number-1").fill(EDITED_NUMBER)
    q = quirks_view.default_quirks()
    q.update(word=EDITED_WORD, letter=EDITED_LETTER)
    q["numbers"][1] = EDITED_NUMBER
    wait_ready(page, MODELS, EDITED_WORD)
    # A refresh that read the word before the number was typed may finish first.
    page.wait_for_function(
        """([n, number]) => {
          const rows = [...document.querySelectorAll(
            '[data-testid=quirks-numbers] [data-testid=q-number][data-example="1"]')];
          return rows.length === n
            && rows.every((r) => r.querySelector('[data-testid=q-tokens]')?.textContent === number);
        }""",
        arg=[len(MODELS), EDITED_NUMBER],
        timeout=READY_TIMEOUT_MS,
    )
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=quirks-letters] [data-testid=q-model]"
        " [data-testid=q-hit]').length === n",
        arg=4 * len(MODELS),
    )
    check(page, refs, q)
    address = page.evaluate("location.href")
    state, message = link.decode_state(address.split("#", 1)[1])
    assert message is None and state["tab"] == "quirks" and state["quirks"] == q
    fresh, watch = open_page(browser, address)
    try:
        wait_ready(fresh, MODELS, EDITED_WORD)
        assert fresh.get_by_test_id("quirks-panel").is_visible()
        assert fresh.get_by_test_id("quirks-word").input_value() == EDITED_WORD
        assert fresh.get_by_test_id("quirks-number-1").input_value() == EDITED_NUMBER
        check(fresh, refs, q)
    finally:
        fresh.context.close()
    assert watch.problems == []


def test_the_tab_fits_a_phone(opened):
    page, _ = opened
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        page.set_viewport_size({"width": 1280, "height": 720})


def test_links_carry_the_quirks_part_and_reject_bad_ones():
    q = quirks_view.default_quirks()
    state = {**link.default_state(), "tab": "quirks", "quirks": q}
    assert link.decode_state(link.encode_state(state)) == (state, None)
    old = link.encode_state(link.default_state())
    assert link.decode_state(old) == (link.default_state(), None)
    for bad in (
        {**q, "models": ["gpt2"]},
        {**q, "numbers": ["1", "2"]},
        {**q, "variants": [1, 2, 3, 4]},
        {**q, "word": "x" * (quirks_view.MAX_EXAMPLE + 1)},
    ):
        decoded, message = link.decode_state(raw_link(bad))
        assert decoded == link.default_state() and "malformed" in message, bad


def raw_link(quirks) -> str:
    """A link holding `quirks` as is, unchecked (what a hand-edited link holds)."""
    compact = {
        "t": link.DEFAULT_TEXT,
        "k": "bert-base-uncased",
        "o": "1" * len(link.OPTION_KEYS),
        "f": "1" * len(link.FAST_KEYS),
        "s": "lowercase",
        "v": "text",
        "a": "quirks",
        "q": link.quirks_to_link(quirks),
    }
    raw = json.dumps(compact).encode()
    return "s=" + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")
