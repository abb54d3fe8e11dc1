//! WordLevel: each pre-token is one token, itself when the vocabulary has it, else the unk
//! token; with the unk token missing from the vocabulary, such a pre-token is an error at
//! encode time (the reference loads the file and fails the encode).

use std::collections::HashMap;
#[cfg(not(target_arch = "wasm32"))]
use std::hash::BuildHasherDefault;
use std::sync::Arc;

#[cfg(not(target_arch = "wasm32"))]
use crate::models::cache::WordHasher;
use crate::models::{ReverseVocab, Token};
use crate::{Error, Result};

#[derive(Clone, Debug)]
pub struct WordLevel {
    pub vocab: HashMap<String, u32>,
    pub vocab_r: ReverseVocab,
    pub unk_token: Arc<str>,
    unk_id: Option<u32>,
    /// `vocab` again, hashed for lookups: the lookup is all this model does per word, and
    /// SipHash took a third of it (natively: the general wasm module has no bytes to spare).
    #[cfg(not(target_arch = "wasm32"))]
    index: HashMap<Box<str>, u32, BuildHasherDefault<WordHasher>>,
}

impl WordLevel {
    pub fn new(vocab: HashMap<String, u32>, unk_token: &str) -> Result<Self> {
        let vocab_r = ReverseVocab::new(&vocab)?;
        let unk_id = vocab.get(unk_token).copied();
        Ok(WordLevel {
            #[cfg(not(target_arch = "wasm32"))]
            index: vocab.iter().map(|(k, &v)| (k.as_str().into(), v)).collect(),
            vocab,
            vocab_r,
            unk_token: unk_token.into(),
            unk_id,
        })
    }

    pub fn tokenize(&self, piece: &str, out: &mut Vec<Token>) -> Result<()> {
        let end = piece.len() as u32;
        #[cfg(not(target_arch = "wasm32"))]
        let found = self.index.get(piece);
        #[cfg(target_arch = "wasm32")]
        let found = self.vocab.get(piece);
        match (found, self.unk_id) {
            (Some(&id), _) => out.push(Token { id, start: 0, end, unk: false }),
            (None, Some(id)) => out.push(Token { id, start: 0, end, unk: true }),
            (None, None) => {
                return Err(Error::Input(format!(
                    "WordLevel: {piece:?} is not in the vocabulary, and neither is the unk token {:?}",
                    &*self.unk_token
                )))
            }
        }
        Ok(())
    }

    /// The reference's text of token `t` of `piece`: the piece, or the unk token.
    pub fn token_text(&self, piece: &str, t: &Token) -> Arc<str> {
        if t.unk {
            self.unk_token.clone()
        } else {
            piece.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(unk: &str) -> WordLevel {
        let vocab = [("[UNK]", 0), ("hello", 1), ("wörld", 2)].map(|(t, i)| (t.to_owned(), i)).into();
        WordLevel::new(vocab, unk).unwrap()
    }

    #[test]
    fn whole_pieces_or_unk() {
        let m = model("[UNK]");
        let mut out = Vec::new();
        m.tokenize("wörld", &mut out).unwrap();
        m.tokenize("hell", &mut out).unwrap();
        assert_eq!(
            out,
            [Token { id: 2, start: 0, end: 6, unk: false }, Token { id: 0, start: 0, end: 4, unk: true }]
        );
        assert_eq!(&*m.token_text("hell", &out[1]), "[UNK]");
    }

    #[test]
    fn missing_unk_fails_only_when_needed() {
        let m = model("<unk>");
        let mut out = Vec::new();
        m.tokenize("hello", &mut out).unwrap();
        let e = m.tokenize("nope", &mut out).unwrap_err().to_string();
        assert!(e.contains("<unk>") && e.contains("nope"), "{e}");
    }
}
