//! Models: how a word becomes tokens.

pub mod wordpiece;
