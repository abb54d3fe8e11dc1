#!/usr/bin/env python3
"""Generates crate/src/unicode/generated/forms_tables.rs: the data behind NFC, NFD, NFKC and NFKD.

Reads the Unicode Character Database (Debian package `unicode-data`, /usr/share/unicode):
UnicodeData.txt (combining classes, decomposition mappings), CompositionExclusions.txt and
DerivedNormalizationProps.txt (Full_Composition_Exclusion and the four quick-check
properties). Every derived fact is computed from the raw mappings *and* checked against the
derived file, so a misread file fails here instead of producing subtly wrong tables.

    python3 crate/tools/gen_forms.py            # rewrite the tables
    python3 crate/tools/gen_forms.py --check    # exit 1 if the checked-in file is stale

Output is a pure function of the input files (no timestamps, sorted iteration), so running it
twice gives identical bytes; tests/parity/test_normalization_forms.py checks the file is current.

Layout (see the doc comments written into the output for the runtime side):
  PAGE_INDEX[cp >> 8] -> block number; BLOCKS[block * 256 + (cp & 0xFF)] -> INFO index;
  INFO[i] packs combining class, quick-check flags and a payload index. Identical 256-code-point
  blocks are stored once, and INFO index 0 means "inert": a starter that no form changes and
  that never composes with what precedes it, which is what most text is made of.
"""

import argparse
import os
import re
import sys

from gen_output import write_or_check

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.join(HERE, "..", "src", "unicode", "generated", "forms_tables.rs")
DEFAULT_UCD = "/usr/share/unicode"

MAX_CP = 0x10FFFF
PAGE_SHIFT = 8
PAGE_SIZE = 1 << PAGE_SHIFT

# Hangul syllables decompose and compose by arithmetic (Unicode §3.12), not by table.
S_BASE, L_BASE, V_BASE, T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
L_COUNT, V_COUNT, T_COUNT = 19, 21, 28
N_COUNT = V_COUNT * T_COUNT
S_COUNT = L_COUNT * N_COUNT

# Bit layout of an INFO word; the runtime reads these constants from the generated file.
CCC_MASK = 0xFF
CHANGES_NFD = 1 << 8
CHANGES_NFKD = 1 << 9
CHANGES_NFC = 1 << 10
CHANGES_NFKC = 1 << 11
COMPOSES_BACKWARD = 1 << 12
PAYLOAD_SHIFT = 16


def fail(msg):
    sys.exit("gen_forms.py: " + msg)


def ucd_version(path):
    """The version in a UCD file's first line, e.g. '# DerivedNormalizationProps-15.0.0.txt'."""
    with open(path, encoding="utf-8") as f:
        m = re.search(r"-(\d+)\.(\d+)\.(\d+)\.txt", f.readline())
    if not m:
        fail(f"no version in the first line of {path}")
    return tuple(int(x) for x in m.groups())


def data_lines(path):
    """Yields the semicolon-separated fields of each non-comment line."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                yield [field.strip() for field in line.split(";")]


def code_range(field):
    lo, _, hi = field.partition("..")
    return range(int(lo, 16), int(hi or lo, 16) + 1)


def read_unicode_data(path):
    """Returns (ccc, mappings): non-zero combining classes, and cp -> (is_compat, [cps])."""
    ccc, mappings = {}, {}
    for fields in data_lines(path):
        cp = int(fields[0], 16)
        if fields[1].endswith(", First>") or fields[1].endswith(", Last>"):
            # Ranges (CJK, Hangul, ...) have class 0 and no mapping field.
            if fields[3] != "0" or fields[5]:
                fail(f"unexpected properties on range line {fields[0]}")
            continue
        if int(fields[3]):
            ccc[cp] = int(fields[3])
        if fields[5]:
            parts = fields[5].split()
            is_compat = parts[0].startswith("<")
            if is_compat:
                parts = parts[1:]
            mappings[cp] = (is_compat, [int(p, 16) for p in parts])
    return ccc, mappings


def read_property(path, names):
    """Returns {(property, value): set(cps)} for the requested properties."""
    out = {}
    for fields in data_lines(path):
        if fields[1] in names:
            key = (fields[1], fields[2] if len(fields) > 2 else True)
            out.setdefault(key, set()).update(code_range(fields[0]))
    return out


def is_hangul_syllable(cp):
    return S_BASE <= cp < S_BASE + S_COUNT


def hangul_decomposition(cp):
    s = cp - S_BASE
    parts = [L_BASE + s // N_COUNT, V_BASE + (s % N_COUNT) // T_COUNT]
    if s % T_COUNT:
        parts.append(T_BASE + s % T_COUNT)
    return parts


def full_decomposition(cp, mappings, compat):
    """Applies mappings recursively (canonical only, or canonical and compatibility).

    The order is the mapping order, not canonical order: the runtime reorders the whole
    buffer anyway, and keeping the mapping order is what makes the alignment tags (which
    travel with the chars through the stable sort) match the reference implementation's.
    """
    if is_hangul_syllable(cp):
        return hangul_decomposition(cp)
    m = mappings.get(cp)
    if m is None or (m[0] and not compat):
        return [cp]
    out = []
    for part in m[1]:
        out.extend(full_decomposition(part, mappings, compat))
    return out


def build(ucd):
    versions = {name: ucd_version(os.path.join(ucd, name))
                for name in ("CompositionExclusions.txt", "DerivedNormalizationProps.txt")}
    version = versions["DerivedNormalizationProps.txt"]
    if len(set(versions.values())) != 1:
        fail(f"UCD files disagree on the version: {versions}")

    ccc, mappings = read_unicode_data(os.path.join(ucd, "UnicodeData.txt"))
    exclusions = set()
    for fields in data_lines(os.path.join(ucd, "CompositionExclusions.txt")):
        exclusions.update(code_range(fields[0]))
    props = read_property(
        os.path.join(ucd, "DerivedNormalizationProps.txt"),
        {"Full_Composition_Exclusion", "NFD_QC", "NFKD_QC", "NFC_QC", "NFKC_QC"},
    )

    canonical = {cp: full_decomposition(cp, mappings, False) for cp in mappings}
    compat = {cp: full_decomposition(cp, mappings, True) for cp in mappings}
    canonical = {cp: d for cp, d in canonical.items() if d != [cp]}
    compat = {cp: d for cp, d in compat.items() if d != [cp]}

    # Full_Composition_Exclusion = the exclusion table + singletons + non-starter decompositions.
    full_exclusion = set(exclusions)
    for cp, (is_compat, parts) in mappings.items():
        if is_compat:
            continue
        if len(parts) == 1 or ccc.get(cp, 0) or ccc.get(parts[0], 0):
            full_exclusion.add(cp)
    if full_exclusion != props[("Full_Composition_Exclusion", True)]:
        fail("computed Full_Composition_Exclusion differs from DerivedNormalizationProps.txt")

    # Primary composites: canonical pairs that are not excluded. Keyed by the second char,
    # because the runtime only looks up a pair once the second char's flag says it can compose.
    pairs = {}
    for cp, (is_compat, parts) in sorted(mappings.items()):
        if is_compat or cp in full_exclusion:
            continue
        if len(parts) != 2:
            fail(f"U+{cp:04X}: a primary composite must map to two chars")
        if ccc.get(cp, 0) != 0:
            fail(f"U+{cp:04X}: composite with a non-zero combining class")
        pairs.setdefault(parts[1], []).append((parts[0], cp))

    # Quick-check properties, checked against what the mappings imply.
    def derived(prop, value):
        return props.get((prop, value), set())

    hangul = set(range(S_BASE, S_BASE + S_COUNT))
    hangul_v = set(range(V_BASE, V_BASE + V_COUNT))
    hangul_t = set(range(T_BASE + 1, T_BASE + T_COUNT))
    if derived("NFD_QC", "N") != set(canonical) | hangul:
        fail("NFD_QC=No differs from the set of canonically decomposable chars")
    if derived("NFKD_QC", "N") != set(compat) | hangul:
        fail("NFKD_QC=No differs from the set of compatibility decomposable chars")
    if set(pairs) & (hangul_v | hangul_t):
        fail("a table composition ends in a Hangul jamo: the runtime's arithmetic would shadow it")
    backward = set(pairs) | hangul_v | hangul_t
    if derived("NFC_QC", "M") != backward or derived("NFKC_QC", "M") != backward:
        fail("NFC_QC/NFKC_QC=Maybe differ from the set of chars that compose with a predecessor")

    nfc_changes = derived("NFC_QC", "N") | derived("NFC_QC", "M")
    nfkc_changes = derived("NFKC_QC", "N") | derived("NFKC_QC", "M")
    flagged = {
        CHANGES_NFD: derived("NFD_QC", "N"),
        CHANGES_NFKD: derived("NFKD_QC", "N"),
        CHANGES_NFC: nfc_changes,
        CHANGES_NFKC: nfkc_changes,
        COMPOSES_BACKWARD: backward,
    }

    # The runtime starts a new segment before every char its form leaves alone and that is a
    # starter. That is only sound if such a char's decomposition also begins with a starter
    # that cannot compose backward; check it rather than assume it.
    for flag, decomposition in ((CHANGES_NFD, canonical), (CHANGES_NFKD, compat),
                                (CHANGES_NFC, canonical), (CHANGES_NFKC, compat)):
        for cp in decomposition:
            if cp in flagged[flag] or ccc.get(cp, 0):
                continue
            first = decomposition[cp][0]
            if ccc.get(first, 0) or first in backward:
                fail(f"U+{cp:04X} is a quick-check boundary but decomposes to U+{first:04X}")

    # Decomposition data. Per decomposing char: (start, canonical_len, compat_len); the canonical
    # chars are at DECOMPOSED[start..], the compatibility ones right after them, and
    # compat_len == 0 means "same as the canonical decomposition".
    decomposed, decompositions, decomposition_index = [], [], {}
    for cp in sorted(set(canonical) | set(compat)):
        canon = canonical.get(cp, [])
        kompat = compat.get(cp, [])
        start = len(decomposed)
        decomposed.extend(canon)
        if kompat == canon:
            kompat_len = 0
        else:
            decomposed.extend(kompat)
            kompat_len = len(kompat)
        if start > 0xFFFF or len(canon) > 0xFF or kompat_len > 0xFF:
            fail("decomposition data outgrew its (u16, u8, u8) spans")
        decomposition_index[cp] = len(decompositions)
        decompositions.append((start, len(canon), kompat_len))

    composition_pairs, composition_lists, composition_index = [], [], {}
    for second in sorted(pairs):
        firsts = sorted(pairs[second])
        if len({f for f, _ in firsts}) != len(firsts):
            fail(f"U+{second:04X}: two composites share a first char")
        composition_index[second] = len(composition_lists)
        composition_lists.append((len(composition_pairs), len(firsts)))
        composition_pairs.extend(firsts)

    # One INFO word per distinct (class, flags, payload); index 0 is the inert word.
    info_words, info_index = [0], {0: 0}
    cp_info = {}
    interesting = set(ccc) | set(decomposition_index) | backward | hangul
    for flag_set in flagged.values():
        interesting |= flag_set
    for cp in sorted(interesting):
        word = ccc.get(cp, 0)
        for flag, members in flagged.items():
            if cp in members:
                word |= flag
        if cp in decomposition_index and cp in composition_index:
            fail(f"U+{cp:04X} both decomposes and composes backward: one payload field")
        payload = decomposition_index.get(cp, composition_index.get(cp, 0))
        if payload > 0xFFFF:
            fail("payload index outgrew 16 bits")
        word |= payload << PAYLOAD_SHIFT
        if word not in info_index:
            info_index[word] = len(info_words)
            info_words.append(word)
        cp_info[cp] = info_index[word]
    if len(info_words) > 0x10000:
        fail("more than 65536 distinct INFO words: BLOCKS entries are u16")

    # Two-level table; block 0 is all-inert and shared by most of the code space.
    blocks, block_index, page_index = [], {}, []
    empty = tuple([0] * PAGE_SIZE)
    block_index[empty] = 0
    blocks.append(empty)
    for page in range((MAX_CP + 1) >> PAGE_SHIFT):
        base = page << PAGE_SHIFT
        block = tuple(cp_info.get(base + i, 0) for i in range(PAGE_SIZE))
        if block not in block_index:
            block_index[block] = len(blocks)
            blocks.append(block)
        page_index.append(block_index[block])
    if len(blocks) > 0x100:
        fail("more than 256 distinct blocks: PAGE_INDEX entries are u8")

    return {
        "version": version,
        "page_index": page_index,
        "blocks": blocks,
        "info_words": info_words,
        "decompositions": decompositions,
        "decomposed": decomposed,
        "composition_lists": composition_lists,
        "composition_pairs": composition_pairs,
    }


def rust_char(cp):
    return f"'\\u{{{cp:X}}}'"


def emit_array(out, doc, name, rust_type, items, per_line):
    out.append("")
    out.extend(f"/// {line}" if line else "///" for line in doc)
    out.append(f"pub static {name}: [{rust_type}; {len(items)}] = [")
    for i in range(0, len(items), per_line):
        out.append("    " + " ".join(f"{item}," for item in items[i:i + per_line]))
    out.append("];")


def render(t):
    major, minor, patch = t["version"]
    out = [
        f"// @generated by crate/tools/gen_forms.py from the Unicode {major}.{minor}.{patch} Character Database",
        "// (UnicodeData.txt, CompositionExclusions.txt, DerivedNormalizationProps.txt). Do not edit by hand.",
        "// Regenerate: python3 crate/tools/gen_forms.py [--ucd /usr/share/unicode]",
        "",
        "//! Tables for the Unicode normalization forms, read by `forms.rs`.",
        "//!",
        "//! Lookup of a code point `cp`: `INFO[BLOCKS[(PAGE_INDEX[cp >> 8] as usize) << 8 | (cp & 0xFF)]]`.",
        "//! Identical 256-code-point blocks are stored once; block 0 is all zeros. `INFO[0] == 0`",
        "//! is the inert char: a starter that no form changes and that never composes backward.",
        "//! Hangul syllables carry the decomposition flags but no payload: they decompose and",
        "//! compose by arithmetic.",
        "",
        f"pub const UNICODE_VERSION: (u8, u8, u8) = ({major}, {minor}, {patch});",
        "",
        "/// Bits 0..8 of an INFO word: the Canonical_Combining_Class.",
        f"pub const CCC_MASK: u32 = 0x{CCC_MASK:X};",
        "/// NFD_QC=No: the char has a canonical decomposition.",
        f"pub const CHANGES_NFD: u32 = 1 << {CHANGES_NFD.bit_length() - 1};",
        "/// NFKD_QC=No: the char has a compatibility (or canonical) decomposition.",
        f"pub const CHANGES_NFKD: u32 = 1 << {CHANGES_NFKD.bit_length() - 1};",
        "/// NFC_QC is No or Maybe.",
        f"pub const CHANGES_NFC: u32 = 1 << {CHANGES_NFC.bit_length() - 1};",
        "/// NFKC_QC is No or Maybe.",
        f"pub const CHANGES_NFKC: u32 = 1 << {CHANGES_NFKC.bit_length() - 1};",
        "/// NFC_QC=Maybe: the char is the second half of some primary composite (or a Hangul V/T jamo).",
        f"pub const COMPOSES_BACKWARD: u32 = 1 << {COMPOSES_BACKWARD.bit_length() - 1};",
        "/// Bits 16..32: an index into DECOMPOSITIONS if the char decomposes (and is not Hangul),",
        "/// else into COMPOSITION_LISTS if it composes backward (and is not a Hangul jamo), else 0.",
        f"pub const PAYLOAD_SHIFT: u32 = {PAYLOAD_SHIFT};",
    ]
    emit_array(out, ["Block number of each 256-code-point page."],
               "PAGE_INDEX", "u8", [str(b) for b in t["page_index"]], 32)
    emit_array(out, ["INFO index of each code point, block by block."],
               "BLOCKS", "u16", [str(v) for block in t["blocks"] for v in block], 32)
    emit_array(out, ["Combining class | flags | payload << PAYLOAD_SHIFT, see the constants above."],
               "INFO", "u32", [f"0x{w:X}" for w in t["info_words"]], 10)
    emit_array(out, [
        "`(start, canonical_len, compat_len)`: the full canonical decomposition is",
        "`DECOMPOSED[start..start + canonical_len]` (empty if there is none), the full compatibility",
        "decomposition follows it, and `compat_len == 0` means it equals the canonical one.",
        "Chars are in mapping order, not yet in canonical order.",
    ], "DECOMPOSITIONS", "(u16, u8, u8)", [f"({s}, {c}, {k})" for s, c, k in t["decompositions"]], 8)
    emit_array(out, ["The decomposition chars that DECOMPOSITIONS points into."],
               "DECOMPOSED", "char", [rust_char(cp) for cp in t["decomposed"]], 10)
    emit_array(out, [
        "`(start, len)` into COMPOSITION_PAIRS: the pairs whose second char owns this list.",
    ], "COMPOSITION_LISTS", "(u16, u16)", [f"({s}, {n})" for s, n in t["composition_lists"]], 8)
    emit_array(out, [
        "`(first, composite)` for each primary composite, grouped by second char (see",
        "COMPOSITION_LISTS) and sorted by first char within a group for binary search.",
    ], "COMPOSITION_PAIRS", "(char, char)",
        [f"({rust_char(a)}, {rust_char(c)})" for a, c in t["composition_pairs"]], 5)
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ucd", default=DEFAULT_UCD, help="directory with the UCD files")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="the Rust file to write")
    parser.add_argument("--check", action="store_true",
                        help="compare with the existing file instead of writing it")
    args = parser.parse_args()

    text = render(build(args.ucd))
    write_or_check(args.output, text, args.check, "python3 crate/tools/gen_forms.py")


if __name__ == "__main__":
    main()
