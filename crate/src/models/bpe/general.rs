//! BPE as a `tokenizer.json` model of any kind describes it (the reference's `models::bpe::BPE`):
//! symbols are chars (not bytes), with a continuing-subword prefix, an end-of-word suffix, an
//! unk token (fused or not), byte fallback to `<0xXX>` tokens and `ignore_merges`. The
//! byte-level tokenizers of [`crate::tokenizer::bpe`] have their own faster path.
//!
//! The reference's rules, which this follows step by step:
//! - A pre-token's chars become symbols: char `c` is the token `[prefix]c[suffix]`, the prefix
//!   on every char but the first, the suffix on the last. A char without a token becomes its
//!   bytes' `<0xXX>` tokens when byte fallback is on and all exist (the bytes of the prefix
//!   and suffix included, each counted as one byte of the pre-token), else the unk token
//!   (one per char, or one per run of such chars with `fuse_unk`), else nothing. A pending
//!   unk token is placed when the next char with a token comes, after any byte tokens that
//!   came in between.
//! - Merging takes the (rank, position) least pair each time, rank = line in the merge list
//!   (a pair listed twice has its later rank). A queued pair is stale once its left symbol
//!   is merged away, or the pair there no longer makes the same token.
//! - `ignore_merges`: a pre-token that is itself a token is that one token.
//! - A token's byte range is the sum of its symbols' byte counts, from the pre-token's start.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use super::merge;
use super::table::{merge_id, merge_rank, PairTable, ID_BITS, NO_MERGE};
use crate::models::cache::WordCache;
use crate::models::{ReverseVocab, Token};
use crate::{Error, Result};

/// No symbol id (an absent char or byte token) and no linked symbol.
const NONE: u32 = u32::MAX;

/// The options of a BPE model besides its vocabulary and merges (the reference's names).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BpeOptions {
    pub unk_token: Option<String>,
    pub continuing_subword_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
    pub fuse_unk: bool,
    pub byte_fallback: bool,
    pub ignore_merges: bool,
}

#[derive(Clone, Debug)]
pub struct Bpe {
    pub vocab: HashMap<String, u32>,
    pub vocab_r: ReverseVocab,
    pub options: BpeOptions,
    pairs: PairTable,
    /// The unk token's id, when there is an unk token and the vocabulary has it.
    unk_id: Option<u32>,
    /// Each ASCII char's symbol id by [`Bpe::class`] ([`NONE`]: no such token).
    ascii: Box<[[u32; 4]; 128]>,
    /// The same for the other chars that have a token.
    chars: HashMap<char, [u32; 4], BuildHasherDefault<FastHasher>>,
    /// The `<0xXX>` token of each byte ([`NONE`]: absent; all absent without byte fallback).
    byte_ids: Box<[u32; 256]>,
    /// Identifies this model's entries in the per-thread word cache (clones share it).
    cache_id: u64,
}

/// One piece's merges ([`Bpe::merge_trace`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MergeTrace {
    /// The symbols before any merge.
    pub initial: Vec<u32>,
    pub steps: Vec<merge::MergeStep>,
    /// The tokens the model gives the piece.
    pub ids: Vec<u32>,
    /// The token the whole piece is, when that decided without merging (`ignore_merges`).
    pub whole_token: Option<u32>,
}

impl Bpe {
    /// A model from its vocabulary, its merges in rank order, and its options. Errors name the
    /// JSON path of the offending entry (`model.merges[i]`), as the model comes from a file.
    pub fn new(vocab: HashMap<String, u32>, merges: &[(String, String)], options: BpeOptions) -> Result<Bpe> {
        let vocab_r = ReverseVocab::new(&vocab)?;
        if let Some((t, &id)) = vocab.iter().find(|(_, &id)| id >> ID_BITS != 0) {
            return Err(Error::Unsupported(format!(
                "model.vocab[{t:?}]: id {id} is beyond the {} ids supported for BPE",
                1u32 << ID_BITS
            )));
        }
        if merges.len() >> ID_BITS != 0 {
            return Err(Error::Unsupported(format!(
                "model.merges: {} merges, more than the {} supported",
                merges.len(),
                1u32 << ID_BITS
            )));
        }
        let prefix_len = options.continuing_subword_prefix.as_ref().map_or(0, |p| p.len());
        let mut entries = Vec::with_capacity(merges.len());
        for (rank, (a, b)) in merges.iter().enumerate() {
            let get = |t: &str| {
                vocab.get(t).copied().ok_or_else(|| {
                    Error::Invalid(format!("model.merges[{rank}] ({a:?} {b:?}): {t:?} is not in the vocab"))
                })
            };
            // As the reference: the merged token is `a` followed by `b` without as many
            // leading bytes as the prefix has (whether or not `b` starts with it).
            let tail = b.get(prefix_len..).ok_or_else(|| {
                Error::Invalid(format!(
                    "model.merges[{rank}] ({a:?} {b:?}): the second token is shorter than the \
                     continuing subword prefix"
                ))
            })?;
            entries.push(((get(a)?, get(b)?), rank as u32, get(&format!("{a}{tail}"))?));
        }
        let unk_id = options.unk_token.as_ref().and_then(|u| vocab.get(u).copied());
        let mut ascii = Box::new([[NONE; 4]; 128]);
        let mut chars: HashMap<char, [u32; 4], BuildHasherDefault<FastHasher>> = HashMap::default();
        let prefix = options.continuing_subword_prefix.as_deref();
        let suffix = options.end_of_word_suffix.as_deref();
        for (key, &id) in &vocab {
            for class in 0..4 {
                let mut s = key.as_str();
                if class & 1 != 0 {
                    match prefix.and_then(|p| s.strip_prefix(p)) {
                        Some(rest) => s = rest,
                        None => continue,
                    }
                }
                if class & 2 != 0 {
                    match suffix.and_then(|x| s.strip_suffix(x)) {
                        Some(rest) => s = rest,
                        None => continue,
                    }
                }
                let mut cs = s.chars();
                let (Some(c), None) = (cs.next(), cs.next()) else { continue };
                if c.is_ascii() {
                    ascii[c as usize][class] = id;
                } else {
                    chars.entry(c).or_insert([NONE; 4])[class] = id;
                }
            }
        }
        let mut byte_ids = Box::new([NONE; 256]);
        if options.byte_fallback {
            for (b, id) in byte_ids.iter_mut().enumerate() {
                *id = vocab.get(&format!("<0x{b:02X}>")).copied().unwrap_or(NONE);
            }
        }
        Ok(Bpe {
            vocab,
            vocab_r,
            options,
            pairs: PairTable::new(&entries),
            unk_id,
            ascii,
            chars,
            byte_ids,
            cache_id: crate::models::new_owner_id(),
        })
    }

    /// The merges: (left id, right id) to rank and merged id.
    pub(crate) fn pairs(&self) -> &PairTable {
        &self.pairs
    }

    /// Which of a char's four tokens stands for it: bit 0 when the prefix applies (not the
    /// first char), bit 1 when the suffix does (the last char).
    #[inline]
    fn class(&self, first: bool, last: bool) -> usize {
        (!first && self.options.continuing_subword_prefix.is_some()) as usize
            | ((last && self.options.end_of_word_suffix.is_some()) as usize) << 1
    }

    #[inline]
    fn char_id(&self, c: char, class: usize) -> u32 {
        if c.is_ascii() {
            self.ascii[c as usize][class]
        } else {
            self.chars.get(&c).map_or(NONE, |ids| ids[class])
        }
    }

    /// Appends the tokens of `piece` to `out`.
    pub fn tokenize(&self, piece: &str, out: &mut Vec<Token>) -> Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        if self.options.ignore_merges {
            if let Some(&id) = self.vocab.get(piece) {
                out.push(Token { id, start: 0, end: piece.len() as u32, unk: false });
                return Ok(());
            }
        }
        // A one-char piece with a token (punctuation, mostly) is that token: no cache, no merge.
        let mut cs = piece.chars();
        if let (Some(c), None) = (cs.next(), cs.next()) {
            let id = self.char_id(c, self.class(true, true));
            if id != NONE {
                out.push(Token { id, start: 0, end: piece.len() as u32, unk: false });
                return Ok(());
            }
        }
        CACHE.with(|c| match c.try_borrow_mut() {
            Ok(mut c) => {
                let c = &mut *c;
                if let Some(syms) = c.words.get(self.cache_id, piece) {
                    self.emit(syms, out);
                    return Ok(());
                }
                let merged = self.merge_word(piece, &mut c.work);
                if merged.is_ok() {
                    self.emit(&c.work.done, out);
                    c.words.insert(self.cache_id, piece, c.work.done.iter().copied());
                }
                if c.work.syms.capacity() > MAX_WORK {
                    // A huge piece should not pin its buffers in every thread that saw it.
                    c.work = Work::default();
                }
                merged
            }
            Err(_) => {
                let mut work = Work::default();
                self.merge_word(piece, &mut work)?;
                self.emit(&work.done, out);
                Ok(())
            }
        })
    }

    fn emit(&self, syms: &[(u32, u32)], out: &mut Vec<Token>) {
        let mut at = 0;
        out.extend(syms.iter().map(|&(id, len)| {
            at += len;
            Token { id, start: at - len, end: at, unk: Some(id) == self.unk_id }
        }));
    }

    /// How `piece` is merged, step by step (the page's BPE model step): its symbols, then each
    /// merge by rank as [`merge::merge_steps`] records it, and the tokens [`Bpe::tokenize`]
    /// gives it. Quadratic in the piece's length, so callers bound it.
    pub fn merge_trace(&self, piece: &str) -> Result<MergeTrace> {
        let mut syms = Vec::new();
        self.symbols(piece, &mut syms)?;
        let initial: Vec<u32> = syms.iter().map(|s| s.id).collect();
        let steps = merge::merge_steps(&self.pairs, &initial);
        let mut out = Vec::new();
        self.tokenize(piece, &mut out)?;
        let ids: Vec<u32> = out.iter().map(|t| t.id).collect();
        let merged = steps.last().map_or(&initial, |s| &s.parts);
        let whole_token = (ids.len() == 1 && *merged != ids).then(|| ids[0]);
        Ok(MergeTrace { initial, steps, ids, whole_token })
    }

    /// The symbols of `piece` (see the module docs), merged, into `work.done` as (id, bytes).
    fn merge_word(&self, piece: &str, work: &mut Work) -> Result<()> {
        self.symbols(piece, &mut work.syms)?;
        let syms = &mut work.syms;
        work.done.clear();
        if syms.len() >= merge::HEAP_THRESHOLD {
            work.ids.clear();
            work.ids.extend(syms.iter().map(|s| s.id));
            if merge::repeats(&work.ids)
                && merge::merge_windows(&self.pairs, &mut work.ids, &mut work.windows)
            {
                let mut at = 0;
                for (&id, &count) in work.ids.iter().zip(merge::chunk_counts(&work.windows)) {
                    let len = syms[at..at + count as usize].iter().map(|s| s.len).sum();
                    work.done.push((id, len));
                    at += count as usize;
                }
                return Ok(());
            }
        }
        merge(&self.pairs, syms, &mut work.heap);
        work.done.extend(syms.iter().filter(|s| s.len != 0).map(|s| (s.id, s.len)));
        Ok(())
    }

    /// The symbols of `piece` before any merge, linked in order, into `syms`.
    fn symbols(&self, piece: &str, syms: &mut Vec<Sym>) -> Result<()> {
        syms.clear();
        let mut push = |id: u32, len: u32| {
            let i = syms.len() as u32;
            syms.push(Sym { id, len, prev: i.wrapping_sub(1), next: i + 1 });
        };
        let mut unk: Option<(u32, u32)> = None;
        for (i, c) in piece.char_indices() {
            let len = c.len_utf8();
            let (first, last) = (i == 0, i + len == piece.len());
            let id = self.char_id(c, self.class(first, last));
            if id != NONE {
                if let Some((u, n)) = unk.take() {
                    push(u, n);
                }
                push(id, len as u32);
                continue;
            }
            if self.options.byte_fallback && self.push_bytes(c, first, last, &mut push) {
                continue;
            }
            let Some(unk_token) = &self.options.unk_token else { continue };
            let unk_id = self.unk_id.ok_or_else(|| {
                Error::Input(format!("BPE: the unk token {unk_token:?} is not in the vocabulary"))
            })?;
            unk = match unk {
                Some((u, n)) if self.options.fuse_unk => Some((u, n + len as u32)),
                Some((u, n)) => {
                    push(u, n);
                    Some((unk_id, len as u32))
                }
                None => Some((unk_id, len as u32)),
            };
        }
        if let Some((u, n)) = unk {
            push(u, n);
        }
        if let Some(last) = syms.last_mut() {
            last.next = NONE;
        }
        Ok(())
    }

    /// Pushes the `<0xXX>` tokens of char `c` with its prefix and suffix, each as one byte,
    /// when all of them exist.
    fn push_bytes(&self, c: char, first: bool, last: bool, push: &mut impl FnMut(u32, u32)) -> bool {
        let class = self.class(first, last);
        let mut s = String::new();
        if class & 1 != 0 {
            s.extend(self.options.continuing_subword_prefix.as_deref());
        }
        s.push(c);
        if class & 2 != 0 {
            s.extend(self.options.end_of_word_suffix.as_deref());
        }
        if s.bytes().any(|b| self.byte_ids[b as usize] == NONE) {
            return false;
        }
        for b in s.bytes() {
            push(self.byte_ids[b as usize], 1);
        }
        true
    }
}

/// A symbol while merging: its token, its byte count (0 once merged into its left
/// neighbour) and its live neighbours.
#[derive(Clone, Copy, Debug)]
struct Sym {
    id: u32,
    len: u32,
    prev: u32,
    next: u32,
}

/// Merges `syms` (linked in order) as the reference does: a min-heap of (rank, left symbol's
/// index) keys with the merged id; each merge pops one key and pushes at most two, so a
/// piece of n symbols costs O(n log n). Merged-away symbols are left with `len` 0.
fn merge(pairs: &PairTable, syms: &mut [Sym], heap: &mut Vec<Reverse<(u64, u32)>>) {
    if syms.len() < 2 {
        return;
    }
    let key = |rank: u32, pos: u32| (rank as u64) << 32 | pos as u64;
    heap.clear();
    heap.extend(syms.windows(2).enumerate().filter_map(|(i, w)| {
        let m = pairs.get(w[0].id, w[1].id);
        (m != NO_MERGE).then(|| Reverse((key(merge_rank(m), i as u32), merge_id(m))))
    }));
    let mut queue = BinaryHeap::from(std::mem::take(heap));
    while let Some(Reverse((k, new_id))) = queue.pop() {
        let pos = k as u32 as usize;
        let right = syms[pos].next;
        if syms[pos].len == 0 || right == NONE {
            continue;
        }
        let m = pairs.get(syms[pos].id, syms[right as usize].id);
        // Stale when the pair there now makes another token (the reference compares the
        // merged ids, not the ranks).
        if m == NO_MERGE || merge_id(m) != new_id {
            continue;
        }
        let r = syms[right as usize];
        syms[right as usize].len = 0;
        let s = &mut syms[pos];
        s.id = new_id;
        s.len += r.len;
        s.next = r.next;
        let prev = s.prev;
        if r.next != NONE {
            syms[r.next as usize].prev = pos as u32;
            let m = pairs.get(new_id, syms[r.next as usize].id);
            if m != NO_MERGE {
                queue.push(Reverse((key(merge_rank(m), pos as u32), merge_id(m))));
            }
        }
        if prev != NONE {
            let m = pairs.get(syms[prev as usize].id, new_id);
            if m != NO_MERGE {
                queue.push(Reverse((key(merge_rank(m), prev), merge_id(m))));
            }
        }
    }
    *heap = queue.into_vec();
}

/// Buffers for one merge.
#[derive(Default)]
struct Work {
    syms: Vec<Sym>,
    heap: Vec<Reverse<(u64, u32)>>,
    /// Long pieces: the symbols' ids, merged a window at a time ([`merge::merge_windows`]).
    ids: Vec<u32>,
    windows: merge::Scratch,
    /// The result: (id, bytes) per token.
    done: Vec<(u32, u32)>,
}

/// Symbols the merge buffers may keep between calls (more are freed after the piece).
const MAX_WORK: usize = 1 << 16;

/// Pre-tokens seen before with their tokens as (id, bytes), and the merge's buffers, per
/// thread.
#[derive(Default)]
struct PerThread {
    words: WordCache<(u32, u32)>,
    work: Work,
}

thread_local! {
    static CACHE: RefCell<PerThread> = RefCell::default();
}

/// A fast hash for chars and cached pre-tokens (keys are not secret, and a collision costs
/// only time).
#[derive(Default)]
struct FastHasher(u64);

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = (self.0.rotate_left(5) ^ super::table::hash_bytes(bytes)).wrapping_mul(K);
    }

    fn write_u8(&mut self, x: u8) {
        self.0 = (self.0.rotate_left(5) ^ x as u64).wrapping_mul(K);
    }

    fn write_u32(&mut self, x: u32) {
        self.0 = (self.0.rotate_left(5) ^ x as u64).wrapping_mul(K);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model over `tokens` (ids in order) with `merges`.
    fn model(tokens: &[&str], merges: &[(&str, &str)], options: BpeOptions) -> Bpe {
        let vocab = tokens.iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        let merges: Vec<(String, String)> =
            merges.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        Bpe::new(vocab, &merges, options).unwrap()
    }

    /// (token, start, end) of each token of `piece`.
    fn run(m: &Bpe, piece: &str) -> Vec<(String, u32, u32)> {
        let mut out = Vec::new();
        m.tokenize(piece, &mut out).unwrap();
        out.iter().map(|t| (m.vocab_r.tokens[t.id as usize].to_string(), t.start, t.end)).collect()
    }

    fn toks(m: &Bpe, piece: &str) -> Vec<String> {
        run(m, piece).into_iter().map(|t| t.0).collect()
    }

    #[test]
    fn merge_order_is_the_merge_list_not_the_ids() {
        // "bc" has the smaller id, but (a, b) comes first in the list.
        let tokens = ["a", "b", "c", "bc", "ab"];
        let m = model(&tokens, &[("a", "b"), ("b", "c")], BpeOptions::default());
        assert_eq!(run(&m, "abc"), [("ab".into(), 0, 2), ("c".into(), 2, 3)]);
        let m = model(&tokens, &[("b", "c"), ("a", "b")], BpeOptions::default());
        assert_eq!(toks(&m, "abc"), ["a", "bc"]);
        // A pair listed twice takes its later place: (a, b) now comes after (b, c).
        let m = model(&tokens, &[("a", "b"), ("b", "c"), ("a", "b")], BpeOptions::default());
        assert_eq!(toks(&m, "abc"), ["a", "bc"]);
    }

    #[test]
    fn merge_trace_lists_each_merge_with_its_rank() {
        let tokens = ["a", "b", "c", "bc", "ab", "abc"];
        let m = model(&tokens, &[("b", "c"), ("a", "bc"), ("a", "b")], BpeOptions::default());
        let t = m.merge_trace("abc").unwrap();
        assert_eq!(t.initial, [0, 1, 2]);
        let steps: Vec<_> = t.steps.iter().map(|s| (s.index, s.rank, s.merged)).collect();
        assert_eq!(steps, [(1, 0, 3), (0, 1, 5)]);
        assert_eq!((t.ids.as_slice(), t.whole_token), ([5].as_slice(), None));
        // ignore_merges: a piece that is a token is taken whole, whatever the merges would do.
        let opts = BpeOptions { ignore_merges: true, ..BpeOptions::default() };
        let m = model(&tokens, &[("a", "b")], opts);
        let t = m.merge_trace("abc").unwrap();
        assert_eq!((t.ids.as_slice(), t.whole_token), ([5].as_slice(), Some(5)));
        assert_eq!(t.steps.last().unwrap().parts, [4, 2]);
    }

    #[test]
    fn merge_trace_ends_in_the_tokens_on_random_pieces() {
        let mut r = crate::testing::Rng(0x2545_F491_4F6C_DD1D);
        let alphabet = ["a", "b", "c"];
        let mut tokens: Vec<String> = alphabet.iter().map(|s| s.to_string()).collect();
        let mut merges = Vec::new();
        for _ in 0..30 {
            let (x, y) = (tokens[r.below(tokens.len())].clone(), tokens[r.below(tokens.len())].clone());
            if !tokens.contains(&format!("{x}{y}")) {
                tokens.push(format!("{x}{y}"));
            }
            merges.push((x, y));
        }
        let vocab = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let m = Bpe::new(vocab, &merges, BpeOptions::default()).unwrap();
        for _ in 0..500 {
            let piece: String = (0..1 + r.below(80)).map(|_| r.pick(&alphabet)).collect();
            let t = m.merge_trace(&piece).unwrap();
            let last = t.steps.last().map_or(&t.initial, |s| &s.parts);
            assert_eq!(last, &t.ids, "{piece}");
            for s in &t.steps {
                assert_eq!(merges[s.rank as usize].0, m.vocab_r.tokens[s.left as usize].as_ref());
            }
        }
    }

    #[test]
    fn equal_ranks_merge_leftmost_first() {
        let m = model(&["a", "aa", "aaaa"], &[("a", "a"), ("aa", "aa")], BpeOptions::default());
        assert_eq!(toks(&m, "aaa"), ["aa", "a"]);
        assert_eq!(toks(&m, "aaaaa"), ["aaaa", "a"]);
        assert_eq!(toks(&m, "aaaaaaa"), ["aaaa", "aa", "a"]);
    }

    #[test]
    fn long_runs_merge_in_n_log_n() {
        let m = model(&["a", "aa", "aaaa"], &[("a", "a"), ("aa", "aa")], BpeOptions::default());
        let piece = "a".repeat(200_001);
        let out = run(&m, &piece);
        assert_eq!(out.len(), 50_001);
        assert!(out[..50_000].iter().all(|t| t.0 == "aaaa" && t.2 - t.1 == 4));
        assert_eq!(out[50_000], ("a".into(), 200_000, 200_001));
    }

    #[test]
    fn prefix_and_suffix_mark_positions_in_the_word() {
        let options = BpeOptions {
            continuing_subword_prefix: Some("##".into()),
            end_of_word_suffix: Some("</w>".into()),
            ..Default::default()
        };
        // Symbols of "abc": a, ##b, ##c</w>. Merging strips the prefix from the right part.
        let tokens = ["a", "##b", "##c</w>", "ab", "##b##c</w>", "abc</w>", "c</w>", "c"];
        let m = model(&tokens, &[("a", "##b"), ("ab", "##c</w>")], options.clone());
        assert_eq!(run(&m, "abc"), [("abc</w>".into(), 0, 3)]);
        // A one-char word carries both marks' absence and presence: no prefix, the suffix.
        assert_eq!(toks(&m, "c"), ["c</w>"]);
        let m = model(&tokens, &[("a", "##b")], options);
        assert_eq!(run(&m, "abc"), [("ab".into(), 0, 2), ("##c</w>".into(), 2, 3)]);
    }

    #[test]
    fn unknown_chars_become_unk_dropped_or_fused() {
        let tokens = ["<unk>", "b"];
        let m = model(&tokens, &[], BpeOptions { unk_token: Some("<unk>".into()), ..Default::default() });
        assert_eq!(run(&m, "xéb"), [("<unk>".into(), 0, 1), ("<unk>".into(), 1, 3), ("b".into(), 3, 4)]);
        let fused = BpeOptions { unk_token: Some("<unk>".into()), fuse_unk: true, ..Default::default() };
        let m = model(&tokens, &[], fused);
        assert_eq!(run(&m, "xébx"), [("<unk>".into(), 0, 3), ("b".into(), 3, 4), ("<unk>".into(), 4, 5)]);
        // Without an unk token the char is dropped, and later ranges close up behind it.
        let m = model(&tokens, &[], BpeOptions::default());
        assert_eq!(run(&m, "xb"), [("b".into(), 0, 1)]);
        // An unk token missing from the vocabulary fails only when it is needed.
        let m = model(&tokens, &[], BpeOptions { unk_token: Some("[UNK]".into()), ..Default::default() });
        assert_eq!(toks(&m, "b"), ["b"]);
        let mut out = Vec::new();
        assert!(m.tokenize("xb", &mut out).unwrap_err().to_string().contains("[UNK]"));
    }

    #[test]
    fn byte_fallback_spells_bytes_and_counts_the_marks() {
        let tokens = ["<unk>", "b", "<0xC3>", "<0xA9>", "<0x23>", "##b"];
        let options =
            BpeOptions { unk_token: Some("<unk>".into()), byte_fallback: true, ..Default::default() };
        let m = model(&tokens, &[], options.clone());
        assert_eq!(run(&m, "é"), [("<0xC3>".into(), 0, 1), ("<0xA9>".into(), 1, 2)]);
        // 'x' has no byte token: it waits as an unk token, placed after the bytes of 'é'
        // when 'b' (a known char) comes.
        assert_eq!(toks(&m, "xéb"), ["<0xC3>", "<0xA9>", "<unk>", "b"]);
        assert_eq!(run(&m, "xéb")[2], ("<unk>".into(), 2, 3));
        // With a prefix, a later char's bytes include the prefix's, each one byte long, so
        // ranges run past the word's end.
        let m = model(&tokens, &[], BpeOptions { continuing_subword_prefix: Some("##".into()), ..options });
        assert_eq!(
            run(&m, "bé"),
            [
                ("b".into(), 0, 1),
                ("<0x23>".into(), 1, 2),
                ("<0x23>".into(), 2, 3),
                ("<0xC3>".into(), 3, 4),
                ("<0xA9>".into(), 4, 5)
            ]
        );
    }

    #[test]
    fn ignore_merges_takes_whole_words_from_the_vocab() {
        let tokens = ["a", "b", "c", "ab", "abc"];
        let options = BpeOptions { ignore_merges: true, ..Default::default() };
        let m = model(&tokens, &[("a", "b")], options);
        assert_eq!(toks(&m, "abc"), ["abc"]);
        assert_eq!(toks(&m, "abcab"), ["ab", "c", "ab"]);
        let m = model(&tokens, &[("a", "b")], BpeOptions::default());
        assert_eq!(toks(&m, "abc"), ["ab", "c"]);
    }

    #[test]
    fn cached_words_give_the_same_tokens() {
        let m = model(&["a", "b", "ab"], &[("a", "b")], BpeOptions::default());
        let first = run(&m, "abab");
        assert_eq!(first, run(&m, "abab"));
        // Another model's cache entries are not this one's.
        let other = model(&["a", "b", "ab"], &[], BpeOptions::default());
        assert_eq!(toks(&other, "abab"), ["a", "b", "a", "b"]);
        assert_eq!(run(&m, "abab"), first);
    }

    #[test]
    fn bad_merges_are_refused() {
        let vocab: HashMap<String, u32> = [("a".to_string(), 0), ("b".to_string(), 1)].into();
        let merge = |a: &str, b: &str| vec![(a.to_string(), b.to_string())];
        let e = Bpe::new(vocab.clone(), &merge("a", "b"), BpeOptions::default()).unwrap_err();
        assert!(e.to_string().contains("model.merges[0]") && e.to_string().contains("\"ab\""), "{e}");
        let e = Bpe::new(vocab.clone(), &merge("a", "c"), BpeOptions::default()).unwrap_err();
        assert!(e.to_string().contains("\"c\""), "{e}");
        let options = BpeOptions { continuing_subword_prefix: Some("###".into()), ..Default::default() };
        assert!(Bpe::new(vocab, &merge("a", "b"), options).is_err());
    }
}
