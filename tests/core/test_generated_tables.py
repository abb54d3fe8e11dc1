"""The checked-in BERT Unicode tables are exactly what their generator produces from the
crates the reference links (unicode_categories 0.1.1, unicode-normalization-alignments
0.1.12): nobody edited them by hand, and regenerating changes nothing."""

import subprocess

from paths import ROOT


def test_bert_tables_are_reproducible():
    manifest = ROOT / "crate/tools/gen-tables/Cargo.toml"
    out = subprocess.run(
        ["cargo", "run", "--quiet", "--release", "--manifest-path", str(manifest)],
        capture_output=True,
        check=True,
    ).stdout
    checked_in = (ROOT / "crate/src/unicode/generated/bert_tables.rs").read_bytes()
    assert out == checked_in, (
        "crate/src/unicode/generated/bert_tables.rs differs from its generator's output"
    )
    # The tables state the Unicode versions they carry.
    assert b"Unicode 8.0" in out and b"Unicode 9.0.0" in out


def test_word_char_table_is_reproducible():
    """regex's \\w on Unicode 16.0 (for added tokens' single_word rule) comes from its generator."""
    import os
    import sys

    pylib = os.path.expanduser("~/.cache/tokenprism/pylib/unicodedata2-16.0.0")
    env = dict(os.environ, PYTHONPATH=pylib)
    r = subprocess.run(
        [sys.executable, str(ROOT / "crate/tools/gen_word_chars.py"), "--check"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr


def test_script_table_is_reproducible():
    """UnicodeScripts' Unicode 9.0 scripts come from their generator (the npm package
    scripts/data/bpe_data.sh installs)."""
    r = subprocess.run(
        ["node", str(ROOT / "crate/tools/gen_scripts.mjs"), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
