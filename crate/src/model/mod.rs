//! Models: how a word becomes tokens.

pub mod trie;
pub mod vocab_index;
pub mod wordpiece;
