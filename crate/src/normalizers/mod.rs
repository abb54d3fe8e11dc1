//! Normalizers: how text is cleaned and folded before it is split into words.

pub mod aligned;
pub mod bert;
#[cfg(feature = "general")]
pub mod char_class;
pub mod charmap;
pub mod nfc;
#[cfg(feature = "general")]
pub mod precompiled;
#[cfg(feature = "general")]
pub mod replace;
#[cfg(feature = "general")]
pub mod sentencepiece;
#[cfg(feature = "general")]
pub mod simple;

pub use aligned::{AlignedText, AT_START};
pub use bert::BertNormalizerConfig;

use crate::error::{Error, Result};
use crate::unicode::{self, forms::Form};
#[cfg(feature = "general")]
pub use replace::{Replace, ReplacePattern};

/// A normalizer as tokenizer.json describes one.
#[derive(Clone, Debug, PartialEq)]
pub enum Normalizer {
    Bert(BertNormalizerConfig),
    /// NFC, NFD, NFKC or NFKD, with the results of Unicode 9.0 tables.
    Form(Form),
    /// Rust's context-free `char::to_lowercase`, char by char.
    Lowercase,
    /// Removes combining marks (General_Category Mn, Mc or Me, Unicode 9.0); no decomposition.
    StripAccents,
    Sequence(Vec<Normalizer>),
    /// Removes whitespace on the left and/or the right.
    #[cfg(feature = "general")]
    Strip {
        left: bool,
        right: bool,
    },
    #[cfg(feature = "general")]
    Replace(Replace),
    /// Puts this text before any non-empty text.
    #[cfg(feature = "general")]
    Prepend(String),
    /// Writes the UTF-8 bytes of each char as byte-level chars (GPT-2's alphabet).
    #[cfg(feature = "general")]
    ByteLevel,
    /// Removes control chars and maps invisible and odd whitespace chars to spaces.
    #[cfg(feature = "general")]
    Nmt,
    /// SentencePiece's compiled char map, cluster by cluster (shared: the map is large).
    #[cfg(feature = "general")]
    Precompiled(std::sync::Arc<precompiled::Precompiled>),
    /// SentencePiece's own normalizer (longest char-map match, its whitespace rules), from a
    /// `.model` file.
    #[cfg(feature = "general")]
    SentencePiece(std::sync::Arc<sentencepiece::SpmNormalizer>),
}

/// Where the first chars of a text stem from, as far as [`Normalizer::plain_text`] can
/// tell: Metaspace's prepend scheme "first" asks whether the first char stems from the
/// original's first char (the reference's `offsets_original().0 == 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lead {
    /// The first char stems from the original's first char, the second (if any) from a later
    /// one.
    One,
    /// The first char stems from the original's first char; the second may too.
    Some,
    /// The first char stems from a later original char.
    Later,
    /// Not known.
    Unknown,
}

impl Lead {
    /// The first char removed (and what stems from it, when `One`).
    pub fn first_removed(&mut self) {
        *self = match *self {
            Lead::One | Lead::Later => Lead::Later,
            Lead::Some | Lead::Unknown => Lead::Unknown,
        };
    }
}

impl Normalizer {
    /// The names of the stages [`Normalizer::apply`] reports, in order.
    pub fn stage_names(&self, out: &mut Vec<&'static str>) {
        match self {
            Normalizer::Bert(_) => out.extend(bert::STAGES),
            Normalizer::Form(f) => out.push(match f {
                Form::Nfc => "nfc",
                Form::Nfd => "nfd",
                Form::Nfkc => "nfkc",
                Form::Nfkd => "nfkd",
            }),
            Normalizer::Lowercase => out.push("lowercase"),
            Normalizer::StripAccents => out.push("strip_accents"),
            Normalizer::Sequence(v) => v.iter().for_each(|n| n.stage_names(out)),
            #[cfg(feature = "general")]
            Normalizer::Strip { .. } => out.push("strip"),
            #[cfg(feature = "general")]
            Normalizer::Replace(_) => out.push("replace"),
            #[cfg(feature = "general")]
            Normalizer::Prepend(_) => out.push("prepend"),
            #[cfg(feature = "general")]
            Normalizer::ByteLevel => out.push("byte_level"),
            #[cfg(feature = "general")]
            Normalizer::Nmt => out.push("nmt"),
            #[cfg(feature = "general")]
            Normalizer::Precompiled(_) => out.push("precompiled"),
            #[cfg(feature = "general")]
            Normalizer::SentencePiece(_) => out.push("sentencepiece"),
        }
    }

    /// Runs the normalizer on aligned text, calling `observe` after each stage (in the order
    /// of [`Normalizer::stage_names`]).
    ///
    /// Where the reference fails (a rewrite of the whole text after a char inserted at the
    /// very start, see [`AlignedText::transform_reporting`]) this carries on;
    /// [`Normalizer::try_apply`] reports it.
    pub fn apply(&self, t: AlignedText, observe: &mut dyn FnMut(&'static str, &AlignedText)) -> AlignedText {
        self.run(t, observe, &mut true)
    }

    /// [`Normalizer::apply`], or an error where the reference fails.
    pub fn try_apply(
        &self,
        t: AlignedText,
        observe: &mut dyn FnMut(&'static str, &AlignedText),
    ) -> Result<AlignedText> {
        let mut ok = true;
        let out = self.run(t, observe, &mut ok);
        if ok {
            Ok(out)
        } else {
            Err(Error::Input(
                "the reference fails on this text: a normalizer rewrites it after another inserted a char before its start".into(),
            ))
        }
    }

    fn run(
        &self,
        t: AlignedText,
        observe: &mut dyn FnMut(&'static str, &AlignedText),
        ok: &mut bool,
    ) -> AlignedText {
        let out = match self {
            Normalizer::Bert(cfg) => return bert::normalize_staged(cfg, t, ok, |n, x| observe(n, x)),
            Normalizer::Sequence(v) => return v.iter().fold(t, |acc, n| n.run(acc, observe, ok)),
            Normalizer::Form(f) => t.transform_reporting(nfc::normalize_items_unicode9(&t.text, *f), 0, ok),
            Normalizer::Lowercase => lowercase_aligned(t, ok),
            Normalizer::StripAccents => t.filter_reporting(|c| !unicode::is_combining_mark(c), ok),
            #[cfg(feature = "general")]
            Normalizer::Strip { left, right } => simple::strip(&t, *left, *right, ok),
            #[cfg(feature = "general")]
            Normalizer::Replace(r) => r.apply(&t),
            #[cfg(feature = "general")]
            Normalizer::Prepend(s) => simple::prepend(&t, s),
            #[cfg(feature = "general")]
            Normalizer::ByteLevel => simple::byte_level(&t, ok),
            #[cfg(feature = "general")]
            Normalizer::Nmt => simple::nmt(&t, ok),
            #[cfg(feature = "general")]
            Normalizer::Precompiled(p) => p.apply(&t),
            #[cfg(feature = "general")]
            Normalizer::SentencePiece(n) => n.apply(&t),
        };
        let mut names = Vec::with_capacity(1);
        self.stage_names(&mut names);
        observe(names[0], &out);
        out
    }

    /// The normalized text alone, as [`Normalizer::apply`] writes it, for the normalizers
    /// that can tell it without the alignment ([`Normalizer::has_plain_text`]). `None` where a
    /// char would be inserted before the text's start: after that the reference's rewrites
    /// depend on the alignment (see [`AlignedText::transform_reporting`]). `lead` says, before
    /// and after, where the text's first chars stem from.
    #[cfg(feature = "general")]
    pub fn plain_text(&self, s: String, lead: &mut Lead) -> Option<String> {
        match self {
            Normalizer::Sequence(v) => v.iter().try_fold(s, |acc, n| n.plain_text(acc, lead)),
            Normalizer::Form(f) => {
                // The text whole; the items only where the text's first two come from. Text
                // already in the form (most text) is copied in one go; nothing moves.
                let text = match nfc::form_unicode9(&s, *f) {
                    std::borrow::Cow::Borrowed(_) => return Some(s),
                    std::borrow::Cow::Owned(text) => text,
                };
                let mut head = unicode::forms::boundary_after(&s, 2, *f);
                let mut items = nfc::normalize_items_unicode9(&s[..head], *f);
                while items.len() < 2 && head < s.len() {
                    // Two chars composed into one: a longer head.
                    head = unicode::forms::boundary_after(&s, s[..head].chars().count() * 4, *f);
                    items = nfc::normalize_items_unicode9(&s[..head], *f);
                }
                // An insertion first takes the empty span at the start.
                if items.first().is_some_and(|i| i.1 > 0) {
                    return None;
                }
                // The first item takes the first char's alignment; the second the alignment
                // of a later char, unless it is an insertion.
                if *lead == Lead::One && items.get(1).is_some_and(|i| i.1 > 0) {
                    *lead = Lead::Some;
                }
                Some(text)
            }
            Normalizer::Strip { left, right } => {
                if *left && s.starts_with(char::is_whitespace) {
                    lead.first_removed();
                }
                Some(simple::strip_str(s, *left, *right))
            }
            Normalizer::Replace(r) => r.plain_text(&s, lead),
            #[cfg(not(target_arch = "wasm32"))]
            Normalizer::Lowercase => {
                // A char that lowercases to several: the later ones stem from it too.
                if *lead == Lead::One && s.chars().next().is_some_and(|c| c.to_lowercase().len() > 1) {
                    *lead = Lead::Some;
                }
                Some(lowercase(s))
            }
            #[cfg(not(target_arch = "wasm32"))]
            Normalizer::StripAccents => {
                if s.starts_with(unicode::is_combining_mark) {
                    lead.first_removed();
                }
                if s.is_ascii() {
                    return Some(s);
                }
                Some(rewrite_chars(s, unicode::is_combining_mark, |_, _| {}))
            }
            Normalizer::Precompiled(p) => {
                // The rewrite's first item always takes the first char's alignment (removals
                // before anything is written are lost, as in the reference).
                if *lead == Lead::One {
                    *lead = Lead::Some;
                }
                Some(p.normalize_plain(&s))
            }
            _ => None,
        }
    }

    /// Whether [`Normalizer::plain_text`] answers (but where it finds an insertion at the
    /// start).
    #[cfg(feature = "general")]
    pub fn has_plain_text(&self) -> bool {
        match self {
            Normalizer::Sequence(v) => v.iter().all(Normalizer::has_plain_text),
            Normalizer::Form(_)
            | Normalizer::Strip { .. }
            | Normalizer::Replace(_)
            | Normalizer::Precompiled(_) => true,
            // Natively only: the general wasm module has no bytes to spare.
            Normalizer::Lowercase | Normalizer::StripAccents => cfg!(not(target_arch = "wasm32")),
            _ => false,
        }
    }

    /// Whether [`Normalizer::plain_text`] of a text cut at an ASCII space is that of its two
    /// sides joined by a space: each step keeps the space and sees nothing across it (a
    /// Replace of single chars or of a literal without a space; a Unicode form, for which a
    /// space is a starter that composes with nothing).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn separable_at_spaces(&self) -> bool {
        match self {
            Normalizer::Sequence(v) => v.iter().all(Normalizer::separable_at_spaces),
            Normalizer::Form(_) => true,
            Normalizer::Replace(r) => r.leaves_spaces_alone(),
            _ => false,
        }
    }

    /// Whether [`Normalizer::plain_text`] of any ASCII text is that text: Unicode forms keep
    /// ASCII, and a Replace may match none of it ([`Replace::leaves_ascii_alone`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn leaves_ascii_alone(&self) -> bool {
        match self {
            Normalizer::Sequence(v) => v.iter().all(Normalizer::leaves_ascii_alone),
            Normalizer::Form(_) => true,
            Normalizer::Replace(r) => r.leaves_ascii_alone(),
            _ => false,
        }
    }

    /// The normalized text alone.
    pub fn normalize(&self, s: &str) -> String {
        self.apply(AlignedText::new(s), &mut |_, _| {}).text
    }

    /// The normalized text alone, or an error where the reference fails.
    pub fn try_normalize(&self, s: &str) -> Result<String> {
        Ok(self.try_apply(AlignedText::new(s), &mut |_, _| {})?.text)
    }
}

/// The Lowercase normalizer on aligned text, clearing `ok` where the reference fails.
fn lowercase_aligned(t: AlignedText, ok: &mut bool) -> AlignedText {
    // Each char lowercased to one char (most text): the alignment stays as it is.
    #[cfg(all(feature = "general", not(target_arch = "wasm32")))]
    if !t.starts_inserted() {
        let text = lowercase(t.text.clone());
        if text.chars().count() == t.orig.len() {
            return AlignedText { text, orig: t.orig };
        }
    }
    bert::lowercase(&t, ok)
}

/// Rust's `char::to_lowercase` of each char of `s`; `s` itself when no char changes.
#[cfg(all(feature = "general", not(target_arch = "wasm32")))]
fn lowercase(mut s: String) -> String {
    if s.is_ascii() {
        s.make_ascii_lowercase();
        return s;
    }
    rewrite_chars(
        s,
        |c| match lower_one(c) {
            Some(l) => l != c,
            None => c.to_lowercase().ne([c]),
        },
        |c, out| match lower_one(c) {
            Some(l) => out.push(l),
            None => out.extend(c.to_lowercase()),
        },
    )
}

/// `s` with each char where `changes` holds replaced by what `write` writes (perhaps
/// nothing), the runs of other chars copied whole; `s` itself when no char changes.
#[cfg(all(feature = "general", not(target_arch = "wasm32")))]
fn rewrite_chars(s: String, changes: impl Fn(char) -> bool, write: impl Fn(char, &mut String)) -> String {
    let mut out = String::new();
    // `s[kept..]` is not in `out` yet.
    let mut kept = 0;
    for (i, c) in s.char_indices() {
        if changes(c) {
            if kept == 0 {
                out.reserve(s.len() + s.len() / 8);
            }
            out.push_str(&s[kept..i]);
            write(c, &mut out);
            kept = i + c.len_utf8();
        }
    }
    if kept == 0 {
        return s;
    }
    out.push_str(&s[kept..]);
    out
}

/// `char::to_lowercase` of `c` where it is one char that these rules know without the case
/// table's search: ASCII, Latin-1, the basic Greek and Cyrillic letters, caseless scripts.
#[cfg(all(feature = "general", not(target_arch = "wasm32")))]
#[inline]
fn lower_one(c: char) -> Option<char> {
    let cp = c as u32;
    if cp < 0x80 {
        return Some(c.to_ascii_lowercase());
    }
    if unicode::is_caseless(c) {
        return Some(c);
    }
    let shift = match cp {
        0xC0..=0xD6 | 0xD8..=0xDE | 0x391..=0x3A1 | 0x3A3..=0x3AB | 0x410..=0x42F => 0x20,
        0x400..=0x40F => 0x50,
        0xDF..=0xFF | 0x3AC..=0x3CE | 0x430..=0x45F => 0,
        _ => return None,
    };
    char::from_u32(cp + shift)
}

#[cfg(all(test, feature = "general"))]
mod tests {
    use super::*;

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn lowercase_keeps_the_alignment_the_items_give() {
        let mut rng = crate::testing::Rng(0x6A09_E667_F3BC_C908);
        let parts = ["A", "a", "İ", "\u{212A}", "É", "ǅ", "東", " ", "Σ", "ß", "Ж"];
        for k in 0..3000 {
            let text: String = (0..rng.below(8)).map(|_| rng.pick(&parts)).collect();
            let mut t = AlignedText::new(&text);
            // Scattered input chars, as after a normalizer; sometimes an insertion first.
            t.orig = (0..t.orig.len() as u32).map(|i| 2 * i + 1).collect();
            if k % 5 == 0 && !t.orig.is_empty() {
                t.orig[0] = aligned::AT_START;
            }
            let (mut ok_fast, mut ok_items) = (true, true);
            let fast = Normalizer::Lowercase.run(t.clone(), &mut |_, _| {}, &mut ok_fast);
            let items = bert::lowercase(&t, &mut ok_items);
            assert_eq!((fast, ok_fast), (items, ok_items), "{text:?}");
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn lower_one_is_to_lowercase() {
        let mut told = 0;
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            if let Some(l) = lower_one(c) {
                assert!(c.to_lowercase().eq([l]), "U+{:04X}", c as u32);
                told += 1;
            }
        }
        assert!(told > 40_000, "{told}");
        assert_eq!(lowercase("ÀÉ ΑΣ Ё Жж İ ǅ 東".into()), "àé ασ ё жж i\u{307} ǆ 東");
    }

    #[test]
    fn plain_text_is_the_aligned_text() {
        let replace =
            |p: &str, c: &str| Normalizer::Replace(Replace::new(ReplacePattern::Regex(p.into()), c).unwrap());
        let normalizers = [
            Normalizer::Sequence(vec![
                Normalizer::Strip { left: false, right: true },
                replace(" {2,}", "▁"),
                Normalizer::Form(Form::Nfc),
            ]),
            Normalizer::Sequence(vec![
                Normalizer::Form(Form::Nfkd),
                Normalizer::Strip { left: true, right: true },
            ]),
            Normalizer::Sequence(vec![replace("a", "xyz"), replace("b", ""), Normalizer::Form(Form::Nfkc)]),
            Normalizer::Sequence(vec![
                Normalizer::Form(Form::Nfd),
                Normalizer::Lowercase,
                Normalizer::StripAccents,
            ]),
            Normalizer::Sequence(vec![
                Normalizer::StripAccents,
                Normalizer::Lowercase,
                Normalizer::Form(Form::Nfkc),
            ]),
            // Inserts before the start: declined.
            Normalizer::Sequence(vec![replace("^", "_"), Normalizer::Strip { left: true, right: false }]),
        ];
        let mut rng = crate::testing::Rng(0x1234_5678_9ABC_DEF1);
        let parts = [
            "a",
            "b",
            " ",
            "  ",
            "\u{3000}",
            "e\u{301}",
            "é",
            "ﬁ",
            "\u{1100}\u{1161}",
            "\t",
            "▁",
            "A",
            "İ",
            "Σ",
            "\u{301}",
            "Ǆ",
        ];
        for n in &normalizers {
            assert!(n.has_plain_text());
            for _ in 0..1000 {
                let text: String = (0..rng.below(10)).map(|_| rng.pick(&parts)).collect();
                let aligned = n.try_apply(AlignedText::new(&text), &mut |_, _| {});
                match n.plain_text(text.clone(), &mut Lead::Later) {
                    Some(plain) => assert_eq!(Some(plain), aligned.ok().map(|t| t.text), "{n:?} {text:?}"),
                    None => assert!(!text.is_empty(), "{n:?} declined empty text"),
                }
            }
        }
        assert!(!Normalizer::Nmt.has_plain_text());
    }

    #[test]
    fn leaves_ascii_alone_as_it_says() {
        let regex =
            |p: &str, c: &str| Normalizer::Replace(Replace::new(ReplacePattern::Regex(p.into()), c).unwrap());
        let literal = |p: &str, c: &str| {
            Normalizer::Replace(Replace::new(ReplacePattern::String(p.into()), c).unwrap())
        };
        // (normalizer, whether it claims to keep every ASCII text, an ASCII text it changes
        // when it does not)
        let cases = [
            (
                Normalizer::Sequence(vec![
                    regex("[\\u00AD\\u200B\\u200C\\u200D\\u2060\\uFEFF]", ""),
                    regex("\\p{Zs}", " "),
                    Normalizer::Form(Form::Nfc),
                ]),
                true,
                "",
            ),
            (Normalizer::Form(Form::Nfkc), true, ""),
            (literal("é", "e"), true, ""),
            (regex("é{2,}", "e"), true, ""),
            (regex("\\p{Zs}", "_"), false, "a b"),
            (regex(" {2,}", "_"), false, "a  b"),
            (regex("[a-c]", "x"), false, "abc"),
            (regex("[^é]", "x"), false, "a"),
            (regex("a|é", "x"), false, "a"),
            (literal("ab", "x"), false, "ab"),
            (Normalizer::Sequence(vec![Normalizer::Form(Form::Nfc), literal("z", "")]), false, "z"),
            (Normalizer::Lowercase, false, "A"),
        ];
        let mut rng = crate::testing::Rng(0x0A5C_11A1_0E55_0001);
        for (n, keeps, changed) in &cases {
            assert_eq!(n.leaves_ascii_alone(), *keeps, "{n:?}");
            if !keeps {
                assert_ne!(n.normalize(changed), *changed, "{n:?}");
                continue;
            }
            for _ in 0..500 {
                let text: String = (0..rng.below(12)).map(|_| char::from(rng.below(128) as u8)).collect();
                assert_eq!(n.normalize(&text), text, "{n:?}");
                assert_eq!(
                    n.plain_text(text.clone(), &mut Lead::Later).as_deref(),
                    Some(text.as_str()),
                    "{n:?}"
                );
            }
        }
    }
}
