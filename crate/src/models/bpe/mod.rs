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

impl Model {
    /// For each id below the vocabulary's bound, whether merging its token's bytes gives just
    /// that token, decided for every token at once; `None` where some merge's part is also
    /// made by a merge of the same or a higher rank, for which the rule below does not hold.
    ///
    /// Where each merge's parts are made by lower ranks only, a merge never makes a pair that
    /// ranks below it, so merging applies ranks in increasing order, and a token is reached by
    /// the first merge (in rank order) of two reached parts whose merges never meet across the
    /// seam ([`Model::meet_across`]). bpe-openai decides its tokens so, with ids as ranks.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn reached_tokens(&self) -> Option<Vec<bool>> {
        let bound = self.vocab.id_bound() as usize;
        let merges: Vec<(u32, u32, u32)> = self.pairs.entries().map(|((a, b), rank)| (rank, a, b)).collect();
        let made_of = |rank: u32| self.pairs.id_of_rank(rank) as usize;
        if merges
            .iter()
            .any(|&(rank, a, b)| a as usize >= bound || b as usize >= bound || made_of(rank) >= bound)
        {
            return None;
        }
        // 1 + the highest rank of a merge that makes each id (0: none does). Llama 3's files
        // fail here: their merges list every split of a token, some ranked before a part's.
        let mut made = vec![0u32; bound];
        for &(rank, _, _) in &merges {
            let t = made_of(rank);
            made[t] = made[t].max(rank + 1);
        }
        if merges.iter().any(|&(rank, a, b)| made[a as usize] > rank || made[b as usize] > rank) {
            return None;
        }
        // In rank order: each rank is one pair's.
        let mut by_rank = vec![None; self.pairs.rank_bound() as usize];
        for &(rank, a, b) in &merges {
            by_rank[rank as usize] = Some((a, b));
        }
        let mut reached = vec![false; bound];
        // For a reached token: 1 + the rank of its last merge (0: a byte), and that merge's parts.
        let mut stamp = vec![0u32; bound];
        let mut split = vec![(0u32, 0u32); bound];
        for &id in &self.byte_ids {
            reached[id as usize] = true;
        }
        for (rank, (a, b)) in by_rank.into_iter().enumerate().filter_map(|(r, m)| Some((r as u32, m?))) {
            let t = made_of(rank);
            if reached[t]
                || !reached[a as usize]
                || !reached[b as usize]
                || self.meet_across(a, b, &stamp, &split)
            {
                continue;
            }
            (reached[t], stamp[t], split[t]) = (true, rank + 1, (a, b));
        }
        Some(reached)
    }

    /// Whether merging the bytes of reached tokens `a` and `b` side by side merges a pair across
    /// the seam before it gives `a` and `b`. Walking back through both merges, always undoing the
    /// part made last (the right one on a tie: of two merges of one rank the left is made first),
    /// each pair that stands across the seam must have no merge that comes first: a lower rank
    /// than the merge that ends its standing, or that same rank where that merge is to its right.
    #[cfg(not(target_arch = "wasm32"))]
    fn meet_across(&self, a: u32, b: u32, stamp: &[u32], split: &[(u32, u32)]) -> bool {
        let (mut x, mut y) = (a, b);
        loop {
            let (sx, sy) = (stamp[x as usize], stamp[y as usize]);
            // The rank of the merge just undone, and whether it stood left of the seam.
            let (limit, left) = if sx > sy {
                x = split[x as usize].1;
                (sx - 1, true)
            } else if sy > 0 {
                y = split[y as usize].0;
                (sy - 1, false)
            } else {
                return false;
            };
            let rank = self.pairs.rank(x, y);
            if rank != table::NO_RANK && (rank < limit || (rank == limit && !left)) {
                return true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random merge lists over three letters: where the rule applies, each token is reached
    /// exactly where merging its bytes gives it; lists where a part is made again at a higher
    /// rank are refused.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn reached_tokens_are_what_merging_gives() {
        let mut rng = crate::testing::Rng(0x5EED_0F70_0CE5);
        let (mut decided, mut refused, mut unreached) = (0, 0, 0);
        for _ in 0..400 {
            let mut vocab: HashMap<String, u32> =
                crate::pre_tokenizers::byte_level::alphabet::byte_level_tokens().collect();
            let mut tokens: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
            let mut merges = Vec::new();
            for _ in 0..rng.below(30) {
                let (l, r) =
                    (tokens[rng.below(tokens.len())].clone(), tokens[rng.below(tokens.len())].clone());
                if l.len() + r.len() > 9 || merges.contains(&(l.clone(), r.clone())) {
                    continue;
                }
                let t = format!("{l}{r}");
                // A token made again by a later merge only now and then (it breaks the rule when
                // a merge between uses it).
                if vocab.contains_key(&t) && rng.below(2) != 0 {
                    continue;
                }
                let next = vocab.len() as u32;
                vocab.entry(t.clone()).or_insert(next);
                if !tokens.contains(&t) {
                    tokens.push(t);
                }
                merges.push((l, r));
            }
            let m = Model::from_merges(&vocab, &merges).unwrap();
            let Some(reached) = m.reached_tokens() else {
                refused += 1;
                continue;
            };
            decided += 1;
            let mut scratch = merge::Scratch::default();
            for t in &tokens {
                let id = vocab[t];
                let mut parts: Vec<u32> = t.bytes().map(|b| m.byte_ids[b as usize]).collect();
                merge::merge(&m.pairs, &mut parts, &mut scratch);
                assert_eq!(reached[id as usize], parts == [id], "{t:?} of {merges:?}");
                unreached += usize::from(parts != [id]);
            }
        }
        // Both branches taken, and tokens that merging does not give among the decided.
        assert!(decided > 200 && refused > 0 && unreached > 200, "{decided} {refused} {unreached}");
        // A token made twice ("abc") but part of no merge keeps the rule; a part made only by a
        // later merge ("ab", made at rank 1, part of the merge of rank 0) breaks it.
        let vocab: HashMap<String, u32> = crate::pre_tokenizers::byte_level::alphabet::byte_level_tokens()
            .chain([("ab".to_string(), 256), ("abc".to_string(), 257), ("bc".to_string(), 258)])
            .collect();
        let pair = |l: &str, r: &str| (l.to_string(), r.to_string());
        let m =
            Model::from_merges(&vocab, &[pair("a", "b"), pair("ab", "c"), pair("b", "c"), pair("a", "bc")])
                .unwrap();
        assert!(m.reached_tokens().is_some());
        let m = Model::from_merges(&vocab, &[pair("ab", "c"), pair("a", "b")]).unwrap();
        assert!(m.reached_tokens().is_none());
    }

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
