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

use super::pattern::{o200k, o200k_general, opt_contraction};
use crate::simd::Kernel;

/// The classified bytes `s[base..base + len]`.
struct Window {
    base: usize,
    /// Bytes classified: 64, or fewer at the end of the text.
    len: u32,
    /// Whether the window reaches the end of the text (bit `len` is the end, not unknown).
    eot: bool,
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
    high: u64,
}

/// What a window says about the pre-token at one of its bytes.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    /// It ends at this byte offset of the text.
    End(usize),
    /// A non-ASCII byte decides it: ask the general matcher.
    General,
    /// It needs bytes after the window.
    More,
}

/// The end of the run of `m` from bit `k` (`k <= 64`): the first bit at or after `k` not in
/// `m`, or 64.
#[inline(always)]
fn run_end(m: u64, k: u32) -> u32 {
    if k >= 64 {
        return 64;
    }
    // Bits shifted in from the top are 0 in `m >> k`: non-members, so the result is <= 64.
    k + (!(m >> k)).trailing_zeros()
}

/// Bit `k` of `m` (`k <= 64`; bit 64 is never set).
#[inline(always)]
fn has(m: u64, k: u32) -> bool {
    k < 64 && (m >> k) & 1 != 0
}

impl Window {
    /// Classifies the (up to) 64 bytes of `s` from `base`.
    #[inline(always)]
    fn new(s: &[u8], base: usize, kernel: Kernel) -> Window {
        let rest = s.len() - base;
        let (m, len) = if rest > 64 {
            (kernel.byte_masks(s[base..base + 64].try_into().expect("64 bytes")), 64)
        } else {
            // The last bytes of the text: a copy, the lanes after it masked off below.
            let mut block = [0u8; 64];
            block[..rest].copy_from_slice(&s[base..]);
            (kernel.byte_masks(&block), rest as u32)
        };
        let valid = if len == 64 { u64::MAX } else { (1u64 << len) - 1 };
        let high = m.high & valid;
        let (upper, lower, digit, ws) = (m.upper & valid, m.lower & valid, m.digit & valid, m.ws & valid);
        let newline = m.newline & valid;
        let other = valid & !(high | upper | lower | digit | ws);
        Window {
            base,
            len,
            eot: rest <= 64,
            upper,
            lower,
            digit,
            ws,
            newline,
            tail: newline | (m.slash & valid),
            space: m.space & valid,
            other,
            prefix: other | (ws & !newline),
            high,
        }
    }

    /// Whether byte offset `i` of the text is inside the window.
    #[inline(always)]
    fn holds(&self, i: usize) -> bool {
        i.wrapping_sub(self.base) < self.len as usize
    }

    /// How a run that stopped at bit `e` (not a member of the run's class) ends: at an ASCII
    /// byte or the end of the text (known), at a non-ASCII byte (which could extend the run:
    /// [`Piece::General`]), or at the end of the window ([`Piece::More`]).
    #[inline(always)]
    fn stop(&self, e: u32) -> Option<Piece> {
        if e >= self.len {
            return if self.eot { None } else { Some(Piece::More) };
        }
        has(self.high, e).then_some(Piece::General)
    }

    /// The pre-token that starts at byte offset `i` of `s` (inside the window).
    #[inline(always)]
    fn piece(&self, s: &[u8], i: usize) -> Piece {
        let k = (i - self.base) as u32;
        if has(self.high, k) {
            return Piece::General;
        }
        // The next byte decides the word prefix and the space before punctuation.
        if let Some(p) = self.stop(k + 1) {
            return p;
        }
        let letter = self.upper | self.lower;
        let word = if has(letter, k) {
            k
        } else if has(self.prefix, k) && has(letter, k + 1) {
            k + 1
        } else {
            u32::MAX
        };
        if word != u32::MAX {
            let e = run_end(self.lower, run_end(self.upper, word));
            if let Some(p) = self.stop(e) {
                return p;
            }
            return Piece::End(opt_contraction(s, self.base + e as usize));
        }
        if has(self.digit, k) {
            let r = run_end(self.digit, k);
            if r < k + 3 {
                if let Some(p) = self.stop(r) {
                    return p;
                }
            }
            return Piece::End(self.base + r.min(k + 3) as usize);
        }
        let j = if has(self.space, k) && has(self.other, k + 1) { k + 1 } else { k };
        if has(self.other, j) {
            let r = run_end(self.other, j);
            if let Some(p) = self.stop(r) {
                return p;
            }
            // The tail is ASCII only: a non-ASCII byte just ends it.
            let t = run_end(self.tail, r);
            if t >= self.len && !self.eot {
                return Piece::More;
            }
            return Piece::End(self.base + t as usize);
        }
        // Whitespace (the only ASCII left).
        let r = run_end(self.ws, k);
        if let Some(p) = self.stop(r) {
            return p;
        }
        let below = |b: u32| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        let newlines = self.newline & below(r) & !below(k);
        let e = if newlines != 0 {
            64 - newlines.leading_zeros()
        } else if r >= self.len || r == k + 1 {
            // At the end of the text (`stop` answered, so the window reaches it), or one char.
            r
        } else {
            r - 1
        };
        Piece::End(self.base + e as usize)
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
    let mut w: Option<Window> = None;
    while i < n {
        let e = match &w {
            Some(win) if win.holds(i) => match win.piece(s, i) {
                Piece::End(e) => e,
                Piece::General => o200k_general(s, i),
                // The window starts at this pre-token and still cannot hold it: a long run.
                Piece::More if win.base == i => o200k(s, i),
                Piece::More => {
                    w = Some(Window::new(s, i, kernel));
                    continue;
                }
            },
            _ if s[i] < 0x80 && ascii_ahead(s, i) => {
                w = Some(Window::new(s, i, kernel));
                continue;
            }
            _ => o200k(s, i),
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
                    match w.piece(s, i) {
                        Piece::End(e) => {
                            answered += 1;
                            assert_eq!(e, o200k_general(s, i), "{text:?} window at {base}, start {i}");
                        }
                        Piece::General => assert!(s[i..].iter().take(66).any(|&b| b >= 0x80), "{text:?} at {i}"),
                        Piece::More => assert!(!w.eot, "{text:?} at {i}"),
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

    #[test]
    fn run_ends() {
        assert_eq!(run_end(0, 0), 0);
        assert_eq!(run_end(u64::MAX, 0), 64);
        assert_eq!(run_end(u64::MAX, 63), 64);
        assert_eq!(run_end(0b0111_0000, 4), 7);
        assert_eq!(run_end(u64::MAX, 64), 64);
        assert_eq!(run_end(1 << 63, 63), 64);
    }
}
