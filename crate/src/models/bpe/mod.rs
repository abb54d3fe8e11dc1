//! The BPE model: a vocabulary and its merges. tiktoken rank files and Hugging Face
//! `tokenizer.json` BPE models are both turned into the same [`Model`]: a [`Vocab`] and a
//! [`PairTable`].
//!
//! The two formats say where a pair's rank comes from differently:
//! - tiktoken: parts A and B can merge when the bytes A+B are a token; the rank is that
//!   token's rank (which is also its id). So every split of every token into two tokens is a
//!   pair, ranked by the whole.
//! - `tokenizers`: only the listed merges exist; the rank is the merge's line number and the
//!   result is `vocab[A+B]`.

use std::collections::HashMap;

pub(crate) mod cache;
#[cfg(feature = "general")]
pub mod general;
pub mod merge;
#[cfg(feature = "general")]
pub mod sentencepiece;
pub mod table;
pub(crate) mod words;

use crate::pre_tokenizers::byte_level::alphabet::byte_level_decode;
use crate::{Error, Result};
use table::{PairTable, Vocab};

/// A vocabulary with its merges, ready to encode with.
#[derive(Clone, Debug)]
pub struct Model {
    pub vocab: Vocab,
    pub pairs: PairTable,
    /// The id of each single byte.
    pub byte_ids: [u32; 256],
}
fn check_size(n: usize, what: &str) -> Result<()> {
    if n > 1 << table::ID_BITS {
        return Err(Error::Unsupported(format!(
            "{what}: {n} ids or merges, more than the {} supported",
            1u32 << table::ID_BITS
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
        let mut scratch = merge::Scratch::default();
        let mut parts = Vec::new();
        for (id, b) in order {
            parts.clear();
            parts.extend(b.iter().map(|&x| byte_ids[x as usize]));
            merge::merge(&pairs, &mut parts, &mut scratch);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiktoken_pairs_are_every_split() {
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        tokens.push((b"ab".to_vec(), 256));
        tokens.push((b"bc".to_vec(), 257));
        tokens.push((b"abc".to_vec(), 258));
        let m = Model::from_ranks(tokens).unwrap();
        use table::{merge_id, merge_rank};
        assert_eq!(merge_id(m.pairs.get(b'a' as u32, b'b' as u32)), 256);
        assert_eq!(merge_rank(m.pairs.get(256, b'c' as u32)), 258);
        // (ab, c) and (a, bc) both spell abc, but merging "abc" alone always makes ab first.
        assert_eq!(m.pairs.len(), 3);
        assert_eq!(m.pairs.get(b'a' as u32, 257), table::NO_MERGE);
    }
}
