//! BPE training: the algorithm of the textbook chapter "Глава 1. Токенизация" (section 1.3)
//! with the same merges, made incremental, and a byte-level variant whose result is a GPT-2-style
//! `tokenizer.json` ([`export`]).
//!
//! The chapter's loop recounts every adjacent pair of every word after each merge and takes
//! `max(pair_freq, key=pair_freq.get)`. `pair_freq` is a fresh `Counter` filled by walking
//! the distinct words in order of first appearance (`Counter(corpus.split())` keeps insertion
//! order) and each word's symbols left to right, and `max` keeps the first of equal maxima.
//! So among pairs of equal count the chapter picks the one whose first occurrence comes
//! first in that walk: the lowest index of a word holding the pair, then the lowest position
//! inside that word. [`Trainer`] reproduces exactly that rule without recounting:
//!
//! - `pair -> count` and `pair -> words holding it` are kept up to date by looking only at the
//!   words that held the merged pair, and in them only at the pairs around each merge;
//! - a max-heap keyed by (count, first word) with lazy invalidation: an entry is live when
//!   both match the pair's current values; when a pair leaves its first word, its first word
//!   is marked dirty (the stored value is then a lower bound, so the entry can only rank too
//!   high) and recomputed when it reaches the top;
//! - pairs tied on both keys share their first word: the one that occurs first in it wins.
//!
//! Symbols are identified by their text (the chapter compares strings), so two merges that
//! produce the same string (`a`+`bc` and `ab`+`c`) produce the same symbol, and the
//! vocabulary, a set of strings in the chapter, grows only when a merge makes a new string.
//!
//! No threads and no clock: it runs the same in wasm. Progress and cancellation go through
//! [`Trainer::train`]'s callback (or an [`AtomicBool`]); [`Trainer::step`] does one merge at a
//! time for a caller that wants to yield between merges (a page's event loop).

pub mod export;
#[cfg(test)]
mod tests;

use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::pre_tokenizers::byte_level::Pattern;
use crate::{Error, Result};

/// The chapter's end-of-word marker, appended to every word in [`Mode::Chapter`].
pub const END_OF_WORD: &str = "_";

/// What the base units are and how text becomes words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The chapter: words split on whitespace (Python's `str.split()`), each word's chars
    /// plus `"_"`; the initial vocabulary is the chars that occur (and `"_"`).
    Chapter,
    /// Byte-level: words are GPT-2's pre-tokens, base units the 256 bytes (all of them in
    /// the vocabulary from the start, ids 0..=255 = the byte values).
    ByteLevel,
}

/// Training settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub mode: Mode,
    /// Stop when the vocabulary (distinct symbols) reaches this size.
    pub vocab_size: usize,
    /// Stop when the most frequent pair occurs fewer times than this (0 and 1: never).
    pub min_frequency: u64,
}

/// One learned merge: symbols `left` + `right` became `id`; the pair occurred `count` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merge {
    pub left: u32,
    pub right: u32,
    pub id: u32,
    pub count: u64,
}

/// What the progress callback sees after each merge.
#[derive(Debug)]
pub struct Progress<'a> {
    /// Merges done so far (this one included).
    pub done: usize,
    pub vocab_len: usize,
    pub vocab_size: usize,
    pub left: &'a [u8],
    pub right: &'a [u8],
    pub count: u64,
}

/// The progress callback's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// The chapter's merge step: `parts` with every non-overlapping `m.left, m.right` (left to
/// right) replaced by `m.id`, into `out` (cleared first).
pub fn apply_merge(parts: &[u32], m: &Merge, out: &mut Vec<u32>) {
    out.clear();
    let mut i = 0;
    while i < parts.len() {
        if i + 1 < parts.len() && parts[i] == m.left && parts[i + 1] == m.right {
            out.push(m.id);
            i += 2;
        } else {
            out.push(parts[i]);
            i += 1;
        }
    }
}

/// Python's `str.isspace()` for one char, which is what `str.split()` splits on: Rust's
/// White_Space plus the four information separators U+001C..U+001F.
#[inline]
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A fast hasher for the trainer's integer and short-string keys (multiply and fold).
#[derive(Default, Clone, Copy)]
pub(crate) struct FoldHasher(u64);

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for FoldHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let x = self.0.wrapping_mul(K);
        x ^ (x >> 32)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
    }
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64)
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64)
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64)
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(23) ^ x).wrapping_mul(K);
    }
}

pub(crate) type Map<Key, V> = HashMap<Key, V, BuildHasherDefault<FoldHasher>>;

#[inline]
fn key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

const NONE: u32 = u32::MAX;

struct Pair {
    a: u32,
    b: u32,
    count: u64,
    /// Lowest index of a word holding the pair (NONE if none); a lower bound when `dirty`.
    first_word: u32,
    dirty: bool,
    /// Every word holding the pair, maybe with stale entries and repeats.
    words: Vec<u32>,
}

#[derive(PartialEq, Eq)]
struct Entry {
    count: u64,
    first_word: u32,
    pair: u32,
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.count.cmp(&o.count).then(o.first_word.cmp(&self.first_word)).then(o.pair.cmp(&self.pair))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Position of the first occurrence of `a b` in `w`.
#[inline]
fn find(w: &[u32], a: u32, b: u32) -> Option<usize> {
    w.windows(2).position(|p| p[0] == a && p[1] == b)
}

/// The distinct words' symbols, one flat buffer (merging only shortens a word, so it is
/// rewritten in place; walking the words in index order walks memory in order).
#[derive(Default)]
struct Words {
    syms: Vec<u32>,
    spans: Vec<(u32, u32)>,
}

impl Words {
    fn push(&mut self, w: &[u32]) {
        self.spans.push((self.syms.len() as u32, w.len() as u32));
        self.syms.extend_from_slice(w);
    }

    fn len(&self) -> usize {
        self.spans.len()
    }

    /// Replaces word `i` by `w`, which is not longer.
    fn set(&mut self, i: usize, w: &[u32]) {
        let (start, len) = self.spans[i];
        debug_assert!(w.len() <= len as usize);
        self.syms[start as usize..start as usize + w.len()].copy_from_slice(w);
        self.spans[i].1 = w.len() as u32;
    }
}

impl std::ops::Index<usize> for Words {
    type Output = [u32];
    #[inline]
    fn index(&self, i: usize) -> &[u32] {
        let (start, len) = self.spans[i];
        &self.syms[start as usize..(start + len) as usize]
    }
}

/// A BPE training run; see the module documentation.
pub struct Trainer {
    mode: Mode,
    vocab_size: usize,
    min_frequency: u64,
    symbols: Vec<Vec<u8>>,
    intern: Map<Vec<u8>, u32>,
    initial: usize,
    words: Words,
    freqs: Vec<u64>,
    word_texts: Vec<String>,
    pair_ids: Map<u64, u32>,
    pairs: Vec<Pair>,
    heap: BinaryHeap<Entry>,
    merges: Vec<Merge>,
    finished: bool,
    // scratch
    touched: Vec<u32>,
    stamp: Vec<u32>,
    step_no: u32,
    delta: Vec<(u64, i64)>,
    new_word: Vec<u32>,
    in_merge: Vec<bool>,
    new_flag: Vec<bool>,
    cands: Vec<u32>,
}

impl Trainer {
    /// Counts the words of `texts` and their pairs.
    pub fn new(texts: &[&str], config: &Config) -> Result<Trainer> {
        if config.mode == Mode::ByteLevel && config.vocab_size < 256 {
            return Err(Error::Input(format!(
                "vocab_size {} is below the 256 base bytes of a byte-level vocabulary",
                config.vocab_size
            )));
        }
        if config.vocab_size > u32::MAX as usize / 2 {
            return Err(Error::Input(format!("vocab_size {} is too large", config.vocab_size)));
        }
        let mut t = Trainer {
            mode: config.mode,
            vocab_size: config.vocab_size,
            min_frequency: config.min_frequency,
            symbols: Vec::new(),
            intern: Map::default(),
            initial: 0,
            words: Words::default(),
            freqs: Vec::new(),
            word_texts: Vec::new(),
            pair_ids: Map::default(),
            pairs: Vec::new(),
            heap: BinaryHeap::new(),
            merges: Vec::new(),
            finished: false,
            touched: Vec::new(),
            stamp: Vec::new(),
            step_no: 0,
            delta: Vec::new(),
            new_word: Vec::new(),
            in_merge: Vec::new(),
            new_flag: Vec::new(),
            cands: Vec::new(),
        };
        // Distinct words in order of first appearance, with counts.
        let mut index: Map<&str, u32> = Map::default();
        fn add<'a>(index: &mut Map<&'a str, u32>, w: &'a str, t: &mut Trainer) {
            let next = t.freqs.len() as u32;
            let i = *index.entry(w).or_insert(next);
            if i == next {
                t.freqs.push(0);
                t.word_texts.push(w.to_string());
            }
            t.freqs[i as usize] += 1;
        }
        match config.mode {
            Mode::Chapter => {
                for text in texts {
                    for w in text.split(is_py_space).filter(|w| !w.is_empty()) {
                        add(&mut index, w, &mut t);
                    }
                }
            }
            Mode::ByteLevel => {
                for b in 0..=255u8 {
                    t.intern_bytes(&[b]);
                }
                for text in texts {
                    Pattern::Gpt2.for_each(text, |s, e| add(&mut index, &text[s..e], &mut t));
                }
            }
        }
        let total: usize = t.word_texts.iter().map(|w| w.len() + 1).sum();
        if t.freqs.len() >= NONE as usize || total >= u32::MAX as usize {
            return Err(Error::Input("too many distinct words".into()));
        }
        let texts = std::mem::take(&mut t.word_texts);
        let mut buf = [0u8; 4];
        for w in &texts {
            let syms: Vec<u32> = match config.mode {
                Mode::Chapter => {
                    let mut v: Vec<u32> =
                        w.chars().map(|c| t.intern_bytes(c.encode_utf8(&mut buf).as_bytes())).collect();
                    v.push(t.intern_bytes(END_OF_WORD.as_bytes()));
                    v
                }
                Mode::ByteLevel => w.bytes().map(|b| b as u32).collect(),
            };
            t.words.push(&syms);
        }
        t.word_texts = texts;
        t.initial = t.symbols.len();
        // Initial pair counts; words are walked in order, so the first word seen is the first.
        for w in 0..t.words.len() {
            let f = t.freqs[w];
            for j in 1..t.words[w].len() {
                let (a, b) = (t.words[w][j - 1], t.words[w][j]);
                let p = t.pair_id(a, b) as usize;
                let pair = &mut t.pairs[p];
                pair.count += f;
                if pair.first_word == NONE {
                    pair.first_word = w as u32;
                }
                if pair.words.last() != Some(&(w as u32)) {
                    pair.words.push(w as u32);
                }
            }
        }
        t.heap = t
            .pairs
            .iter()
            .enumerate()
            .map(|(i, p)| Entry { count: p.count, first_word: p.first_word, pair: i as u32 })
            .collect();
        Ok(t)
    }

    fn intern_bytes(&mut self, s: &[u8]) -> u32 {
        if let Some(&id) = self.intern.get(s) {
            return id;
        }
        let id = self.symbols.len() as u32;
        self.symbols.push(s.to_vec());
        self.intern.insert(s.to_vec(), id);
        id
    }

    fn pair_id(&mut self, a: u32, b: u32) -> u32 {
        let next = self.pairs.len() as u32;
        let id = *self.pair_ids.entry(key(a, b)).or_insert(next);
        if id == next {
            self.pairs.push(Pair { a, b, count: 0, first_word: NONE, dirty: false, words: Vec::new() });
            self.stamp.push(0);
        }
        id
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Distinct words seen (the chapter's `len(words)`).
    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// The symbols' texts (bytes), by id: the initial ones, then one per new merged string.
    pub fn symbols(&self) -> &[Vec<u8>] {
        &self.symbols
    }

    /// How many symbols the vocabulary had before any merge.
    pub fn initial_len(&self) -> usize {
        self.initial
    }

    pub fn merges(&self) -> &[Merge] {
        &self.merges
    }

    /// True once no further merge will be made (target reached, no pair left, or below
    /// `min_frequency`).
    pub fn is_finished(&self) -> bool {
        self.finished || self.symbols.len() >= self.vocab_size
    }

    /// Recomputes a dirty pair's first word from its word list (and drops stale entries).
    fn refresh(&mut self, p: usize) {
        let (a, b) = (self.pairs[p].a, self.pairs[p].b);
        let mut ws = std::mem::take(&mut self.pairs[p].words);
        ws.sort_unstable();
        ws.dedup();
        let words = &self.words;
        ws.retain(|&w| find(&words[w as usize], a, b).is_some());
        let pair = &mut self.pairs[p];
        pair.first_word = ws.first().copied().unwrap_or(NONE);
        pair.dirty = false;
        pair.words = ws;
    }

    /// Pops heap entries until a live one; None when the heap is exhausted. Dirty pairs are
    /// refreshed and pushed back.
    fn pop_live(&mut self, bound: Option<(u64, u32)>) -> Option<u32> {
        loop {
            let top = self.heap.peek()?;
            if let Some((c, w)) = bound {
                if top.count != c || top.first_word != w {
                    return None;
                }
            }
            let e = self.heap.pop()?;
            let p = &self.pairs[e.pair as usize];
            if p.count == 0 || p.count != e.count || p.first_word != e.first_word {
                continue;
            }
            if p.dirty {
                self.refresh(e.pair as usize);
                let p = &self.pairs[e.pair as usize];
                self.heap.push(Entry { count: p.count, first_word: p.first_word, pair: e.pair });
                continue;
            }
            return Some(e.pair);
        }
    }

    /// The pair the chapter's `max(pair_freq, key=pair_freq.get)` would pick.
    fn best(&mut self) -> Option<u32> {
        let first = self.pop_live(None)?;
        let (c, w) = (self.pairs[first as usize].count, self.pairs[first as usize].first_word);
        let mut cands = std::mem::take(&mut self.cands);
        cands.clear();
        cands.push(first);
        while let Some(p) = self.pop_live(Some((c, w))) {
            if !cands.contains(&p) {
                cands.push(p);
            }
        }
        let mut best = first;
        if cands.len() > 1 {
            let word = &self.words[w as usize];
            let pos =
                |p: u32| find(word, self.pairs[p as usize].a, self.pairs[p as usize].b).unwrap_or(usize::MAX);
            best = cands.iter().copied().min_by_key(|&p| pos(p)).unwrap_or(first);
            for &p in &cands {
                if p != best {
                    self.heap.push(Entry { count: c, first_word: w, pair: p });
                }
            }
        }
        self.cands = cands;
        Some(best)
    }

    /// Makes the next merge; None when training is over.
    pub fn step(&mut self) -> Option<Merge> {
        if self.is_finished() {
            return None;
        }
        let Some(p) = self.best() else {
            self.finished = true;
            return None;
        };
        let (a, b, count) =
            (self.pairs[p as usize].a, self.pairs[p as usize].b, self.pairs[p as usize].count);
        if count < self.min_frequency {
            let first_word = self.pairs[p as usize].first_word;
            self.heap.push(Entry { count, first_word, pair: p });
            self.finished = true;
            return None;
        }
        let mut s = self.symbols[a as usize].clone();
        s.extend_from_slice(&self.symbols[b as usize]);
        let n = self.intern_bytes(&s);
        let mut ws = std::mem::take(&mut self.pairs[p as usize].words);
        ws.sort_unstable();
        ws.dedup();
        self.step_no = self.step_no.wrapping_add(1);
        if self.step_no == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.step_no = 1;
        }
        self.touched.clear();
        for &w in &ws {
            self.merge_word(w, a, b, n);
        }
        let pair = &mut self.pairs[p as usize];
        debug_assert_eq!(pair.count, 0);
        pair.words = Vec::new();
        pair.first_word = NONE;
        pair.dirty = false;
        for i in 0..self.touched.len() {
            let q = self.touched[i];
            let pq = &self.pairs[q as usize];
            if pq.count > 0 {
                self.heap.push(Entry { count: pq.count, first_word: pq.first_word, pair: q });
            }
        }
        let m = Merge { left: a, right: b, id: n, count };
        self.merges.push(m);
        Some(m)
    }

    /// Merges every `a b` in word `w` left to right, as the chapter does, and updates the
    /// counts of the pairs that changed around each merge.
    fn merge_word(&mut self, w: u32, a: u32, b: u32, n: u32) {
        let old = &self.words[w as usize];
        let len = old.len();
        self.new_word.clear();
        self.in_merge.clear();
        self.in_merge.resize(len, false);
        self.new_flag.clear();
        let mut i = 0;
        let mut any = false;
        while i < len {
            if i + 1 < len && old[i] == a && old[i + 1] == b {
                self.new_word.push(n);
                self.new_flag.push(true);
                self.in_merge[i] = true;
                self.in_merge[i + 1] = true;
                i += 2;
                any = true;
            } else {
                self.new_word.push(old[i]);
                self.new_flag.push(false);
                i += 1;
            }
        }
        if !any {
            return;
        }
        self.delta.clear();
        for j in 1..len {
            if self.in_merge[j - 1] || self.in_merge[j] {
                self.delta.push((key(old[j - 1], old[j]), -1));
            }
        }
        for k in 1..self.new_word.len() {
            if self.new_flag[k - 1] || self.new_flag[k] {
                self.delta.push((key(self.new_word[k - 1], self.new_word[k]), 1));
            }
        }
        self.words.set(w as usize, &self.new_word);
        self.delta.sort_unstable_by_key(|d| d.0);
        let f = self.freqs[w as usize] as i64;
        let mut d = 0;
        while d < self.delta.len() {
            let k = self.delta[d].0;
            let mut net = 0;
            while d < self.delta.len() && self.delta[d].0 == k {
                net += self.delta[d].1;
                d += 1;
            }
            if net == 0 {
                continue;
            }
            let (pa, pb) = ((k >> 32) as u32, k as u32);
            let q = self.pair_id(pa, pb);
            if self.stamp[q as usize] != self.step_no {
                self.stamp[q as usize] = self.step_no;
                self.touched.push(q);
            }
            let pair = &mut self.pairs[q as usize];
            pair.count = (pair.count as i64 + net * f) as u64;
            if net > 0 {
                if pair.words.last() != Some(&w) {
                    pair.words.push(w);
                }
                if w < pair.first_word {
                    pair.first_word = w;
                }
            } else if w == pair.first_word && !pair.dirty && find(&self.words[w as usize], pa, pb).is_none() {
                pair.dirty = true;
            }
        }
    }

    /// Runs to the end. `progress` is called after each merge and may stop the run; `cancel`
    /// (checked before each merge) stops it too. Returns false if stopped early.
    pub fn train(
        &mut self,
        mut progress: impl FnMut(&Progress) -> Control,
        cancel: Option<&AtomicBool>,
    ) -> bool {
        loop {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return false;
            }
            let Some(m) = self.step() else { return true };
            let pr = Progress {
                done: self.merges.len(),
                vocab_len: self.symbols.len(),
                vocab_size: self.vocab_size,
                left: &self.symbols[m.left as usize],
                right: &self.symbols[m.right as usize],
                count: m.count,
            };
            if progress(&pr) == Control::Stop {
                return false;
            }
        }
    }

    /// Ends training for good and frees what only training needs (pair counts, heap).
    pub fn finish(&mut self) {
        self.finished = true;
        self.pairs = Vec::new();
        self.pair_ids = Map::default();
        self.heap = BinaryHeap::new();
        self.stamp = Vec::new();
        self.touched = Vec::new();
    }

    /// The symbol text of `id` (lossy UTF-8 for a byte-level symbol that splits a char).
    pub fn symbol_text(&self, id: u32) -> String {
        String::from_utf8_lossy(&self.symbols[id as usize]).into_owned()
    }

    /// The chapter's `tokenize(word, merges)`: the word's base units (chars plus `"_"`, or
    /// bytes), then every merge in training order, each applied left to right. Returns ids;
    /// a char the training never saw gets an id at or past `symbols().len()` (see
    /// [`Trainer::tokenize_bytes`] for the strings).
    pub fn tokenize_ids(&self, word: &str) -> (Vec<u32>, Vec<Vec<u8>>) {
        let mut unknown: Vec<Vec<u8>> = Vec::new();
        let mut parts: Vec<u32> = Vec::new();
        match self.mode {
            Mode::Chapter => {
                let units =
                    word.chars().map(|c| c.to_string().into_bytes()).chain([END_OF_WORD.as_bytes().to_vec()]);
                for s in units {
                    let id = match self.intern.get(&s) {
                        Some(&id) => id,
                        None => match unknown.iter().position(|u| *u == s) {
                            Some(i) => (self.symbols.len() + i) as u32,
                            None => {
                                unknown.push(s);
                                (self.symbols.len() + unknown.len() - 1) as u32
                            }
                        },
                    };
                    parts.push(id);
                }
            }
            Mode::ByteLevel => parts.extend(word.bytes().map(|b| b as u32)),
        }
        let mut out = Vec::with_capacity(parts.len());
        for m in &self.merges {
            if parts.len() < 2 {
                break;
            }
            if find(&parts, m.left, m.right).is_none() {
                continue;
            }
            apply_merge(&parts, m, &mut out);
            std::mem::swap(&mut parts, &mut out);
        }
        (parts, unknown)
    }

    /// [`Trainer::tokenize_ids`] as the symbols' bytes.
    pub fn tokenize_bytes(&self, word: &str) -> Vec<Vec<u8>> {
        let (ids, unknown) = self.tokenize_ids(word);
        ids.into_iter()
            .map(|id| match self.symbols.get(id as usize) {
                Some(s) => s.clone(),
                None => unknown[id as usize - self.symbols.len()].clone(),
            })
            .collect()
    }
}
