//! tokenprism: a tokenizer you can see through.
//!
//! One core, built natively (the `python` feature: pyo3) and for the browser (the `wasm`
//! feature: wasm-bindgen). The pipeline mirrors Hugging Face `tokenizers`:
//! added tokens → [`normalizer`] → [`pretokenizer`] → [`model`] → post-processing, and
//! [`Tokenizer::trace`] returns every stage of one run for the page.

pub mod bpe;
pub mod clock;
pub mod config;
pub mod error;
pub mod fast;
pub mod model;
pub mod normalizer;
pub mod pretokenizer;
pub mod simd;
pub mod tokenizer;
pub mod train;
pub mod unicode;

#[cfg(feature = "python")]
mod python;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use error::{Error, Result};
pub use tokenizer::{Encoding, Tokenizer, Trace};
