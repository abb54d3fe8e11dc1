//! Loaders: tokenizer files read into the pipeline's components.

pub mod hf_bpe;
pub(crate) mod json;
pub mod tekken;
pub mod tiktoken;
pub mod tokenizer_json;
