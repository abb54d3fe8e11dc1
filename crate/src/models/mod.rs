//! Models: how a word becomes tokens.

pub mod bpe;
#[cfg(feature = "general")]
pub mod unigram;
pub mod wordpiece;
