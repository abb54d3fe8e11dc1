//! The two lookups BPE does all the time, as flat open-addressing tables:
//! [`Vocab`] (token bytes → id, id → bytes) and [`PairTable`] ((left id, right id) → the rank
//! of merging them and the merged id).
//!
//! Both are built once at load time and only read afterwards. Linear probing over a power-of-two
//! table at most half full: a miss usually costs one or two probes, which matters because most
//! lookups while merging are misses.

/// A vector of `n` copies of `fill`, backed by 2 MB pages where the OS allows it.
///
/// The big tables are read at random: with 4 KB pages nearly every lookup in an 8 MB table
/// also misses the TLB. On Linux, asking for transparent huge pages before the memory is first
/// touched removes most of those misses; elsewhere this is a plain `vec!`.
pub fn huge_vec<T: Clone>(n: usize, fill: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<T>();
    #[cfg(target_os = "linux")]
    if bytes >= 1 << 21 {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        const PAGE: usize = 4096;
        let start = v.as_mut_ptr() as usize;
        let aligned = (start + PAGE - 1) & !(PAGE - 1);
        let end = (start + bytes) & !(PAGE - 1);
        if end > aligned {
            // SAFETY: the range lies inside this vector's allocation and is page-aligned;
            // madvise only changes how the kernel backs it (failure is harmless).
            unsafe {
                madvise(aligned as *mut std::ffi::c_void, end - aligned, MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
    v.resize(n, fill);
    v
}

const K0: u64 = 0x9E37_79B9_7F4A_7C15;
const K1: u64 = 0xD6E8_FEB8_6659_FD93;

/// What the lookups of a piece need, computed once: its [`hash_bytes`], and for a piece of at
/// most 8 bytes its [`pack`] (0 otherwise), which is both the vocabulary's and the piece
/// cache's key for it.
#[derive(Clone, Copy)]
pub struct PieceKey {
    pub hash: u64,
    pub short: u64,
}

impl PieceKey {
    #[inline(always)]
    pub fn of(piece: &[u8]) -> PieceKey {
        if piece.len() <= 8 {
            let short = pack(piece);
            PieceKey { hash: hash_short(short, piece.len()), short }
        } else {
            PieceKey { hash: hash_bytes(piece), short: 0 }
        }
    }
}

/// Hash of a byte string: 8-byte words folded through a 64x64->128 multiply.
#[inline(always)]
pub fn hash_bytes(b: &[u8]) -> u64 {
    if b.len() <= 8 {
        return hash_short(pack(b), b.len());
    }
    let mut h = K0 ^ (b.len() as u64);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap());
        h = fold(h ^ w, K1);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // `pack` is the zero-padded word, read without a copy.
        h = fold(h ^ pack(rest), K1);
    }
    fold(h, K0)
}

/// [`hash_bytes`] of a string of `len` <= 8 bytes, from its [`pack`].
#[inline(always)]
pub fn hash_short(packed: u64, len: usize) -> u64 {
    fold(fold(K0 ^ len as u64 ^ packed, K1), K0)
}

#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

/// wasm has no 64x64->128 multiply: the u128 product above becomes a call to `__multi3`
/// (9% of o200k's encode time on Russian in V8). One `i64.mul` and a shift instead: bits
/// 32..64 of the product depend on every bit of `a`, and the xor brings them down to the low
/// bits that pick a table slot. Tables are built and read in the same module, so the two
/// targets need not hash alike.
#[cfg(target_arch = "wasm32")]
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let p = a.wrapping_mul(b);
    p ^ (p >> 32)
}

/// `a == b`. On wasm, slice equality calls compiler-builtins' `memcmp`, a byte-by-byte loop
/// behind a call: there the vocabulary index's inline 8-byte-word compare is used instead.
#[inline(always)]
pub fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    #[cfg(target_arch = "wasm32")]
    return crate::models::wordpiece::vocab_index::eq_bytes(a, b);
    #[cfg(not(target_arch = "wasm32"))]
    return a == b;
}

/// A free [`Slot`] (no real slot has all ones in `meta`: lengths fit in 16 bits).
const FREE: u64 = u64::MAX;

/// One entry of the bytes → id table, so that a lookup usually touches one cache line:
/// `meta` = id | len << 32 | (hash >> 48) << 48, and `key` = the token's bytes packed
/// little-endian when it has at most 8 (the whole comparison is `key == packed piece`),
/// else its offset into [`Vocab::bytes`].
#[derive(Clone, Copy, Debug)]
struct Slot {
    meta: u64,
    key: u64,
}

/// A hint to start loading the cache line at `addr` (a no-op off x86-64).
#[inline(always)]
pub fn prefetch_ptr(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is only a hint: it never faults and reads nothing visible, whatever
    // the address (callers pass addresses inside live allocations anyway).
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// The bytes of a piece of at most 8 bytes as one little-endian word, zero-padded.
#[inline(always)]
pub fn pack(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        // Two overlapping 4-byte loads: the overlap holds the same bytes at the same places.
        let lo = u32::from_le_bytes(b[..4].try_into().unwrap()) as u64;
        let hi = u32::from_le_bytes(b[n - 4..].try_into().unwrap()) as u64;
        lo | hi << (8 * (n - 4))
    } else if n > 0 {
        b[0] as u64 | (b[n / 2] as u64) << (8 * (n / 2)) | (b[n - 1] as u64) << (8 * (n - 1))
    } else {
        0
    }
}

/// Ids below this that have at most 7 bytes also go in the small "hot" table.
///
/// Ids are ranks, and ranks follow frequency (BPE learns its most frequent merges first), so
/// the low ids are most of what text is made of: in English, ids below 16384 are 73% of the
/// multi-byte pre-tokens. Their table is 192 KB and stays in the CPU's L2 cache, where the
/// full table (8 MB for o200k) mostly misses.
pub const HOT_IDS: usize = 1 << 14;
const HOT_FREE: u16 = u16::MAX;

/// The hot-table key of a token of at most 7 bytes.
#[inline(always)]
fn hot_key(b: &[u8]) -> u64 {
    pack(b) | (b.len() as u64) << 56
}

/// Token ids to bytes and back. Ids need not be dense: a missing id has no bytes.
#[derive(Clone, Debug, Default)]
pub struct Vocab {
    /// Open addressing over hot ids; probing reads 32 slots per cache line.
    hot_slots: Vec<u16>,
    /// `hot_keys[id]`: [`pack`] of the token's bytes with its length in the top byte (0 when
    /// the token is not hot), so one compare decides.
    hot_keys: Vec<u64>,
    hot_mask: usize,
    /// All token bytes, concatenated in id order.
    bytes: Vec<u8>,
    /// `bytes[starts[id]..starts[id + 1]]` is token `id` (empty: no such id).
    starts: Vec<u32>,
    slots: Vec<Slot>,
    mask: usize,
    len: usize,
}

impl Vocab {
    /// Builds from `(bytes, id)` pairs; `Err` names a duplicate id, duplicate bytes or an
    /// empty token.
    pub fn new(tokens: Vec<(Vec<u8>, u32)>) -> Result<Vocab, String> {
        let max_id = tokens.iter().map(|t| t.1).max().map_or(0, |m| m as usize + 1);
        // The table below has one entry per id up to the largest: refuse an id the pair
        // table could not hold anyway before allocating for it (one line "IQ== 4294967295"
        // would otherwise ask for ~100 GB and abort).
        if max_id > 1 << ID_BITS {
            return Err(format!("id {} is beyond the {} ids supported", max_id - 1, 1u32 << ID_BITS));
        }
        let mut by_id: Vec<Option<Vec<u8>>> = vec![None; max_id];
        for (b, id) in tokens {
            if b.is_empty() || b.len() > u16::MAX as usize {
                return Err(format!("token {id} has {} bytes", b.len()));
            }
            if by_id[id as usize].replace(b).is_some() {
                return Err(format!("id {id} is given twice"));
            }
        }
        let mut v = Vocab::default();
        v.starts.push(0);
        for b in &by_id {
            if let Some(b) = b {
                v.bytes.extend_from_slice(b);
                v.len += 1;
            }
            v.starts.push(v.bytes.len() as u32);
        }
        let cap = (v.len * 2).next_power_of_two().max(16);
        v.slots = huge_vec(cap, Slot { meta: FREE, key: 0 });
        v.mask = cap - 1;
        // Empty until the full table is built (lookups meanwhile just miss it).
        v.hot_slots = vec![HOT_FREE; HOT_IDS * 2];
        v.hot_mask = HOT_IDS * 2 - 1;
        for (id, b) in by_id.iter().enumerate() {
            let Some(b) = b else { continue };
            if let Some(other) = v.get_id(b) {
                return Err(format!("ids {other} and {id} have the same bytes {b:?}"));
            }
            let h = hash_bytes(b);
            let key = if b.len() <= 8 { pack(b) } else { v.starts[id] as u64 };
            let meta = id as u64 | (b.len() as u64) << 32 | (h >> 48) << 48;
            let mut i = h as usize & v.mask;
            while v.slots[i].meta != FREE {
                i = (i + 1) & v.mask;
            }
            v.slots[i] = Slot { meta, key };
        }
        v.hot_keys = vec![0; HOT_IDS.min(by_id.len())];
        for (id, b) in by_id.iter().enumerate().take(HOT_IDS) {
            let Some(b) = b else { continue };
            if b.len() > 7 {
                continue;
            }
            v.hot_keys[id] = hot_key(b);
            let mut i = hash_bytes(b) as usize & v.hot_mask;
            while v.hot_slots[i] != HOT_FREE {
                i = (i + 1) & v.hot_mask;
            }
            v.hot_slots[i] = id as u16;
        }
        Ok(v)
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// One more than the largest id.
    pub fn id_bound(&self) -> u32 {
        (self.starts.len() - 1) as u32
    }

    /// The bytes of token `id`, if there is one.
    #[inline]
    pub fn get_bytes(&self, id: u32) -> Option<&[u8]> {
        let id = id as usize;
        let (a, b) = (*self.starts.get(id)? as usize, *self.starts.get(id + 1)? as usize);
        (a < b).then(|| &self.bytes[a..b])
    }

    /// The id of the token with exactly these bytes.
    #[inline]
    pub fn get_id(&self, bytes: &[u8]) -> Option<u32> {
        self.get_id_hashed(bytes, hash_bytes(bytes))
    }

    /// [`Vocab::get_id`] with `hash_bytes(bytes)` already computed.
    #[inline(always)]
    pub fn get_id_hashed(&self, bytes: &[u8], hash: u64) -> Option<u32> {
        if bytes.len() <= 8 {
            self.get_short(pack(bytes), bytes.len(), hash)
        } else {
            self.get_long(bytes, hash)
        }
    }

    /// Asks the CPU to start loading the slots that a lookup of a piece of `len` bytes with
    /// this hash starts at (the hot table's when the piece could be hot, and the full
    /// table's, where a piece that misses the hot table goes next), so that the lookup a few
    /// pieces later finds them in cache.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64, len: usize) {
        if len <= 7 {
            prefetch_ptr(&self.hot_slots[hash as usize & self.hot_mask] as *const u16 as *const u8);
        }
        prefetch_ptr(&self.slots[hash as usize & self.mask] as *const Slot as *const u8);
    }

    /// Lookup of a piece of at most 8 bytes, given [`pack`] of it and [`hash_bytes`] of it.
    #[inline(always)]
    pub fn get_short(&self, packed: u64, len: usize, hash: u64) -> Option<u32> {
        if len <= 7 {
            let key = packed | (len as u64) << 56;
            let mut i = hash as usize & self.hot_mask;
            loop {
                let id = self.hot_slots[i];
                if id == HOT_FREE {
                    break;
                }
                if self.hot_keys[id as usize] == key {
                    return Some(id as u32);
                }
                i = (i + 1) & self.hot_mask;
            }
        }
        self.get_full(packed, len, hash)
    }

    /// [`Vocab::get_id_hashed`] without the hot table, for a piece no cache has seen (a
    /// word-table miss): its hot-table lines are as cold as the full table's slot then, and
    /// the full table answers in one probe where the hot table takes two dependent loads and,
    /// for other tokens, the full table after them.
    #[inline(always)]
    pub fn get_cold(&self, bytes: &[u8], packed: u64, hash: u64) -> Option<u32> {
        if bytes.len() <= 8 {
            self.get_full(packed, bytes.len(), hash)
        } else {
            self.get_long(bytes, hash)
        }
    }

    /// Starts loading the full table's slot where a lookup of this hash begins.
    #[inline(always)]
    pub fn prefetch_full(&self, hash: u64) {
        prefetch_ptr(&self.slots[hash as usize & self.mask] as *const Slot as *const u8);
    }

    #[inline(always)]
    fn get_full(&self, packed: u64, len: usize, hash: u64) -> Option<u32> {
        let want = (len as u64) << 32 | (hash >> 48) << 48;
        let mut i = hash as usize & self.mask;
        loop {
            let s = self.slots[i];
            if s.meta & !0xFFFF_FFFF == want && s.key == packed {
                return Some(s.meta as u32);
            }
            if s.meta == FREE {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline]
    fn get_long(&self, bytes: &[u8], hash: u64) -> Option<u32> {
        let want = (bytes.len() as u64) << 32 | (hash >> 48) << 48;
        let mut i = hash as usize & self.mask;
        loop {
            let s = self.slots[i];
            if s.meta & !0xFFFF_FFFF == want {
                let start = s.key as usize;
                if bytes_eq(&self.bytes[start..start + bytes.len()], bytes) {
                    return Some(s.meta as u32);
                }
            }
            if s.meta == FREE {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// `(id, bytes)` for every token, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        (0..self.id_bound()).filter_map(move |id| self.get_bytes(id).map(|b| (id, b)))
    }
}

/// What merging a pair gives: packed `rank << 32 | merged id`, so that comparing two values
/// compares ranks first. [`NO_MERGE`] (all ones) sorts after every real merge.
pub type Merge = u64;
pub const NO_MERGE: Merge = u64::MAX;

#[inline(always)]
pub fn merge_rank(m: Merge) -> u32 {
    (m >> 32) as u32
}

#[inline(always)]
pub fn merge_id(m: Merge) -> u32 {
    m as u32
}

/// Bits per field of a packed pair-table slot: ids and ranks must be below `1 << ID_BITS`.
pub const ID_BITS: u32 = 21;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
const FREE_PAIR: u64 = u64::MAX;
/// Ids below this have their pairs in [`PairTable`]'s direct table too: the bytes' (ids 0-255
/// in tiktoken ranks and byte-level vocabularies) and, natively, the next 256 ids, the most
/// frequent merged tokens (ranks follow frequency), which are in many of the other pairs a
/// merge looks up (o200k, English seen once: 73% of the lookups, 47% with bytes alone). A
/// 1 MB table then, 256 KB in wasm.
#[cfg(not(target_arch = "wasm32"))]
const SMALL_IDS: u32 = 512;
#[cfg(target_arch = "wasm32")]
const SMALL_IDS: u32 = 256;
/// [`PairTable::rank`] of a pair with no merge.
pub const NO_RANK: u32 = u32::MAX;

/// `(left, right)` → [`Merge`], as one `u64` per slot: `left << 42 | right << 21 | rank`, so
/// that a lookup reads 8 bytes and the table is as small as it can be while staying at most
/// half full (o200k: 200k pairs in 4 MB). The merged id is the rank itself for tiktoken
/// ranks and `ids_by_rank[rank]` for merge lists.
#[derive(Clone, Debug, Default)]
pub struct PairTable {
    slots: Vec<u64>,
    /// The rank of each pair of ids below [`SMALL_IDS`], `left * SMALL_IDS + right` (NO_RANK: none),
    /// read without hashing or probing: the pairs every merge starts from are the bytes'
    /// (ids 0-255 in tiktoken ranks and byte-level vocabularies), and on text that misses the
    /// caches they are most of the probes.
    small: Vec<u32>,
    /// The merged id of each rank, when ranks are not ids.
    ids_by_rank: Option<Vec<u32>>,
    /// One bit per hash value of `filter_shift`'s width, set for the pairs in `slots`: most
    /// pairs looked up while merging have no merge, and a clear bit says so from a table of
    /// at most 256 KB (o200k: 9% of absent pairs pass) where the 4 MB of slots mostly miss
    /// the CPU caches on text seen once.
    filter: Vec<u64>,
    filter_shift: u32,
    shift: u32,
    len: usize,
    /// One more than the largest rank inserted.
    rank_bound: u32,
}

impl PairTable {
    /// A table for `entries` `((left, right), rank, merged)`. When a pair is listed twice, the
    /// later entry replaces the earlier one, as in `tokenizers` (which collects its merges
    /// into a map). Entries with the same rank must have the same merged id (true of both
    /// formats: a rank is one merge, or one token). Ids and ranks must be below `1 << ID_BITS`.
    pub fn new(entries: &[((u32, u32), u32, u32)]) -> PairTable {
        let identity = entries.iter().all(|e| e.1 == e.2);
        let mut t = PairTable::with_capacity(entries.len());
        if !identity {
            let mut map = vec![u32::MAX; entries.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0)];
            for &(_, rank, id) in entries {
                map[rank as usize] = id;
            }
            t.ids_by_rank = Some(map);
        }
        for &(pair, rank, _) in entries {
            t.insert(pair, rank);
        }
        t
    }

    /// An empty table for up to `n` pairs whose merged id is their rank (tiktoken ranks).
    pub fn with_capacity(n: usize) -> PairTable {
        let cap = (n * 2).next_power_of_two().max(16);
        // Ten bits a pair, 2^21 at most.
        let filter_bits = (n * 10).next_power_of_two().clamp(64, 1 << 21);
        PairTable {
            slots: huge_vec(cap, FREE_PAIR),
            small: vec![NO_RANK; (SMALL_IDS * SMALL_IDS) as usize],
            ids_by_rank: None,
            filter: vec![0; filter_bits / 64],
            filter_shift: 64 - filter_bits.trailing_zeros(),
            shift: 64 - cap.trailing_zeros(),
            len: 0,
            rank_bound: 0,
        }
    }

    /// Adds (or replaces) a pair. The table must have room (see [`PairTable::with_capacity`]).
    pub fn insert(&mut self, (a, b): (u32, u32), rank: u32) {
        assert!(a as u64 <= ID_MASK && b as u64 <= ID_MASK && rank as u64 <= ID_MASK);
        assert!(self.len * 2 < self.slots.len(), "pair table is full");
        let key = (a as u64) << ID_BITS | b as u64;
        let slot = key << ID_BITS | rank as u64;
        self.rank_bound = self.rank_bound.max(rank + 1);
        if a < SMALL_IDS && b < SMALL_IDS {
            self.small[(a * SMALL_IDS + b) as usize] = rank;
        }
        let f = self.filter_bit(key);
        self.filter[f >> 6] |= 1 << (f & 63);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            if self.slots[i] == FREE_PAIR {
                self.slots[i] = slot;
                self.len += 1;
                return;
            }
            if self.slots[i] >> ID_BITS == key {
                self.slots[i] = slot;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(always)]
    fn filter_bit(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.filter_shift) as usize
    }

    /// Whether the pair `key` may be in the table (false: it is not).
    #[inline(always)]
    fn may_have(&self, key: u64) -> bool {
        let f = self.filter_bit(key);
        self.filter[f >> 6] >> (f & 63) & 1 != 0
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> usize {
        // Fibonacci hashing: the top bits of the product are well mixed.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The merge of `left` followed by `right`, or [`NO_MERGE`].
    #[inline(always)]
    pub fn get(&self, left: u32, right: u32) -> Merge {
        match self.rank(left, right) {
            NO_RANK => NO_MERGE,
            rank => self.merge_of(rank),
        }
    }

    /// The rank of merging `left` then `right`, or [`NO_RANK`].
    #[inline(always)]
    pub fn rank(&self, left: u32, right: u32) -> u32 {
        if left < SMALL_IDS && right < SMALL_IDS {
            return self.small[(left * SMALL_IDS + right) as usize];
        }
        let key = (left as u64) << ID_BITS | right as u64;
        if !self.may_have(key) {
            return NO_RANK;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let s = self.slots[i];
            if s >> ID_BITS == key {
                return (s & ID_MASK) as u32;
            }
            if s == FREE_PAIR {
                return NO_RANK;
            }
            i = (i + 1) & mask;
        }
    }

    /// Starts loading what [`PairTable::rank`] of this pair reads, so that two lookups known
    /// at once overlap their cache misses.
    #[inline(always)]
    pub fn prefetch(&self, left: u32, right: u32) {
        if left < SMALL_IDS && right < SMALL_IDS {
            return;
        }
        let key = (left as u64) << ID_BITS | right as u64;
        let f = self.filter_bit(key);
        prefetch_ptr(&self.filter[f >> 6] as *const u64 as *const u8);
        prefetch_ptr(&self.slots[self.slot(key)] as *const u64 as *const u8);
    }

    /// The id a merge of this rank makes.
    #[inline(always)]
    pub fn id_of_rank(&self, rank: u32) -> u32 {
        match &self.ids_by_rank {
            None => rank,
            Some(map) => map[rank as usize],
        }
    }

    #[inline(always)]
    fn merge_of(&self, rank: u32) -> Merge {
        (rank as u64) << 32 | self.id_of_rank(rank) as u64
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// One more than the largest rank (a replaced pair's old rank may still count).
    pub fn rank_bound(&self) -> u32 {
        self.rank_bound
    }

    /// Every pair `(left, right)` with its rank, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = ((u32, u32), u32)> + '_ {
        self.slots.iter().filter(|&&s| s != FREE_PAIR).map(|&s| {
            let (a, b) = ((s >> (2 * ID_BITS)) as u32, ((s >> ID_BITS) & ID_MASK) as u32);
            ((a, b), (s & ID_MASK) as u32)
        })
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocab_round_trip() {
        let v = Vocab::new(vec![(b"a".to_vec(), 0), (b"bc".to_vec(), 5), (b"abc".to_vec(), 2)]).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v.id_bound(), 6);
        assert_eq!(v.get_id(b"bc"), Some(5));
        assert_eq!(v.get_id(b"b"), None);
        assert_eq!(v.get_bytes(2), Some(&b"abc"[..]));
        assert_eq!(v.get_bytes(1), None);
        assert_eq!(v.get_bytes(99), None);
        assert!(Vocab::new(vec![(b"a".to_vec(), 0), (b"a".to_vec(), 1)]).is_err());
        assert!(Vocab::new(vec![(b"a".to_vec(), 0), (b"b".to_vec(), 0)]).is_err());
        // A huge id (as the hostile-input tests send) is refused, not allocated for.
        assert!(Vocab::new(vec![(b"a".to_vec(), u32::MAX)]).unwrap_err().contains("beyond"));
        assert!(Vocab::new(vec![(b"a".to_vec(), 1 << ID_BITS)]).is_err());
    }

    #[test]
    fn pack_is_canonical() {
        for n in 0..=8 {
            let b: Vec<u8> = (1..=n as u8).collect();
            let mut want = [0u8; 8];
            want[..n].copy_from_slice(&b);
            assert_eq!(pack(&b), u64::from_le_bytes(want), "{n}");
        }
    }

    #[test]
    fn long_and_short_tokens() {
        let toks: Vec<(Vec<u8>, u32)> = (0..2000u32)
            .map(|i| (format!("tok{i}{}", "x".repeat(i as usize % 20)).into_bytes(), i))
            .collect();
        let v = Vocab::new(toks.clone()).unwrap();
        let cold = |b: &[u8]| v.get_cold(b, if b.len() <= 8 { pack(b) } else { 0 }, hash_bytes(b));
        for (b, id) in &toks {
            assert_eq!(v.get_id(b), Some(*id));
            assert_eq!(cold(b), Some(*id));
            let mut c = b.clone();
            c.push(b'!');
            assert_eq!(v.get_id(&c), None);
            assert_eq!(cold(&c), None);
            assert_eq!(cold(&b[..b.len() - 1]), v.get_id(&b[..b.len() - 1]));
        }
    }

    #[test]
    fn pair_table() {
        let t = PairTable::new(&[((1, 2), 10, 7), ((2, 1), 4, 8), ((1, 2), 3, 9)]);
        assert_eq!(t.len(), 2);
        assert_eq!(merge_rank(t.get(1, 2)), 3); // the later listing
        assert_eq!(merge_id(t.get(1, 2)), 9);
        assert_eq!(merge_id(t.get(2, 1)), 8);
        assert_eq!(t.get(1, 1), NO_MERGE);
    }

    /// Pairs of small ids (read from the direct table) and of larger ones (probed) give what
    /// was inserted, replacements included, in tables whose ranks are ids and whose are not.
    #[test]
    fn pair_table_small_and_large_ids() {
        let mut x: u64 = 7;
        let mut rnd = |k: u32| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % k as u64) as u32
        };
        let mut entries = Vec::new();
        for i in 0..3000u32 {
            let (a, b) = if i % 2 == 0 { (rnd(256), rnd(256)) } else { (rnd(600), rnd(600)) };
            entries.push(((a, b), i, 1000 + i));
        }
        let mut want = std::collections::HashMap::new();
        for &(pair, rank, id) in &entries {
            want.insert(pair, (rank, id));
        }
        let t = PairTable::new(&entries);
        let ranks_only: Vec<_> = want.iter().map(|(&p, &(r, _))| (p, r, r)).collect();
        let r = PairTable::new(&ranks_only);
        assert_eq!(t.len(), want.len());
        for a in 0..600 {
            for b in 0..600 {
                match want.get(&(a, b)) {
                    Some(&(rank, id)) => {
                        assert_eq!((merge_rank(t.get(a, b)), merge_id(t.get(a, b))), (rank, id));
                        assert_eq!((merge_rank(r.get(a, b)), merge_id(r.get(a, b))), (rank, rank));
                    }
                    None => {
                        assert_eq!(t.get(a, b), NO_MERGE, "({a}, {b})");
                        assert_eq!(r.get(a, b), NO_MERGE, "({a}, {b})");
                    }
                }
            }
        }
        assert_eq!(t.rank_bound(), 3000);
    }
}
