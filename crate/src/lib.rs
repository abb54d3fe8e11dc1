//! tokenprism: a tokenizer you can see through.
//!
//! One core, built natively (the `python` feature: pyo3) and for the browser (the `wasm`
//! feature: wasm-bindgen). The folders are the pipeline, as in Hugging Face `tokenizers`:
//! added tokens ([`tokenizer::added`]) → [`normalizers`] → [`pre_tokenizers`] → [`models`] →
//! [`processors`], and [`decoders`] back to text; [`tokenizer`] runs them, [`fused`] holds the
//! fast paths that replace a known chain of them, [`loaders`] reads tokenizer files, and
//! [`Tokenizer::trace`] returns every stage of one run for the page.

pub mod clock;
pub(crate) mod cost;
pub mod decoders;
pub mod error;
pub mod fused;
pub mod loaders;
pub mod models;
pub mod normalizers;
pub mod pre_tokenizers;
pub mod processors;
#[cfg(feature = "general")]
pub mod regex;
pub mod simd;
pub mod tokenizer;
pub mod train;
pub mod unicode;

mod bindings;
#[cfg(test)]
mod testing;

pub use error::{Error, Result};
pub use tokenizer::bpe::BpeTokenizer;
pub use tokenizer::{Encoding, Tokenizer, Trace};
