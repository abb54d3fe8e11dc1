//! Unicode facts, each from the Unicode version the reference uses for it.
//!
//! The tables under [`generated`] are written by the tools in `crate/tools/`; this module
//! only looks things up.

pub mod forms;
pub mod generated;

use generated::bert_tables::{COMBINING_MARK, MARK_NONSPACING, OTHER, PUNCTUATION};
use generated::bpe_classes::ASSIGNED_AFTER_9_0;

fn in_ranges(r: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    r.binary_search_by(|&(lo, hi)| {
        if hi < cp {
            core::cmp::Ordering::Less
        } else if lo > cp {
            core::cmp::Ordering::Greater
        } else {
            core::cmp::Ordering::Equal
        }
    })
    .is_ok()
}

/// Which 64-code-point chunks of the BMP hold some char of a set of ranges, and which hold
/// only chars of it: chars of the other chunks (most of the text, for most sets) are answered
/// without a search.
#[cfg(not(target_arch = "wasm32"))]
struct Chunks {
    some: [u64; 16],
    all: [u64; 16],
}

#[cfg(not(target_arch = "wasm32"))]
impl Chunks {
    const fn new(ranges: &[(u32, u32)]) -> Chunks {
        let (mut some, mut all) = ([0u64; 16], [0u64; 16]);
        let mut i = 0;
        while i < ranges.len() {
            let (lo, hi) = ranges[i];
            let mut chunk = lo >> 6;
            while chunk <= hi >> 6 && chunk < 1024 {
                some[(chunk >> 6) as usize] |= 1 << (chunk & 63);
                if lo <= chunk << 6 && hi >= (chunk << 6) + 63 {
                    all[(chunk >> 6) as usize] |= 1 << (chunk & 63);
                }
                chunk += 1;
            }
            i += 1;
        }
        Chunks { some, all }
    }

    /// Whether `c` is in the set, where its chunk tells.
    #[inline(always)]
    fn answer(&self, c: char) -> Option<bool> {
        let chunk = c as u32 >> 6;
        if chunk >= 1024 {
            return None;
        }
        let (word, bit) = ((chunk >> 6) as usize, 1u64 << (chunk & 63));
        if self.some[word] & bit == 0 {
            Some(false)
        } else if self.all[word] & bit != 0 {
            Some(true)
        } else {
            None
        }
    }
}

/// The byte length of the UTF-8 char whose lead byte is `b`, by its high four bits (a table
/// load, not a chain of compares).
#[inline(always)]
pub fn char_len(b: u8) -> usize {
    const LEN: [u8; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LEN[(b >> 4) as usize] as usize
}

/// The code point and byte length of the char of two or three bytes at `i` (a char boundary
/// of valid UTF-8), or None for another length.
#[inline(always)]
pub fn wide_char(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    let b = bytes[i];
    match b {
        0xC0..=0xDF => Some((((b & 0x1F) as usize) << 6 | (bytes[i + 1] & 0x3F) as usize, 2)),
        0xE0..=0xEF => {
            let c = ((b & 0x0F) as usize) << 12 | ((bytes[i + 1] & 0x3F) as usize) << 6;
            Some((c | (bytes[i + 2] & 0x3F) as usize, 3))
        }
        _ => None,
    }
}

/// BERT's "control": Cc, Cf or Co in Unicode 8.0, except tab, newline and carriage return
/// (which BERT treats as whitespace).
pub fn is_bert_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && in_ranges(&OTHER, c)
}

/// BERT's whitespace: tab, newline, carriage return, or Rust's `char::is_whitespace`.
pub fn is_bert_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// General_Category Mn in Unicode 8.0: what BERT's accent stripping removes after NFD.
pub fn is_mark_nonspacing(c: char) -> bool {
    in_ranges(&MARK_NONSPACING, c)
}

/// General_Category Mn, Mc or Me in Unicode 9.0: what the StripAccents normalizer removes.
#[inline]
pub fn is_combining_mark(c: char) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    {
        static CHUNKS: Chunks = Chunks::new(&COMBINING_MARK);
        if let Some(answer) = CHUNKS.answer(c) {
            return answer;
        }
    }
    in_ranges(&COMBINING_MARK, c)
}

/// BERT's punctuation: any ASCII punctuation (so `$ + < = > ^ ` | ~` count) or P* in Unicode 8.0.
pub fn is_bert_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        static CHUNKS: Chunks = Chunks::new(&PUNCTUATION);
        if let Some(answer) = CHUNKS.answer(c) {
            return answer;
        }
    }
    in_ranges(&PUNCTUATION, c)
}

/// The CJK blocks BERT surrounds with spaces (the reference's list: 2B920, not 2B820).
pub fn is_chinese_char(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// Whether `c` lies in a block of scripts without case (Hebrew to Myanmar; CJK, kana,
/// Hangul, Yi and Vai; Hangul syllables), where lowercasing leaves every char as it is: text
/// in those scripts skips the case table's search.
#[inline]
pub fn is_caseless(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x109F | 0x3000..=0xA63F | 0xAC00..=0xD7FF)
}

/// Whether `c` was assigned after Unicode 9.0 (so the reference's 9.0 tables do not know it).
pub fn assigned_after_9_0(c: char) -> bool {
    let cp = c as u32;
    // Most text is below the first new char (U+0560, Armenian, Unicode 11.0).
    if cp < ASSIGNED_AFTER_9_0[0].0 {
        return false;
    }
    #[cfg(not(target_arch = "wasm32"))]
    if cp < 0x10000 {
        return BMP_AFTER_9_0[(cp >> 6) as usize] >> (cp & 63) & 1 == 1;
    }
    in_ranges(&ASSIGNED_AFTER_9_0, c)
}

/// [`ASSIGNED_AFTER_9_0`] as a bit per char of the Basic Multilingual Plane, built at compile
/// time: the ranges' binary search took ~80 instructions a char of Arabic text, where NFC
/// asks for every char. (Not in wasm, whose general module is at its size budget.)
#[cfg(not(target_arch = "wasm32"))]
static BMP_AFTER_9_0: [u64; 1024] = {
    let mut bits = [0u64; 1024];
    let mut i = 0;
    while i < ASSIGNED_AFTER_9_0.len() {
        let (lo, hi) = ASSIGNED_AFTER_9_0[i];
        let mut c = lo;
        while c <= hi && c < 0x10000 {
            bits[(c >> 6) as usize] |= 1 << (c & 63);
            c += 1;
        }
        i += 1;
    }
    bits
};

/// Canonical_Combining_Class in Unicode 9.0: a char assigned later is a starter there.
///
/// Unicode's stability policy keeps a char's class once assigned, so the forms' 15.0 tables
/// answer for every char 9.0 knows.
pub fn canonical_combining_class(c: char) -> u8 {
    if assigned_after_9_0(c) {
        0
    } else {
        forms::canonical_combining_class(c)
    }
}

/// Calls `emit` with the full canonical decomposition of `c` (Unicode 9.0), or with `c`
/// itself when it has none. Decompositions are stable too: a char assigned after 9.0 has
/// none there, every other has the one the forms' tables hold.
pub fn decompose_canonical(c: char, mut emit: impl FnMut(char)) {
    if assigned_after_9_0(c) {
        emit(c);
    } else {
        forms::decompose_canonical(c, emit);
    }
}

/// Regex's `\w` (Unicode 16.0): what the reference's `single_word` rule counts as part of a
/// word around an added token.
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        static CHUNKS: Chunks = Chunks::new(&generated::word_tables::WORD);
        if let Some(answer) = CHUNKS.answer(c) {
            return answer;
        }
    }
    in_ranges(&generated::word_tables::WORD, c)
}

/// The Script of `c` in Unicode 9.0, as an index into
/// [`generated::scripts_tables::SCRIPT_NAMES`] (`UNKNOWN` for an unassigned code point).
#[cfg(feature = "general")]
pub fn script(c: char) -> u8 {
    use generated::scripts_tables::{SCRIPTS, UNKNOWN};
    let cp = c as u32;
    // The last range starting at or before `cp`, if it reaches `cp`.
    let i = SCRIPTS.partition_point(|&(lo, _, _)| lo <= cp);
    match i.checked_sub(1).map(|i| SCRIPTS[i]) {
        Some((_, hi, s)) if cp <= hi => s,
        _ => UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn chunk_answers_are_the_search() {
        let sets: [&[(u32, u32)]; 3] = [&COMBINING_MARK, &PUNCTUATION, &generated::word_tables::WORD];
        for set in sets {
            let chunks = Chunks::new(set);
            let (mut told, mut all) = (0, 0);
            for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
                if let Some(answer) = chunks.answer(c) {
                    assert_eq!(answer, in_ranges(set, c), "U+{:04X}", c as u32);
                    told += 1;
                    all += answer as usize;
                }
            }
            // Most of the BMP is told; the word chars' chunks of letters (CJK) wholly so.
            assert!(told > 40_000, "{told}");
            assert_eq!(all > 20_000, set.len() == generated::word_tables::WORD.len(), "{all}");
        }
    }

    #[test]
    fn caseless_chars_lowercase_to_themselves() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32).filter(|&c| is_caseless(c)) {
            assert!(c.to_lowercase().eq([c]), "U+{:04X}", c as u32);
        }
        // The blocks either side do have case.
        assert!(!'\u{0556}'.to_lowercase().eq(['\u{0556}']));
        assert!(!'\u{10A0}'.to_lowercase().eq(['\u{10A0}']));
        assert!(!'\u{A640}'.to_lowercase().eq(['\u{A640}']));
    }

    #[test]
    fn assigned_after_9_0_is_its_ranges() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(assigned_after_9_0(c), in_ranges(&ASSIGNED_AFTER_9_0, c), "{c:?}");
        }
    }
}
