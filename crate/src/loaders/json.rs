//! One pass over a `tokenizer.json` that reads the model's vocabulary and merges as plain
//! lists and everything else as JSON values.
//!
//! A vocabulary read as a JSON object costs an ordered-map insertion (string comparisons) per
//! token, and merges read as values an array per pair: over half of loading bert-base-uncased
//! (30,522 tokens) went there. The rest of the file is small and read as values, so that
//! the loaders keep their JSON paths in every error.

use crate::error::{Error, Result};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;

/// `visit_*` for JSON's scalars, each wrapping the plain value with `$wrap`.
macro_rules! forward_scalars_to_value {
    ($wrap:expr) => {
        fn visit_bool<E>(self, v: bool) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::Bool(v)))
        }
        fn visit_i64<E>(self, v: i64) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::from(v)))
        }
        fn visit_u64<E>(self, v: u64) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::from(v)))
        }
        fn visit_f64<E>(self, v: f64) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::from(v)))
        }
        fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::String(v.to_owned())))
        }
        fn visit_string<E>(self, v: String) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::String(v)))
        }
        fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::Null))
        }
        fn visit_none<E>(self) -> std::result::Result<Self::Value, E> {
            Ok(($wrap)(Value::Null))
        }
    };
}

/// Scalars and lists as plain values (for a visitor whose own shape is an object).
macro_rules! forward_to_value {
    ($wrap:expr) => {
        forward_scalars_to_value!($wrap);
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Self::Value, A::Error> {
            ValueVisitor.visit_seq(seq).map($wrap)
        }
    };
}

/// A `tokenizer.json` as read: `root` with `model.vocab` and `model.merges` set to null when
/// they were read into `vocab` and `merges` (an absent field stays absent).
pub(crate) struct TokenizerJson {
    pub root: Value,
    pub vocab: Option<VocabJson>,
    pub merges: Option<MergesJson>,
}

/// `model.vocab`: an object's entries in file order, or any other JSON (a Unigram list).
pub(crate) enum VocabJson {
    Entries(Vec<(String, Value)>),
    Other(Value),
}

/// `model.merges`: a list of items, each a pair of strings or any other JSON; or not a list.
pub(crate) enum MergesJson {
    Items(Vec<Merge>),
    Other(Value),
}

pub(crate) enum Merge {
    Pair(String, String),
    Other(Value),
}

pub(crate) fn parse(json: &str) -> Result<TokenizerJson> {
    let mut de = serde_json::Deserializer::from_str(json);
    let root = de.deserialize_any(RootVisitor).map_err(|e| Error::Json(e.to_string()))?;
    de.end().map_err(|e| Error::Json(e.to_string()))?;
    Ok(root)
}

/// JSON's name for a value's kind, for errors.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How an error names a value it refuses: a string or an integer as itself, anything else by
/// its kind (writing a float would bring serde_json's float writer, 17 KB of tables, into the
/// wasm modules).
pub(crate) fn shown(v: &Value) -> String {
    match (v, v.as_i64(), v.as_u64()) {
        (Value::String(s), _, _) => format!("{s:?}"),
        (_, Some(i), _) => i.to_string(),
        (_, _, Some(u)) => u.to_string(),
        _ => kind(v).to_owned(),
    }
}

impl VocabJson {
    /// Token → id, as the reference reads an object of ids (a repeated token keeps its last id).
    pub(crate) fn ids(self, path: &str) -> Result<HashMap<String, u32>> {
        let entries = match self {
            VocabJson::Entries(e) => e,
            VocabJson::Other(v) => {
                return Err(Error::Json(format!("{path} must be an object, found {}", kind(&v))))
            }
        };
        let mut vocab = HashMap::with_capacity(entries.len());
        for (tok, id) in entries {
            let id = id.as_u64().filter(|&x| x <= u32::MAX as u64 / 2).ok_or_else(|| {
                Error::Json(format!(
                    "{path}[{tok:?}] must be a non-negative integer id, found {}",
                    shown(&id)
                ))
            })?;
            vocab.insert(tok, id as u32);
        }
        Ok(vocab)
    }

    /// The value as JSON (for components that read it as such: Unigram's list).
    #[cfg(feature = "general")]
    pub(crate) fn into_value(self) -> Value {
        match self {
            VocabJson::Entries(e) => Value::Object(e.into_iter().collect()),
            VocabJson::Other(v) => v,
        }
    }
}

impl MergesJson {
    /// The merges in order: `[["a", "b"], ...]`, or the older `["a b", ...]` (`#version` lines
    /// skipped, as the reference skips them in both merges.txt and this form).
    pub(crate) fn pairs(self, path: &str) -> Result<Vec<(String, String)>> {
        let items = match self {
            MergesJson::Items(items) => items,
            MergesJson::Other(v) => {
                return Err(Error::Json(format!("{path} must be an array, found {}", kind(&v))))
            }
        };
        let all_pairs = items.iter().all(|m| match m {
            Merge::Pair(..) => true,
            Merge::Other(v) => v.is_array(),
        });
        let mut out = Vec::with_capacity(items.len());
        for (i, m) in items.into_iter().enumerate() {
            match m {
                Merge::Pair(a, b) if all_pairs => out.push((a, b)),
                Merge::Other(m) if all_pairs => {
                    return Err(Error::Json(format!(
                        "{path}[{i}] must be a pair of strings, found {}",
                        kind(&m)
                    )))
                }
                Merge::Other(Value::String(s)) => {
                    if s.starts_with("#version") {
                        continue;
                    }
                    match s.split(' ').collect::<Vec<_>>()[..] {
                        [a, b] => out.push((a.to_owned(), b.to_owned())),
                        _ => {
                            return Err(Error::Json(format!(
                                "{path}[{i}] = {s:?} must be two tokens separated by one space"
                            )))
                        }
                    }
                }
                m => {
                    let m = match m {
                        Merge::Pair(a, b) => Value::Array(vec![Value::String(a), Value::String(b)]),
                        Merge::Other(v) => v,
                    };
                    return Err(Error::Json(format!(
                        "{path}[{i}] must be a string \"a b\" or a pair, found {}",
                        kind(&m)
                    )));
                }
            }
        }
        Ok(out)
    }
}

struct RootVisitor;

impl<'de> Visitor<'de> for RootVisitor {
    type Value = TokenizerJson;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer.json object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<TokenizerJson, A::Error> {
        let mut root = Map::new();
        let (mut vocab, mut merges) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            if key == "model" {
                let model: ModelJson = map.next_value()?;
                // A repeated "model" replaces the earlier one, as for any repeated key.
                (vocab, merges) = (model.vocab, model.merges);
                root.insert(key, model.rest);
            } else {
                root.insert(key, map.next_value()?);
            }
        }
        Ok(TokenizerJson { root: Value::Object(root), vocab, merges })
    }

    // Anything else is kept as it is, for the loaders' own "must be an object" errors.
    forward_to_value!(|v| TokenizerJson { root: v, vocab: None, merges: None });
}

/// The model's value: its other fields in `rest`.
struct ModelJson {
    rest: Value,
    vocab: Option<VocabJson>,
    merges: Option<MergesJson>,
}

impl<'de> Deserialize<'de> for ModelJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(ModelVisitor)
    }
}

struct ModelVisitor;

impl<'de> Visitor<'de> for ModelVisitor {
    type Value = ModelJson;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a model object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<ModelJson, A::Error> {
        let mut rest = Map::new();
        let (mut vocab, mut merges) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "vocab" => vocab = Some(map.next_value::<VocabJson>()?),
                "merges" => merges = Some(map.next_value::<MergesJson>()?),
                _ => {
                    rest.insert(key, map.next_value()?);
                    continue;
                }
            }
            // Kept as a key, so that "which fields does the model have" still reads the same.
            rest.insert(key, Value::Null);
        }
        Ok(ModelJson { rest: Value::Object(rest), vocab, merges })
    }

    forward_to_value!(|v| ModelJson { rest: v, vocab: None, merges: None });
}

impl<'de> Deserialize<'de> for VocabJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(VocabVisitor)
    }
}

struct VocabVisitor;

impl<'de> Visitor<'de> for VocabVisitor {
    type Value = VocabJson;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a vocabulary")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<VocabJson, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(entry) = map.next_entry::<String, Value>()? {
            entries.push(entry);
        }
        Ok(VocabJson::Entries(entries))
    }

    forward_to_value!(VocabJson::Other);
}

impl<'de> Deserialize<'de> for MergesJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(MergesVisitor)
    }
}

struct MergesVisitor;

impl<'de> Visitor<'de> for MergesVisitor {
    type Value = MergesJson;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of merges")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<MergesJson, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Merge>()? {
            items.push(item);
        }
        Ok(MergesJson::Items(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<MergesJson, A::Error> {
        ValueVisitor.visit_map(map).map(MergesJson::Other)
    }

    forward_scalars_to_value!(MergesJson::Other);
}

impl<'de> Deserialize<'de> for Merge {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(MergeVisitor)
    }
}

struct MergeVisitor;

impl<'de> Visitor<'de> for MergeVisitor {
    type Value = Merge;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Merge, A::Error> {
        let mut items: Vec<Value> = Vec::with_capacity(2);
        while let Some(v) = seq.next_element::<Value>()? {
            items.push(v);
        }
        if let [Value::String(_), Value::String(_)] = items.as_slice() {
            let mut it = items.into_iter();
            if let (Some(Value::String(a)), Some(Value::String(b))) = (it.next(), it.next()) {
                return Ok(Merge::Pair(a, b));
            }
            unreachable!("checked just above");
        }
        Ok(Merge::Other(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Merge, A::Error> {
        ValueVisitor.visit_map(map).map(Merge::Other)
    }

    forward_scalars_to_value!(Merge::Other);
}

/// A visitor that builds a plain JSON value (serde_json's own is private).
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    forward_scalars_to_value!(std::convert::identity);
}
