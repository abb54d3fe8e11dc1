//! The fast paths, each switchable at run time so the benchmark and the page can show
//! what each one buys (the three techniques of the blog post on the ~50x faster BERT
//! normalizer, plus fusing the stages):
//!
//! 1. `simd`: ASCII handled a block at a time ([`crate::simd`]).
//! 2. `page_cache`: non-ASCII chars answered from a per-256-code-point page
//!    ([`crate::normalizers::charmap`]).
//! 3. `lazy_output`: the normalizer returns its input when nothing changes, allocates once
//!    at the first change and copies untouched runs in blocks.
//! 4. `fused`: normalization and pre-tokenization in one pass over the input, word by word,
//!    with the alignment of only the current word kept (never a whole-text alignment).
//!
//! All of them off is the staged pipeline of [`crate::normalizers::bert`], which the trace
//! and the tests use as the oracle.

pub(crate) mod bert;
pub mod bert_normalizer;
pub mod bert_words;
pub(crate) mod byte_level;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FastPaths {
    pub simd: bool,
    pub page_cache: bool,
    pub lazy_output: bool,
    pub fused: bool,
}

impl Default for FastPaths {
    fn default() -> Self {
        FastPaths { simd: true, page_cache: true, lazy_output: true, fused: true }
    }
}

impl FastPaths {
    pub const NONE: FastPaths =
        FastPaths { simd: false, page_cache: false, lazy_output: false, fused: false };
}

/// What the fast paths did on one input (for the page and the benchmark).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Vector width in bytes, 0 when SIMD was off.
    pub block_bytes: u32,
    /// Blocks that were all ASCII and left unchanged: never decoded, looked up or copied.
    pub blocks_skipped: u64,
    /// Blocks that were all ASCII and folded (lowercased, whitespace mapped) in one go.
    pub blocks_folded: u64,
    /// Blocks that held a byte needing char-by-char work.
    pub blocks_stopped: u64,
    /// Chars decoded and handled one at a time.
    pub chars_decoded: u64,
    /// Page look-ups that found the page already built.
    pub page_hits: u64,
    /// Pages built (first visits).
    pub pages_built: u64,
    /// Whether the output is a new allocation (false: the input itself, zero copy).
    pub allocated: bool,
    /// Whether a char forced the staged pipeline (canonical reordering).
    pub staged_fallback: bool,
    /// Bytes of the input, for convenience.
    pub input_bytes: u64,
    /// Per block, in input order (only when details are asked for, and at most
    /// [`MAX_DETAIL`] of them): (byte offset, kind) with kind 0 skipped (all ASCII, nothing
    /// to do), 1 folded (all ASCII, lowercased in one go), 2 stopped (held a byte that sent
    /// the normalizer char by char from its first such byte). Bytes in no skipped or folded
    /// block were decoded one char at a time.
    pub blocks: Vec<(u32, u8)>,
    /// Per page looked up (only when details are asked for): which page, how many chars
    /// looked it up, and whether this run built it.
    pub pages: Vec<PageVisit>,
    /// Whether `blocks` stops short of the input.
    pub details_truncated: bool,
    #[serde(skip)]
    pub want_details: bool,
}

/// The most blocks a [`Stats`] lists one by one (the page shows no more than that).
pub const MAX_DETAIL: usize = 1 << 16;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PageVisit {
    /// The page number: code points `page * 256 ..= page * 256 + 255`.
    pub page: u32,
    pub lookups: u64,
    pub built: bool,
}

impl Stats {
    /// Stats that also record each block and page.
    pub fn detailed() -> Self {
        Stats { want_details: true, ..Stats::default() }
    }

    #[inline]
    pub(crate) fn block(&mut self, at: usize, kind: u8) {
        if self.want_details {
            if self.blocks.len() < MAX_DETAIL {
                self.blocks.push((at as u32, kind));
            } else {
                self.details_truncated = true;
            }
        }
    }

    #[inline]
    pub(crate) fn page(&mut self, c: char, built: bool) {
        if built {
            self.pages_built += 1;
        } else {
            self.page_hits += 1;
        }
        if self.want_details {
            let page = c as u32 >> 8;
            match self.pages.iter_mut().find(|p| p.page == page) {
                Some(p) => {
                    p.lookups += 1;
                    p.built |= built;
                }
                None => self.pages.push(PageVisit { page, lookups: 1, built }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bert_normalizer as normalize;
    use super::bert_words::{for_each_word, Word};
    use super::*;
    use crate::normalizers::bert::{self, BertNormalizerConfig};
    use crate::normalizers::charmap::PageCache;
    use crate::pre_tokenizers;

    use crate::testing::Rng;

    /// Strings that exercise every branch: ASCII of all classes (so every block boundary
    /// sees words, punctuation, controls), accents, CJK, deleted chars, odd whitespace,
    /// chars whose normalization is punctuation, and reordering-sensitive marks.
    fn random_text(r: &mut Rng) -> String {
        const ODD: &[char] = &[
            'é',
            'Ö',
            'İ',
            'ß',
            'Σ',
            'ς',
            'Ж',
            '東',
            '京',
            '\u{F900}',
            '\u{20000}',
            '\u{301}',
            '\u{316}',
            '\u{F73}',
            '\u{1D165}',
            '\u{1D15E}',
            '\u{200B}',
            '\u{AD}',
            '\u{FEFF}',
            '\u{A0}',
            '\u{3000}',
            '\u{2028}',
            '\u{85}',
            '\u{37E}',
            '\u{387}',
            '\u{FFFD}',
            '\0',
            '\u{7F}',
            '\u{B}',
            '\u{C}',
            '\u{1C}',
            '「',
            '—',
            '😀',
            'ﬁ',
            'Ⅻ',
            // Runs of unchanged word chars in several scripts, and chars next to them that
            // change, vanish or split a word (Greek tonos, Arabic harakat, Cyrillic capitals).
            'ж',
            'я',
            'ё',
            'Я',
            'α',
            'ω',
            'ά',
            'Ά',
            'ب',
            'ك',
            '\u{64E}',
            '\u{640}',
            '،',
            'é',
            'ß',
            '中',
            '。',
            'ｱ',
        ];
        let len = (r.next() % 90) as usize;
        (0..len)
            .map(|_| match r.next() % 10 {
                0..=4 => (b'a' + (r.next() % 26) as u8) as char,
                5 => (b'A' + (r.next() % 26) as u8) as char,
                6 => (r.next() % 128) as u8 as char,
                7 => ' ',
                _ => ODD[(r.next() % ODD.len() as u64) as usize],
            })
            .collect()
    }

    fn staged_words(cfg: &BertNormalizerConfig, text: &str) -> Vec<(String, Vec<u32>)> {
        let n = bert::normalize(cfg, text);
        let mut out = Vec::new();
        pre_tokenizers::bert::split(&n.text, |p| {
            out.push((n.text[p.byte_start..p.byte_end].to_owned(), n.orig[p.char_start..p.char_end].to_vec()))
        });
        out
    }

    fn configs() -> Vec<BertNormalizerConfig> {
        let mut v = Vec::new();
        for bits in 0..16u32 {
            v.push(BertNormalizerConfig {
                clean_text: bits & 1 != 0,
                handle_chinese_chars: bits & 2 != 0,
                strip_accents: Some(bits & 4 != 0),
                lowercase: bits & 8 != 0,
            });
        }
        v
    }

    fn switch_combinations() -> Vec<FastPaths> {
        (0..8u32)
            .map(|b| FastPaths {
                simd: b & 1 != 0,
                page_cache: b & 2 != 0,
                lazy_output: b & 4 != 0,
                fused: true,
            })
            .collect()
    }

    #[test]
    fn fused_words_equal_staged_words() {
        let mut r = Rng(0xDEADBEEFCAFEF00D);
        for cfg in configs() {
            let cache = PageCache::new(cfg);
            for _ in 0..600 {
                let text = random_text(&mut r);
                let want = staged_words(&cfg, &text);
                for fp in switch_combinations() {
                    let mut got = Vec::new();
                    let mut w = Word::default();
                    let res = for_each_word(&cache, fp, &text, 0, &mut w, None, |w| {
                        assert!(!w.ascii || w.text().is_ascii(), "{:?} marked ASCII", w.text());
                        got.push((
                            w.text().to_owned(),
                            (0..w.n_chars).map(|k| w.orig.at(k)).collect::<Vec<u32>>(),
                        ))
                    });
                    if res.is_ok() {
                        assert_eq!(got, want, "{cfg:?} {fp:?} on {text:?}");
                    } else {
                        // Only reordering-sensitive chars may refuse, and only when NFD runs.
                        assert!(cfg.strips_accents(), "{cfg:?} refused {text:?}");
                    }
                }
            }
        }
    }

    /// Words of one script at a time, long runs of 2-byte chars with the chars that stop
    /// the fused pass's run loop mixed in: capitals and accented letters (replaced by one
    /// 2-byte char, or by more: 'İ'), vowel marks (deleted), chars of another page, ASCII.
    fn script_text(r: &mut Rng) -> String {
        const SCRIPTS: &[&[char]] = &[
            &['а', 'б', 'ж', 'я', 'п', 'р', 'ё', 'Ж', 'Я', 'Ё', 'А', 'ѐ', 'Ѐ', 'ӕ', 'Ӕ'],
            &['α', 'β', 'ω', 'ς', 'ά', 'ώ', 'Ά', 'Ω', 'ΐ', '\u{301}', '\u{300}'],
            &['ب', 'ك', 'ي', 'ة', '\u{64E}', '\u{650}', '\u{651}', '\u{652}', '\u{640}', '،', '\u{670}'],
            &['é', 'è', 'ß', 'É', 'ÿ', 'ā', 'Ā', 'İ', 'ı', 'ǅ', '\u{AD}'],
        ];
        let mut out = String::new();
        for _ in 0..(r.next() % 12) {
            let script = SCRIPTS[(r.next() % SCRIPTS.len() as u64) as usize];
            for _ in 0..(r.next() % 20) {
                out.push(match r.next() % 16 {
                    0 => 'x',
                    1 => '東',
                    _ => script[(r.next() % script.len() as u64) as usize],
                });
            }
            out.push(if r.next().is_multiple_of(4) { '.' } else { ' ' });
        }
        out
    }

    #[test]
    fn fused_words_equal_staged_words_in_script_runs() {
        let mut r = Rng(0x0123_4567_89AB_CDEF);
        for cfg in configs() {
            let cache = PageCache::new(cfg);
            for _ in 0..300 {
                let text = script_text(&mut r);
                let want = staged_words(&cfg, &text);
                for fp in switch_combinations() {
                    // Without and with stats (with them, the run loops are not taken).
                    for with_stats in [false, true] {
                        let mut stats = Stats::default();
                        let mut got = Vec::new();
                        let mut w = Word::default();
                        let st = with_stats.then_some(&mut stats);
                        let res = for_each_word(&cache, fp, &text, 0, &mut w, st, |w| {
                            got.push((
                                w.text().to_owned(),
                                (0..w.n_chars).map(|k| w.orig.at(k)).collect::<Vec<u32>>(),
                            ))
                        });
                        if res.is_ok() {
                            assert_eq!(got, want, "{cfg:?} {fp:?} on {text:?}");
                        } else {
                            assert!(cfg.strips_accents(), "{cfg:?} refused {text:?}");
                        }
                    }
                }
            }
        }
    }

    /// ASCII text only (so blocks run full and words straddle every block boundary): words
    /// of 1 to 70 letters, digits, capitals, punctuation, controls and runs of spaces, at
    /// every length 1..200.
    #[test]
    fn fused_words_equal_staged_words_on_ascii_at_every_block_boundary() {
        let mut r = Rng(0x5DEECE66DB0B5E11);
        for cfg in [configs()[15], configs()[0], configs()[9]] {
            let cache = PageCache::new(cfg);
            for len in 1..200usize {
                for _ in 0..8 {
                    let mut text = String::new();
                    while text.len() < len {
                        let word_len = match r.next() % 4 {
                            0 => 1 + r.next() % 4,
                            1 => 1 + r.next() % 12,
                            2 => 20 + r.next() % 50,
                            _ => 1 + r.next() % 40,
                        };
                        for _ in 0..word_len {
                            text.push(match r.next() % 20 {
                                0 => (b'A' + (r.next() % 26) as u8) as char,
                                1 => (b'0' + (r.next() % 10) as u8) as char,
                                2 => b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"[(r.next() % 32) as usize] as char,
                                3 => (r.next() % 0x80) as u8 as char,
                                _ => (b'a' + (r.next() % 26) as u8) as char,
                            });
                        }
                        for _ in 0..=(r.next() % 3) / 2 {
                            text.push(if r.next().is_multiple_of(8) { '\n' } else { ' ' });
                        }
                    }
                    text.truncate(len);
                    let want = staged_words(&cfg, &text);
                    for fp in switch_combinations() {
                        let mut got = Vec::new();
                        let mut w = Word::default();
                        for_each_word(&cache, fp, &text, 0, &mut w, None, |w| {
                            assert!(!w.ascii || w.text().is_ascii(), "{:?} marked ASCII", w.text());
                            got.push((
                                w.text().to_owned(),
                                (0..w.n_chars).map(|k| w.orig.at(k)).collect::<Vec<u32>>(),
                            ))
                        })
                        .expect("ASCII never needs the staged pipeline");
                        assert_eq!(got, want, "{cfg:?} {fp:?} on {text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn fast_normalizer_equals_staged_normalizer() {
        let mut r = Rng(0x0123456789ABCDEF);
        for cfg in configs() {
            let cache = PageCache::new(cfg);
            for _ in 0..600 {
                let text = random_text(&mut r);
                let want = bert::normalize(&cfg, &text).text;
                for fp in switch_combinations() {
                    let mut st = Stats::default();
                    let got = normalize::normalize(&cache, fp, &text, Some(&mut st));
                    assert_eq!(got, want, "{cfg:?} {fp:?} on {text:?}");
                    if fp.lazy_output && want == text {
                        assert!(!st.allocated && matches!(got, std::borrow::Cow::Borrowed(_)), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn unchanged_text_is_borrowed_and_never_decoded() {
        let cache = PageCache::new(BertNormalizerConfig::default());
        let text = "plain lowercase ascii text that needs nothing at all, really.".repeat(3);
        let mut st = Stats::default();
        let got = normalize::normalize(&cache, FastPaths::default(), &text, Some(&mut st));
        assert!(matches!(got, std::borrow::Cow::Borrowed(_)));
        assert_eq!(st.chars_decoded, 0);
        assert!(st.blocks_skipped > 0 && st.blocks_folded == 0);
    }
}
