//! Unigram: the most probable split of a word into vocabulary pieces (SentencePiece's model),
//! as the reference's `Unigram` model computes it.
//!
//! Each piece has a score (a log probability); the best split maximises the sum of the scores
//! of its pieces (Viterbi over the lattice of every vocabulary piece found at every char
//! boundary). Rules that decide ids, all the reference's:
//! - A char that starts no one-char piece gets an unknown node of score `min score - 10`
//!   (the lowest score in the vocabulary minus a penalty), one char long. Without an unk id
//!   that is an error, but only when the unknown node would improve on what already reaches
//!   its end.
//! - Ties keep the first candidate: ends are filled from the leftmost start, and a later
//!   candidate must score strictly higher.
//! - Consecutive nodes with the unk id (unknown chars, and the unk piece itself) are fused into
//!   one token. Its text is then looked up as a piece; if it is none, with byte fallback each
//!   of its bytes becomes its `<0xXX>` piece (all of them spanning the fused text) when the
//!   vocabulary has every one, else it is one unk token.
//! - A piece listed twice takes its last id (and that id's score); the empty piece never
//!   matches.
//!
//! A model read from SentencePiece's own `.model` file scores as SentencePiece (0.2.3) does
//! instead ([`Unigram::sentencepiece`]): path scores are float32 sums, and when the score
//! where the next piece starts passes ±100000 every score from there on is shifted by it (so
//! a long text's scores round as SentencePiece's do, and ties fall as they do); a user-defined
//! piece of `n` bytes scores `0.1 (n - 1)`; unused, control, unknown and byte pieces are never
//! matched; unknown chars are not fused and looked up but handed to
//! [`crate::models::sentencepiece::resolve_unknowns`].

use crate::error::{Error, Result};
use crate::models::bpe::cache::PieceCache;
use crate::models::bpe::table::{hash_bytes, pack};
use crate::models::cache::{WordCache, MAX_WORD};
use crate::models::sentencepiece::{piece_byte, PieceKind, Unknowns};
use crate::models::wordpiece::trie::Trie;
use crate::models::Token;
use double_array::DoubleArray;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The score an unknown char gets below the lowest piece score.
const UNK_PENALTY: f64 = 10.0;
/// Marks a lattice end no candidate has reached yet, and a byte with no `<0xXX>` piece.
const NONE: u32 = u32::MAX;

static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(1);

#[derive(Clone, Debug)]
pub struct Unigram {
    /// The vocabulary in id order: (piece, score).
    pieces: Vec<(String, f64)>,
    /// The scores alone, by id: the lattice reads one per piece found, and a dense array
    /// keeps those reads in cache. (SentencePiece's models: the score a piece has on a path,
    /// which for a user-defined piece is not its listed score.)
    scores: Vec<f64>,
    /// The same in float32, for SentencePiece's models (else empty).
    scores32: Vec<f32>,
    unk_id: Option<u32>,
    byte_fallback: bool,
    /// The score of an unknown char: the lowest piece score minus [`UNK_PENALTY`].
    unk_score: f64,
    /// Every non-empty piece, with its last id.
    trie: Trie,
    /// The same pieces as a double array, for the lattice's walks.
    pieces_da: DoubleArray,
    /// The id of `<0xXX>` by byte, or [`NONE`] (all NONE without byte fallback).
    byte_ids: Box<[u32; 256]>,
    /// Names this model's words in the per-thread word cache (clones share it: they tokenize
    /// alike).
    cache_id: u64,
    /// Scores as SentencePiece does (a model read from a `.model` file).
    spm: bool,
    /// The longest piece's byte length, or 4 if that is longer (how far past a position the
    /// lattice may have reached).
    reach: usize,
    /// SentencePiece's models whose lattice falls apart before every "▁" (no piece holds one
    /// past its first char): the largest magnitude of a score on a path, for
    /// [`Unigram::spm_words`]. `None` when a piece holds an inner "▁".
    spm_word_scores: Option<f32>,
}

/// SentencePiece shifts path scores back to 0 when they pass this (in either direction).
const SPM_SCORE_RESET: f32 = 100_000.0;

/// A path score: float64 as the reference sums, or float32 as SentencePiece does (which also
/// shifts its sums back to 0 past ±[`SPM_SCORE_RESET`]).
trait Score: Copy + PartialOrd + Default {
    const SENTENCEPIECE: bool;
    const LOWEST: Self;
    /// The score of each piece of `m`, by id.
    fn scores(m: &Unigram) -> &[Self];
    fn unknown(m: &Unigram) -> Self;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    /// Whether SentencePiece would shift the scores at a start with this score.
    fn past_reset(self) -> bool;
}

impl Score for f64 {
    const SENTENCEPIECE: bool = false;
    const LOWEST: Self = f64::NEG_INFINITY;
    #[inline(always)]
    fn scores(m: &Unigram) -> &[Self] {
        &m.scores
    }
    fn unknown(m: &Unigram) -> Self {
        m.unk_score
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    fn sub(self, other: Self) -> Self {
        self - other
    }
    fn past_reset(self) -> bool {
        false
    }
}

impl Score for f32 {
    const SENTENCEPIECE: bool = true;
    const LOWEST: Self = f32::NEG_INFINITY;
    #[inline(always)]
    fn scores(m: &Unigram) -> &[Self] {
        &m.scores32
    }
    fn unknown(m: &Unigram) -> Self {
        m.unk_score as f32
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    fn sub(self, other: Self) -> Self {
        self - other
    }
    #[inline(always)]
    fn past_reset(self) -> bool {
        !(-SPM_SCORE_RESET..=SPM_SCORE_RESET).contains(&self)
    }
}

/// The best path ending at one byte position of the word.
#[derive(Clone, Copy)]
struct Best<S> {
    score: S,
    /// Where its last token starts, or [`NONE`] while nothing reaches here.
    start: u32,
    id: u32,
}

/// What tokenizing needs besides the model, one per thread.
#[derive(Default)]
struct Work {
    /// The lattice of the word being tokenized, reused from word to word.
    lattice: Vec<Best<f64>>,
    /// The same for SentencePiece's models.
    lattice32: Vec<Best<f32>>,
    /// The runner-up's score at each end of `lattice` (see [`Unigram::spm_words`]).
    runners_up: Vec<f64>,
    cache: WordCache<Token>,
    /// SentencePiece's models: word → ids (see [`Unigram::spm_words`]).
    spm_cache: PieceCache,
    /// Owner of `spm_cache`'s words (a model's `cache_id`).
    spm_owner: u64,
    ids: Vec<u32>,
    /// SentencePiece's path through a text or word, before its unknown chars are resolved.
    nodes: Vec<Token>,
}

thread_local! {
    static WORK: RefCell<Work> = RefCell::new(Work::default());
}

fn missing_unk() -> Error {
    Error::Input("encountered an unknown token but the Unigram model has no unk_id".into())
}

/// Where the word of SentencePiece's text that starts at `start` ends: at the next "▁" after
/// its first char, or at the text's end.
#[inline(always)]
fn word_end(bytes: &[u8], start: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let [a, b, c] = [0xE2, 0x96, 0x81];
    let mut i = start + char_len(bytes[start]);
    while i + 2 < bytes.len() {
        // Eight bytes at a time up to the next 0xE2: Hangul, kana, Han and Devanagari lead
        // with other bytes, so most of their text is skipped a word at a time.
        if let Some(w) = bytes.get(i..i + 8) {
            let x = u64::from_le_bytes(w.try_into().unwrap()) ^ (ONES * a as u64);
            let zero = x.wrapping_sub(ONES) & !x & (ONES << 7);
            if zero == 0 {
                i += 8;
                continue;
            }
            i += zero.trailing_zeros() as usize / 8;
            if i + 2 >= bytes.len() {
                break;
            }
        }
        if bytes[i] == a && bytes[i + 1] == b && bytes[i + 2] == c {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

/// The byte length of the UTF-8 char whose lead byte is `b`.
#[inline(always)]
fn char_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

impl Unigram {
    /// A model of `vocab` (piece, score) in id order. As the reference: an unk id requires a
    /// non-empty vocabulary that holds it; no unk id is allowed (then unknown chars are errors).
    pub fn new(vocab: Vec<(String, f64)>, unk_id: Option<usize>, byte_fallback: bool) -> Result<Self> {
        if vocab.len() >= NONE as usize {
            return Err(Error::Invalid(format!(
                "a Unigram vocabulary of {} pieces is too large",
                vocab.len()
            )));
        }
        if let Some(unk) = unk_id {
            if vocab.is_empty() {
                return Err(Error::Invalid(
                    "the Unigram vocabulary is empty but at least <unk> is needed".into(),
                ));
            }
            if unk >= vocab.len() {
                return Err(Error::Invalid(format!(
                    "the Unigram unk_id {unk} is not below the vocabulary size {}",
                    vocab.len()
                )));
            }
        }
        let min_score = vocab.iter().map(|p| p.1).fold(f64::INFINITY, |m, s| if s < m { s } else { m });
        let trie = Trie::new(vocab.iter().enumerate().map(|(id, (p, _))| (p.as_bytes(), id as u32)));
        let mut byte_ids = Box::new([NONE; 256]);
        if byte_fallback {
            for (b, slot) in byte_ids.iter_mut().enumerate() {
                *slot = trie.get(format!("<0x{b:02X}>").as_bytes()).unwrap_or(NONE);
            }
        }
        Ok(Unigram {
            scores: vocab.iter().map(|p| p.1).collect(),
            scores32: Vec::new(),
            pieces: vocab,
            unk_id: unk_id.map(|u| u as u32),
            byte_fallback,
            unk_score: min_score - UNK_PENALTY,
            pieces_da: DoubleArray::new(&trie),
            trie,
            byte_ids,
            cache_id: NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed),
            spm: false,
            reach: 4,
            spm_word_scores: None,
        })
    }

    /// A model of SentencePiece's pieces (piece, float32 score, kind) in id order, scoring as
    /// SentencePiece does. `unk_id` must be an unknown piece; with byte fallback every byte
    /// has its byte piece (the loader checks both).
    pub fn sentencepiece(
        pieces: Vec<(String, f32, PieceKind)>,
        unk_id: u32,
        byte_fallback: bool,
    ) -> Result<Self> {
        if pieces.len() >= NONE as usize || unk_id as usize >= pieces.len() {
            return Err(Error::Invalid(format!(
                "a SentencePiece vocabulary of {} pieces with unk id {unk_id}",
                pieces.len()
            )));
        }
        if let Some(p) = pieces.iter().find(|p| !p.1.is_finite()) {
            // Named, not formatted: float formatting would add 11 KB to the wasm module.
            let score = if p.1.is_nan() { "NaN" } else { "infinite" };
            return Err(Error::Invalid(format!("the score of piece {:?} is {score}", p.0)));
        }
        let normal = pieces.iter().filter(|p| p.2 == PieceKind::Normal).map(|p| p.1);
        let min_score = normal.fold(f32::MAX, f32::min);
        let trie = Trie::new(
            pieces
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(p.2, PieceKind::Normal | PieceKind::UserDefined))
                .map(|(id, p)| (p.0.as_bytes(), id as u32)),
        );
        let reach = pieces.iter().map(|p| p.0.len()).max().unwrap_or(0).max(4);
        let mut byte_ids = Box::new([NONE; 256]);
        if byte_fallback {
            for (id, p) in pieces.iter().enumerate() {
                if let (PieceKind::Byte, Some(b)) = (p.2, piece_byte(&p.0)) {
                    byte_ids[b as usize] = id as u32;
                }
            }
        }
        // A user-defined piece of n bytes scores 0.1 (n - 1), rounded to float32.
        let scores: Vec<f64> = pieces
            .iter()
            .map(|p| match p.2 {
                PieceKind::UserDefined => (0.1 * (p.0.len() as f64 - 1.0)) as f32 as f64,
                _ => p.1 as f64,
            })
            .collect();
        let unk_score = min_score - UNK_PENALTY as f32;
        let in_lattice =
            |p: &(String, f32, PieceKind)| matches!(p.2, PieceKind::Normal | PieceKind::UserDefined);
        let inner_space =
            pieces.iter().filter(|p| in_lattice(p)).any(|p| p.0.chars().skip(1).any(|c| c == '▁'));
        let spm_word_scores = (!inner_space).then(|| {
            let on_paths = pieces.iter().zip(&scores).filter(|(p, _)| in_lattice(p)).map(|(_, &s)| s as f32);
            on_paths.fold(unk_score.abs(), |m, s| m.max(s.abs()))
        });
        let vocab: Vec<(String, f64)> = pieces.into_iter().map(|(p, s, _)| (p, s as f64)).collect();
        Ok(Unigram {
            scores32: scores.iter().map(|&s| s as f32).collect(),
            scores,
            pieces: vocab,
            unk_id: Some(unk_id),
            byte_fallback,
            unk_score: unk_score as f64,
            pieces_da: DoubleArray::new(&trie),
            trie,
            byte_ids,
            cache_id: NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed),
            spm: true,
            reach,
            spm_word_scores,
        })
    }

    pub fn vocab(&self) -> &[(String, f64)] {
        &self.pieces
    }

    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
    }

    /// Whether this is a SentencePiece model's (see [`Unigram::sentencepiece`]).
    pub fn is_sentencepiece(&self) -> bool {
        self.spm
    }

    pub fn byte_fallback(&self) -> bool {
        self.byte_fallback
    }

    pub fn vocab_size(&self) -> usize {
        self.pieces.len()
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.pieces.get(id as usize).map(|p| p.0.as_str())
    }

    /// The id of a piece (its last id if it is listed twice).
    pub fn token_to_id(&self, piece: &str) -> Option<u32> {
        self.trie.get(piece.as_bytes())
    }

    /// The token's text as the reference reports it: the text it covers, except for a byte
    /// token, which is its `<0xXX>` piece. (The id alone cannot tell: the unk id may itself be
    /// a byte piece.)
    pub fn token_value<'a>(&'a self, word: &'a str, t: &Token) -> &'a str {
        let covered = &word[t.start as usize..t.end as usize];
        if self.trie.get(covered.as_bytes()) != Some(t.id)
            && self.byte_fallback
            && covered.bytes().all(|b| self.byte_ids[b as usize] != NONE)
        {
            return self.id_to_token(t.id).unwrap_or(covered);
        }
        covered
    }

    /// Appends the tokens of `word` to `out` (byte offsets within the word). The only error is
    /// an unknown char in a model without an unk id.
    pub fn tokenize(&self, word: &str, out: &mut Vec<Token>) -> Result<()> {
        if word.is_empty() {
            return Ok(());
        }
        if word.len() >= NONE as usize {
            return Err(Error::Input("a word of 4 GiB or more cannot be tokenized".into()));
        }
        WORK.with(|cell| match cell.try_borrow_mut() {
            // SentencePiece's model sees whole texts: it caches words (`spm_words`).
            Ok(mut work) if self.spm => self.tokenize_spm(word, &mut work, out),
            Ok(mut work) => self.tokenize_cached(word, &mut work, out),
            // Only reachable if tokenizing re-entered itself on this thread; stay correct.
            Err(_) if self.spm => self.tokenize_spm(word, &mut Work::default(), out),
            Err(_) => self.tokenize_with(word, &mut Vec::new(), out),
        })
    }

    fn tokenize_cached(&self, word: &str, work: &mut Work, out: &mut Vec<Token>) -> Result<()> {
        if word.len() >= MAX_WORD {
            return self.tokenize_with(word, &mut work.lattice, out);
        }
        if let Some(tokens) = work.cache.get(self.cache_id, word) {
            out.extend_from_slice(tokens);
            return Ok(());
        }
        let first = out.len();
        self.tokenize_with(word, &mut work.lattice, out)?;
        work.cache.insert(self.cache_id, word, out[first..].iter().copied());
        Ok(())
    }

    /// SentencePiece's encode of a whole text: its lattice, then its unknown chars.
    fn tokenize_spm(&self, text: &str, work: &mut Work, out: &mut Vec<Token>) -> Result<()> {
        self.spm_resolved(text, work, |id, start, end| out.push(self.token(id, start, end)))
    }

    /// The ids of [`Unigram::tokenize`] for a SentencePiece model, appended to `ids`.
    pub fn tokenize_spm_ids(&self, text: &str, ids: &mut Vec<u32>) -> Result<()> {
        if text.len() >= NONE as usize {
            return Err(Error::Input("a word of 4 GiB or more cannot be tokenized".into()));
        }
        let mut push = |id, _, _| ids.push(id);
        WORK.with(|cell| match cell.try_borrow_mut() {
            Ok(mut work) => self.spm_resolved(text, &mut work, &mut push),
            Err(_) => self.spm_resolved(text, &mut Work::default(), &mut push),
        })
    }

    /// SentencePiece's tokens of a whole text, each unknown one resolved as it comes.
    fn spm_resolved(
        &self,
        text: &str,
        work: &mut Work,
        mut push: impl FnMut(u32, usize, usize),
    ) -> Result<()> {
        let unk = self.unk_id.ok_or_else(missing_unk)?;
        let bytes = self.byte_fallback.then_some(&*self.byte_ids);
        let mut unknowns = Unknowns::new(text, unk, bytes);
        let mut token = |id, start, end| unknowns.token(id, start, end, &mut push);
        match self.spm_word_scores {
            Some(max_score) => self.spm_words(text, max_score, work, &mut token)?,
            None => {
                let nodes = &mut work.nodes;
                nodes.clear();
                self.best_path::<f32, false>(text, 0.0, &mut work.lattice32, &mut Vec::new(), nodes)?;
                for t in nodes.iter() {
                    token(t.id, t.start as usize, t.end as usize);
                }
            }
        }
        unknowns.finish(&mut push);
        Ok(())
    }

    /// SentencePiece's path through `text` (as [`Unigram::best_path`] in float32 over the whole
    /// text finds it) word by word, where its lattice falls apart before every "▁" (no piece
    /// holds one past its first char), a word's path taken from the word cache where it can be.
    ///
    /// A word's path depends on the text before it only through the score where the word
    /// starts. Each float32 sum rounds by at most half an ulp of the largest score magnitude on
    /// a path, so along a word of n bytes a sum is off its exact value by at most n of those.
    /// Where, at every end on a word's best path computed exactly from 0, the winner beats the
    /// runner-up by more than twice that, float32 picks the same path from any start, and the
    /// score at the word's end is the path's float32 sum from there. A word that keeps every
    /// sum within ±[`SPM_SCORE_RESET`] shifts no score inside it. Other words run their float32
    /// lattice from the score where they start, as the whole text's lattice would.
    fn spm_words(
        &self,
        text: &str,
        max_score: f32,
        work: &mut Work,
        token: &mut impl FnMut(u32, usize, usize),
    ) -> Result<()> {
        let Work { lattice, lattice32, runners_up, spm_cache, spm_owner, ids, nodes, .. } = work;
        let out = nodes;
        out.clear();
        if *spm_owner != self.cache_id {
            spm_cache.clear();
            *spm_owner = self.cache_id;
        }
        let top = SPM_SCORE_RESET + max_score;
        let half_ulp = (f32::from_bits(top.to_bits() + 1) - top) as f64 / 2.0;
        let unknown = self.unk_score as f32;
        let unk = self.unk_id.ok_or_else(missing_unk)?;
        let bytes = text.as_bytes();
        let mut here = 0f32;
        let mut start = 0;
        while start < bytes.len() {
            let end = word_end(bytes, start);
            let word = &text[start..end];
            if here.past_reset() {
                here = 0.0;
            }
            let settled = word.len() < MAX_WORD
                && here.abs() + word.len() as f32 * (max_score + 1.0) <= SPM_SCORE_RESET;
            let hash = hash_bytes(word.as_bytes());
            ids.clear();
            let mut found = settled && {
                let short = if word.len() <= 8 { pack(word.as_bytes()) } else { 0 };
                spm_cache.get_into(word.as_bytes(), hash, short, ids)
            };
            if settled && !found {
                let at = out.len();
                self.best_path::<f64, true>(word, 0.0, lattice, runners_up, out)?;
                let margin = 2.0 * word.len() as f64 * half_ulp;
                found = out[at..].iter().all(|t| {
                    let e = t.end as usize;
                    lattice[e].score - runners_up[e] > margin
                });
                if found {
                    ids.extend(out[at..].iter().map(|t| t.id));
                    spm_cache.insert(word.as_bytes(), hash, ids);
                }
                out.truncate(at);
            }
            if found {
                let mut at = start;
                for &id in ids.iter() {
                    let (len, score) = if id == unk {
                        (char_len(bytes[at]), unknown)
                    } else {
                        (self.pieces[id as usize].0.len(), self.scores32[id as usize])
                    };
                    here += score;
                    token(id, at, at + len);
                    at += len;
                }
                start = end;
                continue;
            }
            here = self.best_path::<f32, false>(word, here, lattice32, &mut Vec::new(), out)?;
            for t in out.drain(..) {
                token(t.id, start + t.start as usize, start + t.end as usize);
            }
            start = end;
        }
        Ok(())
    }

    fn tokenize_with(&self, word: &str, best: &mut Vec<Best<f64>>, out: &mut Vec<Token>) -> Result<()> {
        let first = out.len();
        self.best_path::<f64, false>(word, 0.0, best, &mut Vec::new(), out)?;
        if self.unk_id.is_none() {
            // No node has the unk id: nothing to fuse.
            return Ok(());
        }
        self.fuse_unknowns(word, out, first)
    }

    /// Calls `f(end, id)` for every piece that starts at byte `start` of `bytes` (the lattice's
    /// nodes there, unknown chars aside); whether one of them is the char at `start` alone
    /// (else that char gets an unknown node).
    #[inline(always)]
    fn pieces_at(&self, bytes: &[u8], start: usize, mut f: impl FnMut(usize, u32)) -> bool {
        let char_end = start + char_len(bytes[start]);
        let mut one_char = false;
        self.pieces_da.prefixes(&bytes[start..], |len, id| {
            f(start + len, id);
            one_char |= start + len == char_end;
        });
        one_char
    }

    /// Appends the best path's nodes to `out`, unknown chars one by one (with the unk id),
    /// scored in `S` (see [`Score`]) from `from` at the word's start; its score at the end.
    /// With `RUNNERS_UP`, `runners_up[end]` is the best score of a candidate that lost at `end`
    /// (or a tie's later one), else it is not touched.
    fn best_path<S: Score, const RUNNERS_UP: bool>(
        &self,
        word: &str,
        from: S,
        best: &mut Vec<Best<S>>,
        runners_up: &mut Vec<S>,
        out: &mut Vec<Token>,
    ) -> Result<S> {
        let bytes = word.as_bytes();
        let n = bytes.len();
        best.clear();
        best.resize(n + 1, Best { score: S::default(), start: NONE, id: 0 });
        best[0].score = from;
        if RUNNERS_UP {
            runners_up.clear();
            runners_up.resize(n + 1, S::LOWEST);
        }
        let best = &mut best[..];
        let runners_up = &mut runners_up[..];
        let scores = S::scores(self);
        // What makes the unchecked reads of scores below sound.
        assert_eq!(scores.len(), self.pieces.len(), "a score per piece");
        let da = &self.pieces_da;
        // Keeps a candidate ending at `end` that beats what reaches there (the first one wins
        // a tie).
        let relax =
            |best: &mut [Best<S>], runners_up: &mut [S], end: usize, score: S, start: usize, id: u32| {
                debug_assert!(end < best.len());
                // SAFETY: candidates end at most at `n` (the walks below stop there), and `best`
                // has `n + 1` entries.
                let b = unsafe { best.get_unchecked_mut(end) };
                if b.start == NONE || score > b.score {
                    if RUNNERS_UP && b.start != NONE {
                        runners_up[end] = b.score;
                    }
                    *b = Best { score, start: start as u32, id };
                } else if RUNNERS_UP && score > runners_up[end] {
                    runners_up[end] = score;
                }
            };
        let piece = |id: u32| {
            debug_assert!((id as usize) < scores.len());
            // SAFETY: every id the double array holds is a vocabulary index (it was built
            // from the pieces' ids), and there is a score per piece (asserted above).
            unsafe { *scores.get_unchecked(id as usize) }
        };
        let mut start = 0;
        while start < n {
            let mut here = best[start].score;
            if S::SENTENCEPIECE && here.past_reset() {
                here = self.reset_scores(best, start);
            }
            // Within UTF-8 text, a char's lead byte tells its end.
            let char_end = start + char_len(bytes[start]);
            // The char's bytes: pieces are UTF-8 too, so none ends inside it.
            let (mut node, mut base) = da.root();
            let mut id = NONE;
            let mut walking = true;
            for &b in &bytes[start..char_end] {
                match da.child(node, base, b) {
                    Some(c) => (node, base, id) = c,
                    None => {
                        walking = false;
                        break;
                    }
                }
            }
            if walking && id != NONE {
                relax(best, runners_up, char_end, piece(id).add(here), start, id);
            } else {
                // No piece is the char alone: an unknown node (and no piece ends at its end).
                let score = S::unknown(self).add(here);
                let b = &best[char_end];
                if b.start == NONE || score > b.score {
                    let id = self.unk_id.ok_or_else(missing_unk)?;
                    relax(best, runners_up, char_end, score, start, id);
                } else if RUNNERS_UP && score > runners_up[char_end] {
                    runners_up[char_end] = score;
                }
            }
            if walking {
                // The longer pieces, shortest first.
                for (k, &b) in bytes[char_end..].iter().enumerate() {
                    let Some((next, next_base, id)) = da.child(node, base, b) else { break };
                    if id != NONE {
                        relax(best, runners_up, char_end + k + 1, piece(id).add(here), start, id);
                    }
                    (node, base) = (next, next_base);
                }
            }
            start = char_end;
        }
        // Walk back from the end, then turn the nodes around.
        let first = out.len();
        let mut end = n;
        while end > 0 {
            let b = best[end];
            out.push(self.token(b.id, b.start as usize, end));
            end = b.start as usize;
        }
        out[first..].reverse();
        Ok(best[n].score)
    }

    /// SentencePiece's shift of the scores when the one at `start` (where the next piece
    /// starts) is past the reset bound: every score reached from there on moves by it. The
    /// score at `start` after the shift (0).
    #[cold]
    #[inline(never)]
    fn reset_scores<S: Score>(&self, best: &mut [Best<S>], start: usize) -> S {
        let last = (start + self.reach).min(best.len() - 1);
        let shift = best[start].score;
        for (i, b) in best[start..=last].iter_mut().enumerate() {
            if i == 0 || b.start != NONE {
                b.score = b.score.sub(shift);
            }
        }
        S::default()
    }

    /// Replaces each run of unk-id tokens in `out[first..]` by the tokens of its fused text.
    fn fuse_unknowns(&self, word: &str, out: &mut Vec<Token>, first: usize) -> Result<()> {
        let unk = self.unk_id;
        if !out[first..].iter().any(|t| Some(t.id) == unk) {
            return Ok(());
        }
        let path: Vec<Token> = out.drain(first..).collect();
        let mut i = 0;
        while i < path.len() {
            if Some(path[i].id) != unk {
                out.push(path[i]);
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < path.len() && Some(path[j].id) == unk {
                j += 1;
            }
            let (start, end) = (path[i].start as usize, path[j - 1].end as usize);
            self.push_unknown(&word[start..end], start, out)?;
            i = j;
        }
        Ok(())
    }

    /// A token of `id` over bytes `start..end` of the word.
    #[inline]
    fn token(&self, id: u32, start: usize, end: usize) -> Token {
        Token { id, start: start as u32, end: end as u32, unk: Some(id) == self.unk_id }
    }

    /// The tokens of fused unknown text `s` found at byte `start`.
    fn push_unknown(&self, s: &str, start: usize, out: &mut Vec<Token>) -> Result<()> {
        let end = start + s.len();
        if let Some(id) = self.trie.get(s.as_bytes()) {
            out.push(self.token(id, start, end));
            return Ok(());
        }
        if self.byte_fallback && s.bytes().all(|b| self.byte_ids[b as usize] != NONE) {
            out.extend(s.bytes().map(|b| self.token(self.byte_ids[b as usize], start, end)));
            return Ok(());
        }
        let id = self.unk_id.ok_or_else(missing_unk)?;
        out.push(self.token(id, start, end));
        Ok(())
    }
}

mod double_array;
mod lattice;
#[cfg(test)]
mod tests;

pub use lattice::{Lattice, LatticeNode, LatticeToken};
