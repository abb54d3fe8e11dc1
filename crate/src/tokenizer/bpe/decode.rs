//! Ids back to bytes and text: tiktoken's `decode_bytes`/`decode`, and the per-token text the
//! page shows.

use super::BpeTokenizer;
use crate::error::{Error, Result};

impl BpeTokenizer {
    /// The bytes of `ids`, concatenated; an unknown id is an error.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        self.decode_bytes_skipping(ids, false)
    }

    /// [`BpeTokenizer::decode_bytes`], leaving out special tokens when `skip_special`
    /// (`tokenizers`' `skip_special_tokens`).
    pub fn decode_bytes_skipping(&self, ids: &[u32], skip_special: bool) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let bytes = self.token_bytes(id).ok_or_else(|| unknown_id(id))?;
            if skip_special && self.added.by_id(id).is_some_and(|t| t.special) {
                continue;
            }
            out.extend_from_slice(bytes);
        }
        Ok(out)
    }

    /// `ids` as text, with U+FFFD for bytes that are not valid UTF-8 (tiktoken's
    /// `errors="replace"`).
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.decode_bytes(ids)?).into_owned())
    }

    /// The text each token completes: entry i holds the chars whose last byte is in token i,
    /// so a token that ends inside a UTF-8 char gives "" and the next one gives the whole char.
    /// The entries concatenate to [`BpeTokenizer::decode`]'s text: lossless whenever the bytes
    /// are valid UTF-8 (bytes that can never form a char become U+FFFD, as there).
    pub fn decode_pieces(&self, ids: &[u32]) -> Result<Vec<String>> {
        let mut out = Vec::with_capacity(ids.len());
        let mut pending: Vec<u8> = Vec::new();
        for &id in ids {
            pending.extend_from_slice(self.token_bytes(id).ok_or_else(|| unknown_id(id))?);
            let mut text = String::new();
            let mut rest: &[u8] = &pending;
            loop {
                match std::str::from_utf8(rest) {
                    Ok(s) => {
                        text.push_str(s);
                        rest = &[];
                        break;
                    }
                    Err(e) => {
                        let (good, bad) = rest.split_at(e.valid_up_to());
                        text.push_str(std::str::from_utf8(good).expect("checked valid"));
                        match e.error_len() {
                            Some(n) => {
                                text.push('\u{FFFD}');
                                rest = &bad[n..];
                            }
                            None => {
                                rest = bad; // a char cut short: wait for the next token
                                break;
                            }
                        }
                    }
                }
            }
            pending = rest.to_vec();
            out.push(text);
        }
        if !pending.is_empty() {
            if let Some(last) = out.last_mut() {
                last.push_str(&String::from_utf8_lossy(&pending));
            }
        }
        Ok(out)
    }
}

fn unknown_id(id: u32) -> Error {
    Error::Input(format!("token id {id} is not in the vocabulary"))
}
