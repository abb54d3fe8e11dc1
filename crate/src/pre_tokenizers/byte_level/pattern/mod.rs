//! Pre-tokenization: the split patterns of GPT-2, cl100k, o200k, Qwen, Llama 3, DeepSeek V4 and
//! Mistral's Tekken, each as a hand-written matcher instead of a backtracking regex.
//!
//! Each matcher answers one question: "a match starts at `i`; where does it end?" The loop
//! in [`Pattern::split`] calls it until the text is consumed. These patterns match every char
//! (some alternative accepts letters, numbers, whitespace and "other"), so the references'
//! `find_iter` never skips text and the matches tile the input; the matchers rely on that.
//!
//! A regex alternation tries its branches in order and takes the first that matches, each
//! with its greedy-first backtracking path; the comments on every matcher derive what that
//! path is for the branch, e.g. `\s+(?!\S)` on a whitespace run that is followed by a
//! non-space char gives the run minus its last char (the lookahead rewrite of the reference
//! notes), and only when the run has at least two chars.
//!
//! The text handed to a matcher is one segment between special tokens: `$` and the end-of-text
//! side of `(?!\S)` refer to the segment's end, as in tiktoken and `tokenizers`.

use super::classes::{at, L, LOW, N, O, P, UP, WS};

mod deepseek;
mod o200k;

pub(crate) use deepseek::is_han_kana;
pub use deepseek::{deepseek, DEEPSEEK_REGEXES};
pub(crate) use o200k::is_cjk_ideograph;
#[cfg(test)]
pub(crate) use o200k::o200k_general;
pub use o200k::{o200k, tekken};
#[cfg(test)]
use o200k::{o200k_ascii, o200k_lower, o200k_two_byte};

/// A supported pre-tokenization pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// GPT-2, r50k_base, p50k_base (and Hugging Face's ByteLevel `use_regex`).
    Gpt2,
    /// cl100k_base (GPT-3.5/4).
    Cl100k,
    /// o200k_base (GPT-4o and later).
    O200k,
    /// Qwen2/2.5/3: cl100k's pattern with single-digit numbers.
    Qwen,
    /// Llama 3: cl100k's older spelling, which lacks `\s++$`: a whitespace run that ends the
    /// text is split after its last newline (cl100k keeps it whole).
    Llama3,
    /// Mistral's Tekken: o200k's pattern without contractions, numbers one by one.
    Tekken,
    /// DeepSeek V4: three splits in turn (numbers, Han and kana, then a pattern that keeps
    /// letters and marks together), see [`deepseek()`].
    DeepSeek,
}

/// GPT-2's pattern as Hugging Face's ByteLevel pre-tokenizer writes it (Oniguruma).
pub const GPT2_REGEX: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// The same pattern as tiktoken 0.14 writes it (`r50k_pat_str`, equivalent, faster there).
pub const R50K_REGEX: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// cl100k_base as tiktoken 0.14 writes it.
pub const CL100K_REGEX: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// cl100k_base for Oniguruma: `\z` for tiktoken's `$` (the end of the text), no possessive
/// quantifier where nothing follows it in its branch (`{1,3}+` would be a repetition there).
pub const CL100K_ONIGURUMA: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++\z|\s*[\r\n]|\s+(?!\S)|\s";
/// o200k_base as tiktoken writes it.
pub const O200K_REGEX: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);
/// Mistral's Tekken (the `pattern` of its tekken.json files).
pub const TEKKEN_REGEX: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);
/// Qwen2/2.5/3's Split pattern (their tokenizer.json).
pub const QWEN_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Llama 3's Split pattern (its tokenizer.json); also tiktoken < 0.8's spelling of cl100k,
/// kept by tokenizer.json conversions of cl100k.
pub const LLAMA3_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Spellings of the patterns found in the wild that denote the same splits: the regexes of
/// the splits applied in turn.
const ALIASES: &[(&[&str], Pattern)] = &[
    (&[GPT2_REGEX], Pattern::Gpt2),
    (&[R50K_REGEX], Pattern::Gpt2),
    (&[r"'s|'t|'re|'ve|'m|'ll|'d| ?[\p{L}]+| ?[\p{N}]+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"], Pattern::Gpt2),
    (&[CL100K_REGEX], Pattern::Cl100k),
    (&[O200K_REGEX], Pattern::O200k),
    (&[QWEN_REGEX], Pattern::Qwen),
    (&[LLAMA3_REGEX], Pattern::Llama3),
    (&[TEKKEN_REGEX], Pattern::Tekken),
    (&DEEPSEEK_REGEXES, Pattern::DeepSeek),
    (&deepseek::DEEPSEEK_REGEXES_ESCAPED, Pattern::DeepSeek),
];

impl Pattern {
    pub const ALL: [Pattern; 7] = [
        Pattern::Gpt2,
        Pattern::Cl100k,
        Pattern::O200k,
        Pattern::Qwen,
        Pattern::Llama3,
        Pattern::Tekken,
        Pattern::DeepSeek,
    ];

    /// Short name: "gpt2", "cl100k", "o200k", "qwen", "llama3", "tekken" or "deepseek".
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Gpt2 => "gpt2",
            Pattern::Cl100k => "cl100k",
            Pattern::O200k => "o200k",
            Pattern::Qwen => "qwen",
            Pattern::Llama3 => "llama3",
            Pattern::Tekken => "tekken",
            Pattern::DeepSeek => "deepseek",
        }
    }

    /// Parses [`Pattern::name`] (case-insensitive), also accepting the encoding names
    /// r50k_base, p50k_base, cl100k_base and o200k_base.
    pub fn parse(name: &str) -> Option<Pattern> {
        let name = name.to_ascii_lowercase();
        Some(match name.as_str() {
            "gpt2" | "r50k" | "r50k_base" | "p50k" | "p50k_base" | "p50k_edit" => Pattern::Gpt2,
            "cl100k" | "cl100k_base" => Pattern::Cl100k,
            "o200k" | "o200k_base" | "o200k_harmony" => Pattern::O200k,
            "qwen" | "qwen2" | "qwen3" => Pattern::Qwen,
            "llama3" | "llama-3" => Pattern::Llama3,
            "tekken" => Pattern::Tekken,
            "deepseek" | "deepseek-v4" | "deepseek_v4" => Pattern::DeepSeek,
            _ => return None,
        })
    }

    /// The regexes this matcher reproduces, each splitting the pieces of the one before
    /// (tiktoken's spelling for the OpenAI patterns; one regex for all but DeepSeek V4).
    pub fn regexes(self) -> &'static [&'static str] {
        match self {
            Pattern::Gpt2 => &[GPT2_REGEX],
            Pattern::Cl100k => &[CL100K_REGEX],
            Pattern::O200k => &[O200K_REGEX],
            Pattern::Qwen => &[QWEN_REGEX],
            Pattern::Llama3 => &[LLAMA3_REGEX],
            Pattern::Tekken => &[TEKKEN_REGEX],
            Pattern::DeepSeek => &DEEPSEEK_REGEXES,
        }
    }

    /// [`Pattern::regexes`] spelled so that Oniguruma (the general pipeline's regex engine)
    /// splits as this matcher does. tiktoken's `\s++$` means the end of the text, Oniguruma's
    /// `$` also the end of a line, and its `{1,3}+` is not possessive but a repetition: GPT-2
    /// takes its Hugging Face spelling, cl100k [`CL100K_ONIGURUMA`].
    pub fn oniguruma_regexes(self) -> &'static [&'static str] {
        match self {
            Pattern::Gpt2 => &[GPT2_REGEX],
            Pattern::Cl100k => &[CL100K_ONIGURUMA],
            _ => self.regexes(),
        }
    }

    /// The pattern that splitting by these regexes in turn denotes, if they are one of the
    /// known spellings.
    pub fn from_regexes(regexes: &[&str]) -> Option<Pattern> {
        ALIASES.iter().find(|(r, _)| *r == regexes).map(|&(_, p)| p)
    }

    /// End of the match that starts at byte `i` of `s` (`i < s.len()`, a char boundary).
    #[inline]
    pub fn next_end(self, s: &[u8], i: usize) -> usize {
        match self {
            Pattern::Gpt2 => gpt2(s, i),
            Pattern::Cl100k => cl100k(s, i),
            Pattern::O200k => o200k(s, i),
            Pattern::Qwen => qwen(s, i),
            Pattern::Llama3 => llama3(s, i),
            Pattern::Tekken => tekken(s, i),
            Pattern::DeepSeek => deepseek(s, i),
        }
    }

    /// Calls `f(start, end)` for each pre-token of `text`, in order; the ranges tile `text`.
    ///
    /// Always inlined, so `f` (the encoder's per-pre-token step) is inlined into each loop and
    /// its state stays in registers (out of line: Russian o200k +1.6M instructions per MB).
    #[inline(always)]
    pub fn for_each(self, text: &str, f: impl FnMut(usize, usize)) {
        match self {
            Pattern::Gpt2 => tile(text.as_bytes(), gpt2, f),
            Pattern::Cl100k => tile(text.as_bytes(), cl100k, f),
            Pattern::O200k => tile(text.as_bytes(), o200k, f),
            Pattern::Qwen => tile(text.as_bytes(), qwen, f),
            Pattern::Llama3 => tile(text.as_bytes(), llama3, f),
            Pattern::Tekken => tile(text.as_bytes(), tekken, f),
            Pattern::DeepSeek => tile(text.as_bytes(), deepseek, f),
        }
    }

    /// [`Pattern::for_each`] whose `f` may skip text: it returns where the next pre-token
    /// starts (the end of the one it was given, or a pre-token end further on).
    #[inline(always)]
    pub fn for_each_skipping(self, text: &str, f: impl FnMut(usize, usize) -> usize) {
        match self {
            Pattern::Gpt2 => tile_skipping(text.as_bytes(), gpt2, f),
            Pattern::Cl100k => tile_skipping(text.as_bytes(), cl100k, f),
            Pattern::O200k => tile_skipping(text.as_bytes(), o200k, f),
            Pattern::Qwen => tile_skipping(text.as_bytes(), qwen, f),
            Pattern::Llama3 => tile_skipping(text.as_bytes(), llama3, f),
            Pattern::Tekken => tile_skipping(text.as_bytes(), tekken, f),
            Pattern::DeepSeek => tile_skipping(text.as_bytes(), deepseek, f),
        }
    }

    /// The pre-tokens of `text` as byte ranges.
    pub fn split(self, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        self.for_each(text, |a, b| out.push((a, b)));
        out
    }
}

#[inline(always)]
fn tile(s: &[u8], next: fn(&[u8], usize) -> usize, mut f: impl FnMut(usize, usize)) {
    let mut i = 0;
    while i < s.len() {
        let e = next(s, i);
        debug_assert!(e > i && e <= s.len());
        f(i, e);
        i = e;
    }
}

#[inline(always)]
fn tile_skipping(s: &[u8], next: fn(&[u8], usize) -> usize, mut f: impl FnMut(usize, usize) -> usize) {
    let mut i = 0;
    while i < s.len() {
        let e = next(s, i);
        debug_assert!(e > i && e <= s.len());
        let skip = f(i, e);
        debug_assert!(skip >= e && skip <= s.len());
        i = skip;
    }
}

/// End of the longest run of chars from `i` whose flags meet `mask`.
///
/// ASCII stretches of letters, lowercase or uppercase letters or digits are scanned 8 bytes at
/// a time ([`ascii_run`]); other chars one at a time with their flags.
#[inline(always)]
fn run(s: &[u8], mut i: usize, mask: u8) -> usize {
    let swar = swar_class(mask);
    // The word scan checks the end itself; the char loop needs a char.
    if swar.is_none() && i >= s.len() {
        return i;
    }
    loop {
        // An ASCII stretch.
        if let Some(class) = swar {
            i = ascii_run(s, i, class);
            // `ascii_run` stops only at a byte outside the class: for an ASCII byte, that
            // is a char outside `mask` (the class is exactly the ASCII part of `mask`).
            if i >= s.len() || s[i] < 0x80 {
                return i;
            }
        }
        // Chars one by one, until the next ASCII byte when a word scan can take over.
        loop {
            let (f, len) = at(s, i);
            if f & mask == 0 {
                return i;
            }
            i += len;
            if i >= s.len() {
                return i;
            }
            if swar.is_some() && s[i] < 0x80 {
                // An ASCII char ends most non-ASCII words (a space, a full stop): one flag
                // test stops the run there, where the word scan would read a word first.
                if at(s, i).0 & mask == 0 {
                    return i;
                }
                break;
            }
        }
    }
}

/// ASCII byte classes scanned a word at a time, each exactly the ASCII members of a flag set.
#[derive(Clone, Copy)]
enum AsciiClass {
    /// `A-Za-z`: the ASCII part of `\p{L}`.
    Letter,
    /// `a-z`: of o200k's LOW set.
    Lower,
    /// `A-Z`: of o200k's UP set.
    Upper,
    /// `0-9`: of `\p{N}`.
    Digit,
}

/// The word-scan class for `mask` (a single flag), if its ASCII members form one.
#[inline(always)]
const fn swar_class(mask: u8) -> Option<AsciiClass> {
    match mask {
        L => Some(AsciiClass::Letter),
        LOW => Some(AsciiClass::Lower),
        UP => Some(AsciiClass::Upper),
        N => Some(AsciiClass::Digit),
        _ => None,
    }
}

pub(crate) const LANES: u64 = 0x0101_0101_0101_0101;
pub(crate) const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `w` set where that byte is in `lo..=hi` (`1 <= lo <= hi < 0x80`):
/// on 7-bit values, adding `0x80 - lo` sets the high bit exactly when the byte is `>= lo`, and
/// adding `0x7F - hi` when it is `> hi`; neither sum carries into the next byte. Bytes with
/// the high bit set (non-ASCII) are never in the range.
#[inline(always)]
pub(crate) fn bytes_in(w: u64, lo: u8, hi: u8) -> u64 {
    let t = w & !HIGH;
    let ge_lo = t + LANES * (0x80 - lo as u64);
    let gt_hi = t + LANES * (0x7F - hi as u64);
    ge_lo & !gt_hi & !w & HIGH
}

/// High bits of the bytes of `w` that are in `class`.
#[inline(always)]
fn class_bits(w: u64, class: AsciiClass) -> u64 {
    match class {
        // `| 0x20` maps A-Z onto a-z, and no other byte into a-z.
        AsciiClass::Letter => bytes_in(w | (LANES * 0x20), b'a', b'z'),
        AsciiClass::Lower => bytes_in(w, b'a', b'z'),
        AsciiClass::Upper => bytes_in(w, b'A', b'Z'),
        AsciiClass::Digit => bytes_in(w, b'0', b'9'),
    }
}

/// End of the run of bytes of `class` from `i`, 8 at a time.
#[inline(always)]
fn ascii_run(s: &[u8], mut i: usize, class: AsciiClass) -> usize {
    while i + 8 <= s.len() {
        crate::cost::add(8);
        let w = u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
        let out = !class_bits(w, class) & HIGH;
        if out != 0 {
            return i + (out.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < s.len() && class_bits(s[i] as u64, class) & 0x80 != 0 {
        crate::cost::add(1);
        i += 1;
    }
    i
}

/// The whitespace run starting at `i` (which is whitespace).
struct WsRun {
    end: usize,
    /// Start of its last char: `\s+(?!\S)` before a non-space char ends here.
    last: usize,
    /// End of its last `\r` or `\n`, or 0 if it has none: where `\s*[\r\n]` and
    /// `\s*[\r\n]+` end (`\s*` backtracks to the last newline).
    newline_end: usize,
}

#[inline(always)]
fn ws_run(s: &[u8], i: usize) -> WsRun {
    let mut w = WsRun { end: i, last: i, newline_end: 0 };
    while w.end < s.len() {
        let (f, len) = at(s, w.end);
        if f & WS == 0 {
            break;
        }
        if matches!(s[w.end], b'\r' | b'\n') {
            w.newline_end = w.end + 1;
        }
        w.last = w.end;
        w.end += len;
    }
    w
}

/// GPT-2's contractions, case-sensitive: `'s|'t|'re|'ve|'m|'ll|'d` (`s[i]` is `'`).
#[inline]
fn contraction(s: &[u8], i: usize) -> Option<usize> {
    match (s.get(i + 1)?, s.get(i + 2)) {
        (b's' | b't' | b'm' | b'd', _) => Some(i + 2),
        (b'r' | b'v', Some(b'e')) | (b'l', Some(b'l')) => Some(i + 3),
        _ => None,
    }
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` (`s[i]` is `'`). Case folding also lets U+017F LATIN SMALL
/// LETTER LONG S stand for `s`, in the regex crate and in Oniguruma alike; no other non-ASCII
/// char folds to one of these letters.
#[inline]
fn contraction_ci(s: &[u8], i: usize) -> Option<usize> {
    let c = *s.get(i + 1)?;
    // For an ASCII letter x, `x | 0x20` is its lowercase, and no other byte maps onto one.
    let next = |k: usize| s.get(k).map(|b| b | 0x20);
    match c | 0x20 {
        b's' | b't' | b'm' | b'd' => Some(i + 2),
        b'r' | b'v' if next(i + 2) == Some(b'e') => Some(i + 3),
        b'l' if next(i + 2) == Some(b'l') => Some(i + 3),
        _ if c == 0xC5 && s.get(i + 2) == Some(&0xBF) => Some(i + 3), // ſ
        _ => None,
    }
}

/// The optional contraction suffix of o200k's word branches.
#[inline(always)]
pub(crate) fn opt_contraction(s: &[u8], e: usize) -> usize {
    if e < s.len() && s[e] == b'\'' {
        if let Some(x) = contraction_ci(s, e) {
            return x;
        }
    }
    e
}

/// The ` ?X+` prefix rule: a U+0020 joins the following char's run when that char is in
/// `mask`. Returns where the run of `mask` starts, and that char's flags and length (`f` and
/// `len` are char `i`'s).
#[inline(always)]
fn space_prefix(s: &[u8], i: usize, f: u8, len: usize, mask: u8) -> (usize, u8, usize) {
    if s[i] == b' ' && i + 1 < s.len() {
        let (g, glen) = at(s, i + 1);
        if g & mask != 0 {
            return (i + 1, g, glen);
        }
    }
    (i, f, len)
}

/// GPT-2: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
///
/// tiktoken's `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
/// gives the same splits: a whitespace run at the end is taken whole by both, a longer one
/// before a non-space char loses its last char, and a single one is taken alone.
///
/// Always inlined into the pre-token loop, as [`cl100k`].
#[inline(always)]
pub fn gpt2(s: &[u8], i: usize) -> usize {
    if s[i] == b'\'' {
        if let Some(e) = contraction(s, i) {
            return e;
        }
    }
    let (f, len) = at(s, i);
    let (j, g, glen) = space_prefix(s, i, f, len, L | N | O);
    // Char `j` is in the run: it starts after it.
    if g & L != 0 {
        return run(s, j + glen, L);
    }
    if g & N != 0 {
        return run(s, j + glen, N);
    }
    if g & O != 0 {
        return run(s, j + glen, O);
    }
    let w = ws_run(s, i);
    if w.end == s.len() || w.last == i {
        w.end
    } else {
        w.last
    }
}

/// cl100k_base: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
/// ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`.
///
/// Always inlined into the pre-token loop, as [`o200k()`]: the Python module's build (more
/// callers) had kept it a call per pre-token.
#[inline(always)]
pub fn cl100k(s: &[u8], i: usize) -> usize {
    cl100k_like(s, i, 3, cl100k_ws)
}

/// cl100k's whitespace branches `\s++$|\s*[\r\n]|\s+(?!\S)|\s` at whitespace char `i`.
#[inline(always)]
fn cl100k_ws(s: &[u8], i: usize) -> usize {
    let w = ws_run(s, i);
    if w.end == s.len() {
        w.end // \s++$
    } else if w.newline_end != 0 {
        w.newline_end // \s*[\r\n]
    } else if w.last != i {
        w.last // \s+(?!\S)
    } else {
        w.end // \s
    }
}

/// The shape cl100k and Qwen share: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
/// \p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|` then their whitespace branches `ws`.
#[inline(always)]
fn cl100k_like(s: &[u8], i: usize, digits: usize, ws: fn(&[u8], usize) -> usize) -> usize {
    if s[i] == b'\'' {
        if let Some(e) = contraction_ci(s, i) {
            return e;
        }
    }
    let (f, len) = at(s, i);
    // A letter run, or one prefix char (not \r \n, letter or number) and a letter run. When
    // the prefix is taken and no letter follows, the possessive `?+` cannot give it back, but
    // giving it back would not help: it is not a letter either.
    if f & L != 0 {
        return run(s, i + len, L);
    }
    if f & P != 0 && i + len < s.len() {
        let (g, glen) = at(s, i + len);
        if g & L != 0 {
            return run(s, i + len + glen, L);
        }
    }
    if f & N != 0 {
        return numbers(s, i, digits);
    }
    if let Some(e) = punct(s, i, f, len, false) {
        return e;
    }
    ws(s, i)
}

/// ` ?[^\s\p{L}\p{N}]+` then `[\r\n]*` (cl100k, Qwen) or `[\r\n/]*` (o200k, `slash`), if char
/// `i` (flags `f`, length `len`) starts it.
#[inline(always)]
fn punct(s: &[u8], i: usize, f: u8, len: usize, slash: bool) -> Option<usize> {
    let (j, g, glen) = space_prefix(s, i, f, len, O);
    if g & O == 0 {
        return None;
    }
    // With `slash`, a '/' cannot follow the run (it is "other" itself) until a newline ends it.
    let mut e = run(s, j + glen, O);
    while e < s.len() && (matches!(s[e], b'\r' | b'\n') || (slash && s[e] == b'/')) {
        e += 1;
    }
    Some(e)
}

/// Up to `max` number chars from `i` (which is one).
#[inline(always)]
fn numbers(s: &[u8], i: usize, max: usize) -> usize {
    let mut e = i;
    for _ in 0..max {
        if e >= s.len() {
            break;
        }
        let (f, len) = at(s, e);
        if f & N == 0 {
            break;
        }
        e += len;
    }
    e
}

/// `\s*[\r\n]+|\s+(?!\S)|\s+` at whitespace char `i` (o200k, Qwen and Llama 3).
#[inline(always)]
fn ws_newline_first(s: &[u8], i: usize) -> usize {
    let w = ws_run(s, i);
    if w.newline_end != 0 {
        w.newline_end
    } else if w.end == s.len() || w.last == i {
        w.end
    } else {
        w.last
    }
}

/// Qwen: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
/// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+` (Oniguruma, in `tokenizers`).
///
/// Always inlined into the pre-token loop, as [`cl100k`].
#[inline(always)]
pub fn qwen(s: &[u8], i: usize) -> usize {
    cl100k_like(s, i, 1, ws_newline_first)
}

/// Llama 3: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
/// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+` (Oniguruma, in `tokenizers`).
///
/// cl100k's branches up to its whitespace, where cl100k's `\s++$` comes first: on a run that
/// ends the text, "x\n " is ["x", "\n ", ...] there and ["x", "\n", " "] here.
#[inline(always)]
pub fn llama3(s: &[u8], i: usize) -> usize {
    cl100k_like(s, i, 3, ws_newline_first)
}

#[cfg(test)]
pub(crate) mod tests;
