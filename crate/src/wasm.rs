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

    /// Switches the fast paths on or off (the page's toggles); results never change.
    #[wasm_bindgen(js_name = setFastPaths)]
    pub fn set_fast_paths(&mut self, simd: bool, page_cache: bool, lazy_output: bool, fused: bool) {
        self.inner.fast = crate::fast::FastPaths { simd, page_cache, lazy_output, fused };
    }

    /// Sets the BertNormalizer's four switches; fails when the normalizer is not one.
    #[wasm_bindgen(js_name = setNormalizerOptions)]
    pub fn set_normalizer_options(
        &mut self,
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
    ) -> Result<(), JsError> {
        let cfg = crate::normalizer::BertNormalizerConfig {
            clean_text,
            handle_chinese_chars,
            strip_accents: Some(strip_accents),
            lowercase,
        };
        self.inner.set_bert_options(cfg).map_err(to_js_error)
    }

    /// What the page needs to know about this tokenizer, as JSON: the BERT switches (null
    /// when the normalizer is something else), the fast paths, the vocabulary size.
    pub fn info(&self) -> Result<String, JsError> {
        let bert = self.inner.bert_options().map(|c| {
            serde_json::json!({
                "clean_text": c.clean_text,
                "handle_chinese_chars": c.handle_chinese_chars,
                "strip_accents": c.strips_accents(),
                "lowercase": c.lowercase,
            })
        });
        let info = serde_json::json!({
            "bert_normalizer": bert,
            "fast_paths": self.inner.fast,
            "stages": self.inner.stage_names(),
            "vocab_size": self.inner.vocab_size(),
        });
        serde_json::to_string(&info).map_err(to_js_error)
    }
}

fn to_js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}
