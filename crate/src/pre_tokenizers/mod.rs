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
