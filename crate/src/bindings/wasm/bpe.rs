//! `WasmBpeTokenizer`: byte-level BPE for the page (the `wasm-bpe` module).

use wasm_bindgen::prelude::*;

use super::{to_js_error, to_json, with_input};

/// A byte-level BPE tokenizer (GPT-2, cl100k, o200k, Qwen3) for the page.
///
/// Behind the `wasm-bpe` feature: BPE's code and Unicode 16 class tables add ~65 KB gzip,
/// which would push the core the page loads first past its 256 KB budget; so they are a
/// second module, loaded when a BPE tokenizer is picked.
#[wasm_bindgen]
pub struct WasmBpeTokenizer {
    inner: crate::tokenizer::bpe::BpeTokenizer,
}

#[wasm_bindgen]
impl WasmBpeTokenizer {
    /// Loads a byte-level BPE `tokenizer.json` (GPT-2, Qwen3).
    #[wasm_bindgen(constructor)]
    pub fn new(json: &str) -> Result<WasmBpeTokenizer, JsError> {
        let inner = crate::tokenizer::bpe::BpeTokenizer::from_hf_json(json).map_err(to_js_error)?;
        Ok(WasmBpeTokenizer { inner })
    }

    /// Loads a `.tiktoken` rank file; `name` (gpt2, r50k_base, p50k_base, cl100k_base,
    /// o200k_base, o200k_harmony) picks the pattern and special tokens.
    #[wasm_bindgen(js_name = fromTiktoken)]
    pub fn from_tiktoken(name: &str, data: &[u8]) -> Result<WasmBpeTokenizer, JsError> {
        let inner =
            crate::tokenizer::bpe::BpeTokenizer::from_tiktoken_named(name, data).map_err(to_js_error)?;
        Ok(WasmBpeTokenizer { inner })
    }

    /// Encodes `text` with special tokens off (a typed `<|endoftext|>` is ordinary text); the
    /// trace as JSON.
    pub fn trace(&self, text: &str) -> Result<String, JsError> {
        use crate::tokenizer::bpe::Allowed;
        let trace = self.inner.trace(text, &Allowed::none(), &Allowed::none()).map_err(to_js_error)?;
        to_json(&trace)
    }

    /// The ids of `text` with special tokens off (tiktoken's `encode_ordinary`), as a
    /// `Uint32Array`: what the benchmark times.
    #[wasm_bindgen(js_name = encodeOrdinary)]
    pub fn encode_ordinary(&self, text: &str) -> Vec<u32> {
        self.inner.encode_ordinary(text)
    }

    /// [`WasmBpeTokenizer::encode_ordinary`] of `len` bytes of the input buffer from `start`.
    #[wasm_bindgen(js_name = encodeOrdinaryInput)]
    pub fn encode_ordinary_input(&self, start: usize, len: usize) -> Result<Vec<u32>, JsError> {
        with_input(start, len, |text| self.inner.encode_ordinary(text))
    }

    /// A chat (`[{"role": ..., "content": ...}]` as JSON) through the tokenizer's template:
    /// the marker and text pieces with their ids, as JSON.
    #[wasm_bindgen(js_name = chatParts)]
    pub fn chat_parts(&self, messages_json: &str, add_generation_prompt: bool) -> Result<String, JsError> {
        use crate::tokenizer::chat::{ChatTemplate, Message};
        #[derive(serde::Deserialize)]
        struct Msg {
            role: String,
            content: String,
        }
        let msgs: Vec<Msg> = serde_json::from_str(messages_json).map_err(to_js_error)?;
        let msgs: Vec<Message<'_>> =
            msgs.iter().map(|m| Message { role: &m.role, content: &m.content }).collect();
        let template = ChatTemplate::for_tokenizer(&self.inner).map_err(to_js_error)?;
        let parts = template.encode(&self.inner, &msgs, add_generation_prompt).map_err(to_js_error)?;
        to_json(&parts)
    }
}
