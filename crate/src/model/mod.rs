//! Models: how a word becomes tokens.

pub mod trie;
pub mod vocab_index;
pub mod word_cache;
pub mod wordpiece;
