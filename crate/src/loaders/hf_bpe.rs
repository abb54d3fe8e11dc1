//! The parts of a Hugging Face `tokenizer.json` a byte-level BPE tokenizer needs, with a
//! clear error for every setting that would change the ids and is not implemented.
//!
//! Supported shapes (GPT-2, Qwen2/2.5/3, and the many models built the same way):
//! - normalizer: none, or NFC;
//! - pre_tokenizer: `ByteLevel` with `use_regex` (GPT-2's pattern), or a `Sequence` of a
//!   `Split` on a known pattern (behavior `Isolated`) and a `ByteLevel` without regex;
//! - model: `BPE` without dropout, subword prefix/suffix or byte fallback;
//! - post_processor: any the reference reads (the `tokenizer.json` loader's parser);
//! - decoder: anything byte-level.

use std::collections::HashMap;

use serde_json::Value;

use crate::pre_tokenizers::byte_level::Pattern;
use crate::processors::PostProcessor;
use crate::tokenizer::added::AddedToken;
use crate::{Error, Result};

pub(crate) struct HfBpe {
    pub name: String,
    pub vocab: HashMap<String, u32>,
    pub merges: Vec<(String, String)>,
    pub added: Vec<AddedToken>,
    pub pattern: Pattern,
    pub nfc: bool,
    pub add_prefix_space: bool,
    pub ignore_merges: bool,
    /// What `add_special_tokens` does to an encoded text (special tokens, trimmed offsets).
    pub post_processor: Option<PostProcessor>,
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::Unsupported(format!("BpeTokenizer: {what}"))
}

fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

fn flag(v: &Value, key: &str, default: bool) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(default)
}

pub(crate) fn parse(json: &str) -> Result<HfBpe> {
    let crate::loaders::json::TokenizerJson { root, vocab, merges } = crate::loaders::json::parse(json)?;
    let model = root.get("model").ok_or_else(|| Error::Json("no \"model\"".into()))?;
    if !matches!(type_of(model), "BPE" | "") || model.get("merges").is_none() {
        return Err(unsupported(format!("model: the model is {:?}, not BPE", type_of(model))));
    }
    if model.get("dropout").and_then(Value::as_f64).is_some_and(|p| p > 0.0) {
        return Err(unsupported("model.dropout: BPE dropout (random merges)"));
    }
    for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
        if model.get(key).and_then(Value::as_str).is_some_and(|s| !s.is_empty()) {
            return Err(unsupported(format!("model.{key}: BPE {key}")));
        }
    }
    if flag(model, "byte_fallback", false) {
        return Err(unsupported("model.byte_fallback: a SentencePiece-style model, not byte-level"));
    }
    // Settings that change what an encode returns and that this tokenizer does not apply.
    for key in ["truncation", "padding"] {
        if root.get(key).is_some_and(|v| !v.is_null()) {
            return Err(unsupported(format!("{key}: {key} set in the file")));
        }
    }
    match root.get("decoder") {
        None | Some(Value::Null) => {}
        Some(d) if type_of(d) == "ByteLevel" => {}
        Some(d) => return Err(unsupported(format!("decoder: {:?} (decoding is byte-level)", type_of(d)))),
    }
    let vocab = match vocab {
        Some(v) => v.ids("model.vocab")?,
        None => return Err(Error::Json("model.vocab is missing".into())),
    };
    let merges = match merges {
        Some(m) => m.pairs("model.merges")?,
        None => return Err(Error::Json("model.merges is missing".into())),
    };

    let nfc = match root.get("normalizer") {
        None | Some(Value::Null) => false,
        Some(n) if type_of(n) == "NFC" => true,
        Some(n) if type_of(n) == "Sequence" => {
            let steps = n.get("normalizers").and_then(Value::as_array).cloned().unwrap_or_default();
            match steps.iter().map(type_of).collect::<Vec<_>>().as_slice() {
                [] => false,
                ["NFC"] => true,
                other => return Err(unsupported(format!("normalizer.normalizers: sequence {other:?}"))),
            }
        }
        Some(n) => return Err(unsupported(format!("normalizer: {:?}", type_of(n)))),
    };

    let (pattern, add_prefix_space) = pre_tokenizer(root.get("pre_tokenizer").unwrap_or(&Value::Null))?;

    let post_processor = match root.get("post_processor") {
        None | Some(Value::Null) => None,
        Some(p) => {
            Some(crate::loaders::tokenizer_json::parse_post_processor(p, "post_processor").map_err(|e| {
                match e {
                    Error::Unsupported(m) => unsupported(m),
                    other => other,
                }
            })?)
        }
    };

    let mut added = Vec::new();
    for (i, t) in root.get("added_tokens").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let content = t
            .get("content")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Json("added token without content".into()))?;
        let id = t
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::Json(format!("added token {content:?} without id")))?;
        // Not `as u32`: 2**32 + 5 would silently become id 5.
        let id = u32::try_from(id)
            .map_err(|_| Error::Json(format!("added token {content:?}: id {id} does not fit in 32 bits")))?;
        for key in ["lstrip", "rstrip", "single_word"] {
            if flag(t, key, false) {
                return Err(unsupported(format!(
                    "added_tokens[{i}].{key}: added token {content:?} with {key}"
                )));
            }
        }
        let special = flag(t, "special", false);
        // A "normalized" token is matched in normalized text; with no normalizer that is the
        // raw text, which is where we match.
        if flag(t, "normalized", !special) && nfc {
            return Err(unsupported(format!(
                "added_tokens[{i}].normalized: added token {content:?} matched after normalization"
            )));
        }
        added.push(AddedToken::new(content, id, special));
    }

    Ok(HfBpe {
        name: "tokenizer.json".to_string(),
        vocab,
        merges,
        added,
        pattern,
        nfc,
        add_prefix_space,
        ignore_merges: flag(model, "ignore_merges", false),
        post_processor,
    })
}

/// (pattern, add_prefix_space) from the pre-tokenizer.
fn pre_tokenizer(p: &Value) -> Result<(Pattern, bool)> {
    match type_of(p) {
        "ByteLevel" => {
            if !flag(p, "use_regex", true) {
                return Err(unsupported(
                    "pre_tokenizer.use_regex: a ByteLevel pre-tokenizer without a split pattern",
                ));
            }
            Ok((Pattern::Gpt2, flag(p, "add_prefix_space", true)))
        }
        "Sequence" => {
            let steps = p.get("pretokenizers").and_then(Value::as_array).cloned().unwrap_or_default();
            let [split, bl] = steps.as_slice() else {
                let kinds: Vec<&str> = steps.iter().map(type_of).collect();
                return Err(unsupported(format!(
                    "pre_tokenizer.pretokenizers: a sequence {kinds:?}, not [Split, ByteLevel]"
                )));
            };
            if type_of(split) != "Split" || type_of(bl) != "ByteLevel" {
                return Err(unsupported(format!(
                    "pre_tokenizer.pretokenizers: a sequence [{:?}, {:?}], not [Split, ByteLevel]",
                    type_of(split),
                    type_of(bl)
                )));
            }
            if flag(bl, "use_regex", true) || flag(bl, "add_prefix_space", true) {
                return Err(unsupported(
                    "pre_tokenizer.pretokenizers[1]: a ByteLevel step with its own regex or prefix space after a Split",
                ));
            }
            let regex =
                split.get("pattern").and_then(|v| v.get("Regex")).and_then(Value::as_str).ok_or_else(
                    || {
                        unsupported(
                            "pre_tokenizer.pretokenizers[0].pattern: a Split on a string instead of a regex",
                        )
                    },
                )?;
            if split.get("behavior").and_then(Value::as_str) != Some("Isolated")
                || flag(split, "invert", false)
            {
                return Err(unsupported(
                    "pre_tokenizer.pretokenizers[0].behavior: a Split whose behavior is not Isolated",
                ));
            }
            let pattern = Pattern::from_regex(regex).ok_or_else(|| {
                unsupported(format!("pre_tokenizer.pretokenizers[0].pattern: the split pattern {regex:?}"))
            })?;
            Ok((pattern, false))
        }
        other => Err(unsupported(format!("pre_tokenizer: {other:?}"))),
    }
}
