//! Normalizers: how text is cleaned and folded before it is split into words.

pub mod aligned;
pub mod bert;
pub mod charmap;
pub mod nfc;
#[cfg(feature = "general")]
pub mod precompiled;

pub use aligned::AlignedText;
pub use bert::BertNormalizerConfig;

use crate::unicode::forms::{self, Form};

/// A normalizer as tokenizer.json describes one.
#[derive(Clone, Debug, PartialEq)]
pub enum Normalizer {
    Bert(BertNormalizerConfig),
    /// NFC, NFD, NFKC or NFKD (Unicode 15.0).
    Form(Form),
    /// Rust's context-free `char::to_lowercase`, char by char.
    Lowercase,
    /// Removes nonspacing marks (General_Category Mn, Unicode 8.0); no decomposition.
    StripAccents,
    Sequence(Vec<Normalizer>),
    /// SentencePiece's compiled char map, cluster by cluster (shared: the map is large).
    #[cfg(feature = "general")]
    Precompiled(std::sync::Arc<precompiled::Precompiled>),
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
            Normalizer::Precompiled(_) => out.push("precompiled"),
        }
    }

    /// Runs the normalizer on aligned text, calling `observe` after each stage (in the order
    /// of [`Normalizer::stage_names`]).
    pub fn apply(&self, t: AlignedText, observe: &mut dyn FnMut(&'static str, &AlignedText)) -> AlignedText {
        match self {
            Normalizer::Bert(cfg) => bert::normalize_staged(cfg, t, |n, x| observe(n, x)),
            Normalizer::Form(f) => {
                let out = t.transform(forms::normalize_items(&t.text, *f), 0);
                let mut names = Vec::new();
                self.stage_names(&mut names);
                observe(names[0], &out);
                out
            }
            Normalizer::Lowercase => {
                let out = bert::lowercase(&t);
                observe("lowercase", &out);
                out
            }
            Normalizer::StripAccents => {
                let out = bert::strip_marks(&t);
                observe("strip_accents", &out);
                out
            }
            Normalizer::Sequence(v) => v.iter().fold(t, |acc, n| n.apply(acc, observe)),
            #[cfg(feature = "general")]
            Normalizer::Precompiled(p) => {
                let out = p.apply(&t);
                observe("precompiled", &out);
                out
            }
        }
    }

    /// The normalized text alone.
    pub fn normalize(&self, s: &str) -> String {
        self.apply(AlignedText::new(s), &mut |_, _| {}).text
    }
}
