//! The vocabulary as a double array: every prefix of a text that is a piece, one step per byte
//! in constant time (the lattice's inner loop).
//!
//! The byte trie ([`Trie`]) finds a child by scanning up to eight labels or through a dense
//! table; here a node's child by byte `b` sits at slot `base + b` of one array, and is that
//! child exactly when its `check` names the node. Slots are shared out at build time so that
//! no two children of any nodes collide. Every `base` is at most the length minus 256, so a
//! step never leaves the array.

use crate::models::wordpiece::trie::Trie;

/// Marks a slot no node holds, and a node where no piece ends.
pub const NONE: u32 = u32::MAX;
/// The root's `check`: no node has this index, so no step lands on the root.
const ROOT: u32 = u32::MAX - 1;

#[derive(Clone, Copy, Debug)]
struct Unit {
    /// Where this node's children start: the child by byte `b` is at `base + b`.
    base: u32,
    /// The parent's slot ([`NONE`] in a free slot).
    check: u32,
    /// The id of the piece ending here, or [`NONE`].
    id: u32,
}

/// How many free slots a node's lowest child is tried at.
const SEARCH: usize = 64;
/// Ends the list of free slots.
const END: u32 = u32::MAX;
/// Slots below this hold no child (slot 0 is the root): every free slot listed can then take
/// any label's child, where walking past the low slots a node's lowest label cannot reach
/// cost most of the build (mon's 473K nodes: 157M instructions).
const LOW: usize = 256;

const FREE: Unit = Unit { base: 0, check: NONE, id: NONE };

#[derive(Clone, Debug)]
pub struct DoubleArray {
    units: Vec<Unit>,
    /// The node a multi-byte char's first two bytes lead to from the root, by those bytes
    /// ([`pair_index`]), or [`Pair::NONE`]: a char's walk from the root starts past them,
    /// where most of a long word's walks start (native only: the page's general module is at
    /// its size budget).
    #[cfg(not(target_arch = "wasm32"))]
    pairs: Box<[Pair; 64 * 64]>,
}

/// A node and its base, as [`DoubleArray::child`] gives them.
#[derive(Clone, Copy, Debug)]
#[cfg(not(target_arch = "wasm32"))]
struct Pair {
    node: u32,
    base: u32,
}

#[cfg(not(target_arch = "wasm32"))]
impl Pair {
    const NONE: Pair = Pair { node: NONE, base: 0 };
}

/// Where the lead byte `b0` (0xC0 or above) and the byte `b1` after it are found in
/// [`DoubleArray::pairs`]: their low six bits, which tell lead bytes apart and continuation
/// bytes too.
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn pair_index(b0: u8, b1: u8) -> usize {
    ((b0 as usize & 0x3F) << 6) | (b1 as usize & 0x3F)
}

impl DoubleArray {
    /// The double array of `trie`'s keys and ids.
    pub fn new(trie: &Trie) -> Self {
        let mut b = Builder { units: Vec::new(), next: Vec::new(), prev: Vec::new(), head: END, tail: END };
        b.grow(0);
        b.units[0].check = ROOT;
        // (trie node, its slot) still to place the children of.
        let mut stack = vec![(0u32, 0usize)];
        let mut children: Vec<(u8, u32)> = Vec::new();
        // Every slot from here on is free.
        let mut frontier = LOW;
        while let Some((node, slot)) = stack.pop() {
            children.clear();
            children.extend(trie.children(node));
            let Some(&(lowest, _)) = children.first() else { continue };
            let lowest = lowest as usize;
            // The first free slots (those a base can reach with the lowest label) are tried for
            // the lowest label's child; a node that fits none of the first SEARCH goes past
            // every slot taken (trying them all would make building quadratic).
            // Every free slot listed is at least LOW, so any gives a base for the lowest label.
            let mut at = b.head;
            let mut tries = 0;
            let base = loop {
                if at == END || tries == SEARCH {
                    break frontier.max(lowest) - lowest;
                }
                let base = at as usize - lowest;
                b.grow(base);
                if children.iter().all(|&(c, _)| b.units[base + c as usize].check == NONE) {
                    break base;
                }
                at = b.next[at as usize];
                tries += 1;
            };
            b.grow(base);
            b.units[slot].base = base as u32;
            for &(c, child) in &children {
                let s = base + c as usize;
                b.take(s);
                b.units[s] = Unit { base: 0, check: slot as u32, id: trie.term_at(child).unwrap_or(NONE) };
                stack.push((child, s));
                frontier = frontier.max(s + 1);
            }
        }
        let da = DoubleArray {
            units: b.units,
            #[cfg(not(target_arch = "wasm32"))]
            pairs: Box::new([Pair::NONE; 64 * 64]),
        };
        #[cfg(not(target_arch = "wasm32"))]
        let da = DoubleArray { pairs: da.pairs(), ..da };
        da
    }

    /// [`DoubleArray::pairs`] of this array.
    #[cfg(not(target_arch = "wasm32"))]
    fn pairs(&self) -> Box<[Pair; 64 * 64]> {
        let mut pairs = Box::new([Pair::NONE; 64 * 64]);
        let (root, root_base) = self.root();
        for b0 in 0xC0..=0xFF {
            let Some((n0, base0, _)) = self.child(root, root_base, b0) else { continue };
            for b1 in 0x80..=0xBF {
                if let Some((node, base, _)) = self.child(n0, base0, b1) {
                    pairs[pair_index(b0, b1)] = Pair { node, base: base as u32 };
                }
            }
        }
        pairs
    }

    /// Calls `f(length, id)` for every piece that is a prefix of `s`, shortest first.
    #[inline(always)]
    pub fn prefixes(&self, s: &[u8], mut f: impl FnMut(usize, u32)) {
        let (mut node, mut base) = self.root();
        for (k, &b) in s.iter().enumerate() {
            let Some((next, next_base, id)) = self.child(node, base, b) else { return };
            if id != NONE {
                f(k + 1, id);
            }
            (node, base) = (next, next_base);
        }
    }

    /// The node that the walk from the root through `c`, the bytes of one UTF-8 char, ends
    /// at (as [`DoubleArray::child`] gives it), or `None` where no piece starts with `c`.
    #[inline(always)]
    pub fn after_char(&self, c: &[u8]) -> Option<(u32, usize, u32)> {
        #[cfg(not(target_arch = "wasm32"))]
        match *c {
            [b0, b1, b2] => {
                let p = self.pairs[pair_index(b0, b1)];
                if p.node == NONE {
                    return None;
                }
                return self.child(p.node, p.base as usize, b2);
            }
            [b0, b1] => {
                let p = self.pairs[pair_index(b0, b1)];
                if p.node == NONE {
                    return None;
                }
                return Some((p.node, p.base as usize, self.units[p.node as usize].id));
            }
            _ => {}
        }
        self.walk(c)
    }

    /// The node that the walk from the root through `s` ends at, byte by byte (the plain
    /// [`DoubleArray::after_char`]), or `None` where no piece starts with `s`.
    #[inline(always)]
    pub fn walk(&self, s: &[u8]) -> Option<(u32, usize, u32)> {
        let (mut node, mut base) = self.root();
        let mut id = NONE;
        for &b in s {
            (node, base, id) = self.child(node, base, b)?;
        }
        Some((node, base, id))
    }

    /// The root: its slot and its base, where walks start.
    #[inline(always)]
    pub fn root(&self) -> (u32, usize) {
        (0, self.units[0].base as usize)
    }

    /// The child by byte `b` of the node at slot `node` whose base is `base`: its slot, its
    /// base, and the id of the piece ending there ([`NONE`] if none does).
    #[inline(always)]
    pub fn child(&self, node: u32, base: usize, b: u8) -> Option<(u32, usize, u32)> {
        let next = base + b as usize;
        debug_assert!(next < self.units.len());
        // SAFETY: `base` is a node's (the root's, or one `child` returned), and every node's
        // base is at most `units.len() - 256` (`new` grows the array to 256 slots past each
        // base it gives out, and never shrinks it), so `base + b` for a byte `b` is in bounds.
        let u = unsafe { *self.units.get_unchecked(next) };
        (u.check == node).then_some((next as u32, u.base as usize, u.id))
    }
}

/// The array being built, and its free slots as a list in slot order (`next`, `prev`, `head`,
/// `tail`; [`END`] ends it), so that looking for room skips the slots taken.
struct Builder {
    units: Vec<Unit>,
    next: Vec<u32>,
    prev: Vec<u32>,
    head: u32,
    tail: u32,
}

impl Builder {
    /// Makes room for a node whose base is `at` (or lower): 256 slots from there. Slots
    /// below [`LOW`] stay off the free list.
    #[inline(always)]
    fn grow(&mut self, at: usize) {
        // Checked once per base tried; the array seldom grows.
        if at + 256 > self.units.len() {
            self.extend(at);
        }
    }

    #[cold]
    #[inline(never)]
    fn extend(&mut self, at: usize) {
        // Slots are named by u32s below ROOT; past that a base could not be stored.
        assert!(at + 256 < ROOT as usize, "a vocabulary too large for a double array");
        for i in self.units.len()..at + 256 {
            self.units.push(FREE);
            if i < LOW {
                self.prev.push(END);
                self.next.push(END);
                continue;
            }
            self.prev.push(self.tail);
            self.next.push(END);
            match self.tail {
                END => self.head = i as u32,
                t => self.next[t as usize] = i as u32,
            }
            self.tail = i as u32;
        }
    }

    /// Takes free slot `s` off the free list.
    fn take(&mut self, s: usize) {
        let (p, n) = (self.prev[s], self.next[s]);
        match p {
            END => self.head = n,
            p => self.next[p as usize] = n,
        }
        match n {
            END => self.tail = p,
            n => self.prev[n as usize] = p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    #[test]
    fn prefixes_match_the_trie() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        // Few bytes make wide nodes and shared prefixes; 0x00, 0xFF and multi-byte leads test
        // the edges of a base's 256 slots.
        let alphabet: Vec<u8> =
            vec![0x00, 0x01, b'a', b'b', b'c', b' ', 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xF0, 0xFF];
        for round in 0..20 {
            let count = [1, 2, 50, 3000][round % 4];
            let mut keys: Vec<Vec<u8>> = Vec::new();
            for _ in 0..count {
                let len = if rng.below(50) == 0 { 10 + rng.below(30) } else { rng.below(6) };
                keys.push((0..len).map(|_| rng.pick(&alphabet)).collect());
            }
            // Every byte value as a one-byte key, sometimes.
            if round % 5 == 0 {
                keys.extend((0..=255u8).map(|b| vec![b]));
            }
            let trie = Trie::new(keys.iter().enumerate().map(|(i, k)| (k.as_slice(), i as u32)));
            let da = DoubleArray::new(&trie);
            let check = |s: &[u8]| {
                let (mut want, mut got) = (Vec::new(), Vec::new());
                trie.prefixes(s, |n, id| want.push((n, id)));
                da.prefixes(s, |n, id| got.push((n, id)));
                assert_eq!(got, want, "{s:?}");
            };
            for k in &keys {
                check(k);
            }
            for _ in 0..2000 {
                let len = rng.below(16);
                let s: Vec<u8> = (0..len)
                    .map(|_| if rng.below(4) == 0 { rng.next() as u8 } else { rng.pick(&alphabet) })
                    .collect();
                check(&s);
            }
        }
        // No keys: nothing matches.
        let da = DoubleArray::new(&Trie::new(std::iter::empty()));
        da.prefixes(b"abc", |_, _| panic!("no key"));
    }

    #[test]
    fn char_steps_match_the_byte_walk() {
        let mut rng = Rng(0x0DDB_A11C_2026_1207);
        // Chars that share lead bytes, second bytes, or the low bits of their lead bytes.
        let alphabet: Vec<char> =
            "aé\u{C3A9}ßɐ\u{3A40}日本ค่ม\u{1F600}\u{1D538}\u{10FFFF}\u{7FF}\u{800}".chars().collect();
        for round in 0..50 {
            let keys: Vec<String> = (0..[3, 40, 400][round % 3])
                .map(|_| (0..1 + rng.below(4)).map(|_| rng.pick(&alphabet)).collect())
                .collect();
            let trie = Trie::new(keys.iter().enumerate().map(|(i, k)| (k.as_bytes(), i as u32)));
            let da = DoubleArray::new(&trie);
            // Every char a text may start with: the alphabet's and chars of every length.
            let mut chars = alphabet.clone();
            chars.extend((0..200).filter_map(|_| char::from_u32(rng.below(0x11_0000) as u32)));
            for c in &chars {
                let c = c.encode_utf8(&mut [0; 4]).as_bytes().to_vec();
                assert_eq!(da.after_char(&c), da.walk(&c), "{c:?}");
            }
        }
    }
}
