"""The Unigram lattice in the Tokenize tab's model step, in Debian's Chromium at phone width:
dist/ served over HTTP, a Unigram model picked, a mixed text typed, the model step opened and
pre-tokens picked by mouse and keyboard. The highlighted path and the tokens under it are
compared with tokenizers 0.23.3's Unigram model on the same pre-token, run here; the page
must not scroll sideways, and axe-core must find nothing serious with the lattice shown.

Needs `./build.sh dist` first (dist/ is its output).
"""

from __future__ import annotations

import pytest
from test_a11y import AXE, axe_findings

from paths import reference, unigram_json
from web_env import open_page

READY_TIMEOUT_MS = 180_000
PHONE = {"width": 390, "height": 844}
# Latin with accents and a long word, Cyrillic, CJK, Mongolian script, an emoji and digits:
# dense lattices, and unknown chars (bytes in mon, which has byte fallback).
TEXT = "Héllo wörld, internationalization! Привет 東京タワー ᠮᠣᠩᠭᠣᠯ 😀 2026"
MODELS = {"unigram-t5": "t5", "unigram-mon": "mon"}


def pick_model(page, model_id):
    page.get_by_test_id("tokenizer").select_option(model_id)
    page.wait_for_selector(
        f'[data-testid="app"][data-model="{model_id}"]', state="attached", timeout=READY_TIMEOUT_MS
    )
    page.get_by_test_id("input").fill(TEXT)
    page.wait_for_function(
        "want => document.querySelector('[data-testid=token-view]')?.textContent === want",
        arg=TEXT,
    )


def open_model_step(page):
    rows = page.locator('[data-testid="timeline"] [data-step]')
    model = rows.count() - 2
    page.locator(f'[data-testid="timeline"] [data-step="{model}"] .tl-hit').click()
    page.wait_for_selector('[data-testid="step"][data-step="model"] [data-testid="lattice"]')


def shown_piece(page, piece):
    """Waits until the lattice of `piece` is drawn."""
    page.wait_for_function(
        "want => document.querySelector('[data-testid=lattice]')?.dataset.piece === want",
        arg=piece,
    )


def reference_pieces(ref, text: str) -> list[str]:
    normalized = ref.normalizer.normalize_str(text) if ref.normalizer else text
    return [w for w, _ in ref.pre_tokenizer.pre_tokenize_str(normalized)]


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_lattice_best_path_is_the_references_tokenization(browser, base_url, model_id):
    ref = reference().Tokenizer.from_file(str(unigram_json(MODELS[model_id])))
    page, watch = open_page(browser, base_url, viewport=PHONE)
    try:
        pick_model(page, model_id)
        open_model_step(page)
        chips = page.get_by_test_id("step-piece")
        pieces = reference_pieces(ref, TEXT)
        assert chips.all_text_contents() == pieces
        bytes_seen = 0
        for k, piece in enumerate(pieces):
            chips.nth(k).click()
            shown_piece(page, piece)
            assert chips.nth(k).get_attribute("aria-pressed") == "true"
            want = [t.value for t in ref.model.tokenize(piece)]
            path = page.get_by_test_id("lattice-path-token").all_text_contents()
            assert path == want, piece
            best = page.locator('[data-testid="lattice-node"][data-best="1"]')
            highlighted = [best.nth(i).get_attribute("data-piece") for i in range(best.count())]
            assert "".join(highlighted) == piece
            if not page.locator('[data-testid="lattice-node"].unk[data-best="1"]').count():
                assert highlighted == want, piece
            bytes_seen += sum(t.startswith("<0x") for t in want)
            # Whatever the piece, the page itself never scrolls sideways at 390 px.
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (piece, width)
        if model_id == "unigram-mon":
            assert bytes_seen > 0, "no byte fallback tokens in the text"
        # The long word's drawing is wider than the phone: it scrolls in its own box.
        long_word = pieces.index(next(p for p in pieces if "internationalization" in p))
        chips.nth(long_word).click()
        shown_piece(page, pieces[long_word])
        box = page.evaluate(
            """() => { const b = document.querySelector('.lattice-scroll');
                       const r = b.getBoundingClientRect();
                       return [b.scrollWidth, b.clientWidth, r.right]; }"""
        )
        assert box[0] > box[1] and box[2] <= PHONE["width"], box
        # The keyboard: Tab reaches the picked chip, arrows move the pick, Enter keeps it.
        chips.nth(0).focus()
        page.keyboard.press("ArrowRight")
        shown_piece(page, pieces[1])
        assert chips.nth(1).get_attribute("aria-pressed") == "true"
        assert page.evaluate("document.activeElement.dataset.stepPiece") == "1"
        assert page.get_by_test_id("step").get_attribute("data-step") == "model"
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("Enter")
        shown_piece(page, pieces[0])
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.stepPiece") == "1"
    finally:
        page.context.close()
    assert watch.problems == []


def test_lattice_has_no_serious_axe_findings(browser, base_url):
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run ./build.sh setup", pytrace=False)
    found = {}
    for scheme in ("light", "dark"):
        # bypass_csp: the page's policy refuses the script tag that brings axe in.
        page, _ = open_page(browser, base_url, viewport=PHONE, bypass_csp=True, color_scheme=scheme)
        try:
            pick_model(page, "unigram-mon")
            open_model_step(page)
            page.get_by_test_id("step-piece").nth(2).click()
            page.wait_for_selector('[data-testid="lattice-svg"]')
            found[scheme] = axe_findings(page)
        finally:
            page.context.close()
    assert found == {"light": [], "dark": []}, found
