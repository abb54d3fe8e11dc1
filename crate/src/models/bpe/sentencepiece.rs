//! SentencePiece's BPE: no merge list, the pieces' scores decide.
//!
//! The text starts as one symbol per char (a user-defined piece found at a position is one
//! frozen symbol instead, never merged). Two neighbouring symbols can merge when their
//! concatenation is a piece (normal, user-defined or unused); of all such pairs the one whose
//! piece scores highest merges first, the leftmost of equal scores. When nothing merges any
//! more, an unused piece is split back into the two symbols of the last pair queued to make it
//! (recursively), and a symbol that is no piece gets the unknown id (then
//! [`crate::models::sentencepiece::resolve_unknowns`]).
//!
//! SentencePiece runs this on the whole normalized text. A merge only ever makes a piece, so
//! no merge joins two neighbouring chars that no piece holds side by side (a letter and the
//! space symbol after it, in most models): the text is cut there into words that are merged
//! one at a time and cached, with the same ids. (Not when some piece is unused: undoing reads
//! the whole text's merges.)

use std::cell::RefCell;
use std::cmp::Ordering as CmpOrdering;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::BuildHasherDefault;

use crate::error::{Error, Result};
use crate::models::cache::{WordCache, WordHasher, MAX_WORD};
use crate::models::sentencepiece::{piece_byte, resolve_unknowns, PieceKind};
use crate::models::wordpiece::trie::Trie;

#[derive(Clone, Debug)]
pub struct SentencePieceBpe {
    /// The vocabulary in id order: (piece, score, kind).
    pieces: Vec<(String, f32, PieceKind)>,
    /// Normal, user-defined and unused pieces: what a merge may produce.
    mergeable: Trie,
    /// User-defined pieces: frozen symbols.
    user_defined: Option<Trie>,
    unk_id: u32,
    /// The id of each byte's piece, with byte fallback.
    byte_ids: Option<Box<[u32; 256]>>,
    /// Whether some piece is unused (then merges are undone at the end).
    has_unused: bool,
    /// The pairs of neighbouring chars some piece holds (`a << 32 | b`), where words may not
    /// be cut; None: the whole text is one word.
    joined: Option<HashSet<u64, BuildHasherDefault<WordHasher>>>,
    cache_id: u64,
}

/// A symbol of the text being merged: its byte range and its neighbours.
#[derive(Clone, Copy)]
struct Symbol {
    start: u32,
    end: u32,
    prev: u32,
    next: u32,
    frozen: bool,
}

const NONE: u32 = u32::MAX;

/// Unused pieces → the two parts they are split back into.
type Undone = HashMap<String, (String, String)>;

/// The key of two neighbouring chars.
#[inline]
fn pair_key(a: char, b: char) -> u64 {
    (a as u64) << 32 | b as u64
}

/// How deep SentencePiece splits unused pieces back (deeper ones stay as they are).
const MAX_UNDO_DEPTH: usize = 100;

/// A pair that may merge: symbols `left` and `right`, whose concatenation of `size` bytes is a
/// piece with `score`.
#[derive(Clone, Copy)]
struct Candidate {
    score: f32,
    left: u32,
    right: u32,
    size: u32,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    /// The highest score first, then the leftmost. SentencePiece compares the scores' bits as
    /// integers (sign first), which is the total order: -0 below +0, NaNs at the ends.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        self.score.total_cmp(&other.score).then(other.left.cmp(&self.left))
    }
}

/// What merging needs besides the model, one per thread.
#[derive(Default)]
struct Work {
    symbols: Vec<Symbol>,
    heap: BinaryHeap<Candidate>,
    /// The word's tokens before unknowns are resolved.
    tokens: Vec<(u32, usize, usize)>,
    /// Words → (id, start, end) per token.
    cache: WordCache<(u32, u32, u32)>,
}

thread_local! {
    static WORK: RefCell<Work> = RefCell::new(Work::default());
}

impl SentencePieceBpe {
    /// A model of SentencePiece's pieces (piece, score, kind) in id order. The loader has
    /// checked the vocabulary (unk id, byte pieces, no repeats).
    pub fn new(pieces: Vec<(String, f32, PieceKind)>, unk_id: u32, byte_fallback: bool) -> Result<Self> {
        if pieces.len() >= NONE as usize || unk_id as usize >= pieces.len() {
            return Err(Error::Invalid(format!(
                "a SentencePiece vocabulary of {} pieces with unk id {unk_id}",
                pieces.len()
            )));
        }
        let ids = || pieces.iter().enumerate().map(|(id, p)| (id as u32, p));
        let mergeable = Trie::new(ids().filter(|(_, p)| p.2.matchable()).map(|(id, p)| (p.0.as_bytes(), id)));
        let user: Vec<_> = ids()
            .filter(|(_, p)| p.2 == PieceKind::UserDefined)
            .map(|(id, p)| (p.0.as_bytes(), id))
            .collect();
        let user_defined = (!user.is_empty()).then(|| Trie::new(user));
        let byte_ids = byte_fallback.then(|| {
            let mut b = Box::new([unk_id; 256]);
            for (id, p) in ids() {
                if let (PieceKind::Byte, Some(x)) = (p.2, piece_byte(&p.0)) {
                    b[x as usize] = id;
                }
            }
            b
        });
        let has_unused = pieces.iter().any(|p| p.2 == PieceKind::Unused);
        let joined = (!has_unused).then(|| {
            let mut set = HashSet::default();
            for p in pieces.iter().filter(|p| p.2.matchable()) {
                let mut chars = p.0.chars();
                let mut prev = chars.next();
                for c in chars {
                    set.insert(pair_key(prev.unwrap_or(c), c));
                    prev = Some(c);
                }
            }
            set
        });
        Ok(SentencePieceBpe {
            pieces,
            mergeable,
            user_defined,
            unk_id,
            byte_ids,
            has_unused,
            joined,
            cache_id: crate::models::new_owner_id(),
        })
    }

    pub fn pieces(&self) -> &[(String, f32, PieceKind)] {
        &self.pieces
    }

    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    /// Appends the tokens of `text` (the whole normalized text) to `out`: `(id, start, end)`,
    /// byte ranges in `text`.
    pub fn tokenize(&self, text: &str, mut push: impl FnMut(u32, usize, usize)) -> Result<()> {
        if text.len() >= NONE as usize {
            return Err(Error::Input("a text of 4 GiB or more cannot be tokenized".into()));
        }
        WORK.with(|cell| {
            let mut fresh = Work::default();
            let mut guard = cell.try_borrow_mut();
            // Only busy if tokenizing re-entered itself on this thread; stay correct.
            let work = match guard.as_mut() {
                Ok(w) => &mut **w,
                Err(_) => &mut fresh,
            };
            let mut tokens = std::mem::take(&mut work.tokens);
            tokens.clear();
            let mut at = 0;
            while at < text.len() {
                let end = self.word_end(text, at);
                self.word(&text[at..end], at, work, &mut tokens);
                at = end;
            }
            let bytes = self.byte_ids.as_deref();
            resolve_unknowns(tokens.iter().copied(), text, self.unk_id, bytes, &mut push);
            work.tokens = tokens;
        });
        Ok(())
    }

    /// How `text` is merged, step by step (the page's BPE model step): the symbols of its
    /// words (chars, and user-defined pieces whole), then each merge in the order SentencePiece
    /// makes them, word after word. A step's `rank` is the merged piece's place among the
    /// pieces by score (0 = the highest: SentencePiece merges the highest-scoring pair first,
    /// the leftmost of a tie). `ids` are the model's tokens, unused pieces split back and
    /// unknown chars resolved; a symbol that is no piece shows as the unknown id.
    pub fn merge_trace(&self, text: &str) -> Result<super::general::MergeTrace> {
        let id_of = |s: &str| self.mergeable.get(s.as_bytes()).unwrap_or(self.unk_id);
        let mut work = Work::default();
        // The whole text as one word: cutting it into words changes the order of the merges
        // (not their result), and the steps show SentencePiece's order.
        let mut log = Vec::new();
        self.merge(text, &mut work, None, Some(&mut log));
        // The merge left the symbols' spans merged: the symbols again, unmerged.
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut a = 0;
        while a < text.len() {
            let user = self.user_defined.as_ref().and_then(|t| t.longest(&text.as_bytes()[a..]));
            let len = user.map_or_else(|| text[a..].chars().next().map_or(1, char::len_utf8), |u| u.1);
            spans.push((a, a + len));
            a += len;
        }
        let initial: Vec<u32> = spans.iter().map(|&(s, e)| id_of(&text[s..e])).collect();
        let mut parts = initial.clone();
        let mut order: Vec<u32> = (0..spans.len() as u32).collect();
        let mut steps = Vec::new();
        // The scores of the pieces a merge may make, highest first: a rank is a search here.
        let mut by_score: Vec<f32> = (self.pieces.iter())
            .filter(|p| matches!(p.2, PieceKind::Normal | PieceKind::Unused | PieceKind::UserDefined))
            .map(|p| p.1)
            .collect();
        by_score.sort_unstable_by(|a, b| b.total_cmp(a));
        for (l, r) in log {
            let Some(i) = order.windows(2).position(|w| w == [l, r]) else { continue };
            let (left, right) = (parts[i], parts[i + 1]);
            spans[l as usize].1 = spans[r as usize].1;
            let (s, e) = spans[l as usize];
            let merged = id_of(&text[s..e]);
            let score = self.pieces[merged as usize].1;
            let rank = by_score.partition_point(|&x| x > score) as u32;
            order.remove(i + 1);
            parts[i] = merged;
            parts.remove(i + 1);
            steps.push(super::merge::MergeStep { index: i, left, right, rank, merged, parts: parts.clone() });
        }
        let mut ids = Vec::new();
        self.tokenize(text, |id, _, _| ids.push(id))?;
        Ok(super::general::MergeTrace { initial, steps, ids, whole_token: None })
    }

    /// The end of the word that starts at byte `at` of `text`: before the first char that no
    /// piece holds after the char before it.
    fn word_end(&self, text: &str, at: usize) -> usize {
        let Some(joined) = &self.joined else { return text.len() };
        let mut chars = text[at..].char_indices();
        let Some((_, mut prev)) = chars.next() else { return text.len() };
        for (i, c) in chars {
            if !joined.contains(&pair_key(prev, c)) {
                return at + i;
            }
            prev = c;
        }
        text.len()
    }

    /// Appends the tokens of `word`, found at byte `base` of the text, to `out`.
    fn word(&self, word: &str, base: usize, work: &mut Work, out: &mut Vec<(u32, usize, usize)>) {
        let cached = word.len() < MAX_WORD && self.joined.is_some();
        if cached {
            if let Some(toks) = work.cache.get(self.cache_id, word) {
                out.extend(toks.iter().map(|&(id, s, e)| (id, base + s as usize, base + e as usize)));
                return;
            }
        }
        let first = out.len();
        let mut undone = HashMap::new();
        self.merge(word, work, self.has_unused.then_some(&mut undone), None);
        let mut i = if work.symbols.is_empty() { NONE } else { 0 };
        while i != NONE {
            let s = work.symbols[i as usize];
            self.emit(word, s.start as usize, s.end as usize, &undone, 0, &mut |id, a, b| {
                out.push((id, base + a, base + b))
            });
            i = s.next;
        }
        if cached {
            let fresh = out[first..].iter().map(|&(id, s, e)| (id, (s - base) as u32, (e - base) as u32));
            work.cache.insert(self.cache_id, word, fresh);
        }
    }

    /// Merges the symbols of `word` in `work.symbols` until no pair is a piece. `undone`
    /// collects, for each unused piece some queued pair makes, the parts of the last such pair
    /// (merged or not: SentencePiece remembers what it queued).
    ///
    /// `log`, when given, gets the symbols (left, right) of each merge in order.
    fn merge(
        &self,
        word: &str,
        work: &mut Work,
        mut undone: Option<&mut Undone>,
        mut log: Option<&mut Vec<(u32, u32)>>,
    ) {
        let bytes = word.as_bytes();
        let symbols = &mut work.symbols;
        symbols.clear();
        let mut at = 0;
        while at < bytes.len() {
            let user = self.user_defined.as_ref().and_then(|t| t.longest(&bytes[at..]));
            let (len, frozen) = match user {
                Some((_, len)) => (len, true),
                None => (word[at..].chars().next().map_or(1, char::len_utf8), false),
            };
            let n = symbols.len() as u32;
            let prev = n.checked_sub(1).unwrap_or(NONE);
            symbols.push(Symbol { start: at as u32, end: (at + len) as u32, prev, next: n + 1, frozen });
            at += len;
        }
        let Some(last) = symbols.last_mut() else { return };
        last.next = NONE;
        let heap = &mut work.heap;
        heap.clear();
        for right in 1..symbols.len() as u32 {
            self.push_pair(word, symbols, heap, right - 1, right, &mut undone);
        }
        while let Some(top) = heap.pop() {
            let (l, r) = (symbols[top.left as usize], symbols[top.right as usize]);
            // Stale: a side was merged away or grew since the pair was queued.
            if l.start == l.end || r.start == r.end || (l.end - l.start) + (r.end - r.start) != top.size {
                continue;
            }
            if let Some(log) = log.as_deref_mut() {
                log.push((top.left, top.right));
            }
            let left = &mut symbols[top.left as usize];
            left.end = r.end;
            left.next = r.next;
            let prev = left.prev;
            if r.next != NONE {
                symbols[r.next as usize].prev = top.left;
            }
            let right = &mut symbols[top.right as usize];
            right.end = right.start;
            if prev != NONE {
                self.push_pair(word, symbols, heap, prev, top.left, &mut undone);
            }
            if r.next != NONE {
                self.push_pair(word, symbols, heap, top.left, r.next, &mut undone);
            }
        }
    }

    /// Queues symbols `left` and `right` if their concatenation is a piece.
    #[inline]
    fn push_pair(
        &self,
        word: &str,
        symbols: &[Symbol],
        heap: &mut BinaryHeap<Candidate>,
        left: u32,
        right: u32,
        undone: &mut Option<&mut Undone>,
    ) {
        let (l, r) = (symbols[left as usize], symbols[right as usize]);
        if l.frozen || r.frozen {
            return;
        }
        let (ls, le, rs, re) = (l.start as usize, l.end as usize, r.start as usize, r.end as usize);
        let Some(id) = self.mergeable.get(&word.as_bytes()[ls..re]) else { return };
        let (_, score, kind) = &self.pieces[id as usize];
        heap.push(Candidate { score: *score, left, right, size: (re - ls) as u32 });
        if let (PieceKind::Unused, Some(u)) = (kind, undone.as_deref_mut()) {
            u.insert(word[ls..re].to_owned(), (word[ls..le].to_owned(), word[rs..re].to_owned()));
        }
    }

    /// Emits the symbol `word[start..end]`: its piece, an unused piece's parts (at most
    /// [`MAX_UNDO_DEPTH`] levels down), or the unknown id for a text that is no piece (or an
    /// unused one never queued).
    fn emit(
        &self,
        word: &str,
        start: usize,
        end: usize,
        undone: &Undone,
        depth: usize,
        push: &mut impl FnMut(u32, usize, usize),
    ) {
        let text = &word[start..end];
        let Some(id) = self.mergeable.get(text.as_bytes()) else {
            push(self.unk_id, start, end);
            return;
        };
        if depth > MAX_UNDO_DEPTH || self.pieces[id as usize].2 != PieceKind::Unused {
            push(id, start, end);
            return;
        }
        match undone.get(text) {
            Some((a, b)) => {
                let mid = start + a.len();
                self.emit(word, start, mid, undone, depth + 1, push);
                self.emit(word, mid, mid + b.len(), undone, depth + 1, push);
            }
            None => push(self.unk_id, start, end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(pieces: &[(&str, f32, PieceKind)]) -> SentencePieceBpe {
        let pieces = pieces.iter().map(|&(p, s, k)| (p.to_owned(), s, k)).collect();
        SentencePieceBpe::new(pieces, 0, false).unwrap()
    }

    fn ids(m: &SentencePieceBpe, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        m.tokenize(text, |id, _, _| out.push(id)).unwrap();
        out
    }

    use PieceKind::*;

    #[test]
    fn highest_score_first_then_leftmost() {
        let m = model(&[
            ("<unk>", 0.0, Unknown),
            ("a", -1.0, Normal),
            ("b", -1.0, Normal),
            ("ab", -3.0, Normal),
            ("ba", -2.0, Normal),
            ("aba", -4.0, Normal),
        ]);
        // "ba" scores higher than "ab": a|ba, then nothing ("a"+"ba" is "aba": merges).
        assert_eq!(ids(&m, "aba"), [5]);
        // Then "aba" (the only pair left), and "b".
        assert_eq!(ids(&m, "abab"), [5, 2]);
        // Unknown chars get the unk id, a run of them one token.
        assert_eq!(ids(&m, "xyab"), [0, 3]);
    }

    #[test]
    fn equal_scores_merge_the_leftmost_pair() {
        let m = model(&[("<unk>", 0.0, Unknown), ("a", -1.0, Normal), ("aa", -2.0, Normal)]);
        assert_eq!(ids(&m, "aaa"), [2, 1]);
    }

    #[test]
    fn unused_pieces_are_split_back() {
        let m = model(&[
            ("<unk>", 0.0, Unknown),
            ("a", -1.0, Normal),
            ("b", -1.0, Normal),
            ("c", -1.0, Normal),
            ("ab", -2.0, Unused),
            ("abc", -3.0, Normal),
            ("bc", -9.0, Normal),
        ]);
        // "ab" merges (unused), then "abc": a normal piece.
        assert_eq!(ids(&m, "abc"), [5]);
        // "ab" stays: split back into a and b.
        assert_eq!(ids(&m, "ab"), [1, 2]);
        assert!(m.joined.is_none());
    }

    #[test]
    fn user_defined_pieces_are_frozen() {
        let m = model(&[
            ("<unk>", 0.0, Unknown),
            ("a", -1.0, Normal),
            ("b", -1.0, Normal),
            ("ab", -2.0, Normal),
            ("<b>", 0.0, UserDefined),
        ]);
        assert_eq!(ids(&m, "a<b>b"), [1, 4, 2]);
        assert_eq!(ids(&m, "ab"), [3]);
    }

    #[test]
    fn words_are_cut_where_no_piece_joins_two_chars() {
        let m =
            model(&[("<unk>", 0.0, Unknown), ("▁", -1.0, Normal), ("a", -1.0, Normal), ("▁a", -2.0, Normal)]);
        assert_eq!(ids(&m, "▁a▁a▁"), [3, 3, 1]);
        assert_eq!(m.word_end("▁a▁a", 0), "▁a".len());
        // No piece joins "a" and "b", nor two spaces.
        assert_eq!(m.word_end("ab", 0), 1);
        assert_eq!(m.word_end("▁▁a", 0), "▁".len());
        let m = model(&[("<unk>", 0.0, Unknown), ("▁▁", -1.0, Normal), ("▁a", -1.0, Normal)]);
        assert_eq!(m.word_end("▁▁a▁", 0), "▁▁a".len());
    }
}
