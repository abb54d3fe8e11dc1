//! `WasmTokenizer`: the WordPiece pipeline for the page.

use wasm_bindgen::prelude::*;

use super::{to_js_error, to_json, with_input, with_input_bytes, PANIC_TEST_INPUT};
use crate::tokenizer::chunk::Cut;
use crate::tokenizer::documents::Documents;

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

    /// Loads a SentencePiece `.model` file (Unigram or BPE) from its bytes, as `sentencepiece`
    /// reads it.
    #[cfg(feature = "general")]
    #[wasm_bindgen(js_name = fromSentencePiece)]
    pub fn from_sentencepiece(data: &[u8]) -> Result<WasmTokenizer, JsError> {
        let inner = crate::loaders::sentencepiece::tokenizer_from_model(data).map_err(to_js_error)?;
        Ok(WasmTokenizer { inner })
    }

    /// Loads a `.tiktoken` rank file of the encoding `name` (`cl100k_base`, `o200k_harmony`, ...)
    /// from its bytes, as the general pipeline.
    #[cfg(feature = "general")]
    #[wasm_bindgen(js_name = fromTiktoken)]
    pub fn from_tiktoken(name: &str, data: &[u8]) -> Result<WasmTokenizer, JsError> {
        let inner = crate::loaders::tiktoken::tokenizer(name, data).map_err(to_js_error)?;
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
        let trace = self.inner.trace(text).map_err(to_js_error)?;
        to_json(&trace)
    }

    /// The Unigram lattice of one pre-token (`piece`, as the model gets it), its nodes cut
    /// after `max_nodes`, as JSON (`crate::models::unigram::Lattice`).
    #[cfg(feature = "general")]
    pub fn lattice(&self, piece: &str, max_nodes: usize) -> Result<String, JsError> {
        let lattice = self.inner.lattice(piece, max_nodes).map_err(to_js_error)?;
        to_json(&lattice)
    }

    /// How WordPiece searches one pre-token, its first `max_attempts` lookups, as numbers (the
    /// worker names them; JSON here would cost the module its serializer):
    /// `[chars, flags, unk id, n, (start, end, id) × n]`, offsets in chars, a miss's id
    /// `u32::MAX`; flags: 1 too long, 2 unk, 4 truncated.
    #[wasm_bindgen(js_name = wordpieceSteps)]
    pub fn wordpiece_steps(&self, piece: &str, max_attempts: usize) -> Result<Vec<u32>, JsError> {
        let s = self.inner.wordpiece_steps(piece, max_attempts).map_err(to_js_error)?;
        let flags = s.too_long as u32 | (s.unk as u32) << 1 | (s.truncated as u32) << 2;
        let mut out = vec![s.chars, flags, s.unk_id, s.attempts.len() as u32];
        for a in &s.attempts {
            out.extend([a.start, a.end, a.id.unwrap_or(u32::MAX)]);
        }
        Ok(out)
    }

    /// How BPE merges one pre-token, as numbers (the worker names them):
    /// `[whole token or u32::MAX, n, initial × n, s, (index, left, right, rank, merged) × s, k,
    /// ids × k]`.
    #[cfg(feature = "general")]
    #[wasm_bindgen(js_name = mergeTrace)]
    pub fn merge_trace(&self, piece: &str) -> Result<Vec<u32>, JsError> {
        let t = self.inner.merge_trace(piece).map_err(to_js_error)?;
        let mut out = vec![t.whole_token.unwrap_or(u32::MAX), t.initial.len() as u32];
        out.extend(&t.initial);
        out.push(t.steps.len() as u32);
        for s in &t.steps {
            out.extend([s.index as u32, s.left, s.right, s.rank, s.merged]);
        }
        out.push(t.ids.len() as u32);
        out.extend(&t.ids);
        Ok(out)
    }

    /// The token with id `id`, if any.
    #[wasm_bindgen(js_name = idToToken)]
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_owned)
    }

    /// The step times of `runs` traced runs of `text` (`Tokenizer::step_micros`), as a
    /// `Float64Array` of `runs` rows, one value per stage, then pre-tokenizer, model, whole run.
    #[wasm_bindgen(js_name = stepMicros)]
    pub fn step_micros(&self, text: &str, runs: u32) -> Result<Vec<f64>, JsError> {
        self.inner.step_micros(text, runs as usize).map_err(to_js_error)
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

    /// The documents in `len` bytes of the input buffer from `start` (a block of a file,
    /// written there as bytes), counted as `Tokenizer::count_documents` does with `docs`
    /// ("file", "line" or "blank-line"): `[documents, tokens, bytes used, invalid at or -1]`.
    #[wasm_bindgen(js_name = countDocumentsInput)]
    pub fn count_documents_input(
        &self,
        start: usize,
        len: usize,
        docs: &str,
        last: bool,
    ) -> Result<Vec<f64>, JsError> {
        let docs =
            Documents::parse(docs).ok_or_else(|| JsError::new(&format!("no documents mode {docs:?}")))?;
        let c = with_input_bytes(start, len, |block| self.inner.count_documents(block, docs, last))?
            .map_err(to_js_error)?;
        let invalid = c.invalid_at.map_or(-1.0, |at| at as f64);
        Ok(vec![c.documents as f64, c.tokens as f64, c.used as f64, invalid])
    }

    /// `text` in chunks of at most `max_tokens` tokens (`Tokenizer::chunk`), as a `Uint32Array`
    /// of four numbers a chunk: start and end in UTF-16 units (JavaScript's string indices),
    /// its token count, and where it ends (0 paragraph, 1 sentence, 2 token, 3 end of text).
    pub fn chunk(&self, text: &str, max_tokens: usize) -> Result<Vec<u32>, JsError> {
        let chunks = self.inner.chunk(text, max_tokens).map_err(to_js_error)?;
        let mut out = Vec::with_capacity(chunks.len() * 4);
        // The chunks are in text order: one walk turns their byte offsets into UTF-16 ones.
        let (mut byte, mut unit) = (0usize, 0u32);
        let mut units_at = |to: usize| {
            unit += text[byte..to].encode_utf16().count() as u32;
            byte = to;
            unit
        };
        for c in chunks {
            let start = units_at(c.start);
            let end = units_at(c.end);
            let cut = match c.cut {
                Cut::Paragraph => 0,
                Cut::Sentence => 1,
                Cut::Token => 2,
                Cut::End => 3,
            };
            out.extend([start, end, c.tokens as u32, cut]);
        }
        Ok(out)
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

    /// The vocabulary entries whose text does not encode back to them, as JSON: the vocabulary
    /// size, how many miss, and the first `limit` of them (id, token, text, the text's ids).
    #[wasm_bindgen(js_name = roundTripMisses)]
    pub fn round_trip_misses(&self, limit: usize) -> Result<String, JsError> {
        let misses = self.inner.round_trip_misses().map_err(to_js_error)?;
        let first = &misses[..misses.len().min(limit)];
        to_json(&serde_json::json!({
            "vocab_size": self.inner.vocab_size(),
            "count": misses.len(),
            "first": first,
        }))
    }

    /// The model's vocabulary entries that encoding each of `texts` never yields, as JSON:
    /// how many, and the `limit` with the longest text (longest first, then by id), each
    /// with its id, token and text.
    #[wasm_bindgen(js_name = neverProduced)]
    pub fn never_produced(&self, texts: Vec<String>, limit: usize) -> Result<String, JsError> {
        let ids = self.inner.never_produced(texts.iter().map(String::as_str)).map_err(to_js_error)?;
        // Longest first, then by id, as one sortable number each: (!chars << 32) | id.
        let mut order = Vec::with_capacity(ids.len());
        for &id in &ids {
            let chars = self.inner.decode(&[id], false).map_err(to_js_error)?.chars().count() as u32;
            order.push(((!chars as u64) << 32) | id as u64);
        }
        order.sort_unstable();
        let mut first = Vec::new();
        for key in order.into_iter().take(limit) {
            let id = key as u32;
            let text = self.inner.decode(&[id], false).map_err(to_js_error)?;
            first.push(serde_json::json!({"id": id, "token": self.inner.id_to_token(id), "text": text}));
        }
        to_json(&serde_json::json!({"count": ids.len(), "first": first}))
    }

    /// What the page needs to know about this tokenizer, as JSON: the BERT switches (null
    /// when the normalizer is something else), the fast paths, the model's type, the stages,
    /// the vocabulary size.
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
            "model": self.inner.model.type_name(),
            "wordpiece_prefix": match &self.inner.model {
                crate::models::Model::WordPiece(m) => Some(m.continuing_subword_prefix.as_str()),
                #[allow(unreachable_patterns)]
                _ => None,
            },
            "stages": self.inner.stage_names(),
            "vocab_size": self.inner.vocab_size(),
        });
        to_json(&info)
    }
}
