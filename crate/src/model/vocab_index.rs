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
fn eq_bytes(a: &[u8], b: &[u8]) -> bool {
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
