//! A byte-level training result as a Hugging Face `tokenizer.json`, shaped like GPT-2's:
//! `ByteLevel` pre-tokenizer (GPT-2's regex, no prefix space) and decoder, and a `BPE` model
//! whose vocabulary and merges spell bytes with GPT-2's byte-to-char table.

use serde_json::{json, Map, Value};

use super::{Mode, Trainer};
use crate::pre_tokenizers::byte_level::alphabet::byte_level_encode;
use crate::tokenizer::bpe::BpeTokenizer;
use crate::{Error, Result};

/// The `tokenizer.json` text; ids are the symbol ids (bytes 0..=255 first, then one per new
/// merged string, in merge order).
pub fn tokenizer_json(t: &Trainer) -> Result<String> {
    if t.mode() != Mode::ByteLevel {
        return Err(Error::Input(
            "only a byte-level training result can be exported as tokenizer.json".into(),
        ));
    }
    let mut vocab = Map::new();
    for (id, s) in t.symbols().iter().enumerate() {
        vocab.insert(byte_level_encode(s), json!(id));
    }
    let merges: Vec<Value> = t
        .merges()
        .iter()
        .map(|m| {
            json!([
                byte_level_encode(&t.symbols()[m.left as usize]),
                byte_level_encode(&t.symbols()[m.right as usize])
            ])
        })
        .collect();
    let byte_level =
        json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true});
    let root = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": byte_level,
        "post_processor": null,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": null,
            "unk_token": null,
            "continuing_subword_prefix": null,
            "end_of_word_suffix": null,
            "fuse_unk": false,
            "byte_fallback": false,
            "ignore_merges": false,
            "vocab": Value::Object(vocab),
            "merges": merges,
        }
    });
    serde_json::to_string(&root).map_err(|e| Error::Json(e.to_string()))
}

/// The trained tokenizer, ready to encode.
pub fn tokenizer(t: &Trainer) -> Result<BpeTokenizer> {
    Ok(BpeTokenizer::from_hf_json(&tokenizer_json(t)?)?.with_name("trained"))
}
