//! Reading Hugging Face `tokenizer.json` files and plain `vocab.txt` files.
//!
//! Every setting comes from the file. A component or option we don't implement is an
//! error that names it, never a silent fallback: a tokenizer that quietly differs from the
//! one a model was trained with is worse than one that refuses to load.

use crate::error::{Error, Result};
#[cfg(feature = "general")]
use crate::models::bpe::general::{Bpe, BpeOptions};
#[cfg(feature = "general")]
use crate::models::wordlevel::WordLevel;
use crate::models::wordpiece::WordPiece;
use crate::models::Model;
use crate::normalizers::BertNormalizerConfig;
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

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
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
        Some(Value::Number(n)) => match n.as_u64() {
            Some(x) if x <= max => Ok(x),
            _ => Err(Error::Json(format!("{what}.{key} must be an integer in 0..={max}, found {n}"))),
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
    let root: Value = serde_json::from_str(json).map_err(|e| Error::Json(e.to_string()))?;
    let root = obj(&root, "the tokenizer file")?;

    let model = parse_model(root.get("model").ok_or_else(|| Error::Json("\"model\" is missing".into()))?)?;
    let normalizer = match root.get("normalizer") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_normalizer(v)?),
    };
    let pre_tokenizer = match root.get("pre_tokenizer") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_pre_tokenizer(v)?),
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
        Some(v) => Some(parse_decoder(v)?),
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

fn parse_model(v: &Value) -> Result<Model> {
    let o = obj(v, "model")?;
    // Files written by older versions omit "type"; the reference then tries BPE (vocab and
    // merges), WordPiece (all its fields), WordLevel (vocab and unk token) in turn.
    let ty = match o.get("type") {
        Some(Value::String(s)) => s.as_str(),
        None if o.contains_key("merges") => "BPE",
        None if o.contains_key("max_input_chars_per_word") => "WordPiece",
        None if o.contains_key("unk_token") && o.contains_key("vocab") => "WordLevel",
        Some(v) => return Err(Error::Json(format!("model.type must be a string, found {}", kind(v)))),
        None => return Err(Error::Json("model.type is missing".into())),
    };
    match ty {
        "WordPiece" => parse_wordpiece(o).map(Model::WordPiece),
        #[cfg(feature = "general")]
        "BPE" => parse_bpe(o).map(Model::Bpe),
        #[cfg(feature = "general")]
        "WordLevel" => {
            Ok(Model::WordLevel(WordLevel::new(parse_vocab(o)?, get_str(o, "unk_token", "model")?)?))
        }
        other => Err(Error::Unsupported(format!("model type {other:?} (supported: {MODELS})"))),
    }
}

#[cfg(feature = "general")]
const MODELS: &str = "WordPiece, BPE, WordLevel";
#[cfg(not(feature = "general"))]
const MODELS: &str = "WordPiece";

/// `model.vocab`: token → id.
fn parse_vocab(o: &Obj) -> Result<HashMap<String, u32>> {
    let vocab_v = o.get("vocab").ok_or_else(|| Error::Json("model.vocab is missing".into()))?;
    let vocab_o = obj(vocab_v, "model.vocab")?;
    let mut vocab = HashMap::with_capacity(vocab_o.len());
    for (tok, id) in vocab_o {
        let id = id.as_u64().filter(|&x| x <= u32::MAX as u64 / 2).ok_or_else(|| {
            Error::Json(format!("model.vocab[{tok:?}] must be a non-negative integer id, found {id}"))
        })?;
        vocab.insert(tok.clone(), id as u32);
    }
    Ok(vocab)
}

#[cfg(feature = "general")]
/// An optional string field (`null` or absent: none).
fn opt_str<'a>(o: &'a Obj, key: &str, what: &str) -> Result<Option<&'a str>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(Error::Json(format!("{what}.{key} must be a string or null, found {}", kind(v)))),
    }
}

fn parse_wordpiece(o: &Obj) -> Result<WordPiece> {
    let vocab = parse_vocab(o)?;
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
fn parse_bpe(o: &Obj) -> Result<Bpe> {
    match o.get("dropout") {
        None | Some(Value::Null) => {}
        // The reference draws merges at random for any other value (and refuses values
        // outside 0..=1); 0 is no dropout.
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => {}
        Some(v) => {
            return Err(Error::Unsupported(format!(
                "model.dropout = {v}: BPE dropout skips merges at random (only null or 0 are supported)"
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
    let vocab = parse_vocab(o)?;
    let merges = parse_merges(o.get("merges").ok_or_else(|| Error::Json("model.merges is missing".into()))?)?;
    Bpe::new(vocab, &merges, options)
}

/// `model.merges`: `[["a", "b"], ...]`, or the older `["a b", ...]` (`#version` lines
/// skipped, as the reference skips them in both merges.txt and this form).
#[cfg(feature = "general")]
fn parse_merges(v: &Value) -> Result<Vec<(String, String)>> {
    let arr = v
        .as_array()
        .ok_or_else(|| Error::Json(format!("model.merges must be an array, found {}", kind(v))))?;
    if arr.iter().all(Value::is_array) {
        return arr
            .iter()
            .enumerate()
            .map(|(i, m)| match m.as_array().map(Vec::as_slice) {
                Some([Value::String(a), Value::String(b)]) => Ok((a.clone(), b.clone())),
                _ => Err(Error::Json(format!("model.merges[{i}] must be a pair of strings, found {m}"))),
            })
            .collect();
    }
    let mut out = Vec::with_capacity(arr.len());
    for (i, m) in arr.iter().enumerate() {
        let s = m.as_str().ok_or_else(|| {
            Error::Json(format!("model.merges[{i}] must be a string \"a b\" or a pair, found {}", kind(m)))
        })?;
        if s.starts_with("#version") {
            continue;
        }
        match s.split(' ').collect::<Vec<_>>()[..] {
            [a, b] => out.push((a.to_owned(), b.to_owned())),
            _ => {
                return Err(Error::Json(format!(
                    "model.merges[{i}] = {s:?} must be two tokens separated by one space"
                )))
            }
        }
    }
    Ok(out)
}

fn parse_normalizer(v: &Value) -> Result<Normalizer> {
    let o = obj(v, "normalizer")?;
    let ty = type_of(o, "normalizer")?;
    match ty {
        "BertNormalizer" => Ok(Normalizer::Bert(BertNormalizerConfig {
            clean_text: get_bool(o, "clean_text", "normalizer", Some(true))?,
            handle_chinese_chars: get_bool(o, "handle_chinese_chars", "normalizer", Some(true))?,
            strip_accents: opt_bool(o, "strip_accents", "normalizer")?,
            lowercase: get_bool(o, "lowercase", "normalizer", Some(true))?,
        })),
        "NFC" => Ok(Normalizer::Form(Form::Nfc)),
        "NFD" => Ok(Normalizer::Form(Form::Nfd)),
        "NFKC" => Ok(Normalizer::Form(Form::Nfkc)),
        "NFKD" => Ok(Normalizer::Form(Form::Nfkd)),
        "Lowercase" => Ok(Normalizer::Lowercase),
        "StripAccents" => Ok(Normalizer::StripAccents),
        "Sequence" => {
            let list = o
                .get("normalizers")
                .and_then(|x| x.as_array())
                .ok_or_else(|| Error::Json("normalizer Sequence needs a \"normalizers\" array".into()))?;
            Ok(Normalizer::Sequence(list.iter().map(parse_normalizer).collect::<Result<_>>()?))
        }
        other => Err(Error::Unsupported(format!(
            "normalizer type {other:?} (supported: BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Sequence)"
        ))),
    }
}

fn parse_pre_tokenizer(v: &Value) -> Result<PreTokenizer> {
    let o = obj(v, "pre_tokenizer")?;
    match type_of(o, "pre_tokenizer")? {
        "BertPreTokenizer" => Ok(PreTokenizer::Bert),
        other => {
            Err(Error::Unsupported(format!("pre_tokenizer type {other:?} (supported: BertPreTokenizer)")))
        }
    }
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

/// A `TemplateProcessing` or `BertProcessing` post-processor found at JSON path `path`
/// (`post_processor`, or a step of a `Sequence` of them).
pub(crate) fn parse_post_processor(v: &Value, path: &str) -> Result<PostProcessor> {
    let o = obj(v, path)?;
    match type_of(o, path)? {
        "TemplateProcessing" => {
            let single = parse_template(o.get("single").unwrap_or(&Value::Null), &format!("{path}.single"))?;
            let pair = parse_template(o.get("pair").unwrap_or(&Value::Null), &format!("{path}.pair"))?;
            let mut specials = HashMap::new();
            if let Some(st) = o.get("special_tokens") {
                for (name, def) in obj(st, &format!("{path}.special_tokens"))? {
                    let d = obj(def, &format!("{path}.special_tokens[{name:?}]"))?;
                    let ids = d
                        .get("ids")
                        .and_then(|x| x.as_array())
                        .ok_or_else(|| Error::Json(format!("special token {name:?} needs ids")))?
                        .iter()
                        .map(|x| x.as_u64().filter(|&i| i <= u32::MAX as u64 / 2).map(|i| i as u32))
                        .collect::<Option<Vec<u32>>>()
                        .ok_or_else(|| {
                            Error::Json(format!("special token {name:?}: ids must be integers"))
                        })?;
                    let tokens = d
                        .get("tokens")
                        .and_then(|x| x.as_array())
                        .ok_or_else(|| Error::Json(format!("special token {name:?} needs tokens")))?
                        .iter()
                        .map(|x| x.as_str().map(Arc::from))
                        .collect::<Option<Vec<Arc<str>>>>()
                        .ok_or_else(|| {
                            Error::Json(format!("special token {name:?}: tokens must be strings"))
                        })?;
                    if ids.len() != tokens.len() {
                        return Err(Error::Invalid(format!(
                            "special token {name:?}: ids and tokens differ in length"
                        )));
                    }
                    specials.insert(name.clone(), SpecialTokenDef { ids, tokens });
                }
            }
            for piece in single.iter().chain(&pair) {
                if let TemplatePiece::Special { id, .. } = piece {
                    if !specials.contains_key(id) {
                        return Err(Error::Invalid(format!(
                            "template uses special token {id:?} that special_tokens does not define"
                        )));
                    }
                }
            }
            if single.iter().any(|p| matches!(p, TemplatePiece::Sequence { seq: 1, .. })) {
                return Err(Error::Invalid("the single template may not use sequence B".into()));
            }
            Ok(PostProcessor::Template { single, pair, specials })
        }
        "BertProcessing" => Ok(PostProcessor::Bert {
            sep: parse_pair(o.get("sep"), &format!("{path}.sep"))?,
            cls: parse_pair(o.get("cls"), &format!("{path}.cls"))?,
        }),
        other => Err(Error::Unsupported(format!(
            "{path} type {other:?} (supported: TemplateProcessing, BertProcessing)"
        ))),
    }
}

fn parse_decoder(v: &Value) -> Result<Decoder> {
    let o = obj(v, "decoder")?;
    match type_of(o, "decoder")? {
        "WordPiece" => Ok(Decoder::WordPiece {
            prefix: match o.get("prefix") {
                None => "##".to_owned(),
                Some(Value::String(s)) => s.clone(),
                Some(v) => {
                    return Err(Error::Json(format!("decoder.prefix must be a string, found {}", kind(v))))
                }
            },
            cleanup: get_bool(o, "cleanup", "decoder", Some(true))?,
        }),
        other => Err(Error::Unsupported(format!("decoder type {other:?} (supported: WordPiece)"))),
    }
}

fn parse_direction(o: &Obj, what: &str) -> Result<Direction> {
    match o.get("direction") {
        None => Ok(Direction::Right),
        Some(Value::String(s)) if s == "Right" => Ok(Direction::Right),
        Some(Value::String(s)) if s == "Left" => Ok(Direction::Left),
        Some(v) => Err(Error::Json(format!("{what}.direction must be \"Left\" or \"Right\", found {v}"))),
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
                "padding.strategy must be \"BatchLongest\" or {{\"Fixed\": n}}, found {v}"
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
    let (mut t, source) = if let Some(Value::String(txt)) = o.get("tokenprism_vocab_txt") {
        (tokenizer_from_vocab_txt(txt)?, Source::VocabTxt(txt.as_str().into()))
    } else {
        (parse_tokenizer_json(state)?, Source::Json(state.into()))
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

/// The text a tokenizer was loaded from.
#[derive(Clone, Debug)]
pub enum Source {
    Json(Arc<str>),
    VocabTxt(Arc<str>),
}
