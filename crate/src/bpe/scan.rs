//! o200k's pre-tokens over ASCII, found with bit masks 64 bytes at a time.
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
//! A window ends before its first non-ASCII byte, and its last pre-tokens (whose starts need
//! bytes after it) are left to the next window or, when none can hold them, to the general
//! matcher, which also takes every pre-token at a non-ASCII byte. Texts that are mostly non-ASCII
//! never pay for a window: one starts only where the next 16 bytes are ASCII.

use super::pattern::{o200k, opt_contraction};
#[cfg(test)]
use super::pattern::o200k_general;
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

/// The pre-token starts of `s[base..]` that a window of ASCII bytes decides, as bits, and how
/// far they can be trusted: `(starts, limit)`, every piece between two starts `<= limit` is
/// exact. `base` must be a pre-token start.
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
fn window_starts(s: &[u8], base: usize, m: &ByteMasks, rest: usize) -> (u64, u32) {
    // The window: up to the first non-ASCII byte, at most 63 bytes.
    let len = rest.min(63).min(m.high.trailing_zeros() as usize) as u32;
    let eot = len as usize == rest;
    let valid = (1u64 << len) - 1;
    let (upper, lower, digit) = (m.upper & valid, m.lower & valid, m.digit & valid);
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
    let other_starts = other
        & (prev(letter | digit | tab) | (prev(newline | tail) & !tail) | 1);
    let prefix_starts = (ws_starts & !newline) | other_starts;
    let letter_starts = letter & ((upper & prev(lower)) | !(prev(letter) | prev(prefix_starts)));
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

/// Whether the 16 bytes from `i` (or all to the end) are ASCII: where a window pays (in text
/// that is mostly non-ASCII, a window would often hold one pre-token or none).
#[inline(always)]
fn ascii_ahead(s: &[u8], i: usize) -> bool {
    match s.get(i..i + 16) {
        Some(w) => u128::from_le_bytes(w.try_into().expect("16 bytes")) & (u128::MAX / 255 * 0x80) == 0,
        None => s[i..].is_ascii(),
    }
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
    let (starts, limit) = window_starts(s, base, &m, s.len() - base);
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

/// Whether `s` is mostly ASCII, judged by its first 2 KB: where [`o200k_tile`] pays. Mostly
/// non-ASCII text (Cyrillic, Greek, Arabic, CJK) pays for the look-ups and rarely gets a
/// window: the char-at-a-time matcher alone is faster there (callgrind).
#[inline(always)]
pub fn mostly_ascii(s: &[u8]) -> bool {
    let sample = &s[..s.len().min(2048)];
    high_bytes(sample) * 4 <= sample.len()
}

/// The number of bytes `>= 0x80` in `s`, 8 at a time: each word's high bits, moved to the low
/// bit of their bytes, add up per byte lane; every 31 words the lanes (each at most 31, so
/// their sum is below 256) are summed by one multiply. A call per 4 KB document made the
/// byte-at-a-time count ~6% of a Python `encode` of English (callgrind).
#[inline]
fn high_bytes(s: &[u8]) -> usize {
    const LANES: u64 = u64::MAX / 255;
    let (words, tail) = s.split_at(s.len() & !7);
    let mut total = tail.iter().filter(|&&b| b >= 0x80).count();
    for group in words.chunks(8 * 31) {
        let mut lanes = 0u64;
        for w in group.chunks_exact(8) {
            lanes += (u64::from_le_bytes(w.try_into().expect("8 bytes")) >> 7) & LANES;
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
/// how the other is compiled (sharing one cost Russian, which never comes here, +2M
/// instructions per MB).
#[inline(always)]
pub fn o200k_tile(s: &[u8], kernel: Kernel, mut f: impl FnMut(usize, usize)) {
    let n = s.len();
    let mut i = 0;
    // Where to look for an ASCII stretch again after a failed look: in mostly non-ASCII text
    // that look, made at every pre-token, would cost more than the windows save.
    let mut retry = 0;
    while i < n {
        if i >= retry {
            if s[i] < 0x80 && ascii_ahead(s, i) {
                let e = window_pieces(s, i, kernel, &mut f);
                if e > i {
                    i = e;
                    continue;
                }
            } else {
                retry = i + 32;
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
    use crate::bpe::pattern::{o200k, Pattern};

    /// Pieces that make the rules meet: every ASCII class, contractions and their look-alikes,
    /// runs of spaces and newlines, slashes, and non-ASCII letters, digits, marks and spaces.
    const ALPHABET: &[&str] = &[
        "a", "z", "e", "A", "Z", "Q", "0", "9", "5", " ", " ", " ", "\t", "\n", "\r", "\x0b", "\x0c", "'", "/", "!", "(", ".",
        "_", "-", "\x00", "\x1f", "\x7f", "'s", "'S", "'t", "'re", "'VE", "'ll", "'d", "'m", "'x", "    ", "\r\n", " \n ",
        "//", "HTTP", "Server", "don", "123", "4567",
        // Non-ASCII, now and then.
        "é", "É", "ß", "\u{a0}", "\u{2028}", "\u{85}", "٣", "\u{301}", "ʰ", "中", "—", "😀", "\u{17f}",
    ];
    const ASCII_PICKS: usize = ALPHABET.len() - 13;

    /// Random texts of 1..200 bytes, mostly ASCII, with long ASCII stretches (so pieces
    /// straddle the 8/16/32/64-byte boundaries) and non-ASCII chars now and then.
    fn texts(seed: u64, count: usize) -> Vec<String> {
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
                    let any = rare > 0 && r % (8 << rare) == 0;
                    let pick = if any { ALPHABET.len() } else { ASCII_PICKS };
                    let piece = ALPHABET[(r >> 16) as usize % pick];
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
    fn high_bytes_counts_every_length() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in (0..=600).chain([2047, 2048, 2049, 4096]) {
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // All high bytes (every lane full at each fold), all ASCII, or mixed.
                    if len % 3 == 0 { 0x80 | x as u8 } else if len % 3 == 1 { x as u8 & 0x7F } else { x as u8 }
                })
                .collect();
            assert_eq!(high_bytes(&s), s.iter().filter(|&&b| b >= 0x80).count(), "{len} bytes");
        }
    }

    /// The pieces a window decides equal the general matcher's, for windows at every
    /// pre-token start (so each piece is seen at every block position).
    #[test]
    fn window_pieces_match_the_general_matcher() {
        let mut answered = 0usize;
        for text in texts(0x5EED_0001, 4000) {
            let s = text.as_bytes();
            let mut base = 0;
            while base < s.len() {
                if s[base] < 0x80 {
                    let mut at = base;
                    window_pieces(s, base, Kernel::Scalar, &mut |a, b| {
                        assert_eq!((a, b), (at, o200k_general(s, a)), "{text:?} window at {base}");
                        at = b;
                        answered += 1;
                    });
                }
                base = o200k(s, base);
            }
        }
        assert!(answered > 100_000, "{answered}");
    }

    /// The whole tiling, with every kernel, equals the char-at-a-time matcher's.
    #[test]
    fn tiling_matches_the_matcher_with_every_kernel() {
        for text in texts(0x5EED_0002, 20000) {
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
