"""The Tokenize tab's model step for WordPiece and BPE, in Debian's Chromium at phone width:
dist/ served over HTTP, a model picked, a mixed text typed, the model step opened and every
pre-token picked. Expected values come from the references run here:

- WordPiece (bert-base-uncased): the lookups listed are those of a brute-force
  longest-match-first search over the file's vocabulary, and the result is tokenizers
  0.23.3's model tokens for the word (the unk token for a word with a missing position or
  more than max_input_chars_per_word chars);
- BPE (GPT-2's and Llama 3.2's tokenizer.json, o200k_base's rank file): each merge joins the
  pair shown with the rank of that pair in the file's merges list (for o200k_base, the
  merged token's tiktoken rank), and the parts after the last merge are the reference's
  tokens for the piece (tokenizers' model, tiktoken's encoding).

The page must not scroll sideways, and axe-core must find nothing serious with each view shown.
Needs `./build.sh dist` first (dist/ is its output).
"""

from __future__ import annotations

import json

import pytest
from test_a11y import AXE, axe_findings

from parity import gpt2_byte_chars, longest_match_search
from paths import bert_json, bpe_dir, bpe_json, reference, tiktoken_module
from web_env import open_page

READY_TIMEOUT_MS = 180_000
PHONE = {"width": 390, "height": 844}
WP_TEXT = "Unaffable tokenization, Ｔｏｋｙｏ 東京 naïve 😀 " + "x" * 101
BPE_TEXT = "Hello wörld, internationalization! Привет 東京 😀 2026"


def pick_model(page, model_id, text):
    if page.get_by_test_id("app").get_attribute("data-model") != model_id:
        page.get_by_test_id("tokenizer").select_option(model_id)
        page.wait_for_selector(
            f'[data-testid="app"][data-model="{model_id}"]',
            state="attached",
            timeout=READY_TIMEOUT_MS,
        )
    page.get_by_test_id("input").fill(text)
    page.wait_for_function(
        "want => document.querySelector('[data-testid=token-view]')?.textContent === want",
        arg=text,
    )


def open_model_step(page, testid):
    rows = page.locator('[data-testid="timeline"] [data-step]')
    model = rows.count() - 2
    page.locator(f'[data-testid="timeline"] [data-step="{model}"] .tl-hit').click()
    page.wait_for_selector(f'[data-testid="step"] [data-testid="{testid}"]')


def shown(page, testid, piece):
    page.wait_for_function(
        "([id, want]) => document.querySelector(`[data-testid=${id}]`)?.dataset.piece === want",
        arg=[testid, piece],
    )


def pipeline_words(ref, text: str) -> list[str]:
    normalized = ref.normalizer.normalize_str(text) if ref.normalizer else text
    return [w for w, _ in ref.pre_tokenizer.pre_tokenize_str(normalized)]


def no_sideways_scroll(page, what):
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], (what, width)


# ------------------------------------------------------------------------------- WordPiece


def test_wordpiece_search_is_the_longest_match(browser, base_url):
    text = bert_json().read_text(encoding="utf-8")
    model = json.loads(text)["model"]
    ref = reference().Tokenizer.from_str(text)
    page, watch = open_page(browser, base_url, viewport=PHONE)
    try:
        pick_model(page, "bert-base-uncased", WP_TEXT)
        open_model_step(page, "wordpiece-steps")
        chips = page.get_by_test_id("step-piece")
        words = pipeline_words(ref, WP_TEXT)
        assert chips.all_text_contents() == words
        outcomes = set()
        for k, word in enumerate(words):
            chips.nth(k).click()
            shown(page, "wordpiece-steps", word)
            assert chips.nth(k).get_attribute("aria-pressed") == "true"
            tried = page.get_by_test_id("wp-attempt")
            got = [
                (
                    tried.nth(i).get_attribute("data-piece"),
                    tried.nth(i).get_attribute("data-hit") == "1",
                )
                for i in range(tried.count())
            ]
            lookups, matches = longest_match_search(
                model["vocab"],
                word,
                model["max_input_chars_per_word"],
                model["continuing_subword_prefix"],
            )
            assert got == [(key, found) for _, _, key, found in lookups], word
            want = [t.value for t in ref.model.tokenize(word)]
            assert page.get_by_test_id("wp-result-token").all_text_contents() == want, word
            if matches is not None:
                assert [p for p, hit in got if hit] == want, word
            outcomes.add("too long" if len(word) > 100 else "unk" if matches is None else "pieces")
            no_sideways_scroll(page, word)
        assert outcomes == {"too long", "unk", "pieces"}
        # The keyboard moves the pick as in the lattice.
        chips.nth(0).focus()
        page.keyboard.press("ArrowRight")
        shown(page, "wordpiece-steps", words[1])
        assert page.evaluate("document.activeElement.dataset.stepPiece") == "1"
    finally:
        page.context.close()
    assert watch.problems == []


# ------------------------------------------------------------------------------------- BPE


def merges_shown(page) -> list[tuple[str, str, int, list[str]]]:
    """(left, right, rank, parts after) of each merge row shown."""
    rows = page.locator('[data-testid="bpe-merge-row"]:not([data-step="0"])')
    out = []
    for i in range(rows.count()):
        row = rows.nth(i)
        pair = row.get_by_test_id("bpe-merge-pair")
        parts = row.get_by_test_id("bpe-merge-part")
        out.append(
            (
                pair.get_attribute("data-left"),
                pair.get_attribute("data-right"),
                int(row.get_by_test_id("bpe-merge-rank").text_content()),
                [parts.nth(j).get_attribute("data-part") for j in range(parts.count())],
            )
        )
    return out


def initial_parts(page) -> list[str]:
    parts = page.locator(
        '[data-testid="bpe-merge-row"][data-step="0"] [data-testid="bpe-merge-part"]'
    )
    return [parts.nth(j).get_attribute("data-part") for j in range(parts.count())]


def check_pieces(page, words, rank_of, want_tokens):
    chips = page.get_by_test_id("step-piece")
    assert chips.all_text_contents() == words
    merged_some = False
    for k, word in enumerate(words):
        chips.nth(k).click()
        shown(page, "bpe-merges", word)
        rows = merges_shown(page)
        parts = initial_parts(page)
        assert "".join(parts) == word
        for left, right, rank, after in rows:
            assert rank == rank_of(left, right), (word, left, right)
            i = next(i for i in range(len(parts) - 1) if parts[i : i + 2] == [left, right])
            parts[i : i + 2] = [left + right]
            assert parts == after, word
        assert parts == want_tokens(word), word
        merged_some |= bool(rows)
        no_sideways_scroll(page, word)
    assert merged_some


@pytest.mark.parametrize("name", ["gpt2", "llama3.2"])
def test_bpe_merges_follow_the_merges_list(browser, base_url, name):
    text = bpe_json(name).read_text(encoding="utf-8")
    merges = json.loads(text)["model"]["merges"]
    pairs = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]
    rank = {pair: i for i, pair in enumerate(pairs)}
    ref = reference().Tokenizer.from_str(text)
    page, watch = open_page(browser, base_url, viewport=PHONE)
    try:
        pick_model(page, name, BPE_TEXT)
        open_model_step(page, "bpe-merges")
        check_pieces(
            page,
            pipeline_words(ref, BPE_TEXT),
            lambda a, b: rank[(a, b)],
            lambda w: [t.value for t in ref.model.tokenize(w)],
        )
    finally:
        page.context.close()
    assert watch.problems == []


def test_bpe_merges_of_o200k_are_tiktokens(browser, base_url):
    enc = tiktoken_module().get_encoding("o200k_base")
    assert (bpe_dir() / "o200k_base.tiktoken").is_file()
    byte_of = {c: b for b, c in gpt2_byte_chars().items()}
    raw = lambda token: bytes(byte_of[c] for c in token)  # noqa: E731
    to_chars = lambda data: "".join(gpt2_byte_chars()[b] for b in data)  # noqa: E731
    words = [to_chars(p.encode()) for p in _tiktoken_pieces(enc, BPE_TEXT)]
    page, watch = open_page(browser, base_url, viewport=PHONE)
    try:
        pick_model(page, "o200k_base", BPE_TEXT)
        open_model_step(page, "bpe-merges")
        check_pieces(
            page,
            words,
            # A merged token's tiktoken rank orders the merge: 256 single bytes come first.
            lambda a, b: enc.encode_single_token(raw(a) + raw(b)) - 256,
            lambda w: [
                to_chars(enc.decode_single_token_bytes(i))
                for i in enc.encode_ordinary(raw(w).decode())
            ],
        )
    finally:
        page.context.close()
    assert watch.problems == []


def _tiktoken_pieces(enc, text: str) -> list[str]:
    """tiktoken's own split of `text` (its pattern, run by the regex module it uses)."""
    import regex

    return regex.findall(enc._pat_str, text)


def test_sentencepiece_bpe_merges_by_score(browser, base_url):
    """Mistral v1 (SentencePiece's BPE, no merges list): each merge's rank is the number of
    pieces scoring higher than the merged one, in sentencepiece 0.2.3's own scores, and the
    parts end as its pieces."""
    import sentencepiece

    from paths import spm_model

    sp = sentencepiece.SentencePieceProcessor(model_file=str(spm_model("mistral-v1")))
    mergeable = [
        i
        for i in range(sp.get_piece_size())
        if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i))
    ]
    scores = sorted((sp.get_score(i) for i in mergeable), reverse=True)
    # Chars the vocabulary has: no byte fallback, so the pieces join to the normalized text.
    text = "Hello wörld, internationalization! Привет 2026"
    pieces = sp.encode(text, out_type=str)
    assert not [p for p in pieces if p.startswith("<0x")]

    def rank_of(a, b):
        score = sp.get_score(sp.piece_to_id(a + b))
        return sum(1 for x in scores if x > score)

    page, watch = open_page(browser, base_url, viewport=PHONE)
    try:
        pick_model(page, "mistral-v1", text)
        open_model_step(page, "bpe-merges")
        check_pieces(page, ["".join(pieces)], rank_of, lambda w: pieces)
    finally:
        page.context.close()
    assert watch.problems == []


# ------------------------------------------------------------------------------------ axe


@pytest.mark.parametrize(
    ("model_id", "text", "testid"),
    [("bert-base-uncased", WP_TEXT, "wordpiece-steps"), ("gpt2", BPE_TEXT, "bpe-merges")],
)
def test_model_step_views_have_no_serious_axe_findings(browser, base_url, model_id, text, testid):
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run ./build.sh setup", pytrace=False)
    found = {}
    for scheme in ("light", "dark"):
        page, _ = open_page(browser, base_url, viewport=PHONE, bypass_csp=True, color_scheme=scheme)
        try:
            pick_model(page, model_id, text)
            open_model_step(page, testid)
            page.get_by_test_id("step-piece").nth(1).click()
            page.wait_for_selector(f'[data-testid="{testid}"] ol')
            found[scheme] = axe_findings(page)
        finally:
            page.context.close()
    assert found == {"light": [], "dark": []}, found
