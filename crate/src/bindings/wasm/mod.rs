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

/// The one input on which [`WasmTokenizer::trace`] panics, for the page's crash-recovery test:
/// NUL-delimited, so no one types or pastes it by accident (the page sends it as is).
pub const PANIC_TEST_INPUT: &str = "\u{0}tokenprism: panic test\u{0}";

thread_local! {
    /// The input buffer: text the page wrote into wasm memory itself (see [`input_buffer`]).
    static INPUT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Makes the input buffer at least `capacity` bytes long and returns its address in wasm
/// memory, for the page to write UTF-8 into with `TextEncoder.encodeInto` (web/wasm-text.js);
/// the `...Input(start, len)` methods then read `len` bytes from `start`.
///
/// Why: wasm-bindgen passes a `&str` by copying it in a JavaScript loop, one `charCodeAt` per
/// char, until the first non-ASCII char. That loop runs at ~100-150 MB/s in V8, slower than
/// the normalizer it feeds; `encodeInto` copies ASCII at GB/s. The address stays valid until
/// the next call with a larger capacity (which may move the buffer and grow the memory).
#[wasm_bindgen(js_name = inputBuffer)]
pub fn input_buffer(capacity: usize) -> *mut u8 {
    INPUT.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() < capacity {
            b.resize(capacity, 0);
        }
        b.as_mut_ptr()
    })
}

/// Runs `f` on `len` bytes of the input buffer from `start`, as text (a range past the buffer
/// is an error).
///
/// The caller's contract: those bytes were written by `TextEncoder.encodeInto`, so they are
/// UTF-8 (it writes whole chars only, and a lone surrogate as U+FFFD).
fn with_input<R>(start: usize, len: usize, f: impl FnOnce(&str) -> R) -> Result<R, JsError> {
    INPUT.with(|b| {
        let b = b.borrow();
        let bytes = b
            .get(start..start.saturating_add(len))
            .ok_or_else(|| JsError::new("input range past the input buffer"))?;
        // SAFETY: the bytes are UTF-8 by the caller's contract above. It is the contract of
        // every `&str` parameter of this binding: wasm-bindgen's glue writes the string with
        // encodeInto and its ABI transmutes the bytes to `str` unchecked (convert/slices.rs,
        // `RefFromWasmAbi for str`); JavaScript can write any byte of the module's memory, so
        // the module trusts its glue either way. Checking here cost 8% of o200k's encode on
        // Russian in V8 (`from_utf8` on every call).
        let text = unsafe { std::str::from_utf8_unchecked(bytes) };
        Ok(f(text))
    })
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
    ///
    /// [`PANIC_TEST_INPUT`] (and only it) panics instead: the page's test of its crash
    /// recovery needs a real panic, which under panic=abort is a wasm trap.
    pub fn trace(&self, text: &str) -> Result<String, JsError> {
        if text == PANIC_TEST_INPUT {
            panic!("tokenprism: the panic test input");
        }
        let trace = self.inner.trace(text);
        serde_json::to_string(&trace).map_err(to_js_error)
    }

    /// Just the ids of `text` (no offsets, tokens or JSON), as a `Uint32Array`: what the
    /// benchmark times, so that it measures the tokenizer and not the trace's serialization.
    #[wasm_bindgen(js_name = encodeIds)]
    pub fn encode_ids(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>, JsError> {
        self.inner.encode_ids(text, add_special_tokens).map_err(to_js_error)
    }

    /// The normalizer alone (with the enabled fast paths); returns the UTF-8 length of the
    /// normalized text only, so the benchmark times normalizing, not copying it back to JS.
    #[wasm_bindgen(js_name = normalizeLen)]
    pub fn normalize_len(&self, text: &str) -> usize {
        self.inner.normalize_str(text, None).len()
    }

    /// [`WasmTokenizer::encode_ids`] of `len` bytes of the input buffer from `start`.
    #[wasm_bindgen(js_name = encodeIdsInput)]
    pub fn encode_ids_input(
        &self,
        start: usize,
        len: usize,
        add_special_tokens: bool,
    ) -> Result<Vec<u32>, JsError> {
        with_input(start, len, |text| self.inner.encode_ids(text, add_special_tokens))?.map_err(to_js_error)
    }

    /// [`WasmTokenizer::normalize_len`] of `len` bytes of the input buffer from `start`.
    #[wasm_bindgen(js_name = normalizeLenInput)]
    pub fn normalize_len_input(&self, start: usize, len: usize) -> Result<usize, JsError> {
        with_input(start, len, |text| self.inner.normalize_str(text, None).len())
    }

    /// The normalizer alone; the normalized text (for checking it, not for timing).
    pub fn normalize(&self, text: &str) -> String {
        self.inner.normalize_str(text, None).into_owned()
    }

    /// Switches the fast paths on or off (the page's toggles); results never change.
    #[wasm_bindgen(js_name = setFastPaths)]
    pub fn set_fast_paths(&mut self, simd: bool, page_cache: bool, lazy_output: bool, fused: bool) {
        self.inner.fast = crate::fused::FastPaths { simd, page_cache, lazy_output, fused };
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
        let cfg = crate::normalizers::BertNormalizerConfig {
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

/// A byte-level BPE tokenizer (GPT-2, cl100k, o200k, Qwen3) for the page.
///
/// Behind the `wasm-bpe` feature: BPE's code and Unicode 16 class tables add ~65 KB gzip, which
/// would push the core the page loads first past its 250 KB budget; it is meant to be a second
/// module, loaded when a BPE tokenizer is picked.
#[cfg(feature = "wasm-bpe")]
#[wasm_bindgen]
pub struct WasmBpeTokenizer {
    inner: crate::tokenizer::bpe::BpeTokenizer,
}

#[cfg(feature = "wasm-bpe")]
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

    /// Encodes `text` with every special token allowed (a typed `<|endoftext|>` is one token)
    /// or none (`specials` false: their text is ordinary text); the trace as JSON.
    pub fn trace(&self, text: &str, specials: bool) -> Result<String, JsError> {
        use crate::tokenizer::bpe::Allowed;
        let (allowed, disallowed) =
            if specials { (Allowed::All, Allowed::none()) } else { (Allowed::none(), Allowed::none()) };
        let trace = self.inner.trace(text, &allowed, &disallowed).map_err(to_js_error)?;
        serde_json::to_string(&trace).map_err(to_js_error)
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
        serde_json::to_string(&parts).map_err(to_js_error)
    }
}

/// BPE training for the page (in the `wasm-bpe` module, with [`WasmBpeTokenizer`]) ([`crate::train::Trainer`]), one batch of merges per call so the
/// page can draw between batches (live progress) and stop by not calling again (cancel).
#[cfg(feature = "wasm-bpe")]
#[wasm_bindgen]
pub struct WasmTrainer {
    inner: crate::train::Trainer,
}

#[cfg(feature = "wasm-bpe")]
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
