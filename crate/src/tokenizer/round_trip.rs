//! Vocabulary entries a model does not produce: those whose own text does not encode back to
//! them (a WordPiece continuation, a byte-level piece of a char, a token the pre-tokenizer
//! always splits), and those a body of text never yields (the textbook's "glitch tokens",
//! such as r50k's " SolidGoldMagikarp", trained into the vocabulary and then seldom seen).

use serde::Serialize;

use super::Tokenizer;
use crate::error::Result;

/// One entry that does not round-trip: its id and token, the text it decodes to alone, and
/// the ids that text encodes to (no special tokens added).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoundTripMiss {
    pub id: u32,
    pub token: String,
    pub text: String,
    pub ids: Vec<u32>,
}

impl Tokenizer {
    /// The ids a token may have: the model's and the added tokens'.
    fn id_range(&self) -> u32 {
        let model = self.model.vocab_r().len() as u32;
        let added = self.added.iter().map(|a| a.id + 1).max().unwrap_or(0);
        model.max(added)
    }

    /// Every vocabulary entry, in id order, whose text (the id decoded alone, special tokens
    /// kept) does not encode to that one id. Truncation and padding are off: the question is
    /// what the model makes of the text.
    pub fn round_trip_misses(&self) -> Result<Vec<RoundTripMiss>> {
        let tok = self.unpadded();
        let mut out = Vec::new();
        let mut ids = Vec::new();
        for id in 0..self.id_range() {
            let Some(token) = self.id_to_token(id) else { continue };
            let text = self.decode(&[id], false)?;
            ids.clear();
            tok.encode_ids_into(&text, false, &mut ids)?;
            if ids.as_slice() != [id] {
                out.push(RoundTripMiss { id, token: token.to_owned(), text, ids: ids.clone() });
            }
        }
        Ok(out)
    }

    /// The model's vocabulary ids (added tokens left out: they are not learned pieces) that
    /// encoding each of `texts` (no special tokens added) never yields, in id order.
    /// Truncation is off: every token of every text counts.
    pub fn never_produced<'a>(&self, texts: impl IntoIterator<Item = &'a str>) -> Result<Vec<u32>> {
        let tok = self.unpadded();
        let model = self.model.vocab_r().len();
        let mut seen = vec![false; model];
        let mut ids = Vec::new();
        for text in texts {
            ids.clear();
            tok.encode_ids_into(text, false, &mut ids)?;
            for &id in &ids {
                if let Some(s) = seen.get_mut(id as usize) {
                    *s = true;
                }
            }
        }
        for a in &self.added {
            if let Some(s) = seen.get_mut(a.id as usize) {
                *s = true;
            }
        }
        Ok((0..model as u32)
            .filter(|&id| !seen[id as usize] && self.model.id_to_token(id).is_some())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::Tokenizer;

    #[test]
    fn continuations_and_split_tokens_miss() {
        let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nstraw\n##berry\nberry\na b\n";
        let tok = Tokenizer::from_vocab_txt(vocab).unwrap();
        let misses = tok.round_trip_misses().unwrap();
        let got: Vec<(u32, &str)> = misses.iter().map(|m| (m.id, m.text.as_str())).collect();
        // "##berry" decodes alone to itself, which the pre-tokenizer splits at each '#'; "a b"
        // splits at the space into two unknown words.
        assert_eq!(got, vec![(6, "##berry"), (8, "a b")]);
        assert_eq!(misses[1].ids, vec![1, 1]);
        // Padding to a fixed length (bert-base-uncased's file pads to 128) changes nothing.
        let mut padded = tok.clone();
        padded.padding = Some(crate::tokenizer::Padding {
            strategy: crate::tokenizer::PaddingStrategy::Fixed(8),
            direction: crate::tokenizer::Direction::Right,
            pad_to_multiple_of: None,
            pad_id: 0,
            pad_type_id: 0,
            pad_token: "[PAD]".into(),
        });
        assert_eq!(padded.round_trip_misses().unwrap(), misses);
    }

    #[test]
    fn never_produced_lists_the_pieces_no_text_yields() {
        let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nstraw\n##berry\nberry\n";
        let tok = Tokenizer::from_vocab_txt(vocab).unwrap();
        // "strawberry" is straw + ##berry; nothing yields "berry" alone. The bracketed
        // specials are the file's added tokens, not learned pieces.
        assert_eq!(tok.never_produced(["strawberry kiwi", ""]).unwrap(), vec![7]);
        assert_eq!(tok.never_produced([]).unwrap(), vec![5, 6, 7]);
    }
}
