//! WordPiece: greedy longest match from the left, `##` on continuations; a word with any
//! unmatched position, or longer than `max_input_chars_per_word`, becomes one unk token.

use crate::error::{Error, Result};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct WordPiece {
    pub vocab: HashMap<String, u32>,
    /// id -> token, for decoding and for token strings.
    pub vocab_r: Vec<String>,
    pub unk_token: String,
    pub unk_id: u32,
    pub continuing_subword_prefix: String,
    pub max_input_chars_per_word: usize,
}

/// One token of a word: its id and its char range within the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubToken {
    pub id: u32,
    pub char_start: usize,
    pub char_end: usize,
}

impl WordPiece {
    pub fn new(
        vocab: HashMap<String, u32>,
        unk_token: &str,
        continuing_subword_prefix: &str,
        max_input_chars_per_word: usize,
    ) -> Result<Self> {
        if vocab.is_empty() {
            return Err(Error::Invalid("the WordPiece vocabulary is empty".into()));
        }
        let unk_id = *vocab.get(unk_token).ok_or_else(|| {
            Error::Invalid(format!("the unk token {unk_token:?} is not in the vocabulary"))
        })?;
        let max_id = *vocab.values().max().unwrap() as usize;
        let mut vocab_r = vec![String::new(); max_id + 1];
        for (tok, &id) in &vocab {
            vocab_r[id as usize] = tok.clone();
        }
        Ok(WordPiece {
            vocab,
            vocab_r,
            unk_token: unk_token.to_owned(),
            unk_id,
            continuing_subword_prefix: continuing_subword_prefix.to_owned(),
            max_input_chars_per_word,
        })
    }

    /// Parses a `vocab.txt`: one token per line, the id is the line number.
    pub fn parse_vocab_txt(s: &str) -> HashMap<String, u32> {
        let mut vocab = HashMap::new();
        for (i, line) in s.lines().enumerate() {
            // As the reference: trailing whitespace trimmed; a repeated line keeps its last id.
            vocab.insert(line.trim_end().to_owned(), i as u32);
        }
        vocab
    }

    /// Tokenizes one word, appending to `out`; returns true when the whole word became the
    /// unk token. `scratch` is a reused buffer.
    pub fn tokenize_word(&self, word: &str, n_chars: usize, scratch: &mut String, out: &mut Vec<SubToken>) -> bool {
        if n_chars > self.max_input_chars_per_word {
            out.push(SubToken { id: self.unk_id, char_start: 0, char_end: n_chars });
            return true;
        }
        let mark = out.len();
        let mut start = 0usize; // byte
        let mut start_char = 0usize;
        while start < word.len() {
            let rest = &word[start..];
            let mut end = rest.len();
            let mut found = None;
            while end > 0 {
                let piece = &rest[..end];
                let id = if start > 0 {
                    scratch.clear();
                    scratch.push_str(&self.continuing_subword_prefix);
                    scratch.push_str(piece);
                    self.vocab.get(scratch.as_str())
                } else {
                    self.vocab.get(piece)
                };
                if let Some(&id) = id {
                    found = Some((id, end));
                    break;
                }
                // Shrink by one char.
                end -= 1;
                while !rest.is_char_boundary(end) {
                    end -= 1;
                }
            }
            match found {
                Some((id, end)) => {
                    let nc = rest[..end].chars().count();
                    out.push(SubToken { id, char_start: start_char, char_end: start_char + nc });
                    start += end;
                    start_char += nc;
                }
                None => {
                    out.truncate(mark);
                    out.push(SubToken { id: self.unk_id, char_start: 0, char_end: n_chars });
                    return true;
                }
            }
        }
        false
    }

    /// The token text of a sub-token of `word`, as the reference reports it (the matched
    /// piece, with the continuation prefix when it doesn't start the word).
    pub fn token_text(&self, word: &str, s: &SubToken) -> String {
        let piece: String = word.chars().skip(s.char_start).take(s.char_end - s.char_start).collect();
        if s.char_start > 0 {
            format!("{}{}", self.continuing_subword_prefix, piece)
        } else {
            piece
        }
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.vocab_r.get(id as usize).map(|s| s.as_str())
    }
}
