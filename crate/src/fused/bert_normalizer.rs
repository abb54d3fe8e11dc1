//! BertNormalizer alone, fast: the text only (no alignment), borrowed when unchanged.

use super::{FastPaths, Stats};
use crate::normalizers::bert;
use crate::normalizers::charmap::{self, Action, PageCache};
use crate::simd::{Block, Kernel};
use std::borrow::Cow;

/// BERT's treatment of one ASCII byte: `None` when deleted.
#[inline(always)]
pub fn fold_ascii_byte(b: u8, lower: bool, clean: bool) -> Option<u8> {
    if clean {
        if matches!(b, b'\t' | b'\n' | b'\r') {
            return Some(b' ');
        }
        if b < 0x20 || b == 0x7F {
            return None;
        }
    }
    Some(if lower && b.is_ascii_uppercase() { b | 0x20 } else { b })
}

/// The output being built: nothing yet (the input is still the answer) or a string holding
/// the normalized text of `text[..copied]`.
struct Out<'a> {
    text: &'a str,
    buf: Option<String>,
    copied: usize,
}

impl<'a> Out<'a> {
    /// Makes `buf` hold the normalized form of `text[..at]`, given that everything since
    /// `copied` is unchanged: one allocation at the first change, then block copies.
    #[inline]
    fn catch_up(&mut self, at: usize) -> &mut String {
        let buf =
            self.buf.get_or_insert_with(|| String::with_capacity(self.text.len() + self.text.len() / 8 + 8));
        // Usually nothing to copy (the previous block was just written): skip the slicing.
        if self.copied < at {
            buf.push_str(&self.text[self.copied..at]);
        }
        self.copied = at;
        buf
    }
}

/// `b` as a str when it is all ASCII. A word-at-a-time check: the folded block is ASCII, and
/// `from_utf8` on it was 12% of the normalizer's time in wasm (a call walking 4-byte words).
#[inline(always)]
fn ascii_str(b: &[u8]) -> Option<&str> {
    let mut acc = 0u64;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        acc |= u64::from_le_bytes(w.try_into().unwrap());
    }
    for &x in words.remainder() {
        acc |= x as u64;
    }
    // SAFETY: no byte has its high bit set (checked just above), so every byte is ASCII, and
    // ASCII bytes are valid UTF-8.
    (acc & 0x8080_8080_8080_8080 == 0).then(|| unsafe { std::str::from_utf8_unchecked(b) })
}

/// Normalizes `text` with the cache's configuration, using the enabled fast paths.
pub fn normalize<'a>(
    cache: &PageCache,
    fp: FastPaths,
    text: &'a str,
    mut stats: Option<&mut Stats>,
) -> Cow<'a, str> {
    let cfg = *cache.config();
    let (lower, clean) = (cfg.lowercase, cfg.clean_text);
    let bytes = text.as_bytes();
    let kernel = if fp.simd { Kernel::best() } else { Kernel::Scalar };
    let lanes = if fp.simd { kernel.lanes() } else { 0 };
    let mut out = Out { text, buf: None, copied: 0 };
    if !fp.lazy_output {
        out.catch_up(0);
    }
    let want_details = stats.as_ref().is_some_and(|s| s.want_details);
    let mut st =
        Stats { block_bytes: lanes as u32, input_bytes: text.len() as u64, want_details, ..Stats::default() };
    let mut block = [0u8; 32];
    let mut i = 0;
    // As in the fused pass: after a block that stopped early, wait a block's length before
    // trying again, so text that is mostly not ASCII doesn't pay for blocks it can't use.
    let mut next_block = 0usize;
    while i < bytes.len() {
        if fp.simd && i >= next_block && bytes[i] < 0x80 && i + lanes <= bytes.len() {
            match kernel.fold_block(&bytes[i..], &mut block, lower, clean) {
                Block::Folded { changed } => {
                    if changed || out.buf.is_some() {
                        let buf = out.catch_up(i);
                        buf.push_str(ascii_str(&block[..lanes]).expect("ASCII block"));
                        out.copied = i + lanes;
                        st.blocks_folded += 1;
                        st.block(i, 1);
                    } else {
                        st.blocks_skipped += 1;
                        st.block(i, 0);
                    }
                    i += lanes;
                    continue;
                }
                Block::Stop { ascii_prefix } => {
                    st.blocks_stopped += 1;
                    st.block(i, 2);
                    if ascii_prefix < lanes / 2 {
                        next_block = i + lanes;
                    }
                    // The prefix is plain ASCII; fold it byte by byte below.
                    let end = i + ascii_prefix;
                    while i < end {
                        ascii_step(&mut out, bytes[i], i, lower, clean);
                        i += 1;
                    }
                }
            }
        }
        let b = bytes[i];
        if b < 0x80 {
            ascii_step(&mut out, b, i, lower, clean);
            i += 1;
            continue;
        }
        let c = text[i..].chars().next().expect("i is on a char boundary");
        let n = c.len_utf8();
        st.chars_decoded += 1;
        if fp.page_cache {
            let (page, hit) = cache.page(c);
            st.page(c, !hit);
            let p = page.get(c);
            match p.kind() {
                charmap::WORD | charmap::PUNCT | charmap::SPACE => {}
                charmap::DELETED => {
                    out.catch_up(i);
                    out.copied = i + n;
                }
                charmap::COMPLEX => return staged(&cfg, text, stats.take(), st),
                _ => {
                    out.catch_up(i).push_str(page.replacement(p));
                    out.copied = i + n;
                }
            }
        } else {
            match charmap::action(&cfg, c) {
                Action::Word | Action::Punct | Action::Space => {}
                Action::Deleted => {
                    out.catch_up(i);
                    out.copied = i + n;
                }
                Action::Complex => return staged(&cfg, text, stats.take(), st),
                Action::ReplacedWord(s) | Action::ReplacedMixed(s) => {
                    out.catch_up(i).push_str(&s);
                    out.copied = i + n;
                }
            }
        }
        i += n;
    }
    let result = match out.buf {
        Some(_) => {
            out.catch_up(text.len());
            Cow::Owned(out.buf.take().unwrap())
        }
        None => Cow::Borrowed(text),
    };
    st.allocated = matches!(result, Cow::Owned(_));
    if let Some(s) = stats.as_mut() {
        **s = st;
    }
    result
}

#[inline(always)]
fn ascii_step(out: &mut Out, b: u8, i: usize, lower: bool, clean: bool) {
    match fold_ascii_byte(b, lower, clean) {
        Some(y) if y == b => {}
        Some(y) => {
            out.catch_up(i).push(y as char);
            out.copied = i + 1;
        }
        None => {
            out.catch_up(i);
            out.copied = i + 1;
        }
    }
}

fn staged<'a>(
    cfg: &bert::BertNormalizerConfig,
    text: &'a str,
    stats: Option<&mut Stats>,
    mut st: Stats,
) -> Cow<'a, str> {
    let out = bert::normalize(cfg, text).text;
    st.staged_fallback = true;
    st.allocated = out != text;
    let allocated = st.allocated;
    if let Some(s) = stats {
        *s = st;
    }
    if allocated {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::ascii_str;

    #[test]
    fn ascii_str_accepts_exactly_the_all_ascii_slices() {
        // Every length up to 40 (word and remainder boundaries), with one high byte at each
        // position, or none; the answer must agree with from_utf8 on ASCII-or-not.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..=40 {
            for bad in (0..len).map(Some).chain([None]) {
                let mut b: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % 0x80) as u8
                    })
                    .collect();
                if let Some(k) = bad {
                    b[k] = 0x80 | (x as u8);
                }
                let want = b.is_ascii().then(|| std::str::from_utf8(&b).unwrap());
                assert_eq!(ascii_str(&b), want, "len {len}, high byte at {bad:?}");
            }
        }
    }
}
