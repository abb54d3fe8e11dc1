//! tiktoken's `.tiktoken` rank files (one `base64(token bytes) rank` per line) and the
//! encodings tiktoken names: their split pattern and special tokens.

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

/// The tiktoken encodings this crate knows: their pattern and special tokens.
pub fn tiktoken_encoding(name: &str) -> Option<(Pattern, Vec<(String, u32)>)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
