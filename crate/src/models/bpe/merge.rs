//! Byte-pair merging: turn a pre-token's bytes into token ids by repeatedly merging the
//! adjacent pair with the lowest rank, the leftmost one when ranks tie.
//!
//! That rule is the whole of BPE encoding, for tiktoken rank files and `tokenizers` merge lists
//! alike: both references pick the lowest (rank, position) pair each step. They differ only in
//! where a pair's rank comes from, which [`PairTable`] hides.
//!
//! Five implementations of the same rule:
//! - [`merge_small`] for short pieces (almost all of them): one key per pair, its rank and
//!   position in one `u32`, so the least key is the leftmost pair of least rank; a scan for
//!   the minimum (which vectorizes), merged parts unlinked rather than shifted out, all on the
//!   stack. Quadratic in the piece length, with tiny constants.
//! - [`merge_scan`], the same on vectors of packed merges (the windows of [`merge_chunked`]
//!   use its counted form).
//! - [`merge_chunked`] for long pieces (used by [`merge`]): windows of [`CHUNK`] parts merged
//!   by the scan, joined where merging the two tokens at the seam alone keeps them apart
//!   (which proves the whole piece's merge keeps them apart too); linear, and a run of equal
//!   windows ('a' x 100,000) is merged once.
//! - [`merge_layers`] (the fallback of [`merge_chunked`]): all pairs of the lowest rank merged
//!   in one left-to-right pass, rank after rank; linear on runs like 'a' x 100,000, whose
//!   merges use a handful of ranks.
//! - [`merge_heap`], the general O(n log n) one (the fallback of [`merge_layers`]): a min-heap
//!   of (rank, position) keys over a linked list of parts. Each merge pops one key and pushes
//!   at most two, so a piece of n bytes costs O(n log n) however its merges interleave
//!   (100,000 identical bytes included). A popped key
//!   is stale when its left part was merged away or its pair changed since it was pushed;
//!   checking the pair's current rank detects both, so nothing is ever deleted from the heap.
//!
//! The heap order equals the scan order: the heap key is (rank, index of the left part's
//! first byte), and first-byte indices increase along the parts, so "leftmost" agrees.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::table::{merge_id, merge_rank, Merge, PairTable, ID_BITS, NO_MERGE};
use crate::cost;

/// Pieces with at least this many parts go to [`merge_chunked`].
pub const HEAP_THRESHOLD: usize = 128;

/// Buffers reused across pieces.
#[derive(Default)]
pub struct Scratch {
    pub parts: Vec<u32>,
    ranks: Vec<Merge>,
    next: Vec<u32>,
    prev: Vec<u32>,
    heap: Vec<Reverse<u64>>,
    layers: Layers,
    todo: Vec<u32>,
    chunks: Chunks,
}

/// Merges `parts` (token ids, typically one per byte) in place.
#[inline]
pub fn merge(pairs: &PairTable, parts: &mut Vec<u32>, s: &mut Scratch) {
    if parts.len() < HEAP_THRESHOLD {
        merge_small(pairs, parts);
    } else {
        merge_chunked(pairs, parts, s);
    }
}

/// Bits of a [`merge_small`] key that hold the pair's position.
const POS_BITS: u32 = 7;
const POS_MASK: u32 = (1 << POS_BITS) - 1;
/// Keys from here up are pairs with no merge (`NO_RANK << POS_BITS | i`) or gone.
const NO_KEY: u32 = 1 << (ID_BITS + POS_BITS);
const _: () = assert!(HEAP_THRESHOLD <= 1 << POS_BITS && ID_BITS + POS_BITS < 32);
/// Parts of the pieces [`merge_small`] merges in its smaller arrays (most pre-tokens of text).
const SMALL_PARTS: usize = 16;

/// The merge of a piece of fewer than [`HEAP_THRESHOLD`] parts; see the module docs.
#[inline]
pub fn merge_small(pairs: &PairTable, parts: &mut Vec<u32>) {
    if parts.len() <= SMALL_PARTS {
        merge_fixed::<SMALL_PARTS>(pairs, parts);
    } else {
        merge_fixed::<HEAP_THRESHOLD>(pairs, parts);
    }
}

/// [`merge_small`] in arrays of `N` (at least the number of parts, at most
/// `1 << POS_BITS`): `key[i]` is `rank << POS_BITS | i` for the pair of part `i` and the part
/// after it (`next[i]`), at least [`NO_KEY`] when they have no merge or `i` is gone.
#[inline(always)]
fn merge_fixed<const N: usize>(pairs: &PairTable, parts: &mut Vec<u32>) {
    let n = parts.len();
    if n < 2 {
        return;
    }
    debug_assert!(n <= N && N <= 1 << POS_BITS);
    let mut p = [0u32; N];
    let mut key = [u32::MAX; N];
    let mut next = [0u8; N];
    let mut prev = [0u8; N];
    p[..n].copy_from_slice(parts);
    for i in 0..n {
        next[i] = (i + 1) as u8;
        prev[i] = i.wrapping_sub(1) as u8;
    }
    for i in 0..n - 1 {
        key[i] = pairs.rank(p[i], p[i + 1]) << POS_BITS | i as u32;
    }
    loop {
        cost::add(n);
        let best = key[..n - 1].iter().fold(u32::MAX, |a, &b| a.min(b));
        if best >= NO_KEY {
            break;
        }
        let i = (best & POS_MASK) as usize;
        let j = next[i] as usize;
        let m = pairs.id_of_rank(best >> POS_BITS);
        p[i] = m;
        key[j] = u32::MAX;
        let k = next[j] as usize;
        let h = prev[i] as usize;
        // Both new pairs' lookups at once: on text seen once each may miss the CPU caches.
        if k < n {
            pairs.prefetch(m, p[k]);
        }
        if h < n {
            pairs.prefetch(p[h], m);
        }
        next[i] = k as u8;
        key[i] = if k < n {
            prev[k] = i as u8;
            pairs.rank(m, p[k]) << POS_BITS | i as u32
        } else {
            u32::MAX
        };
        if h < n {
            key[h] = pairs.rank(p[h], m) << POS_BITS | h as u32;
        }
    }
    parts.clear();
    let mut i = 0;
    while i < n {
        parts.push(p[i]);
        i = next[i] as usize;
    }
}

/// The min-scan merge; see the module docs.
pub fn merge_scan(pairs: &PairTable, parts: &mut Vec<u32>, ranks: &mut Vec<Merge>) {
    if parts.len() < 2 {
        return;
    }
    ranks.clear();
    ranks.extend(parts.windows(2).map(|w| pairs.get(w[0], w[1])));
    loop {
        cost::add(ranks.len());
        // Packed merges compare by rank first; equal ranks come from the same merge and thus
        // the same merged id, so strict `<` keeps the leftmost of a tie.
        let mut best = NO_MERGE;
        let mut at = 0;
        for (i, &r) in ranks.iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == NO_MERGE {
            return;
        }
        parts[at] = merge_id(best);
        parts.remove(at + 1);
        ranks.remove(at);
        if at > 0 {
            ranks[at - 1] = pairs.get(parts[at - 1], parts[at]);
        }
        if at < ranks.len() {
            ranks[at] = pairs.get(parts[at], parts[at + 1]);
        }
    }
}

/// [`merge_scan`] on parts that each carry how many of the initial parts they hold (their
/// second field), for [`merge_chunked`].
fn merge_scan_counted(pairs: &PairTable, parts: &mut Vec<(u32, u32)>, ranks: &mut Vec<Merge>) {
    if parts.len() < 2 {
        return;
    }
    ranks.clear();
    ranks.extend(parts.windows(2).map(|w| pairs.get(w[0].0, w[1].0)));
    loop {
        cost::add(ranks.len());
        let mut best = NO_MERGE;
        let mut at = 0;
        for (i, &r) in ranks.iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == NO_MERGE {
            return;
        }
        parts[at] = (merge_id(best), parts[at].1 + parts[at + 1].1);
        parts.remove(at + 1);
        ranks.remove(at);
        if at > 0 {
            ranks[at - 1] = pairs.get(parts[at - 1].0, parts[at].0);
        }
        if at < ranks.len() {
            ranks[at] = pairs.get(parts[at].0, parts[at + 1].0);
        }
    }
}

/// Initial parts per window of [`merge_chunked`]: small enough for [`merge_scan`]'s quadratic
/// scan to stay cheap, large enough that the seam checks are a small share.
pub const CHUNK: usize = 32;
/// Tokens [`merge_chunked`] may take back in a piece before it merges the piece whole: windows
/// are for runs, whose seams hold (a run of spaces in o200k, whose tokens of up to 80-odd
/// spaces merge again across every seam, goes to the rank layers after these).
const MAX_BACKUPS: usize = 8;

/// Buffers of [`merge_chunked`].
#[derive(Default)]
struct Chunks {
    /// The piece's initial parts.
    input: Vec<u32>,
    /// Initial parts per committed token.
    counts: Vec<u32>,
    /// The window being merged: (token, initial parts it holds).
    win: Vec<(u32, u32)>,
    /// The last window merged (its initial parts) and its result: a run of equal windows
    /// ('a' x 100,000) is merged once.
    last_in: Vec<u32>,
    last_win: Vec<(u32, u32)>,
    /// The initial parts of the last seam checked (its two tokens' parts), how many of them
    /// are the left token's, and whether the two tokens stay apart (keyed by parts, not ids:
    /// the parts an id is made of need not be the same everywhere when the initial parts are
    /// not all single bytes).
    last_seam_in: Vec<u32>,
    last_seam_left: u32,
    last_seam_ok: bool,
    seam: Vec<(u32, u32)>,
}

/// The merge of a long piece a window at a time, with the same result as [`merge_scan`] on
/// the whole piece, in time linear in its length.
///
/// Why windows can be merged apart: let E = merge(X) and F = merge(Y), a the last token of E
/// and b the first of F. If merging the bytes of a and b alone gives [a, b], then merge(XY)
/// = E F. In the run on XY, as long as no pair across the seam merges, the parts left of it
/// go through the states of the run on X and those right of it through the run on Y (each
/// merge taken is the least pair on its side; ties go left on both sides). The parts at the
/// seam evolve as in merge(a's bytes) and merge(b's bytes), one step at a time in the same
/// order as in the run on a's and b's bytes alone (which of the two goes next depends only on
/// their own pairs), and the pair across the seam is taken in the run on XY only when it is
/// less than (or tied with, on the right) those two sides' pairs: in the same state, where the
/// run on a's and b's bytes would take it too, and that run gives [a, b]. So nothing merges
/// across, and at the end the pair (a, b) has no merge either.
///
/// By the same argument any run of consecutive tokens of merge(T) is the merge of its own
/// bytes. So each window's tokens but its last are committed (the next window starts where
/// that last token did: a cut where a window's merge put a token boundary seldom fails its
/// check), and when a seam fails, the last committed token is taken back and the window
/// starts at its first byte instead. After [`MAX_BACKUPS`] in the piece, or a window grown
/// past 4 [`CHUNK`]s (the scan is quadratic), the piece is merged whole by [`merge_layers`].
#[inline(never)]
pub fn merge_chunked(pairs: &PairTable, parts: &mut Vec<u32>, s: &mut Scratch) {
    if !repeats(parts) || !merge_windows(pairs, parts, s) {
        merge_layers(pairs, parts, s);
    }
}

/// Whether a long piece starts with two equal windows: then windows pay off (a window equal
/// to the one before costs a compare). Elsewhere the rank layers cost fewer instructions per
/// byte than windows merged one by one (o200k on random DNA 243 against 288, Han 163 against
/// 232).
pub fn repeats(parts: &[u32]) -> bool {
    parts.len() >= 2 * CHUNK && parts[..CHUNK] == parts[CHUNK..2 * CHUNK]
}

/// [`merge_chunked`] that gives up where it would hand over to [`merge_layers`]: false, with
/// `parts` as they came. When true, [`chunk_counts`] tells how many initial parts each
/// resulting part holds.
#[inline(never)]
pub fn merge_windows(pairs: &PairTable, parts: &mut Vec<u32>, s: &mut Scratch) -> bool {
    let n = parts.len();
    let mut c = std::mem::take(&mut s.chunks);
    c.input.clear();
    c.input.extend_from_slice(parts);
    parts.clear();
    c.counts.clear();
    c.last_in.clear();
    c.last_seam_in.clear();
    let mut q = 0;
    let mut budget = MAX_BACKUPS;
    while q < n {
        let mut start = q;
        // Windows taken back start earlier but end no earlier.
        let end = if n - q < CHUNK + CHUNK / 2 { n } else { q + CHUNK };
        loop {
            let window = &c.input[start..end];
            if window != &c.last_in[..] {
                c.win.clear();
                c.win.extend(window.iter().map(|&p| (p, 1)));
                merge_scan_counted(pairs, &mut c.win, &mut s.ranks);
                c.last_in.clear();
                c.last_in.extend_from_slice(window);
                c.last_win.clear();
                c.last_win.extend_from_slice(&c.win);
            }
            let win = &c.last_win;
            let apart = match (parts.last(), c.counts.last()) {
                (Some(&a), Some(&ca)) => {
                    let seam = &c.input[start - ca as usize..start + win[0].1 as usize];
                    if seam != &c.last_seam_in[..] || ca != c.last_seam_left {
                        c.last_seam_left = ca;
                        c.last_seam_in.clear();
                        c.last_seam_in.extend_from_slice(seam);
                        c.seam.clear();
                        c.seam.extend(seam.iter().map(|&p| (p, 1)));
                        merge_scan_counted(pairs, &mut c.seam, &mut s.ranks);
                        // The counts too: where initial parts are tokens made of others, the
                        // same two ids could split the seam's parts elsewhere.
                        c.last_seam_ok = c.seam == [(a, ca), win[0]];
                    }
                    c.last_seam_ok
                }
                _ => true,
            };
            if apart {
                // The last token may grow past the window's end: it is merged again with the
                // next window, unless it is most of this one.
                let last = win[win.len() - 1].1 as usize;
                let keep = if end == n || 2 * last > end - start { win.len() } else { win.len() - 1 };
                for &(id, count) in &win[..keep] {
                    parts.push(id);
                    c.counts.push(count);
                    start += count as usize;
                }
                break;
            }
            if budget == 0 || end - start > 4 * CHUNK {
                parts.clear();
                parts.extend_from_slice(&c.input);
                s.chunks = c;
                return false;
            }
            budget -= 1;
            parts.pop();
            start -= c.counts.pop().unwrap_or(0) as usize;
        }
        q = start;
    }
    s.chunks = c;
    true
}

/// How many initial parts each part holds after a [`merge_windows`] that returned true.
pub fn chunk_counts(s: &Scratch) -> &[u32] {
    &s.chunks.counts
}

const NONE: u32 = u32::MAX;

/// The heap merge; see the module docs.
pub fn merge_heap(pairs: &PairTable, parts: &mut Vec<u32>, s: &mut Scratch) {
    let n = parts.len();
    if n < 2 {
        return;
    }
    // parts[i] is the part whose first byte is i (or NONE once merged into its left
    // neighbour); next/prev link the live parts.
    s.next.clear();
    s.next.extend((1..=n as u32).map(|i| if i as usize == n { NONE } else { i }));
    s.prev.clear();
    s.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
    s.prev[0] = NONE;
    let key = |m: Merge, pos: usize| Reverse((merge_rank(m) as u64) << 32 | pos as u64);
    let mut heap = std::mem::take(&mut s.heap);
    heap.clear();
    heap.extend(
        (0..n - 1)
            .map(|i| (i, pairs.get(parts[i], parts[i + 1])))
            .filter(|&(_, m)| m != NO_MERGE)
            .map(|(i, m)| key(m, i)),
    );
    let mut heap = BinaryHeap::from(heap);
    cost::add(n);
    while let Some(Reverse(k)) = heap.pop() {
        cost::add(1);
        let pos = k as u32 as usize;
        let rank = (k >> 32) as u32;
        let right = s.next[pos];
        if parts[pos] == NONE || right == NONE {
            continue;
        }
        let m = pairs.get(parts[pos], parts[right as usize]);
        if m == NO_MERGE || merge_rank(m) != rank {
            continue; // stale: this pair changed after the key was pushed
        }
        parts[pos] = merge_id(m);
        parts[right as usize] = NONE;
        let after = s.next[right as usize];
        s.next[pos] = after;
        if after != NONE {
            s.prev[after as usize] = pos as u32;
            let m = pairs.get(parts[pos], parts[after as usize]);
            if m != NO_MERGE {
                heap.push(key(m, pos));
            }
        }
        let before = s.prev[pos];
        if before != NONE {
            let m = pairs.get(parts[before as usize], parts[pos]);
            if m != NO_MERGE {
                heap.push(key(m, before as usize));
            }
        }
    }
    s.heap = heap.into_vec();
    parts.retain(|&p| p != NONE);
}

/// Positions of pairs waiting to merge, grouped by rank, for [`merge_layers`].
#[derive(Default)]
struct Layers {
    /// Rank → index into `lists` (NONE: no list yet), one entry per rank of the table: a
    /// load where a hash map cost more than the pair-table probe beside it.
    index: Vec<u32>,
    /// The ranks given a list since the last clear (to reset their `index` entries).
    used: Vec<u32>,
    /// Position lists (left part's first byte), by `index`; an empty one is idle.
    lists: Vec<Vec<u32>>,
    /// Bit r: rank r's list is not empty; `summary` bit w: `bits[w]` is not zero. Finding the
    /// least rank is a few bit scans (a binary heap of ranks cost more on text that never
    /// repeats, whose lists are short and many).
    bits: Vec<u64>,
    summary: Vec<u64>,
    /// No bit below this is set.
    low: usize,
}

impl Layers {
    fn clear(&mut self, rank_bound: usize) {
        for &r in &self.used {
            self.index[r as usize] = NONE;
            // All clear unless a call handed over to the heap mid-pass.
            self.bits[r as usize >> 6] = 0;
            self.summary[r as usize >> 12] = 0;
        }
        self.used.clear();
        if self.lists.len() > 4096 {
            // Many ranks seen: drop their lists rather than keep one for each.
            self.lists = Vec::new();
        }
        for l in &mut self.lists {
            l.clear();
        }
        if self.index.len() < rank_bound {
            self.index.resize(rank_bound, NONE);
            self.bits.resize(rank_bound.div_ceil(64), 0);
            self.summary.resize(self.bits.len().div_ceil(64), 0);
        }
        self.low = 0;
    }

    #[inline]
    fn push(&mut self, rank: u32, pos: u32) {
        let mut at = self.index[rank as usize] as usize;
        if at == NONE as usize {
            at = self.used.len();
            self.index[rank as usize] = at as u32;
            self.used.push(rank);
            if at == self.lists.len() {
                self.lists.push(Vec::new());
            }
        }
        let list = &mut self.lists[at];
        if list.is_empty() {
            let (r, w) = (rank as usize, rank as usize >> 6);
            self.bits[w] |= 1 << (r & 63);
            self.summary[w >> 6] |= 1 << (w & 63);
            self.low = self.low.min(r);
        }
        list.push(pos);
    }

    /// The least rank whose list is not empty, its bit cleared.
    #[inline]
    fn pop(&mut self) -> Option<u32> {
        let (bits, summary) = (&mut self.bits, &mut self.summary);
        let mut w = self.low >> 6;
        if w >= bits.len() {
            return None;
        }
        let b = bits[w] & (u64::MAX << (self.low & 63));
        let b = if b != 0 {
            b
        } else {
            let mut sw = (w + 1) >> 6;
            let mut sb = if sw < summary.len() { summary[sw] & (u64::MAX << ((w + 1) & 63)) } else { 0 };
            while sb == 0 {
                sw += 1;
                if sw >= summary.len() {
                    return None;
                }
                sb = summary[sw];
            }
            w = sw << 6 | sb.trailing_zeros() as usize;
            bits[w]
        };
        let r = w << 6 | b.trailing_zeros() as usize;
        bits[w] &= !(1 << (r & 63));
        if bits[w] == 0 {
            summary[w >> 6] &= !(1 << (w & 63));
        }
        self.low = r;
        Some(r as u32)
    }
}

/// Passes [`merge_layers`] may cut short before it hands over to [`merge_heap`].
const MAX_BREAKS: usize = 64;

/// The merge by rank layers, for long pieces: the same result as [`merge_scan`] and
/// [`merge_heap`], in time proportional to the merges on repetitive input.
///
/// All pairs of the lowest rank r that exist are merged in one left-to-right pass. That is the
/// rule's own order: it takes the leftmost pair of rank r, and a merge at position p changes
/// only the pairs that touch p, which now contain the merged token; such a pair has a rank
/// other than r (a rank is one merge, and its result is longer than the token), so the next
/// pair the rule takes is the next rank-r pair to the right. Should a merge create a pair of
/// rank r or lower anyway (no real vocabulary does; the proof above needs it), the pass
/// stops, puts its remaining positions back and the lowest rank is taken again (after
/// `MAX_BREAKS` such stops, [`merge_heap`] finishes the piece). Positions are
/// checked when their turn comes: a pair merged away or changed since it was queued is
/// skipped. 'a' × 100,000 thus costs a handful of linear passes, not 100,000 heap operations.
pub fn merge_layers(pairs: &PairTable, parts: &mut Vec<u32>, s: &mut Scratch) {
    let n = parts.len();
    if n < 2 {
        return;
    }
    s.next.clear();
    s.next.extend((1..=n as u32).map(|i| if i as usize == n { NONE } else { i }));
    s.prev.clear();
    s.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
    s.prev[0] = NONE;
    cost::add(n);
    let layers = &mut s.layers;
    layers.clear(pairs.rank_bound() as usize);
    for i in 0..n - 1 {
        let m = pairs.get(parts[i], parts[i + 1]);
        if m != NO_MERGE {
            layers.push(merge_rank(m), i as u32);
        }
    }
    let mut todo = std::mem::take(&mut s.todo);
    // Left full when a call before handed over to the heap mid-pass.
    todo.clear();
    let mut breaks = 0;
    while let Some(rank) = layers.pop() {
        let at = layers.index[rank as usize] as usize;
        std::mem::swap(&mut todo, &mut layers.lists[at]);
        if todo.is_empty() {
            continue;
        }
        // Positions arrive in order within a pass, out of order across passes.
        todo.sort_unstable();
        cost::add(todo.len());
        let mut k = 0;
        while k < todo.len() {
            let pos = todo[k] as usize;
            k += 1;
            let right = s.next[pos];
            if parts[pos] == NONE || right == NONE {
                continue;
            }
            let m = pairs.get(parts[pos], parts[right as usize]);
            if m == NO_MERGE || merge_rank(m) != rank {
                continue; // stale
            }
            parts[pos] = merge_id(m);
            parts[right as usize] = NONE;
            let after = s.next[right as usize];
            s.next[pos] = after;
            let mut lower = false;
            if after != NONE {
                s.prev[after as usize] = pos as u32;
                let m = pairs.get(parts[pos], parts[after as usize]);
                if m != NO_MERGE {
                    layers.push(merge_rank(m), pos as u32);
                    lower |= merge_rank(m) <= rank;
                }
            }
            let before = s.prev[pos];
            if before != NONE {
                let m = pairs.get(parts[before as usize], parts[pos]);
                if m != NO_MERGE {
                    layers.push(merge_rank(m), before);
                    lower |= merge_rank(m) <= rank;
                }
            }
            if lower {
                breaks += 1;
                if breaks > MAX_BREAKS {
                    // A merge list whose merges undo the rank order again and again: the
                    // passes would turn quadratic. The heap carries on from the parts as
                    // they stand (BPE's state is nothing but them).
                    s.todo = todo;
                    parts.retain(|&p| p != NONE);
                    merge_heap(pairs, parts, s);
                    return;
                }
                for &p in &todo[k..] {
                    layers.push(rank, p);
                }
                break;
            }
        }
        todo.clear();
    }
    s.todo = todo;
    parts.retain(|&p| p != NONE);
}

/// One step of a merge trace.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MergeStep {
    /// Index (in the parts before this step) of the left part of the merged pair.
    pub index: usize,
    pub left: u32,
    pub right: u32,
    pub rank: u32,
    pub merged: u32,
    /// The parts after this step.
    pub parts: Vec<u32>,
}

/// Every step [`merge`] takes on `parts`, for display. Quadratic in the piece length (it
/// records the parts after each step), so callers should bound the piece length.
pub fn merge_steps(pairs: &PairTable, parts: &[u32]) -> Vec<MergeStep> {
    let mut parts = parts.to_vec();
    let mut steps = Vec::new();
    loop {
        let best = parts
            .windows(2)
            .enumerate()
            .map(|(i, w)| (pairs.get(w[0], w[1]), i))
            .min()
            .filter(|&(m, _)| m != NO_MERGE);
        let Some((m, i)) = best else { return steps };
        let (left, right) = (parts[i], parts[i + 1]);
        parts[i] = merge_id(m);
        parts.remove(i + 1);
        steps.push(MergeStep {
            index: i,
            left,
            right,
            rank: merge_rank(m),
            merged: merge_id(m),
            parts: parts.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary over bytes 'a' (0) and 'b' (1): aa=2 (rank 0), ab=3 (1), aaaa=4 (2),
    /// aab=5 (3), ba=6 (4).
    fn toy() -> PairTable {
        PairTable::new(&[((0, 0), 0, 2), ((0, 1), 1, 3), ((2, 2), 2, 4), ((2, 3), 3, 5), ((1, 0), 4, 6)])
    }

    /// A table where merging creates pairs of lower rank than the merge that made them (aa,
    /// rank 5, then aab, rank 0): the case [`merge_layers`] must stop its pass for.
    fn toy_inverted() -> PairTable {
        PairTable::new(&[
            ((0, 0), 5, 2),
            ((2, 1), 0, 3),
            ((1, 0), 2, 4),
            ((3, 0), 1, 5),
            ((4, 4), 3, 6),
            ((2, 2), 4, 7),
        ])
    }

    fn ids(s: &str) -> Vec<u32> {
        s.bytes().map(|b| (b - b'a') as u32).collect()
    }

    /// The definition, as slowly as possible.
    fn naive(pairs: &PairTable, mut parts: Vec<u32>) -> Vec<u32> {
        loop {
            let best =
                (0..parts.len().saturating_sub(1)).map(|i| (pairs.get(parts[i], parts[i + 1]), i)).min();
            match best {
                Some((m, i)) if m != NO_MERGE => {
                    parts[i] = merge_id(m);
                    parts.remove(i + 1);
                }
                _ => return parts,
            }
        }
    }

    #[test]
    fn scan_and_heap_agree_with_the_definition() {
        let t = toy();
        let inv = toy_inverted();
        let mut s = Scratch::default();
        let mut x: u64 = 12345;
        for len in 0..300 {
            for _ in 0..8 {
                let input: Vec<u32> = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ((x >> 33) % 2) as u32
                    })
                    .collect();
                let want = naive(&t, input.clone());
                let mut a = input.clone();
                merge_scan(&t, &mut a, &mut Vec::new());
                if len < HEAP_THRESHOLD {
                    for table in [&t, &inv] {
                        let mut m = input.clone();
                        merge_small(table, &mut m);
                        assert_eq!(m, naive(table, input.clone()), "{input:?}");
                    }
                }
                let mut b = input.clone();
                merge_heap(&t, &mut b, &mut s);
                assert_eq!(a, want);
                assert_eq!(b, want);
                for table in [&t, &inv] {
                    let want = naive(table, input.clone());
                    let mut c = input.clone();
                    merge_layers(table, &mut c, &mut s);
                    assert_eq!(c, want, "{input:?}");
                }
            }
        }
    }

    /// Long inputs on the inverted table stop many passes: past MAX_BREAKS the heap finishes.
    #[test]
    fn layers_hand_over_to_the_heap() {
        let inv = toy_inverted();
        let mut x: u64 = 99;
        for len in [500, 3000] {
            let input: Vec<u32> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((x >> 33) % 2) as u32
                })
                .collect();
            let mut want = input.clone();
            merge_heap(&inv, &mut want, &mut Scratch::default());
            let mut got = input.clone();
            merge_layers(&inv, &mut got, &mut Scratch::default());
            assert_eq!(got, want);
        }
    }

    /// A table like a trained one: 4 bytes (ids 0-3), then `n` merges of random pairs of
    /// existing tokens, ranked in order, biased to recent tokens so long tokens form.
    fn trained(n: usize, seed: u64) -> PairTable {
        let mut x = seed;
        let mut rnd = |k: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize % k
        };
        let mut entries = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut next = 4u32;
        while entries.len() < n {
            let pick = |r: usize, next: u32| {
                if r.is_multiple_of(2) {
                    r as u32 / 2 % next
                } else {
                    next - 1 - (r as u32 / 2 % next.min(8))
                }
            };
            let (a, b) = (pick(rnd(64), next), pick(rnd(64), next));
            if seen.insert((a, b)) {
                entries.push(((a, b), entries.len() as u32, next));
                next += 1;
            }
        }
        PairTable::new(&entries)
    }

    /// Inputs over ids 0..4: random, runs of one id, and a repeated random period (with a
    /// random prefix), at every length in `lens`.
    fn inputs(lens: &[usize], seed: u64) -> Vec<Vec<u32>> {
        let mut x = seed;
        let mut rnd = |k: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % k) as u32
        };
        let mut out = Vec::new();
        for &len in lens {
            out.push((0..len).map(|_| rnd(4)).collect());
            out.push((0..len).map(|_| rnd(2)).collect());
            out.push(vec![rnd(4); len]);
            let period: Vec<u32> = (0..1 + rnd(7)).map(|_| rnd(4)).collect();
            let skew = rnd(5) as usize;
            out.push((0..len).map(|i| if i < skew { 3 } else { period[i % period.len()] }).collect());
        }
        out
    }

    /// Lengths around every size where the chunked merge changes what it does.
    fn boundary_lens() -> Vec<usize> {
        let mut lens: Vec<usize> = (0..20).collect();
        for edge in
            [HEAP_THRESHOLD, CHUNK, 2 * CHUNK, 3 * CHUNK, 4 * CHUNK, 4 * CHUNK + CHUNK / 2, 10 * CHUNK]
        {
            lens.extend(edge.saturating_sub(2)..=edge + 2);
        }
        lens.extend([500, 1000, 2500]);
        lens
    }

    #[test]
    fn chunked_agrees_with_the_definition() {
        let tables = [toy(), toy_inverted(), doubling(), trained(40, 1), trained(200, 2), trained(600, 3)];
        for (t, table) in tables.iter().enumerate() {
            for input in inputs(&boundary_lens(), 7 + t as u64) {
                let want = naive(table, input.clone());
                let mut got = input.clone();
                let mut s = Scratch::default();
                merge_chunked(table, &mut got, &mut s);
                assert_eq!(got, want, "table {t}, {} parts", input.len());
                let mut again = input.clone();
                merge(table, &mut again, &mut s);
                assert_eq!(again, want, "table {t}, {} parts (merge)", input.len());
                // Every long-piece merge on its own, the scratch reused across inputs.
                let mut l = input.clone();
                merge_layers(table, &mut l, &mut s);
                assert_eq!(l, want, "table {t}, {} parts (layers)", input.len());
                let mut h = input.clone();
                merge_heap(table, &mut h, &mut s);
                assert_eq!(h, want, "table {t}, {} parts (heap)", input.len());
                // The windows on every input, not only those whose first windows repeat.
                let mut w = input.clone();
                if merge_windows(table, &mut w, &mut s) {
                    assert_eq!(w, want, "table {t}, {} parts (windows)", input.len());
                    assert_eq!(chunk_counts(&s).iter().sum::<u32>() as usize, input.len());
                } else {
                    assert_eq!(w, input, "table {t}: windows gave up but changed the parts");
                }
            }
        }
    }

    /// The small merge at every length it takes (both array sizes and their edges), on tables
    /// whose merged ids are the ranks and on tables whose are not, with ids on both sides of
    /// the pair table's direct part (256).
    #[test]
    fn small_agrees_with_the_definition() {
        let identity = |t: &PairTable| {
            let entries: Vec<_> = t.entries().map(|(pair, rank)| (pair, rank, rank)).collect();
            PairTable::new(&entries)
        };
        let trained = [trained(40, 1), trained(200, 2), trained(600, 3), trained(2000, 4)];
        let mut tables = vec![toy(), toy_inverted(), doubling()];
        tables.extend(trained.iter().map(identity));
        tables.extend(trained);
        let lens: Vec<usize> = (0..HEAP_THRESHOLD).collect();
        for (t, table) in tables.iter().enumerate() {
            for seed in 0..3 {
                for input in inputs(&lens, 100 * seed + t as u64) {
                    let mut got = input.clone();
                    merge_small(table, &mut got);
                    assert_eq!(got, naive(table, input.clone()), "table {t}, {input:?}");
                }
            }
        }
    }

    #[test]
    fn chunked_is_linear_on_runs_and_random_input() {
        for (table, input) in [
            (trained(600, 3), vec![0u32; 100_000]),
            (trained(600, 3), inputs(&[100_000], 5).swap_remove(0)),
            (doubling(), vec![0u32; 100_000]),
        ] {
            let work = |n: usize| {
                let mut p = input[..n].to_vec();
                let ((), units) = cost::of(|| merge_chunked(&table, &mut p, &mut Scratch::default()));
                units
            };
            let (small, large) = (work(10_000), work(100_000));
            assert!(large <= 12 * small, "10x the input took {large} / {small} units");
            // The doubling table is the worst: windows of one token whose seams all fail, and
            // seam checks on tokens of 128 parts.
            assert!(large <= 1000 * 100_000, "{large} units for 100,000 parts ({small} for 10,000)");
        }
    }

    fn doubling() -> PairTable {
        // a+a, aa+aa, ... up to 128 a's: a window of one byte merges into one token, and two
        // windows' tokens merge again (the seams fail).
        PairTable::new(&(0..7).map(|k| ((k, k), k, k + 1)).collect::<Vec<_>>())
    }

    #[test]
    fn ties_go_left() {
        let t = toy();
        let mut p = ids("aaa");
        merge_scan(&t, &mut p, &mut Vec::new());
        assert_eq!(p, [2, 0]);
        let mut p = ids("aab");
        merge_scan(&t, &mut p, &mut Vec::new());
        assert_eq!(p, [2, 1]); // aa first (rank 0), then (aa, b) has no merge
    }

    #[test]
    fn trace() {
        let steps = merge_steps(&toy(), &ids("aaaa"));
        assert_eq!(steps.len(), 3);
        assert_eq!((steps[0].index, steps[0].rank, steps[0].parts.clone()), (0, 0, vec![2, 0, 0]));
        assert_eq!((steps[1].index, steps[1].parts.clone()), (1, vec![2, 2]));
        assert_eq!((steps[2].merged, steps[2].parts.clone()), (4, vec![4]));
    }

    #[test]
    fn long_runs_are_not_quadratic() {
        // Runs of equal bytes: every merge of the run has the same rank, the worst case for a
        // scan (100,000 bytes would be ~10^10 steps). Measured in units of work (crate::cost),
        // not time, so load cannot fail it: a few units a byte, and ten times the input about
        // ten times the work (a quadratic merge: a hundred times).
        let t = toy();
        type MergeFn = fn(&PairTable, &mut Vec<u32>, &mut Scratch);
        let merges: [(&str, MergeFn); 3] =
            [("merge", merge), ("merge_layers", merge_layers), ("merge_heap", merge_heap)];
        for (name, f) in merges {
            let work = |n: usize| {
                let mut p = vec![0u32; n];
                let ((), units) = cost::of(|| f(&t, &mut p, &mut Scratch::default()));
                assert_eq!(p, vec![4; n / 4], "{name}");
                units
            };
            let (small, large) = (work(10_000), work(100_000));
            assert!(large <= 8 * 100_000, "{name}: {large} units for 100,000 bytes");
            assert!(large <= 12 * small, "{name}: 10x the input took {large} / {small} units");
        }
        // The count sees a quadratic merge: the scan on a run.
        let mut p = vec![0u32; 2_000];
        let ((), units) = cost::of(|| merge_scan(&t, &mut p, &mut Vec::new()));
        assert_eq!(p, vec![4; 500]);
        assert!(units >= 2_000 * 2_000 / 4, "{units}");
    }
}
