//! tiktoken's `.tiktoken` rank files (one `base64(token bytes) rank` per line) and the
//! encodings tiktoken names: their split pattern and special tokens.

#[cfg(feature = "general")]
use crate::models::bpe::Model;
use crate::pre_tokenizers::byte_level::Pattern;
use crate::{Error, Result};

/// Decodes standard base64 (with `=` padding), as used in `.tiktoken` files.
pub fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let s = s.strip_suffix(b"==").or_else(|| s.strip_suffix(b"=")).unwrap_or(s);
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for &c in chunk {
            acc = acc << 6 | val(c)?;
        }
        match chunk.len() {
            4 => out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]),
            3 => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
            2 => out.push((acc >> 4) as u8),
            _ => unreachable!(),
        }
    }
    Some(out)
}

/// Encodes standard base64 (with `=` padding).
pub fn base64_encode(b: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let acc = chunk.iter().enumerate().fold(0u32, |a, (i, &x)| a | (x as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(acc >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Parses a `.tiktoken` file: one `base64(token bytes) rank` per line.
pub fn parse_tiktoken(data: &[u8]) -> Result<Vec<(Vec<u8>, u32)>> {
    let mut tokens = Vec::new();
    for (n, line) in data.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let bad = || Error::Json(format!("tiktoken file, line {}: expected \"<base64> <rank>\"", n + 1));
        let sp = line.iter().position(|&b| b == b' ').ok_or_else(bad)?;
        let bytes = base64_decode(&line[..sp]).ok_or_else(bad)?;
        let rank =
            std::str::from_utf8(&line[sp + 1..]).ok().and_then(|r| r.parse::<u32>().ok()).ok_or_else(bad)?;
        tokens.push((bytes, rank));
    }
    Ok(tokens)
}

/// Special tokens and their ids.
pub type SpecialTokens = Vec<(String, u32)>;

/// The tiktoken encodings this crate knows: their pattern and special tokens.
pub fn tiktoken_encoding(name: &str) -> Option<(Pattern, SpecialTokens)> {
    const EOT: &str = "<|endoftext|>";
    const FIM: [&str; 3] = ["<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"];
    let s = |t: &str, id: u32| (t.to_string(), id);
    Some(match name {
        "gpt2" | "r50k_base" | "p50k_base" => (Pattern::Gpt2, vec![s(EOT, 50256)]),
        "p50k_edit" => {
            (Pattern::Gpt2, vec![s(EOT, 50256), s(FIM[0], 50281), s(FIM[1], 50282), s(FIM[2], 50283)])
        }
        "cl100k_base" => (
            Pattern::Cl100k,
            vec![
                s(EOT, 100257),
                s(FIM[0], 100258),
                s(FIM[1], 100259),
                s(FIM[2], 100260),
                s("<|endofprompt|>", 100276),
            ],
        ),
        "o200k_base" => (Pattern::O200k, vec![s(EOT, 199999), s("<|endofprompt|>", 200018)]),
        "o200k_harmony" => {
            let mut v = vec![s("<|endofprompt|>", 200018), s("<|startoftext|>", 199998), s(EOT, 199999)];
            let named = [
                (200002, "return"),
                (200003, "constrain"),
                (200005, "channel"),
                (200006, "start"),
                (200007, "end"),
                (200008, "message"),
                (200012, "call"),
            ];
            for id in 200000..201088u32 {
                match named.iter().find(|n| n.0 == id) {
                    Some(&(_, n)) => v.push(s(&format!("<|{n}|>"), id)),
                    None => v.push(s(&format!("<|reserved_{id}|>"), id)),
                }
            }
            (Pattern::O200k, v)
        }
        _ => return None,
    })
}

/// The tiktoken encoding a name stands for: one tiktoken knows ([`tiktoken_encoding`]), or
/// such a name without its `_base` (a `.tiktoken` file's stem: `cl100k`, `o200k` ...).
pub fn encoding_named(name: &str) -> Option<(String, Pattern, SpecialTokens)> {
    [name.to_string(), format!("{name}_base")]
        .into_iter()
        .find_map(|n| tiktoken_encoding(&n).map(|(p, s)| (n, p, s)))
}

pub(crate) fn unknown_encoding(name: &str) -> Error {
    Error::Unsupported(format!(
        "unknown tiktoken encoding {name:?}: expected gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, \
         o200k_base or o200k_harmony (or the name without _base)"
    ))
}

/// A `.tiktoken` file of the encoding `name` (see [`encoding_named`]) as the general pipeline,
/// its special tokens as added tokens (which `tokenizers` finds in any text).
#[cfg(feature = "general")]
pub fn tokenizer(name: &str, data: &[u8]) -> Result<crate::tokenizer::Tokenizer> {
    let (_, pattern, specials) = encoding_named(name).ok_or_else(|| unknown_encoding(name))?;
    let added =
        specials.iter().map(|(t, id)| crate::tokenizer::AddedToken::new(t.as_str(), *id, true)).collect();
    general_tokenizer(parse_tiktoken(data)?, pattern, added, None)
}

/// A tiktoken encoding (`tokens`: bytes and id, merged by id as tiktoken merges by rank) as
/// the general pipeline, built as a Hugging Face conversion writes it: a BPE model whose merges
/// are, for each token of two bytes or more in id order, the two parts BPE makes it of (see
/// [`Model::from_ranks`]), with `ignore_merges` (a pre-token that is a token is that token);
/// the pattern's Splits (behavior Isolated) on the regex engine, spelled for it
/// ([`Pattern::oniguruma_regexes`]); a ByteLevel pre-tokenizer without regex and decoder; the
/// special tokens `added` in the vocabulary and as added tokens.
#[cfg(feature = "general")]
pub fn general_tokenizer(
    tokens: Vec<(Vec<u8>, u32)>,
    pattern: Pattern,
    added: Vec<crate::tokenizer::AddedToken>,
    post_processor: Option<crate::processors::PostProcessor>,
) -> Result<crate::tokenizer::Tokenizer> {
    use crate::models::bpe::general::{Bpe, BpeOptions};
    use crate::pre_tokenizers::byte_level::alphabet::byte_level_encode;
    use crate::pre_tokenizers::byte_level::ByteLevel;
    use crate::pre_tokenizers::split::{Split, SplitDelimiterBehavior, SplitPattern};
    use crate::pre_tokenizers::PreTokenizer;

    let model = Model::from_ranks(tokens)?;
    let text = |id: u32| byte_level_encode(model.vocab.get_bytes(id).expect("a pair's parts are tokens"));
    let mut pairs: Vec<((u32, u32), u32)> = model.pairs.entries().collect();
    pairs.sort_unstable_by_key(|&(_, rank)| rank);
    let merges: Vec<(String, String)> = pairs.iter().map(|&((a, b), _)| (text(a), text(b))).collect();
    let mut vocab: std::collections::HashMap<String, u32> =
        model.vocab.iter().map(|(id, b)| (byte_level_encode(b), id)).collect();
    // The special tokens are in the vocabulary too, as in Hugging Face's conversions: an added
    // token keeps the id the model gives its text (else it would get the next free id).
    for t in &added {
        if vocab.insert(t.content.to_string(), t.id).is_some() {
            return Err(Error::Unsupported(format!(
                "the special token {:?} is also an ordinary token's text",
                t.content
            )));
        }
    }
    let bpe = Bpe::new(vocab, &merges, BpeOptions { ignore_merges: true, ..BpeOptions::default() })?;
    let mut steps = Vec::new();
    for r in pattern.oniguruma_regexes() {
        let split = Split::new(SplitPattern::Regex(r.to_string()), SplitDelimiterBehavior::Isolated, false)?;
        steps.push(PreTokenizer::Split(split));
    }
    steps.push(PreTokenizer::ByteLevel(ByteLevel {
        add_prefix_space: false,
        trim_offsets: true,
        use_regex: false,
    }));
    crate::tokenizer::Tokenizer::new(
        None,
        Some(PreTokenizer::Sequence(steps)),
        crate::models::Model::Bpe(bpe),
        post_processor,
        Some(crate::decoders::Decoder::ByteLevel),
        added,
        None,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks with a gap (ids 259 to 299 unused) and a special token after it: the general
    /// pipeline keeps every id, takes a whole token whole, merges the rest by rank.
    #[cfg(feature = "general")]
    #[test]
    fn general_tokenizer_keeps_ids() {
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        tokens.extend([(b"ab".to_vec(), 256), (b"bc".to_vec(), 257), (b"abc".to_vec(), 258)]);
        let special = crate::tokenizer::AddedToken::new("<|x|>", 300, true);
        let t = general_tokenizer(tokens, Pattern::Cl100k, vec![special], None).unwrap();
        assert_eq!(t.encode_ids("abc abd", false).unwrap(), [258, 32, 256, b'd' as u32]);
        assert_eq!(t.encode_ids("abc<|x|>bc", false).unwrap(), [258, 300, 257]);
        assert_eq!(t.decode(&[258, 300, 257], false).unwrap(), "abc<|x|>bc");
    }

    #[test]
    fn base64() {
        assert_eq!(base64_decode(b"IQ==").unwrap(), b"!");
        assert_eq!(base64_decode(b"aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode(b"aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(base64_decode(b"").unwrap(), b"");
        assert!(base64_decode(b"a").is_none());
        assert!(base64_decode(b"a*==").is_none());
    }
}

#[cfg(test)]
mod size_stats {
    /// Prints the pair-table sizes of the real encodings (`cargo test pair_counts -- --ignored
    /// --nocapture`, with the files of scripts/data/bpe_data.sh).
    #[test]
    #[ignore]
    fn pair_counts() {
        let home = std::env::var("HOME").unwrap();
        for name in ["o200k_base", "cl100k_base", "r50k_base"] {
            let data = std::fs::read(format!("{home}/.cache/tokenprism/data/bpe/{name}.tiktoken")).unwrap();
            let m = crate::models::bpe::Model::from_ranks(super::parse_tiktoken(&data).unwrap()).unwrap();
            eprintln!("{name}: {} tokens, {} pairs", m.vocab.len(), m.pairs.len());
        }
    }
}
