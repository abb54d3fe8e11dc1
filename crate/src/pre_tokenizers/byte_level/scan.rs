//! Pre-tokens of o200k's, cl100k's and DeepSeek V4's patterns found with bit masks 64 bytes at
//! a time.
//!
//! A window of up to 63 bytes, from a pre-token start, is classified once into bit masks
//! ([`crate::simd::ByteMasks`], by the vector kernel the CPU has); the starts of all its
//! pre-tokens are then derived with shifts, and/andnot and run fills on those masks
//! ([`window_starts`] lists the rules) and walked with `trailing_zeros`. On ASCII the
//! patterns' branches are runs of byte classes (as `o200k_ascii` in [`super::pattern`]):
//! - a word: an optional prefix byte (not `\r` `\n`, a letter or a digit), then letters:
//!   o200k's `[A-Z]*[a-z]*` (at least one letter) and an optional contraction; cl100k's
//!   `\p{L}+` of either case;
//! - `\p{N}{1,3}` (Qwen: `\p{N}`);
//! - ` ?[^\s\p{L}\p{N}]+` then o200k's `[\r\n/]*` or cl100k's `[\r\n]*`;
//! - a whitespace run: up to its last newline, else whole at the end of the text or when it
//!   is one char, else all but its last char; cl100k (`\s++$`, not Llama 3 or Qwen) takes a
//!   run that ends the text whole, newlines or not;
//! - cl100k's contractions (`'s`, `'LL`, ...) are pre-tokens of their own wherever a
//!   pre-token starts at their `'` (the first branch is tried first at every start).
//!
//! Non-ASCII chars join those classes, every byte of a char with its char's class
//! ([`wide_chars`]). For cl100k's shape that is all: `\p{L}` is a letter, any other char of
//! `[^\s\p{L}\p{N}]` (marks included) punctuation. For o200k: Ll as lowercase, Lu and Lt
//! as uppercase, `[^\s\p{L}\p{N}]` chars as punctuation, and Lm and Lo (in both of o200k's
//! letter sets: CJK ideographs, kana, Arabic) as lowercase. That last one is exact while no
//! char of UP only follows one of them: a word is then `UP-only* both*` followed by
//! `(LOW-only | both)*` and ends, as an ASCII one, at a capital after a lowercase letter or at
//! a non-letter (at a non-letter the first branch backtracks to the last char in both, which
//! is the last char of the run). A capital after one of them ends the window. So does a char
//! of no such class (a non-ASCII digit or space; for o200k a mark or a 4-byte char). A
//! prefix is one char, also of 2 to 4 bytes.
//!
//! DeepSeek V4's three splits ([`super::pattern::deepseek()`]) are cl100k's shape with its
//! segments: a digit and a Han/kana char (each 3 bytes, told by its bytes) end a whitespace
//! run's segment, so the run before them is whole; a Han/kana run splits into runs of letters
//! and of punctuation only; letters and marks are one set (Hangul syllables, also told by
//! their bytes, among them); no punctuation is a prefix, but an ASCII one that starts a
//! pre-token takes the ASCII letters after it. A control, a non-ASCII digit or space, or a
//! format or unassigned char ends its window.
//!
//! A window's last pre-tokens (whose starts need bytes after it) are left to the next window
//! or, when none can hold them, to the char-at-a-time matcher. Text mostly of 2-byte chars
//! (Cyrillic, Greek, Arabic) is left to the char-at-a-time matcher ([`windows_pay`]).

use super::classes::{at, two_byte_at, L, LOW, O, P, PS, UP};
use super::pattern::{
    bytes_in, cl100k, deepseek, is_cjk_ideograph, is_han_kana, llama3, o200k, opt_contraction, qwen, HIGH,
    LANES,
};
use crate::simd::{ByteMasks, Kernel};

/// What a window needs to know of a pattern: the rules where o200k's and cl100k's shapes
/// differ, and the char-at-a-time matcher that takes over where windows stop. The defaults
/// are Llama 3's shape; each shape states where it differs.
pub trait Shape {
    /// o200k's two letter sets (a word ends at a capital after a lowercase letter) and its
    /// contractions at the end of a word, `/` in a punctuation run's tail; else cl100k's one
    /// letter set, contractions as pre-tokens of their own, and a tail of newlines only.
    const O200K: bool = false;
    /// The most digits in one pre-token: 3 (`\p{N}{1,3}`) or 1 (`\p{N}`).
    const DIGITS: u32 = 3;
    /// `\s++$`: a whitespace run that ends the text is one pre-token (cl100k), else it is
    /// split after its last newline.
    const WHOLE_LAST_RUN: bool = false;
    /// DeepSeek V4's three splits (see [`deepseek()`]): numbers and Han/kana runs are
    /// segments of their own, whose edges end a whitespace run whole; letters and marks are
    /// one set; punctuation is no word's prefix, but ASCII punctuation starts a pre-token of
    /// ASCII letters after it; controls end the window (no branch matches them).
    const DEEPSEEK: bool = false;
    /// The last lead byte (from E4) of the 3-byte chars whose runs a window classifies by
    /// their bytes alone: E9 (CJK ideographs), ED for DeepSeek V4 (also Hangul syllables).
    const LAST_RUN_LEAD: u8 = 0xE9;
    /// End of the pre-token that starts at `i`, char by char.
    fn next_end(s: &[u8], i: usize) -> usize;
}

/// o200k_base's windows.
pub struct O200k;
/// cl100k_base's windows.
pub struct Cl100k;
/// Llama 3's windows: cl100k's without `\s++$`.
pub struct Llama3;
/// Qwen's windows: Llama 3's with one digit per pre-token.
pub struct Qwen;
/// DeepSeek V4's windows.
pub struct DeepSeek;

impl Shape for O200k {
    const O200K: bool = true;
    #[inline(always)]
    fn next_end(s: &[u8], i: usize) -> usize {
        o200k(s, i)
    }
}

impl Shape for Cl100k {
    const WHOLE_LAST_RUN: bool = true;
    #[inline(always)]
    fn next_end(s: &[u8], i: usize) -> usize {
        cl100k(s, i)
    }
}

impl Shape for Llama3 {
    #[inline(always)]
    fn next_end(s: &[u8], i: usize) -> usize {
        llama3(s, i)
    }
}

impl Shape for Qwen {
    const DIGITS: u32 = 1;
    #[inline(always)]
    fn next_end(s: &[u8], i: usize) -> usize {
        qwen(s, i)
    }
}

impl Shape for DeepSeek {
    const DEEPSEEK: bool = true;
    const LAST_RUN_LEAD: u8 = 0xED;
    #[inline(always)]
    fn next_end(s: &[u8], i: usize) -> usize {
        deepseek(s, i)
    }
}

/// Bits `p` of `m` (`seed` within `m`) from which the run of `m` reaches a seed bit going
/// up: the runs of `m` filled downwards from each seed (a Kogge-Stone fill, 6 steps).
#[inline(always)]
fn fill_down(seed: u64, m: u64) -> u64 {
    let (mut x, mut g) = (seed, m);
    for s in [1, 2, 4, 8, 16, 32] {
        x |= g & (x >> s);
        g &= g >> s;
    }
    x
}

/// Bits of `m` from each seed bit (within `m`) up to the end of its run (upwards, as
/// [`fill_down`]; any number of seeds per run).
#[inline(always)]
fn fill_up(seed: u64, m: u64) -> u64 {
    let (mut x, mut g) = (seed, m);
    for s in [1, 2, 4, 8, 16, 32] {
        x |= g & (x << s);
        g &= g << s;
    }
    x
}

/// The non-ASCII letters of a window as bit masks (every byte of a char gets its char's bit),
/// and where the window must end: at the first char that is not a letter of one of the kinds
/// below or `[^\s\p{L}\p{N}]` punctuation (a non-ASCII digit or space; for o200k also a mark
/// or a 4-byte char; for DeepSeek V4 anything but `[\p{L}\p{M}\p{P}\p{S}]`), or that does
/// not end within `max` bytes.
struct Wide {
    /// In UP only: Lu, Lt (o200k).
    upper: u64,
    /// In LOW only: Ll (o200k); every letter (cl100k's shape, which has one letter set);
    /// every letter and mark outside Han/kana (DeepSeek V4).
    lower: u64,
    /// In both: Lm, Lo (CJK ideographs, Arabic, Hebrew letters) (o200k).
    both: u64,
    /// The second and later bytes of the window's non-ASCII punctuation (a one-char prefix).
    cont: u64,
    /// DeepSeek V4's Han/kana chars (U+4E00..=U+9FA5, U+3040..=U+30FF).
    han_kana: u64,
    /// Those of them that are punctuation or symbols (`゠`, `・`, `゛`, `゜`).
    han_kana_punct: u64,
    /// The window's length in bytes.
    len: u32,
}

/// [`Wide`] for the window of `max` bytes at `base` whose bytes `>= 0x80` are `high`, char by
/// char from the first of them: one table load for a 2-byte char, the lead bytes alone for a
/// run of CJK ideographs, the two-level tables for other 3-byte chars (and for cl100k's shape,
/// 4-byte ones). Branching on the char's kind is cheaper here than a branch-free or of each
/// char's bytes into a mask picked by its class (Chinese: ~2% more instructions that way).
#[inline(always)]
fn wide_chars<S: Shape>(s: &[u8], base: usize, high: u64, max: u32) -> Wide {
    let mut w = Wide { upper: 0, lower: 0, both: 0, cont: 0, han_kana: 0, han_kana_punct: 0, len: max };
    // Bytes >= 0x80 not yet classified; the lowest is always a lead byte (the window starts
    // at a char boundary and each char's bytes are cleared together).
    let mut rest = high & valid_bits(max);
    while rest != 0 {
        let p = rest.trailing_zeros();
        let i = base + p as usize;
        let b0 = s[i];
        if S::DEEPSEEK && (0xE3..0xEE).contains(&b0) && p + 3 <= max {
            // Runs of Han/kana and of Hangul syllables (Korean text is mostly such runs),
            // each told by its bytes alone but for a few kana.
            if is_han_kana(s, i) {
                let mut q = p;
                while q + 3 <= max && is_han_kana(s, base + q as usize) {
                    let j = base + q as usize;
                    if s[j] == 0xE3 && kana_not_letter(s, j) {
                        let f = at(s, j).0;
                        if f & PS != 0 {
                            w.han_kana_punct |= 7 << q;
                        } else if f & (UP | LOW) == 0 {
                            // Unassigned: no branch matches it.
                            w.len = q;
                            break;
                        }
                    }
                    q += 3;
                }
                w.han_kana |= valid_bits(q) & !valid_bits(p);
                if w.len < max {
                    break;
                }
                rest &= !valid_bits(q);
                continue;
            }
            if is_hangul_syllable(s, i) {
                let mut q = p + 3;
                while q + 3 <= max && is_hangul_syllable(s, base + q as usize) {
                    q += 3;
                }
                let bits = valid_bits(q) & !valid_bits(p);
                w.lower |= bits;
                rest &= !bits;
                continue;
            }
        } else if !S::DEEPSEEK && (0xE0..0xF0).contains(&b0) && p + 3 <= max && is_cjk_ideograph(s, i) {
            // A run of CJK ideographs (Lo), in a loop of its own: Chinese text is mostly such
            // runs, and this is its per-char cost.
            let mut q = p + 3;
            while q + 3 <= max && is_cjk_ideograph(s, base + q as usize) {
                q += 3;
            }
            let bits = valid_bits(q) & !valid_bits(p);
            if S::O200K {
                w.both |= bits;
            } else {
                w.lower |= bits;
            }
            rest &= !bits;
            continue;
        }
        let (f, n) = if b0 < 0xE0 {
            (two_byte_at(s, i), 2)
        } else if b0 < 0xF0 || !S::O200K {
            let (f, n) = at(s, i);
            (f, n as u32)
        } else {
            (0, 4)
        };
        if p + n > max {
            w.len = p;
            break;
        }
        let bits = ((1u64 << n) - 1) << p;
        if S::DEEPSEEK {
            if f & (UP | LOW) != 0 {
                // Letters and marks; punctuation and symbols are what is left (`other`).
                w.lower |= bits;
            } else if f & PS == 0 {
                w.len = p;
                break;
            }
        } else if S::O200K {
            match f {
                _ if f == L | LOW => w.lower |= bits,
                _ if f == L | UP => w.upper |= bits,
                _ if f == L | UP | LOW => w.both |= bits,
                // Only a prefix's continuation bytes are asked for (a letter's never follow one).
                _ if f & !PS == O | P => w.cont |= bits & (bits << 1),
                _ => {
                    w.len = p;
                    break;
                }
            }
        } else if f & L != 0 {
            w.lower |= bits;
        } else if f & O != 0 {
            // Punctuation, symbols and marks (not letters here).
            w.cont |= bits & (bits << 1);
        } else {
            w.len = p;
            break;
        }
        rest &= !bits;
    }
    w
}

/// Whether the kana at `s[j]` (lead byte E3) may be other than a letter or mark: U+3040,
/// U+3097..=U+30A0 and U+30FB hold the block's unassigned code points, its punctuation and
/// its symbols (and two marks); every other one is a letter.
#[inline(always)]
fn kana_not_letter(s: &[u8], j: usize) -> bool {
    matches!((s[j + 1], s[j + 2]), (0x81, 0x80) | (0x82, 0x97..=0xA0) | (0x83, 0xBB))
}

/// Whether the char at `s[j]` (3 bytes within `s`) is a Hangul syllable, U+AC00..=U+D7A3
/// (all Lo): EA B0 80 up to ED 9E A3.
#[inline(always)]
fn is_hangul_syllable(s: &[u8], j: usize) -> bool {
    match s[j] {
        0xEB | 0xEC => true,
        0xEA => s[j + 1] >= 0xB0,
        0xED => s[j + 1] < 0x9E || (s[j + 1] == 0x9E && s[j + 2] <= 0xA3),
        _ => false,
    }
}

/// Contractions found from candidate `'` bytes `cand` (bits of `s[base..]`, read from the
/// text): `(inside, ends)`, the bits no pre-token starts at and those where the next one
/// starts. o200k's end a word (`suffix`: the `'` is inside too, and a `'` right after one
/// starts no other); cl100k's are pre-tokens of their own from the `'`.
#[inline(always)]
fn contractions(s: &[u8], base: usize, mut cand: u64, suffix: bool) -> (u64, u64) {
    let (mut inside, mut ends) = (0u64, 0u64);
    let mut last_end = u32::MAX;
    while cand != 0 {
        let e = cand.trailing_zeros();
        cand &= cand - 1;
        if s[base + e as usize] != b'\'' || (suffix && e == last_end) {
            continue;
        }
        let end = (opt_contraction(s, base + e as usize) - base) as u32;
        if end > e {
            let from = if suffix { e } else { e + 1 };
            inside |= (1u64 << end.min(63)) - (1u64 << from);
            ends |= 1u64 << end.min(63);
            last_end = end;
        }
    }
    (inside, ends)
}

/// The pre-token starts of `s[base..]` that a window (ASCII bytes and [`Wide`] chars)
/// decides, as bits, and how far they can be trusted: `(starts, limit)`, every piece between
/// two starts `<= limit` is exact. `base` must be a pre-token start.
///
/// The rules, for a byte `p` (its class against the byte before it; bit 0 is a start):
/// - whitespace outside a punctuation tail (`ws'`): the first byte of a run; after the
///   run's last newline; and the last space or tab of the run when a non-space follows
///   (`\s+(?!\S)` leaves it to the next pre-token); with `\s++$`, nothing after the first
///   byte of the run that ends the text;
/// - a digit after a non-digit, and every third digit of a run (every digit for Qwen);
/// - a letter: after a non-letter, unless that byte is a prefix (not `\r \n`) that starts a
///   pre-token; o200k: also lowercase to uppercase (`[A-Z]*[a-z]*` ends);
/// - punctuation: after a letter, digit, tab or newline, and after a punctuation tail
///   (`[\r\n]*` or o200k's `[\r\n/]*` after a punctuation run); never after a space (` ?`
///   takes the space) or other punctuation (the run is greedy);
/// - o200k: a contraction after a word is part of it; after it comes a start. cl100k: a
///   contraction at a `'` that starts a pre-token by the rules above is one pre-token (what
///   comes before a `'` decides whether it starts one, so the rules hold up to it);
/// - DeepSeek V4: punctuation is no prefix; a letter after an ASCII punctuation start is
///   no start, and the first non-ASCII letter after those ASCII letters is one; the last
///   space of a run before a digit or a Han/kana char is no start; a Han/kana char after
///   another char that is not of its kind (letter or punctuation) is a start, and so is
///   any char after one.
#[inline(always)]
fn window_starts<S: Shape, const WIDE: bool>(
    s: &[u8],
    base: usize,
    m: &ByteMasks,
    rest: usize,
) -> (u64, u32) {
    // The window: at most 63 bytes, up to the first char it cannot hold ([`Wide`]). Without
    // non-ASCII bytes (`!WIDE`) the masks below that come from them are constants.
    let mut max = rest.min(63) as u32;
    if S::DEEPSEEK {
        // No branch of DeepSeek V4's matches a control (the zeros that pad the last window
        // lie past the text's end).
        max = max.min(m.ctrl.trailing_zeros());
    }
    let w = if WIDE {
        wide_chars::<S>(s, base, m.high, max)
    } else {
        Wide { upper: 0, lower: 0, both: 0, cont: 0, han_kana: 0, han_kana_punct: 0, len: max }
    };
    // o200k: a capital right after a letter in both sets ends the window there: the word
    // before it may end before the run of both (the first branch backtracks to the run's last
    // char that is in LOW) or take the capital (when a lowercase letter follows), which the
    // rules below do not follow. Without such a capital every word ends where an ASCII one
    // would, those letters counting as lowercase (see the module's documentation).
    let len = if S::O200K {
        let cut = (m.upper & valid_bits(max) | w.upper) & (w.both << 1);
        w.len.min(cut.trailing_zeros())
    } else {
        w.len
    };
    let eot = len as usize == rest;
    let valid = valid_bits(len);
    let (upper, lower) = if S::O200K {
        ((m.upper | w.upper) & valid, (m.lower | w.lower | w.both) & valid)
    } else {
        // One letter set: no case rule (the `upper` terms below vanish).
        (0, (m.upper | m.lower | w.lower) & valid)
    };
    let digit = m.digit & valid;
    let ws = m.ws & valid;
    let newline = m.newline & valid;
    let letter = upper | lower;
    // DeepSeek V4's Han/kana runs: letters and marks, and punctuation and symbols.
    let han_kana = w.han_kana & valid;
    let hk_punct = w.han_kana_punct & valid;
    let hk_letter = han_kana & !hk_punct;
    let other = valid & !(letter | digit | ws | han_kana);
    let tab = ws & !newline & !m.space;
    let prev = |x: u64| x << 1;
    // Contractions, read from the text (the rule is exact there, and the letters of one are
    // no word of their own): o200k's at a `'` after a word's letter; cl100k's at a `'` that
    // starts a pre-token, below.
    let o200k_contr =
        if S::O200K { contractions(s, base, other & prev(letter) & valid, true) } else { (0, 0) };
    // A punctuation run's tail: newlines after it (and for o200k `/` among them).
    let tail_chars = if S::O200K { newline | m.slash } else { newline };
    // Without a newline (most windows of prose) there is no tail and nothing after one.
    let tail = if newline == 0 { 0 } else { fill_up(newline & prev(other), tail_chars & valid) };
    let ws1 = ws & !tail;
    let spc_tab = ws1 & !newline;
    // Whitespace starts: run starts, the last space or tab before a non-space, and the start of
    // the spaces after a run's last newline (those not followed by another newline; the end
    // of a window that does not reach the end of the text counts as one, undecided).
    let run_start = ws1 & !prev(ws1);
    // The non-space chars a run sees: for DeepSeek V4 those of its segment (a number or a
    // Han/kana char ends it, and `(?!\S)` holds at a segment's end).
    let non_ws = if S::DEEPSEEK { valid & !(ws1 | digit | han_kana) } else { valid & !ws1 };
    let last_before_text = spc_tab & (non_ws >> 1);
    let after_newline = if newline == 0 {
        0
    } else {
        let more = if eot { 0 } else { 1u64 << len };
        let before_newline = fill_down(spc_tab & ((newline & ws1 | more) >> 1), spc_tab);
        spc_tab & prev(newline & ws1) & !before_newline
    };
    let mut ws_starts = run_start | last_before_text | after_newline;
    if S::WHOLE_LAST_RUN && eot {
        // `\s++$`: the run that ends the text starts nowhere else (`eot`: `len >= 1`).
        let last_run = fill_down(ws1 & (1u64 << (len - 1)), ws1);
        ws_starts &= !last_run | run_start;
    }
    let other_starts = other & (prev(letter | digit | tab | han_kana) | (prev(newline | tail) & !tail) | 1);
    // DeepSeek V4's prefix `[^\r\n\p{L}\p{P}\p{S}]` is whitespace here (controls end the
    // window); instead, ASCII punctuation that starts a pre-token takes the ASCII letters
    // after it (its first branch), and a letter right after those starts the next one.
    let prefix_starts =
        if S::DEEPSEEK { ws_starts & !newline } else { (ws_starts & !newline) | other_starts };
    let (word_punct, word_letters) = if S::DEEPSEEK {
        let ascii_letter = (m.upper | m.lower) & valid;
        let seed = other_starts & (ascii_letter >> 1);
        (seed, fill_up(prev(seed), ascii_letter))
    } else {
        (0, 0)
    };
    // A prefix is one char: a letter after its last byte is not a start (chars of up to 3
    // bytes for o200k, 4 for cl100k's shape: a step per continuation byte).
    let mut prefix_chars = prefix_starts;
    prefix_chars |= prev(prefix_chars) & w.cont;
    prefix_chars |= prev(prefix_chars) & w.cont;
    if !S::O200K {
        prefix_chars |= prev(prefix_chars) & w.cont;
    }
    let letter_starts = letter
        & ((upper & prev(lower))
            | !(prev(letter) | prev(prefix_chars) | prev(word_punct))
            | (prev(word_letters) & m.high));
    let hk_starts = (hk_letter & !prev(hk_letter)) | (hk_punct & !prev(hk_punct));
    let mut digit_starts = digit & !prev(digit);
    if S::DIGITS == 1 {
        digit_starts = digit;
    } else {
        // Runs of four digits or more: every third one.
        let mut long = digit_starts & (digit >> 3) & (digit >> 2) & (digit >> 1);
        while long != 0 {
            let first = long.trailing_zeros();
            long &= long - 1;
            let end = first + (!(digit >> first)).trailing_zeros();
            let mut q = first + 3;
            while q < end {
                digit_starts |= 1 << q;
                q += 3;
            }
        }
    }
    let (contr, contr_end) = if S::O200K {
        o200k_contr
    } else if S::DEEPSEEK {
        (0, 0)
    } else {
        // A letter follows a contraction's `'` (one at the window's end starts no piece it
        // decides): most punctuation is followed by a space or more punctuation.
        contractions(s, base, other_starts & (letter >> 1), false)
    };
    let starts = ((ws_starts | other_starts | letter_starts | digit_starts | hk_starts | 1) & !contr & valid)
        | contr_end;
    if eot {
        // The end of the text ends the last piece.
        (starts | 1u64 << len, len)
    } else {
        // A start needs up to 3 bytes after it (a contraction, a space before text).
        (starts & valid, len.saturating_sub(3))
    }
}

/// Bits `0..n` (`n <= 63`).
#[inline(always)]
fn valid_bits(n: u32) -> u64 {
    (1u64 << n) - 1
}

/// Classifies the 64 bytes of `s` from `base` (fewer at the end: a padded copy), with the
/// controls for DeepSeek V4's shape.
#[inline(always)]
fn masks_at<S: Shape>(s: &[u8], base: usize, kernel: Kernel) -> ByteMasks {
    let masks = |block: &[u8; 64]| {
        if S::DEEPSEEK {
            kernel.byte_masks::<true>(block)
        } else {
            kernel.byte_masks::<false>(block)
        }
    };
    let rest = s.len() - base;
    if rest >= 64 {
        masks(s[base..base + 64].try_into().expect("64 bytes"))
    } else {
        let mut block = [0u8; 64];
        block[..rest].copy_from_slice(&s[base..]);
        masks(&block)
    }
}

/// The pieces a window at pre-token start `base` decides, each passed to `f`; returns where
/// they end (`base` if none).
#[inline(always)]
fn window_pieces<S: Shape>(s: &[u8], base: usize, kernel: Kernel, f: &mut impl FnMut(usize, usize)) -> usize {
    let m = masks_at::<S>(s, base, kernel);
    let rest = s.len() - base;
    let (starts, limit) = if m.high & valid_bits(rest.min(63) as u32) == 0 {
        window_starts::<S, false>(s, base, &m, rest)
    } else {
        window_starts::<S, true>(s, base, &m, rest)
    };
    let mut p = 0u32;
    // Starts after p, up to the limit.
    // Bits 0..=limit (limit may be 63: 2 << 63 is 0 and the mask all ones).
    let mut next = starts & !1 & (2u64 << limit).wrapping_sub(1);
    while next != 0 {
        let q = next.trailing_zeros();
        next &= next - 1;
        f(base + p as usize, base + q as usize);
        p = q;
    }
    base + p as usize
}

/// Whether [`tile`] pays for `s` by shape `S`, judged by its first 1 KB: when at most one
/// byte in 8 is the lead byte of a char other than a CJK ideograph (or for DeepSeek V4 a
/// Hangul syllable: lead bytes E4..=[`Shape::LAST_RUN_LEAD`], which a window classifies a run
/// at a time; any other char it looks up one by one). Elsewhere the char-at-a-time matcher is
/// faster (windows take ~1.5x its instructions on Russian, Japanese and Thai), while in
/// ASCII, Chinese and (DeepSeek V4) Korean text the windows are. The count costs ~2
/// instructions per byte of its sample; a 2 KB one answered otherwise only on a few
/// documents of mixed text.
#[inline(always)]
pub fn windows_pay<S: Shape>(s: &[u8]) -> bool {
    let sample = &s[..s.len().min(1024)];
    let limit = sample.len() / 8;
    slow_leads(sample, limit, S::LAST_RUN_LEAD) <= limit
}

/// The number of lead bytes in `s` of chars of 2 bytes, of 3 bytes other than E4..=`last`
/// (`last` E9: CJK ideographs and CJK extension A), and of 4 bytes: bytes `0xC0..=0xE3` and
/// `last + 1..=0xFF`. 8 at a time: in each byte, bit 7 of `w & w << 1` is `b7 & b6` (the
/// shift moves bits within a byte up, and what crosses into the next byte lands below bit
/// 7), less the bytes E4..=`last` (with the top bit flipped, the 7-bit range 0x64..=`last`
/// less 0x80: [`bytes_in`]). Lanes add per byte,
/// and every 31 words the lanes (each at most 31, so their sum is below 256) are summed by
/// one multiply. With a call per 4 KB document, a byte-at-a-time count would be ~6% of a
/// Python `encode` of English. The count stops after the first group that takes it past
/// `limit` (text mostly of such chars, where windows do not pay: ~0.9 instructions per byte of
/// a Japanese document otherwise).
#[inline]
fn slow_leads(s: &[u8], limit: usize, last: u8) -> usize {
    let slow = |b: u8| b >= 0xC0 && !(0xE4..=last).contains(&b);
    let (words, tail) = s.split_at(s.len() & !7);
    let mut total = tail.iter().filter(|&&b| slow(b)).count();
    for group in words.chunks(8 * 31) {
        if total > limit {
            break;
        }
        let mut lanes = 0u64;
        for w in group.chunks_exact(8) {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            // b >= 0xC0: b7 & b6. E4..=last: with the top bit flipped, 7-bit values.
            let leads = w & (w << 1) & HIGH;
            let cjk = bytes_in(w ^ HIGH, 0x64, last & 0x7F);
            lanes += ((leads & !cjk) >> 7) & LANES;
        }
        total += (lanes.wrapping_mul(LANES) >> 56) as usize;
    }
    total
}

/// Calls `f(start, end)` for each pre-token of `s` by shape `S`'s pattern, in order (the
/// ranges tile `s`), classifying with `kernel`.
///
/// Inlined into its one caller, `BpeTokenizer::encode_scanned`, a function of its own per
/// shape: this loop and the char-at-a-time one never share a function (or a closure), so
/// neither changes how the other is compiled (a shared one costs Russian, which never comes
/// here, ~2M instructions per MB).
#[inline(always)]
pub fn tile<S: Shape>(s: &[u8], kernel: Kernel, mut f: impl FnMut(usize, usize)) {
    let n = s.len();
    let mut i = 0;
    // Where to try a window again after one that decided less than GOOD bytes, half its
    // length (text of long pre-tokens, or of chars a window cannot hold): the distance
    // doubles with each such window, up to MAX_SKIP, and is back to MIN_SKIP after a good
    // one. A window costs about as much as the char matcher on the bytes it decides, so one
    // that decides a few bytes is a loss (Hindi, with its marks, would take ~47% more
    // instructions if every failed window were followed by a single pre-token).
    const GOOD: usize = 32;
    const MIN_SKIP: usize = 32;
    const MAX_SKIP: usize = 1024;
    let mut retry = 0;
    let mut skip = MIN_SKIP;
    while i < n {
        if i >= retry {
            let e = window_pieces::<S>(s, i, kernel, &mut f);
            if e - i >= GOOD {
                skip = MIN_SKIP;
            } else {
                retry = e + skip;
                skip = (skip * 2).min(MAX_SKIP);
            }
            if e > i {
                i = e;
                continue;
            }
        }
        // Non-ASCII, or a pre-token the window cannot hold.
        let e = S::next_end(s, i);
        debug_assert!(e > i && e <= n);
        f(i, e);
        i = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::byte_level::pattern::{o200k_general, Pattern};

    /// Pieces that make the rules meet: every ASCII class, contractions and their look-alikes,
    /// runs of spaces and newlines, slashes, and non-ASCII letters, digits, marks and spaces.
    const ALPHABET: &[&str] = &[
        "a",
        "z",
        "e",
        "A",
        "Z",
        "Q",
        "0",
        "9",
        "5",
        " ",
        " ",
        " ",
        "\t",
        "\n",
        "\r",
        "\x0b",
        "\x0c",
        "'",
        "/",
        "!",
        "(",
        ".",
        "_",
        "-",
        "\x00",
        "\x1f",
        "\x7f",
        "'s",
        "'S",
        "'t",
        "'re",
        "'VE",
        "'ll",
        "'d",
        "'m",
        "'x",
        "'T",
        "'M",
        "'D",
        "'Re",
        "'rE",
        "'Ll",
        "'lL",
        "'Ve",
        "''",
        "'",
        "    ",
        "\r\n",
        " \n ",
        "!\n",
        "\t\t",
        "//",
        "HTTP",
        "Server",
        "don",
        "123",
        "4567",
        "1234567890",
        // Non-ASCII, now and then.
        "é",
        "É",
        "ß",
        "\u{a0}",
        "\u{2028}",
        "\u{85}",
        "٣",
        "\u{301}",
        "ʰ",
        "中",
        "—",
        "😀",
        "\u{17f}",
        "'\u{17f}",
    ];
    const ASCII_PICKS: usize = ALPHABET.len() - 14;

    /// Pieces of text in other scripts, for windows that hold non-ASCII chars: letters of
    /// every kind a window takes (Ll, Lu, Lt, Lm, Lo in 2 and 3 bytes, CJK ideographs), 2- and
    /// 3-byte punctuation (also as a word's prefix), and what ends a window: marks, non-ASCII
    /// digits and spaces, 4-byte chars; capitals and ASCII next to letters in both sets.
    const WIDE: &[&str] = &[
        "α",
        "ά",
        "ς",
        "ΐ",
        "Α",
        "Ω",
        "д",
        "ё",
        "Д",
        "Ё",
        "é",
        "ß",
        "ÿ",
        "É",
        "ſ",
        "ǅ",
        "ʰ",
        "ب",
        "ـ",
        "א",
        "中",
        "文",
        "の",
        "ー",
        "カ",
        "ゝ",
        "\u{3099}",
        "゠",
        "・",
        "한",
        "ㄱ",
        "Ａ",
        "ａ",
        "，",
        "。",
        "「",
        "」",
        "—",
        "’",
        "«",
        "»",
        "،",
        "٣",
        "\u{301}",
        "\u{64e}",
        "\u{a0}",
        "\u{3000}",
        "😀",
        "𝐀",
        "𝟙",
        "𠀀",
        "Αθήνα",
        "Москва",
        "中文",
        "中A",
        "中Ab",
        "ʰA",
        "ʰa",
        "бA",
        " ",
        " ",
        "  ",
        "\n",
        "a",
        "Z",
        "'s",
        "'",
        "1",
        ".",
        "!",
        "/",
        "-",
    ];

    /// Pieces where DeepSeek V4's splits meet: digits of several scripts, Han and kana (with
    /// the kana that are no letters and the edges of both ranges) next to letters, spaces and
    /// punctuation, Hangul syllables and their edges, letters with marks (Devanagari), ASCII
    /// punctuation before letters, controls and format chars, `\r\n` runs.
    const SCRIPTS: &[&str] = &[
        "中",
        "龥",
        "\u{9fa6}",
        "\u{4dff}",
        "一",
        "㐀",
        "あ",
        "ぁ",
        "ゟ",
        "ヿ",
        "カタカナ",
        "ひらがな",
        "ー",
        "・",
        "゠",
        "゛",
        "゜",
        "\u{3099}",
        "\u{3040}",
        "\u{3097}",
        "、",
        "。",
        "「",
        "\u{3000}",
        "ㄱ",
        "한국어",
        "가",
        "힣",
        "\u{d7a4}",
        "\u{d7b0}",
        "ꯀ",
        "꣎",
        "꠰",
        "नमस्ते",
        "क",
        "\u{94d}",
        "\u{93e}",
        "।",
        "०",
        "٣",
        "１",
        "²",
        "𝟙",
        "д",
        "Москва",
        "é",
        "e\u{301}",
        "\u{301}",
        "—",
        "«",
        "😀",
        "𠀀",
        "\u{200d}",
        "\u{ad}",
        "\u{85}",
        "\x00",
        "\x1f",
        "\x7f",
        "\x0b",
        ".b",
        ".é",
        "!x",
        "'s",
        "_id",
        "#!",
        " ",
        "  ",
        "\t",
        "\r\n",
        "\n",
        "\r",
        " \r\n ",
        "a",
        "Z",
        "1",
        "123",
        "4567",
        ".",
        ",",
        "-",
    ];

    /// Random texts of 1..200 bytes, mostly ASCII, with long ASCII stretches (so pieces
    /// straddle the 8/16/32/64-byte boundaries) and non-ASCII chars now and then.
    fn texts(seed: u64, count: usize) -> Vec<String> {
        pick_texts(seed, count, |r, rare| {
            let any = rare > 0 && r % (8 << rare) == 0;
            let pick = if any { ALPHABET.len() } else { ASCII_PICKS };
            ALPHABET[(r >> 16) as usize % pick]
        })
    }

    /// Random texts of 1..200 bytes mostly of [`WIDE`] pieces, some ASCII ones among them.
    fn wide_texts(seed: u64, count: usize) -> Vec<String> {
        pick_texts(seed, count, |r, rare| {
            if r % (2 + rare) == 0 {
                ALPHABET[(r >> 16) as usize % ALPHABET.len()]
            } else {
                WIDE[(r >> 16) as usize % WIDE.len()]
            }
        })
    }

    /// Random texts of 1..200 bytes mostly of [`SCRIPTS`] pieces, some ASCII ones among them.
    fn script_texts(seed: u64, count: usize) -> Vec<String> {
        pick_texts(seed, count, |r, rare| {
            if r % (3 + rare) == 0 {
                ALPHABET[(r >> 16) as usize % ASCII_PICKS]
            } else {
                SCRIPTS[(r >> 16) as usize % SCRIPTS.len()]
            }
        })
    }

    /// Random texts of 1..200 bytes of pieces `pick(random, rare)` gives (`rare`, 0..4, drawn
    /// per text), with long runs of one piece now and then.
    fn pick_texts(seed: u64, count: usize, pick: impl Fn(u64, u64) -> &'static str) -> Vec<String> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..count)
            .map(|_| {
                let len = 1 + (next() % 200) as usize;
                let rare = next() % 4; // per text: how often a non-ASCII char comes
                let mut t = String::new();
                while t.len() < len {
                    let r = next();
                    let piece = pick(r, rare);
                    // Long runs of one piece now and then (words, spaces, digits past 64 bytes).
                    let times = if r % 29 == 0 { 1 + (r >> 40) as usize % 70 } else { 1 };
                    for _ in 0..times {
                        t.push_str(piece);
                    }
                }
                // Whitespace at the end of the text now and then (`\s++$`, `(?!\S)`).
                let r = next();
                if r % 4 == 0 {
                    t.push_str(["  ", "\n", " \n ", "\n\n  ", "\t", " \r\n", " "][(r >> 8) as usize % 7]);
                }
                t
            })
            .collect()
    }

    /// The Hangul syllables are the chars `is_hangul_syllable` takes, all of them letters (Lo);
    /// every kana outside `kana_not_letter` is a letter (by the class tables).
    #[test]
    fn hangul_and_kana_by_their_bytes() {
        use super::super::classes::{class_of, for_each_char, LO};
        for_each_char(|cp, s| {
            if s.len() == 3 {
                let hangul = (0xAC00..=0xD7A3).contains(&cp);
                assert_eq!(is_hangul_syllable(s, 0), hangul, "U+{cp:04X}");
                assert!(!hangul || class_of(cp) == LO, "U+{cp:04X}");
            }
            if (0x3040..=0x30FF).contains(&cp) && !kana_not_letter(s, 0) {
                assert_ne!(at(s, 0).0 & L, 0, "U+{cp:04X}");
            }
        });
    }

    /// The SWAR count equals a byte-by-byte count at every length (every tail, every fold),
    /// and with a limit it passes the limit exactly when that count does.
    #[test]
    fn slow_leads_counts_every_length() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in (0..=600).chain([2047, 2048, 2049, 4096]) {
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // All leads (every lane full at each fold), none, or any bytes.
                    if len % 3 == 0 {
                        0xC0 | x as u8 & 0x3F
                    } else if len % 3 == 1 {
                        x as u8 & 0x7F
                    } else {
                        x as u8
                    }
                })
                .collect();
            for last in [0xE9, 0xED] {
                let slow = |b: u8| b >= 0xC0 && !(0xE4..=last).contains(&b);
                let want = s.iter().filter(|&&b| slow(b)).count();
                assert_eq!(slow_leads(&s, usize::MAX, last), want, "{len} bytes");
                // With a limit: past it exactly when the whole count is.
                for limit in [0, 1, want.saturating_sub(1), want, want + 1, len / 8] {
                    let past = slow_leads(&s, limit, last) > limit;
                    assert_eq!(past, want > limit, "{len} bytes, limit {limit}, E4..={last:X}");
                }
            }
        }
    }

    /// The pieces a window of shape `S` decides equal `general`'s (the char-at-a-time
    /// matcher without fast paths), for windows at every pre-token start (so each piece is
    /// seen at every block position).
    fn assert_windows_match<S: Shape>(general: fn(&[u8], usize) -> usize, seed: u64) {
        let mut answered = 0usize;
        let all = texts(seed, 4000).into_iter().chain(wide_texts(seed + 1, 4000));
        for text in all.chain(script_texts(seed + 2, 4000)) {
            let s = text.as_bytes();
            let mut base = 0;
            while base < s.len() {
                let mut at = base;
                window_pieces::<S>(s, base, Kernel::Scalar, &mut |a, b| {
                    assert_eq!((a, b), (at, general(s, a)), "{text:?} window at {base}");
                    at = b;
                    answered += 1;
                });
                base = general(s, base);
            }
        }
        assert!(answered > 100_000, "{answered}");
    }

    #[test]
    fn o200k_windows_match_the_general_matcher() {
        assert_windows_match::<O200k>(o200k_general::<false>, 0x5EED_0001);
    }

    #[test]
    fn cl100k_windows_match_the_matcher() {
        assert_windows_match::<Cl100k>(cl100k, 0x5EED_0011);
    }

    #[test]
    fn llama3_windows_match_the_matcher() {
        assert_windows_match::<Llama3>(llama3, 0x5EED_0021);
    }

    #[test]
    fn qwen_windows_match_the_matcher() {
        assert_windows_match::<Qwen>(qwen, 0x5EED_0031);
    }

    #[test]
    fn deepseek_windows_match_the_matcher() {
        assert_windows_match::<DeepSeek>(deepseek, 0x5EED_0041);
    }

    /// The whole tiling by shape `S`, with every kernel, equals `pattern`'s char-at-a-time
    /// split, on random texts of every length up to 200 bytes and on the empty text.
    fn assert_tiling_matches<S: Shape>(pattern: Pattern, seed: u64) {
        let mut all = texts(seed, 20000);
        all.extend(wide_texts(seed + 1, 20000));
        all.extend(script_texts(seed + 2, 20000));
        all.push(String::new());
        for text in all {
            let want = pattern.split(&text);
            for k in Kernel::all_available() {
                let mut got = Vec::new();
                tile::<S>(text.as_bytes(), k, |a, b| got.push((a, b)));
                assert_eq!(got, want, "{} on {text:?}", k.name());
            }
        }
    }

    #[test]
    fn o200k_tiling_matches_the_matcher_with_every_kernel() {
        assert_tiling_matches::<O200k>(Pattern::O200k, 0x5EED_0002);
    }

    #[test]
    fn cl100k_tiling_matches_the_matcher_with_every_kernel() {
        assert_tiling_matches::<Cl100k>(Pattern::Cl100k, 0x5EED_0012);
    }

    #[test]
    fn llama3_tiling_matches_the_matcher_with_every_kernel() {
        assert_tiling_matches::<Llama3>(Pattern::Llama3, 0x5EED_0022);
    }

    #[test]
    fn qwen_tiling_matches_the_matcher_with_every_kernel() {
        assert_tiling_matches::<Qwen>(Pattern::Qwen, 0x5EED_0032);
    }

    #[test]
    fn deepseek_tiling_matches_the_matcher_with_every_kernel() {
        assert_tiling_matches::<DeepSeek>(Pattern::DeepSeek, 0x5EED_0042);
    }

    /// The tiling by shape `S` splits as `pattern`'s regex does in the reference's engine
    /// (Oniguruma), on random texts with long runs across the window boundaries.
    #[cfg(feature = "general")]
    fn assert_tiling_splits_as_regex<S: Shape>(pattern: Pattern, seed: u64) {
        use crate::pre_tokenizers::byte_level::pattern::tests::splits_by_regex;
        let reference = splits_by_regex(pattern);
        let all = texts(seed, 3000).into_iter().chain(wide_texts(seed + 1, 3000));
        for text in all.chain(script_texts(seed + 2, 3000)) {
            let mut want = Vec::new();
            crate::pre_tokenizers::pre_tokenize(Some(&reference), &text, |q| {
                want.push((q.byte_start, q.byte_end))
            });
            let mut got = Vec::new();
            tile::<S>(text.as_bytes(), Kernel::best(), |a, b| got.push((a, b)));
            assert_eq!(got, want, "{pattern:?} on {text:?}");
        }
    }

    #[cfg(feature = "general")]
    #[test]
    fn tilings_split_as_the_regexes() {
        assert_tiling_splits_as_regex::<O200k>(Pattern::O200k, 0x5EED_0005);
        assert_tiling_splits_as_regex::<Cl100k>(Pattern::Cl100k, 0x5EED_0015);
        assert_tiling_splits_as_regex::<Llama3>(Pattern::Llama3, 0x5EED_0025);
        assert_tiling_splits_as_regex::<Qwen>(Pattern::Qwen, 0x5EED_0035);
        assert_tiling_splits_as_regex::<DeepSeek>(Pattern::DeepSeek, 0x5EED_0045);
    }
}
