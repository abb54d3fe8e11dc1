"""The model picker end to end: dist/ served over HTTP, opened in Debian's Chromium. Each
family's model is picked in the page and its ids compared with the reference run here:
tokenizers 0.23.3 (tokenizer.json files), tiktoken 0.14.0 (.tiktoken files), sentencepiece
0.2.3 (.model files) and mistral-common 1.13.1 (tekken.json). Then: a picked model survives
a share link reload, links made before the picker still open what they showed, and bad
files give a message.

Needs `./build.sh build` first (dist/ is its output).
"""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from paths import TekkenOracle, data_dir, reference, require, tiktoken_module
from shell import models
from web_env import DIST, open_page

READY_TIMEOUT_MS = 180_000
# The largest files (Tekken, 15 MB; Qwen3, 11 MB) on a loaded machine.
LOAD_TIMEOUT_MS = 180_000
TEXTS = [
    "Hello world, this is a test of tokenization.",
    "Привет, как дела? Токенизация текста.",
    "東京タワーは高い。 naïve café 😀",
    "def f(x):\n    return x ** 2\n",
]
# Where each model's file is in the data folder (dist/ has copies; the references read these).
DATA_FILES = {
    "bert-base-uncased": "bert-base-uncased/tokenizer.json",
    "gpt2": "bpe/gpt2/tokenizer.json",
    "llama3.2": "bpe/llama3.2/tokenizer.json",
    "deepseek-v4": "bpe/deepseek-v4/tokenizer.json",
    "mistral-v1": "sentencepiece/mistral-v1.model",
    "mistral-v3": "sentencepiece/mistral-v3.model",
    "mistral-v7": "sentencepiece/mistral-v7.model",
    "tekken-240718": "bpe/tekken/tekken_240718.json",
    "qwen3": "bpe/qwen3/tokenizer.json",
    "unigram-t5": "unigram/t5/tokenizer.json",
    "unigram-xlmr": "unigram/xlmr/tokenizer.json",
    "unigram-mon": "unigram/mon/tokenizer.json",
}


class References:
    """Each model's reference, made when first asked for."""

    def __init__(self):
        self.made: dict[str, object] = {}
        self.tekken: TekkenOracle | None = None

    def ids(self, model_id: str, text: str) -> list[int]:
        m = models.BY_ID[model_id]
        if m.kind == "tiktoken":
            return tiktoken_module().get_encoding(m.encoding).encode(text)
        path = require(data_dir() / DATA_FILES[model_id])
        if m.kind == "model":
            import sentencepiece

            assert sentencepiece.__version__ == "0.2.3", sentencepiece.__version__
            sp = self.made.get(model_id) or sentencepiece.SentencePieceProcessor(
                model_file=str(path)
            )
            self.made[model_id] = sp
            return sp.encode(text)
        if model_id.startswith("tekken"):
            if self.tekken is None:
                self.tekken = TekkenOracle(path)
            # The page's ids are encode's with the special tokens (tokenizers' default): <s> first.
            return [self.tekken.info["bos"], *self.tekken.encode(text)["ids"]]
        tok = self.made.get(model_id)
        if tok is None:
            tok = reference().Tokenizer.from_file(str(path))
            tok.no_padding()
            tok.no_truncation()
            self.made[model_id] = tok
        return tok.encode(text).ids

    def close(self):
        if self.tekken is not None:
            self.tekken.close()


@pytest.fixture(scope="module")
def refs():
    r = References()
    yield r
    r.close()


@pytest.fixture(scope="module")
def page(browser, base_url):
    page, watch = open_page(browser, base_url)
    # Every text the download status shows, for the progress check.
    page.evaluate(
        """() => {
          window.__progress = [];
          const box = document.getElementById("model-progress");
          new MutationObserver(() => window.__progress.push(box.textContent))
            .observe(box, {childList: true, characterData: true, subtree: true});
        }"""
    )
    yield page
    page.context.close()
    assert watch.problems == []


def wait_model(page, model_id, timeout=LOAD_TIMEOUT_MS):
    page.wait_for_selector(
        f'[data-testid="app"][data-model="{model_id}"]', state="attached", timeout=timeout
    )


def pick(page, model_id):
    page.get_by_test_id("tokenizer").select_option(model_id)
    wait_model(page, model_id)
    notice = page.get_by_test_id("notice")
    assert notice.is_hidden(), notice.text_content()


def type_text(page, text):
    page.get_by_test_id("input").fill(text)
    page.wait_for_function(
        "want => document.querySelector('[data-testid=token-view]')?.textContent === want",
        arg=text,
    )


def page_ids(page) -> list[int]:
    """The ids step's ids (the stepper's last step)."""
    last = page.locator('[data-testid="timeline"] [data-step]').count() - 1
    page.locator(f'[data-testid="timeline"] [data-step="{last}"] .tl-hit').click()
    page.wait_for_function(
        "k => document.querySelector('.timeline .current')?.dataset.step === String(k)", arg=last
    )
    return json.loads(page.get_by_test_id("step-ids").text_content())


# -------------------------------------------------------------------------------- tests


def test_picker_groups_models_by_family_with_sizes(page):
    groups = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=tokenizer] optgroup')].map(
             (g) => [g.label, [...g.querySelectorAll('option')].map((o) => [o.value, o.text])])"""
    )
    assert [g for g, _ in groups] == [family for family, _ in models.families()]
    sizes = json.loads((DIST / models.SIZES_FILE).read_text())
    for _, options in groups:
        for value, text in options:
            m = models.BY_ID[value]
            assert sizes[m.path] == (DIST / m.path).stat().st_size
            assert text == models.option_text(m, sizes), text
            assert "MB" in text or "KB" in text


@pytest.mark.parametrize("model_id", [m.id for m in models.MODELS])
def test_picked_model_gives_the_references_ids(page, refs, model_id):
    pick(page, model_id)
    for text in TEXTS:
        type_text(page, text)
        assert page_ids(page) == refs.ids(model_id, text), (model_id, text)
    module = models.BY_ID[model_id].module
    want = "pkg" if module == "bert" else "pkg-general"
    assert page.evaluate("() => tokenprismCore.request('configure', {})")["module"] == want
    # BERT's normalizer switches and fast paths show only for a BERT normalizer.
    for testid in ("options", "fast-options"):
        assert page.get_by_test_id(testid).is_visible() == (module == "bert"), (model_id, testid)


def test_download_shows_progress(page):
    # Every model but BERT's was downloaded above, each with its progress beside the picker.
    seen = page.evaluate("() => window.__progress")
    assert any(t.startswith("Downloading ") and "MB" in t for t in seen), seen
    assert page.get_by_test_id("model-progress").is_hidden()


def test_picked_model_survives_a_share_link_reload(browser, base_url, page, refs):
    pick(page, "mistral-v3")
    text = "Share links keep the model: Ünïcode ½"
    type_text(page, text)
    page.wait_for_function("() => location.hash.startsWith('#s=')")
    address = page.evaluate("location.href")
    fresh, watch = open_page(browser, address)
    try:
        wait_model(fresh, "mistral-v3")
        assert fresh.get_by_test_id("tokenizer").input_value() == "mistral-v3"
        assert fresh.get_by_test_id("input").input_value() == text
        type_text(fresh, text)
        assert page_ids(fresh) == refs.ids("mistral-v3", text)
    finally:
        fresh.context.close()
    assert watch.problems == []


def pack(obj) -> str:
    raw = json.dumps(obj).encode()
    return "s=" + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")


def test_links_from_before_the_picker_open_what_they_showed(browser, base_url, refs):
    text = "Old links still work, naïve 東京"
    # A WordPiece tab link: bert-base-uncased and the raw step.
    old = {"t": text, "k": "bert-base-uncased", "o": "1111", "f": "1111", "s": "raw", "v": "ids"}
    fresh, watch = open_page(browser, base_url + "#" + pack(old))
    try:
        wait_model(fresh, "bert-base-uncased")
        assert fresh.get_by_test_id("input").input_value() == text
        assert fresh.get_by_test_id("step").get_attribute("data-step") == "raw"
        assert page_ids(fresh) == refs.ids("bert-base-uncased", text)
    finally:
        fresh.context.close()
    # A link from the former BPE tab: its tokenizer and text, now in the tokenize tab (at the
    # model step, where the merges are), its chat messages in the chat section.
    bpe = {"t": text, "s": 0, "v": "text", "m": [["user", "hi <|im_end|>"]], "k": "cl100k_base"}
    old = {**old, "a": "bpe", "b": bpe}
    fresh, watch2 = open_page(browser, base_url + "#" + pack(old))
    try:
        wait_model(fresh, "cl100k_base")
        assert fresh.get_by_test_id("app").is_visible()
        assert fresh.locator("#tab-wordpiece").get_attribute("aria-selected") == "true"
        assert fresh.get_by_test_id("tab-bpe").count() == 0
        assert fresh.get_by_test_id("input").input_value() == text
        assert fresh.get_by_test_id("step").get_attribute("data-step") == "model"
        fresh.wait_for_selector('[data-testid="bpe-merges"] .merges')
        assert page_ids(fresh) == tiktoken_module().get_encoding("cl100k_base").encode(text)
    finally:
        fresh.context.close()
    assert watch.problems == [] and watch2.problems == []


def test_bad_files_give_a_message(page, refs, tmp_path):
    pick(page, "bert-base-uncased")
    bad = {
        "broken.model": b"\x0a\x05\xff\xfe not a model",
        "broken.tiktoken": b"this is not base64 !!! 12\n",
        "tekken.json": b'{"config": {"pattern": "("}, "vocab": 7}',
        "tokenizer.json": b'{"model": <img src=x onerror=alert(1)>',
        "binary.json": b"\xff\xfe\x00garbage",
    }
    for name, data in bad.items():
        path = tmp_path / name
        path.write_bytes(data)
        page.evaluate("() => { document.getElementById('notice').hidden = true; }")
        page.get_by_test_id("tokenizer-file").set_input_files(str(path))
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=notice]').hidden", timeout=60_000
        )
        notice = page.get_by_test_id("notice").text_content()
        assert notice.startswith("Could not load that file: ") and len(notice) > 30, notice
        assert page.get_by_test_id("error").is_hidden(), page.get_by_test_id("error").text_content()
        assert page.locator("#notice img").count() == 0
    # The model in use stays, and still tokenizes.
    assert page.get_by_test_id("tokenizer").input_value() == "bert-base-uncased"
    type_text(page, TEXTS[1])
    assert page_ids(page) == refs.ids("bert-base-uncased", TEXTS[1])


def test_your_file_opens_each_kind(page, refs, tmp_path):
    """A .model, a .tiktoken and a tekken.json picked from disk: read in the page, the
    references' ids."""
    files = {
        "mistral-v7": "mistral.model",
        "cl100k_base": "cl100k_base.tiktoken",
        "tekken-240718": "tekken.json",
    }
    for model_id, name in files.items():
        m = models.BY_ID[model_id]
        path = tmp_path / name
        path.write_bytes((DIST / m.path).read_bytes())
        # Another text first, so the one checked below is drawn from the file just opened.
        type_text(page, TEXTS[0])
        page.get_by_test_id("tokenizer-file").set_input_files(str(path))
        page.wait_for_function(
            "name => document.querySelector('[data-testid=tokenizer] option[data-custom]')"
            "?.textContent.startsWith(name + ' ')",
            arg=name,
            timeout=LOAD_TIMEOUT_MS,
        )
        wait_model(page, "custom")
        type_text(page, TEXTS[2])
        assert page_ids(page) == refs.ids(model_id, TEXTS[2]), name
        page.wait_for_function("() => !location.hash")  # a local file is never put in a link
