//! A byte trie over vocabulary keys: the longest key that prefixes a piece, in one walk
//! (and every key that does, for Unigram's lattice).
//!
//! WordPiece's greedy match asks, at each position, for the longest vocabulary key that
//! starts there. Probing candidate lengths from the longest down costs one lookup per
//! length, and in scripts a vocabulary covers thinly (Cyrillic, Greek, Arabic in
//! bert-base-uncased) most of those lookups fail. Walking a trie instead costs one step per
//! byte of the match (plus one failed step), and the last key passed is the answer.
//!
//! Layout: nodes in one vector; a node's children are one contiguous block of (label,
//! target) pairs, sorted by label. Nodes with many children (the root, the lead bytes of
//! multi-byte chars) also get a 256-entry dense table, so no step scans more than
//! `DENSE_FROM` labels.

/// Marks "no key ends here" and "no child".
const NONE: u32 = u32::MAX;
/// Nodes with at least this many children get a dense table.
const DENSE_FROM: usize = 9;

#[derive(Clone, Copy, Debug)]
struct Node {
    /// The id of the key ending at this node, or NONE.
    term: u32,
    /// First child in `labels` / `targets`.
    first: u32,
    /// Number of children.
    n: u16,
    /// Index of this node's dense table in `dense` (in units of 256), or u16::MAX.
    dense: u16,
}

/// What building a trie has left to do: (node, keys lo..hi, depth) per node to fill, and
/// one node's children as (byte, lo, hi), kept to save an allocation per node.
struct Work {
    stack: Vec<(usize, usize, usize, usize)>,
    groups: Vec<(u8, usize, usize)>,
}

#[derive(Clone, Debug)]
pub struct Trie {
    nodes: Vec<Node>,
    labels: Vec<u8>,
    targets: Vec<u32>,
    dense: Vec<u32>,
}

impl Trie {
    /// Builds the trie of `entries` (the empty key is ignored: it never matches a piece).
    /// A repeated key keeps its last id, as a map insert would.
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a [u8], u32)>) -> Self {
        let mut keys: Vec<(&[u8], u32, usize)> =
            entries.into_iter().enumerate().map(|(i, (k, v))| (k, v, i)).collect();
        // Sorted by key, then by insertion order, so that the last of equal keys wins below.
        keys.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.2.cmp(&b.2)));
        let keys: Vec<(&[u8], u32)> = keys.into_iter().map(|(k, v, _)| (k, v)).collect();
        Self::from_sorted(&keys)
    }

    /// [`Trie::new`] of entries already sorted by key (equal keys in insertion order; the
    /// last wins), for a caller that sorted them once for several uses.
    pub fn from_sorted(keys: &[(&[u8], u32)]) -> Self {
        debug_assert!(keys.windows(2).all(|w| w[0].0 <= w[1].0), "keys must be sorted");
        let lo = keys.partition_point(|(k, _)| k.is_empty());
        let mut t = Trie { nodes: Vec::new(), labels: Vec::new(), targets: Vec::new(), dense: Vec::new() };
        t.nodes.push(Node { term: NONE, first: 0, n: 0, dense: u16::MAX });
        // An explicit stack rather than recursion: a hostile file may hold very long keys.
        let mut work = Work { stack: vec![(0, lo, keys.len(), 0)], groups: Vec::new() };
        while let Some((at, lo, hi, depth)) = work.stack.pop() {
            t.build(at, keys, lo, hi, depth, &mut work);
        }
        t
    }

    /// Fills node `at`, whose keys `keys[lo..hi]` (sorted) all share their first `depth`
    /// bytes, and pushes its children's work.
    fn build(
        &mut self,
        at: usize,
        keys: &[(&[u8], u32)],
        mut lo: usize,
        hi: usize,
        depth: usize,
        work: &mut Work,
    ) {
        let Work { stack, groups } = work;
        // Keys ending here come first in sorted order; the last of them wins.
        while lo < hi && keys[lo].0.len() == depth {
            if depth > 0 {
                self.nodes[at].term = keys[lo].1;
            }
            lo += 1;
        }
        // Group the rest by their byte at `depth`.
        groups.clear();
        let mut i = lo;
        while i < hi {
            let b = keys[i].0[depth];
            let mut j = i + 1;
            while j < hi && keys[j].0[depth] == b {
                j += 1;
            }
            groups.push((b, i, j));
            i = j;
        }
        let first = self.labels.len();
        self.nodes[at].first = first as u32;
        self.nodes[at].n = groups.len() as u16;
        let mut dense_at = None;
        if groups.len() >= DENSE_FROM && self.dense.len() / 256 < u16::MAX as usize {
            let d = self.dense.len() / 256;
            self.nodes[at].dense = d as u16;
            self.dense.extend(std::iter::repeat_n(NONE, 256));
            dense_at = Some(d * 256);
        }
        for &(b, i, j) in groups.iter() {
            let child = self.nodes.len();
            self.nodes.push(Node { term: NONE, first: 0, n: 0, dense: u16::MAX });
            self.labels.push(b);
            self.targets.push(child as u32);
            if let Some(d) = dense_at {
                self.dense[d + b as usize] = child as u32;
            }
            stack.push((child, i, j, depth + 1));
        }
    }

    #[inline(always)]
    fn child(&self, node: u32, b: u8) -> u32 {
        let n = self.nodes[node as usize];
        if n.dense != u16::MAX {
            return self.dense[n.dense as usize * 256 + b as usize];
        }
        let first = n.first as usize;
        let labels = &self.labels[first..first + n.n as usize];
        for (k, &l) in labels.iter().enumerate() {
            if l == b {
                return self.targets[first + k];
            }
        }
        NONE
    }

    /// The id of the key ending at `node` (the root is node 0), if any.
    #[cfg(feature = "general")]
    pub(crate) fn term_at(&self, node: u32) -> Option<u32> {
        Some(self.nodes[node as usize].term).filter(|&t| t != NONE)
    }

    /// The children of `node` as (label, child node), by label.
    #[cfg(feature = "general")]
    pub(crate) fn children(&self, node: u32) -> impl Iterator<Item = (u8, u32)> + '_ {
        let n = self.nodes[node as usize];
        let range = n.first as usize..n.first as usize + n.n as usize;
        self.labels[range.clone()].iter().copied().zip(self.targets[range].iter().copied())
    }

    /// Calls `f(length, id)` for every key that is a prefix of `s`, shortest first.
    #[inline]
    pub fn prefixes(&self, s: &[u8], mut f: impl FnMut(usize, u32)) {
        let mut node = 0u32;
        for (k, &b) in s.iter().enumerate() {
            node = self.child(node, b);
            if node == NONE {
                return;
            }
            let term = self.nodes[node as usize].term;
            if term != NONE {
                f(k + 1, term);
            }
        }
    }

    /// The id of key `s` itself.
    #[inline]
    pub fn get(&self, s: &[u8]) -> Option<u32> {
        let mut node = 0u32;
        for &b in s {
            node = self.child(node, b);
            if node == NONE {
                return None;
            }
        }
        match self.nodes[node as usize].term {
            // The root holds no key: the empty key is never stored.
            NONE => None,
            term => Some(term),
        }
    }

    /// The longest key that is a prefix of `s`: (its id, its length in bytes).
    #[inline]
    pub fn longest(&self, s: &[u8]) -> Option<(u32, usize)> {
        let mut node = 0u32;
        let mut best = None;
        for (k, &b) in s.iter().enumerate() {
            node = self.child(node, b);
            if node == NONE {
                break;
            }
            let term = self.nodes[node as usize].term;
            if term != NONE {
                best = Some((term, k + 1));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_matches_a_plain_search() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // Small alphabets make shared prefixes and wide nodes; a few long keys.
        let alphabet: Vec<u8> = (0..40u8).map(|i| if i < 20 { b'a' + i } else { 0xC0 + i }).collect();
        let mut keys: Vec<(Vec<u8>, u32)> = Vec::new();
        for i in 0..5000u32 {
            let len = if i % 97 == 0 { 20 + (next() % 20) as usize } else { (next() % 7) as usize };
            let k: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            keys.push((k, i));
        }
        let t = Trie::new(keys.iter().map(|(k, v)| (k.as_slice(), *v)));
        let mut map = std::collections::HashMap::new();
        for (k, v) in &keys {
            map.insert(k.clone(), *v);
        }
        for _ in 0..20000 {
            let len = (next() % 12) as usize;
            let s: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            let want = (1..=s.len()).rev().find_map(|e| map.get(&s[..e]).map(|&id| (id, e)));
            assert_eq!(t.longest(&s), want, "{s:?}");
        }
        for (k, _) in &keys {
            if !k.is_empty() {
                assert_eq!(t.longest(k), Some((map[k], k.len())));
                assert_eq!(t.get(k), Some(map[k]));
            }
        }
        assert_eq!(t.get(b""), None);
        for _ in 0..20000 {
            let len = (next() % 12) as usize;
            let s: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            let want: Vec<(usize, u32)> =
                (1..=s.len()).filter_map(|e| map.get(&s[..e]).map(|&id| (e, id))).collect();
            let mut got = Vec::new();
            t.prefixes(&s, |e, id| got.push((e, id)));
            assert_eq!(got, want, "{s:?}");
            assert_eq!(t.get(&s), map.get(&s).copied().filter(|_| !s.is_empty()));
        }
    }
}
