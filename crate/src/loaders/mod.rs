//! Loaders: tokenizer files read into the pipeline's components.

pub mod hf_bpe;
pub(crate) mod json;
#[cfg(feature = "general")]
pub mod sentencepiece;
pub mod tekken;
pub mod tiktoken;
pub mod tokenizer_json;
