//! Normalization and BERT pre-tokenization fused into one pass over the raw input.
//!
//! The normalized text is never built: each word is assembled in a reused buffer together
//! with the index of the input char each of its chars came from, handed to the model, and
//! cleared. Offsets stay exact without any whole-text alignment.

use super::normalize::fold_ascii_byte;
use super::{FastPaths, Stats};
use crate::normalizer::charmap::{self, Action, PageCache};
use crate::simd::Kernel;

/// One word of normalized text and where each of its chars came from, kept as runs:
/// `(k, o)` means the word's char `k` came from input char `o`, char `k + 1` from `o + 1`,
/// and so on until the next run. An ASCII word is one run, whatever its length.
#[derive(Default, Debug)]
pub struct Word {
    pub text: String,
    pub n_chars: u32,
    runs: Vec<(u32, u32)>,
}

impl Word {
    /// The input char the word's `k`-th char came from.
    #[inline]
    pub fn orig(&self, k: usize) -> u32 {
        let k = k as u32;
        // Runs are few (usually one): scan from the end.
        let &(s, o) = self.runs.iter().rev().find(|r| r.0 <= k).expect("a word has a first run");
        o + (k - s)
    }

    /// Starts a new run unless input char `orig` continues the last one.
    #[inline(always)]
    fn align(&mut self, orig: u32) {
        match self.runs.last() {
            Some(&(s, o)) if o + (self.n_chars - s) == orig => {}
            _ => self.runs.push((self.n_chars, orig)),
        }
    }

    #[inline(always)]
    fn push(&mut self, c: char, orig: u32) {
        self.align(orig);
        self.text.push(c);
        self.n_chars += 1;
    }

    /// Appends ASCII bytes, the `i`-th from input char `first + i`.
    #[inline(always)]
    fn push_ascii(&mut self, run: &[u8], first: u32) {
        debug_assert!(run.is_ascii());
        self.align(first);
        // SAFETY: callers pass bytes before a block's first stop, so every byte is ASCII
        // (the classifier stops at any byte >= 0x80), and ASCII is valid UTF-8.
        self.text.push_str(unsafe { std::str::from_utf8_unchecked(run) });
        self.n_chars += run.len() as u32;
    }

    fn clear(&mut self) {
        self.text.clear();
        self.runs.clear();
        self.n_chars = 0;
    }
}

/// A char the fused pass cannot handle alone (it may be moved by canonical reordering);
/// the caller runs the staged pipeline on this input instead.
#[derive(Debug, PartialEq, Eq)]
pub struct NeedsStaged;

/// Calls `emit` for every word of `text` as BertNormalizer + BertPreTokenizer would produce
/// it; input char indices start at `base`.
pub fn for_each_word(
    cache: &PageCache,
    fp: FastPaths,
    text: &str,
    base: u32,
    w: &mut Word,
    mut stats: Option<&mut Stats>,
    mut emit: impl FnMut(&Word),
) -> Result<(), NeedsStaged> {
    let cfg = *cache.config();
    let (lower, clean) = (cfg.lowercase, cfg.clean_text);
    let bytes = text.as_bytes();
    let kernel = if fp.simd { Kernel::best() } else { Kernel::Scalar };
    let lanes = kernel.lanes();
    let mut block = [0u8; 32];
    let mut i = 0usize;
    let mut ci = base;
    w.clear();

    macro_rules! flush {
        () => {
            if !w.text.is_empty() {
                emit(w);
                w.clear();
            }
        };
    }

    while i < bytes.len() {
        if fp.simd && i + lanes <= bytes.len() {
            let c = kernel.classify_block(&bytes[i..], &mut block, lower, clean);
            let valid = (c.stop.trailing_zeros() as usize).min(lanes);
            let valid_mask = if valid >= 32 { u32::MAX } else { (1u32 << valid) - 1 };
            let mut bounds = (c.punct | c.space) & valid_mask;
            let mut p = 0usize;
            while bounds != 0 {
                let b = bounds.trailing_zeros() as usize;
                bounds &= bounds - 1;
                if b > p {
                    w.push_ascii(&block[p..b], ci + p as u32);
                }
                flush!();
                if c.punct & (1 << b) != 0 {
                    w.push(block[b] as char, ci + b as u32);
                    flush!();
                }
                p = b + 1;
            }
            if valid > p {
                w.push_ascii(&block[p..valid], ci + p as u32);
            }
            if let Some(s) = stats.as_mut() {
                if valid == lanes {
                    s.blocks_folded += 1;
                } else {
                    s.blocks_stopped += 1;
                }
            }
            i += valid;
            ci += valid as u32;
            if valid == lanes {
                continue;
            }
        }
        // One char at a time.
        let b = bytes[i];
        if b < 0x80 {
            if let Some(y) = fold_ascii_byte(b, lower, clean) {
                let c = y as char;
                if c.is_ascii_whitespace() || y == 0x0B {
                    flush!();
                } else if y.is_ascii_punctuation() {
                    flush!();
                    w.push(c, ci);
                    flush!();
                } else {
                    w.push(c, ci);
                }
            }
            i += 1;
            ci += 1;
            continue;
        }
        let c = text[i..].chars().next().expect("i is on a char boundary");
        i += c.len_utf8();
        if let Some(s) = stats.as_mut() {
            s.chars_decoded += 1;
        }
        if fp.page_cache {
            let (page, hit) = cache.page(c);
            if let Some(s) = stats.as_mut() {
                if hit {
                    s.page_hits += 1;
                } else {
                    s.pages_built += 1;
                }
            }
            let p = page.get(c);
            match p.kind() {
                charmap::WORD => w.push(c, ci),
                charmap::PUNCT => {
                    flush!();
                    w.push(c, ci);
                    flush!();
                }
                charmap::SPACE => flush!(),
                charmap::DELETED => {}
                charmap::COMPLEX => return Err(NeedsStaged),
                charmap::REPLACED_WORD => {
                    for o in page.replacement(p).chars() {
                        w.push(o, ci);
                    }
                }
                _ => {
                    for o in page.replacement(p).chars() {
                        match charmap::pre_class(o) {
                            Action::Space => flush!(),
                            Action::Punct => {
                                flush!();
                                w.push(o, ci);
                                flush!();
                            }
                            _ => w.push(o, ci),
                        }
                    }
                }
            }
        } else {
            match charmap::action(&cfg, c) {
                Action::Word => w.push(c, ci),
                Action::Punct => {
                    flush!();
                    w.push(c, ci);
                    flush!();
                }
                Action::Space => flush!(),
                Action::Deleted => {}
                Action::Complex => return Err(NeedsStaged),
                Action::ReplacedWord(s) | Action::ReplacedMixed(s) => {
                    for o in s.chars() {
                        match charmap::pre_class(o) {
                            Action::Space => flush!(),
                            Action::Punct => {
                                flush!();
                                w.push(o, ci);
                                flush!();
                            }
                            _ => w.push(o, ci),
                        }
                    }
                }
            }
        }
        ci += 1;
    }
    flush!();
    Ok(())
}
