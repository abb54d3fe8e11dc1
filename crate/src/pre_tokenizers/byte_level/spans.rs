//! Spans: a pre-token start up to the next space, split the same way wherever it occurs,
//! so that its ids can be remembered by its bytes (see [`span_end`]).

use super::classes::{at, O, UP, WS};
use super::pattern::{HIGH, LANES};

/// The longest span [`span_end`] gives, in bytes.
pub const MAX_SPAN: usize = 64;

/// The end of the span that starts at pre-token start `a`, if there is one: the first byte
/// after `a` below `0x21` is at `e < a + MAX_SPAN`, it is a U+0020 SPACE, `s[a]` is not
/// below `0x20`, and the char before `e` is not whitespace.
///
/// Every pattern splits such a span `s[a..e]` the same way wherever it occurs (followed by
/// that space): into the pre-tokens it has at `a`, the last of which ends at `e`. A matcher's
/// answer at a position depends on the text from there on, and for a position inside the span
/// only on the text up to and including the space at `e`:
/// - no pre-token that starts before `e` takes the space: letter, number and "other" runs
///   stop at whitespace, the `[\r\n]*` and `[\r\n/]*` tails take no space, and a whitespace
///   pre-token that starts before `e` would need a whitespace char right before `e` (the
///   span has no other byte below `0x21` after `a`, and its last char is not whitespace);
/// - the one lookahead past a pre-token's end that is not whitespace's, a contraction's
///   (`'` then up to two letters), reads the space at `e` at most and fails there.
///
/// So a span's ids (the concatenation of its pre-tokens' ids) can be remembered by its bytes,
/// and a word of many pre-tokens (cl100k splits Arabic and Devanagari at every vowel mark) is
/// one lookup on the next sight.
#[inline(always)]
pub(crate) fn span_end(s: &[u8], a: usize) -> Result<usize, usize> {
    if s[a] < 0x20 {
        return Err(a + 1);
    }
    let limit = (a + MAX_SPAN).min(s.len());
    let mut e = a + 1;
    loop {
        if e + 8 <= s.len() {
            let w = u64::from_le_bytes(s[e..e + 8].try_into().expect("8 bytes"));
            // The high bit of the first byte below 0x21 (bytes above 0x7F never borrow
            // into a flag: `!w` clears theirs); bits above the first may be spurious.
            let low = w.wrapping_sub(LANES * 0x21) & !w & HIGH;
            if low != 0 {
                e += (low.trailing_zeros() / 8) as usize;
                break;
            }
            e += 8;
        } else if e < s.len() && s[e] >= 0x21 {
            e += 1;
        } else {
            break;
        }
        if e >= limit {
            // No space soon (Chinese, a long token): none is looked for until `limit`.
            return Err(limit);
        }
    }
    if e >= limit {
        return Err(limit);
    }
    if s[e] != b' ' {
        // A newline or another control char: every span that would start before it ends there.
        return Err(e);
    }
    if s[e - 1] == b' ' {
        // The span is the space at `a`, which joins the whitespace run at `e`.
        return Err(a + 1);
    }
    if s[e - 1] >= 0x80 {
        let mut j = e - 1;
        while s[j] & 0xC0 == 0x80 && j > a {
            j -= 1;
        }
        if at(s, j).0 & WS != 0 {
            return Err(a + 1);
        }
    }
    Ok(e)
}

/// Non-ASCII chars [`marks_split_words`] looks at.
const MARK_SAMPLE: usize = 32;
/// Bytes [`marks_split_words`] looks at, at most.
pub(crate) const MARK_SAMPLE_BYTES: usize = 512;

/// Whether combining marks split words in `s`, judged by its first [`MARK_SAMPLE`] non-ASCII
/// chars within [`MARK_SAMPLE_BYTES`]: at least one in eight is a mark (Arabic and Hebrew
/// with their vowel signs, the Indic scripts, Thai). GPT-2's, cl100k's and Qwen's patterns end a letter run at
/// each mark (marks are not `\p{L}`), so such text has a pre-token or more per mark, and its
/// spans (see [`span_end`]) are worth looking up whole.
#[inline(never)]
pub(crate) fn marks_split_words(s: &[u8]) -> bool {
    let end = s.len().min(MARK_SAMPLE_BYTES);
    let (mut seen, mut marks) = (0, 0);
    let mut i = 0;
    while i < end && seen < MARK_SAMPLE {
        if i + 8 <= end {
            let w = u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
            if w & HIGH == 0 {
                i += 8;
                continue;
            }
            i += ((w & HIGH).trailing_zeros() / 8) as usize;
        }
        let (f, len) = at(s, i);
        if s[i] >= 0x80 {
            seen += 1;
            // A mark: "other" for these patterns, and in o200k's letter sets.
            marks += (f & (O | UP) == O | UP) as usize;
        }
        i += len;
    }
    marks * 8 >= seen.max(1)
}
