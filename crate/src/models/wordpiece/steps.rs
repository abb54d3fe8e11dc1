//! One word's longest-match-first search laid open: every substring WordPiece looks up, in
//! order (the page's WordPiece model step).
//!
//! Written as plainly as the reference's loop, over the vocabulary map rather than the tries,
//! so that it doubles as an oracle for [`WordPiece::tokenize`]: the model's tokens are the
//! matches, or the unk token alone.

use serde::Serialize;

use super::WordPiece;

/// One lookup: the word's chars `start..end` (with the continuing prefix when `start > 0`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attempt {
    pub start: u32,
    pub end: u32,
    /// The key looked up.
    pub piece: String,
    /// Its id when the vocabulary has it (the match at `start`), else none (a miss).
    pub id: Option<u32>,
}

/// The search for one word.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WordPieceSteps {
    /// The word's length in chars.
    pub chars: u32,
    /// More chars than `max_input_chars_per_word`: the unk token, nothing looked up.
    pub too_long: bool,
    /// Some position had no match: the word is the unk token.
    pub unk: bool,
    /// The lookups in order: at each start, from the longest substring down to the match.
    pub attempts: Vec<Attempt>,
    /// The attempts stopped after `max_attempts`.
    pub truncated: bool,
    /// The unk token, the whole word's token when `unk`.
    pub unk_id: u32,
    pub unk_token: String,
}

impl WordPiece {
    /// The lookups of the longest-match-first search on `word` (a pre-token, as the pipeline
    /// hands it to the model), the first `max_attempts` of them.
    pub fn steps(&self, word: &str, max_attempts: usize) -> WordPieceSteps {
        // Char boundaries as byte offsets, the word's end included.
        let at: Vec<usize> = word.char_indices().map(|(b, _)| b).chain([word.len()]).collect();
        let chars = at.len() - 1;
        let too_long = chars > self.max_input_chars_per_word;
        let mut attempts = Vec::new();
        let mut truncated = false;
        let mut unk = false;
        let mut start = 0;
        while !too_long && start < chars {
            let mut matched = None;
            for end in (start + 1..=chars).rev() {
                let text = &word[at[start]..at[end]];
                let piece = if start > 0 {
                    format!("{}{text}", self.continuing_subword_prefix)
                } else {
                    text.to_owned()
                };
                let id = self.vocab.get(&piece).copied();
                if attempts.len() < max_attempts {
                    attempts.push(Attempt { start: start as u32, end: end as u32, piece, id });
                } else {
                    truncated = true;
                }
                if id.is_some() {
                    matched = Some(end);
                    break;
                }
            }
            match matched {
                Some(end) => start = end,
                None => {
                    unk = true;
                    break;
                }
            }
        }
        WordPieceSteps {
            chars: chars as u32,
            too_long,
            unk: unk || too_long,
            attempts,
            truncated,
            unk_id: self.unk_id,
            unk_token: self.unk_token.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn model(keys: &[&str], max_chars: usize) -> WordPiece {
        let vocab: HashMap<String, u32> =
            keys.iter().enumerate().map(|(i, k)| (k.to_string(), i as u32)).collect();
        WordPiece::new(vocab, "[UNK]", "##", max_chars).unwrap()
    }

    fn keys(s: &WordPieceSteps) -> Vec<(&str, bool)> {
        s.attempts.iter().map(|a| (a.piece.as_str(), a.id.is_some())).collect()
    }

    #[test]
    fn tries_longest_first_with_the_prefix_on_continuations() {
        let m = model(&["[UNK]", "un", "##aff", "##able", "##a"], 100);
        let s = m.steps("unaffable", 1000);
        assert_eq!(&keys(&s)[..2], [("unaffable", false), ("unaffabl", false)]);
        let hits: Vec<_> = s.attempts.iter().filter(|a| a.id.is_some()).map(|a| a.piece.as_str()).collect();
        assert_eq!(hits, ["un", "##aff", "##able"]);
        // Each start begins at the word's end: the longest candidate first.
        assert_eq!(
            (s.attempts[8].start, s.attempts[8].end, s.attempts[8].piece.as_str()),
            (2, 9, "##affable")
        );
        assert!(!s.unk && !s.too_long && !s.truncated);
    }

    #[test]
    fn a_position_without_a_match_makes_the_word_unk() {
        let m = model(&["[UNK]", "a", "##b"], 100);
        let s = m.steps("abc", 1000);
        assert_eq!(
            keys(&s),
            [("abc", false), ("ab", false), ("a", true), ("##bc", false), ("##b", true), ("##c", false)]
        );
        assert!(s.unk);
        assert_eq!((s.unk_id, s.unk_token.as_str()), (0, "[UNK]"));
    }

    #[test]
    fn too_long_words_try_nothing() {
        let m = model(&["[UNK]", "a", "##a"], 3);
        let s = m.steps("aaaa", 1000);
        assert!(s.too_long && s.unk && s.attempts.is_empty());
    }

    #[test]
    fn attempts_are_cut_after_the_cap() {
        let m = model(&["[UNK]", "a", "##a"], 100);
        let s = m.steps("aaaa", 5);
        assert!(s.truncated);
        assert_eq!(s.attempts.len(), 5);
    }

    #[test]
    fn matches_tokenize_on_random_words() {
        // The matches of the search are the model's tokens, multi-byte chars included.
        let alphabet = ["a", "b", "é", "東"];
        let mut vocab = vec!["[UNK]".to_string()];
        let mut r = crate::testing::Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..40 {
            let n = 1 + r.below(3);
            let k: String = (0..n).map(|_| r.pick(&alphabet)).collect();
            vocab.push(if r.below(2) == 0 { format!("##{k}") } else { k });
        }
        let refs: Vec<&str> = vocab.iter().map(String::as_str).collect();
        let m = model(&refs, 6);
        for _ in 0..500 {
            let word: String = (0..1 + r.below(8)).map(|_| r.pick(&alphabet)).collect();
            let s = m.steps(&word, usize::MAX);
            let mut out = Vec::new();
            m.tokenize(&word, &mut out);
            let want: Vec<u32> = out.iter().map(|t| t.id).collect();
            let got: Vec<u32> =
                if s.unk { vec![m.unk_id] } else { s.attempts.iter().filter_map(|a| a.id).collect() };
            assert_eq!(got, want, "{word}");
        }
    }
}
