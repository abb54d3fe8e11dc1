//! o200k's pre-tokens found with bit masks 64 bytes at a time.
//!
//! A window of up to 63 bytes, from a pre-token start, is classified once into bit masks
//! ([`crate::simd::ByteMasks`], by the vector kernel the CPU has); the starts of all its
//! pre-tokens are then derived with shifts, and/andnot and run fills on those masks
//! ([`window_starts`] lists the rules) and walked with `trailing_zeros`. On ASCII the
//! pattern's branches are runs of byte classes (as `o200k_ascii` in [`super::pattern`]):
//! - a word: `[A-Z]*[a-z]*` (at least one letter) after an optional prefix byte (not `\r`
//!   `\n`, a letter or a digit), then an optional contraction;
//! - `\p{N}{1,3}`;
//! - ` ?[^\s\p{L}\p{N}]+[\r\n/]*`;
//! - a whitespace run: up to its last newline, else whole at the end of the text or when it
//!   is one char, else all but its last char.
//!
//! Non-ASCII letters and punctuation join those classes, every byte of a char with its
//! char's class ([`wide_chars`]): Ll as lowercase, Lu and Lt as uppercase, `[^\s\p{L}\p{N}]`
//! chars as punctuation, and Lm and Lo (in both of o200k's letter sets: CJK ideographs, kana,
//! Arabic) as lowercase. That last one is exact while no char of UP only follows one of them:
//! a word is then `UP-only* both*` followed by `(LOW-only | both)*` and ends, as an ASCII one,
//! at a capital after a lowercase letter or at a non-letter (at a non-letter the first branch
//! backtracks to the last char in both, which is the last char of the run). A capital after
//! one of them ends the window. So does a char of no such class (a non-ASCII digit, space or
//! mark, a 4-byte char). A prefix is one char, also of 2 or 3 bytes.
//!
//! A window's last pre-tokens (whose starts need bytes after it) are left to the next window
//! or, when none can hold them, to the general matcher. Text mostly of 2-byte chars (Cyrillic,
//! Greek, Arabic) is left to the char-at-a-time matcher ([`windows_pay`]).

use super::classes::{at, two_byte_at, L, LOW, O, P, PS, UP};
#[cfg(test)]
use super::pattern::o200k_general;
use super::pattern::{bytes_in, is_cjk_ideograph, o200k, opt_contraction, HIGH, LANES};
use crate::simd::{ByteMasks, Kernel};

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
/// below or `[^\s\p{L}\p{N}]` punctuation (a non-ASCII digit, space or mark; a 4-byte
/// char), or that does not end within `max` bytes.
struct Wide {
    /// In UP only: Lu, Lt.
    upper: u64,
    /// In LOW only: Ll.
    lower: u64,
    /// In both: Lm, Lo (CJK ideographs, Arabic, Hebrew letters).
    both: u64,
    /// The second and later bytes of the window's non-ASCII punctuation (a one-char prefix).
    cont: u64,
    /// The window's length in bytes.
    len: u32,
}

/// [`Wide`] for the window of `max` bytes at `base` whose bytes `>= 0x80` are `high`, char by
/// char from the first of them: one table load for a 2-byte char, the lead bytes alone for a
/// run of CJK ideographs, the two-level tables for other 3-byte chars. Branching on the
/// char's kind is cheaper here than a branch-free or of each char's bytes into a mask picked
/// by its class (Chinese: ~2% more instructions that way).
#[inline(always)]
fn wide_chars(s: &[u8], base: usize, high: u64, max: u32) -> Wide {
    let mut w = Wide { upper: 0, lower: 0, both: 0, cont: 0, len: max };
    // Bytes >= 0x80 not yet classified; the lowest is always a lead byte (the window starts
    // at a char boundary and each char's bytes are cleared together).
    let mut rest = high & valid_bits(max);
    while rest != 0 {
        let p = rest.trailing_zeros();
        let i = base + p as usize;
        let b0 = s[i];
        if (0xE0..0xF0).contains(&b0) && p + 3 <= max && is_cjk_ideograph(s, i) {
            // A run of CJK ideographs (Lo), in a loop of its own: Chinese text is mostly such
            // runs, and this is its per-char cost.
            let mut q = p + 3;
            while q + 3 <= max && is_cjk_ideograph(s, base + q as usize) {
                q += 3;
            }
            let bits = valid_bits(q) & !valid_bits(p);
            w.both |= bits;
            rest &= !bits;
            continue;
        }
        let (f, n) = if b0 < 0xE0 {
            (two_byte_at(s, i), 2)
        } else if b0 < 0xF0 {
            (at(s, i).0, 3)
        } else {
            (0, 4)
        };
        if p + n > max {
            w.len = p;
            break;
        }
        let bits = ((1u64 << n) - 1) << p;
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
        rest &= !bits;
    }
    w
}

/// The pre-token starts of `s[base..]` that a window (ASCII bytes and [`Wide`] chars)
/// decides, as bits, and how far they can be trusted: `(starts, limit)`, every piece between
/// two starts `<= limit` is exact. `base` must be a pre-token start.
///
/// The rules, for a byte `p` (its class against the byte before it; bit 0 is a start):
/// - whitespace outside a punctuation tail (`ws'`): the first byte of a run; after the
///   run's last newline; and the last space or tab of the run when a non-space follows
///   (`\s+(?!\S)` leaves it to the next pre-token);
/// - a digit after a non-digit, and every third digit of a run;
/// - a letter: lowercase to uppercase (`[A-Z]*[a-z]*` ends); after a non-letter, unless that
///   byte is a prefix (not `\r \n`) that starts a pre-token;
/// - punctuation: after a letter, digit, tab or newline, and after a punctuation tail
///   (`[\r\n/]*` after a punctuation run); never after a space (` ?` takes the space) or
///   other punctuation (the run is greedy);
/// - a contraction after a word is part of it; after it comes a start.
#[inline(always)]
fn window_starts<const WIDE: bool>(s: &[u8], base: usize, m: &ByteMasks, rest: usize) -> (u64, u32) {
    // The window: at most 63 bytes, up to the first char it cannot hold ([`Wide`]). Without
    // non-ASCII bytes (`!WIDE`) the masks below that come from them are constants.
    let max = rest.min(63) as u32;
    let w = if WIDE {
        wide_chars(s, base, m.high, max)
    } else {
        Wide { upper: 0, lower: 0, both: 0, cont: 0, len: max }
    };
    // A capital right after a letter in both sets ends the window there: the word before it
    // may end before the run of both (the first branch backtracks to the run's last char that
    // is in LOW) or take the capital (when a lowercase letter follows), which the rules below
    // do not follow. Without such a capital every word ends where an ASCII one would, those
    // letters counting as lowercase (see the module's documentation).
    let cut = (m.upper & valid_bits(max) | w.upper) & (w.both << 1);
    let len = w.len.min(cut.trailing_zeros());
    let eot = len as usize == rest;
    let valid = valid_bits(len);
    let (upper, lower, digit) =
        ((m.upper | w.upper) & valid, (m.lower | w.lower | w.both) & valid, m.digit & valid);
    let ws = m.ws & valid;
    let newline = m.newline & valid;
    let letter = upper | lower;
    let other = valid & !(letter | digit | ws);
    let tab = ws & !newline & !m.space;
    let prev = |x: u64| x << 1;
    // Contractions: a `'` after a word's letter, read from the text (the rule is exact there,
    // and the letters of one are no word of their own).
    let mut contr = 0u64;
    let mut contr_end = 0u64;
    let mut cand = other & prev(letter) & valid;
    let mut last_end = u32::MAX;
    while cand != 0 {
        let e = cand.trailing_zeros();
        cand &= cand - 1;
        if s[base + e as usize] != b'\'' || e == last_end {
            continue;
        }
        let end = (opt_contraction(s, base + e as usize) - base) as u32;
        if end > e {
            contr |= (1u64 << end.min(63)) - (1u64 << e);
            contr_end |= 1u64 << end.min(63);
            last_end = end;
        }
    }
    // A punctuation run's tail: newlines after it, and `/` among them.
    let tail = fill_up(newline & prev(other), (newline | m.slash) & valid);
    let ws1 = ws & !tail;
    let spc_tab = ws1 & !newline;
    // Whitespace starts: run starts, the last space or tab before a non-space, and the start of
    // the spaces after a run's last newline (those not followed by another newline; the end
    // of a window that does not reach the end of the text counts as one, undecided).
    let run_start = ws1 & !prev(ws1);
    let non_ws = valid & !ws1;
    let last_before_text = spc_tab & (non_ws >> 1);
    let more = if eot { 0 } else { 1u64 << len };
    let before_newline = fill_down(spc_tab & ((newline & ws1 | more) >> 1), spc_tab);
    let after_newline = spc_tab & prev(newline & ws1) & !before_newline;
    let ws_starts = run_start | last_before_text | after_newline;
    let other_starts = other & (prev(letter | digit | tab) | (prev(newline | tail) & !tail) | 1);
    let prefix_starts = (ws_starts & !newline) | other_starts;
    // A prefix is one char: a letter after its last byte is not a start (chars of up to 3
    // bytes here: two steps cover a start's continuation bytes).
    let mut prefix_chars = prefix_starts;
    prefix_chars |= prev(prefix_chars) & w.cont;
    prefix_chars |= prev(prefix_chars) & w.cont;
    let letter_starts = letter & ((upper & prev(lower)) | !(prev(letter) | prev(prefix_chars)));
    let mut digit_starts = digit & !prev(digit);
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
    let starts = ((ws_starts | other_starts | letter_starts | digit_starts | 1) & !contr & valid) | contr_end;
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

/// Classifies the 64 bytes of `s` from `base` (fewer at the end: a padded copy).
#[inline(always)]
fn masks_at(s: &[u8], base: usize, kernel: Kernel) -> ByteMasks {
    let rest = s.len() - base;
    if rest >= 64 {
        kernel.byte_masks(s[base..base + 64].try_into().expect("64 bytes"))
    } else {
        let mut block = [0u8; 64];
        block[..rest].copy_from_slice(&s[base..]);
        kernel.byte_masks(&block)
    }
}

/// The pieces a window at pre-token start `base` decides, each passed to `f`; returns where
/// they end (`base` if none).
#[inline(always)]
fn window_pieces(s: &[u8], base: usize, kernel: Kernel, f: &mut impl FnMut(usize, usize)) -> usize {
    let m = masks_at(s, base, kernel);
    let rest = s.len() - base;
    let (starts, limit) = if m.high & valid_bits(rest.min(63) as u32) == 0 {
        window_starts::<false>(s, base, &m, rest)
    } else {
        window_starts::<true>(s, base, &m, rest)
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

/// Whether [`o200k_tile`] pays for `s`, judged by its first 2 KB: when at most one byte in 8
/// is the lead byte of a char other than a CJK ideograph (those a window classifies a run at
/// a time; any other char it looks up one by one). Elsewhere the char-at-a-time matcher is
/// faster (windows take ~1.5x its instructions on Russian, Japanese and Thai), while in
/// ASCII and Chinese text the windows are.
#[inline(always)]
pub fn windows_pay(s: &[u8]) -> bool {
    let sample = &s[..s.len().min(2048)];
    slow_leads(sample) * 8 <= sample.len()
}

/// The number of lead bytes in `s` of chars of 2 bytes, of 3 bytes other than E4..E9 (CJK
/// ideographs and CJK extension A), and of 4 bytes: bytes `0xC0..=0xE3` and `0xEA..=0xFF`.
/// 8 at a time: in each byte, bit 7 of `w & w << 1` is `b7 & b6` (the shift moves bits within
/// a byte up, and what crosses into the next byte lands below bit 7), less the bytes E4..E9
/// (with the top bit flipped, the 7-bit range 0x64..=0x69: [`bytes_in`]). Lanes add per byte,
/// and every 31 words the lanes (each at most 31, so their sum is below 256) are summed by
/// one multiply. With a call per 4 KB document, a byte-at-a-time count would be ~6% of a
/// Python `encode` of English.
#[inline]
fn slow_leads(s: &[u8]) -> usize {
    let slow = |b: u8| b >= 0xC0 && !(0xE4..=0xE9).contains(&b);
    let (words, tail) = s.split_at(s.len() & !7);
    let mut total = tail.iter().filter(|&&b| slow(b)).count();
    for group in words.chunks(8 * 31) {
        let mut lanes = 0u64;
        for w in group.chunks_exact(8) {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            // b >= 0xC0: b7 & b6. E4..E9: with the top bit flipped, 0x64..=0x69 (7-bit).
            let leads = w & (w << 1) & HIGH;
            let cjk = bytes_in(w ^ HIGH, 0x64, 0x69);
            lanes += ((leads & !cjk) >> 7) & LANES;
        }
        total += (lanes.wrapping_mul(LANES) >> 56) as usize;
    }
    total
}

/// Calls `f(start, end)` for each o200k pre-token of `s`, in order (the ranges tile `s`),
/// classifying with `kernel`.
///
/// Inlined into its one caller, `BpeTokenizer::encode_scanned`, a function of its own: this
/// loop and the char-at-a-time one never share a function (or a closure), so neither changes
/// how the other is compiled (a shared one costs Russian, which never comes here, ~2M
/// instructions per MB).
#[inline(always)]
pub fn o200k_tile(s: &[u8], kernel: Kernel, mut f: impl FnMut(usize, usize)) {
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
            let e = window_pieces(s, i, kernel, &mut f);
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
        let e = o200k(s, i);
        debug_assert!(e > i && e <= n);
        f(i, e);
        i = e;
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::byte_level::pattern::{o200k, Pattern};

    /// Pieces that make the rules meet: every ASCII class, contractions and their look-alikes,
    /// runs of spaces and newlines, slashes, and non-ASCII letters, digits, marks and spaces.
    const ALPHABET: &[&str] = &[
        "a", "z", "e", "A", "Z", "Q", "0", "9", "5", " ", " ", " ", "\t", "\n", "\r", "\x0b", "\x0c", "'",
        "/", "!", "(", ".", "_", "-", "\x00", "\x1f", "\x7f", "'s", "'S", "'t", "'re", "'VE", "'ll", "'d",
        "'m", "'x", "    ", "\r\n", " \n ", "//", "HTTP", "Server", "don", "123", "4567",
        // Non-ASCII, now and then.
        "é", "É", "ß", "\u{a0}", "\u{2028}", "\u{85}", "٣", "\u{301}", "ʰ", "中", "—", "😀", "\u{17f}",
    ];
    const ASCII_PICKS: usize = ALPHABET.len() - 13;

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
                t
            })
            .collect()
    }

    /// The SWAR count equals a byte-by-byte count at every length (every tail, every fold).
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
            let slow = |b: u8| b >= 0xC0 && !(0xE4..=0xE9).contains(&b);
            assert_eq!(slow_leads(&s), s.iter().filter(|&&b| slow(b)).count(), "{len} bytes");
        }
    }

    /// The pieces a window decides equal the general matcher's, for windows at every
    /// pre-token start (so each piece is seen at every block position).
    #[test]
    fn window_pieces_match_the_general_matcher() {
        let mut answered = 0usize;
        for text in texts(0x5EED_0001, 4000).into_iter().chain(wide_texts(0x5EED_0003, 4000)) {
            let s = text.as_bytes();
            let mut base = 0;
            while base < s.len() {
                let mut at = base;
                window_pieces(s, base, Kernel::Scalar, &mut |a, b| {
                    assert_eq!((a, b), (at, o200k_general::<false>(s, a)), "{text:?} window at {base}");
                    at = b;
                    answered += 1;
                });
                base = o200k(s, base);
            }
        }
        assert!(answered > 100_000, "{answered}");
    }

    /// The whole tiling, with every kernel, equals the char-at-a-time matcher's.
    #[test]
    fn tiling_matches_the_matcher_with_every_kernel() {
        for text in texts(0x5EED_0002, 20000).into_iter().chain(wide_texts(0x5EED_0004, 20000)) {
            let s = text.as_bytes();
            let mut want = Vec::new();
            let mut i = 0;
            while i < s.len() {
                let e = o200k(s, i);
                want.push((i, e));
                i = e;
            }
            assert_eq!(Pattern::O200k.split(&text), want, "{text:?}");
            for k in Kernel::all_available() {
                let mut got = Vec::new();
                o200k_tile(s, k, |a, b| got.push((a, b)));
                assert_eq!(got, want, "{} on {text:?}", k.name());
            }
        }
    }
}
