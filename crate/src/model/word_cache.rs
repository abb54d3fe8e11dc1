//! A cache of WordPiece results: word bytes → its sub-tokens.
//!
//! Real text repeats its words (in 1 MB of the Russian corpus, 74% of the words are repeats),
//! and a word that is not itself a vocabulary entry costs a walk per piece — in scripts the
//! vocabulary covers thinly, about one piece per char. A hit costs one hash of the word, one
//! probe and one comparison of its bytes.
//!
//! One cache per thread (see [`with_cache`]), kept across calls and owned by one model at a
//! time (a model with another id clears it). Bounded: when it holds [`MAX_ENTRIES`] words
//! or [`MAX_KEY_BYTES`] bytes of keys it is cleared and refills from what follows.

use super::wordpiece::SubToken;
use std::cell::RefCell;

/// Longer words are not cached (rare, and their lookups cost more).
pub const MAX_KEY: usize = 64;
const MAX_ENTRIES: usize = 1 << 15;
const MAX_KEY_BYTES: usize = 1 << 20;

#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u64,
    key_start: u32,
    /// 0 marks an empty slot (the empty word is never cached).
    key_len: u32,
    sub_start: u32,
    sub_len: u32,
    unk: bool,
}

const EMPTY: Slot = Slot { hash: 0, key_start: 0, key_len: 0, sub_start: 0, sub_len: 0, unk: false };

#[derive(Debug, Default)]
pub struct WordCache {
    owner: u64,
    slots: Vec<Slot>,
    keys: Vec<u8>,
    subs: Vec<SubToken>,
    /// `subs[i].id` for every i: the ids-only path copies a word's ids in one go.
    ids: Vec<u32>,
    entries: usize,
}

/// The hash of `padded[..len]` (`len <= MAX_KEY`); `padded` holds at least 16 bytes after
/// the word (any values), so the bytes are read as whole words and the last one masked.
#[inline(always)]
pub fn hash(padded: &[u8], len: usize) -> u64 {
    let mut h = (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut at = 0;
    while at < len {
        let w = u64::from_le_bytes(padded[at..at + 8].try_into().unwrap());
        let left = len - at;
        let w = if left >= 8 { w } else { w & ((1u64 << (8 * left)) - 1) };
        h = (h ^ w).wrapping_mul(0xFF51_AFD7_ED55_8CCD).rotate_left(29);
        at += 8;
    }
    h ^ (h >> 31)
}

impl WordCache {
    /// Empties the cache if it belongs to another model, and makes it this one's.
    fn own(&mut self, owner: u64) {
        if self.owner != owner {
            self.clear();
            self.owner = owner;
        }
    }

    fn clear(&mut self) {
        if self.slots.is_empty() {
            self.slots = vec![EMPTY; 1 << 10];
        } else {
            self.slots.iter_mut().for_each(|s| *s = EMPTY);
        }
        self.keys.clear();
        self.subs.clear();
        self.ids.clear();
        self.entries = 0;
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot of `word` (whose hash is `h`).
    #[inline(always)]
    fn find(&self, h: u64, word: &[u8]) -> Option<&Slot> {
        let mut i = h as usize & self.mask();
        loop {
            let s = &self.slots[i];
            if s.key_len == 0 {
                return None;
            }
            if s.hash == h && s.key_len as usize == word.len() {
                // Compared a machine word at a time, inline (keys are short: a call into
                // memcmp costs more than the comparison).
                let k = &self.keys[s.key_start as usize..s.key_start as usize + word.len()];
                if super::vocab_index::eq_bytes(k, word) {
                    return Some(s);
                }
            }
            i = (i + 1) & self.mask();
        }
    }

    /// The sub-tokens of `word` (whose hash is `h`) and whether it became the unk token.
    #[inline]
    pub fn get(&self, h: u64, word: &[u8]) -> Option<(&[SubToken], bool)> {
        self.find(h, word).map(|s| (&self.subs[s.sub_start as usize..(s.sub_start + s.sub_len) as usize], s.unk))
    }

    /// The ids of `word`'s sub-tokens (whose hash is `h`).
    #[inline]
    pub fn get_ids(&self, h: u64, word: &[u8]) -> Option<&[u32]> {
        self.find(h, word).map(|s| &self.ids[s.sub_start as usize..(s.sub_start + s.sub_len) as usize])
    }

    /// Records `word` (hash `h`, not yet present) → `subs`.
    pub fn insert(&mut self, h: u64, word: &[u8], subs: &[SubToken], unk: bool) {
        if self.entries >= MAX_ENTRIES || self.keys.len() + word.len() > MAX_KEY_BYTES {
            self.clear();
        }
        if (self.entries + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let slot = Slot {
            hash: h,
            key_start: self.keys.len() as u32,
            key_len: word.len() as u32,
            sub_start: self.subs.len() as u32,
            sub_len: subs.len() as u32,
            unk,
        };
        self.keys.extend_from_slice(word);
        self.subs.extend_from_slice(subs);
        self.ids.extend(subs.iter().map(|s| s.id));
        self.place(slot);
        self.entries += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mut i = slot.hash as usize & self.mask();
        while self.slots[i].key_len != 0 {
            i = (i + 1) & self.mask();
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let bigger = vec![EMPTY; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        for s in old.into_iter().filter(|s| s.key_len != 0) {
            self.place(s);
        }
    }
}

thread_local! {
    static CACHE: RefCell<WordCache> = RefCell::new(WordCache::default());
}

/// Runs `f` with this thread's cache, made the model `owner`'s (or with None when the cache
/// is already in use further up this thread's stack).
pub fn with_cache<R>(owner: u64, f: impl FnOnce(Option<&mut WordCache>) -> R) -> R {
    CACHE.with(|c| match c.try_borrow_mut() {
        Ok(mut c) => {
            c.own(owner);
            f(Some(&mut c))
        }
        Err(_) => f(None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_ignores_bytes_past_the_word() {
        let a = b"abcdefghijk\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00";
        let b = b"abcdefghijkXXXXXXXXXXXXXXXXXXXXXXXXXX";
        for len in 0..=11 {
            assert_eq!(hash(a, len), hash(b, len));
        }
        assert_ne!(hash(a, 3), hash(a, 4));
    }

    #[test]
    fn finds_what_was_inserted_across_growth_and_clearing() {
        let mut c = WordCache::default();
        c.own(7);
        let words: Vec<String> = (0..(MAX_ENTRIES + 100)).map(|i| format!("w{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            let mut p = w.as_bytes().to_vec();
            p.extend_from_slice(&[0; 16]);
            let h = hash(&p, w.len());
            assert!(c.get(h, w.as_bytes()).is_none());
            let subs = [SubToken { id: i as u32, char_start: 0, char_end: w.len() }];
            c.insert(h, w.as_bytes(), &subs, i % 3 == 0);
            let (got, unk) = c.get(h, w.as_bytes()).unwrap();
            assert_eq!((got, unk), (&subs[..], i % 3 == 0));
            assert_eq!(c.get_ids(h, w.as_bytes()), Some(&[i as u32][..]));
        }
        // Cleared once when full: the first words are gone, the last ones are there.
        assert!(c.entries <= MAX_ENTRIES);
        c.own(8);
        assert_eq!(c.entries, 0);
    }
}
