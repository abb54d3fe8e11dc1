//! Pre-tokenization: the split patterns of GPT-2, cl100k, o200k, Qwen and Llama 3, each as a
//! hand-written matcher instead of a backtracking regex.
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

use super::classes::{at, two_byte_at, two_byte_run, L, LOW, N, O, P, UP, WS};

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
}

/// GPT-2's pattern as Hugging Face's ByteLevel pre-tokenizer writes it (Oniguruma).
pub const GPT2_REGEX: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// The same pattern as tiktoken 0.14 writes it (`r50k_pat_str`, equivalent, faster there).
pub const R50K_REGEX: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// cl100k_base as tiktoken 0.14 writes it.
pub const CL100K_REGEX: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
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
/// Qwen2/2.5/3's Split pattern (their tokenizer.json).
pub const QWEN_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Llama 3's Split pattern (its tokenizer.json); also tiktoken < 0.8's spelling of cl100k,
/// kept by tokenizer.json conversions of cl100k.
pub const LLAMA3_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Spellings of the patterns found in the wild that denote the same splits.
const ALIASES: &[(&str, Pattern)] = &[
    (GPT2_REGEX, Pattern::Gpt2),
    (R50K_REGEX, Pattern::Gpt2),
    (r"'s|'t|'re|'ve|'m|'ll|'d| ?[\p{L}]+| ?[\p{N}]+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", Pattern::Gpt2),
    (CL100K_REGEX, Pattern::Cl100k),
    (O200K_REGEX, Pattern::O200k),
    (QWEN_REGEX, Pattern::Qwen),
    (LLAMA3_REGEX, Pattern::Llama3),
];

impl Pattern {
    pub const ALL: [Pattern; 5] =
        [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k, Pattern::Qwen, Pattern::Llama3];

    /// Short name: "gpt2", "cl100k", "o200k", "qwen" or "llama3".
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Gpt2 => "gpt2",
            Pattern::Cl100k => "cl100k",
            Pattern::O200k => "o200k",
            Pattern::Qwen => "qwen",
            Pattern::Llama3 => "llama3",
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
            _ => return None,
        })
    }

    /// The regex this matcher reproduces (tiktoken's spelling for the OpenAI patterns).
    pub fn regex(self) -> &'static str {
        match self {
            Pattern::Gpt2 => GPT2_REGEX,
            Pattern::Cl100k => CL100K_REGEX,
            Pattern::O200k => O200K_REGEX,
            Pattern::Qwen => QWEN_REGEX,
            Pattern::Llama3 => LLAMA3_REGEX,
        }
    }

    /// The pattern a regex string denotes, if it is one of the known spellings.
    pub fn from_regex(regex: &str) -> Option<Pattern> {
        ALIASES.iter().find(|(r, _)| *r == regex).map(|&(_, p)| p)
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
/// Always inlined into the pre-token loop, as [`o200k`]: the Python module's build (more
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

/// o200k's first branch without its prefix: `[UP]*[LOW]+` from `start`, where UP is
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and LOW is `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
///
/// `[UP]*` first takes the longest run of UP, then gives chars back until `[LOW]+` can start.
/// If the char after the run is LOW (so Ll, the only LOW char that is not UP), `[LOW]+` runs
/// on from there. Otherwise the match ends after the last LOW char inside the run (an Lm, Lo
/// or M: `[LOW]+` takes it and stops at the Lu/Lt after it), if there is one.
#[inline(always)]
fn o200k_lower(s: &[u8], start: usize) -> Option<usize> {
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
    if s[i] < 0x80 {
        if let Some(e) = o200k_ascii(s, i) {
            return e;
        }
        if let Some(e) = o200k_two_byte(s, i) {
            return e;
        }
    }
    o200k_general(s, i)
}

/// [`o200k`] at ASCII char `i` when it is a word's prefix char (`[^\r\n\p{L}\p{N}]`: a space,
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
fn o200k_two_byte(s: &[u8], i: usize) -> Option<usize> {
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
    Some(opt_contraction(s, k))
}

/// [`o200k`] at an ASCII byte `i` when the bytes the match depends on are ASCII, else None
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
fn o200k_ascii(s: &[u8], i: usize) -> Option<usize> {
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
        return Some(opt_contraction(s, e));
    }
    if f & N != 0 {
        let mut e = i + 1;
        while e < n && e < i + 3 && s[e].is_ascii_digit() {
            e += 1;
        }
        if e < n && e < i + 3 && s[e] >= 0x80 {
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

/// [`o200k`] at any char, ASCII or not.
///
/// Always inlined: [`o200k`] is inlined into two loops (the char-at-a-time one and
/// [`super::scan`]'s), and with two callers the inliner stopped inlining this one into either
/// (Russian +2.1M instructions per MB, a call per pre-token).
#[inline(always)]
pub(crate) fn o200k_general(s: &[u8], i: usize) -> usize {
    // A CJK ideograph is not a prefix char and is in both sets: the first branch takes the
    // word from it (`o200k_lower` answers for any char in LOW).
    if is_cjk_ideograph(s, i) {
        if let Some(e) = o200k_lower(s, i) {
            return opt_contraction(s, e);
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
            return opt_contraction(s, e);
        }
    }
    if f & (UP | LOW) != 0 {
        if let Some(e) = o200k_lower(s, i) {
            return opt_contraction(s, e);
        }
    }
    if prefixed {
        if let Some(e) = o200k_upper(s, i + len) {
            return opt_contraction(s, e);
        }
    }
    if f & UP != 0 {
        if let Some(e) = o200k_upper(s, i) {
            return opt_contraction(s, e);
        }
    }
    if f & N != 0 {
        return numbers(s, i, 3);
    }
    if let Some(e) = punct(s, i, f, len, true) {
        return e;
    }
    ws_newline_first(s, i)
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
mod tests;
