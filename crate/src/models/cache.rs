//! A per-thread cache of words → their tokens, for one model at a time.
//!
//! Text repeats its words (in 1 MB of English, ~90% of the words seen before), and a hash
//! lookup costs a fraction of a lattice or a merge. One cache per thread, so there is no
//! locking; it serves the model that used it last (another model empties it), and starts over
//! when it grows past its bounds, which keeps memory flat on text that never repeats.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Words of this many bytes or more are not cached (the reference's bound too).
pub const MAX_WORD: usize = 256;
/// Words held before the cache starts over.
const MAX_WORDS: usize = 1 << 16;
/// Bytes of words and tokens held before the cache starts over.
const MAX_BYTES: usize = 1 << 22;

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

/// Words and their tokens `T` (whatever the model needs to rebuild them), the tokens of all
/// words in one buffer.
pub struct WordCache<T> {
    /// The model whose words these are.
    owner: u64,
    /// Word → (start, count) in `tokens`.
    words: HashMap<Box<str>, (u32, u32), BuildHasherDefault<WordHasher>>,
    tokens: Vec<T>,
    bytes: usize,
}

impl<T> Default for WordCache<T> {
    fn default() -> Self {
        Self { owner: 0, words: HashMap::default(), tokens: Vec::new(), bytes: 0 }
    }
}

impl<T: Copy> WordCache<T> {
    /// The cached tokens of `word` for model `owner`.
    #[inline(always)]
    pub fn get(&mut self, owner: u64, word: &str) -> Option<&[T]> {
        if self.owner != owner {
            self.clear();
            self.owner = owner;
            return None;
        }
        let &(at, n) = self.words.get(word)?;
        Some(&self.tokens[at as usize..(at + n) as usize])
    }

    /// Records `tokens` as those of `word` for model `owner` (words of [`MAX_WORD`] bytes or
    /// more are not kept).
    pub fn insert(&mut self, owner: u64, word: &str, tokens: impl IntoIterator<Item = T>) {
        if word.len() >= MAX_WORD {
            return;
        }
        if self.owner != owner {
            self.clear();
            self.owner = owner;
        }
        let at = self.tokens.len();
        self.tokens.extend(tokens);
        let n = self.tokens.len() - at;
        let cost = word.len() + n * std::mem::size_of::<T>() + 32;
        if self.words.len() >= MAX_WORDS || self.bytes + cost > MAX_BYTES {
            self.tokens.drain(..at);
            self.words.clear();
            self.bytes = 0;
        }
        let at = self.tokens.len() - n;
        self.bytes += cost;
        self.words.insert(word.into(), (at as u32, n as u32));
    }

    fn clear(&mut self) {
        self.words.clear();
        self.tokens.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_come_back_for_their_owner_only_and_the_bounds_hold() {
        let mut c = WordCache::<u32>::default();
        c.insert(1, "ab", [1, 2]);
        c.insert(1, "c", [3]);
        assert_eq!(c.get(1, "ab"), Some(&[1, 2][..]));
        assert_eq!(c.get(1, "c"), Some(&[3][..]));
        assert_eq!(c.get(2, "ab"), None, "another model's words are not its own");
        assert_eq!(c.get(1, "ab"), None, "the other model emptied it");
        c.insert(1, &"x".repeat(MAX_WORD), [9]);
        assert_eq!(c.get(1, &"x".repeat(MAX_WORD)), None);
        for i in 0..MAX_WORDS as u32 + 10 {
            c.insert(1, &i.to_string(), [i, i + 1]);
            assert_eq!(c.get(1, &i.to_string()), Some(&[i, i + 1][..]), "word {i}");
        }
        assert!(c.words.len() <= MAX_WORDS && c.tokens.len() <= 2 * MAX_WORDS);
        let long = "y".repeat(MAX_WORD - 1);
        for i in 0..MAX_BYTES / MAX_WORD + 10 {
            let w = format!("{i}{long}");
            c.insert(1, &w[..MAX_WORD - 1], [i as u32]);
        }
        assert!(c.bytes <= MAX_BYTES);
    }
}
