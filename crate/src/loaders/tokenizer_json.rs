//! Reading Hugging Face `tokenizer.json` files and plain `vocab.txt` files.
//!
//! Every setting comes from the file. A component or option we don't implement is an
//! error that names it, never a silent fallback: a tokenizer that quietly differs from the
//! one a model was trained with is worse than one that refuses to load.

use crate::error::{Error, Result};
use crate::loaders::json::{self, kind, shown, MergesJson, VocabJson};
#[cfg(feature = "general")]
use crate::models::bpe::general::{Bpe, BpeOptions};
#[cfg(feature = "general")]
use crate::models::wordlevel::WordLevel;
use crate::models::wordpiece::WordPiece;
use crate::models::Model;
use crate::normalizers::BertNormalizerConfig;
use crate::pre_tokenizers::byte_level::ByteLevel;
#[cfg(feature = "general")]
use crate::pre_tokenizers::{
    metaspace::{Metaspace, PrependScheme},
    split::{Split, SplitDelimiterBehavior, SplitPattern},
};
use crate::tokenizer::{
    AddedToken, Decoder, Direction, Normalizer, Padding, PaddingStrategy, PostProcessor, PreTokenizer,
    SpecialTokenDef, TemplatePiece, Tokenizer, Truncation, TruncationStrategy,
};
use crate::unicode::forms::Form;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

type Obj = Map<String, Value>;

fn obj<'a>(v: &'a Value, what: &str) -> Result<&'a Obj> {
    v.as_object().ok_or_else(|| Error::Json(format!("{what} must be an object, found {}", kind(v))))
}

fn get_str<'a>(o: &'a Obj, key: &str, what: &str) -> Result<&'a str> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(Error::Json(format!("{what}.{key} must be a string, found {}", kind(v)))),
        None => Err(Error::Json(format!("{what}.{key} is missing"))),
    }
}

fn get_bool(o: &Obj, key: &str, what: &str, default: Option<bool>) -> Result<bool> {
    match o.get(key) {
        Some(Value::Bool(b)) => Ok(*b),
        None if default.is_some() => Ok(default.unwrap()),
        Some(v) => Err(Error::Json(format!("{what}.{key} must be a boolean, found {}", kind(v)))),
        None => Err(Error::Json(format!("{what}.{key} is missing"))),
    }
}

fn opt_bool(o: &Obj, key: &str, what: &str) -> Result<Option<bool>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(Error::Json(format!("{what}.{key} must be a boolean or null, found {}", kind(v)))),
    }
}

fn get_uint(o: &Obj, key: &str, what: &str, max: u64) -> Result<u64> {
    match o.get(key) {
        Some(v @ Value::Number(n)) => match n.as_u64() {
            Some(x) if x <= max => Ok(x),
            _ => {
                Err(Error::Json(format!("{what}.{key} must be an integer in 0..={max}, found {}", shown(v))))
            }
        },
        Some(v) => Err(Error::Json(format!("{what}.{key} must be an integer, found {}", kind(v)))),
        None => Err(Error::Json(format!("{what}.{key} is missing"))),
    }
}

fn type_of<'a>(o: &'a Obj, what: &str) -> Result<&'a str> {
    get_str(o, "type", what)
}

/// The largest length setting we accept: far beyond any model, small enough that
/// arithmetic on it cannot overflow and a pad request cannot exhaust memory by accident.
const MAX_LEN: u64 = 1 << 24;

pub fn parse_tokenizer_json(json: &str) -> Result<Tokenizer> {
    let json::TokenizerJson { root, vocab, merges } = json::parse(json)?;
    let root = obj(&root, "the tokenizer file")?;

    let model = root.get("model").ok_or_else(|| Error::Json("\"model\" is missing".into()))?;
    let model = parse_model(model, ModelLists { vocab, merges })?;
    let normalizer = match root.get("normalizer") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_normalizer(v, "normalizer")?),
    };
    let pre_tokenizer = match root.get("pre_tokenizer") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_pre_tokenizer(v, "pre_tokenizer")?),
    };
    let added = match root.get("added_tokens") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().map(parse_added_token).collect::<Result<Vec<_>>>()?,
        Some(v) => return Err(Error::Json(format!("added_tokens must be an array, found {}", kind(v)))),
    };
    let post_processor = match root.get("post_processor") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_post_processor(v, "post_processor")?),
    };
    let decoder = match root.get("decoder") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_decoder(v, "decoder")?),
    };
    let truncation = match root.get("truncation") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_truncation(v)?),
    };
    let padding = match root.get("padding") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_padding(v)?),
    };
    Tokenizer::new(normalizer, pre_tokenizer, model, post_processor, decoder, added, truncation, padding)
}

/// A pre-tokenizer alone, as its JSON (the `pre_tokenizer` field of a tokenizer.json).
pub fn parse_pre_tokenizer_json(json: &str) -> Result<PreTokenizer> {
    let v: Value = serde_json::from_str(json).map_err(|e| Error::Json(e.to_string()))?;
    parse_pre_tokenizer(&v, "pre_tokenizer")
}

/// `model.vocab` and `model.merges`, read apart from the rest of the model (loaders::json).
struct ModelLists {
    vocab: Option<VocabJson>,
    // Only BPE reads merges, and BPE is part of the general build.
    #[cfg_attr(not(feature = "general"), allow(dead_code))]
    merges: Option<MergesJson>,
}

impl ModelLists {
    fn vocab(&mut self) -> Result<HashMap<String, u32>> {
        match self.vocab.take() {
            Some(v) => v.ids("model.vocab"),
            None => Err(Error::Json("model.vocab is missing".into())),
        }
    }
}

fn parse_model(v: &Value, mut lists: ModelLists) -> Result<Model> {
    let o = obj(v, "model")?;
    // Files written by older versions omit "type"; the reference then tries BPE (vocab and
    // merges), WordPiece (all its fields), WordLevel (vocab and unk token) in turn.
    let ty = match o.get("type") {
        Some(Value::String(s)) => s.as_str(),
        None if o.contains_key("merges") => "BPE",
        None if o.contains_key("max_input_chars_per_word") => "WordPiece",
        None if o.contains_key("unk_token") && o.contains_key("vocab") => "WordLevel",
        None if o.contains_key("vocab") => "Unigram",
        Some(v) => return Err(Error::Json(format!("model.type must be a string, found {}", kind(v)))),
        None => return Err(Error::Json("model.type is missing".into())),
    };
    match ty {
        "WordPiece" => parse_wordpiece(o, &mut lists).map(Model::WordPiece),
        #[cfg(feature = "general")]
        "BPE" => parse_bpe(o, lists).map(Model::Bpe),
        #[cfg(feature = "general")]
        "WordLevel" => {
            Ok(Model::WordLevel(WordLevel::new(lists.vocab()?, get_str(o, "unk_token", "model")?)?))
        }
        #[cfg(feature = "general")]
        "Unigram" => {
            // Unigram's vocabulary is a list, read as JSON like the rest of its fields.
            let mut o = o.clone();
            if let Some(vocab) = lists.vocab {
                o.insert("vocab".into(), vocab.into_value());
            }
            let unigram = parse_unigram(&Value::Object(o), "model")?;
            Ok(Model::Unigram(crate::models::UnigramModel::new(unigram)?))
        }
        other => Err(Error::Unsupported(format!("model type {other:?} (supported: {MODELS})"))),
    }
}

#[cfg(feature = "general")]
const MODELS: &str = "WordPiece, BPE, WordLevel, Unigram";
#[cfg(not(feature = "general"))]
const MODELS: &str = "WordPiece";

#[cfg(feature = "general")]
/// An optional string field (`null` or absent: none).
fn opt_str<'a>(o: &'a Obj, key: &str, what: &str) -> Result<Option<&'a str>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(Error::Json(format!("{what}.{key} must be a string or null, found {}", kind(v)))),
    }
}

fn parse_wordpiece(o: &Obj, lists: &mut ModelLists) -> Result<WordPiece> {
    let vocab = lists.vocab()?;
    let unk = get_str(o, "unk_token", "model")?;
    let prefix = match o.get("continuing_subword_prefix") {
        None => "##",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(Error::Json(format!(
                "model.continuing_subword_prefix must be a string, found {}",
                kind(v)
            )))
        }
    };
    let max_chars = if o.contains_key("max_input_chars_per_word") {
        get_uint(o, "max_input_chars_per_word", "model", u32::MAX as u64)? as usize
    } else {
        100
    };
    WordPiece::new(vocab, unk, prefix, max_chars)
}

/// A BPE model: every field of the reference's (`null` is the default of each option).
#[cfg(feature = "general")]
fn parse_bpe(o: &Obj, mut lists: ModelLists) -> Result<Bpe> {
    match o.get("dropout") {
        None | Some(Value::Null) => {}
        // The reference draws merges at random for any other value (and refuses values
        // outside 0..=1); 0 is no dropout.
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => {}
        Some(v) => {
            return Err(Error::Unsupported(format!(
                "model.dropout = {}: BPE dropout skips merges at random (only null or 0 are supported)",
                shown(v)
            )))
        }
    }
    let options = BpeOptions {
        unk_token: opt_str(o, "unk_token", "model")?.map(str::to_owned),
        continuing_subword_prefix: opt_str(o, "continuing_subword_prefix", "model")?.map(str::to_owned),
        end_of_word_suffix: opt_str(o, "end_of_word_suffix", "model")?.map(str::to_owned),
        fuse_unk: opt_bool(o, "fuse_unk", "model")?.unwrap_or(false),
        byte_fallback: opt_bool(o, "byte_fallback", "model")?.unwrap_or(false),
        ignore_merges: opt_bool(o, "ignore_merges", "model")?.unwrap_or(false),
    };
    let vocab = lists.vocab()?;
    let merges = match lists.merges {
        Some(m) => m.pairs("model.merges")?,
        None => return Err(Error::Json("model.merges is missing".into())),
    };
    Bpe::new(vocab, &merges, options)
}

/// A normalizer alone, as `tokenizer.json` writes one (its JSON path in errors: `normalizer`).
pub fn parse_normalizer_json(json: &str) -> Result<Normalizer> {
    let v: Value = serde_json::from_str(json).map_err(|e| Error::Json(e.to_string()))?;
    parse_normalizer(&v, "normalizer")
}

/// The array at `o[key]`, each item parsed by `item(value, its JSON path)`.
fn parse_list<T>(o: &Obj, key: &str, path: &str, item: fn(&Value, &str) -> Result<T>) -> Result<Vec<T>> {
    match o.get(key) {
        Some(Value::Array(a)) => {
            a.iter().enumerate().map(|(i, v)| item(v, &format!("{path}.{key}[{i}]"))).collect()
        }
        Some(v) => Err(Error::Json(format!("{path}.{key} must be an array, found {}", kind(v)))),
        None => Err(Error::Json(format!("{path}.{key} is missing"))),
    }
}

/// Metaspace's `prepend_scheme` (pre-tokenizer and decoder alike; "always" when absent).
/// Files from before it say `add_prefix_space`, whose false goes only with "never".
#[cfg(feature = "general")]
fn parse_prepend_scheme(o: &Obj, path: &str) -> Result<PrependScheme> {
    let scheme = match o.get("prepend_scheme") {
        None => PrependScheme::Always,
        Some(Value::String(s)) => PrependScheme::parse(s).ok_or_else(|| {
            Error::Json(format!(
                "{path}.prepend_scheme must be \"always\", \"first\" or \"never\", found {s:?}"
            ))
        })?,
        Some(v) => {
            return Err(Error::Json(format!("{path}.prepend_scheme must be a string, found {}", kind(v))))
        }
    };
    if opt_bool(o, "add_prefix_space", path)? == Some(false) && scheme != PrependScheme::Never {
        return Err(Error::Invalid(format!(
            "{path}.add_prefix_space is false but prepend_scheme is {:?}",
            scheme.name()
        )));
    }
    Ok(scheme)
}

/// A string field that must hold exactly one char.
#[cfg(feature = "general")]
fn get_char(o: &Obj, key: &str, path: &str) -> Result<char> {
    let s = get_str(o, key, path)?;
    let mut it = s.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(Error::Json(format!("{path}.{key} must be a single char, found {s:?}"))),
    }
}

/// Replace's `pattern` (`{"String": ..}` or `{"Regex": ..}`) and `content`.
#[cfg(feature = "general")]
fn parse_replace(o: &Obj, path: &str) -> Result<crate::normalizers::Replace> {
    use crate::normalizers::{Replace, ReplacePattern};
    let ppath = format!("{path}.pattern");
    let p = obj(o.get("pattern").ok_or_else(|| Error::Json(format!("{ppath} is missing")))?, &ppath)?;
    let pattern = match (p.get("String"), p.get("Regex")) {
        (Some(_), None) => ReplacePattern::String(get_str(p, "String", &ppath)?.to_owned()),
        (None, Some(_)) => ReplacePattern::Regex(get_str(p, "Regex", &ppath)?.to_owned()),
        _ => return Err(Error::Json(format!("{ppath} must be {{\"String\": ..}} or {{\"Regex\": ..}}"))),
    };
    let content = get_str(o, "content", path)?;
    Replace::new(pattern, content).map_err(|e| Error::Invalid(format!("{ppath}: {e}")))
}

/// The normalizer at JSON path `path`.
fn parse_normalizer(v: &Value, path: &str) -> Result<Normalizer> {
    let o = obj(v, path)?;
    let ty = type_of(o, path)?;
    match ty {
        "BertNormalizer" => Ok(Normalizer::Bert(BertNormalizerConfig {
            clean_text: get_bool(o, "clean_text", path, Some(true))?,
            handle_chinese_chars: get_bool(o, "handle_chinese_chars", path, Some(true))?,
            strip_accents: opt_bool(o, "strip_accents", path)?,
            lowercase: get_bool(o, "lowercase", path, Some(true))?,
        })),
        "NFC" => Ok(Normalizer::Form(Form::Nfc)),
        "NFD" => Ok(Normalizer::Form(Form::Nfd)),
        "NFKC" => Ok(Normalizer::Form(Form::Nfkc)),
        "NFKD" => Ok(Normalizer::Form(Form::Nfkd)),
        "Lowercase" => Ok(Normalizer::Lowercase),
        "StripAccents" => Ok(Normalizer::StripAccents),
        "Sequence" => Ok(Normalizer::Sequence(parse_list(o, "normalizers", path, parse_normalizer)?)),
        #[cfg(feature = "general")]
        "Strip" => Ok(Normalizer::Strip {
            left: get_bool(o, "strip_left", path, None)?,
            right: get_bool(o, "strip_right", path, None)?,
        }),
        #[cfg(feature = "general")]
        "Replace" => Ok(Normalizer::Replace(parse_replace(o, path)?)),
        #[cfg(feature = "general")]
        "Prepend" => Ok(Normalizer::Prepend(get_str(o, "prepend", path)?.to_owned())),
        #[cfg(feature = "general")]
        "ByteLevel" => Ok(Normalizer::ByteLevel),
        #[cfg(feature = "general")]
        "Nmt" => Ok(Normalizer::Nmt),
        #[cfg(feature = "general")]
        "Precompiled" => Ok(Normalizer::Precompiled(parse_precompiled(o, path)?.into())),
        other => {
            Err(Error::Unsupported(format!("{path}: normalizer type {other:?} (supported: {})", NORMALIZERS)))
        }
    }
}

#[cfg(feature = "general")]
const NORMALIZERS: &str =
    "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Sequence, Strip, Replace, Prepend, ByteLevel, Nmt, Precompiled";
#[cfg(not(feature = "general"))]
const NORMALIZERS: &str = "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Sequence";

/// A pre-tokenizer as the reference reads it: the fields it requires, its defaults for the
/// others, unknown fields ignored. `path` names it in errors.
fn parse_pre_tokenizer(v: &Value, path: &str) -> Result<PreTokenizer> {
    let o = obj(v, path)?;
    match type_of(o, path)? {
        "BertPreTokenizer" => Ok(PreTokenizer::Bert),
        #[cfg(feature = "general")]
        "ByteLevel" => Ok(PreTokenizer::ByteLevel(parse_byte_level(o, path)?)),
        #[cfg(feature = "general")]
        "Whitespace" => Ok(PreTokenizer::Whitespace),
        #[cfg(feature = "general")]
        "WhitespaceSplit" => Ok(PreTokenizer::WhitespaceSplit),
        #[cfg(feature = "general")]
        "Punctuation" => Ok(PreTokenizer::Punctuation(match o.get("behavior") {
            None => SplitDelimiterBehavior::Isolated,
            Some(_) => parse_behavior(o, path)?,
        })),
        #[cfg(feature = "general")]
        "Split" => {
            let what = format!("{path}.pattern");
            let pattern = match o.get("pattern") {
                Some(Value::Object(p)) if p.len() == 1 => match p.iter().next() {
                    Some((k, Value::String(s))) if k == "String" => SplitPattern::String(s.clone()),
                    Some((k, Value::String(s))) if k == "Regex" => SplitPattern::Regex(s.clone()),
                    _ => {
                        return Err(Error::Json(format!(
                            "{what} must be {{\"String\": ...}} or {{\"Regex\": ...}}"
                        )))
                    }
                },
                Some(_) => {
                    return Err(Error::Json(format!(
                        "{what} must be {{\"String\": ...}} or {{\"Regex\": ...}}"
                    )))
                }
                None => return Err(Error::Json(format!("{what} is missing"))),
            };
            let behavior = parse_behavior(o, path)?;
            let invert = get_bool(o, "invert", path, None)?;
            let split = Split::new(pattern, behavior, invert).map_err(|e| match e {
                Error::Invalid(m) => Error::Invalid(format!("{what}: {m}")),
                e => e,
            })?;
            Ok(PreTokenizer::Split(split))
        }
        #[cfg(feature = "general")]
        "Metaspace" => {
            let replacement = get_char(o, "replacement", path)?;
            let prepend_scheme = parse_prepend_scheme(o, path)?;
            let split = opt_bool(o, "split", path)?.unwrap_or(true);
            Ok(PreTokenizer::Metaspace(Metaspace { replacement, prepend_scheme, split }))
        }
        #[cfg(feature = "general")]
        "Digits" => {
            Ok(PreTokenizer::Digits { individual_digits: get_bool(o, "individual_digits", path, None)? })
        }
        #[cfg(feature = "general")]
        "CharDelimiterSplit" => Ok(PreTokenizer::CharDelimiterSplit(get_char(o, "delimiter", path)?)),
        #[cfg(feature = "general")]
        "UnicodeScripts" => Ok(PreTokenizer::UnicodeScripts),
        #[cfg(feature = "general")]
        "FixedLength" => {
            let length =
                if o.contains_key("length") { get_uint(o, "length", path, u32::MAX as u64)? } else { 5 };
            // The reference loads 0 and then panics on the first text.
            if length == 0 {
                return Err(Error::Invalid(format!("{path}.length must be at least 1")));
            }
            Ok(PreTokenizer::FixedLength(length as usize))
        }
        #[cfg(feature = "general")]
        "Sequence" => {
            let what = format!("{path}.pretokenizers");
            let list = match o.get("pretokenizers") {
                Some(Value::Array(a)) => a,
                Some(v) => return Err(Error::Json(format!("{what} must be an array, found {}", kind(v)))),
                None => return Err(Error::Json(format!("{what} is missing"))),
            };
            let list = list.iter().enumerate().map(|(i, v)| parse_pre_tokenizer(v, &format!("{what}[{i}]")));
            Ok(PreTokenizer::Sequence(list.collect::<Result<_>>()?))
        }
        other => Err(Error::Unsupported(format!(
            "{path}: pre_tokenizer type {other:?} (supported: {PRE_TOKENIZERS})"
        ))),
    }
}

#[cfg(feature = "general")]
const PRE_TOKENIZERS: &str = "BertPreTokenizer, ByteLevel, Whitespace, WhitespaceSplit, Punctuation, Split, \
     Metaspace, Digits, CharDelimiterSplit, UnicodeScripts, FixedLength, Sequence";
#[cfg(not(feature = "general"))]
const PRE_TOKENIZERS: &str = "BertPreTokenizer";

/// A ByteLevel pre-tokenizer's or post-processor's settings (the reference's one struct for both).
fn parse_byte_level(o: &Obj, path: &str) -> Result<ByteLevel> {
    Ok(ByteLevel {
        add_prefix_space: get_bool(o, "add_prefix_space", path, None)?,
        trim_offsets: get_bool(o, "trim_offsets", path, None)?,
        use_regex: get_bool(o, "use_regex", path, Some(true))?,
    })
}

/// The `behavior` of a Split or Punctuation.
#[cfg(feature = "general")]
fn parse_behavior(o: &Obj, path: &str) -> Result<SplitDelimiterBehavior> {
    let name = get_str(o, "behavior", path)?;
    SplitDelimiterBehavior::parse(name).ok_or_else(|| {
        let names: Vec<_> = SplitDelimiterBehavior::ALL.iter().map(|b| b.name()).collect();
        Error::Json(format!("{path}.behavior must be one of {}, found {name:?}", names.join(", ")))
    })
}

/// A `Precompiled` normalizer object at JSON path `path`: SentencePiece's char map in base64.
#[cfg(feature = "general")]
pub(crate) fn parse_precompiled(o: &Obj, path: &str) -> Result<crate::normalizers::precompiled::Precompiled> {
    let b64 = get_str(o, "precompiled_charsmap", path)?;
    let bytes = strict_base64(b64).ok_or_else(|| {
        Error::Json(format!(
            "{path}.precompiled_charsmap is not base64 (standard alphabet, zero trailing bits)"
        ))
    })?;
    crate::normalizers::precompiled::Precompiled::from_charsmap(bytes).map_err(|e| match e {
        Error::Invalid(why) => Error::Invalid(format!("{path}.precompiled_charsmap: {why}")),
        e => e,
    })
}

/// Standard base64 as the reference reads it (base64 0.13's `decode`): padding optional, but
/// an `=` may only fill the 3rd and 4th place of the last group; the bits after the last byte
/// must be zero.
#[cfg(feature = "general")]
fn strict_base64(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let k = b.len() - b.iter().rev().take_while(|&&c| c == b'=').count();
    let pads = b.len() - k;
    let max_pads = match k % 4 {
        0 => 0,
        2 => 2,
        3 => 1,
        _ => return None,
    };
    if pads > max_pads {
        return None;
    }
    let data = &b[..k];
    if !k.is_multiple_of(4) {
        // The low bits of the last symbol that fall past the last byte: 4 after 2 symbols, 2
        // after 3.
        let last = crate::loaders::tiktoken::base64_decode(&[b'A', b'A', b'A', data[k - 1]])?[2];
        if last & ((1u8 << (2 * (4 - k % 4))) - 1) != 0 {
            return None;
        }
    }
    crate::loaders::tiktoken::base64_decode(data)
}

/// A `Unigram` model object at JSON path `path`, as the reference reads one: `vocab` a list of
/// `[piece, score]`, `unk_id` an index or null (missing: null), `byte_fallback` a boolean
/// (missing: false); other keys are ignored.
#[cfg(feature = "general")]
pub fn parse_unigram(v: &Value, path: &str) -> Result<crate::models::unigram::Unigram> {
    let o = obj(v, path)?;
    if let Some(t) = o.get("type") {
        if t.as_str() != Some("Unigram") {
            return Err(Error::Json(format!("{path}.type must be \"Unigram\", found {}", shown(t))));
        }
    }
    let list = match o.get("vocab") {
        Some(Value::Array(a)) => a,
        Some(v) => return Err(Error::Json(format!("{path}.vocab must be an array, found {}", kind(v)))),
        None => return Err(Error::Json(format!("{path}.vocab is missing"))),
    };
    let mut vocab = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        match item.as_array().map(|a| a.as_slice()) {
            Some([Value::String(p), Value::Number(s)]) => {
                let s = s
                    .as_f64()
                    .ok_or_else(|| Error::Json(format!("{path}.vocab[{i}]: score out of range")))?;
                vocab.push((p.clone(), s));
            }
            _ => {
                return Err(Error::Json(format!(
                    "{path}.vocab[{i}] must be [piece, score], found {}",
                    shown(item)
                )))
            }
        }
    }
    let unk_id = match o.get("unk_id") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some() => {
            let id = n.as_u64().unwrap_or(u64::MAX);
            if vocab.is_empty() {
                return Err(Error::Invalid(format!(
                    "{path}.vocab is empty but unk_id needs at least the unk piece"
                )));
            }
            if id >= vocab.len() as u64 {
                return Err(Error::Invalid(format!(
                    "{path}.unk_id {id} is not below the vocabulary size {}",
                    vocab.len()
                )));
            }
            Some(id as usize)
        }
        Some(v) => {
            return Err(Error::Json(format!(
                "{path}.unk_id must be a non-negative integer or null, found {}",
                shown(v)
            )))
        }
    };
    let byte_fallback = get_bool(o, "byte_fallback", path, Some(false))?;
    crate::models::unigram::Unigram::new(vocab, unk_id, byte_fallback)
        .map_err(|e| Error::Invalid(format!("{path}: {e}")))
}

fn parse_added_token(v: &Value) -> Result<AddedToken> {
    let o = obj(v, "added_tokens[]")?;
    let what = "added_tokens[]";
    Ok(AddedToken {
        id: get_uint(o, "id", what, u32::MAX as u64 / 2)? as u32,
        content: get_str(o, "content", what)?.into(),
        single_word: get_bool(o, "single_word", what, Some(false))?,
        lstrip: get_bool(o, "lstrip", what, Some(false))?,
        rstrip: get_bool(o, "rstrip", what, Some(false))?,
        normalized: get_bool(o, "normalized", what, Some(true))?,
        special: get_bool(o, "special", what, Some(false))?,
        normalized_form: None,
    })
}

fn parse_type_id(o: &Obj, what: &str) -> Result<u32> {
    Ok(get_uint(o, "type_id", what, u32::MAX as u64)? as u32)
}

fn parse_template(v: &Value, what: &str) -> Result<Vec<TemplatePiece>> {
    let arr = v.as_array().ok_or_else(|| {
        Error::Unsupported(format!("{what} as a string template (write it as a list of pieces)"))
    })?;
    let mut out = Vec::new();
    for p in arr {
        let o = obj(p, what)?;
        if let Some(s) = o.get("SpecialToken") {
            let s = obj(s, what)?;
            out.push(TemplatePiece::Special {
                id: get_str(s, "id", what)?.to_owned(),
                type_id: parse_type_id(s, what)?,
            });
        } else if let Some(s) = o.get("Sequence") {
            let s = obj(s, what)?;
            let seq = match get_str(s, "id", what)? {
                "A" => 0,
                "B" => 1,
                x => {
                    return Err(Error::Json(format!(
                        "{what}: sequence id must be \"A\" or \"B\", found {x:?}"
                    )))
                }
            };
            out.push(TemplatePiece::Sequence { seq, type_id: parse_type_id(s, what)? });
        } else {
            return Err(Error::Json(format!("{what}: each piece must be SpecialToken or Sequence")));
        }
    }
    Ok(out)
}

fn parse_pair(v: Option<&Value>, what: &str) -> Result<(Arc<str>, u32)> {
    let a = v.and_then(|v| v.as_array()).ok_or_else(|| Error::Json(format!("{what} must be [token, id]")))?;
    match (a.first().and_then(|x| x.as_str()), a.get(1).and_then(|x| x.as_u64())) {
        (Some(t), Some(id)) if a.len() == 2 && id <= u32::MAX as u64 / 2 => Ok((t.into(), id as u32)),
        _ => Err(Error::Json(format!("{what} must be [token, id]"))),
    }
}

/// The post-processor at JSON path `path` (`post_processor`, or a step of a `Sequence`), read
/// as the reference reads one: it tries RobertaProcessing (`sep`, `cls`, `trim_offsets`,
/// `add_prefix_space`), BertProcessing (`sep`, `cls`), ByteLevel, TemplateProcessing (`single`,
/// `pair`, `special_tokens`) and Sequence in turn and takes the first that reads; only
/// ByteLevel and Sequence need their `type` (serde ignores the others'). An object none of them
/// reads is refused with the error of the kind its `type` names.
pub(crate) fn parse_post_processor(v: &Value, path: &str) -> Result<PostProcessor> {
    let o = obj(v, path)?;
    let ty = match o.get("type") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(v) => return Err(Error::Json(format!("{path}.type must be a string, found {}", kind(v)))),
    };
    let mut errors = Vec::new();
    match parse_bert_or_roberta(o, path) {
        Ok(p) => return Ok(p),
        Err(e) => errors.push(("BertProcessing", e)),
    }
    if ty == Some("ByteLevel") {
        match parse_byte_level(o, path) {
            Ok(b) => return Ok(PostProcessor::ByteLevel(b)),
            Err(e) => errors.push(("ByteLevel", e)),
        }
    }
    match parse_template_processing(o, path) {
        Ok(p) => return Ok(p),
        Err(e) => errors.push(("TemplateProcessing", e)),
    }
    if ty == Some("Sequence") {
        match parse_list(o, "processors", path, parse_post_processor) {
            Ok(steps) => return Ok(PostProcessor::Sequence(steps)),
            Err(e) => errors.push(("Sequence", e)),
        }
    }
    let named = match ty {
        Some("RobertaProcessing") => "BertProcessing",
        Some(t) => t,
        None => "",
    };
    match errors.into_iter().find(|(k, _)| *k == named) {
        Some((_, e)) => Err(e),
        None => Err(Error::Unsupported(format!(
            "{path}: {} (supported: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, \
             Sequence)",
            match ty {
                Some(t) => format!("post-processor type {t:?}"),
                None => "a post-processor without a type that reads as none of those that need none".into(),
            }
        ))),
    }
}

/// RobertaProcessing when `trim_offsets` and `add_prefix_space` are booleans, else
/// BertProcessing: both need only `sep` and `cls`.
fn parse_bert_or_roberta(o: &Obj, path: &str) -> Result<PostProcessor> {
    let sep = parse_pair(o.get("sep"), &format!("{path}.sep"))?;
    let cls = parse_pair(o.get("cls"), &format!("{path}.cls"))?;
    Ok(match (o.get("trim_offsets"), o.get("add_prefix_space")) {
        (Some(Value::Bool(trim_offsets)), Some(Value::Bool(add_prefix_space))) => PostProcessor::Roberta {
            sep,
            cls,
            trim_offsets: *trim_offsets,
            add_prefix_space: *add_prefix_space,
        },
        _ => PostProcessor::Bert { sep, cls },
    })
}

fn parse_template_processing(o: &Obj, path: &str) -> Result<PostProcessor> {
    let field = |key: &str| o.get(key).ok_or_else(|| Error::Json(format!("{path}.{key} is missing")));
    let single = parse_template(field("single")?, &format!("{path}.single"))?;
    let pair = parse_template(field("pair")?, &format!("{path}.pair"))?;
    let what = format!("{path}.special_tokens");
    let mut specials = HashMap::new();
    for (name, def) in obj(field("special_tokens")?, &what)? {
        let at = format!("{what}[{name:?}]");
        let d = obj(def, &at)?;
        let list = |key: &str| {
            d.get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| Error::Json(format!("{at}.{key} must be an array")))
        };
        let ids = list("ids")?
            .iter()
            .map(|x| x.as_u64().filter(|&i| i <= u32::MAX as u64 / 2).map(|i| i as u32))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| Error::Json(format!("{at}.ids must be token ids")))?;
        let tokens = list("tokens")?
            .iter()
            .map(|x| x.as_str().map(Arc::from))
            .collect::<Option<Vec<Arc<str>>>>()
            .ok_or_else(|| Error::Json(format!("{at}.tokens must be strings")))?;
        if ids.len() != tokens.len() {
            return Err(Error::Invalid(format!("{at}: ids and tokens differ in length")));
        }
        specials.insert(name.clone(), SpecialTokenDef { ids, tokens });
    }
    for (piece, which) in single.iter().map(|p| (p, "single")).chain(pair.iter().map(|p| (p, "pair"))) {
        if let TemplatePiece::Special { id, .. } = piece {
            if !specials.contains_key(id) {
                return Err(Error::Invalid(format!(
                    "{path}.{which}: the template uses special token {id:?}, which {what} does not define"
                )));
            }
        }
    }
    if single.iter().any(|p| matches!(p, TemplatePiece::Sequence { seq: 1, .. })) {
        return Err(Error::Invalid(format!("{path}.single: the single template may not use sequence B")));
    }
    Ok(PostProcessor::Template { single, pair, specials })
}

/// A decoder alone, as `tokenizer.json` writes one (its JSON path in errors: `decoder`).
pub fn parse_decoder_json(json: &str) -> Result<Decoder> {
    let v: Value = serde_json::from_str(json).map_err(|e| Error::Json(e.to_string()))?;
    parse_decoder(&v, "decoder")
}

/// A string field that may be missing (then `default`).
fn str_or<'a>(o: &'a Obj, key: &str, path: &str, default: &'a str) -> Result<&'a str> {
    if o.contains_key(key) {
        get_str(o, key, path)
    } else {
        Ok(default)
    }
}

/// The decoder at JSON path `path`.
fn parse_decoder(v: &Value, path: &str) -> Result<Decoder> {
    let o = obj(v, path)?;
    match type_of(o, path)? {
        "WordPiece" => Ok(Decoder::WordPiece {
            prefix: str_or(o, "prefix", path, "##")?.to_owned(),
            cleanup: get_bool(o, "cleanup", path, Some(true))?,
        }),
        #[cfg(feature = "general")]
        "ByteLevel" => {
            // The pre-tokenizer's settings, which decoding does not use.
            get_bool(o, "add_prefix_space", path, Some(true))?;
            get_bool(o, "trim_offsets", path, Some(true))?;
            get_bool(o, "use_regex", path, Some(true))?;
            Ok(Decoder::ByteLevel)
        }
        #[cfg(feature = "general")]
        "Metaspace" => Ok(Decoder::Metaspace {
            replacement: get_char(o, "replacement", path)?,
            prepend_scheme: parse_prepend_scheme(o, path)?,
            split: opt_bool(o, "split", path)?.unwrap_or(true),
        }),
        #[cfg(feature = "general")]
        "BPEDecoder" => Ok(Decoder::Bpe { suffix: get_str(o, "suffix", path)?.to_owned() }),
        #[cfg(feature = "general")]
        "ByteFallback" => Ok(Decoder::ByteFallback),
        #[cfg(feature = "general")]
        "Fuse" => Ok(Decoder::Fuse),
        #[cfg(feature = "general")]
        "Replace" => Ok(Decoder::Replace(parse_replace(o, path)?)),
        #[cfg(feature = "general")]
        "Strip" => Ok(Decoder::Strip {
            content: get_char(o, "content", path)?,
            start: get_uint(o, "start", path, u32::MAX as u64)? as usize,
            stop: get_uint(o, "stop", path, u32::MAX as u64)? as usize,
        }),
        #[cfg(feature = "general")]
        "CTC" => Ok(Decoder::Ctc {
            pad_token: get_str(o, "pad_token", path)?.to_owned(),
            word_delimiter_token: get_str(o, "word_delimiter_token", path)?.to_owned(),
            cleanup: get_bool(o, "cleanup", path, None)?,
        }),
        #[cfg(feature = "general")]
        "Sequence" => Ok(Decoder::Sequence(parse_list(o, "decoders", path, parse_decoder)?)),
        other => Err(Error::Unsupported(format!("{path}: decoder type {other:?} (supported: {DECODERS})"))),
    }
}

#[cfg(feature = "general")]
const DECODERS: &str =
    "WordPiece, ByteLevel, Metaspace, BPEDecoder, ByteFallback, Fuse, Replace, Strip, CTC, Sequence";
#[cfg(not(feature = "general"))]
const DECODERS: &str = "WordPiece";

fn parse_direction(o: &Obj, what: &str) -> Result<Direction> {
    match o.get("direction") {
        None => Ok(Direction::Right),
        Some(Value::String(s)) if s == "Right" => Ok(Direction::Right),
        Some(Value::String(s)) if s == "Left" => Ok(Direction::Left),
        Some(v) => {
            Err(Error::Json(format!("{what}.direction must be \"Left\" or \"Right\", found {}", shown(v))))
        }
    }
}

fn parse_truncation(v: &Value) -> Result<Truncation> {
    let o = obj(v, "truncation")?;
    let strategy = match o.get("strategy") {
        None => TruncationStrategy::LongestFirst,
        Some(Value::String(s)) => match s.as_str() {
            "LongestFirst" => TruncationStrategy::LongestFirst,
            "OnlyFirst" => TruncationStrategy::OnlyFirst,
            "OnlySecond" => TruncationStrategy::OnlySecond,
            x => return Err(Error::Unsupported(format!("truncation strategy {x:?}"))),
        },
        Some(v) => {
            return Err(Error::Json(format!("truncation.strategy must be a string, found {}", kind(v))))
        }
    };
    let max_length = get_uint(o, "max_length", "truncation", MAX_LEN)? as usize;
    let stride =
        if o.contains_key("stride") { get_uint(o, "stride", "truncation", MAX_LEN)? as usize } else { 0 };
    Truncation::new(max_length, stride, strategy, parse_direction(o, "truncation")?)
}

fn parse_padding(v: &Value) -> Result<Padding> {
    let o = obj(v, "padding")?;
    let strategy = match o.get("strategy") {
        None => PaddingStrategy::BatchLongest,
        Some(Value::String(s)) if s == "BatchLongest" => PaddingStrategy::BatchLongest,
        Some(Value::Object(f)) if f.contains_key("Fixed") => {
            PaddingStrategy::Fixed(get_uint(f, "Fixed", "padding.strategy", MAX_LEN)? as usize)
        }
        Some(v) => {
            return Err(Error::Json(format!(
                "padding.strategy must be \"BatchLongest\" or {{\"Fixed\": n}}, found {}",
                shown(v)
            )))
        }
    };
    let pad_to_multiple_of = match o.get("pad_to_multiple_of") {
        None | Some(Value::Null) => None,
        Some(_) => Some(get_uint(o, "pad_to_multiple_of", "padding", MAX_LEN)? as usize),
    };
    Ok(Padding {
        strategy,
        direction: parse_direction(o, "padding")?,
        pad_to_multiple_of,
        pad_id: if o.contains_key("pad_id") {
            get_uint(o, "pad_id", "padding", u32::MAX as u64)? as u32
        } else {
            0
        },
        pad_type_id: if o.contains_key("pad_type_id") {
            get_uint(o, "pad_type_id", "padding", u32::MAX as u64)? as u32
        } else {
            0
        },
        pad_token: match o.get("pad_token") {
            None => "[PAD]".into(),
            Some(Value::String(s)) => s.as_str().into(),
            Some(v) => {
                return Err(Error::Json(format!("padding.pad_token must be a string, found {}", kind(v))))
            }
        },
    })
}

/// A `vocab.txt` with BERT's defaults, as the reference's `BertWordPieceTokenizer(vocab)`
/// builds it: BertNormalizer (lowercase), BertPreTokenizer, WordPiece with `[UNK]`,
/// `[CLS] A [SEP]` / `[CLS] A [SEP] B [SEP]`, WordPiece decoder; the five BERT special
/// tokens that the vocabulary contains are added as special tokens.
pub fn tokenizer_from_vocab_txt(text: &str) -> Result<Tokenizer> {
    let vocab = WordPiece::parse_vocab_txt(text);
    let lookup = |t: &str| {
        vocab.get(t).copied().ok_or_else(|| Error::Invalid(format!("the vocabulary has no {t} token")))
    };
    let cls = lookup("[CLS]")?;
    let sep = lookup("[SEP]")?;
    let mut added = Vec::new();
    for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] {
        if let Some(&id) = vocab.get(t) {
            added.push(AddedToken {
                id,
                content: t.into(),
                single_word: false,
                lstrip: false,
                rstrip: false,
                normalized: false,
                special: true,
                normalized_form: None,
            });
        }
    }
    let model = WordPiece::new(vocab, "[UNK]", "##", 100)?;
    Tokenizer::new(
        Some(Normalizer::Bert(BertNormalizerConfig::default())),
        Some(PreTokenizer::Bert),
        model,
        Some(PostProcessor::Bert { sep: ("[SEP]".into(), sep), cls: ("[CLS]".into(), cls) }),
        Some(Decoder::WordPiece { prefix: "##".into(), cleanup: true }),
        added,
        None,
        None,
    )
}

fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Left => "Left",
        Direction::Right => "Right",
    }
}

/// `truncation` in tokenizer.json's form (None is `null`).
pub fn truncation_to_json(t: Option<&Truncation>) -> Value {
    match t {
        None => Value::Null,
        Some(t) => serde_json::json!({
            "direction": direction_name(t.direction),
            "max_length": t.max_length,
            "strategy": match t.strategy {
                TruncationStrategy::LongestFirst => "LongestFirst",
                TruncationStrategy::OnlyFirst => "OnlyFirst",
                TruncationStrategy::OnlySecond => "OnlySecond",
            },
            "stride": t.stride,
        }),
    }
}

/// `padding` in tokenizer.json's form (None is `null`).
pub fn padding_to_json(p: Option<&Padding>) -> Value {
    match p {
        None => Value::Null,
        Some(p) => serde_json::json!({
            "strategy": match p.strategy {
                PaddingStrategy::BatchLongest => serde_json::json!("BatchLongest"),
                PaddingStrategy::Fixed(n) => serde_json::json!({ "Fixed": n }),
            },
            "direction": direction_name(p.direction),
            "pad_to_multiple_of": p.pad_to_multiple_of,
            "pad_id": p.pad_id,
            "pad_type_id": p.pad_type_id,
            "pad_token": &*p.pad_token,
        }),
    }
}

/// Everything needed to rebuild a tokenizer as it is now (its file, plus the truncation,
/// padding and fast-path settings changed since), as one JSON string: what pickling and
/// worker processes carry.
pub fn state_json(t: &Tokenizer, source: &Source) -> String {
    let mut v = match source {
        Source::Json(j) => {
            serde_json::from_str::<Value>(j).expect("the source parsed when the tokenizer was built")
        }
        Source::VocabTxt(v) => serde_json::json!({ "tokenprism_vocab_txt": &**v }),
        #[cfg(feature = "general")]
        Source::SentencePiece(b) => {
            serde_json::json!({ "tokenprism_sentencepiece": crate::loaders::tiktoken::base64_encode(b) })
        }
        // Rank files are base64 and ASCII digits (a file that was not could not have loaded).
        Source::Tiktoken { name, data } => serde_json::json!({
            "tokenprism_tiktoken": { "name": &**name, "data": String::from_utf8_lossy(data) }
        }),
    };
    let o = v.as_object_mut().expect("a tokenizer file is an object");
    o.insert("truncation".into(), truncation_to_json(t.truncation.as_ref()));
    o.insert("padding".into(), padding_to_json(t.padding.as_ref()));
    o.insert("tokenprism_fast_paths".into(), serde_json::to_value(t.fast).expect("plain struct"));
    v.to_string()
}

/// The inverse of [`state_json`].
pub fn from_state_json(state: &str) -> Result<(Tokenizer, Source)> {
    let v: Value = serde_json::from_str(state).map_err(|e| Error::Json(e.to_string()))?;
    let o = obj(&v, "the tokenizer state")?;
    let fast = match o.get("tokenprism_fast_paths") {
        Some(f) => Some(serde_json::from_value(f.clone()).map_err(|e| Error::Json(e.to_string()))?),
        None => None,
    };
    let tiktoken =
        o.get("tokenprism_tiktoken").and_then(|t| Some((t.get("name")?.as_str()?, t.get("data")?.as_str()?)));
    let (mut t, source) = if let Some(Value::String(txt)) = o.get("tokenprism_vocab_txt") {
        (tokenizer_from_vocab_txt(txt)?, Source::VocabTxt(txt.as_str().into()))
    } else if let Some(Value::String(b64)) = o.get("tokenprism_sentencepiece") {
        sentencepiece_state(b64)?
    } else if let Some((name, data)) = tiktoken {
        (
            tiktoken_tokenizer(name, data.as_bytes())?,
            Source::Tiktoken { name: name.into(), data: data.as_bytes().into() },
        )
    } else {
        (Tokenizer::from_json_str(state)?, Source::Json(state.into()))
    };
    t.truncation = match o.get("truncation") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_truncation(v)?),
    };
    t.padding = match o.get("padding") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_padding(v)?),
    };
    if let Some(f) = fast {
        t.fast = f;
    }
    Ok((t, source))
}

#[cfg(feature = "general")]
fn sentencepiece_state(b64: &str) -> Result<(Tokenizer, Source)> {
    let bytes = crate::loaders::tiktoken::base64_decode(b64.as_bytes())
        .ok_or_else(|| Error::Json("tokenprism_sentencepiece is not base64".into()))?;
    let t = crate::loaders::sentencepiece::tokenizer_from_model(&bytes)?;
    Ok((t, Source::SentencePiece(bytes.into())))
}

#[cfg(not(feature = "general"))]
fn sentencepiece_state(_: &str) -> Result<(Tokenizer, Source)> {
    Err(Error::Unsupported("SentencePiece models need the general feature".into()))
}

/// A `.tiktoken` file's tokenizer, which the general pipeline builds.
fn tiktoken_tokenizer(name: &str, data: &[u8]) -> Result<Tokenizer> {
    #[cfg(feature = "general")]
    {
        crate::loaders::tiktoken::tokenizer(name, data)
    }
    #[cfg(not(feature = "general"))]
    {
        let _ = data;
        Err(Error::Unsupported(format!("a .tiktoken file ({name}) needs the general feature")))
    }
}

/// What a tokenizer was loaded from.
#[derive(Clone, Debug)]
pub enum Source {
    Json(Arc<str>),
    VocabTxt(Arc<str>),
    /// A SentencePiece `.model` file's bytes.
    #[cfg(feature = "general")]
    SentencePiece(Arc<[u8]>),
    /// A `.tiktoken` file of the encoding `name`.
    Tiktoken {
        name: Arc<str>,
        data: Arc<[u8]>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WordPiece file with `edit` applied to its JSON.
    fn load(edit: impl FnOnce(&mut Value)) -> Result<Tokenizer> {
        let mut v = serde_json::json!({
            "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]"},
        });
        edit(&mut v);
        parse_tokenizer_json(&v.to_string())
    }

    fn message(r: Result<Tokenizer>) -> String {
        r.expect_err("the file is refused").to_string()
    }

    #[test]
    fn errors_name_strings_and_integers_and_the_kind_of_the_rest() {
        let e = message(load(|v| v["model"]["vocab"]["a"] = serde_json::json!(1.5)));
        assert!(e.ends_with("model.vocab[\"a\"] must be a non-negative integer id, found a number"), "{e}");
        let e = message(load(|v| v["model"]["vocab"]["a"] = serde_json::json!(-2)));
        assert!(e.ends_with("found -2"), "{e}");
        let e = message(load(|v| v["padding"] = serde_json::json!({"strategy": "Longest"})));
        assert!(e.ends_with("found \"Longest\""), "{e}");
        let e = message(load(|v| v["truncation"] = serde_json::json!({"max_length": 8, "direction": 1})));
        assert!(e.ends_with("truncation.direction must be \"Left\" or \"Right\", found 1"), "{e}");
        let e = message(load(|v| v["truncation"] = serde_json::json!({"max_length": 8, "stride": [1]})));
        assert!(e.contains("truncation.stride must be an integer"), "{e}");
        let e = message(load(|v| v["truncation"] = serde_json::json!({"max_length": 1e20})));
        assert!(
            e.contains("truncation.max_length must be an integer in 0..=") && e.ends_with("found a number"),
            "{e}"
        );
    }
}
