//! o200k_base's pattern: its two word branches over the UP/LOW letter sets, and the fast
//! paths for ASCII text and words of 2-byte chars that answer before the general matcher.
//! Mistral's Tekken pattern is o200k's without the contraction suffix and with single
//! numbers: the same matchers with `TEKKEN` set.

use super::super::classes::{at, two_byte_at, two_byte_run, L, LOW, N, O, P, UP, WS};
use super::{ascii_run, numbers, opt_contraction, punct, run, ws_newline_first, AsciiClass, LANES};

/// o200k's first branch without its prefix: `[UP]*[LOW]+` from `start`, where UP is
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and LOW is `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
///
/// `[UP]*` first takes the longest run of UP, then gives chars back until `[LOW]+` can start.
/// If the char after the run is LOW (so Ll, the only LOW char that is not UP), `[LOW]+` runs
/// on from there. Otherwise the match ends after the last LOW char inside the run (an Lm, Lo
/// or M: `[LOW]+` takes it and stops at the Lu/Lt after it), if there is one.
#[inline(always)]
pub(super) fn o200k_lower(s: &[u8], start: usize) -> Option<usize> {
    let mut j = start;
    let mut last_low_end = 0;
    // The first char, peeled off the loop below: a CJK ideograph as in the loop; when it is a
    // 2-byte Lo or mark (an Arabic or Hebrew word), the 2-byte chars after it in both sets in
    // bulk ([`two_byte_run`]); each extends the run and may end the match. Only here: a test
    // per char in the loop cost Chinese, whose Han chars all pass through it, 1.8%
    // (callgrind). Leaving a first ideograph to the loop (one copy of its step) tests it
    // twice: Chinese +1.6%.
    if j < s.len() && is_cjk_ideograph(s, j) {
        j += 3;
        last_low_end = j;
    } else if j < s.len() {
        let (f, len) = at(s, j);
        if f & UP == 0 {
            return (f & LOW != 0).then(|| run(s, j + len, LOW));
        }
        j += len;
        if f & LOW != 0 {
            if len == 2 {
                j = two_byte_run(s, j, UP | LOW).0;
            }
            last_low_end = j;
        }
    }
    while j < s.len() {
        // A CJK unified ideograph (Lo: in both sets) without decoding it: most chars of
        // Chinese and Japanese words.
        if is_cjk_ideograph(s, j) {
            j += 3;
            last_low_end = j;
            continue;
        }
        let (f, len) = at(s, j);
        if f & UP == 0 {
            if f & LOW != 0 {
                return Some(run(s, j + len, LOW));
            }
            break;
        }
        j += len;
        if f & LOW != 0 {
            last_low_end = j;
        }
    }
    (last_low_end != 0).then_some(last_low_end)
}

/// Whether the char at `s[j]` (a char boundary of valid UTF-8, `j < s.len()`) is in
/// U+4E00..=U+9FFF, CJK Unified Ideographs, every one of them Lo as of Unicode 16 (checked
/// against the class tables by a test): lead bytes E5..E9, or E4 followed by B8..BF.
#[inline(always)]
pub(crate) fn is_cjk_ideograph(s: &[u8], j: usize) -> bool {
    let b0 = s[j];
    b0.wrapping_sub(0xE5) < 5 || (b0 == 0xE4 && s.get(j + 1).is_some_and(|&b1| b1 >= 0xB8))
}

/// o200k's second branch without its prefix: `[UP]+[LOW]*` from `start`.
#[inline(always)]
fn o200k_upper(s: &[u8], start: usize) -> Option<usize> {
    if start >= s.len() {
        return None;
    }
    let (f, len) = at(s, start);
    if f & UP == 0 {
        return None;
    }
    Some(run(s, run(s, start + len, UP), LOW))
}

/// o200k_base:
/// `[^\r\n\p{L}\p{N}]?[UP]*[LOW]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
/// `|[^\r\n\p{L}\p{N}]?[UP]+[LOW]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
/// `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
///
/// Always inlined into the pre-token loop: the ASCII path is the hot one, and as a call
/// (the inliner's choice once the matchers grew) it cost 4.9M instructions per MB of English.
#[inline(always)]
pub fn o200k(s: &[u8], i: usize) -> usize {
    o200k_like::<false>(s, i)
}

/// Mistral's Tekken:
/// `[^\r\n\p{L}\p{N}]?[UP]*[LOW]+|[^\r\n\p{L}\p{N}]?[UP]+[LOW]*|\p{N}`
/// `| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
#[inline(always)]
pub fn tekken(s: &[u8], i: usize) -> usize {
    o200k_like::<true>(s, i)
}

#[inline(always)]
fn o200k_like<const TEKKEN: bool>(s: &[u8], i: usize) -> usize {
    if s[i] < 0x80 {
        if let Some(e) = o200k_ascii::<TEKKEN>(s, i) {
            return e;
        }
        if let Some(e) = o200k_two_byte::<TEKKEN>(s, i) {
            return e;
        }
    }
    o200k_general::<TEKKEN>(s, i)
}

/// Where a word that ends at `e` ends with its optional contraction (none for Tekken).
#[inline(always)]
fn word_end<const TEKKEN: bool>(s: &[u8], e: usize) -> usize {
    if TEKKEN {
        e
    } else {
        opt_contraction(s, e)
    }
}

/// The most number chars in one match: `\p{N}{1,3}`, Tekken's `\p{N}`.
const fn max_digits<const TEKKEN: bool>() -> usize {
    if TEKKEN {
        1
    } else {
        3
    }
}

/// [`o200k()`] at ASCII char `i` when it is a word's prefix char (`[^\r\n\p{L}\p{N}]`: a space,
/// punctuation) and the word is made of 2-byte chars (Greek, Cyrillic, Arabic, Hebrew,
/// Armenian, Latin-1 letters), else None: the general matcher then decides. Most words of
/// Greek, Russian and Arabic text, where the general matcher's order of branches and its
/// per-char loop cost far more per word (callgrind).
///
/// The prefix is taken (it is in neither UP nor LOW, so taking it never stops a branch). The
/// word is a run of chars in UP only (capitals), then a run of chars in LOW (Ll only, or in
/// both sets: Lm, Lo, marks), ending at char `z`. When `z` is in neither set, both word
/// branches end there: `[UP]*[LOW]+` takes the two runs when the second is not empty
/// (backtracking, if `[UP]*` took chars of the LOW run that are in both sets, leaves `[LOW]+`
/// at least the last one), and `[UP]+[LOW]*` takes a capitals-only run. When `z` is in UP only
/// and the LOW run starts with an Ll, `[UP]*` cannot pass that Ll and `[LOW]+` runs from it to
/// `z`. Anything else (`z` in LOW: an ASCII or 3-byte letter; `z` in UP after a run of chars
/// in both sets) returns None rather than follow the backtracking.
#[inline(always)]
pub(super) fn o200k_two_byte<const TEKKEN: bool>(s: &[u8], i: usize) -> Option<usize> {
    if at(s, i).0 & P == 0 {
        return None;
    }
    let letters = i + 1;
    let mut k = letters;
    let mut f = two_byte_at(s, k);
    while f & (UP | LOW) == UP {
        k += 2;
        f = two_byte_at(s, k);
    }
    let (lower_from, first_low) = (k, f);
    while f & LOW != 0 {
        k += 2;
        f = two_byte_at(s, k);
    }
    if k == letters {
        return None;
    }
    if k < s.len() {
        // `f`: z's flags when it is a 2-byte char (then not in LOW), else 0.
        let g = if f != 0 { f } else { at(s, k).0 };
        let ends = g & LOW == 0 && (g & UP == 0 || (k != lower_from && first_low & UP == 0));
        if !ends {
            return None;
        }
    }
    Some(word_end::<TEKKEN>(s, k))
}

/// [`o200k()`] at an ASCII byte `i` when the bytes the match depends on are ASCII, else None
/// (the general matcher then decides: a non-ASCII char next to the match could extend it, as
/// a letter after a word or a no-break space after spaces do). English and code are nearly
/// all ASCII: this skips the general matcher's order of branches for them.
///
/// On ASCII the pattern's sets are disjoint byte classes (UP and LOW share only non-ASCII
/// chars: Lm, Lo, M), so each branch is a plain scan:
/// - a word: an optional prefix byte (`[^\r\n\p{L}\p{N}]`) then `[A-Z]*[a-z]*` with at least
///   one letter, on which both word branches agree (the first takes the uppercase run and
///   needs a lowercase letter after it; without one the second takes the uppercase run
///   alone), then the optional contraction;
/// - `\p{N}{1,3}`;
/// - ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, reached when no letter follows the first byte (else that
///   byte would be a word's prefix);
/// - whitespace, with no letter after its first char (no word prefix) and no punctuation
///   after a first space: `\s*[\r\n]+|\s+(?!\S)|\s+` on the run ([`ws_newline_first`]).
#[inline(always)]
pub(super) fn o200k_ascii<const TEKKEN: bool>(s: &[u8], i: usize) -> Option<usize> {
    let n = s.len();
    if i + 1 < n && s[i + 1] >= 0x80 {
        return None;
    }
    let f = at(s, i).0;
    let g = if i + 1 < n { at(s, i + 1).0 } else { 0 };
    let word = if f & L != 0 {
        i
    } else if f & P != 0 && g & L != 0 {
        i + 1
    } else {
        usize::MAX
    };
    if word != usize::MAX {
        // The uppercase run is short in text (a capital, an acronym): byte by byte.
        let mut e = word;
        while e < n && s[e].is_ascii_uppercase() {
            crate::cost::add(1);
            e += 1;
        }
        let e = ascii_run(s, e, AsciiClass::Lower);
        if e < n && s[e] >= 0x80 {
            return None;
        }
        return Some(word_end::<TEKKEN>(s, e));
    }
    if f & N != 0 {
        let max = i + max_digits::<TEKKEN>();
        let mut e = i + 1;
        while e < n && e < max && s[e].is_ascii_digit() {
            e += 1;
        }
        if e < n && e < max && s[e] >= 0x80 {
            return None;
        }
        crate::cost::add(e - i);
        return Some(e);
    }
    let (j, h) = if s[i] == b' ' && g & O != 0 { (i + 1, g) } else { (i, f) };
    if h & O != 0 {
        let mut e = j + 1;
        while e < n && s[e] < 0x80 && at(s, e).0 & O != 0 {
            e += 1;
        }
        if e < n && s[e] >= 0x80 {
            return None;
        }
        while e < n && matches!(s[e], b'\r' | b'\n' | b'/') {
            e += 1;
        }
        crate::cost::add(e - i);
        return Some(e);
    }
    if f & WS != 0 {
        let mut e = i;
        let mut newline_end = 0;
        while e < n {
            let b = s[e];
            // Spaces 8 at a time (indentation).
            if b == b' '
                && e + 8 <= n
                && u64::from_le_bytes(s[e..e + 8].try_into().expect("8 bytes")) == LANES * 0x20
            {
                crate::cost::add(8);
                e += 8;
                continue;
            }
            if b >= 0x80 {
                return None;
            }
            if at(s, e).0 & WS == 0 {
                break;
            }
            if b == b'\r' || b == b'\n' {
                newline_end = e + 1;
            }
            e += 1;
        }
        return Some(if newline_end != 0 {
            newline_end
        } else if e == n || e == i + 1 {
            e
        } else {
            e - 1
        });
    }
    None
}

/// [`o200k()`] at any char, ASCII or not.
///
/// Always inlined: [`o200k()`] is inlined into two loops (the char-at-a-time one and
/// [`crate::pre_tokenizers::byte_level::scan`]'s), and with two callers the inliner stopped inlining this one into either
/// (Russian +2.1M instructions per MB, a call per pre-token).
#[inline(always)]
pub(crate) fn o200k_general<const TEKKEN: bool>(s: &[u8], i: usize) -> usize {
    // A CJK ideograph is not a prefix char and is in both sets: the first branch takes the
    // word from it (`o200k_lower` answers for any char in LOW).
    if is_cjk_ideograph(s, i) {
        if let Some(e) = o200k_lower(s, i) {
            return word_end::<TEKKEN>(s, e);
        }
    }
    let (f, len) = at(s, i);
    // The two word branches, in the order backtracking tries them: first branch with the
    // prefix char taken, then without it, then the second branch with and without. "Without"
    // only differs when the char is itself a letter or a mark (marks are both prefix chars
    // and UP/LOW). The contraction suffix never fails, so it cannot shorten the word.
    let prefixed = f & P != 0 && i + len < s.len();
    if prefixed {
        if let Some(e) = o200k_lower(s, i + len) {
            return word_end::<TEKKEN>(s, e);
        }
    }
    if f & (UP | LOW) != 0 {
        if let Some(e) = o200k_lower(s, i) {
            return word_end::<TEKKEN>(s, e);
        }
    }
    if prefixed {
        if let Some(e) = o200k_upper(s, i + len) {
            return word_end::<TEKKEN>(s, e);
        }
    }
    if f & UP != 0 {
        if let Some(e) = o200k_upper(s, i) {
            return word_end::<TEKKEN>(s, e);
        }
    }
    if f & N != 0 {
        return numbers(s, i, max_digits::<TEKKEN>());
    }
    if let Some(e) = punct(s, i, f, len, true) {
        return e;
    }
    ws_newline_first(s, i)
}
