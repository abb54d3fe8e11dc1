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

/// The settings of a tokenizer.json's `ByteLevel` component, which the reference uses as a
/// pre-tokenizer (here, in the `general` build) and as a post-processor
/// ([`crate::processors::PostProcessor::ByteLevel`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteLevel {
    /// Put a space in front of each piece that does not start with one; after the model, keep
    /// the one leading space of a text's first token in its offsets.
    pub add_prefix_space: bool,
    /// Trim the spaces a token starts or ends with off its offsets (after the model only).
    pub trim_offsets: bool,
    /// Split each piece with GPT-2's pattern (before the model only).
    pub use_regex: bool,
}
