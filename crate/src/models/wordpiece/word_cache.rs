//! A cache of WordPiece results: word bytes → its sub-tokens.
//!
//! Real text repeats its words (in 1 MB of the Russian corpus, 74% of the words are repeats),
//! and a word that is not itself a vocabulary entry costs a walk per piece — in scripts the
//! vocabulary covers thinly, about one piece per char. A hit costs one hash of the word, one
//! probe and one comparison of its bytes. A key's first 16 bytes sit in its slot as two
//! words (most words are no longer), so a hit compares two words and a length, and its
//! ids are copied as one fixed-size block.
//!
//! One cache per thread (see [`with_cache`]), kept across calls and owned by one model at a
//! time (a model with another id clears it). Bounded: when it holds `MAX_ENTRIES` words
//! or `MAX_KEY_BYTES` bytes of keys it is cleared and refills from what follows.

use super::vocab_index::{eq_bytes, load_short, mix, SHORT};
use super::{PaddedWord, SubToken};
use std::cell::RefCell;

/// Longer words are not cached (rare, and their lookups cost more).
pub const MAX_KEY: usize = 64;
const MAX_ENTRIES: usize = 1 << 15;
const MAX_KEY_BYTES: usize = 1 << 20;

/// The key of one lookup: the word's first 16 bytes as two zero-padded words, its length
/// and its hash.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    k0: u64,
    k1: u64,
    len: usize,
    hash: u64,
}

impl Key {
    /// The key of `word` (`word.len() <= MAX_KEY`).
    #[inline(always)]
    pub fn new(word: PaddedWord) -> Key {
        let (padded, len) = (word.padded(), word.len());
        let (k0, k1) = load_short(padded, 0, len.min(SHORT));
        let mut h = mix(k0, k1, len);
        if len > SHORT {
            h ^= hash(&padded[SHORT..], len - SHORT);
        }
        Key { k0, k1, len, hash: h }
    }
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    k0: u64,
    k1: u64,
    /// 0 marks an empty slot (the empty word is never cached).
    key_len: u32,
    /// Where the key's bytes past its first 16 are in `keys`.
    rest_start: u32,
    sub_start: u32,
    /// The number of sub-tokens, with [`UNK`] set when the word became the unk token.
    sub_len: u32,
}

const UNK: u32 = 1 << 31;

const EMPTY: Slot = Slot { k0: 0, k1: 0, key_len: 0, rest_start: 0, sub_start: 0, sub_len: 0 };

/// Where a cached word's sub-tokens are (see [`WordCache::find`]).
/// How many ids a hit copies as one block (`ids` holds this many past its last entry).
const IDS_BLOCK: usize = 16;

#[derive(Clone, Copy, Debug)]
pub struct Hit {
    sub_start: u32,
    sub_len: u32,
}

#[derive(Debug, Default)]
pub struct WordCache {
    owner: u64,
    slots: Vec<Slot>,
    /// The bytes past the first 16 of the keys longer than that.
    keys: Vec<u8>,
    subs: Vec<SubToken>,
    /// `subs[i].id` for every i, then IDS_BLOCK zeros: the ids-only path copies a word's
    /// ids in one go.
    ids: Vec<u32>,
    entries: usize,
}

/// The hash of `padded[..len]` (`len <= MAX_KEY`); `padded` holds at least 16 bytes after
/// the word (any values), so the bytes are read as whole words and the last one masked.
#[inline(always)]
fn hash(padded: &[u8], len: usize) -> u64 {
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
        self.ids.resize(IDS_BLOCK, 0);
        self.entries = 0;
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot of `word` (whose key is `key`).
    #[inline(always)]
    fn slot(&self, key: &Key, word: PaddedWord) -> Option<&Slot> {
        let mut i = key.hash as usize & self.mask();
        loop {
            let s = &self.slots[i];
            if s.key_len == 0 {
                return None;
            }
            if s.k0 == key.k0 && s.k1 == key.k1 && s.key_len as usize == key.len {
                if key.len <= SHORT {
                    return Some(s);
                }
                // Compared a machine word at a time, inline (keys are short: a call into
                // memcmp costs more than the comparison).
                let start = s.rest_start as usize;
                if eq_bytes(&self.keys[start..start + key.len - SHORT], &word.bytes()[SHORT..]) {
                    return Some(s);
                }
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Where the entry of `word` (whose key is `key`) is, when the cache holds it.
    #[inline]
    pub fn find(&self, key: &Key, word: PaddedWord) -> Option<Hit> {
        self.slot(key, word).map(|s| Hit { sub_start: s.sub_start, sub_len: s.sub_len })
    }

    /// The sub-tokens of a word found by [`WordCache::find`] and whether it became the
    /// unk token.
    #[inline]
    pub fn pieces(&self, hit: Hit) -> (&[SubToken], bool) {
        let start = hit.sub_start as usize;
        (&self.subs[start..start + (hit.sub_len & !UNK) as usize], hit.sub_len & UNK != 0)
    }

    /// Appends the ids of a word found by [`WordCache::find`] to `out`.
    #[inline]
    pub fn push_ids(&self, hit: Hit, out: &mut Vec<u32>) {
        let (start, n) = (hit.sub_start as usize, (hit.sub_len & !UNK) as usize);
        if n <= IDS_BLOCK {
            // A block of fixed length (`ids` holds IDS_BLOCK entries past its last word's
            // start): copied inline, not by a call into memcpy; the entries past the
            // word's are cut off again.
            let old = out.len();
            out.extend_from_slice(&self.ids[start..start + IDS_BLOCK]);
            out.truncate(old + n);
        } else {
            out.extend_from_slice(&self.ids[start..start + n]);
        }
    }

    /// Records `word` (not yet present; its key is `key`) → `subs`.
    pub fn insert(&mut self, key: &Key, word: PaddedWord, subs: &[SubToken], unk: bool) {
        let rest = key.len.saturating_sub(SHORT);
        if self.entries >= MAX_ENTRIES || self.keys.len() + rest > MAX_KEY_BYTES {
            self.clear();
        }
        if (self.entries + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let slot = Slot {
            k0: key.k0,
            k1: key.k1,
            key_len: key.len as u32,
            rest_start: self.keys.len() as u32,
            sub_start: self.subs.len() as u32,
            sub_len: subs.len() as u32 | if unk { UNK } else { 0 },
        };
        if rest > 0 {
            self.keys.extend_from_slice(&word.bytes()[SHORT..]);
        }
        self.subs.extend_from_slice(subs);
        self.ids.truncate(self.ids.len() - IDS_BLOCK);
        self.ids.extend(subs.iter().map(|s| s.id));
        self.ids.resize(self.ids.len() + IDS_BLOCK, 0);
        self.place(slot, key.hash);
        self.entries += 1;
    }

    fn place(&mut self, slot: Slot, hash: u64) {
        let mut i = hash as usize & self.mask();
        while self.slots[i].key_len != 0 {
            i = (i + 1) & self.mask();
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let bigger = vec![EMPTY; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        for s in old.into_iter().filter(|s| s.key_len != 0) {
            // The hash again, from the key (its first 16 bytes in the slot, the rest kept).
            let start = s.rest_start as usize;
            let mut padded = [0u8; MAX_KEY + SHORT];
            padded[..8].copy_from_slice(&s.k0.to_le_bytes());
            padded[8..16].copy_from_slice(&s.k1.to_le_bytes());
            let len = s.key_len as usize;
            if len > SHORT {
                padded[SHORT..len].copy_from_slice(&self.keys[start..start + len - SHORT]);
            }
            let key = Key::new(PaddedWord::new(&padded, 0, len));
            self.place(s, key.hash);
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

    fn get<'c>(c: &'c WordCache, k: &Key, w: PaddedWord) -> Option<(&'c [SubToken], bool)> {
        c.find(k, w).map(|h| c.pieces(h))
    }

    #[test]
    fn hash_ignores_bytes_past_the_word() {
        let a = b"abcdefghijk\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00";
        let b = b"abcdefghijkXXXXXXXXXXXXXXXXXXXXXXXXXX";
        for len in 0..=11 {
            assert_eq!(hash(a, len), hash(b, len));
        }
        assert_ne!(hash(a, 3), hash(a, 4));
        for len in 1..=11 {
            let (ka, kb) = (Key::new(PaddedWord::new(a, 0, len)), Key::new(PaddedWord::new(b, 0, len)));
            assert_eq!((ka.k0, ka.k1, ka.hash), (kb.k0, kb.k1, kb.hash));
        }
    }

    #[test]
    fn finds_what_was_inserted_across_growth_and_clearing() {
        let mut c = WordCache::default();
        c.own(7);
        let words: Vec<String> = (0..(MAX_ENTRIES + 100)).map(|i| format!("w{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            let mut p = w.as_bytes().to_vec();
            p.extend_from_slice(&[0; 16]);
            let pw = PaddedWord::new(&p, 0, w.len());
            let k = Key::new(pw);
            assert!(get(&c, &k, pw).is_none());
            let subs = [SubToken { id: i as u32, char_start: 0, char_end: w.len() }];
            c.insert(&k, pw, &subs, i % 3 == 0);
            let (got, unk) = get(&c, &k, pw).unwrap();
            assert_eq!((got, unk), (&subs[..], i % 3 == 0));
            let mut ids = vec![7];
            c.push_ids(c.find(&k, pw).unwrap(), &mut ids);
            assert_eq!(ids, [7, i as u32]);
        }
        // Keys of every length up to MAX_KEY, sharing their first 16 bytes and differing
        // only in their last, with every number of sub-tokens around the ids block; found
        // again after more inserts have grown the table.
        let mut c = WordCache::default();
        c.own(9);
        let mut all = Vec::new();
        for len in 1..=MAX_KEY {
            for last in [b'a', b'b'] {
                let mut p = vec![b'x'; len];
                p[len - 1] = last;
                p.extend_from_slice(&[last; 16]);
                let n = (len + last as usize) % (IDS_BLOCK + 3);
                let subs: Vec<SubToken> = (0..n)
                    .map(|j| SubToken {
                        id: (len * 100 + j) as u32 + last as u32,
                        char_start: j,
                        char_end: j + 1,
                    })
                    .collect();
                let pw = PaddedWord::new(&p, 0, len);
                let k = Key::new(pw);
                assert!(get(&c, &k, pw).is_none(), "len {len}");
                c.insert(&k, pw, &subs, n == 0);
                all.push((p, len, subs));
            }
        }
        for (p, len, subs) in &all {
            let pw = PaddedWord::new(p, 0, *len);
            let k = Key::new(pw);
            assert_eq!(get(&c, &k, pw), Some((&subs[..], subs.is_empty())), "len {len}");
            let mut ids = vec![1, 2];
            c.push_ids(c.find(&k, pw).unwrap(), &mut ids);
            assert_eq!(ids[2..], subs.iter().map(|s| s.id).collect::<Vec<u32>>()[..], "len {len}");
            assert_eq!(ids[..2], [1, 2]);
        }
        // Cleared once when full: the first words are gone, the last ones are there.
        assert!(c.entries <= MAX_ENTRIES);
        c.own(8);
        assert_eq!(c.entries, 0);
    }
}
