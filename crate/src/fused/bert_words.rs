//! Normalization and BERT pre-tokenization fused into one pass over the raw input.
//!
//! The normalized text is never built: each word is assembled in a reused buffer together
//! with the index of the input char each of its chars came from, handed to the model, and
//! cleared. Offsets stay exact without any whole-text alignment.

use super::bert_normalizer::fold_ascii_byte;
use super::{FastPaths, Stats};
use crate::models::wordpiece::PaddedWord;
use crate::normalizers::charmap::{self, Action, PageCache};
use crate::simd::Kernel;

/// A word being assembled: its bytes (`bytes[..len]`, always followed by at least 16 more
/// bytes of any value, so that the model can load keys as whole machine words; the buffer
/// only grows, so no word pays for padding) and where each char came from, kept as runs:
/// `(k, o)` means the word's char `k` came from input char `o`, char `k + 1` from `o + 1`,
/// and so on until the next run. An ASCII word is one run, whatever its length.
#[derive(Debug, Default)]
pub struct Word {
    bytes: Vec<u8>,
    len: usize,
    n_chars: u32,
    runs: Vec<(u32, u32)>,
}

const PAD: usize = crate::models::wordpiece::vocab_index::SHORT;

/// Copies `src` to the start of `dst` (`dst.len() >= src.len()`). Words and runs are mostly
/// a few bytes long: two overlapping loads and stores copy them without a call into memcpy.
#[inline(always)]
fn copy_small(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n >= 8 {
        if n <= 16 {
            let a = u64::from_ne_bytes(src[..8].try_into().unwrap());
            let b = u64::from_ne_bytes(src[n - 8..].try_into().unwrap());
            dst[..8].copy_from_slice(&a.to_ne_bytes());
            dst[n - 8..n].copy_from_slice(&b.to_ne_bytes());
        } else {
            dst[..n].copy_from_slice(src);
        }
    } else if n >= 4 {
        let a = u32::from_ne_bytes(src[..4].try_into().unwrap());
        let b = u32::from_ne_bytes(src[n - 4..].try_into().unwrap());
        dst[..4].copy_from_slice(&a.to_ne_bytes());
        dst[n - 4..n].copy_from_slice(&b.to_ne_bytes());
    } else if n > 0 {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/// Where a word's chars came from.
#[derive(Clone, Copy, Debug)]
pub enum Orig<'a> {
    /// Char `k` came from input char `first + k`.
    Linear(u32),
    /// Runs as in [`Word`].
    Runs(&'a [(u32, u32)]),
}

impl Orig<'_> {
    /// The input char the word's `k`-th char came from.
    #[inline]
    pub fn at(&self, k: usize) -> u32 {
        match *self {
            Orig::Linear(first) => first + k as u32,
            Orig::Runs(runs) => {
                let k = k as u32;
                // Runs are few (usually one): scan from the end.
                let &(s, o) = runs.iter().rev().find(|r| r.0 <= k).expect("a word has a first run");
                o + (k - s)
            }
        }
    }
}

/// A finished word as the model sees it.
#[derive(Clone, Copy, Debug)]
pub struct WordView<'a> {
    /// The word, with the padding the model's lookups read past its end.
    pub word: PaddedWord<'a>,
    pub n_chars: usize,
    pub orig: Orig<'a>,
    /// True where the pass knows the word is all ASCII (a word or punctuation mark taken
    /// straight from a classified block); false means not known. It is a constant at each
    /// place a word is handed over, so the model's lookup for ASCII words is compiled only
    /// into the places that hand over ASCII words.
    pub ascii: bool,
}

impl WordView<'_> {
    /// The word as text.
    pub fn text(&self) -> &str {
        std::str::from_utf8(self.word.bytes()).expect("words are built from whole chars")
    }
}

impl Word {
    /// The finished word.
    #[inline(always)]
    fn view(&self) -> WordView<'_> {
        WordView {
            // SAFETY: `reserve` keeps PAD bytes past the word in `bytes` (which only grows).
            word: unsafe { PaddedWord::new_unchecked(&self.bytes, 0, self.len) },
            n_chars: self.n_chars as usize,
            orig: Orig::Runs(&self.runs),
            ascii: false,
        }
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held by the buffers (for callers that keep a Word between calls).
    pub fn capacity(&self) -> usize {
        self.bytes.capacity() + self.runs.capacity() * std::mem::size_of::<(u32, u32)>()
    }

    /// Starts a new run unless input char `orig` continues the last one.
    #[inline(always)]
    fn align(&mut self, orig: u32) {
        match self.runs.last() {
            Some(&(s, o)) if o + (self.n_chars - s) == orig => {}
            _ => self.runs.push((self.n_chars, orig)),
        }
    }

    /// Makes room for `n` more bytes and the padding after them.
    #[inline(always)]
    fn reserve(&mut self, n: usize) {
        if self.len + n + PAD > self.bytes.len() {
            self.grow(self.len + n + PAD);
        }
    }

    #[cold]
    fn grow(&mut self, need: usize) {
        self.bytes.resize(need.max(2 * self.bytes.len()).max(64), 0);
    }

    #[inline(always)]
    fn push_bytes(&mut self, b: &[u8]) {
        self.reserve(b.len());
        copy_small(&mut self.bytes[self.len..], b);
        self.len += b.len();
    }

    #[inline(always)]
    fn push(&mut self, c: char, orig: u32) {
        self.align(orig);
        if (c as u32) < 0x80 {
            self.reserve(1);
            self.bytes[self.len] = c as u8;
            self.len += 1;
        } else {
            let mut buf = [0u8; 4];
            self.push_bytes(c.encode_utf8(&mut buf).as_bytes());
        }
        self.n_chars += 1;
    }

    /// Appends a replacement text whose chars all come from input char `orig`.
    #[inline(always)]
    fn push_str_from(&mut self, s: &str, orig: u32) {
        for c in s.chars() {
            self.push(c, orig);
        }
    }

    /// Appends ASCII bytes, the `i`-th from input char `first + i`.
    #[inline(always)]
    fn push_ascii(&mut self, run: &[u8], first: u32) {
        debug_assert!(run.is_ascii());
        self.push_run(run, first, run.len() as u32);
    }

    /// Appends `n_chars` whole chars (UTF-8 `run`), the `i`-th from input char `first + i`.
    #[inline(always)]
    fn push_run(&mut self, run: &[u8], first: u32, n_chars: u32) {
        self.align(first);
        self.push_bytes(run);
        self.n_chars += n_chars;
    }

    fn clear(&mut self) {
        self.len = 0;
        self.runs.clear();
        self.n_chars = 0;
    }
}

/// The code point of the non-ASCII char starting at `b[i]` and its length in bytes.
/// `b` must be valid UTF-8 (it comes from a `str`) and `i` on a lead byte >= 0xC2.
#[inline(always)]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let b0 = b[i] as u32;
    let cont = |k: usize| b[i + k] as u32 & 0x3F;
    if b0 < 0xE0 {
        ((b0 & 0x1F) << 6 | cont(1), 2)
    } else if b0 < 0xF0 {
        ((b0 & 0x0F) << 12 | cont(1) << 6 | cont(2), 3)
    } else {
        ((b0 & 0x07) << 18 | cont(1) << 12 | cont(2) << 6 | cont(3), 4)
    }
}

/// A char the fused pass cannot handle alone (it may be moved by canonical reordering);
/// the caller runs the staged pipeline on this input instead.
#[derive(Debug, PartialEq, Eq)]
pub struct NeedsStaged;

/// Where the pass's words go: the buffer of the word being assembled, and `emit`, which
/// gets each finished word.
struct Words<'w, 'e, F> {
    w: &'w mut Word,
    emit: &'e mut F,
}

impl<F: FnMut(WordView)> Words<'_, '_, F> {
    /// Hands over the word in the buffer, if any.
    #[inline(always)]
    fn flush(&mut self) {
        if !self.w.is_empty() {
            (self.emit)(self.w.view());
            self.w.clear();
        }
    }

    /// A punctuation char from input char `orig`: a word of its own.
    #[inline(always)]
    fn punct(&mut self, c: char, orig: u32) {
        self.flush();
        self.w.push(c, orig);
        self.flush();
    }

    /// A replacement text: each of its chars is a word char, a boundary or punctuation, and
    /// all of them come from input char `orig`.
    #[inline(always)]
    fn push_mixed(&mut self, text: &str, orig: u32) {
        for o in text.chars() {
            match charmap::pre_class(o) {
                Action::Space => self.flush(),
                Action::Punct => self.punct(o, orig),
                _ => self.w.push(o, orig),
            }
        }
    }
}

/// Unchanged word chars of the input not yet copied to the word buffer: from input byte
/// `byte` (input char `char`) up to where the pass is.
struct Run {
    byte: usize,
    char: u32,
}

impl Run {
    /// Copies the run, which ends at input byte `i` (input char `ci`), to the word buffer.
    #[inline(always)]
    fn flush(&self, w: &mut Word, bytes: &[u8], i: usize, ci: u32) {
        if i > self.byte {
            w.push_run(&bytes[self.byte..i], self.char, ci - self.char);
        }
    }
}

/// Calls `emit` for every word of `text` as BertNormalizer + BertPreTokenizer would produce
/// it; input char indices start at `base`.
pub fn for_each_word(
    cache: &PageCache,
    fp: FastPaths,
    text: &str,
    base: u32,
    w: &mut Word,
    mut stats: Option<&mut Stats>,
    mut emit: impl FnMut(WordView),
) -> Result<(), NeedsStaged> {
    let cfg = *cache.config();
    let (lower, clean) = (cfg.lowercase, cfg.clean_text);
    let bytes = text.as_bytes();
    let kernel = if fp.simd { Kernel::best() } else { Kernel::Scalar };
    let lanes = kernel.lanes();
    // Folded blocks land here; the 32 bytes after a block give every word in it the
    // padding the model reads past its end.
    let mut block = [0u8; 64];
    let mut i = 0usize;
    let mut ci = base;
    w.clear();
    let mut out = Words { w, emit: &mut emit };

    // Where the next block attempt may start: in text that is mostly not ASCII, a block
    // stops at once, so after a short block the next attempt waits a block's length.
    let mut next_block = 0usize;
    while i < bytes.len() {
        if fp.simd && i >= next_block && bytes[i] < 0x80 {
            // The last block of the text (and the only one of a short text) is classified
            // from a zero-padded copy; lanes past the text's end are never used.
            let left = bytes.len() - i;
            let c = if left >= lanes {
                kernel.classify_block(&bytes[i..], &mut block[..32], lower, clean)
            } else {
                let mut tail = [0u8; 32];
                tail[..left].copy_from_slice(&bytes[i..]);
                kernel.classify_block(&tail, &mut block[..32], lower, clean)
            };
            let valid = (c.stop.trailing_zeros() as usize).min(lanes).min(left);
            let valid_mask = if valid >= 32 { u32::MAX } else { (1u32 << valid) - 1 };
            let mut bounds = (c.punct | c.space) & valid_mask;
            let mut p = 0usize;
            while bounds != 0 {
                let b = bounds.trailing_zeros() as usize;
                bounds &= bounds - 1;
                if b > p {
                    if out.w.is_empty() {
                        // A word wholly inside the block goes to the model straight from it.
                        (out.emit)(WordView {
                            word: PaddedWord::new(&block, p, b),
                            n_chars: b - p,
                            orig: Orig::Linear(ci + p as u32),
                            ascii: true,
                        });
                    } else {
                        out.w.push_ascii(&block[p..b], ci + p as u32);
                        out.flush();
                    }
                } else {
                    out.flush();
                }
                if c.punct & (1 << b) != 0 {
                    (out.emit)(WordView {
                        word: PaddedWord::new(&block, b, b + 1),
                        n_chars: 1,
                        orig: Orig::Linear(ci + b as u32),
                        ascii: true,
                    });
                }
                p = b + 1;
            }
            // A word that runs on past a full block that ended an earlier word: the next block
            // starts at it (re-reading its bytes), so that it too goes to the model straight
            // from a block, not through the word buffer. (Every boundary flushed the buffer,
            // and p > 0 means there was one.)
            let rescan = p > 0 && valid == lanes && left > lanes;
            if valid > p && !rescan {
                out.w.push_ascii(&block[p..valid], ci + p as u32);
            }
            if let Some(s) = stats.as_mut() {
                if valid == lanes.min(left) {
                    s.blocks_folded += 1;
                } else {
                    s.blocks_stopped += 1;
                }
            }
            let advance = if rescan { p } else { valid };
            i += advance;
            ci += advance as u32;
            if valid == lanes || i == bytes.len() {
                continue;
            }
            if valid < lanes / 2 {
                next_block = i + lanes;
            }
        }
        // One char at a time.
        let b = bytes[i];
        if b < 0x80 {
            if let Some(y) = fold_ascii_byte(b, lower, clean) {
                let c = y as char;
                if c.is_ascii_whitespace() || y == 0x0B {
                    out.flush();
                } else if y.is_ascii_punctuation() {
                    out.punct(c, ci);
                } else {
                    out.w.push(c, ci);
                }
            }
            i += 1;
            ci += 1;
            continue;
        }
        if fp.page_cache {
            // A run of non-ASCII chars, each answered from its page (looked up again only
            // when the page changes). Unchanged word chars are not copied one by one: they
            // accumulate in a run of input bytes that is appended in one go.
            let mut page_no = u32::MAX;
            let mut page = None;
            let mut run = Run { byte: i, char: ci };
            loop {
                let (cp, n) = decode(bytes, i);
                let hit = if cp >> 8 != page_no {
                    let (pg, hit) = cache.page_of(cp);
                    page = Some(pg);
                    page_no = cp >> 8;
                    hit
                } else {
                    true
                };
                let page = page.expect("set above on the first char");
                if let Some(s) = stats.as_mut() {
                    s.chars_decoded += 1;
                    s.page(char::from_u32(cp).expect("decoded from a str"), !hit);
                }
                let p = page.get_cp(cp);
                let kind = p.kind();
                if kind != charmap::WORD {
                    run.flush(out.w, bytes, i, ci);
                    match kind {
                        charmap::PUNCT | charmap::ISOLATED => {
                            // A word of one char (each CJK char is one): straight to the
                            // model from a padded copy, without the word buffer.
                            out.flush();
                            if i + n + PAD <= bytes.len() {
                                // The input itself holds the padding (any bytes will do).
                                (out.emit)(WordView {
                                    word: PaddedWord::new(bytes, i, i + n),
                                    n_chars: 1,
                                    orig: Orig::Linear(ci),
                                    ascii: false,
                                });
                            } else {
                                let mut one = [0u8; 4 + PAD];
                                one[..n].copy_from_slice(&bytes[i..i + n]);
                                (out.emit)(WordView {
                                    word: PaddedWord::new(&one, 0, n),
                                    n_chars: 1,
                                    orig: Orig::Linear(ci),
                                    ascii: false,
                                });
                            }
                        }
                        charmap::SPACE => out.flush(),
                        charmap::DELETED => {}
                        charmap::COMPLEX => return Err(NeedsStaged),
                        charmap::REPLACED_WORD => out.w.push_str_from(page.replacement(p), ci),
                        _ => out.push_mixed(page.replacement(p), ci),
                    }
                    run = Run { byte: i + n, char: ci + 1 };
                }
                i += n;
                ci += 1;
                if stats.is_none() && page_no < 8 {
                    // The common case in Cyrillic, Greek, Arabic, Hebrew...: a run of 2-byte
                    // word chars on the current page, each one decode and one page read (the
                    // general step above also checks the page, the char's length and the end
                    // of the run separately).
                    // The 2-byte chars of page p (< 8) are those with lead bytes 0xC0 | p << 2
                    // ..= +3: one mask and compare checks both the length and the page.
                    let lead = 0xC0 | (page_no as u8) << 2;
                    let two = |i: usize| (bytes[i] as u32 & 3) << 6 | (bytes[i + 1] as u32 & 0x3F);
                    loop {
                        while i < bytes.len()
                            && bytes[i] & 0xFC == lead
                            && page.get_cp(two(i)).kind() == charmap::WORD
                        {
                            i += 2;
                            ci += 1;
                        }
                        // Stopped at another char of the page: a deleted one (the vowel marks
                        // of Arabic, about every other char there) or one replaced by one
                        // 2-byte char (an upper-case or accented letter) is handled here,
                        // without the general step's decode and page check.
                        if i >= bytes.len() || bytes[i] & 0xFC != lead {
                            break;
                        }
                        let p = page.get_cp(two(i));
                        match p.kind() {
                            charmap::DELETED => run.flush(out.w, bytes, i, ci),
                            charmap::REPLACED_WORD => {
                                let r = page.replacement(p).as_bytes();
                                if r.len() != 2 || r[0] < 0xC0 {
                                    break;
                                }
                                run.flush(out.w, bytes, i, ci);
                                out.w.push_run(r, ci, 1);
                            }
                            _ => break,
                        }
                        i += 2;
                        ci += 1;
                        run = Run { byte: i, char: ci };
                    }
                }
                if i >= bytes.len() || bytes[i] < 0x80 {
                    run.flush(out.w, bytes, i, ci);
                    break;
                }
            }
            continue;
        }
        let c = text[i..].chars().next().expect("i is on a char boundary");
        i += c.len_utf8();
        if let Some(s) = stats.as_mut() {
            s.chars_decoded += 1;
        }
        match charmap::action(&cfg, c) {
            Action::Word => out.w.push(c, ci),
            Action::Punct => out.punct(c, ci),
            Action::Space => out.flush(),
            Action::Deleted => {}
            Action::Complex => return Err(NeedsStaged),
            Action::ReplacedWord(s) | Action::ReplacedMixed(s) => out.push_mixed(&s, ci),
        }
        ci += 1;
    }
    out.flush();
    Ok(())
}

/// The input chars `(first, last + 1)` that chars `a..b` of a word came from (`a < b`): what
/// `(orig.at(a), orig.at(b - 1) + 1)` gives, without a search in the common cases (a word
/// whose chars map to consecutive input chars).
#[inline(always)]
pub(crate) fn span(orig: Orig, a: usize, b: usize) -> (u32, u32) {
    match orig {
        Orig::Linear(first) => (first + a as u32, first + b as u32),
        Orig::Runs(&[(s, o)]) => (o + (a as u32 - s), o + (b as u32 - s)),
        _ => (orig.at(a), orig.at(b - 1) + 1),
    }
}

/// `b` such that char `k` of the word came from input char `b + k` (wrapping), when the
/// word's chars map to consecutive input chars.
#[inline(always)]
pub(crate) fn linear_base(orig: Orig) -> Option<u32> {
    match orig {
        Orig::Linear(first) => Some(first),
        // A word's first run starts at its char 0 (`Orig::at` relies on it too).
        Orig::Runs(&[(s, o)]) => Some(o.wrapping_sub(s)),
        _ => None,
    }
}

/// [`Orig::at`] for chars asked in ascending order (a word's pieces):
/// the run of each char is found by walking forward from the last one, not by a search, so
/// a word whose chars came from many runs (accents stripped between letters) costs
/// O(runs + pieces), not O(runs x pieces).
pub(crate) struct OrigCursor<'a> {
    orig: Orig<'a>,
    run: usize,
}

impl<'a> OrigCursor<'a> {
    pub(crate) fn new(orig: Orig<'a>) -> Self {
        OrigCursor { orig, run: 0 }
    }

    /// The input char of the word's char `k`; `k` must not be less than the last one asked.
    #[inline]
    pub(crate) fn at(&mut self, k: usize) -> u32 {
        match self.orig {
            Orig::Linear(first) => first + k as u32,
            Orig::Runs(runs) => {
                let k = k as u32;
                // Runs start at ascending chars, the first at char 0 (as Orig::at assumes).
                while self.run + 1 < runs.len() && runs[self.run + 1].0 <= k {
                    self.run += 1;
                }
                let (s, o) = runs[self.run];
                debug_assert!(s <= k);
                o + (k - s)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_small_copies_every_length_and_nothing_more() {
        let src: Vec<u8> = (0..40u8).map(|b| b.wrapping_mul(29) ^ 0x5A).collect();
        for n in 0..=src.len() {
            for at in 0..4 {
                let mut dst = [0xEEu8; 48];
                copy_small(&mut dst[at..], &src[..n]);
                assert_eq!(&dst[at..at + n], &src[..n], "n {n}");
                assert!(dst[..at].iter().chain(&dst[at + n..]).all(|&b| b == 0xEE), "n {n}: wrote outside");
            }
        }
    }

    #[test]
    fn a_reused_word_keeps_its_padding() {
        let mut w = Word::default();
        for round in 0..3 {
            let long = "x".repeat(100 * (round + 1));
            w.push_bytes(long.as_bytes());
            w.n_chars = long.len() as u32;
            assert!(w.bytes.len() >= w.len + PAD);
            let v = w.view();
            assert_eq!(v.word.bytes(), long.as_bytes());
            w.clear();
            w.push('é', 0);
            assert!(w.bytes.len() >= w.len + PAD);
            let v = w.view();
            assert_eq!(v.text(), "é");
            w.clear();
        }
    }
}
