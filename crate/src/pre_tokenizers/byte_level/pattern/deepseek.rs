//! DeepSeek V4's pre-tokenizer: three `Split`s (behavior `Isolated`) applied in turn, each to
//! the pieces of the one before, as one matcher.
//!
//! 1. `\p{N}{1,3}` cuts every run of numbers into groups of three from its start;
//! 2. `[一-龥぀-ゟ゠-ヿ]+` (U+4E00..=U+9FA5, U+3040..=U+30FF: Han and kana) cuts the rest into
//!    runs of those chars and runs of others;
//! 3. the pattern of [`DEEPSEEK_REGEXES`]`[2]` splits each piece of those.
//!
//! So the third pattern runs on segments: a group of numbers, a Han/kana run, or a run of
//! chars that are neither (no number is Han or kana). A segment's end is the end of the text
//! for it: its runs stop there, and `\s+(?!\S)` succeeds there. A group of numbers has no
//! match of the third pattern (each branch needs a letter, mark, punctuation, symbol or
//! whitespace char), so it stays whole. Elsewhere a char no branch matches at (a control,
//! format, unassigned or private-use char that is not followed by a letter or mark) begins a
//! stretch of such chars, which `Isolated` keeps as a piece of its own.
//!
//! A piece depends on nothing before it but where it starts, so every piece start is a
//! segment boundary or a match boundary of the third pattern, and the matcher below asks, at
//! a piece start, for the segment's kind only there.

use super::super::classes::{at, LOW, N, P, PS, UP, WS};
use super::{ascii_run, numbers, ws_run, AsciiClass};

/// The three patterns, in the order they split, as DeepSeek V4's tokenizer.json spells them
/// (with a carriage return and a line feed, not their escapes, inside three classes).
pub const DEEPSEEK_REGEXES: [&str; 3] = [
    r"\p{N}{1,3}",
    "[一-龥\u{3040}-ゟ゠-ヿ]+",
    concat!(
        r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"##,
        "|[^\r\n",
        r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+",
        r"| ?[\p{P}\p{S}]+",
        "[\r\n]*",
        r"|\s*",
        "[\r\n]+",
        r"|\s+(?!\S)|\s+",
    ),
];

/// The same with `\r` and `\n` escaped, as Oniguruma reads it alike.
pub(super) const DEEPSEEK_REGEXES_ESCAPED: [&str; 3] = [
    DEEPSEEK_REGEXES[0],
    DEEPSEEK_REGEXES[1],
    concat!(
        r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"##,
        r"|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    ),
];

/// Whether the char at `s[j]` (a char boundary of valid UTF-8, `j < s.len()`) is in the second
/// pattern's class: U+3040..=U+30FF (lead byte E3, then 81..83) or U+4E00..=U+9FA5 (E4 B8.. up
/// to E9 BE A5).
#[inline(always)]
pub(crate) fn is_han_kana(s: &[u8], j: usize) -> bool {
    match s[j] {
        0xE5..=0xE8 => true,
        0xE4 => s[j + 1] >= 0xB8,
        0xE9 => s[j + 1] < 0xBE || (s[j + 1] == 0xBE && s[j + 2] <= 0xA5),
        0xE3 => (0x81..=0x83).contains(&s[j + 1]),
        _ => false,
    }
}

/// `[\p{L}\p{M}]`: the sets UP and LOW hold exactly the letters and the marks.
const LM: u8 = UP | LOW;

/// End of the DeepSeek V4 pre-token that starts at `i`.
#[inline(always)]
pub fn deepseek(s: &[u8], i: usize) -> usize {
    let (f, len) = at(s, i);
    if f & N != 0 {
        return numbers(s, i, 3);
    }
    if len == 3 && is_han_kana(s, i) {
        third::<true>(s, i, f, len)
    } else {
        third::<false>(s, i, f, len)
    }
}

/// Whether the char at `j` (flags `g`) is in the segment of kind `HK` (Han/kana or other),
/// given that it is not a number.
#[inline(always)]
fn same<const HK: bool>(s: &[u8], j: usize, g: u8) -> bool {
    g & N == 0 && (s[j] >= 0xE3 && is_han_kana(s, j)) == HK
}

/// The third pattern at char `i` (flags `f`, length `len`, not a number) of a segment of
/// Han/kana (`HK`) or other chars.
#[inline(always)]
fn third<const HK: bool>(s: &[u8], i: usize, f: u8, len: usize) -> usize {
    let n = s.len();
    // `[!-/:-@\[-`{-~][A-Za-z]+`: the ASCII punctuation and symbols are the ASCII part of PS.
    if !HK && s[i] < 0x80 && f & PS != 0 && i + 1 < n && s[i + 1].is_ascii_alphabetic() {
        return ascii_run(s, i + 1, AsciiClass::Letter);
    }
    // `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`: a mark may be the prefix or the run's first
    // char; either way the match ends where the run from it ends.
    if f & LM != 0 {
        return letters::<HK>(s, i + len);
    }
    // The prefix: P holds every char but \r, \n, letters and numbers; PS takes out the rest.
    if f & (P | PS) == P && i + len < n {
        let (g, glen) = at(s, i + len);
        if g & LM != 0 && same::<HK>(s, i + len, g) {
            return letters::<HK>(s, i + len + glen);
        }
    }
    // ` ?[\p{P}\p{S}]+[\r\n]*`
    if f & PS != 0 {
        return punct::<HK>(s, i + len);
    }
    if s[i] == b' ' && i + 1 < n {
        let (g, glen) = at(s, i + 1);
        if g & PS != 0 && same::<HK>(s, i + 1, g) {
            return punct::<HK>(s, i + 1 + glen);
        }
    }
    // `\s*[\r\n]+|\s+(?!\S)|\s+`; whitespace is never Han, kana or a number, so a run ends
    // inside its segment, and at a number or Han/kana char it ends the segment.
    if f & WS != 0 {
        let w = ws_run(s, i);
        if w.newline_end != 0 {
            return w.newline_end;
        }
        if w.last == i || w.end == n {
            return w.end;
        }
        let (g, _) = at(s, w.end);
        return if same::<false>(s, w.end, g) { w.last } else { w.end };
    }
    // No branch matches at `i` (a control, format, unassigned or private-use char): the piece
    // runs to the next char where one does, or to the segment's end.
    let mut j = i + len;
    while j < n {
        let (g, glen) = at(s, j);
        if !same::<HK>(s, j, g) || g & (LM | PS | WS) != 0 {
            break;
        }
        // The prefix of a letter run.
        if j + glen < n {
            let (h, _) = at(s, j + glen);
            if h & LM != 0 && same::<HK>(s, j + glen, h) {
                break;
            }
        }
        j += glen;
    }
    j
}

/// End of the run of letters and marks of the segment from `j`.
#[inline(always)]
fn letters<const HK: bool>(s: &[u8], mut j: usize) -> usize {
    let n = s.len();
    if HK {
        // Han (U+4E00..=U+9FA5) is all Lo; kana needs its flags.
        while j < n && s[j] >= 0xE3 && is_han_kana(s, j) && (s[j] != 0xE3 || at(s, j).0 & LM != 0) {
            j += 3;
        }
        return j;
    }
    loop {
        j = ascii_run(s, j, AsciiClass::Letter);
        if j >= n || s[j] < 0x80 {
            return j;
        }
        loop {
            let (g, glen) = at(s, j);
            if g & LM == 0 || (glen == 3 && is_han_kana(s, j)) {
                return j;
            }
            j += glen;
            if j >= n {
                return j;
            }
            if s[j] < 0x80 {
                break;
            }
        }
    }
}

/// `[\p{P}\p{S}]+[\r\n]*` after its first char, ending at `j`.
#[inline(always)]
fn punct<const HK: bool>(s: &[u8], mut j: usize) -> usize {
    let n = s.len();
    while j < n {
        let (g, glen) = at(s, j);
        if g & PS == 0 || !same::<HK>(s, j, g) {
            break;
        }
        j += glen;
    }
    // \r and \n are of the other segments only.
    if !HK {
        while j < n && matches!(s[j], b'\r' | b'\n') {
            j += 1;
        }
    }
    j
}
