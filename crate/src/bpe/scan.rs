//! o200k's pre-tokens over ASCII, found with bit masks 64 bytes at a time.
//!
//! A window of up to 64 bytes is classified once into bit masks ([`crate::simd::ByteMasks`], by the
//! vector kernel the CPU has); then each pre-token that starts in the window ends where a
//! run of one mask ends, found with `trailing_zeros`, instead of a byte-by-byte scan. On
//! ASCII the pattern's branches reduce to runs of byte classes (see [`super::pattern`]'s
//! `o200k_ascii`, which this follows rule for rule):
//! - a word: `[A-Z]*[a-z]*` (at least one letter) after an optional prefix byte (not `\r`
//!   `\n`, a letter or a digit), then an optional contraction;
//! - `\p{N}{1,3}`;
//! - ` ?[^\s\p{L}\p{N}]+[\r\n/]*`;
//! - a whitespace run: up to its last newline, else whole at the end of the text or when it
//!   is one char, else all but its last char.
//!
//! Where a non-ASCII byte could change a match (it could be a letter, digit or space that
//! extends the run), the general matcher decides that pre-token; where a match needs bytes
//! past the window, a new window starts at the pre-token. Texts that are mostly non-ASCII
//! never pay for a window: one starts only where the next 8 bytes are ASCII.

use super::pattern::{o200k, opt_contraction};
#[cfg(test)]
use super::pattern::o200k_general;
use crate::simd::Kernel;

/// The classified bytes `s[base..base + len]`.
///
/// At most 63 bytes are classified: bit 63 is then always past the window, so every run
/// stops at or before it, and the masks shifted right by a start `k` never need bit 64.
#[derive(Default)]
struct Window {
    base: usize,
    /// Bytes classified: 63, or fewer at the end of the text.
    len: u32,
    upper: u64,
    lower: u64,
    digit: u64,
    ws: u64,
    newline: u64,
    /// `[\r\n/]`: the tail of a punctuation run.
    tail: u64,
    space: u64,
    /// ASCII `[^\s\p{L}\p{N}]`.
    other: u64,
    /// ASCII `[^\r\n\p{L}\p{N}]`: a word's optional prefix.
    prefix: u64,
    /// Bits past the window when the text goes on after it: a run that reaches one needs
    /// bytes the window does not have.
    more: u64,
    /// Bits past the window when the window reaches the end of the text: a run that reaches
    /// one ends with the text.
    eot: u64,
    /// `more` and the non-ASCII bytes: a run that stops at one of these could go on (a
    /// non-ASCII letter after a word, a no-break space after spaces).
    stop: u64,
}

/// The end of the run of `m` from bit 0 (bit 63 of `m` is never set).
#[inline(always)]
fn run(m: u64) -> u32 {
    (!m).trailing_zeros()
}

impl Window {
    /// Classifies the (up to) 63 bytes of `s` from `base`.
    #[inline(always)]
    fn new(s: &[u8], base: usize, kernel: Kernel) -> Window {
        let rest = s.len() - base;
        let m = if rest >= 64 {
            kernel.byte_masks(s[base..base + 64].try_into().expect("64 bytes"))
        } else {
            // The last bytes of the text: a copy, the lanes after it masked off below.
            let mut block = [0u8; 64];
            block[..rest].copy_from_slice(&s[base..]);
            kernel.byte_masks(&block)
        };
        let len = rest.min(63) as u32;
        let valid = (1u64 << len) - 1;
        let high = m.high & valid;
        let (upper, lower, digit, ws) = (m.upper & valid, m.lower & valid, m.digit & valid, m.ws & valid);
        let newline = m.newline & valid;
        let other = valid & !(high | upper | lower | digit | ws);
        let (more, eot) = if rest > 63 { (!valid, 0) } else { (0, !valid) };
        Window {
            base,
            len,
            upper,
            lower,
            digit,
            ws,
            newline,
            tail: newline | (m.slash & valid),
            space: m.space & valid,
            other,
            prefix: other | (ws & !newline),
            more,
            eot,
            stop: high | more,
        }
    }

    /// Whether byte offset `i` of the text is inside the window.
    #[inline(always)]
    fn holds(&self, i: usize) -> bool {
        i.wrapping_sub(self.base) < self.len as usize
    }

    /// The end of the pre-token that starts at byte offset `i` of `s` (inside the window),
    /// or None where a non-ASCII byte or the bytes after the window decide it.
    ///
    /// Every mask is shifted so that bit 0 is byte `i`; a run found in one ends at a bit
    /// `e <= 63 - k`, so `x >> e` is always a valid shift.
    #[inline(always)]
    fn piece(&self, s: &[u8], i: usize) -> Option<usize> {
        let k = (i - self.base) as u32;
        let stop = self.stop >> k;
        // The byte and the next one decide the branch (a word's prefix, a space before
        // punctuation).
        if stop & 3 != 0 {
            return None;
        }
        let letter = (self.upper | self.lower) >> k;
        if letter & 1 != 0 || (self.prefix >> k) & (letter >> 1) & 1 != 0 {
            let w = (letter & 1 == 0) as u32;
            let e = w + run(self.upper >> k >> w);
            let e = e + run(self.lower >> k >> e);
            if (stop >> e) & 1 != 0 {
                return None;
            }
            return Some(opt_contraction(s, i + e as usize));
        }
        let digit = self.digit >> k;
        if digit & 1 != 0 {
            let r = run(digit);
            if r >= 3 {
                return Some(i + 3);
            }
            return ((stop >> r) & 1 == 0).then_some(i + r as usize);
        }
        let other = self.other >> k;
        let j = (self.space >> k) as u32 & (other >> 1) as u32 & 1;
        if (other >> j) & 1 != 0 {
            let r = j + run(other >> j);
            if (stop >> r) & 1 != 0 {
                return None;
            }
            // The tail is ASCII only: a non-ASCII byte just ends it.
            let t = r + run(self.tail >> k >> r);
            return ((self.more >> k >> t) & 1 == 0).then_some(i + t as usize);
        }
        // Whitespace (the only ASCII left).
        let r = run(self.ws >> k);
        if (stop >> r) & 1 != 0 {
            return None;
        }
        let newlines = (self.newline >> k) & ((1u64 << r) - 1);
        let e = if newlines != 0 {
            64 - newlines.leading_zeros()
        } else if r == 1 || (self.eot >> k >> r) & 1 != 0 {
            // One char, or the run ends with the text.
            r
        } else {
            r - 1
        };
        Some(i + e as usize)
    }
}

/// Whether the 8 bytes from `i` (or all to the end) are ASCII: where a window pays.
#[inline(always)]
fn ascii_ahead(s: &[u8], i: usize) -> bool {
    match s.get(i..i + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080 == 0,
        None => s[i..].is_ascii(),
    }
}

/// Calls `f(start, end)` for each o200k pre-token of `s`, in order (the ranges tile `s`),
/// classifying with `kernel`.
#[inline(always)]
pub fn o200k_tile(s: &[u8], kernel: Kernel, mut f: impl FnMut(usize, usize)) {
    let n = s.len();
    let mut i = 0;
    let mut w = Window::default();
    while i < n {
        if !w.holds(i) && s[i] < 0x80 && ascii_ahead(s, i) {
            w = Window::new(s, i, kernel);
        }
        let e = match w.holds(i).then(|| w.piece(s, i)).flatten() {
            Some(e) => e,
            // Non-ASCII, or a pre-token the window cannot hold.
            None => o200k(s, i),
        };
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

    /// A window's answer at every start it holds equals the general matcher's, for windows
    /// at every offset before the start (so each piece is seen at every block position).
    #[test]
    fn window_pieces_match_the_general_matcher() {
        let mut answered = 0usize;
        for text in texts(0x5EED_0001, 4000) {
            let s = text.as_bytes();
            let starts: Vec<usize> = (0..s.len()).filter(|&i| text.is_char_boundary(i)).collect();
            for base in starts.iter().copied().filter(|&b| s[b] < 0x80) {
                let w = Window::new(s, base, Kernel::Scalar);
                for &i in starts.iter().filter(|&&i| w.holds(i)) {
                    if let Some(e) = w.piece(s, i) {
                        answered += 1;
                        assert_eq!(e, o200k_general(s, i), "{text:?} window at {base}, start {i}");
                    } else if !s[i..].iter().take(66).any(|&b| b >= 0x80) {
                        // Only the bytes after the window can leave an all-ASCII pre-token open.
                        assert!(w.more != 0, "{text:?} window at {base}, start {i}");
                    }
                }
            }
        }
        assert!(answered > 1_000_000, "{answered}");
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
