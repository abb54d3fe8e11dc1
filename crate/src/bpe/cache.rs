//! A cache of pieces: piece bytes → their ids.
//!
//! Merging is the expensive step (each pair lookup may miss the CPU caches: the pair table of
//! o200k is 16 MB), and real text repeats its words, so a piece that had to be merged once is
//! remembered. Pieces that are tokens by themselves are remembered too (as their one id): the
//! cache is asked first, and a hit is one probe of one 32-byte entry, where the vocabulary
//! lookup it replaces takes two dependent loads (hot table, then the id's key) or a probe of
//! the 8 MB full table.
//!
//! One cache per thread and tokenizer (see `BpeTokenizer::with_scratch`), so there is no
//! locking; it is cleared when it grows past its bounds, which keeps memory flat on text
//! that never repeats.

/// Slots of the open-addressing table (32 bytes each: 4 MB).
const SLOTS: usize = 1 << 17;
/// Entries before the cache starts over: three quarters of the slots. At half (65,536) a
/// corpus with more distinct pieces (Chinese: 66k in 4.6 MB) started over again and again and
/// merged most of its pieces anew each pass (o200k zh: 122M instructions per MB warm instead
/// of ~45M); linear probing at this load still finds most pieces in their first cache line.
const MAX_ENTRIES: usize = SLOTS / 4 * 3;
/// Bytes of pieces stored before the cache starts over.
const MAX_BYTES: usize = 1 << 22;
/// Pieces of at most this many bytes are stored in their entry, and compared as two words.
const INLINE_PIECE: usize = 16;
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

#[derive(Default)]
pub struct PieceCache {
    /// Open addressing, [`SLOTS`] slots.
    slots: Vec<Entry>,
    /// Pieces longer than [`INLINE_PIECE`] bytes.
    bytes: Vec<u8>,
    /// Results longer than [`INLINE_IDS`] ids.
    ids: Vec<u32>,
    len: usize,
}

impl PieceCache {
    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Starts loading the slot a lookup with this hash begins at (see [`super::table::prefetch_ptr`]).
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        if let Some(e) = self.slots.get(hash as usize & self.slots.len().wrapping_sub(1)) {
            super::table::prefetch_ptr(e as *const Entry as *const u8);
        }
    }

    /// The ids stored for `piece` (whose [`super::table::hash_bytes`] is `hash`, and whose
    /// [`super::table::pack`] is `short` when it has at most 8 bytes).
    #[inline]
    pub fn get(&self, piece: &[u8], hash: u64, short: u64) -> Option<&[u32]> {
        if self.len == 0 || piece.is_empty() {
            return None;
        }
        let n = piece.len();
        let key = if n <= 8 {
            [short, 0]
        } else if n <= INLINE_PIECE {
            inline_key(piece)
        } else {
            [0, hash]
        };
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
    /// is not stored ([`PieceCache::get`]'s arguments).
    #[inline(always)]
    pub fn get_into(&self, piece: &[u8], hash: u64, short: u64, out: &mut Vec<u32>) -> bool {
        let n = piece.len();
        if n > INLINE_PIECE || self.slots.is_empty() {
            return match self.get(piece, hash, short) {
                Some(ids) => {
                    out.extend_from_slice(ids);
                    true
                }
                None => false,
            };
        }
        let key = if n <= 8 { [short, 0] } else { inline_key(piece) };
        let mask = self.mask();
        let mut i = hash as usize & mask;
        loop {
            let e = &self.slots[i];
            if e.piece_len as usize == n && e.key == key {
                let k = e.ids_len as usize;
                if k == 1 {
                    out.push(e.ids[0]);
                } else if k <= INLINE_IDS {
                    // Pushes, not `extend_from_slice`: a copy of a variable 2 or 3 ids is a
                    // call to memcpy. (Written for INLINE_IDS = 3, which the assertion
                    // below the constant holds.)
                    out.push(e.ids[0]);
                    out.push(e.ids[1]);
                    if k == 3 {
                        out.push(e.ids[2]);
                    }
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

    /// Remembers `ids` for `piece` (not already present).
    pub fn insert(&mut self, piece: &[u8], hash: u64, ids: &[u32]) {
        if piece.is_empty() || piece.len() > 1024 || ids.is_empty() || ids.len() > 1024 {
            return;
        }
        if self.slots.is_empty() {
            self.slots = super::table::huge_vec(SLOTS, FREE);
        }
        if self.len >= MAX_ENTRIES || self.bytes.len() + piece.len() > MAX_BYTES {
            self.clear();
        }
        let key = if piece.len() <= INLINE_PIECE {
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
        let e = Entry { key, ids: inline, piece_len: piece.len() as u16, ids_len: ids.len() as u16 };
        let mut i = hash as usize & self.mask();
        while self.slots[i].piece_len != 0 {
            i = (i + 1) & self.mask();
        }
        self.slots[i] = e;
        self.len += 1;
    }

    pub fn clear(&mut self) {
        if self.len == 0 {
            return;
        }
        self.slots.fill(FREE);
        self.bytes.clear();
        self.ids.clear();
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::table::{hash_bytes, pack};

    /// The short key of a piece (its pack when it has at most 8 bytes).
    fn sk(p: &[u8]) -> u64 {
        if p.len() <= 8 {
            pack(p)
        } else {
            0
        }
    }

    #[test]
    fn stores_and_forgets() {
        let mut c = PieceCache::default();
        assert_eq!(c.get(b"abc", hash_bytes(b"abc"), sk(b"abc")), None);
        c.insert(b"abc", hash_bytes(b"abc"), &[1, 2]);
        c.insert(b"abd", hash_bytes(b"abd"), &[3]);
        assert_eq!(c.get(b"abc", hash_bytes(b"abc"), sk(b"abc")), Some(&[1, 2][..]));
        assert_eq!(c.get(b"abd", hash_bytes(b"abd"), sk(b"abd")), Some(&[3][..]));
        assert_eq!(c.get(b"ab", hash_bytes(b"ab"), sk(b"ab")), None);
        // Pieces and results on both sides of the inline limits; equal prefixes, other lengths.
        let long: Vec<u8> = (0..40u8).collect();
        for n in [9, 15, 16, 17, 24, 40] {
            let ids: Vec<u32> = (0..n as u32 % 7 + 1).map(|k| k * 1000 + n as u32).collect();
            c.insert(&long[..n], hash_bytes(&long[..n]), &ids);
        }
        for n in [9, 15, 16, 17, 24, 40] {
            let ids: Vec<u32> = (0..n as u32 % 7 + 1).map(|k| k * 1000 + n as u32).collect();
            assert_eq!(c.get(&long[..n], hash_bytes(&long[..n]), sk(&long[..n])), Some(&ids[..]), "{n}");
        }
        for n in [8, 10, 18, 39] {
            assert_eq!(c.get(&long[..n], hash_bytes(&long[..n]), sk(&long[..n])), None, "{n}");
        }
        // get_into (the encode path) answers as get does, on hits and misses of every length.
        for n in [2, 3, 8, 9, 10, 15, 16, 17, 18, 24, 39, 40] {
            let p = &long[..n];
            let (h, s) = (hash_bytes(p), sk(p));
            let mut out = vec![7u32];
            let hit = c.get_into(p, h, s, &mut out);
            let want = c.get(p, h, s);
            assert_eq!(hit, want.is_some(), "{n}");
            assert_eq!(&out[1..], want.unwrap_or(&[]), "{n}");
        }
        let mut other = long.clone();
        other[20] ^= 1;
        assert_eq!(c.get(&other[..24], hash_bytes(&long[..24]), sk(&other[..24])), None);
        for i in 0..(MAX_ENTRIES as u32 + 10) {
            let p = i.to_le_bytes();
            c.insert(&p, hash_bytes(&p), &[i]);
        }
        assert!(c.len <= MAX_ENTRIES);
        let p = (MAX_ENTRIES as u32 + 5).to_le_bytes();
        assert_eq!(c.get(&p, hash_bytes(&p), sk(&p)), Some(&[MAX_ENTRIES as u32 + 5][..]));
    }
}
