"""The fixtures tests/core, tests/parity and tests/web share: the references, the tokenizer files
and the browser. Plain helpers live beside this file: paths.py (the data, the references),
parity.py, strategies.py, chapter.py and web_env.py (the built site, its server, Chromium).

Where the tests find web/ and scripts/ is pytest's `pythonpath` in pyproject.toml.
"""

from __future__ import annotations

import pytest

import web_env
from paths import bert_json, bert_pair, reference


@pytest.fixture(scope="module")
def toks():
    """(ours, reference) for bert-base-uncased, truncation and padding off: one pair per module,
    as a module may change their settings."""
    return bert_pair()


@pytest.fixture(scope="module")
def bert_reference():
    """tokenizers 0.23.3 on bert-base-uncased's tokenizer.json (the file the page ships), with
    the file's padding to 128 and its truncation off: the unpadded encoding the page shows."""
    tok = reference().Tokenizer.from_file(str(bert_json()))
    tok.no_padding()
    tok.no_truncation()
    return tok


@pytest.fixture(scope="module")
def base_url():
    """The built site (web_env.DIST) served by scripts/build/serve.py with its default headers
    (no-cache, cross-origin isolation, the CSP): the site's URL."""
    with web_env.served() as url:
        yield url


@pytest.fixture(scope="module")
def playwright():
    """A running Playwright for the module (the sync API allows one at a time per thread)."""
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright):
    """Debian's Chromium with the tests' flags, one for the module (starting one is slow)."""
    browser = web_env.launch(playwright)
    yield browser
    browser.close()
