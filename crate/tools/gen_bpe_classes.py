#!/usr/bin/env python3
"""Generates crate/src/unicode/generated/bpe_classes.rs: the character classes the BPE pre-tokenizers need.

The byte-level BPE patterns (GPT-2, cl100k, o200k, Qwen, DeepSeek V4) only ask, of each char: is
it \\s, a letter (and which of Lu Ll Lt Lm Lo), a mark (M), a number (N), punctuation or a symbol
(P, S), or a space, \\r or \\n? So each code point gets one small class number, and the matchers
test bits of a per-class flag word.

Unicode version: both references match on Unicode 16.0.0. tiktoken 0.14.0 uses fancy-regex
0.19 over regex-syntax 0.8.11 (tables from UCD 16.0.0); tokenizers 0.23.3 uses Oniguruma, which
also answers \\p{L}, \\p{N}, \\p{M} etc. exactly as 16.0.0 (tests/parity/test_bpe_parity.py probes both
references on every code point). Debian 12 only ships UCD 15.0 in /usr/share/unicode, so the
General_Category comes from PyPI `unicodedata2==16.0.0` (a build of CPython's unicodedata on
UCD 16.0.0), which scripts/data/bpe_data.sh installs into the cache:

    python3 crate/tools/gen_bpe_classes.py            # rewrite the table
    python3 crate/tools/gen_bpe_classes.py --check    # exit 1 if the checked-in file is stale

\\s is the White_Space property (PropList.txt; unchanged since Unicode 6.3, so the 15.0 file
is also the 16.0 set, and the generator checks that no White_Space char is a letter, mark or
number in 16.0).

Also generated: the code points assigned after Unicode 9.0 (DerivedAge.txt), where the NFC of
`tokenizers` (Unicode 9.0 tables) and ours (15.0) can disagree; see crate/src/normalizers/nfc.rs.

Layout: ASCII has its own 128-entry array. Other code points go through two levels:
INDEX[cp >> SHIFT] -> block, BLOCKS[(block << SHIFT) | (cp & MASK)] -> class. Identical blocks
are stored once; SHIFT is the one that makes the two arrays smallest. Output is a pure function
of the inputs (no timestamps), so tests can check that the checked-in file is current.
"""

import argparse
import importlib
import os
import sys

from gen_output import write_or_check

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.join(HERE, "..", "src", "unicode", "generated", "bpe_classes.rs")
DEFAULT_PROPLIST = "/usr/share/unicode/PropList.txt"
DEFAULT_DERIVED_AGE = "/usr/share/unicode/DerivedAge.txt"
# tokenizers' NFC (unicode-normalization-alignments 0.1.12) has Unicode 9.0 tables.
NFC_REFERENCE_VERSION = 9.0
UNICODE_VERSION = "16.0.0"

# Class numbers; crate/src/pre_tokenizers/byte_level/classes.rs gives each its flag word.
CLASSES = [
    ("OTHER", "anything else: controls, format chars, unassigned, private use, surrogates"),
    ("LU", "Lu, uppercase letter"),
    ("LL", "Ll, lowercase letter"),
    ("LT", "Lt, titlecase letter"),
    ("LM", "Lm, modifier letter"),
    ("LO", "Lo, other letter"),
    ("MARK", "Mn, Mc or Me"),
    ("NUMBER", "Nd, Nl or No"),
    ("SPACE", "U+0020, which some patterns allow as an optional prefix"),
    ("NEWLINE", "\\r or \\n, which some patterns treat apart from other whitespace"),
    ("WHITESPACE", "any other White_Space char (\\t, U+00A0, U+3000, ...)"),
    ("PUNCT_SYMBOL", "P* or S*, punctuation or symbol"),
]
CLASS = {name: i for i, (name, _) in enumerate(CLASSES)}


def default_unicodedata_path():
    cache = os.environ.get("TOKENPRISM_CACHE") or os.path.expanduser("~/.cache/tokenprism")
    return os.path.join(cache, "pylib", f"unicodedata2-{UNICODE_VERSION}")


def load_unicodedata(path):
    # Another copy (the 15.0 one the normalization tests use) may already be imported in this
    # process: set it aside so the import finds the file under `path`, then put it back.
    saved = sys.modules.pop("unicodedata2", None)
    sys.path.insert(0, path)
    try:
        ud = importlib.import_module("unicodedata2")
    finally:
        sys.path.pop(0)
        if saved is not None:
            sys.modules["unicodedata2"] = saved
        else:
            sys.modules.pop("unicodedata2", None)
    if ud.unidata_version != UNICODE_VERSION:
        sys.exit(f"unicodedata2 at {ud.__file__} is Unicode {ud.unidata_version}, need "
                 f"{UNICODE_VERSION} (run scripts/data/bpe_data.sh)")
    return ud


def white_space(proplist):
    cps = set()
    with open(proplist, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            rng, prop = (s.strip() for s in line.split(";"))
            if prop != "White_Space":
                continue
            lo, _, hi = rng.partition("..")
            cps.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return cps


def classify(ud, ws):
    classes = []
    for cp in range(0x110000):
        if cp in ws:
            cls = "SPACE" if cp == 0x20 else "NEWLINE" if cp in (0x0A, 0x0D) else "WHITESPACE"
            gc = ud.category(chr(cp))
            if gc[0] in "LMN":
                sys.exit(f"U+{cp:04X} is White_Space and {gc}: the class model assumes not")
        else:
            gc = ud.category(chr(cp))
            cls = {"Lu": "LU", "Ll": "LL", "Lt": "LT", "Lm": "LM", "Lo": "LO",
                   "Mn": "MARK", "Mc": "MARK", "Me": "MARK",
                   "Nd": "NUMBER", "Nl": "NUMBER", "No": "NUMBER"}.get(gc, "OTHER")
            if gc[0] in "PS":
                cls = "PUNCT_SYMBOL"
        classes.append(CLASS[cls])
    return classes


def layout(classes, shift):
    size = 1 << shift
    blocks, index, seen = [], [], {}
    for start in range(0, 0x110000, size):
        block = tuple(classes[start:start + size])
        if block not in seen:
            seen[block] = len(blocks)
            blocks.append(block)
        index.append(seen[block])
    index_bytes = len(index) * (1 if len(blocks) <= 256 else 2)
    return index_bytes + len(blocks) * size, index, blocks


def assigned_after(derived_age, version):
    ranges = []
    with open(derived_age, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            rng, age = (x.strip() for x in line.split(";"))
            major, minor = (int(x) for x in age.split("."))
            if (major, minor) > tuple(int(x) for x in str(version).split(".")):
                lo, _, hi = rng.partition("..")
                ranges.append((int(lo, 16), int(hi or lo, 16)))
    ranges.sort()
    merged = []
    for lo, hi in ranges:
        if merged and merged[-1][1] + 1 == lo:
            merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


def render(classes, new_since):
    best = min((layout(classes, s) + (s,) for s in range(4, 10)), key=lambda t: t[0])
    total, index, blocks, shift = best
    index_ty = "u8" if len(blocks) <= 256 else "u16"
    out = []
    w = out.append
    w("// Generated by crate/tools/gen_bpe_classes.py from Unicode " + UNICODE_VERSION
      + " (unicodedata2 + PropList.txt White_Space).")
    w("// Do not edit: change the generator and rerun it.")
    w("")
    w(f'pub const UNICODE_VERSION: &str = "{UNICODE_VERSION}";')
    w("")
    for i, (name, doc) in enumerate(CLASSES):
        w(f"/// {doc}")
        w(f"pub const {name}: u8 = {i};")
    w(f"pub const NUM_CLASSES: usize = {len(CLASSES)};")
    w("")
    w("/// Class of each ASCII byte.")
    w("pub static ASCII: [u8; 128] = [")
    for row in range(0, 128, 16):
        w("    " + ", ".join(str(c) for c in classes[row:row + 16]) + ",")
    w("];")
    w("")
    w(f"/// Code points per block: `1 << SHIFT` ({total} bytes of tables in all).")
    w(f"pub const SHIFT: u32 = {shift};")
    w(f"/// Block number of each `cp >> SHIFT`.")
    w(f"pub static INDEX: [{index_ty}; {len(index)}] = [")
    for row in range(0, len(index), 32):
        w("    " + ", ".join(str(b) for b in index[row:row + 32]) + ",")
    w("];")
    w("")
    size = 1 << shift
    w(f"/// {len(blocks)} distinct blocks of {size} classes.")
    w(f"pub static BLOCKS: [u8; {len(blocks) * size}] = [")
    for block in blocks:
        for row in range(0, size, 64):
            w("    " + ",".join(str(c) for c in block[row:row + 64]) + ",")
    w("];")
    w("")
    w(f"/// Code points assigned after Unicode {NFC_REFERENCE_VERSION} (up to the DerivedAge.txt version),")
    w("/// as sorted inclusive ranges.")
    w(f"pub static ASSIGNED_AFTER_9_0: [(u32, u32); {len(new_since)}] = [")
    for row in range(0, len(new_since), 6):
        w("    " + " ".join(f"(0x{a:X}, 0x{b:X})," for a, b in new_since[row:row + 6]))
    w("];")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if the output file is stale")
    ap.add_argument("--output", default=DEFAULT_OUTPUT)
    ap.add_argument("--proplist", default=DEFAULT_PROPLIST)
    ap.add_argument("--derived-age", default=DEFAULT_DERIVED_AGE)
    ap.add_argument("--unicodedata", default=default_unicodedata_path(),
                    help="directory holding unicodedata2 for Unicode " + UNICODE_VERSION)
    args = ap.parse_args()
    ud = load_unicodedata(args.unicodedata)
    text = render(classify(ud, white_space(args.proplist)),
                  assigned_after(args.derived_age, NFC_REFERENCE_VERSION))
    write_or_check(args.output, text, args.check, "python3 crate/tools/gen_bpe_classes.py")


if __name__ == "__main__":
    main()
