//! Special and added tokens: strings matched in the raw text before anything else runs, each
//! becoming one id.
//!
//! Matching is leftmost-longest among the accepted tokens, as in `tokenizers` (which accepts
//! them all). tiktoken's alternation is leftmost-first in hash-map order, which gives the same
//! matches unless one special token is a prefix of another (no shipped encoding has such a
//! pair). Where no accepted token starts, the search goes on one byte later, as in tiktoken,
//! so an accepted token inside a refused one is still found.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, Input, MatchKind};

use crate::{Error, Result};

/// A string that encodes to one id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedToken {
    pub content: String,
    pub id: u32,
    /// Special tokens (end of text, role markers) are subject to `allowed_special`; other
    /// added tokens (Qwen's `<think>`) are always recognized.
    pub special: bool,
}

pub(crate) struct AddedTokens {
    tokens: Vec<AddedToken>,
    by_id: HashMap<u32, usize>,
    /// Leftmost-longest, for splitting.
    splitter: Option<AhoCorasick>,
    /// Every occurrence, overlapping ones included, for the disallowed check.
    finder: Option<AhoCorasick>,
}

impl AddedTokens {
    pub fn new(tokens: Vec<AddedToken>) -> Result<AddedTokens> {
        if let Some(t) = tokens.iter().find(|t| t.content.is_empty()) {
            return Err(Error::Invalid(format!("added token {} is empty", t.id)));
        }
        // `id_bound` (and so `n_vocab`) is the largest id plus one, which must fit in a u32.
        if let Some(t) = tokens.iter().find(|t| t.id == u32::MAX) {
            return Err(Error::Invalid(format!(
                "added token {:?}: id {} is too large (at most {})",
                t.content,
                t.id,
                u32::MAX - 1
            )));
        }
        let by_id = tokens.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        let build = |kind| {
            if tokens.is_empty() {
                return Ok(None);
            }
            AhoCorasick::builder()
                .match_kind(kind)
                .build(tokens.iter().map(|t| t.content.as_str()))
                .map(Some)
                .map_err(|e| Error::Invalid(format!("special tokens: {e}")))
        };
        Ok(AddedTokens {
            splitter: build(MatchKind::LeftmostLongest)?,
            finder: build(MatchKind::Standard)?,
            by_id,
            tokens,
        })
    }

    pub fn tokens(&self) -> &[AddedToken] {
        &self.tokens
    }

    pub fn by_id(&self, id: u32) -> Option<&AddedToken> {
        self.by_id.get(&id).map(|&i| &self.tokens[i])
    }

    pub fn id_bound(&self) -> u32 {
        self.tokens.iter().map(|t| t.id + 1).max().unwrap_or(0)
    }

    /// Walks `text`: `f(start, Some(token))` for each accepted token found at byte `start`,
    /// then `f(text.len(), None)`. The text between consecutive calls is ordinary text.
    pub fn split(
        &self,
        text: &str,
        accept: impl Fn(&AddedToken) -> bool,
        mut f: impl FnMut(usize, Option<&AddedToken>),
    ) {
        if let Some(ac) = &self.splitter {
            let mut from = 0;
            while from < text.len() {
                let Some(m) = ac.find(Input::new(text).span(from..text.len())) else { break };
                let longest = &self.tokens[m.pattern().as_usize()];
                // The longest accepted token starting here: the longest match itself, or a
                // shorter token it begins with.
                let t = if accept(longest) {
                    Some(longest)
                } else {
                    self.tokens
                        .iter()
                        .filter(|t| text[m.start()..].starts_with(&t.content) && accept(t))
                        .max_by_key(|t| t.content.len())
                };
                match t {
                    Some(t) => {
                        f(m.start(), Some(t));
                        from = m.start() + t.content.len();
                    }
                    None => from = m.start() + 1,
                }
            }
        }
        f(text.len(), None);
    }

    /// Whether every added token is special (tiktoken's): then a call that allows none of
    /// them has nothing to split out.
    pub fn all_special(&self) -> bool {
        self.tokens.iter().all(|t| t.special)
    }

    /// The leftmost special token in `text` that `refused` refuses, with its byte offset.
    pub fn first_special(
        &self,
        text: &str,
        refused: impl Fn(&AddedToken) -> bool,
    ) -> Option<(usize, &AddedToken)> {
        let ac = self.finder.as_ref()?;
        ac.find_overlapping_iter(text)
            .map(|m| (m.start(), &self.tokens[m.pattern().as_usize()]))
            .filter(|(_, t)| t.special && refused(t))
            .min_by_key(|&(start, _)| start)
    }
}
