//! The byte-level BPE pre-tokenizers: the split patterns of GPT-2, cl100k, o200k and Qwen,
//! matched by hand (no regex engine), over a table of character classes.

pub mod alphabet;
pub mod classes;
pub mod pattern;
#[cfg(feature = "general")]
mod pre_tokenizer;
pub(crate) mod scan;
pub(crate) mod spans;

pub use pattern::Pattern;
#[cfg(feature = "general")]
pub use pre_tokenizer::ByteLevel;
