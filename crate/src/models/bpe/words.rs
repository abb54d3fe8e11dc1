//! The first cache a pre-token meets: pieces of 1 to 15 bytes.
//!
//! Most pre-tokens of text are such pieces, seen before (English and code: ~95% of those of
//! two bytes or more). For them the whole lookup is: the key from two 8-byte loads of the text
//! masked to the piece's length (its bytes zero-padded, its length in the top byte: a piece
//! determines its key and the key its piece), one multiply for the hash, and one 32-byte entry
//! holding the key and up to 3 ids (more are in an arena). The key and hash are made when the
//! pre-token is found (and its entry prefetched); the probe comes a batch later. A miss goes
//! to [`super::cache`]'s tables and the merge, and what they give is stored here.
//!
//! One table per thread and tokenizer (in `Work`), cleared when three quarters full. Natively,
//! a tokenizer asks its [`Seed`] on a miss of the thread's table: one read-only table per
//! tokenizer of every token of 2 to [`MAX_PIECE`] bytes under the same key and hash, so a new
//! piece is one probe there (no vocabulary lookup, no second hash), and a piece it lacks
//! merges (where a token is taken whole only when merging gives it, a hit is checked once
//! per token). The thread's own table stays small and dense: the pieces text repeats share
//! cache lines there, where in a copy of the seed each would have a line of its own (which
//! made the warm pass slower).

/// Slots at most (32 bytes each: 4 MB).
const SLOTS: usize = 1 << 17;
/// Slots of a new table (128 KB), grown each time it is half full (below [`SLOTS`]): text
/// seen once does not wait for 4 MB to be zeroed.
const FIRST_SLOTS: usize = 1 << 12;
/// Pieces before the table starts over.
const MAX_LEN: usize = SLOTS / 4 * 3;
/// Ids in the arena before the table starts over.
const MAX_ARENA: usize = 1 << 22;
/// The longest piece stored: its bytes and its length fit in 16 bytes.
pub const MAX_PIECE: usize = 15;

/// A piece's key: its bytes zero-padded, little-endian, and its length in the top byte of the
/// second word. A piece has a non-zero length byte; `[0, 0]` marks a free slot and a
/// pre-token with no key (longer than [`MAX_PIECE`]).
pub type Key = [u64; 2];
pub const NO_KEY: Key = [0, 0];

#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    key: Key,
    /// The ids when there are at most 3 (0 past `n`); else `ids[0]` is their offset in the arena.
    ids: [u32; 3],
    n: u32,
}

const FREE: Entry = Entry { key: NO_KEY, ids: [0; 3], n: 0 };

/// The masks that keep the first `n` bytes of the two words (index `n`, 0 to 15).
static MASKS: [[u64; 2]; 16] = {
    let mut m = [[0u64; 2]; 16];
    let mut n = 1;
    while n < 16 {
        m[n][0] = if n >= 8 { u64::MAX } else { u64::MAX >> (64 - 8 * n) };
        m[n][1] = if n > 8 { u64::MAX >> (64 - 8 * (n - 8)) } else { 0 };
        n += 1;
    }
    m
};

/// The key of the piece `s[a..a + n]` (`1 <= n <= MAX_PIECE`).
#[inline(always)]
pub fn key_at(s: &[u8], a: usize, n: usize) -> Key {
    debug_assert!((1..=MAX_PIECE).contains(&n) && a + n <= s.len());
    let [lo, hi] = match s.get(a..a + 16) {
        Some(w) => {
            let w: &[u8; 16] = w.try_into().expect("16 bytes");
            let m = MASKS[n & 15];
            [
                u64::from_le_bytes(w[..8].try_into().expect("8 bytes")) & m[0],
                u64::from_le_bytes(w[8..].try_into().expect("8 bytes")) & m[1],
            ]
        }
        // The last 15 bytes of the text: through a zero-padded copy.
        None => {
            let mut w = [0u8; 16];
            w[..n].copy_from_slice(&s[a..a + n]);
            [
                u64::from_le_bytes(w[..8].try_into().expect("8 bytes")),
                u64::from_le_bytes(w[8..].try_into().expect("8 bytes")),
            ]
        }
    };
    [lo, hi | (n as u64) << 56]
}

/// The key under which a span of pre-tokens (see
/// [`crate::pre_tokenizers::byte_level::spans::span_end`]) is stored, from its bytes'
/// [`key_at`]: the length byte gets the bit 0x10, which no piece's has ([`MAX_PIECE`] < 16),
/// so a span and a piece of the same bytes never share an entry.
#[inline(always)]
pub fn span_key(key: Key) -> Key {
    [key[0], key[1] | 0x10 << 56]
}

/// Whether `key` is a [`span_key`].
#[inline(always)]
pub fn is_span_key(key: Key) -> bool {
    key[1] >> 56 & 0x10 != 0
}

/// The key of `piece` if it has one ([`NO_KEY`] otherwise).
#[cfg(test)]
fn key_of(piece: &[u8]) -> Key {
    if (1..=MAX_PIECE).contains(&piece.len()) {
        key_at(piece, 0, piece.len())
    } else {
        NO_KEY
    }
}

/// The hash of a key: one multiply, its high bits folded down onto the low ones that pick a
/// slot (wasm too: a 64-bit multiply is one instruction there). Bits 40 to 63 of the product
/// depend on every byte of the key; from bit 29, as before, the 7th and 8th bytes of a piece
/// never reached the slot of a table of 2^19 slots, and tokens that differ only there
/// crowded together (o200k's seed: 1.51 probes a hit, 1.29 now, as for a random hash).
#[inline(always)]
pub fn hash(key: Key) -> u64 {
    let h = (key[0] ^ key[1].rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 40)
}

/// Every token of 2 to [`MAX_PIECE`] bytes under its key, with its id: made once per
/// tokenizer, read-only after, shared by the threads' tables (o200k: 194,250 tokens in 2^19
/// slots, 16 MB).
pub struct Seed {
    slots: Vec<Entry>,
    /// One bit per value of a hash's top `64 - long_shift` bits, set for the tokens longer
    /// than [`MAX_PIECE`]: a longer piece whose bit is clear is not a token, which saves the
    /// vocabulary lookup of a new one (a cache miss). Sixteen bits a token (o200k: 5,492 in
    /// 16 KB), so about one piece in 16 that is not a token passes.
    long: Vec<u64>,
    long_shift: u32,
}

impl Seed {
    /// The table of the tokens of `vocab` that have a key.
    pub fn new(vocab: &super::table::Vocab) -> Seed {
        let keyed: Vec<(Key, u32)> = vocab
            .iter()
            .filter(|(_, b)| (2..=MAX_PIECE).contains(&b.len()))
            .map(|(id, b)| (key_at(b, 0, b.len()), id))
            .collect();
        // At most half full: a piece that is not a token probes to a free slot.
        let size = (keyed.len() * 2).next_power_of_two().max(FIRST_SLOTS);
        let mut slots = super::table::huge_vec(size, FREE);
        let mask = size - 1;
        for (j, &(key, id)) in keyed.iter().enumerate() {
            // Slots a few tokens ahead are loaded meanwhile: one after another, each insert
            // would wait for a cache miss (o200k's seed took 28 ms so).
            if let Some(&(ahead, _)) = keyed.get(j + 16) {
                super::table::prefetch_ptr(&slots[hash(ahead) as usize & mask] as *const Entry as *const u8);
            }
            let mut i = hash(key) as usize & mask;
            while slots[i].key != NO_KEY {
                i = (i + 1) & mask;
            }
            slots[i] = Entry { key, ids: [id, 0, 0], n: 1 };
        }
        let longer = || vocab.iter().filter(|(_, b)| b.len() > MAX_PIECE);
        let bits = (longer().count() * 16).next_power_of_two().max(64);
        let mut seed = Seed { slots, long: vec![0; bits / 64], long_shift: 64 - bits.trailing_zeros() };
        for (_, b) in longer() {
            let bit = seed.long_bit(super::table::hash_bytes(b));
            seed.long[bit / 64] |= 1 << (bit % 64);
        }
        seed
    }

    /// The id of the token with key `key` (not [`NO_KEY`]) and [`hash`] `h`, if there is one.
    #[inline(always)]
    pub fn get(&self, key: Key, h: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let e = &self.slots[i];
            if e.key == key {
                return Some(e.ids[0]);
            }
            if e.key[1] == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Starts loading the slot a lookup with hash `h` begins at.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        let e = &self.slots[h as usize & (self.slots.len() - 1)];
        super::table::prefetch_ptr(e as *const Entry as *const u8);
    }

    #[inline(always)]
    fn long_bit(&self, hash: u64) -> usize {
        (hash >> self.long_shift) as usize
    }

    /// Whether a piece longer than [`MAX_PIECE`] bytes, with [`super::table::hash_bytes`]
    /// `hash`, may be a token (false: it is not).
    #[inline(always)]
    pub fn may_be_long_token(&self, hash: u64) -> bool {
        let bit = self.long_bit(hash);
        self.long[bit / 64] >> (bit % 64) & 1 != 0
    }
}

pub struct Words {
    /// Open addressing with linear probing, [`FIRST_SLOTS`] slots once the first piece is
    /// stored (one free slot before: a lookup needs no check for an empty table).
    slots: Vec<Entry>,
    len: usize,
    /// The ids of pieces that are more than 3.
    arena: Vec<u32>,
}

impl Default for Words {
    fn default() -> Words {
        Words { slots: vec![FREE], len: 0, arena: Vec::new() }
    }
}

impl Words {
    /// An empty table of the size the first table grows to (512 KB), for a tokenizer with a
    /// seed: it is made with the seed, at a tokenizer's first call on a thread, so text seen
    /// once does not wait for the first growth (a move of every entry to fresh memory: 12-16%
    /// of o200k English's first 64 KB).
    pub fn grown() -> Words {
        Words { slots: super::table::huge_vec(FIRST_SLOTS * 4, FREE), ..Words::default() }
    }

    /// Starts loading the slot a lookup with hash `h` begins at.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        let e = &self.slots[h as usize & (self.slots.len() - 1)];
        super::table::prefetch_ptr(e as *const Entry as *const u8);
    }

    /// Appends the ids stored for the piece with key `key` (not [`NO_KEY`]) and hash `h` to
    /// `out` and returns true; false if it is not stored.
    #[inline(always)]
    pub fn get_into(&self, key: Key, h: u64, out: &mut Vec<u32>) -> bool {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let e = &self.slots[i];
            if e.key == key {
                let n = e.n as usize;
                if n <= 3 {
                    super::cache::push_up_to_3(out, e.ids, n);
                } else {
                    let at = e.ids[0] as usize;
                    out.extend_from_slice(&self.arena[at..at + n]);
                }
                return true;
            }
            if e.key[1] == 0 {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    /// The ids stored for the piece with key `key` (not [`NO_KEY`]) and hash `h` as `[id, id,
    /// id, n]` (zeros after the `n` ids), when there are at most 3; `None` when it is not
    /// stored or has more.
    #[inline(always)]
    pub fn get_short(&self, key: Key, h: u64) -> Option<[u32; 4]> {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            // SAFETY: `i <= mask < self.slots.len()` (never empty, see `slots`).
            let e = unsafe { self.slots.get_unchecked(i) };
            if e.key == key {
                return (e.n <= 3).then_some([e.ids[0], e.ids[1], e.ids[2], e.n]);
            }
            if e.key[1] == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether the piece with key `key` (not [`NO_KEY`]) and hash `h` is stored.
    #[inline(always)]
    pub fn contains(&self, key: Key, h: u64) -> bool {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let e = &self.slots[i];
            if e.key == key {
                return true;
            }
            if e.key[1] == 0 {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    /// Remembers `ids` (at least one) for the piece with key `key` (not [`NO_KEY`], not
    /// stored yet) and hash `h`.
    pub fn insert(&mut self, key: Key, h: u64, ids: &[u32]) {
        if key == NO_KEY || ids.is_empty() || ids.len() > MAX_ARENA {
            return;
        }
        if self.slots.len() < FIRST_SLOTS {
            self.slots = super::table::huge_vec(FIRST_SLOTS, FREE);
        } else if self.len >= MAX_LEN || self.arena.len() + ids.len() > MAX_ARENA {
            self.slots.fill(FREE);
            self.arena.clear();
            self.len = 0;
        } else if self.len >= self.slots.len() / 2 && self.slots.len() < SLOTS {
            self.grow();
        }
        let mut e = Entry { key, ids: [0; 3], n: ids.len() as u32 };
        if ids.len() <= 3 {
            // (Not `copy_from_slice`: a call to memcpy for at most 12 bytes.)
            for (d, &id) in e.ids.iter_mut().zip(ids) {
                *d = id;
            }
        } else {
            e.ids[0] = self.arena.len() as u32;
            self.arena.extend_from_slice(ids);
        }
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        while self.slots[i].key != NO_KEY {
            debug_assert!(self.slots[i].key != key, "stored twice");
            i = (i + 1) & mask;
        }
        self.slots[i] = e;
        self.len += 1;
    }
}

impl Words {
    /// Moves the entries to a table of twice the slots, four times from the first table: text
    /// seen once fills that in a few KB and would soon fill the next size too (each move
    /// rehashes every entry); larger tables double, since a sparse table costs its probes
    /// cache misses.
    #[inline(never)]
    fn grow(&mut self) {
        let size = self.slots.len() * if self.slots.len() == FIRST_SLOTS { 4 } else { 2 };
        let old = std::mem::replace(&mut self.slots, super::table::huge_vec(size, FREE));
        let mask = size - 1;
        for e in old.into_iter().filter(|e| e.key != NO_KEY) {
            let mut i = hash(e.key) as usize & mask;
            while self.slots[i].key != NO_KEY {
                i = (i + 1) & mask;
            }
            self.slots[i] = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys tell every piece of 1 to 15 bytes apart (trailing zero bytes, equal prefixes), are
    /// the same read from inside a text and from the piece alone (near the text's end too), and
    /// the table returns what was stored for random pieces, past a start-over too, through
    /// `get_into` and (3 ids or fewer) `get_short`.
    #[test]
    fn keys_and_table_against_a_map() {
        let text: Vec<u8> = (0..64u8).map(|i| if i % 5 == 0 { 0 } else { i.wrapping_mul(37) }).collect();
        let mut seen = std::collections::HashMap::new();
        for a in 0..text.len() {
            for n in 1..=MAX_PIECE.min(text.len() - a) {
                let p = &text[a..a + n];
                let k = key_at(&text, a, n);
                assert_eq!(k, key_of(p));
                assert_ne!(k[1], 0);
                if let Some(q) = seen.insert(k, p.to_vec()) {
                    assert_eq!(q, p, "two pieces, one key");
                }
            }
        }
        assert_ne!(key_of(b"z"), key_of(b"z\0"));
        assert_ne!(key_of(b"\0"), NO_KEY);
        assert_ne!(key_of(b"z\0"), key_of(b"z\0\0"));
        assert_eq!(key_of(&[1; 16]), NO_KEY);

        let mut w = Words::default();
        let mut want = std::collections::HashMap::new();
        let mut x: u64 = 99;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut stored = 0;
        while stored < MAX_LEN + 20_000 {
            let n = 1 + next(15) as usize;
            let p: Vec<u8> = (0..n).map(|_| if next(4) == 0 { 0 } else { next(256) as u8 }).collect();
            let k = key_of(&p);
            if want.contains_key(&p) {
                continue;
            }
            let mut out = vec![7];
            assert!(!w.contains(k, hash(k)));
            assert!(!w.get_into(k, hash(k), &mut out));
            assert_eq!(w.get_short(k, hash(k)), None);
            assert_eq!(out, [7]);
            let most = if next(3) == 0 { 12 } else { 3 };
            let ids: Vec<u32> = (0..1 + next(most)).map(|_| next(1 << 24) as u32).collect();
            let before = w.len;
            w.insert(k, hash(k), &ids);
            if w.len < before {
                // Started over: forget what the map knew.
                want.clear();
            }
            want.insert(p, ids);
            stored += 1;
        }
        assert!(want.len() > 10_000, "{}", want.len());
        for (p, ids) in &want {
            let k = key_of(p);
            // Appended to an output with no spare capacity.
            let mut out = vec![7u32; 5];
            out.shrink_to_fit();
            assert!(w.contains(k, hash(k)));
            assert!(w.get_into(k, hash(k), &mut out));
            assert_eq!(&out[..5], &[7; 5]);
            assert_eq!(&out[5..], &ids[..]);
            let short = w.get_short(k, hash(k));
            if ids.len() <= 3 {
                let mut want = [0, 0, 0, ids.len() as u32];
                want[..ids.len()].copy_from_slice(ids);
                assert_eq!(short, Some(want));
            } else {
                assert_eq!(short, None);
            }
        }
    }

    /// A seed has every token of 2 to 15 bytes as its id and no other piece, and its filter
    /// passes every longer token and few other pieces.
    #[test]
    fn seed_has_every_keyed_token() {
        let mut x: u64 = 3;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let mut seen: std::collections::HashSet<Vec<u8>> = tokens.iter().map(|t| t.0.clone()).collect();
        while tokens.len() < 3000 {
            let p: Vec<u8> =
                (0..2 + next(19)).map(|_| if next(4) == 0 { 0 } else { next(8) as u8 }).collect();
            if seen.insert(p.clone()) {
                let id = tokens.len() as u32 + 7;
                tokens.push((p, id));
            }
        }
        let vocab = super::super::table::Vocab::new(tokens.clone()).unwrap();
        let seed = Seed::new(&vocab);
        let keyed: Vec<_> = tokens.iter().filter(|(b, _)| (2..=MAX_PIECE).contains(&b.len())).collect();
        for (b, id) in &keyed {
            let k = key_of(b);
            assert_eq!(seed.get(k, hash(k)), Some(*id), "{b:?}");
        }
        // Random pieces, some of them tokens.
        for _ in 0..10_000 {
            let p: Vec<u8> = (0..2 + next(6)).map(|_| if next(4) == 0 { 0 } else { next(8) as u8 }).collect();
            let k = key_of(&p);
            assert_eq!(seed.get(k, hash(k)), vocab.get_id(&p), "{p:?}");
        }
        let long: Vec<_> = tokens.iter().filter(|(b, _)| b.len() > MAX_PIECE).collect();
        assert!(long.len() > 100);
        let hash_of = super::super::table::hash_bytes;
        assert!(long.iter().all(|(b, _)| seed.may_be_long_token(hash_of(b))));
        let passed = (0..10_000u32)
            .filter(|i| seed.may_be_long_token(hash_of(&[i.to_le_bytes(); 5].concat())))
            .count();
        assert!(passed < 1_000, "{passed} of 10,000 pieces that are no token pass the filter");
    }
}
