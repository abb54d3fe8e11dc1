//! A cache of merged pieces: piece bytes → the ids merging gave.
//!
//! Merging is the expensive step (each pair lookup may miss the CPU caches: the pair table of
//! o200k is 16 MB), and real text repeats its words, so a piece that had to be merged once is
//! remembered. Pieces that are tokens by themselves never get here: one vocabulary probe
//! already answers them.
//!
//! One cache per thread and tokenizer (see `BpeTokenizer::with_scratch`), so there is no
//! locking; it is cleared when it grows past its bounds, which keeps memory flat on text
//! that never repeats.

/// Entries before the cache starts over.
const MAX_ENTRIES: usize = 1 << 16;
/// Bytes of pieces stored before the cache starts over.
const MAX_BYTES: usize = 1 << 22;

/// 16 bytes, four to a cache line.
#[derive(Clone, Copy)]
struct Entry {
    /// The top half of the piece's hash (the bottom half picked the slot).
    tag: u32,
    piece: u32,
    ids: u32,
    piece_len: u16,
    ids_len: u16,
}

const FREE: Entry = Entry { tag: 0, piece: 0, ids: 0, piece_len: 0, ids_len: 0 };

#[derive(Default)]
pub struct PieceCache {
    /// Open addressing, twice `MAX_ENTRIES` slots; `piece_len == 0` marks a free slot.
    slots: Vec<Entry>,
    bytes: Vec<u8>,
    ids: Vec<u32>,
    len: usize,
}

impl PieceCache {
    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The ids stored for `piece` (whose [`super::table::hash_bytes`] is `hash`).
    #[inline]
    pub fn get(&self, piece: &[u8], hash: u64) -> Option<&[u32]> {
        if self.len == 0 {
            return None;
        }
        let mut i = hash as usize & self.mask();
        loop {
            let e = &self.slots[i];
            if e.piece_len == 0 {
                return None;
            }
            if e.tag == (hash >> 32) as u32 && e.piece_len as usize == piece.len() {
                let p = e.piece as usize;
                if &self.bytes[p..p + piece.len()] == piece {
                    let s = e.ids as usize;
                    return Some(&self.ids[s..s + e.ids_len as usize]);
                }
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Remembers `ids` for `piece` (not already present).
    pub fn insert(&mut self, piece: &[u8], hash: u64, ids: &[u32]) {
        if piece.is_empty() || piece.len() > 1024 || ids.len() > 1024 {
            return;
        }
        if self.slots.is_empty() {
            self.slots = super::table::huge_vec(MAX_ENTRIES * 2, FREE);
        }
        if self.len >= MAX_ENTRIES || self.bytes.len() + piece.len() > MAX_BYTES {
            self.clear();
        }
        let e = Entry {
            tag: (hash >> 32) as u32,
            piece: self.bytes.len() as u32,
            ids: self.ids.len() as u32,
            piece_len: piece.len() as u16,
            ids_len: ids.len() as u16,
        };
        self.bytes.extend_from_slice(piece);
        self.ids.extend_from_slice(ids);
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
    use crate::bpe::table::hash_bytes;

    #[test]
    fn stores_and_forgets() {
        let mut c = PieceCache::default();
        assert_eq!(c.get(b"abc", hash_bytes(b"abc")), None);
        c.insert(b"abc", hash_bytes(b"abc"), &[1, 2]);
        c.insert(b"abd", hash_bytes(b"abd"), &[3]);
        assert_eq!(c.get(b"abc", hash_bytes(b"abc")), Some(&[1, 2][..]));
        assert_eq!(c.get(b"abd", hash_bytes(b"abd")), Some(&[3][..]));
        assert_eq!(c.get(b"ab", hash_bytes(b"ab")), None);
        for i in 0..(MAX_ENTRIES as u32 + 10) {
            let p = i.to_le_bytes();
            c.insert(&p, hash_bytes(&p), &[i]);
        }
        assert!(c.len <= MAX_ENTRIES);
        let p = (MAX_ENTRIES as u32 + 5).to_le_bytes();
        assert_eq!(c.get(&p, hash_bytes(&p)), Some(&[MAX_ENTRIES as u32 + 5][..]));
    }
}
