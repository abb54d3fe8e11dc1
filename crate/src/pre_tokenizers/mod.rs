//! Pre-tokenizers: how normalized text is split into words before the model sees it.

pub mod bert;
pub mod byte_level;

/// A word of the normalized text: its byte range and its char range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub byte_start: usize,
    pub byte_end: usize,
    pub char_start: usize,
    pub char_end: usize,
}

#[derive(Clone, Debug)]
pub enum PreTokenizer {
    Bert,
}

/// Splits `text` into words as `pre_tokenizer` does (with none: the whole text is one word).
pub fn pre_tokenize(pre_tokenizer: Option<&PreTokenizer>, text: &str, emit: impl FnMut(Piece)) {
    match pre_tokenizer {
        Some(PreTokenizer::Bert) => bert::split(text, emit),
        None => {
            let mut emit = emit;
            if !text.is_empty() {
                emit(Piece {
                    byte_start: 0,
                    byte_end: text.len(),
                    char_start: 0,
                    char_end: text.chars().count(),
                });
            }
        }
    }
}
