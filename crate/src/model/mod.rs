//! Models: how a word becomes tokens.

pub mod vocab_index;
pub mod wordpiece;
