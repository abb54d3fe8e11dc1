//! Reading BPE vocabularies: tiktoken `.tiktoken` rank files and Hugging Face `tokenizer.json`
//! BPE models, both turned into the same [`Model`]: a [`Vocab`] and a [`PairTable`].
//!
//! The two formats say where a pair's rank comes from differently:
//! - tiktoken: parts A and B can merge when the bytes A+B are a token; the rank is that
//!   token's rank (which is also its id). So every split of every token into two tokens is a
//!   pair, ranked by the whole.
//! - `tokenizers`: only the listed merges exist; the rank is the merge's line number and the
//!   result is `vocab[A+B]`.

use std::collections::HashMap;

use super::table::{PairTable, Vocab};
use crate::{Error, Result};

/// A vocabulary with its merges, ready to encode with.
#[derive(Clone, Debug)]
pub struct Model {
    pub vocab: Vocab,
    pub pairs: PairTable,
    /// The id of each single byte.
    pub byte_ids: [u32; 256],
}

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

fn check_size(n: usize, what: &str) -> Result<()> {
    if n > 1 << super::table::ID_BITS {
        return Err(Error::Unsupported(format!(
            "{what}: {n} ids or merges, more than the {} supported",
            1u32 << super::table::ID_BITS
        )));
    }
    Ok(())
}

fn byte_ids(vocab: &Vocab, what: &str) -> Result<[u32; 256]> {
    let mut ids = [0u32; 256];
    for b in 0..=255u8 {
        ids[b as usize] = vocab.get_id(&[b]).ok_or_else(|| {
            Error::Invalid(format!("{what}: byte {b:#04x} is not a token, so some text could not be encoded"))
        })?;
    }
    Ok(ids)
}

impl Model {
    /// A model from tiktoken ranks (`(bytes, rank)`; the rank is also the id).
    pub fn from_ranks(tokens: Vec<(Vec<u8>, u32)>) -> Result<Model> {
        let vocab = Vocab::new(tokens).map_err(|e| Error::Invalid(format!("tiktoken ranks: {e}")))?;
        check_size(vocab.id_bound() as usize, "tiktoken ranks")?;
        let byte_ids = byte_ids(&vocab, "tiktoken ranks")?;
        // tiktoken's rule lets parts A and B merge whenever A+B is a token, so a token of n
        // bytes could be formed from up to n-1 pairs. Only one of them ever is: when merging
        // forms token T somewhere in a piece, no merge crossed T's span, so the merges inside
        // it ran in the same order as when merging T's bytes alone; T is formed by the last
        // merge of its own encoding, and only if that encoding is [T]. So the table holds one
        // pair per token (half the entries of all splits, and a unique split to show).
        //
        // That last merge is found by merging T's bytes with the pairs of all shorter tokens
        // (the only ones that can form inside T): it stops at the two parts T is made of.
        // Going by increasing length, those pairs are always in the table already.
        let mut order: Vec<(u32, &[u8])> = vocab.iter().filter(|(_, b)| b.len() >= 2).collect();
        order.sort_by_key(|&(id, b)| (b.len(), id));
        let mut pairs = PairTable::with_capacity(order.len());
        let mut scratch = super::merge::Scratch::default();
        let mut parts = Vec::new();
        for (id, b) in order {
            parts.clear();
            parts.extend(b.iter().map(|&x| byte_ids[x as usize]));
            super::merge::merge(&pairs, &mut parts, &mut scratch);
            if let [a, b] = parts[..] {
                pairs.insert((a, b), id);
            }
        }
        Ok(Model { pairs, vocab, byte_ids })
    }

    /// A model from a Hugging Face BPE vocabulary and merge list, whose token strings are
    /// byte-level (each char stands for one byte, see [`byte_level_decode`]).
    pub fn from_merges(vocab: &HashMap<String, u32>, merges: &[(String, String)]) -> Result<Model> {
        let tokens: Vec<(Vec<u8>, u32)> = vocab.iter().map(|(t, &id)| (byte_level_decode(t), id)).collect();
        let v = Vocab::new(tokens).map_err(|e| Error::Invalid(format!("BPE vocab: {e}")))?;
        check_size(v.id_bound() as usize, "BPE vocab")?;
        check_size(merges.len(), "BPE merges")?;
        let byte_ids = byte_ids(&v, "BPE vocab")?;
        let mut entries = Vec::with_capacity(merges.len());
        for (rank, (a, b)) in merges.iter().enumerate() {
            let get = |t: &str| {
                vocab.get(t).copied().ok_or_else(|| {
                    Error::Invalid(format!("merge {rank} ({a:?} {b:?}): {t:?} is not in the vocab"))
                })
            };
            let merged = format!("{a}{b}");
            entries.push(((get(a)?, get(b)?), rank as u32, get(&merged)?));
        }
        Ok(Model { vocab: v, pairs: PairTable::new(&entries), byte_ids })
    }
}

/// GPT-2's byte-to-char table: the printable bytes `!`..`~`, `¡`..`¬` and `®`..`ÿ` stand for
/// themselves; the other 68 bytes, in order, become U+0100, U+0101, ... so that every byte
/// is a visible, non-space char in vocab files.
pub fn byte_to_char(b: u8) -> char {
    BYTE_TO_CHAR[b as usize]
}

static BYTE_TO_CHAR: [char; 256] = {
    let mut t = ['\0'; 256];
    let mut next = 0x100u32;
    let mut b = 0usize;
    while b < 256 {
        let printable = matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
        let cp = if printable {
            b as u32
        } else {
            next += 1;
            next - 1
        };
        t[b] = match char::from_u32(cp) {
            Some(c) => c,
            None => panic!("unreachable"),
        };
        b += 1;
    }
    t
};

/// The byte a byte-level char stands for, if it is one.
pub fn char_to_byte(c: char) -> Option<u8> {
    let cp = c as u32;
    match cp {
        0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF => Some(cp as u8),
        0x100..=0x143 => Some(REMAPPED[(cp - 0x100) as usize]),
        _ => None,
    }
}

/// The 68 bytes that are not printable, in order: the ones mapped to U+0100 and on.
static REMAPPED: [u8; 68] = {
    let mut t = [0u8; 68];
    let mut n = 0;
    let mut b = 0usize;
    while b < 256 {
        if !matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF) {
            t[n] = b as u8;
            n += 1;
        }
        b += 1;
    }
    t
};

/// A byte-level token string back to its bytes. A char outside the byte-level alphabet
/// (found in some vocabularies' special entries) stands for its own UTF-8 bytes, as in the
/// `tokenizers` ByteLevel decoder.
pub fn byte_level_decode(token: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len());
    for c in token.chars() {
        match char_to_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// Bytes to their byte-level string (the form vocab files and the page show).
pub fn byte_level_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| byte_to_char(b)).collect()
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

    #[test]
    fn byte_level_alphabet() {
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(byte_to_char(0xAD), 'Ń'); // the last of the 68 remapped bytes
        let mut seen = std::collections::HashSet::new();
        for b in 0..=255u8 {
            let c = byte_to_char(b);
            assert!(seen.insert(c));
            assert_eq!(char_to_byte(c), Some(b));
        }
        assert_eq!(byte_level_decode("ĠhelloĊ"), b" hello\n");
        assert_eq!(byte_level_encode(b" hello\n"), "ĠhelloĊ");
        assert_eq!(char_to_byte('ń'), None); // U+0144, just past the 68 remapped bytes
    }

    #[test]
    fn tiktoken_pairs_are_every_split() {
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        tokens.push((b"ab".to_vec(), 256));
        tokens.push((b"bc".to_vec(), 257));
        tokens.push((b"abc".to_vec(), 258));
        let m = Model::from_ranks(tokens).unwrap();
        use super::super::table::{merge_id, merge_rank};
        assert_eq!(merge_id(m.pairs.get(b'a' as u32, b'b' as u32)), 256);
        assert_eq!(merge_rank(m.pairs.get(256, b'c' as u32)), 258);
        // (ab, c) and (a, bc) both spell abc, but merging "abc" alone always makes ab first.
        assert_eq!(m.pairs.len(), 3);
        assert_eq!(m.pairs.get(b'a' as u32, 257), super::super::table::NO_MERGE);
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
            let m = super::Model::from_ranks(super::parse_tiktoken(&data).unwrap()).unwrap();
            eprintln!("{name}: {} tokens, {} pairs", m.vocab.len(), m.pairs.len());
        }
    }
}
