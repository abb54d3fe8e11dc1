//! A cache of pieces: piece bytes → their ids.
//!
//! Merging is the expensive step (each pair lookup may miss the CPU caches: the pair table of
//! o200k is 16 MB), and real text repeats its words, so a piece that had to be merged once is
//! remembered. Pieces that are tokens by themselves are remembered too (as their one id): the
//! cache is asked first, and a hit is one probe of one entry, where the vocabulary lookup it
//! replaces takes two dependent loads (hot table, then the id's key) or a probe of the 8 MB
//! full table.
//!
//! Two tables: pieces of at most 8 bytes (not ending in a 0 byte) that are at most 3 ids
//! (most of what text repeats: ~90% of the pre-tokens of two bytes or more in English or
//! code; Arabic with cl100k, whose pieces are many ids each, needs the third) in 16-byte entries,
//! 1 MB for 2^16; every other piece in 32-byte entries (4 MB). On a long text the lookups
//! miss the L2 cache (2 MB here) less often when most of them go to the smaller table. A hit
//! appends its ids with fixed-size stores and no branch on their number.
//!
//! One cache per thread and tokenizer (see `BpeTokenizer::with_work`), so there is no
//! locking; it is cleared when it grows past its bounds, which keeps memory flat on text
//! that never repeats.

/// Slots of the table of other pieces at most (32 bytes each: 4 MB).
const SLOTS: usize = 1 << 17;
/// Slots of the table of short pieces at most (16 bytes each: 1 MB).
const SHORT_SLOTS: usize = 1 << 16;
/// Slots of either table when it is made; it doubles each time it is half full (up to its
/// bound), so text seen once does not wait for 5 MB to be zeroed.
const FIRST_SLOTS: usize = 1 << 10;
/// Short pieces before the cache starts over (three quarters of the slots, as for the other).
const MAX_SHORT: usize = SHORT_SLOTS / 4 * 3;
/// Other pieces before the cache starts over: three quarters of the slots. At half (65,536) a
/// corpus with more distinct pieces (Chinese: 66k in 4.6 MB) would start over again and again
/// and merge most of its pieces anew each pass (o200k on Chinese: ~2.7x the instructions);
/// linear probing at this load still finds most pieces in their first cache line.
const MAX_ENTRIES: usize = SLOTS / 4 * 3;
/// Bytes of pieces stored before the cache starts over.
const MAX_BYTES: usize = 1 << 22;
/// Pieces of at most this many bytes are stored in their entry, and compared as two words.
const INLINE_PIECE: usize = 16;
/// The longest piece, and the most ids, an entry holds: longer ones are not cached.
pub const MAX_PIECE: usize = 1024;
/// Results of at most this many ids are stored in their entry.
const INLINE_IDS: usize = 3;
const _: () = assert!(INLINE_IDS == 3, "get_into copies inline ids one by one, for at most 3");

/// 32 bytes, two to a cache line. A hit on a piece of at most 16 bytes that merged into at
/// most 3 ids reads this entry and nothing else.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    /// A piece of at most [`INLINE_PIECE`] bytes: its bytes, zero-padded, little-endian. A
    /// longer one: its offset into `PieceCache::bytes` and its hash.
    key: [u64; 2],
    /// At most [`INLINE_IDS`] ids: the ids. More: `ids[0]` is their offset into `PieceCache::ids`.
    ids: [u32; INLINE_IDS],
    /// 0 marks a free slot.
    piece_len: u16,
    ids_len: u16,
}

const FREE: Entry = Entry { key: [0; 2], ids: [0; INLINE_IDS], piece_len: 0, ids_len: 0 };

/// The key of an inline piece (at most [`INLINE_PIECE`] bytes).
#[inline(always)]
fn inline_key(piece: &[u8]) -> [u64; 2] {
    use super::table::pack;
    if piece.len() <= 8 {
        [pack(piece), 0]
    } else {
        [pack(&piece[..8]), pack(&piece[8..])]
    }
}

/// 16 bytes, four to a cache line: a piece of 1 to 8 bytes whose last byte is not 0, and its
/// ids when there are at most 3.
///
/// Such a piece is determined by its [`super::table::pack`] alone (its length is the position
/// of the last non-zero byte), so the key is one word and no slot of a piece packs to 0, which
/// marks a free slot. A piece ending in a 0 byte goes to the table of other pieces.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Short {
    /// The piece's [`super::table::pack`]; 0 marks a free slot.
    key: u64,
    /// The ids, [`pack_ids`], or [`IN_LONG`].
    ids: u64,
}

const SHORT_FREE: Short = Short { key: 0, ids: 0 };
/// Bits per id in [`pack_ids`]: ids of up to a million fit (o200k has 200k tokens).
const SHORT_ID_BITS: u32 = 20;
const SHORT_ID_MASK: u64 = (1 << SHORT_ID_BITS) - 1;
/// A short piece whose ids are in the table of other pieces: more than 3 of them, or one of
/// [`SHORT_ID_BITS`] bits or more (a count of 0 in [`pack_ids`]'s terms).
const IN_LONG: u64 = 0;

/// 1 to 3 ids below `1 << 20` and their count in one word: `a | b << 20 | c << 40 | k << 60`
/// (an absent id is 0). `None` for other lists.
#[inline]
fn pack_ids(ids: &[u32]) -> Option<u64> {
    if ids.is_empty() || ids.len() > 3 || ids.iter().any(|&i| i as u64 > SHORT_ID_MASK) {
        return None;
    }
    let mut v = (ids.len() as u64) << 60;
    for (k, &i) in ids.iter().enumerate() {
        v |= (i as u64) << (k as u32 * SHORT_ID_BITS);
    }
    Some(v)
}

/// Appends the ids of a [`pack_ids`] word to `out`, without a branch on how many there are.
#[inline(always)]
fn push_packed(out: &mut Vec<u32>, v: u64) {
    let ids = [
        (v & SHORT_ID_MASK) as u32,
        (v >> SHORT_ID_BITS & SHORT_ID_MASK) as u32,
        (v >> (2 * SHORT_ID_BITS) & SHORT_ID_MASK) as u32,
    ];
    push_up_to_3(out, ids, (v >> 60) as usize);
}

/// Appends `ids[..k]` (k at most 3) to `out`: all three are written to its spare capacity
/// and the length grows by k, so the count costs no branch and the copy no call to memcpy.
#[inline(always)]
pub(crate) fn push_up_to_3(out: &mut Vec<u32>, ids: [u32; 3], k: usize) {
    debug_assert!(k <= 3);
    out.reserve(3);
    let len = out.len();
    if let [s0, s1, s2, ..] = out.spare_capacity_mut() {
        s0.write(ids[0]);
        s1.write(ids[1]);
        s2.write(ids[2]);
        // SAFETY: k & 3 <= 3 (and equals k, which the callers keep at most 3), and the first
        // three spare slots were just initialized, so the first len + (k & 3) elements are
        // initialized and within capacity.
        unsafe { out.set_len(len + (k & 3)) };
    }
}

/// Whether a piece of at most 8 bytes goes to the table of short pieces.
#[inline(always)]
fn is_short(piece: &[u8]) -> bool {
    matches!(piece.last(), Some(&b) if b != 0) && piece.len() <= 8
}

pub struct PieceCache {
    /// Open addressing, [`SHORT_SLOTS`] slots: pieces of at most 8 bytes.
    short: Vec<Short>,
    /// Open addressing, [`SLOTS`] slots: longer pieces, and short ones of 3 ids or more.
    slots: Vec<Entry>,
    /// Pieces longer than [`INLINE_PIECE`] bytes.
    bytes: Vec<u8>,
    /// Results longer than [`INLINE_IDS`] ids.
    ids: Vec<u32>,
    /// Entries in `short`.
    short_len: usize,
    /// Entries in `slots`.
    len: usize,
}

impl Default for PieceCache {
    fn default() -> PieceCache {
        // One free slot in `short` until the first insert allocates the tables: a lookup
        // then needs no check for an empty table.
        PieceCache {
            short: vec![SHORT_FREE],
            slots: Vec::new(),
            bytes: Vec::new(),
            ids: Vec::new(),
            short_len: 0,
            len: 0,
        }
    }
}

impl PieceCache {
    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Starts loading the slot a lookup of a piece of `len` bytes with this hash begins at (see
    /// [`super::table::prefetch_ptr`]).
    #[inline(always)]
    pub fn prefetch(&self, hash: u64, len: usize) {
        if len <= 8 {
            // (A piece ending in a 0 byte is looked up in the other table: a useless
            // prefetch for such rare pieces.)
            if let Some(e) = self.short.get(hash as usize & self.short.len().wrapping_sub(1)) {
                super::table::prefetch_ptr(e as *const Short as *const u8);
            }
        } else if let Some(e) = self.slots.get(hash as usize & self.slots.len().wrapping_sub(1)) {
            super::table::prefetch_ptr(e as *const Entry as *const u8);
        }
    }

    /// The ids stored for `piece` in the table of other pieces (whose
    /// [`super::table::hash_bytes`] is `hash`).
    #[inline(always)]
    fn get_long(&self, piece: &[u8], hash: u64) -> Option<&[u32]> {
        if self.len == 0 || piece.is_empty() {
            return None;
        }
        let n = piece.len();
        let key = if n <= INLINE_PIECE { inline_key(piece) } else { [0, hash] };
        let mut i = hash as usize & self.mask();
        loop {
            let e = &self.slots[i];
            if e.piece_len == 0 {
                return None;
            }
            if e.piece_len as usize == n {
                let same = if n <= INLINE_PIECE {
                    e.key == key
                } else {
                    let p = e.key[0] as usize;
                    e.key[1] == hash && super::table::bytes_eq(&self.bytes[p..p + n], piece)
                };
                if same {
                    let k = e.ids_len as usize;
                    return Some(if k <= INLINE_IDS {
                        &e.ids[..k]
                    } else {
                        let s = e.ids[0] as usize;
                        &self.ids[s..s + k]
                    });
                }
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Appends the ids stored for `piece` to `out` and returns true, or returns false when it
    /// is not stored. `hash` is the piece's [`super::table::hash_bytes`], `short` its
    /// [`super::table::pack`] when it has at most 8 bytes.
    #[inline(always)]
    pub fn get_into(&self, piece: &[u8], hash: u64, short: u64, out: &mut Vec<u32>) -> bool {
        let n = piece.len();
        if is_short(piece) {
            // `short` has one slot before the first insert (see `Default`), so the mask is
            // never taken of an empty table.
            let mask = self.short.len() - 1;
            let mut i = hash as usize & mask;
            loop {
                let e = self.short[i];
                if e.key == short {
                    if e.ids == IN_LONG {
                        return self.get_long_into(piece, hash, out);
                    }
                    push_packed(out, e.ids);
                    return true;
                }
                if e.key == 0 {
                    return false;
                }
                i = (i + 1) & mask;
            }
        }
        // (An empty piece, never stored, would match a free slot's inline key.)
        if n > INLINE_PIECE || n == 0 || self.slots.is_empty() {
            return self.get_long_into(piece, hash, out);
        }
        let key = inline_key(piece);
        let mask = self.mask();
        let mut i = hash as usize & mask;
        loop {
            let e = &self.slots[i];
            if e.piece_len as usize == n && e.key == key {
                let k = e.ids_len as usize;
                if k <= INLINE_IDS {
                    push_up_to_3(out, e.ids, k);
                } else {
                    let s = e.ids[0] as usize;
                    out.extend_from_slice(&self.ids[s..s + k]);
                }
                return true;
            }
            if e.piece_len == 0 {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    /// [`PieceCache::get_into`] through [`PieceCache::get_long`].
    #[inline(always)]
    fn get_long_into(&self, piece: &[u8], hash: u64, out: &mut Vec<u32>) -> bool {
        match self.get_long(piece, hash) {
            Some(ids) => {
                out.extend_from_slice(ids);
                true
            }
            None => false,
        }
    }

    /// Remembers `ids` for `piece` (not already present).
    pub fn insert(&mut self, piece: &[u8], hash: u64, ids: &[u32]) {
        if piece.is_empty() || piece.len() > MAX_PIECE || ids.is_empty() || ids.len() > MAX_PIECE {
            return;
        }
        if self.len >= MAX_ENTRIES
            || self.short_len >= MAX_SHORT
            || self.bytes.len() + piece.len() > MAX_BYTES
        {
            self.clear();
        }
        let n = piece.len();
        let short = is_short(piece);
        if short && self.short_len >= self.short.len() / 2 && self.short.len() < SHORT_SLOTS {
            self.grow_short();
        }
        let packed = if short { pack_ids(ids) } else { None };
        if packed.is_none() && self.len >= self.slots.len() / 2 && self.slots.len() < SLOTS {
            self.grow_long();
        }
        if short {
            let e = Short { key: super::table::pack(piece), ids: packed.unwrap_or(IN_LONG) };
            let mask = self.short.len() - 1;
            let mut i = hash as usize & mask;
            while self.short[i].key != 0 {
                i = (i + 1) & mask;
            }
            self.short[i] = e;
            self.short_len += 1;
            if packed.is_some() {
                return;
            }
        }
        let key = if n <= INLINE_PIECE {
            inline_key(piece)
        } else {
            let at = self.bytes.len() as u64;
            self.bytes.extend_from_slice(piece);
            [at, hash]
        };
        let mut inline = [0u32; INLINE_IDS];
        if ids.len() <= INLINE_IDS {
            inline[..ids.len()].copy_from_slice(ids);
        } else {
            inline[0] = self.ids.len() as u32;
            self.ids.extend_from_slice(ids);
        }
        let e = Entry { key, ids: inline, piece_len: n as u16, ids_len: ids.len() as u16 };
        let mut i = hash as usize & self.mask();
        while self.slots[i].piece_len != 0 {
            i = (i + 1) & self.mask();
        }
        self.slots[i] = e;
        self.len += 1;
    }

    /// Moves the short pieces to a table of twice the slots (the first table: [`FIRST_SLOTS`]).
    #[inline(never)]
    fn grow_short(&mut self) {
        let size = (self.short.len() * 2).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.short, super::table::huge_vec(size, SHORT_FREE));
        let mask = size - 1;
        for e in old.into_iter().filter(|e| e.key != 0) {
            // A short piece's length is where its last non-zero byte is.
            let len = (71 - e.key.leading_zeros() as usize) / 8;
            let mut i = super::table::hash_short(e.key, len) as usize & mask;
            while self.short[i].key != 0 {
                i = (i + 1) & mask;
            }
            self.short[i] = e;
        }
    }

    /// Moves the other pieces to a table of twice the slots (the first table: [`FIRST_SLOTS`]).
    #[inline(never)]
    fn grow_long(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, super::table::huge_vec(size, FREE));
        let mask = size - 1;
        for e in old.into_iter().filter(|e| e.piece_len != 0) {
            let n = e.piece_len as usize;
            let hash = if n <= INLINE_PIECE {
                let mut b = [0u8; INLINE_PIECE];
                b[..8].copy_from_slice(&e.key[0].to_le_bytes());
                b[8..].copy_from_slice(&e.key[1].to_le_bytes());
                super::table::hash_bytes(&b[..n])
            } else {
                e.key[1]
            };
            let mut i = hash as usize & mask;
            while self.slots[i].piece_len != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = e;
        }
    }

    pub fn clear(&mut self) {
        if self.len == 0 && self.short_len == 0 {
            return;
        }
        self.slots.fill(FREE);
        self.short.fill(SHORT_FREE);
        self.bytes.clear();
        self.ids.clear();
        self.len = 0;
        self.short_len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::bpe::table::{hash_bytes, pack};

    /// What the cache holds for `p`, through the encode path's lookup.
    fn get(c: &PieceCache, p: &[u8]) -> Option<Vec<u32>> {
        let short = if p.len() <= 8 { pack(p) } else { 0 };
        let mut out = vec![7u32];
        let hit = c.get_into(p, hash_bytes(p), short, &mut out);
        assert!(hit || out == [7], "a miss appended ids");
        hit.then(|| out[1..].to_vec())
    }

    fn put(c: &mut PieceCache, p: &[u8], ids: &[u32]) {
        c.insert(p, hash_bytes(p), ids);
    }

    #[test]
    fn stores_and_forgets() {
        let mut c = PieceCache::default();
        assert_eq!(get(&c, b"abc"), None);
        put(&mut c, b"abc", &[1, 2]);
        put(&mut c, b"abd", &[3]);
        assert_eq!(get(&c, b"abc"), Some(vec![1, 2]));
        assert_eq!(get(&c, b"abd"), Some(vec![3]));
        assert_eq!(get(&c, b"ab"), None);
        // Pieces on both sides of the short-table and inline limits (8 and 16 bytes), with
        // 1 to 7 ids (both sides of 2 and 3); equal prefixes, other lengths.
        let long: Vec<u8> = (1..41u8).collect();
        let ids_of = |n: usize, k: usize| -> Vec<u32> {
            (0..k as u32).map(|j| j * 1000 + n as u32 + (1 << 20)).collect()
        };
        let lens = [2, 3, 7, 8, 9, 15, 16, 17, 24, 40];
        for (x, n) in lens.into_iter().enumerate() {
            put(&mut c, &long[..n], &ids_of(n, x % 7 + 1));
        }
        for (x, n) in lens.into_iter().enumerate() {
            assert_eq!(get(&c, &long[..n]), Some(ids_of(n, x % 7 + 1)), "{n}");
        }
        for n in [1, 4, 10, 18, 39] {
            assert_eq!(get(&c, &long[..n]), None, "{n}");
        }
        // Short pieces whose packs are equal (trailing zero bytes) are told apart by length.
        put(&mut c, b"z", &[5]);
        put(&mut c, b"z\0", &[6, 7]);
        put(&mut c, b"z\0\0", &[8, 9, 10]);
        put(&mut c, b"z\0\0\0\0\0\0\0", &[11, 12, 13, 14]);
        assert_eq!(get(&c, b"z"), Some(vec![5]));
        assert_eq!(get(&c, b"z\0"), Some(vec![6, 7]));
        assert_eq!(get(&c, b"z\0\0"), Some(vec![8, 9, 10]));
        assert_eq!(get(&c, b"z\0\0\0\0\0\0\0"), Some(vec![11, 12, 13, 14]));
        assert_eq!(get(&c, b"z\0\0\0"), None);
        let mut other = long.clone();
        other[20] ^= 1;
        assert_eq!(get(&c, &other[..24]), None);
        // Past either table's bound the cache starts over, and keeps what came after. (The
        // short pieces end in 'x': a piece ending in a 0 byte goes to the other table.)
        for (limit, width) in [(MAX_SHORT, 5), (MAX_ENTRIES, 12)] {
            for i in 0..(limit as u32 + 10) {
                let mut p = [b'x'; 12];
                p[..4].copy_from_slice(&i.to_le_bytes());
                put(&mut c, &p[..width], &[i]);
            }
            assert!(c.len <= MAX_ENTRIES && c.short_len <= MAX_SHORT);
            let mut p = [b'x'; 12];
            p[..4].copy_from_slice(&(limit as u32 + 5).to_le_bytes());
            assert_eq!(get(&c, &p[..width]), Some(vec![limit as u32 + 5]), "{width}");
            p[..4].copy_from_slice(&3u32.to_le_bytes());
            assert_eq!(get(&c, &p[..width]), None, "{width}");
        }
        c.clear();
        assert_eq!(get(&c, b"abc"), None);
    }

    /// Random pieces (1 to 40 bytes, 0 bytes frequent, at the end too) with 1 to 12 random ids
    /// (ids the short table cannot pack included) against a map.
    #[test]
    fn random_pieces_against_a_map() {
        let mut c = PieceCache::default();
        let mut want = std::collections::HashMap::new();
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..20_000 {
            let n = 1 + next(40) as usize;
            let n = if next(3) == 0 { n.min(8) } else { n };
            let p: Vec<u8> = (0..n).map(|_| if next(4) == 0 { 0 } else { next(4) as u8 }).collect();
            let most = if next(2) == 0 { 3 } else { 12 };
            let k = 1 + next(most) as usize;
            let ids: Vec<u32> = (0..k)
                .map(
                    |_| if next(10) == 0 { SHORT_ID_MASK as u32 + 1 } else { next(SHORT_ID_MASK + 1) as u32 },
                )
                .collect();
            if want.contains_key(&p) {
                continue;
            }
            // A lookup of an absent piece appends nothing, with a full or a nearly full output.
            assert_eq!(get(&c, &p), None);
            put(&mut c, &p, &ids);
            want.insert(p, ids);
        }
        assert!(c.len + c.short_len >= want.len());
        for (p, ids) in &want {
            assert_eq!(get(&c, p).as_ref(), Some(ids), "{p:?}");
            // Appending to an output with no spare capacity.
            let mut out = vec![1u32; 5];
            out.shrink_to_fit();
            let short = if p.len() <= 8 { pack(p) } else { 0 };
            assert!(c.get_into(p, hash_bytes(p), short, &mut out));
            assert_eq!(&out[..5], &[1; 5]);
            assert_eq!(&out[5..], &ids[..]);
        }
    }

    #[test]
    fn ids_pack_and_unpack() {
        for ids in [&[0u32][..], &[5, 0], &[1, 2, 3], &[SHORT_ID_MASK as u32; 3]] {
            let mut out = vec![9];
            push_packed(&mut out, pack_ids(ids).unwrap());
            assert_eq!(&out[1..], ids);
        }
        assert_eq!(pack_ids(&[]), None);
        assert_eq!(pack_ids(&[1, 2, 3, 4]), None);
        assert_eq!(pack_ids(&[1, SHORT_ID_MASK as u32 + 1]), None);
    }
}
