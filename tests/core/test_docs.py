"""The Python examples of the README and docs/PYTHON.md run as written, in the data directory
they name (`./build.sh setup`'s), so that what a reader copies works."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from paths import data_dir

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("doc", ["README.md", "docs/PYTHON.md"])
def test_examples_run_as_written(doc, monkeypatch):
    monkeypatch.chdir(data_dir())
    result = doctest.testfile(
        str(ROOT / doc), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted > 10, f"{doc}: the examples were not found"
    assert result.failed == 0, f"{doc}: {result.failed} of {result.attempted} examples failed"
