//! Models: how a word becomes tokens.

pub mod bpe;
pub mod wordpiece;
