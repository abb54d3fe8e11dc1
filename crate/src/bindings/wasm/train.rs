//! `WasmTrainer`: BPE training for the page (the `wasm-bpe` module).

use wasm_bindgen::prelude::*;

use super::to_js_error;

/// BPE training ([`crate::train::Trainer`]) for the page, in the `wasm-bpe` module with
/// [`super::bpe::WasmBpeTokenizer`]: one batch of merges per call, so that the page can draw between
/// batches (live progress) and stop by not calling again (cancel).
#[wasm_bindgen]
pub struct WasmTrainer {
    inner: crate::train::Trainer,
}

#[wasm_bindgen]
impl WasmTrainer {
    /// Counts the words of `text`; `byte_level` false is the textbook chapter's algorithm.
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str, vocab_size: usize, byte_level: bool) -> Result<WasmTrainer, JsError> {
        use crate::train::{Config, Mode};
        let mode = if byte_level { Mode::ByteLevel } else { Mode::Chapter };
        let inner = crate::train::Trainer::new(&[text], &Config { mode, vocab_size, min_frequency: 0 })
            .map_err(to_js_error)?;
        Ok(WasmTrainer { inner })
    }

    /// Makes up to `max_merges` merges; returns them as JSON `[[left, right, count, new], ...]`
    /// (an empty list when training is over).
    pub fn step(&mut self, max_merges: usize) -> String {
        let mut out = Vec::new();
        for _ in 0..max_merges {
            let Some(m) = self.inner.step() else { break };
            out.push(serde_json::json!([self.spell(m.left), self.spell(m.right), m.count, self.spell(m.id)]));
        }
        serde_json::Value::Array(out).to_string()
    }

    pub fn finished(&self) -> bool {
        self.inner.is_finished()
    }

    #[wasm_bindgen(js_name = mergeCount)]
    pub fn merge_count(&self) -> usize {
        self.inner.merges().len()
    }

    #[wasm_bindgen(js_name = initialVocabSize)]
    pub fn initial_vocab_size(&self) -> usize {
        self.inner.initial_len()
    }

    /// The chapter's `tokenize(word)` with the merges so far, as a JSON list of strings.
    pub fn tokenize(&self, word: &str) -> String {
        let parts: Vec<String> =
            self.inner.tokenize_bytes(word).iter().map(|b| self.spell_bytes(b)).collect();
        serde_json::to_string(&parts).unwrap_or_default()
    }

    /// A byte-level result as a Hugging Face tokenizer.json.
    #[wasm_bindgen(js_name = tokenizerJson)]
    pub fn tokenizer_json(&self) -> Result<String, JsError> {
        crate::train::export::tokenizer_json(&self.inner).map_err(to_js_error)
    }

    fn spell(&self, id: u32) -> String {
        self.spell_bytes(&self.inner.symbols()[id as usize])
    }

    fn spell_bytes(&self, b: &[u8]) -> String {
        match self.inner.mode() {
            crate::train::Mode::Chapter => String::from_utf8_lossy(b).into_owned(),
            crate::train::Mode::ByteLevel => {
                crate::pre_tokenizers::byte_level::alphabet::byte_level_encode(b)
            }
        }
    }
}
