//! A byte-string → id table built for greedy longest match.
//!
//! WordPiece tries the longest candidate piece first and shrinks it one char at a time.
//! With an ordinary hash map every candidate is hashed from scratch, so a word of n bytes
//! costs O(n²) hashing when it misses. Here the hash is a running one, so one pass over a
//! piece's bytes yields the hash of every prefix: each byte is hashed once per piece, and
//! each candidate costs one probe.

/// One step of the running hash (multiply-rotate, as FxHash does per word, here per byte).
#[inline(always)]
pub fn step(h: u64, b: u8) -> u64 {
    (h.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

/// The running hash's starting value.
pub const SEED: u64 = 0x243F_6A88_85A3_08D3;

pub fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(SEED, |h, &b| step(h, b))
}

/// Byte equality for the short keys of a vocabulary, inline (no call into libc's memcmp,
/// whose set-up costs more than comparing a few bytes).
#[inline(always)]
pub(crate) fn eq_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        if u64::from_ne_bytes(x.try_into().unwrap()) != u64::from_ne_bytes(y.try_into().unwrap()) {
            return false;
        }
    }
    ca.remainder().iter().zip(cb.remainder()).all(|(x, y)| x == y)
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u64,
    id: u32,
    /// Key position in `keys`; `len == u32::MAX` marks an empty slot.
    start: u32,
    len: u32,
}

const EMPTY: Slot = Slot { hash: 0, id: 0, start: 0, len: u32::MAX };

#[derive(Clone, Debug)]
pub struct VocabIndex {
    slots: Vec<Slot>,
    keys: Vec<u8>,
    mask: usize,
    /// The longest key, in bytes: no longer candidate needs a probe.
    pub max_len: usize,
}

impl VocabIndex {
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a [u8], u32)>) -> Self {
        let entries: Vec<(&[u8], u32)> = entries.into_iter().collect();
        // Load factor at most 1/2 keeps probe sequences short.
        let cap = (entries.len() * 2).next_power_of_two().max(16);
        let mut t = VocabIndex { slots: vec![EMPTY; cap], keys: Vec::new(), mask: cap - 1, max_len: 0 };
        for (k, id) in entries {
            t.insert(k, id);
        }
        t
    }

    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        (h >> 40) as usize & self.mask
    }

    fn insert(&mut self, key: &[u8], id: u32) {
        let h = hash(key);
        let mut i = self.home(h);
        loop {
            let s = self.slots[i];
            if s.len == u32::MAX {
                self.slots[i] = Slot { hash: h, id, start: self.keys.len() as u32, len: key.len() as u32 };
                self.keys.extend_from_slice(key);
                self.max_len = self.max_len.max(key.len());
                return;
            }
            if s.hash == h && self.key(s) == key {
                // A repeated key keeps the later id, as a map insert would.
                self.slots[i].id = id;
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline(always)]
    fn key(&self, s: Slot) -> &[u8] {
        &self.keys[s.start as usize..(s.start + s.len) as usize]
    }

    /// The id of `key`, whose running hash is `h` (`hash(key) == h`).
    #[inline]
    pub fn get_hashed(&self, h: u64, key: &[u8]) -> Option<u32> {
        let mut i = self.home(h);
        loop {
            let s = self.slots[i];
            if s.len == u32::MAX {
                return None;
            }
            if s.hash == h && s.len as usize == key.len() && eq_bytes(self.key(s), key) {
                return Some(s.id);
            }
            i = (i + 1) & self.mask;
        }
    }

    pub fn get(&self, key: &[u8]) -> Option<u32> {
        self.get_hashed(hash(key), key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_inserted_and_nothing_else() {
        let words: Vec<String> = (0..5000).map(|i| format!("w{i}x")).collect();
        let t = VocabIndex::new(words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as u32)));
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.get(w.as_bytes()), Some(i as u32));
            assert_eq!(t.get(format!("{w}y").as_bytes()), None);
        }
        assert_eq!(t.get(b""), None);
        // Running hashes of prefixes agree with hashing the prefix alone.
        let w = b"w123x";
        let mut h = SEED;
        for (k, &b) in w.iter().enumerate() {
            h = step(h, b);
            assert_eq!(h, hash(&w[..=k]));
        }
    }
}

/// Keys of at most 16 bytes, stored as two little-endian words: a probe is a couple of
/// multiplies and two integer compares, with no byte loop at all. Callers load candidate
/// keys from a buffer padded with at least 16 readable bytes past the key.
#[derive(Clone, Debug)]
pub struct ShortIndex {
    slots: Vec<ShortSlot>,
    mask: usize,
    /// For each first two bytes `b0 b1` of a candidate, the longest key (in bytes) that
    /// starts with them (at least 1 when `b0` alone is a key): candidates longer than that
    /// need no probe. Greedy matching in scripts the vocabulary covers thinly (Cyrillic,
    /// Greek, Arabic in bert-base-uncased) otherwise probes many lengths that cannot match.
    prefix_max: Box<[u8]>,
}

#[derive(Clone, Copy, Debug)]
struct ShortSlot {
    k0: u64,
    k1: u64,
    id: u32,
    /// 0 marks an empty slot (the empty key is never stored).
    len: u32,
}

pub const SHORT: usize = 16;

/// The first `len` (<= 16) bytes of `padded[at..]` as two zero-padded little-endian words.
/// `padded` must hold at least `at + 16` bytes.
#[inline(always)]
pub fn load_short(padded: &[u8], at: usize, len: usize) -> (u64, u64) {
    let w = &padded[at..at + SHORT];
    let k0 = u64::from_le_bytes(w[..8].try_into().unwrap());
    let k1 = u64::from_le_bytes(w[8..].try_into().unwrap());
    let (m0, m1) = SHORT_MASKS[len];
    (k0 & m0, k1 & m1)
}

/// The masks that keep the first `len` bytes of two little-endian words, by `len` (one
/// load instead of two shifts and branches per key).
static SHORT_MASKS: [(u64, u64); SHORT + 1] = {
    let mut t = [(0u64, 0u64); SHORT + 1];
    let mut len = 0;
    while len <= SHORT {
        let m0 = if len >= 8 { u64::MAX } else { (1u64 << (8 * len)) - 1 };
        let m1 = if len >= 16 {
            u64::MAX
        } else if len <= 8 {
            0
        } else {
            (1u64 << (8 * (len - 8))) - 1
        };
        t[len] = (m0, m1);
        len += 1;
    }
    t
};

#[inline(always)]
pub(crate) fn mix(k0: u64, k1: u64, len: usize) -> u64 {
    let h = (k0 ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    let h = (h.rotate_left(31) ^ k1).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 32)
}

impl ShortIndex {
    /// Indexes the entries whose key is 1 to 16 bytes long; others are skipped.
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a [u8], u32)>) -> Self {
        let entries: Vec<(&[u8], u32)> =
            entries.into_iter().filter(|(k, _)| !k.is_empty() && k.len() <= SHORT).collect();
        let cap = (entries.len() * 2).next_power_of_two().max(16);
        let mut t = ShortIndex {
            slots: vec![ShortSlot { k0: 0, k1: 0, id: 0, len: 0 }; cap],
            mask: cap - 1,
            prefix_max: vec![0u8; 1 << 16].into_boxed_slice(),
        };
        for &(k, _) in &entries {
            if k.len() == 1 {
                // A one-byte key is a prefix of every candidate starting with that byte.
                for b1 in 0..256usize {
                    let m = &mut t.prefix_max[(k[0] as usize) << 8 | b1];
                    *m = (*m).max(1);
                }
            } else {
                let m = &mut t.prefix_max[(k[0] as usize) << 8 | k[1] as usize];
                *m = (*m).max(k.len() as u8);
            }
        }
        for (k, id) in entries {
            let mut padded = [0u8; 2 * SHORT];
            padded[..k.len()].copy_from_slice(k);
            let (k0, k1) = load_short(&padded, 0, k.len());
            let mut i = mix(k0, k1, k.len()) as usize & t.mask;
            loop {
                let s = &mut t.slots[i];
                if s.len == 0 || (s.k0 == k0 && s.k1 == k1 && s.len as usize == k.len()) {
                    // A repeated key keeps the later id, as a map insert would.
                    *s = ShortSlot { k0, k1, id, len: k.len() as u32 };
                    break;
                }
                i = (i + 1) & t.mask;
            }
        }
        t
    }

    /// The longest key that could start at `padded[at..]` (see `prefix_max`).
    #[inline(always)]
    pub fn max_len_at(&self, padded: &[u8], at: usize) -> usize {
        self.prefix_max[(padded[at] as usize) << 8 | padded[at + 1] as usize] as usize
    }

    /// The id of the key `(k0, k1)` of `len` bytes, as produced by [`load_short`].
    #[inline(always)]
    pub fn get(&self, k0: u64, k1: u64, len: usize) -> Option<u32> {
        let mut i = mix(k0, k1, len) as usize & self.mask;
        loop {
            let s = self.slots[i];
            if s.len == 0 {
                return None;
            }
            if s.k0 == k0 && s.k1 == k1 && s.len as usize == len {
                return Some(s.id);
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// Keys of 1 to 8 bytes, each one machine word: the key's bytes, little-endian, with every
/// byte past its end set to 0xFF. No UTF-8 text holds the byte 0xFF, so the word alone tells
/// keys of different lengths apart (no length to store or compare), and a probe is one load,
/// one or two shifts, one multiply and one compare per slot visited. Most words of English
/// and code are such keys.
#[derive(Clone, Debug)]
pub struct SmallIndex {
    slots: Vec<SmallSlot>,
    shift: u32,
}

#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct SmallSlot {
    /// [`EMPTY_KEY`] marks an empty slot (no key has 0xFF as its first byte).
    key: u64,
    id: u32,
}

const EMPTY_KEY: u64 = u64::MAX;

/// The longest key a [`SmallIndex`] holds.
pub const SMALL: usize = 8;

/// The [`SmallIndex`] key of the `len` (1..=8) bytes at the start of `padded`, which holds
/// at least 8 readable bytes (any values past the key).
#[inline(always)]
pub fn small_key(padded: &[u8], len: usize) -> u64 {
    debug_assert!((1..=SMALL).contains(&len));
    let x = u64::from_le_bytes(padded[..8].try_into().unwrap());
    // All ones from byte `len` up; the two shifts give 0 for len 8 (a shift by 64 would not).
    x | ((u64::MAX << (8 * len - 1)) << 1)
}

impl SmallIndex {
    /// Indexes the entries whose key is 1 to 8 bytes of UTF-8; others are skipped.
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a str, u32)>) -> Self {
        let keys: Vec<(u64, u32)> = entries
            .into_iter()
            .filter(|(k, _)| (1..=SMALL).contains(&k.len()))
            .map(|(k, id)| {
                let mut padded = [0u8; SMALL];
                padded[..k.len()].copy_from_slice(k.as_bytes());
                (small_key(&padded, k.len()), id)
            })
            .collect();
        // Load factor at most 3/8: a miss ends after a short run.
        let cap = (keys.len() * 8 / 3 + 1).next_power_of_two().max(16);
        let mut t = SmallIndex {
            slots: vec![SmallSlot { key: EMPTY_KEY, id: 0 }; cap],
            shift: 64 - cap.trailing_zeros(),
        };
        for (key, id) in keys {
            let mut i = t.home(key);
            loop {
                let s = &mut t.slots[i];
                if s.key == EMPTY_KEY || s.key == key {
                    // A repeated key keeps the later id, as a map insert would.
                    *s = SmallSlot { key, id };
                    break;
                }
                i = (i + 1) & (cap - 1);
            }
        }
        t
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The id of the key `key` (from [`small_key`]).
    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s.key == key {
                return Some(s.id);
            }
            if s.key == EMPTY_KEY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Mean slots visited by a lookup of each stored key (for the tests).
    #[cfg(test)]
    fn mean_probe(&self) -> f64 {
        let mask = self.slots.len() - 1;
        let (mut n, mut visits) = (0usize, 0usize);
        for s in self.slots.iter().filter(|s| s.key != EMPTY_KEY) {
            let mut i = self.home(s.key);
            visits += 1;
            while self.slots[i].key != s.key {
                i = (i + 1) & mask;
                visits += 1;
            }
            n += 1;
        }
        visits as f64 / n.max(1) as f64
    }
}

#[cfg(test)]
mod small_tests {
    use super::*;

    #[test]
    fn small_key_keeps_exactly_len_bytes_and_marks_the_rest() {
        let buf: Vec<u8> = (1..=24u8).map(|b| b.wrapping_mul(37) & 0x7F).collect();
        for at in 0..8 {
            for len in 1..=SMALL {
                let mut want = [0xFFu8; 8];
                want[..len].copy_from_slice(&buf[at..at + len]);
                assert_eq!(small_key(&buf[at..], len), u64::from_le_bytes(want), "len {len}");
            }
        }
    }

    #[test]
    fn small_keys_round_trip_and_near_misses_miss() {
        // Keys of every length 1..=8, ASCII and not, sharing prefixes; a key followed by
        // garbage, its prefixes and its extensions.
        let mut words: Vec<String> = Vec::new();
        for i in 0..4000u32 {
            let base = match i % 4 {
                0 => format!("k{i}"),
                1 => format!("é{}", i % 300),
                2 => format!("{}", i * 7),
                _ => format!("x{}ж", i % 500),
            };
            words.push(base.chars().take(1 + (i as usize % 8)).collect());
        }
        words.retain(|w| w.len() <= SMALL);
        // NUL bytes are key bytes like any other (0xFF is the only byte UTF-8 never holds).
        words.extend(["\0".to_owned(), "\0\0".to_owned(), "a\0".to_owned(), "\0\0\0\0\0\0\0\0".to_owned()]);
        let t = SmallIndex::new(words.iter().enumerate().map(|(i, w)| (w.as_str(), i as u32)));
        let set: std::collections::HashMap<&str, u32> =
            words.iter().enumerate().map(|(i, w)| (w.as_str(), i as u32)).collect();
        for w in &words {
            let mut buf = w.as_bytes().to_vec();
            buf.extend_from_slice(b"garbage!");
            let want = words.iter().rposition(|x| x == w).unwrap() as u32;
            assert_eq!(t.get(small_key(&buf, w.len())), Some(want), "{w:?}");
            for n in 1..w.len() {
                if let Ok(p) = std::str::from_utf8(&w.as_bytes()[..n]) {
                    assert_eq!(t.get(small_key(&buf, n)), set.get(p).copied(), "{p:?}");
                }
            }
        }
        assert!(t.mean_probe() < 1.5, "{}", t.mean_probe());
    }
}

#[cfg(test)]
mod short_tests {
    use super::*;

    #[test]
    fn eq_bytes_is_slice_equality() {
        // Lengths across the 8-byte word boundaries, equal and with one byte changed at each
        // position, and different lengths sharing a prefix.
        let base: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
        for n in 0..=base.len() {
            let a = &base[..n];
            assert!(eq_bytes(a, a));
            for k in 0..n {
                let mut b = a.to_vec();
                b[k] ^= 0x80;
                assert!(!eq_bytes(a, &b), "len {n}, byte {k}");
            }
            if n > 0 {
                assert!(!eq_bytes(a, &base[..n - 1]));
            }
        }
    }

    #[test]
    fn load_short_keeps_exactly_len_bytes() {
        let buf: Vec<u8> = (1..=40u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        for at in 0..8 {
            for len in 0..=SHORT {
                let mut want = [0u8; SHORT];
                want[..len].copy_from_slice(&buf[at..at + len]);
                let (k0, k1) = load_short(&buf, at, len);
                assert_eq!(k0, u64::from_le_bytes(want[..8].try_into().unwrap()), "len {len}");
                assert_eq!(k1, u64::from_le_bytes(want[8..].try_into().unwrap()), "len {len}");
            }
        }
    }

    #[test]
    fn short_keys_round_trip_and_prefixes_miss() {
        let words: Vec<String> =
            (0..3000).map(|i| format!("k{i}").repeat(1 + i % 5)).filter(|w| w.len() <= 16).collect();
        let t = ShortIndex::new(words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as u32)));
        for (i, w) in words.iter().enumerate() {
            let mut buf = w.as_bytes().to_vec();
            buf.extend_from_slice(b"garbage-after-the-key!!");
            let (k0, k1) = load_short(&buf, 0, w.len());
            let want = words.iter().rposition(|x| x == w).unwrap() as u32;
            assert_eq!(t.get(k0, k1, w.len()), Some(want), "{w}");
            if w.len() > 1 {
                let (k0, k1) = load_short(&buf, 0, w.len() - 1);
                let shorter = &w[..w.len() - 1];
                assert_eq!(
                    t.get(k0, k1, w.len() - 1),
                    words.iter().rposition(|x| x == shorter).map(|p| p as u32)
                );
            }
            let _ = i;
        }
    }
}
