//! WordPiece: greedy longest match from the left, `##` on continuations; a word with any
//! unmatched position, or longer than `max_input_chars_per_word`, becomes one unk token.

use super::vocab_index::{self, VocabIndex};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct WordPiece {
    pub vocab: HashMap<String, u32>,
    /// id -> token text, shared by every Encoding that names it (no allocation per token).
    pub vocab_r: Arc<Vec<Arc<str>>>,
    /// Whether `vocab_r[id]` is the one key with that id: then a token's text is found
    /// from its id. Otherwise (a file with repeated ids) it is rebuilt from the input.
    pub ids_name_tokens: bool,
    pub unk_token: Arc<str>,
    pub unk_id: u32,
    pub continuing_subword_prefix: String,
    pub max_input_chars_per_word: usize,
    /// Word-initial pieces.
    initial: VocabIndex,
    /// Continuation pieces, keyed without their prefix.
    continuation: VocabIndex,
}

/// One token of a word: its id and its char range within the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubToken {
    pub id: u32,
    pub char_start: usize,
    pub char_end: usize,
}

/// Reused buffers: (end byte, char count, running hash) of each prefix of a piece.
#[derive(Default, Debug)]
pub struct Scratch {
    prefixes: Vec<(u32, u32, u64)>,
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
        if max_id >= 1 << 24 && max_id > vocab.len() * 16 {
            return Err(Error::Invalid(format!("vocabulary ids are implausibly sparse (largest id {max_id} for {} tokens)", vocab.len())));
        }
        let empty: Arc<str> = Arc::from("");
        let mut vocab_r = vec![empty; max_id + 1];
        let mut seen = vec![false; max_id + 1];
        let mut ids_name_tokens = true;
        // Iterate in a fixed order so a repeated id resolves the same way every run.
        let mut sorted: Vec<(&String, &u32)> = vocab.iter().collect();
        sorted.sort();
        for (tok, &id) in sorted {
            if seen[id as usize] {
                ids_name_tokens = false;
            }
            seen[id as usize] = true;
            vocab_r[id as usize] = Arc::from(tok.as_str());
        }
        let initial = VocabIndex::new(vocab.iter().map(|(k, &v)| (k.as_bytes(), v)));
        let continuation = VocabIndex::new(
            vocab
                .iter()
                .filter_map(|(k, &v)| k.strip_prefix(continuing_subword_prefix).map(|rest| (rest.as_bytes(), v))),
        );
        Ok(WordPiece {
            unk_token: Arc::from(unk_token),
            vocab,
            vocab_r: Arc::new(vocab_r),
            ids_name_tokens,
            unk_id,
            continuing_subword_prefix: continuing_subword_prefix.to_owned(),
            max_input_chars_per_word,
            initial,
            continuation,
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

    /// Tokenizes one word of `n_chars` chars, appending to `out`; returns true when the whole
    /// word became the unk token.
    pub fn tokenize_word(&self, word: &str, n_chars: usize, scratch: &mut Scratch, out: &mut Vec<SubToken>) -> bool {
        if n_chars > self.max_input_chars_per_word {
            out.push(SubToken { id: self.unk_id, char_start: 0, char_end: n_chars });
            return true;
        }
        let bytes = word.as_bytes();
        // Most words are whole vocabulary entries: one hash over the word, one probe.
        if bytes.len() <= self.initial.max_len {
            if let Some(id) = self.initial.get(bytes) {
                out.push(SubToken { id, char_start: 0, char_end: n_chars });
                return false;
            }
        }
        let mark = out.len();
        let mut start = 0usize;
        let mut start_char = 0usize;
        while start < bytes.len() {
            let table = if start == 0 { &self.initial } else { &self.continuation };
            // Hash every prefix of the rest in one pass (up to the longest key), noting
            // those that end on a char boundary.
            let p = &mut scratch.prefixes;
            p.clear();
            let limit = bytes.len().min(start + table.max_len);
            let mut h = vocab_index::SEED;
            let mut chars = 0u32;
            for e in start..limit {
                h = vocab_index::step(h, bytes[e]);
                if e + 1 == bytes.len() || (bytes[e + 1] & 0xC0) != 0x80 {
                    chars += 1;
                    p.push((e as u32 + 1, chars, h));
                }
            }
            let found = p.iter().rev().find_map(|&(e, c, h)| {
                table.get_hashed(h, &bytes[start..e as usize]).map(|id| (id, e as usize, c as usize))
            });
            match found {
                Some((id, end, nc)) => {
                    out.push(SubToken { id, char_start: start_char, char_end: start_char + nc });
                    start = end;
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
    pub fn token_text(&self, word: &str, s: &SubToken) -> Arc<str> {
        if self.ids_name_tokens {
            return self.vocab_r[s.id as usize].clone();
        }
        let piece: String = word.chars().skip(s.char_start).take(s.char_end - s.char_start).collect();
        if s.char_start > 0 {
            Arc::from(format!("{}{}", self.continuing_subword_prefix, piece))
        } else {
            Arc::from(piece)
        }
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.vocab_r.get(id as usize).map(|s| &**s)
    }
}
