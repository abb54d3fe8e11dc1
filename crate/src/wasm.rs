//! The wasm-bindgen binding: a thin shell over [`crate::Tokenizer`] for the browser.
//!
//! Like the pyo3 binding, it exposes one coarse call, `trace`, so the page crosses the JS
//! boundary once per input change. The trace travels as a JSON string: the page's Python
//! (Pyodide) turns it into the same dict the native module returns, so the UI code runs
//! unchanged on both builds.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()` in milliseconds; `std::time::Instant` panics on
    /// wasm32-unknown-unknown, so `crate::clock` times stages with this instead.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;
}

#[wasm_bindgen]
pub struct WasmTokenizer {
    inner: crate::Tokenizer,
}

#[wasm_bindgen]
impl WasmTokenizer {
    /// Loads a tokenizer from the text of a `tokenizer.json` file.
    #[wasm_bindgen(constructor)]
    pub fn new(json: &str) -> Result<WasmTokenizer, JsError> {
        let inner = crate::Tokenizer::from_json_str(json).map_err(to_js_error)?;
        Ok(WasmTokenizer { inner })
    }

    /// Loads a BERT WordPiece tokenizer from the text of a `vocab.txt` file.
    #[wasm_bindgen(js_name = fromVocabTxt)]
    pub fn from_vocab_txt(vocab: &str) -> Result<WasmTokenizer, JsError> {
        let inner = crate::Tokenizer::from_vocab_txt(vocab).map_err(to_js_error)?;
        Ok(WasmTokenizer { inner })
    }

    /// Runs the whole pipeline on `text` and returns its trace as JSON.
    pub fn trace(&self, text: &str) -> Result<String, JsError> {
        let trace = self.inner.trace(text);
        serde_json::to_string(&trace).map_err(to_js_error)
    }
}

fn to_js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// A byte-level BPE tokenizer (GPT-2, cl100k, o200k, Qwen3) for the page.
///
/// Behind the `wasm-bpe` feature: BPE's code and Unicode 16 class tables add ~65 KB gzip, which
/// would push the core the page loads first past its 250 KB budget; it is meant to be a second
/// module, loaded when a BPE tokenizer is picked.
#[cfg(feature = "wasm-bpe")]
#[wasm_bindgen]
pub struct WasmBpeTokenizer {
    inner: crate::bpe::BpeTokenizer,
}

#[cfg(feature = "wasm-bpe")]
#[wasm_bindgen]
impl WasmBpeTokenizer {
    /// Loads a byte-level BPE `tokenizer.json` (GPT-2, Qwen3).
    #[wasm_bindgen(constructor)]
    pub fn new(json: &str) -> Result<WasmBpeTokenizer, JsError> {
        let inner = crate::bpe::BpeTokenizer::from_hf_json(json).map_err(to_js_error)?;
        Ok(WasmBpeTokenizer { inner })
    }

    /// Loads a `.tiktoken` rank file; `name` (gpt2, r50k_base, p50k_base, cl100k_base,
    /// o200k_base, o200k_harmony) picks the pattern and special tokens.
    #[wasm_bindgen(js_name = fromTiktoken)]
    pub fn from_tiktoken(name: &str, data: &[u8]) -> Result<WasmBpeTokenizer, JsError> {
        let inner = crate::bpe::BpeTokenizer::from_tiktoken_named(name, data).map_err(to_js_error)?;
        Ok(WasmBpeTokenizer { inner })
    }

    /// Encodes `text` with every special token allowed (a typed `<|endoftext|>` is one token)
    /// or none (`specials` false: their text is ordinary text); the trace as JSON.
    pub fn trace(&self, text: &str, specials: bool) -> Result<String, JsError> {
        use crate::bpe::Allowed;
        let (allowed, disallowed) = if specials { (Allowed::All, Allowed::none()) } else { (Allowed::none(), Allowed::none()) };
        let trace = self.inner.trace(text, &allowed, &disallowed).map_err(to_js_error)?;
        serde_json::to_string(&trace).map_err(to_js_error)
    }

    /// How one pre-token becomes ids, merge by merge, as JSON.
    #[wasm_bindgen(js_name = tracePiece)]
    pub fn trace_piece(&self, piece: &str) -> Result<String, JsError> {
        let tr = self.inner.trace_piece(piece.as_bytes()).map_err(to_js_error)?;
        serde_json::to_string(&tr).map_err(to_js_error)
    }

    /// A chat (`[{"role": ..., "content": ...}]` as JSON) through the tokenizer's template:
    /// the marker and text pieces with their ids, as JSON.
    #[wasm_bindgen(js_name = chatParts)]
    pub fn chat_parts(&self, messages_json: &str, add_generation_prompt: bool) -> Result<String, JsError> {
        use crate::bpe::chat::{ChatTemplate, Message};
        #[derive(serde::Deserialize)]
        struct Msg {
            role: String,
            content: String,
        }
        let msgs: Vec<Msg> = serde_json::from_str(messages_json).map_err(to_js_error)?;
        let msgs: Vec<Message<'_>> = msgs.iter().map(|m| Message { role: &m.role, content: &m.content }).collect();
        let template = ChatTemplate::for_tokenizer(&self.inner).map_err(to_js_error)?;
        let parts = template.encode(&self.inner, &msgs, add_generation_prompt).map_err(to_js_error)?;
        serde_json::to_string(&parts).map_err(to_js_error)
    }
}
