//! What the pre-tokenizer patterns ask about a char, answered with one table lookup.
//!
//! Every pattern is built from a handful of sets: `\s`, `\p{L}`, `\p{N}`, `[^\s\p{L}\p{N}]`,
//! `[^\r\n\p{L}\p{N}]`, o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` / `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
//! and DeepSeek V4's `[\p{P}\p{S}]`.
//! A char's class (generated from Unicode 16.0.0, the version both references match with; see
//! `crate/tools/gen_bpe_classes.py`) indexes [`FLAGS`], whose bits say which sets hold it.

use crate::unicode::generated::bpe_classes::{ASCII, BLOCKS, INDEX, NUM_CLASSES, SHIFT};
pub use crate::unicode::generated::bpe_classes::{
    LL, LM, LO, LT, LU, MARK, NEWLINE, NUMBER, OTHER, PUNCT_SYMBOL, SPACE, UNICODE_VERSION, WHITESPACE,
};

/// `\p{L}`
pub const L: u8 = 1 << 0;
/// `\p{N}`
pub const N: u8 = 1 << 1;
/// `\s` (White_Space)
pub const WS: u8 = 1 << 2;
/// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, controls that are not whitespace.
pub const O: u8 = 1 << 3;
/// `[^\r\n\p{L}\p{N}]`: the optional one-char prefix of a word in cl100k, o200k and Qwen.
pub const P: u8 = 1 << 4;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: o200k's "upper" set.
pub const UP: u8 = 1 << 5;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: o200k's "lower" set.
pub const LOW: u8 = 1 << 6;
/// `[\p{P}\p{S}]`: punctuation and symbols, a part of `O` (DeepSeek V4 tells them from
/// controls, format chars and unassigned code points).
pub const PS: u8 = 1 << 7;

/// The sets each class belongs to.
pub const FLAGS: [u8; NUM_CLASSES] = {
    let mut f = [0u8; NUM_CLASSES];
    f[OTHER as usize] = O | P;
    f[LU as usize] = L | UP;
    f[LL as usize] = L | LOW;
    f[LT as usize] = L | UP;
    f[LM as usize] = L | UP | LOW;
    f[LO as usize] = L | UP | LOW;
    // A combining mark is not a letter: it is "other" for GPT-2 and cl100k, and both "upper"
    // and "lower" for o200k.
    f[MARK as usize] = O | P | UP | LOW;
    f[NUMBER as usize] = N;
    f[SPACE as usize] = WS | P;
    f[NEWLINE as usize] = WS;
    f[WHITESPACE as usize] = WS | P;
    f[PUNCT_SYMBOL as usize] = O | P | PS;
    f
};

/// The class of code point `cp` (any `u32` below 0x110000).
#[inline]
pub fn class_of(cp: u32) -> u8 {
    if cp < 0x80 {
        return ASCII[cp as usize];
    }
    let block = INDEX[(cp >> SHIFT) as usize] as usize;
    BLOCKS[(block << SHIFT) | (cp as usize & ((1 << SHIFT) - 1))]
}

/// The generated tables with flags in place of classes, computed at compile time: the hot
/// path reads one byte per char instead of a class and then its flags.
static ASCII_FLAGS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        t[i] = FLAGS[ASCII[i] as usize];
        i += 1;
    }
    t
};
static BLOCK_FLAGS: [u8; BLOCKS.len()] = {
    let mut t = [0u8; BLOCKS.len()];
    let mut i = 0;
    while i < t.len() {
        t[i] = FLAGS[BLOCKS[i] as usize];
        i += 1;
    }
    t
};

/// Flags and UTF-8 length of the char starting at `s[i]`.
///
/// `s` must be valid UTF-8 and `i` a char boundary below `s.len()` (callers slice a `&str`).
#[inline(always)]
pub fn at(s: &[u8], i: usize) -> (u8, usize) {
    crate::cost::add(1);
    let b0 = s[i];
    if b0 < 0x80 {
        return (ASCII_FLAGS[b0 as usize], 1);
    }
    if b0 < 0xE0 {
        // A 2-byte char (Latin, Greek, Cyrillic, Arabic, Hebrew, ...): its two bytes index
        // TWO_BYTE_BE (a lead byte is 110xxxxx: less 0xC0, its low 5 bits).
        return (TWO_BYTE_BE[((b0 as usize & 0x1F) << 8) | s[i + 1] as usize], 2);
    }
    let (cp, len) = decode(s, i);
    let block = INDEX[(cp >> SHIFT) as usize] as usize;
    (BLOCK_FLAGS[(block << SHIFT) | (cp as usize & ((1 << SHIFT) - 1))], len)
}

/// Flags of the 2-byte char in the low 16 bits of `w` (little-endian: lead byte lowest).
#[inline(always)]
fn two_byte_flags(w: u64) -> u8 {
    TWO_BYTE_BE[((w as usize & 0x1F) << 8) | ((w as usize >> 8) & 0xFF)]
}

/// Flags of the 2-byte chars indexed by their two bytes read big-endian, less 0xC000
/// (lead bytes 0xC0..=0xDF): 0 where the second byte is not a continuation byte or the
/// encoding is overlong (no char: every char's flags are non-zero). 8 KB, of which a script's
/// letters use one or two 64-byte lines per lead byte. The one table of 2-byte chars' flags
/// ([`at`], [`two_byte_at`], [`two_byte_run`]), from the two-level tables at compile time.
static TWO_BYTE_BE: [u8; 0x2000] = {
    let mut t = [0u8; 0x2000];
    let mut i = 0;
    while i < 0x2000 {
        let (b0, b1) = (0xC0 + (i >> 8), i & 0xFF);
        let cp = ((b0 & 0x1F) << 6) | (b1 & 0x3F);
        if b1 & 0xC0 == 0x80 && cp >= 0x80 {
            let block = INDEX[cp >> SHIFT] as usize;
            t[i] = BLOCK_FLAGS[(block << SHIFT) | (cp & ((1 << SHIFT) - 1))];
        }
        i += 1;
    }
    t
};

/// Flags of the char at `s[i]` when it is a 2-byte char, else 0 (also at or past the end of
/// `s`): one table load, no decoding.
#[inline(always)]
pub fn two_byte_at(s: &[u8], i: usize) -> u8 {
    // `i < len - 1` (not `i + 1 < len`, which wraps at usize::MAX) proves both reads in
    // bounds: one compare, where the other spelling left a second one.
    if i < s.len().saturating_sub(1) {
        let w = u16::from_be_bytes([s[i], s[i + 1]]) as usize;
        if let Some(&f) = TWO_BYTE_BE.get(w.wrapping_sub(0xC000)) {
            crate::cost::add(1);
            return f;
        }
    }
    0
}

/// The run of 2-byte chars (Greek, Cyrillic, Arabic, Hebrew, ...) from `i` whose flags hold
/// every bit of `mask`, read through their direct table without decoding: four at a time
/// where eight bytes hold four 2-byte chars, then one at a time. Returns `(end, decided)`:
/// every char of `i..end` is in the run; `decided` says the char at `end` (if any) is known
/// to be outside it, else it is not a 2-byte char and the caller asks [`at`].
///
/// o200k's word branch uses it after an Lo, where runs are long (with the marks between
/// them, its UP and LOW sets hold whole Arabic words: ~6% fewer instructions on Arabic). It
/// is not used for cl100k's letter runs, which end at every Arabic mark, so the block test
/// mostly fails and costs more than it saves.
///
/// `s` must be valid UTF-8 and `i` a char boundary (callers slice a `&str`): a lead byte
/// `110xxxxx` is followed by one continuation byte.
#[inline(always)]
pub fn two_byte_run(s: &[u8], mut i: usize, mask: u8) -> (usize, bool) {
    let n = s.len();
    // Four 2-byte chars: lead bytes 110xxxxx at even offsets, 10xxxxxx after each.
    while i + 8 <= n {
        let w = u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
        if w & 0xC0E0_C0E0_C0E0_C0E0 != 0x80C0_80C0_80C0_80C0 {
            break;
        }
        let f =
            two_byte_flags(w) & two_byte_flags(w >> 16) & two_byte_flags(w >> 32) & two_byte_flags(w >> 48);
        if f & mask != mask {
            break;
        }
        crate::cost::add(8);
        i += 8;
    }
    while i < n && s[i] & 0xE0 == 0xC0 {
        crate::cost::add(1);
        if two_byte_flags(u16::from_le_bytes([s[i], s[i + 1]]) as u64) & mask != mask {
            return (i, true);
        }
        i += 2;
    }
    (i, i == n)
}

/// Decodes the multi-byte char at `s[i]` (valid UTF-8 assumed; out-of-range reads panic, they
/// cannot be undefined behaviour).
#[inline(always)]
fn decode(s: &[u8], i: usize) -> (u32, usize) {
    let b0 = s[i] as u32;
    if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (s[i + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        (((b0 & 0x0F) << 12) | ((s[i + 1] as u32 & 0x3F) << 6) | (s[i + 2] as u32 & 0x3F), 3)
    } else {
        (
            ((b0 & 0x07) << 18)
                | ((s[i + 1] as u32 & 0x3F) << 12)
                | ((s[i + 2] as u32 & 0x3F) << 6)
                | (s[i + 3] as u32 & 0x3F),
            4,
        )
    }
}

/// Calls `f(cp, utf8)` for every Unicode scalar value, with its UTF-8 bytes (tests).
#[cfg(test)]
pub(crate) fn for_each_char(mut f: impl FnMut(u32, &[u8])) {
    let mut buf = [0u8; 4];
    for cp in (0..0x110000u32).filter(|c| !(0xD800..0xE000).contains(c)) {
        f(cp, char::from_u32(cp).expect("a scalar value").encode_utf8(&mut buf).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_chars() {
        let f = |c: char| FLAGS[class_of(c as u32) as usize];
        assert_eq!(f('a'), L | LOW);
        assert_eq!(f('A'), L | UP);
        assert_eq!(f('ǅ'), L | UP); // Lt
        assert_eq!(f('ʰ'), L | UP | LOW); // Lm
        assert_eq!(f('中'), L | UP | LOW); // Lo
        assert_eq!(f('\u{301}'), O | P | UP | LOW);
        assert_eq!(f('7'), N);
        assert_eq!(f('½'), N);
        assert_eq!(f(' '), WS | P);
        assert_eq!(f('\n'), WS);
        assert_eq!(f('\r'), WS);
        assert_eq!(f('\u{3000}'), WS | P);
        assert_eq!(f('\u{85}'), WS | P);
        assert_eq!(f('\u{200B}'), O | P); // zero-width space is not White_Space
        assert_eq!(f('\u{E000}'), O | P); // private use
        assert_eq!(f('\u{378}'), O | P); // unassigned
        assert_eq!(f('!'), O | P | PS);
        assert_eq!(f('\''), O | P | PS);
        assert_eq!(f('€'), O | P | PS);
        // Sk, in DeepSeek V4's kana range.
        assert_eq!(f('\u{309B}'), O | P | PS);
        // New in Unicode 16.0 (Garay capital letter A): the references know it as Lu.
        assert_eq!(f('\u{10D50}'), L | UP);
    }

    #[test]
    fn flag_tables_match_classes() {
        for_each_char(|cp, s| assert_eq!(at(s, 0), (FLAGS[class_of(cp) as usize], s.len()), "U+{cp:04X}"));
    }

    /// `two_byte_run` equals a char-by-char run with [`at`] (for every mask it is used with),
    /// from every char of random texts of 2-, 3- and 4-byte chars of every kind (letters of
    /// each case, Lo, marks, digits, spaces, punctuation, chars of mixed 128-char blocks) and
    /// ASCII now and then, so runs cross every position of the 8-byte blocks.
    #[test]
    fn two_byte_run_matches_char_by_char() {
        let alphabet = [
            "а", "б", "Ж", "α", "Ω", "ب", "ش", "\u{64E}", "\u{301}", "٣", "ʰ", "\u{a0}", "«", "é", "ß", "中",
            "語", "가", "あ", "ア", "\u{3000}", "、", "\u{4DC0}", "\u{2028}", "€", "ｱ", "😀", "𠀀", "a", " ",
            "7", "\n",
        ];
        let mut x: u64 = 0x5EED;
        let mut checked = 0;
        for _ in 0..20000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let n = (x >> 40) as usize % 40;
            // Mostly two chars of one kind (chosen per text), so that long runs occur.
            let run_of = (x >> 20) as usize % (alphabet.len() - 1);
            let text: String = (0..n)
                .map(|k| {
                    let r = x.rotate_left(5 * k as u32) ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    if r.is_multiple_of(4) {
                        alphabet[(r >> 8) as usize % alphabet.len()]
                    } else {
                        alphabet[run_of + (r >> 8) as usize % 2]
                    }
                })
                .collect();
            let s = text.as_bytes();
            for mask in [L, LOW, UP, N, O, WS, UP | LOW] {
                for i in (0..s.len()).filter(|&i| text.is_char_boundary(i) && s[i] >= 0x80) {
                    let mut want = i;
                    while want < s.len() && at(s, want).0 & mask == mask {
                        want += at(s, want).1;
                    }
                    let (e, decided) = two_byte_run(s, i, mask);
                    assert!(
                        e <= want && text.is_char_boundary(e),
                        "{text:?} from {i} mask {mask:#x}: {e} > {want}"
                    );
                    if decided {
                        assert_eq!(e, want, "{text:?} from {i} mask {mask:#x}");
                    } else {
                        // Stopped at a char that is not a 2-byte one.
                        assert!(s[e] < 0x80 || s[e] >= 0xE0);
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 300_000, "{checked}");
    }

    /// `two_byte_at` gives every 2-byte char's flags (as `at` does), and 0 for any other char,
    /// for a lone lead byte at the end and past the end.
    #[test]
    fn two_byte_at_matches_at() {
        for_each_char(|cp, s| {
            let want = if s.len() == 2 { at(s, 0).0 } else { 0 };
            assert_eq!(two_byte_at(s, 0), want, "U+{cp:04X}");
            assert_ne!(at(s, 0).0, 0, "U+{cp:04X}: every char has flags, so 0 means none");
        });
        assert_eq!(two_byte_at(b"a\xCE", 1), 0);
        assert_eq!(two_byte_at("αβ".as_bytes(), 4), 0);
    }

    #[test]
    fn decode_matches_std() {
        for s in ["é", "中", "😀", "\u{10FFFF}", "\u{80}", "\u{7FF}", "\u{800}", "\u{FFFF}"] {
            let c = s.chars().next().unwrap();
            assert_eq!(decode(s.as_bytes(), 0), (c as u32, s.len()));
        }
    }
}
