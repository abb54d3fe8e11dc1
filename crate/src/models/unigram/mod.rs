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
//! matched; unknown chars are not fused and looked up but resolved as SentencePiece does
//! ([`crate::models::sentencepiece::Unknowns`]).

use crate::error::{Error, Result};
use crate::models::bpe::cache::PieceCache;
use crate::models::bpe::table::PieceKey;
use crate::models::cache::{WordCache, MAX_WORD};
use crate::models::sentencepiece::{piece_byte, PieceKind, Unknowns};
use crate::models::wordpiece::trie::Trie;
use crate::models::Token;
use crate::unicode::char_len;
use double_array::DoubleArray;
use std::cell::RefCell;

/// The score an unknown char gets below the lowest piece score.
const UNK_PENALTY: f64 = 10.0;
/// Marks a lattice end no candidate has reached yet, and a byte with no `<0xXX>` piece.
const NONE: u32 = u32::MAX;

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
    /// Models whose lattice falls apart before every "▁" (no piece holds one past its first
    /// char) and which have an unk id: the largest magnitude of a score on a path, for
    /// [`Unigram::words`]. `None` when a piece holds an inner "▁".
    word_scores: Option<f64>,
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
    fn to_f64(self) -> f64;
    /// How large a path score may grow, in magnitude, before [`Unigram::words`] stops
    /// replaying words through a text of `len` bytes whose scores are at most `max` in
    /// magnitude (on a path, nodes are at least a byte long).
    fn sum_limit(len: usize, max: f64) -> f64;
    /// Half an ulp of `x` in this float: the most one sum near `x` rounds by.
    fn half_ulp(x: f64) -> f64;
    /// The lattice of this score type in `work`.
    fn lattice(work: &mut Work) -> &mut Vec<Best<Self>>;
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
    fn to_f64(self) -> f64 {
        self
    }
    fn sum_limit(len: usize, max: f64) -> f64 {
        len as f64 * (max + 1.0)
    }
    fn half_ulp(x: f64) -> f64 {
        (f64::from_bits(x.to_bits() + 1) - x) / 2.0
    }
    fn lattice(work: &mut Work) -> &mut Vec<Best<Self>> {
        &mut work.lattice
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
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn sum_limit(_: usize, _: f64) -> f64 {
        SPM_SCORE_RESET as f64
    }
    fn half_ulp(x: f64) -> f64 {
        let mut y = x as f32;
        if (y as f64) < x {
            y = f32::from_bits(y.to_bits() + 1);
        }
        (f32::from_bits(y.to_bits() + 1) - y) as f64 / 2.0
    }
    fn lattice(work: &mut Work) -> &mut Vec<Best<Self>> {
        &mut work.lattice32
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
    /// The runner-up's score at each end of `lattice` (see [`Unigram::words`]).
    runners_up: Vec<f64>,
    cache: WordCache<Token>,
    /// Word → ids (see [`Unigram::words`]).
    word_ids: PieceCache,
    /// Word → path and fused ids (see [`Unigram::words_ids`]).
    fused_ids: PieceCache,
    /// Pre-token → ids (see [`Unigram::tokenize_ids`]).
    piece_ids: PieceCache,
    /// Raw stretch → its words' normalized length and entry (see [`Unigram::raw_words_ids`]),
    /// or its pieces' ids (see [`Unigram::raw_pieces_ids`]).
    raw_ids: PieceCache,
    /// The normalizer whose stretches `raw_ids` holds (its cache id).
    #[cfg(not(target_arch = "wasm32"))]
    raw_owner: u64,
    /// A raw stretch's normalized words, their path ids and fused ids; a tagged stretch's key.
    #[cfg(not(target_arch = "wasm32"))]
    norm: String,
    #[cfg(not(target_arch = "wasm32"))]
    raw_key: Vec<u8>,
    #[cfg(not(target_arch = "wasm32"))]
    raw_path: Vec<u32>,
    #[cfg(not(target_arch = "wasm32"))]
    raw_fused: Vec<u32>,
    /// Owner of the id caches' words (a model's `cache_id`).
    word_owner: u64,
    /// A pre-token's tokens, for its ids; SentencePiece's path through a text.
    tokens: Vec<Token>,
    ids: Vec<u32>,
    /// A text's path not yet summed (see [`Unigram::words_ids`]).
    path_ids: Vec<u32>,
    /// A path from its first unknown char on, being fused.
    nodes: Vec<Token>,
}

thread_local! {
    static WORK: RefCell<Work> = RefCell::new(Work::default());
}

fn missing_unk() -> Error {
    Error::Input("encountered an unknown token but the Unigram model has no unk_id".into())
}

/// The key of the raw text `raw` tagged `tag` in the cache of raw stretches: its bytes, then the
/// tag unless it is 0 (see [`Unigram::raw_pieces_ids`]).
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn tagged_key<'k>(raw: &'k str, tag: u8, key: &'k mut Vec<u8>) -> &'k [u8] {
    if tag == 0 {
        return raw.as_bytes();
    }
    key.clear();
    key.extend_from_slice(raw.as_bytes());
    key.push(tag);
    key
}

/// Where the word of SentencePiece's text that starts at `start` ends: at the next "▁" after
/// its first char, or at the text's end.
#[inline(always)]
fn word_end(bytes: &[u8], start: usize) -> usize {
    const LEAD: u64 = 0xE2 * (u64::MAX / 255);
    const LOW: u64 = u64::MAX / 255;
    const HIGH: u64 = LOW << 7;
    let is_space = |i: usize| bytes.get(i..i + 3) == Some(&[0xE2, 0x96, 0x81][..]);
    let mut i = start + char_len(bytes[start]);
    // The lead byte 0xE2 sought eight bytes at a time: the lowest byte that the zero-byte
    // test flags in `w ^ LEAD` is always a true one (a borrow only flags bytes above it).
    while i + 8 <= bytes.len() {
        let w = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap()) ^ LEAD;
        let found = w.wrapping_sub(LOW) & !w & HIGH;
        if found == 0 {
            i += 8;
            // A long word (a script without spaces): a vector search for the rest, natively.
            #[cfg(not(target_arch = "wasm32"))]
            if i - start >= 32 {
                while let Some(k) = memchr::memchr(0xE2, &bytes[i..]) {
                    if is_space(i + k) {
                        return i + k;
                    }
                    i += k + 1;
                }
                return bytes.len();
            }
            continue;
        }
        let k = i + (found.trailing_zeros() / 8) as usize;
        if is_space(k) {
            return k;
        }
        i = k + 1;
    }
    while i < bytes.len() {
        if bytes[i] == 0xE2 && is_space(i) {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

/// For [`Unigram::words`]: the largest magnitude of a score on a path (the lattice's
/// `pieces` with their scores, and the unknown char's score), or `None` when a piece holds "▁"
/// past its first char (the lattice then does not fall apart before "▁"), or a score is not
/// finite.
fn word_scores<'a>(pieces: impl Iterator<Item = (&'a str, f64)>, unk_score: f64) -> Option<f64> {
    let mut max = unk_score.abs();
    for (p, s) in pieces {
        if !s.is_finite() || p.chars().skip(1).any(|c| c == '▁') {
            return None;
        }
        max = max.max(s.abs());
    }
    max.is_finite().then_some(max)
}

/// [`Unigram::words_ids`] along a text, word by word: the path's score where the next word
/// starts, kept lazily.
///
/// The score where a word starts is only needed for a word whose path is not cached (a near
/// tie, or a word too long to cache): it is summed then from the cached paths' ids, in path
/// order, as [`Unigram::words`] sums it token by token.
struct WordWalk {
    max_score: f64,
    limit: f64,
    half_ulp: f64,
    unk: u32,
    /// The path's score up to the ids of `Work::path_ids` (which are not summed yet).
    here: f64,
    /// Where the next word starts in the normalized text.
    start: usize,
}

impl WordWalk {
    /// A walk along a text of at most `len` bytes (with no path ids left from another).
    fn new(m: &Unigram, len: usize, max_score: f64, work: &mut Work) -> Result<WordWalk> {
        work.path_ids.clear();
        let limit = f64::sum_limit(len, max_score);
        Ok(WordWalk {
            max_score,
            limit,
            half_ulp: f64::half_ulp(limit + max_score),
            unk: m.unk_id.ok_or_else(missing_unk)?,
            here: 0.0,
            start: 0,
        })
    }

    /// Whether the cached words of the next `len` bytes are settled without knowing the score
    /// here: a path to a word's start has at most that many scores, each at most `max_score`
    /// in magnitude; their float sum is off by less than half of them while that bound stays
    /// below 2^52. Within it the score at each word passes `words`' test without being known:
    /// the bound at the end of the `len` bytes covers every word inside them.
    #[inline(always)]
    fn settled_blind(&self, len: usize) -> bool {
        let end = (self.start + len) as f64 * (self.max_score + 1.0);
        end <= 4.0e15 && end <= self.limit
    }

    /// Sums the path's ids not yet summed into `here`.
    fn sum_here(&mut self, m: &Unigram, path_ids: &mut Vec<u32>) {
        let unk = self.unk;
        let score = |id: u32| if id == unk { m.unk_score } else { m.scores[id as usize] };
        self.here = path_ids.drain(..).fold(self.here, |h, id| score(id) + h);
    }

    /// Appends the ids of the next word, `word`; true when its entry (left in `Work::ids`) is
    /// cached.
    fn word(&mut self, m: &Unigram, word: &str, work: &mut Work, ids: &mut Vec<u32>) -> Result<bool> {
        let Work { lattice, runners_up, fused_ids, ids: entry, path_ids, tokens, nodes, .. } = work;
        let reach = word.len() as f64 * (self.max_score + 1.0);
        let mut settled = word.len() < MAX_WORD;
        if settled && !self.settled_blind(word.len()) {
            self.sum_here(m, path_ids);
            settled = self.here.abs() + reach <= self.limit;
        }
        let key = PieceKey::of(word.as_bytes());
        entry.clear();
        let mut found = settled && fused_ids.get_into(word.as_bytes(), key.hash, key.short, entry);
        if settled && !found {
            tokens.clear();
            found = m.path_from_any_start(word, self.half_ulp, reach, lattice, runners_up, tokens)?;
            if found {
                // The path's length, its ids, then its fused ids where they differ.
                entry.push(tokens.len() as u32);
                entry.extend(tokens.iter().map(|t| t.id));
                if tokens.iter().any(|t| t.id == self.unk) {
                    m.fuse_unknowns(word, tokens, 0, nodes)?;
                    entry.extend(tokens.iter().map(|t| t.id));
                }
                fused_ids.insert(word.as_bytes(), key.hash, entry);
            }
        }
        if found {
            push_entry(entry, path_ids, ids);
        } else {
            self.sum_here(m, path_ids);
            tokens.clear();
            self.here = m.best_path::<f64, false>(word, self.here, lattice, &mut Vec::new(), tokens)?;
            m.fuse_unknowns(word, tokens, 0, nodes)?;
            ids.extend(tokens.iter().map(|t| t.id));
        }
        self.start += word.len();
        Ok(found)
    }

    /// Appends the ids of the next words from their raw stretch's entry, if cached (see
    /// [`Unigram::raw_words_ids`]) and settled without the score here.
    #[cfg(not(target_arch = "wasm32"))]
    #[inline]
    fn raw_cached(&mut self, raw: &[u8], work: &mut Work, ids: &mut Vec<u32>) -> bool {
        let key = PieceKey::of(raw);
        let entry = &mut work.ids;
        entry.clear();
        if !work.raw_ids.get_into(raw, key.hash, key.short, entry) {
            return false;
        }
        // The words' normalized length (each word's is less: its check passes where this
        // does), their path's length, its ids, then their fused ids.
        let (len, k) = (entry[0] as usize, entry[1] as usize);
        if !self.settled_blind(len) {
            return false;
        }
        work.path_ids.extend_from_slice(&entry[2..2 + k]);
        ids.extend_from_slice(&entry[2 + k..]);
        self.start += len;
        true
    }

    /// Caches the path ids and fused ids of a raw stretch's words (`len` bytes normalized),
    /// each of which [`WordWalk::word`] found cached.
    #[cfg(not(target_arch = "wasm32"))]
    fn cache_raw(&self, raw: &[u8], len: usize, path: &[u32], fused: &[u32], work: &mut Work) {
        let key = PieceKey::of(raw);
        let entry = &mut work.ids;
        entry.clear();
        entry.extend_from_slice(&[len as u32, path.len() as u32]);
        entry.extend_from_slice(path);
        entry.extend_from_slice(fused);
        work.raw_ids.insert(raw, key.hash, entry);
    }
}

/// Appends a cached word's path ids to `path_ids` and its fused ids to `ids` (see
/// [`WordWalk::word`] for the entry's layout).
#[inline(always)]
fn push_entry(entry: &[u32], path_ids: &mut Vec<u32>, ids: &mut Vec<u32>) {
    let k = entry[0] as usize;
    path_ids.extend_from_slice(&entry[1..1 + k]);
    ids.extend_from_slice(if entry.len() > 1 + k { &entry[1 + k..] } else { &entry[1..] });
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
        let unk_score = min_score - UNK_PENALTY;
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
            unk_id: unk_id.map(|u| u as u32),
            byte_fallback,
            unk_score,
            pieces_da: DoubleArray::new(&trie),
            trie,
            byte_ids,
            cache_id: crate::models::new_owner_id(),
            spm: false,
            reach: 4,
            word_scores: match unk_id {
                Some(_) => word_scores(vocab.iter().map(|(p, s)| (p.as_str(), *s)), unk_score),
                None => None,
            },
            pieces: vocab,
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
        let on_paths = pieces.iter().zip(&scores).filter(|(p, _)| in_lattice(p));
        let word_scores = word_scores(on_paths.map(|(p, &s)| (p.0.as_str(), s)), unk_score as f64);
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
            cache_id: crate::models::new_owner_id(),
            spm: true,
            reach,
            word_scores,
        })
    }

    pub fn vocab(&self) -> &[(String, f64)] {
        &self.pieces
    }

    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
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
    /// token, which is its `<0xXX>` piece. A byte token covers its whole run of unknown text,
    /// so its id tells, not that text (read once per byte, a run of n bytes cost n² steps);
    /// except for the unk id, which may itself be a byte piece: an unk token covers text some
    /// byte of which has no byte piece.
    pub fn token_value<'a>(&'a self, word: &'a str, t: &Token) -> &'a str {
        let covered = &word[t.start as usize..t.end as usize];
        let Some(name) = self.id_to_token(t.id) else { return covered };
        let byte_piece = piece_byte(name).is_some_and(|b| self.byte_ids[b as usize] == t.id);
        if !byte_piece
            || (Some(t.id) == self.unk_id && covered.bytes().any(|b| self.byte_ids[b as usize] == NONE))
        {
            return covered;
        }
        name
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
            Ok(mut work) => self.tokenize_in(word, &mut work, out),
            // Only reachable if tokenizing re-entered itself on this thread; stay correct.
            Err(_) => self.tokenize_cold(word, out),
        })
    }

    /// [`Unigram::tokenize`] with a work area of its own (the thread's is in use).
    #[cold]
    #[inline(never)]
    fn tokenize_cold(&self, word: &str, out: &mut Vec<Token>) -> Result<()> {
        self.tokenize_in(word, &mut Work::default(), out)
    }

    /// The ids of [`Unigram::tokenize`]'s tokens of `word`, appended to `ids`: a pre-token
    /// the lattice takes whole is looked up by its ids alone, with no tokens built.
    pub fn tokenize_ids(&self, word: &str, ids: &mut Vec<u32>) -> Result<()> {
        if word.is_empty() {
            return Ok(());
        }
        if word.len() >= NONE as usize {
            return Err(Error::Input("a word of 4 GiB or more cannot be tokenized".into()));
        }
        WORK.with(|cell| match cell.try_borrow_mut() {
            Ok(mut work) if self.spm => self.spm_resolved(word, &mut work, |id, _, _| ids.push(id)),
            Ok(mut work) => self.piece_ids_in(word, &mut work, ids),
            Err(_) => {
                let mut tokens = Vec::new();
                self.tokenize_cold(word, &mut tokens)?;
                ids.extend(tokens.iter().map(|t| t.id));
                Ok(())
            }
        })
    }

    /// [`Unigram::tokenize_ids`] of a non-empty pre-token (not of SentencePiece's model) with
    /// the thread's work at hand.
    #[inline(always)]
    fn piece_ids_in(&self, word: &str, work: &mut Work, ids: &mut Vec<u32>) -> Result<()> {
        if cfg!(not(target_arch = "wasm32")) && word.len() < MAX_WORD {
            return self.ids_cached(word, work, ids);
        }
        // Native only, as `tokenize_uncached`'s split.
        if cfg!(not(target_arch = "wasm32")) && self.fuses_by_word() {
            let max_score = self.word_scores.expect("fuses_by_word checks word_scores");
            return self.words_ids(word, max_score, work, ids);
        }
        let mut tokens = std::mem::take(&mut work.tokens);
        tokens.clear();
        self.tokenize_in(word, work, &mut tokens)?;
        ids.extend(tokens.iter().map(|t| t.id));
        work.tokens = tokens;
        Ok(())
    }

    /// [`Unigram::tokenize_ids`] of the pieces of raw stretches of text: `normalize` writes a
    /// stretch's text, whose pieces start at each "▁" past its first char (a Metaspace that
    /// splits there), and the stretch's ids are cached by its raw bytes and its tag: 0, or a
    /// byte no UTF-8 text holds (0xF8 and up), for a stretch whose pieces depend on where it
    /// stands (a text's first or last), cached apart from the same bytes elsewhere. `owner`
    /// names the pipeline that maps raw text to pieces. False (nothing appended) where
    /// `normalize` refuses a stretch, telling false.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn raw_pieces_ids<'a>(
        &self,
        stretches: impl Iterator<Item = (&'a str, u8)>,
        owner: u64,
        mut normalize: impl FnMut(&str, u8, &mut String) -> bool,
        ids: &mut Vec<u32>,
    ) -> Result<bool> {
        WORK.with(|cell| {
            let mut work = cell.borrow_mut();
            let work = &mut *work;
            self.own_raw_cache(work, owner);
            let (mut norm, mut key) = (std::mem::take(&mut work.norm), std::mem::take(&mut work.raw_key));
            let before = ids.len();
            let mut stretch_ids = |raw: &str, tag: u8, work: &mut Work| -> Result<bool> {
                let bytes = tagged_key(raw, tag, &mut key);
                let k = PieceKey::of(bytes);
                if work.raw_ids.get_into(bytes, k.hash, k.short, ids) {
                    return Ok(true);
                }
                norm.clear();
                if !normalize(raw, tag, &mut norm) {
                    return Ok(false);
                }
                let at = ids.len();
                let mut start = 0;
                while start < norm.len() {
                    let end = word_end(norm.as_bytes(), start);
                    self.piece_ids_in(&norm[start..end], work, ids)?;
                    start = end;
                }
                work.raw_ids.insert(bytes, k.hash, &ids[at..]);
                Ok(true)
            };
            let mut answered = Ok(true);
            for (raw, tag) in stretches {
                answered = stretch_ids(raw, tag, work);
                if !matches!(answered, Ok(true)) {
                    break;
                }
            }
            (work.norm, work.raw_key) = (norm, key);
            if matches!(answered, Ok(false)) {
                ids.truncate(before);
            }
            answered
        })
    }

    /// Appends the ids `owner`'s pipeline cached for the raw text `raw` tagged `tag` (see
    /// [`Unigram::raw_pieces_ids`]; 0 is for stretches) and tells true, or tells false.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn raw_text_ids(&self, raw: &str, tag: u8, owner: u64, ids: &mut Vec<u32>) -> bool {
        WORK.with(|cell| {
            let mut work = cell.borrow_mut();
            let work = &mut *work;
            self.own_raw_cache(work, owner);
            let bytes = tagged_key(raw, tag, &mut work.raw_key);
            let k = PieceKey::of(bytes);
            work.raw_ids.get_into(bytes, k.hash, k.short, ids)
        })
    }

    /// Caches the ids of `owner`'s pipeline for the raw text `raw` tagged `tag`, which
    /// [`Unigram::raw_text_ids`] did not find.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn cache_raw_text(&self, raw: &str, tag: u8, owner: u64, ids: &[u32]) {
        WORK.with(|cell| {
            let mut work = cell.borrow_mut();
            let work = &mut *work;
            self.own_raw_cache(work, owner);
            let bytes = tagged_key(raw, tag, &mut work.raw_key);
            work.raw_ids.insert(bytes, PieceKey::of(bytes).hash, ids);
        })
    }

    #[inline(always)]
    fn tokenize_in(&self, word: &str, work: &mut Work, out: &mut Vec<Token>) -> Result<()> {
        if self.spm {
            // SentencePiece's model sees whole texts: it caches words (`words`).
            return self.tokenize_spm(word, work, out);
        }
        if word.len() >= MAX_WORD {
            return self.tokenize_uncached(word, work, out);
        }
        if let Some(tokens) = work.cache.get(self.cache_id, word) {
            out.extend_from_slice(tokens);
            return Ok(());
        }
        let first = out.len();
        self.tokenize_uncached(word, work, out)?;
        work.cache.insert(self.cache_id, word, out[first..].iter().copied());
        Ok(())
    }

    /// The tokens of a pre-token not found whole in a cache: word by word where it holds
    /// words (a "▁" past its first char: Metaspace without split, a whole text) and its
    /// lattice falls apart before them, each word cached; else its lattice.
    fn tokenize_uncached(&self, word: &str, work: &mut Work, out: &mut Vec<Token>) -> Result<()> {
        match self.word_scores {
            // Native only: the page's general module is at its size budget (the split saves
            // time on long texts, not ids), and the page's texts are short.
            Some(max_score)
                if cfg!(not(target_arch = "wasm32")) && word_end(word.as_bytes(), 0) < word.len() =>
            {
                self.words::<f64>(word, max_score, work, out)
            }
            _ => self.tokenize_with(word, work, out),
        }
    }

    /// [`Unigram::tokenize_ids`] of a pre-token of fewer than [`MAX_WORD`] bytes, through the
    /// cache of pre-tokens' ids.
    fn ids_cached(&self, word: &str, work: &mut Work, ids: &mut Vec<u32>) -> Result<()> {
        self.own_caches(work);
        let bytes = word.as_bytes();
        let key = PieceKey::of(bytes);
        if work.piece_ids.get_into(bytes, key.hash, key.short, ids) {
            return Ok(());
        }
        let mut tokens = std::mem::take(&mut work.tokens);
        tokens.clear();
        self.tokenize_uncached(word, work, &mut tokens)?;
        let at = ids.len();
        ids.extend(tokens.iter().map(|t| t.id));
        work.piece_ids.insert(bytes, key.hash, &ids[at..]);
        work.tokens = tokens;
        Ok(())
    }

    /// Whether [`Unigram::words_ids`] applies: the lattice falls apart before every "▁", "▁"
    /// is a piece and the unk piece does not begin with one, so every word but a text's
    /// first begins with a piece that is not fused and a run of unknown chars (with the unk
    /// piece) never goes on past its word.
    pub(crate) fn fuses_by_word(&self) -> bool {
        let unk_piece = self.unk_id.map(|u| self.pieces[u as usize].0.as_str());
        self.word_scores.is_some()
            && !self.spm
            && self.trie.get("▁".as_bytes()).is_some_and(|id| Some(id) != self.unk_id)
            && !unk_piece.is_some_and(|p| p.starts_with('▁'))
    }

    /// The ids of [`Unigram::words`] in float64 with unknown runs fused, for a text where
    /// [`Unigram::fuses_by_word`]: a word's path and its fused ids are cached together, and a
    /// cached word costs two copies, no tokens and no fusing.
    fn words_ids(&self, text: &str, max_score: f64, work: &mut Work, ids: &mut Vec<u32>) -> Result<()> {
        self.own_caches(work);
        let mut walk = WordWalk::new(self, text.len(), max_score, work)?;
        let mut start = 0;
        while start < text.len() {
            let end = word_end(text.as_bytes(), start);
            walk.word(self, &text[start..end], work, ids)?;
            start = end;
        }
        Ok(())
    }

    /// [`Unigram::tokenize_ids`] of one piece given as its first words and raw stretches of
    /// text, each of which stands for "▁" and the stretch normalized alone: `head` is the
    /// piece's normalized start (whole words), `stretches` the raw text after it cut at spaces
    /// (a stretch may hold spaces that are not cut), `len_bound` at least the piece's
    /// normalized length. `normalize` writes a stretch's normalized words ("▁" and the stretch
    /// normalized) into its buffer.
    ///
    /// A stretch is cached by its raw bytes with its words' ids, so text seen before costs a
    /// lookup per stretch and no normalizing.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn raw_words_ids<'a>(
        &self,
        head: &str,
        stretches: impl Iterator<Item = &'a str>,
        len_bound: usize,
        normalizer_id: u64,
        mut normalize: impl FnMut(&str, &mut String),
        ids: &mut Vec<u32>,
    ) -> Result<()> {
        let max_score = self.word_scores.filter(|_| self.fuses_by_word());
        let max_score = max_score.expect("raw_words_ids needs a model that fuses by word");
        WORK.with(|cell| {
            let mut work = cell.borrow_mut();
            let work = &mut *work;
            self.own_raw_cache(work, normalizer_id);
            let mut walk = WordWalk::new(self, len_bound, max_score, work)?;
            let mut start = 0;
            while start < head.len() {
                let end = word_end(head.as_bytes(), start);
                walk.word(self, &head[start..end], work, ids)?;
                start = end;
            }
            let mut norm = std::mem::take(&mut work.norm);
            for raw in stretches {
                if raw.is_empty() {
                    walk.word(self, "\u{2581}", work, ids)?;
                    continue;
                }
                if walk.raw_cached(raw.as_bytes(), work, ids) {
                    continue;
                }
                norm.clear();
                normalize(raw, &mut norm);
                // The stretch's words, their path ids and fused ids gathered for its entry.
                let (mut path, mut fused) =
                    (std::mem::take(&mut work.raw_path), std::mem::take(&mut work.raw_fused));
                path.clear();
                fused.clear();
                let mut cached = raw.len() <= crate::models::bpe::cache::MAX_PIECE;
                let mut start = 0;
                while start < norm.len() {
                    let end = word_end(norm.as_bytes(), start);
                    let at = ids.len();
                    cached &= walk.word(self, &norm[start..end], work, ids)?;
                    if cached {
                        let k = work.ids[0] as usize;
                        path.extend_from_slice(&work.ids[1..1 + k]);
                        fused.extend_from_slice(&ids[at..]);
                    }
                    start = end;
                }
                if cached {
                    walk.cache_raw(raw.as_bytes(), norm.len(), &path, &fused, work);
                }
                (work.raw_path, work.raw_fused) = (path, fused);
            }
            work.norm = norm;
            Ok(())
        })
    }

    /// Appends `word`'s float64 path from score 0 to `out` (word offsets), and tells whether
    /// it can be cached for [`Unigram::words`]: at every end on it the winner beats the
    /// runner-up by more than the rounding a word of `reach` can collect (`half_ulp` of the
    /// text's largest sum), so any start score picks it too; and no token is the unk piece
    /// (on a cached path the unk id always stands for an unknown char, so that replaying it
    /// knows its length and score).
    fn path_from_any_start(
        &self,
        word: &str,
        half_ulp: f64,
        reach: f64,
        lattice: &mut Vec<Best<f64>>,
        runners_up: &mut Vec<f64>,
        out: &mut Vec<Token>,
    ) -> Result<bool> {
        let at = out.len();
        self.best_path::<f64, true>(word, 0.0, lattice, runners_up, out)?;
        let margin = 2.0 * word.len() as f64 * (half_ulp + f64::half_ulp(reach));
        Ok(out[at..].iter().all(|t| {
            let e = t.end as usize;
            let unk_piece = Some(t.id) == self.unk_id
                && self.trie.get(&word.as_bytes()[t.start as usize..e]) == self.unk_id;
            lattice[e].score - runners_up[e] > margin && !unk_piece
        }))
    }

    /// [`Unigram::own_caches`], and empties the raw-stretch cache if another pipeline
    /// (`owner`) filled it.
    #[cfg(not(target_arch = "wasm32"))]
    #[inline]
    fn own_raw_cache(&self, work: &mut Work, owner: u64) {
        self.own_caches(work);
        if work.raw_owner != owner {
            work.raw_ids.clear();
            work.raw_owner = owner;
        }
    }

    /// Empties the id caches if another model filled them.
    #[inline]
    fn own_caches(&self, work: &mut Work) {
        if work.word_owner != self.cache_id {
            work.word_ids.clear();
            work.fused_ids.clear();
            work.piece_ids.clear();
            work.raw_ids.clear();
            work.word_owner = self.cache_id;
        }
    }

    /// SentencePiece's encode of a whole text: its lattice, then its unknown chars.
    fn tokenize_spm(&self, text: &str, work: &mut Work, out: &mut Vec<Token>) -> Result<()> {
        self.spm_resolved(text, work, |id, start, end| out.push(self.token(id, start, end)))
    }

    /// SentencePiece's tokens of a whole text, pushed with each unknown one resolved.
    fn spm_resolved(
        &self,
        text: &str,
        work: &mut Work,
        mut push: impl FnMut(u32, usize, usize),
    ) -> Result<()> {
        let unk = self.unk_id.ok_or_else(missing_unk)?;
        let mut path = std::mem::take(&mut work.tokens);
        path.clear();
        // The word split is native only (see `tokenize_uncached`).
        let found = match self.word_scores.filter(|_| cfg!(not(target_arch = "wasm32"))) {
            Some(max_score) => self.words::<f32>(text, max_score, work, &mut path),
            None => self
                .best_path::<f32, false>(text, 0.0, &mut work.lattice32, &mut Vec::new(), &mut path)
                .map(|_| ()),
        };
        if found.is_ok() {
            let mut unknowns = Unknowns::new(text, unk, self.byte_fallback.then_some(&*self.byte_ids));
            for t in &path {
                unknowns.token(t.id, t.start as usize, t.end as usize, &mut push);
            }
            unknowns.finish(&mut push);
        }
        work.tokens = path;
        found
    }

    /// The path through `text` that [`Unigram::best_path`] in `S` over the whole text finds,
    /// found word by word where the lattice falls apart before every "▁" (no piece holds one
    /// past its first char), a word's path taken from the word cache where it can be. Unknown
    /// chars are fused as [`Unigram::tokenize_with`] fuses them, except SentencePiece's (its
    /// caller resolves them).
    ///
    /// A word's path depends on the text before it only through the score where the word
    /// starts. Each sum in `S` rounds by at most half an ulp of the largest magnitude a sum
    /// may reach ([`Score::sum_limit`]), so along a word of n bytes a sum is off its exact
    /// value by at most n of those; the word's float64 path from 0 is off by at most n half
    /// ulps of its own largest sum. Where, at every end on that path, the winner beats the
    /// runner-up by more than twice both, `S` picks the same path from any start, and the
    /// score at the word's end is the path's sum in `S` from there. A word whose sums stay
    /// within the limit shifts no score inside it (SentencePiece's reset). Other words run
    /// their lattice in `S` from the score where they start, as the whole text's would.
    fn words<S: Score>(
        &self,
        text: &str,
        max_score: f64,
        work: &mut Work,
        out: &mut Vec<Token>,
    ) -> Result<()> {
        self.own_caches(work);
        let limit = S::sum_limit(text.len(), max_score);
        let half_ulp = S::half_ulp(limit + max_score);
        let unk = self.unk_id.ok_or_else(missing_unk)?;
        let scores = S::scores(self);
        let bytes = text.as_bytes();
        let mut here = S::default();
        // Where the tokens that may hold a run of unknown chars still to fuse begin.
        let mut unfused = None;
        let mut start = 0;
        while start < bytes.len() {
            let end = word_end(bytes, start);
            let word = &text[start..end];
            if here.past_reset() {
                here = S::default();
            }
            let reach = word.len() as f64 * (max_score + 1.0);
            let settled = word.len() < MAX_WORD && here.to_f64().abs() + reach <= limit;
            let key = PieceKey::of(word.as_bytes());
            let Work { lattice, runners_up, word_ids, ids, .. } = &mut *work;
            ids.clear();
            let mut found = settled && word_ids.get_into(word.as_bytes(), key.hash, key.short, ids);
            if settled && !found {
                let at = out.len();
                found = self.path_from_any_start(word, half_ulp, reach, lattice, runners_up, out)?;
                if found {
                    ids.extend(out[at..].iter().map(|t| t.id));
                    word_ids.insert(word.as_bytes(), key.hash, ids);
                }
                out.truncate(at);
            }
            let chunk = out.len();
            if found {
                let mut at = start;
                let unk_score = S::unknown(self);
                // One reservation for the word's tokens (an exact-size map), no check per token.
                out.extend(ids.iter().map(|&id| {
                    let (len, score) = if id == unk {
                        (char_len(bytes[at]), unk_score)
                    } else {
                        (self.pieces[id as usize].0.len(), scores[id as usize])
                    };
                    here = score.add(here);
                    let t = Token { id, start: at as u32, end: (at + len) as u32, unk: id == unk };
                    at += len;
                    t
                }));
            } else {
                here = self.best_path::<S, false>(word, here, S::lattice(work), &mut Vec::new(), out)?;
                for t in &mut out[chunk..] {
                    t.start += start as u32;
                    t.end += start as u32;
                }
            }
            if !S::SENTENCEPIECE {
                // Fused a few words at a time: a run of unknown chars may go on into the next
                // word, and it ends where a word ends with a known piece.
                if unfused.is_none() && out[chunk..].iter().any(|t| t.id == unk) {
                    unfused = Some(chunk);
                }
                if let Some(from) = unfused.filter(|_| out.last().is_some_and(|t| t.id != unk)) {
                    self.fuse_unknowns(text, out, from, &mut work.nodes)?;
                    unfused = None;
                }
            }
            start = end;
        }
        match unfused {
            Some(from) => self.fuse_unknowns(text, out, from, &mut work.nodes),
            None => Ok(()),
        }
    }

    fn tokenize_with(&self, word: &str, work: &mut Work, out: &mut Vec<Token>) -> Result<()> {
        let first = out.len();
        self.best_path::<f64, false>(word, 0.0, &mut work.lattice, &mut Vec::new(), out)?;
        self.fuse_unknowns(word, out, first, &mut work.nodes)
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
            let (walking, (mut node, mut base, id)) = match da.after_char(&bytes[start..char_end]) {
                Some(c) => (true, c),
                None => (false, (0, 0, NONE)),
            };
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
    /// The path from its first unknown on is moved to `path` and comes back a stretch at a
    /// time (a whole text's path may be long, its unknown chars few).
    fn fuse_unknowns(
        &self,
        word: &str,
        out: &mut Vec<Token>,
        first: usize,
        path: &mut Vec<Token>,
    ) -> Result<()> {
        let Some(unk) = self.unk_id else { return Ok(()) };
        let Some(k) = out[first..].iter().position(|t| t.id == unk) else { return Ok(()) };
        path.clear();
        path.extend_from_slice(&out[first + k..]);
        out.truncate(first + k);
        let mut i = 0;
        while i < path.len() {
            let j = path[i..].iter().position(|t| t.id != unk).map_or(path.len(), |k| i + k);
            let (start, end) = (path[i].start as usize, path[j - 1].end as usize);
            self.push_unknown(&word[start..end], start, out)?;
            i = path[j..].iter().position(|t| t.id == unk).map_or(path.len(), |k| j + k);
            out.extend_from_slice(&path[j..i]);
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
