//! Mistral's `tekken.json` files: a tiktoken encoding in JSON, with the special tokens first.
//!
//! What a file says, as mistral-common 1.13.1's `Tekkenizer.from_file` reads it:
//! - `config.pattern`: the pre-tokenizer's regex (tiktoken's `pat_str`);
//! - `config.default_vocab_size` ids in all, of which the first
//!   `config.default_num_special_tokens` are special tokens;
//! - `vocab`: `{rank, token_bytes (base64), token_str}` in rank order (rank = position, the
//!   first 256 the single bytes); only the first `default_vocab_size - default_num_special_tokens`
//!   are used, and a token of rank r has id `r + default_num_special_tokens`;
//! - `special_tokens`: `{rank, token_str, is_control}`, rank = position. A file without them
//!   (allowed up to `config.version` v7) has the twenty of the older tokenizers, `<unk>`,
//!   `<s>`, `</s>`, `[INST]` ...; either list is filled up to the number of special tokens
//!   with `<SPECIAL_{id}>`.
//!
//! Text is encoded with no special token recognized in it (tiktoken's `encode` with no special
//! tokens): `<s>` typed in a text is three ordinary bytes.

use serde_json::{Map, Value};

use crate::loaders::json::kind;

use crate::loaders::tiktoken::base64_decode;
use crate::pre_tokenizers::byte_level::Pattern;
use crate::processors::{PostProcessor, SpecialTokenDef, TemplatePiece};
use crate::tokenizer::AddedToken;
use crate::{Error, Result};

/// A tekken file, read.
pub struct Tekken {
    /// The vocabulary's tokens with their ids (rank + number of special tokens).
    pub tokens: Vec<(Vec<u8>, u32)>,
    pub pattern: Pattern,
    /// The special tokens, id = position.
    pub specials: Vec<String>,
}

const OLD_SPECIALS: [&str; 20] = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

/// The tokenizer versions mistral-common 1.13.1 knows.
const VERSIONS: [&str; 7] = ["v1", "v2", "v3", "v7", "v11", "v13", "v15"];

fn invalid(what: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("tekken file: {what}"))
}

/// Whether `json` is a tekken file rather than a Hugging Face tokenizer.json: it has `config`
/// and `vocab` and no `model`.
pub fn is_tekken(json: &str) -> bool {
    // A tokenizer.json names its model; a tekken file has a config and a vocab. Substring tests,
    // not a parse: `parse` checks the shape and says what is wrong.
    !json.contains("\"model\":") && json.contains("\"config\"") && json.contains("\"vocab\"")
}

/// `obj[key]`, which must be there.
fn field<'a>(obj: &'a Map<String, Value>, path: &str, key: &str) -> Result<&'a Value> {
    obj.get(key).ok_or_else(|| invalid(format!("{path}{key}: missing")))
}

fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| invalid(format!("{path} must be an object, found {}", kind(v))))
}

fn string<'a>(obj: &'a Map<String, Value>, path: &str, key: &str) -> Result<&'a str> {
    let v = field(obj, path, key)?;
    v.as_str().ok_or_else(|| invalid(format!("{path}{key} must be a string, found {}", kind(v))))
}

fn count(obj: &Map<String, Value>, path: &str, key: &str) -> Result<usize> {
    let v = field(obj, path, key)?;
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| invalid(format!("{path}{key} must be a whole number, found {}", kind(v))))
}

/// Vocabulary entry `i`: its rank and base64 bytes (the path is formatted only for an error).
fn vocab_entry(t: &Value, i: usize) -> Result<(usize, &str)> {
    let rank = t.get("rank").and_then(Value::as_u64).and_then(|r| usize::try_from(r).ok());
    if let (Some(rank), Some(bytes)) = (rank, t.get("token_bytes").and_then(Value::as_str)) {
        return Ok((rank, bytes));
    }
    let path = format!("vocab[{i}].");
    let t = object(t, &path)?;
    Ok((count(t, &path, "rank")?, string(t, &path, "token_bytes")?))
}

fn list<'a>(v: &'a Value, path: &str) -> Result<&'a [Value]> {
    v.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| invalid(format!("{path} must be a list, found {}", kind(v))))
}

pub fn parse(json: &str) -> Result<Tekken> {
    // Values, not typed structs: serde's typed errors format floats, and that formatting
    // costs the general wasm module several KB.
    let file: Value = serde_json::from_str(json).map_err(|e| Error::Json(format!("tekken file: {e}")))?;
    let file = object(&file, "the file")?;
    if file.contains_key("model") {
        return Err(invalid("a Hugging Face tokenizer.json (it has a \"model\"), not a tekken file"));
    }
    let c = object(field(file, "", "config")?, "config")?;
    let c_version = string(c, "config.", "version")?;
    let c_pattern = string(c, "config.", "pattern")?;
    let version = VERSIONS
        .iter()
        .position(|v| *v == c_version)
        .ok_or_else(|| invalid(format!("config.version: unknown version {c_version:?}")))?;
    let pattern = Pattern::from_regexes(&[c_pattern]).ok_or_else(|| {
        Error::Unsupported(format!("tekken file: config.pattern: the pattern {c_pattern:?}"))
    })?;

    let n_special = count(c, "config.", "default_num_special_tokens")?;
    let mut specials: Vec<String> = match file.get("special_tokens").filter(|v| !v.is_null()) {
        Some(l) => {
            let mut out = Vec::new();
            for (i, t) in list(l, "special_tokens")?.iter().enumerate() {
                let path = format!("special_tokens[{i}].");
                let t = object(t, &path)?;
                let rank = count(t, &path, "rank")?;
                if rank != i {
                    return Err(invalid(format!(
                        "special_tokens[{i}].rank: {rank} (a special token's id is its position)"
                    )));
                }
                out.push(string(t, &path, "token_str")?.to_owned());
            }
            out
        }
        None if version <= 3 => OLD_SPECIALS.iter().map(|s| s.to_string()).collect(),
        None => return Err(invalid(format!("special_tokens: missing, which version {c_version} requires"))),
    };
    if specials.len() > n_special {
        return Err(invalid(format!(
            "{} special tokens, more than config.default_num_special_tokens ({n_special})",
            specials.len()
        )));
    }
    specials.extend((specials.len()..n_special).map(|i| format!("<SPECIAL_{i}>")));
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = specials.iter().find(|s| !seen.insert(s.as_str())) {
        return Err(invalid(format!("the special token {dup:?} appears twice")));
    }

    let inner = count(c, "config.", "default_vocab_size")?
        .checked_sub(n_special)
        .ok_or_else(|| invalid("config.default_vocab_size is below config.default_num_special_tokens"))?;
    let vocab = list(field(file, "", "vocab")?, "vocab")?;
    if vocab.len() < inner {
        return Err(invalid(format!(
            "vocab has {} tokens, config asks for {inner} besides the special tokens",
            vocab.len()
        )));
    }
    let id_of = |rank: usize| {
        u32::try_from(rank + n_special).map_err(|_| invalid(format!("rank {rank} does not fit in 32 bits")))
    };
    let mut tokens = Vec::with_capacity(inner);
    for (i, t) in vocab.iter().take(inner).enumerate() {
        let (rank, token_bytes) = vocab_entry(t, i)?;
        if rank != i {
            return Err(invalid(format!("vocab[{i}].rank: {rank} (ranks are positions)")));
        }
        let bytes = base64_decode(token_bytes.as_bytes())
            .ok_or_else(|| invalid(format!("vocab[{i}].token_bytes: not base64")))?;
        if i < 256 && bytes != [i as u8] {
            return Err(invalid(format!("vocab[{i}]: the first 256 tokens are the single bytes")));
        }
        tokens.push((bytes, id_of(i)?));
    }
    Ok(Tekken { tokens, pattern, specials })
}

/// What `add_special_tokens` does with a tekken file: `<s>` before each input, as
/// mistral-common's `encode(text, bos=True, eos=False)` (none when the file has no `<s>`).
pub fn post_processor(specials: &[String]) -> Option<PostProcessor> {
    let bos = specials.iter().position(|t| t == "<s>")? as u32;
    let def = SpecialTokenDef { ids: vec![bos], tokens: vec!["<s>".into()] };
    let special = |type_id| TemplatePiece::Special { id: "<s>".into(), type_id };
    let seq = |seq, type_id| TemplatePiece::Sequence { seq, type_id };
    Some(PostProcessor::Template {
        single: vec![special(0), seq(0, 0)],
        pair: vec![special(0), seq(0, 0), special(1), seq(1, 1)],
        specials: [("<s>".to_string(), def)].into(),
    })
}

/// The special tokens as added tokens (id = position).
pub fn added_tokens(specials: &[String]) -> Vec<AddedToken> {
    specials.iter().enumerate().map(|(id, t)| AddedToken::new(t.as_str(), id as u32, true)).collect()
}

/// A tekken file as the general pipeline: see [`crate::loaders::tiktoken::general_tokenizer`].
/// Its special tokens are added tokens, which `tokenizers` recognizes in any text (the
/// byte-level engine's `encode_ordinary`, like mistral-common, never does).
#[cfg(feature = "general")]
pub fn tokenizer(json: &str) -> Result<crate::tokenizer::Tokenizer> {
    let t = parse(json)?;
    let pp = post_processor(&t.specials);
    crate::loaders::tiktoken::general_tokenizer(t.tokens, t.pattern, added_tokens(&t.specials), pp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(vocab_size: usize, n_special: usize, specials: &str, version: &str) -> String {
        let vocab: Vec<String> = (0..=255u8)
            .map(|b| format!(r#"{{"rank": {b}, "token_bytes": "{}", "token_str": null}}"#, b64(&[b])))
            .chain([format!(r#"{{"rank": 256, "token_bytes": "{}", "token_str": "ab"}}"#, b64(b"ab"))])
            .collect();
        let pattern =
            serde_json::to_string(crate::pre_tokenizers::byte_level::pattern::TEKKEN_REGEX).unwrap();
        format!(
            r#"{{"config": {{"pattern": {pattern}, "num_vocab_tokens": 257, "default_vocab_size": {vocab_size},
                "default_num_special_tokens": {n_special}, "version": "{version}"}},
               "vocab": [{}]{specials}}}"#,
            vocab.join(",")
        )
    }

    fn b64(b: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in b.chunks(3) {
            let n = c.iter().enumerate().fold(0u32, |x, (i, &y)| x | (y as u32) << (16 - 8 * i));
            for i in 0..4 {
                s.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
            }
        }
        s
    }

    #[test]
    fn ids_follow_the_special_tokens() {
        let t = parse(&file(30 + 257, 30, "", "v3")).unwrap();
        assert_eq!(t.pattern, Pattern::Tekken);
        assert_eq!(t.specials.len(), 30);
        assert_eq!(t.specials[1], "<s>");
        assert_eq!(t.specials[19], "[TOOL_CONTENT]");
        assert_eq!(t.specials[20], "<SPECIAL_20>");
        assert_eq!(t.tokens[0], (vec![0], 30));
        assert_eq!(t.tokens[256], (b"ab".to_vec(), 286));
        // The vocabulary is cut to the configured size.
        let t = parse(&file(30 + 256, 30, "", "v3")).unwrap();
        assert_eq!(t.tokens.len(), 256);
    }

    #[test]
    fn listed_special_tokens() {
        let list = r#", "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true},
            {"rank": 1, "token_str": "<s>", "is_control": true}]"#;
        let t = parse(&file(4 + 257, 4, list, "v13")).unwrap();
        assert_eq!(t.specials, ["<unk>", "<s>", "<SPECIAL_2>", "<SPECIAL_3>"]);
        assert_eq!(t.tokens[0].1, 4);
    }

    #[test]
    fn refusals() {
        let err = |s: String| parse(&s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err(file(30 + 257, 30, "", "v11")).contains("special_tokens: missing"));
        assert!(err(file(30 + 257, 30, "", "v99")).contains("unknown version"));
        assert!(err(file(10 + 257, 10, "", "v3")).contains("more than"));
        assert!(err(file(30 + 258, 30, "", "v3")).contains("vocab has 257 tokens"));
        let list = r#", "special_tokens": [{"rank": 1, "token_str": "<s>", "is_control": true}]"#;
        assert!(err(file(4 + 257, 4, list, "v13")).contains("special_tokens[0].rank"));
        assert!(is_tekken(&file(30 + 257, 30, "", "v3")));
        assert!(!is_tekken(r#"{"model": {}, "config": {}, "vocab": []}"#));
    }
}
