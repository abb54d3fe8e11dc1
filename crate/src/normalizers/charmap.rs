//! What BertNormalizer does to each char, answered once per 256-code-point page.
//!
//! Every BERT step but NFD's canonical reordering acts on one char at a time, so the
//! normalized text is the concatenation of each char's own output — the output of the
//! staged pipeline run on that char alone. Reordering can only matter when a char
//! decomposes into (or is) a combining char that survives accent stripping; such chars
//! are marked [`Action::Complex`] and the caller falls back to the staged pipeline.
//!
//! Text in one script keeps to a few pages (as the blog post on how Hugging Face made
//! BERT's normalizer ~50x faster observes), so the answers are computed a page at a time on
//! first visit and then cost one memory read per char.

use super::bert::{self, BertNormalizerConfig};
use crate::unicode;
use std::sync::OnceLock;

/// The fate of one input char under the normalizer, and how the pre-tokenizer sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Unchanged, part of a word.
    Word,
    /// Unchanged, punctuation: a word of its own.
    Punct,
    /// Unchanged, whitespace: a word boundary.
    Space,
    /// Removed.
    Deleted,
    /// Needs the staged pipeline (canonical reordering may move it).
    Complex,
    /// Replaced by this text, all of it word chars (e.g. a lowercased or unaccented letter).
    ReplacedWord(String),
    /// Replaced by this text, which holds spaces or punctuation (e.g. a CJK char with its
    /// two spaces, or U+037E becoming ';').
    ReplacedMixed(String),
}

/// How the BERT pre-tokenizer sees a char of normalized text.
#[inline]
pub fn pre_class(c: char) -> Action {
    if c.is_whitespace() {
        Action::Space
    } else if unicode::is_bert_punctuation(c) {
        Action::Punct
    } else {
        Action::Word
    }
}

/// Computes a char's action from first principles (the uncached path).
pub fn action(cfg: &BertNormalizerConfig, c: char) -> Action {
    if cfg.strips_accents() {
        let mut complex = false;
        unicode::decompose_canonical(c, |d| {
            complex |= unicode::canonical_combining_class(d) != 0 && !unicode::is_mark_nonspacing(d);
        });
        if complex {
            return Action::Complex;
        }
    }
    let mut buf = [0u8; 4];
    let out = bert::normalize(cfg, c.encode_utf8(&mut buf)).text;
    let mut chars = out.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Action::Deleted,
        (Some(o), None) if o == c => pre_class(c),
        _ => {
            if out.chars().all(|o| pre_class(o) == Action::Word) {
                Action::ReplacedWord(out)
            } else {
                Action::ReplacedMixed(out)
            }
        }
    }
}

/// Whether a replacement `s` of word char `c` is `c` alone between two spaces.
fn is_isolated(c: char, s: &str) -> bool {
    let mut it = s.chars();
    pre_class(c) == Action::Word
        && it.next() == Some(' ')
        && it.next() == Some(c)
        && it.next() == Some(' ')
        && it.next().is_none()
}

/// A compact action: kind in the low 3 bits; for replacements, the output's byte length
/// (6 bits) and its offset in the page's text (23 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed(u32);

pub const WORD: u32 = 0;
pub const PUNCT: u32 = 1;
pub const SPACE: u32 = 2;
pub const DELETED: u32 = 3;
pub const COMPLEX: u32 = 4;
pub const REPLACED_WORD: u32 = 5;
pub const REPLACED_MIXED: u32 = 6;
/// A word char that becomes a word of its own, unchanged: the replacement is the char
/// between two spaces (CJK ideographs). The span still points at that replacement, so a
/// caller that treats it as [`REPLACED_MIXED`] gets the same text.
pub const ISOLATED: u32 = 7;

impl Packed {
    #[inline(always)]
    pub fn kind(self) -> u32 {
        self.0 & 7
    }
    #[inline(always)]
    fn span(self) -> (usize, usize) {
        let len = ((self.0 >> 3) & 63) as usize;
        let off = (self.0 >> 9) as usize;
        (off, off + len)
    }
}

/// The actions of the 256 chars of one page, and the replacement texts they point into.
pub struct Page {
    entries: [Packed; 256],
    text: String,
}

impl Page {
    fn build(cfg: &BertNormalizerConfig, page: u32) -> Page {
        let mut entries = [Packed(DELETED); 256];
        let mut text = String::new();
        for (i, e) in entries.iter_mut().enumerate() {
            let Some(c) = char::from_u32(page << 8 | i as u32) else { continue };
            *e = match action(cfg, c) {
                Action::Word => Packed(WORD),
                Action::Punct => Packed(PUNCT),
                Action::Space => Packed(SPACE),
                Action::Deleted => Packed(DELETED),
                Action::Complex => Packed(COMPLEX),
                Action::ReplacedWord(s) | Action::ReplacedMixed(s) if s.len() >= 64 => Packed(COMPLEX),
                a @ (Action::ReplacedWord(_) | Action::ReplacedMixed(_)) => {
                    let (kind, s) = match a {
                        Action::ReplacedWord(s) => (REPLACED_WORD, s),
                        Action::ReplacedMixed(s) if is_isolated(c, &s) => (ISOLATED, s),
                        Action::ReplacedMixed(s) => (REPLACED_MIXED, s),
                        _ => unreachable!(),
                    };
                    let off = text.len() as u32;
                    text.push_str(&s);
                    Packed(kind | (s.len() as u32) << 3 | off << 9)
                }
            };
        }
        Page { entries, text }
    }

    #[inline(always)]
    pub fn get(&self, c: char) -> Packed {
        self.entries[(c as u32 & 0xFF) as usize]
    }

    /// [`Page::get`] by code point (only its low 8 bits are used).
    #[inline(always)]
    pub fn get_cp(&self, cp: u32) -> Packed {
        self.entries[(cp & 0xFF) as usize]
    }

    /// The replacement text of a REPLACED_* entry.
    #[inline(always)]
    pub fn replacement(&self, p: Packed) -> &str {
        let (a, b) = p.span();
        &self.text[a..b]
    }
}

/// Lazily built pages for one normalizer configuration; shareable across threads.
pub struct PageCache {
    cfg: BertNormalizerConfig,
    pages: Box<[OnceLock<Box<Page>>]>,
}

impl PageCache {
    pub fn new(cfg: BertNormalizerConfig) -> Self {
        PageCache { cfg, pages: (0..0x1100).map(|_| OnceLock::new()).collect() }
    }

    pub fn config(&self) -> &BertNormalizerConfig {
        &self.cfg
    }

    /// The page holding `c`, built on first use. Returns whether it was already built.
    #[inline]
    pub fn page(&self, c: char) -> (&Page, bool) {
        self.page_of(c as u32)
    }

    /// [`PageCache::page`] by code point (`cp` must be at most 0x10FFFF).
    #[inline]
    pub fn page_of(&self, cp: u32) -> (&Page, bool) {
        let slot = &self.pages[(cp >> 8) as usize];
        if let Some(p) = slot.get() {
            return (p, true);
        }
        (slot.get_or_init(|| Box::new(Page::build(&self.cfg, cp >> 8))), false)
    }
}

impl Clone for PageCache {
    fn clone(&self) -> Self {
        PageCache::new(self.cfg)
    }
}

impl std::fmt::Debug for PageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.pages.iter().filter(|p| p.get().is_some()).count();
        write!(f, "PageCache({:?}, {built} pages built)", self.cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_of_familiar_chars() {
        let cfg = BertNormalizerConfig::default();
        assert_eq!(action(&cfg, 'a'), Action::Word);
        assert_eq!(action(&cfg, 'A'), Action::ReplacedWord("a".into()));
        assert_eq!(action(&cfg, ','), Action::Punct);
        assert_eq!(action(&cfg, '\u{200B}'), Action::Deleted);
        assert_eq!(action(&cfg, '\u{00A0}'), Action::ReplacedMixed(" ".into()));
        assert_eq!(action(&cfg, '東'), Action::ReplacedMixed(" 東 ".into()));
        assert_eq!(action(&cfg, 'é'), Action::ReplacedWord("e".into()));
        assert_eq!(action(&cfg, '\u{301}'), Action::Deleted);
        // U+1D165 is a spacing combining mark (Mc) with class 216: it survives stripping.
        assert_eq!(action(&cfg, '\u{1D165}'), Action::Complex);
    }

    #[test]
    fn packed_pages_agree_with_actions() {
        for cfg in [
            BertNormalizerConfig::default(),
            BertNormalizerConfig {
                clean_text: false,
                handle_chinese_chars: false,
                strip_accents: Some(false),
                lowercase: false,
            },
            BertNormalizerConfig {
                clean_text: true,
                handle_chinese_chars: false,
                strip_accents: Some(true),
                lowercase: false,
            },
        ] {
            let cache = PageCache::new(cfg);
            for cp in (0..0x3400).chain(0x4E00..0x4F00).chain(0x1D100..0x1D200).chain(0xFF00..0x10000) {
                let Some(c) = char::from_u32(cp) else { continue };
                let (page, _) = cache.page(c);
                let p = page.get(c);
                let got = match p.kind() {
                    WORD => Action::Word,
                    PUNCT => Action::Punct,
                    SPACE => Action::Space,
                    DELETED => Action::Deleted,
                    COMPLEX => Action::Complex,
                    REPLACED_WORD => Action::ReplacedWord(page.replacement(p).into()),
                    _ => Action::ReplacedMixed(page.replacement(p).into()),
                };
                assert_eq!(got, action(&cfg, c), "U+{cp:04X}");
                if p.kind() == ISOLATED {
                    assert_eq!(page.replacement(p), format!(" {c} "), "U+{cp:04X}");
                    assert_eq!(pre_class(c), Action::Word, "U+{cp:04X}");
                }
                assert_eq!(page.get_cp(cp), p);
                assert!(std::ptr::eq(cache.page_of(cp).0, page));
            }
        }
    }
}
