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
