//! A per-thread cache of words → their tokens, for one model at a time.
//!
//! Text repeats its words (in 1 MB of English, ~90% of the words seen before), and a hash
//! lookup costs a fraction of a lattice. One cache per thread, so there is no locking; it
//! serves the model that used it last (another model empties it), and starts over when it
//! grows past its bounds, which keeps memory flat on text that never repeats.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Words of this many bytes or more are not cached (the reference's bound too).
pub const MAX_WORD: usize = 256;
/// Words held before the cache starts over.
const MAX_WORDS: usize = 1 << 16;

/// A token of a cached word: id and byte range within the word.
#[derive(Clone, Copy, Debug)]
pub struct Cached {
    pub id: u32,
    pub start: u32,
    pub end: u32,
}

/// A multiply-and-rotate hash (FxHash's recipe): words are short, and SipHash's setup would
/// cost as much as the lookup.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        let mut tail = 0u64;
        for (i, &b) in chunks.remainder().iter().enumerate() {
            tail |= (b as u64) << (8 * i);
        }
        self.0 = (self.0.rotate_left(5) ^ tail ^ (bytes.len() as u64) << 56).wrapping_mul(K);
    }

    #[inline]
    fn write_u8(&mut self, b: u8) {
        self.write(&[b]);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Default)]
pub struct WordCache {
    /// The model whose words these are.
    model: u64,
    words: HashMap<Box<str>, Box<[Cached]>, BuildHasherDefault<WordHasher>>,
}

impl WordCache {
    /// The cached tokens of `word` for `model`.
    #[inline]
    pub fn get(&mut self, model: u64, word: &str) -> Option<&[Cached]> {
        if self.model != model {
            self.words.clear();
            self.model = model;
            return None;
        }
        self.words.get(word).map(|t| &**t)
    }

    pub fn insert(&mut self, model: u64, word: &str, tokens: impl Iterator<Item = Cached>) {
        if self.model != model {
            self.words.clear();
            self.model = model;
        }
        if self.words.len() >= MAX_WORDS {
            self.words.clear();
        }
        self.words.insert(word.into(), tokens.collect());
    }
}
