//! SentencePiece's compiled normalization rules (a model's `precompiled_charsmap`), applied
//! the way the reference's `Precompiled` normalizer applies them.
//!
//! The charsmap is a little-endian u32 giving the byte size of a trie, the trie (a Darts
//! double array of u32 units, keyed by UTF-8 bytes), then the replacement strings, each ending
//! in a NUL; a key's value is the byte offset of its replacement.
//!
//! The reference does not run SentencePiece's normalizer (longest match over the whole text).
//! It goes grapheme cluster by grapheme cluster (extended clusters): a cluster shorter than
//! 6 bytes that the trie matches is replaced as a whole; otherwise each of its chars is
//! looked up alone, and kept when it has no match. "Matches" means the *shortest* key that
//! prefixes the text has a value: so a cluster "\r\n" becomes the replacement of "\r" alone,
//! the "\n" dropped. A key's walk stops at a NUL byte.
//!
//! Alignment follows the reference's bookkeeping: a replacement by fewer chars folds the
//! removal into the last rewrite emitted so far (possibly the previous cluster's last char),
//! one by more chars marks its last extra chars as insertions.

use super::AlignedText;
use crate::error::{Error, Result};
use crate::unicode::wide_char;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use unicode_segmentation::UnicodeSegmentation;

/// Clusters of this many bytes or more are looked up char by char only.
const WHOLE_CLUSTER_BELOW: usize = 6;

#[derive(Clone, Debug)]
pub struct Precompiled {
    /// The charsmap as the file holds it (decoded from base64).
    charsmap: Vec<u8>,
    /// The double array.
    units: Vec<u32>,
    /// The replacement strings, NUL-separated.
    replacements: String,
    /// The replacement of each ASCII char alone, as a range of `replacements` (the lone ASCII
    /// chars of a text are looked up here, not walked).
    ascii: [Option<(u32, u32)>; 128],
    /// By byte: an ASCII char other than CR that the map keeps (a run of them is skipped with
    /// one load and test per byte).
    kept: [bool; 256],
    /// Names this map in caches keyed by raw text (clones share it: they map alike).
    #[cfg(not(target_arch = "wasm32"))]
    cache_id: u64,
    /// The longest replacement's byte length.
    #[cfg(not(target_arch = "wasm32"))]
    longest: usize,
    /// Each char of the Basic Multilingual Plane by code point: [`UNCLASSED`] until first seen,
    /// then its kind ([`JOINS`], [`PLAIN`], [`MARK`], [`LINKER`]) and flags ([`REPLACED`],
    /// [`EXTENDED`], [`CONSONANT`], [`EXTEND`]). Shared by clones.
    chars: Arc<[AtomicU8]>,
}

/// The conjunct rule along a cluster being read: whether it is a consonant with only
/// [`EXTEND`] marks and linkers after it, and whether a linker came since its last consonant.
#[derive(Clone, Copy)]
struct Conjunct {
    consonant: bool,
    linked: bool,
}

impl Conjunct {
    /// The state after a cluster's first char, of class `class` ([`UNCLASSED`] for ASCII).
    fn of(class: u8) -> Conjunct {
        Conjunct { consonant: class & CONSONANT != 0, linked: false }
    }

    /// Whether the next char, of class `next`, joins the cluster (`Some(true)`) or begins the
    /// next one (`Some(false)`), or `None` where the segmenter must tell. `marks_join`: the
    /// cluster began with a char that marks join (not an ASCII control).
    #[inline(always)]
    fn joins(&mut self, next: u8, marks_join: bool) -> Option<bool> {
        match next & KIND {
            MARK if marks_join => {
                if next & EXTEND == 0 {
                    *self = Conjunct { consonant: false, linked: false };
                }
            }
            LINKER if self.consonant => self.linked = true,
            PLAIN if self.linked && next & CONSONANT != 0 => self.linked = false,
            PLAIN => return Some(false),
            _ if next == UNCLASSED => return Some(false),
            _ => return None,
        }
        Some(true)
    }
}

impl PartialEq for Precompiled {
    fn eq(&self, o: &Self) -> bool {
        // Everything else is read from the charsmap.
        self.charsmap == o.charsmap
    }
}

/// A char of [`Precompiled::chars`] not classed yet (and lone ASCII in
/// [`Precompiled::lone_char`]).
const UNCLASSED: u8 = 0;
/// A char's kind, the low bits of its class: one that may share a cluster with a char next
/// to it in ways the kinds below do not follow (ZWJ, a Hangul jamo, a prepended mark, CR, a
/// regional indicator, a control). Every rule that joins two chars names a char of this kind,
/// a [`MARK`] or a [`LINKER`] on one side (a Hangul syllable joins only jamo; two consonants
/// join only around a linker), so two [`PLAIN`] chars next to each other are separate
/// clusters.
const JOINS: u8 = 1;
/// A char that is none of the other kinds.
const PLAIN: u8 = 2;
/// A char that joins only the char before it, whatever that is and whatever follows (a
/// combining or spacing mark, but not ZWJ or a virama): a plain char and the marks after it
/// are one cluster when a plain char (or the end) follows.
const MARK: u8 = 3;
/// A virama that joins the consonants around it (`InCB=Linker`): after a [`CONSONANT`] and
/// [`EXTEND`] marks, it and the next consonant join the cluster.
const LINKER: u8 = 4;
const KIND: u8 = 7;
/// Flags: the map replaces the char alone.
const REPLACED: u8 = 8;
/// ... a [`PLAIN`] char that the map keeps, but that a longer key starts with.
const EXTENDED: u8 = 16;
/// ... a [`PLAIN`] char that a linker joins to the consonant before it (`InCB=Consonant`).
const CONSONANT: u8 = 32;
/// ... a [`MARK`] that may stand between a consonant and a linker (`InCB=Extend`).
const EXTEND: u8 = 64;

/// What [`Precompiled::lone_char`] found, besides one char alone: a [`PLAIN`] char with no
/// flag, then marks or linked consonants, all kept alone (no key starts with the first char,
/// so the cluster has no key and its chars are looked up alone).
const ALL_KEPT: u8 = 0x80;
/// ... the same with some char replaced alone.
const CHARS_ALONE: u8 = 0x81;
/// ... any other cluster: its own lookup decides.
const WHOLE: u8 = 0x82;

/// Whether the segmenter puts `c` in one cluster with a neighbour: tried against one char of
/// each class that the extended grapheme cluster rules join to something (after a letter:
/// marks and ZWJ; before one: prepended marks; CR before LF; Hangul jamo and syllables with
/// one another; regional indicators in pairs).
fn joins(c: char) -> bool {
    let c = c.encode_utf8(&mut [0; 4]).to_owned();
    let pair = |a: &str, b: &str| one_cluster(&[a, b]);
    pair("a", &c)
        || pair(&c, "a")
        || pair(&c, "\n")
        || pair("\u{1100}", &c)
        || pair(&c, "\u{1161}")
        || pair(&c, "\u{11A8}")
        || pair(&c, &c)
        || pair(&c, "\u{1F1E6}")
}

/// Whether `parts` joined are one cluster.
fn one_cluster(parts: &[&str]) -> bool {
    parts.concat().graphemes(true).nth(1).is_none()
}

/// [`Precompiled::leaves_space_alone`] asked of the segmenter.
#[cfg(not(target_arch = "wasm32"))]
#[cold]
#[inline(never)]
fn space_alone_by_segmenter(c: char, after: bool) -> bool {
    let mut buf = [0; 4];
    let c = &*c.encode_utf8(&mut buf);
    !one_cluster(&if after { [" ", c] } else { [c, " "] })
}

/// Whether `c` is a precomposed Hangul syllable: it joins an L jamo before it, and after it
/// only V or T jamo (and marks), which are [`JOINS`]; so it is [`PLAIN`] here.
fn hangul_syllable(c: char) -> bool {
    let c = c.encode_utf8(&mut [0; 4]).to_owned();
    one_cluster(&["\u{1100}", &c])
        && !one_cluster(&["a", &c])
        && !one_cluster(&[&c, "a"])
        && !one_cluster(&[&c, &c])
        && !one_cluster(&[&c, "\u{1100}"])
}

/// Whether the joining char `c` is a [`LINKER`]: after a letter, it joins two consonants
/// around it, and nothing else after it.
fn linker(c: char) -> bool {
    let c = c.encode_utf8(&mut [0; 4]).to_owned();
    one_cluster(&["a", &c]) && !one_cluster(&[&c, "a"]) && one_cluster(&["\u{915}", &c, "\u{915}"])
}

/// Whether the joining char `c` is a [`MARK`]: it joins a letter before it, nothing after it,
/// and neither two consonants around it (a virama) nor two emoji (ZWJ).
fn trailing_mark(c: char) -> bool {
    let c = c.encode_utf8(&mut [0; 4]).to_owned();
    one_cluster(&["a", &c])
        && !one_cluster(&[&c, "a"])
        && !one_cluster(&["\u{915}", &c, "\u{915}"])
        && !one_cluster(&["\u{1F600}", &c, "\u{1F600}"])
}

// A double-array unit: bit 8 says a key ends below this node, bits 0-7 (with bit 31, so that
// value units never match) are the label, bits 10-31 the offset to the children (shifted left
// by 8 more when bit 9 is set); a value unit holds the value in bits 0-30.
#[inline(always)]
fn has_leaf(u: u32) -> bool {
    u >> 8 & 1 == 1
}

#[inline(always)]
fn value(u: u32) -> usize {
    (u & ((1 << 31) - 1)) as usize
}

#[inline(always)]
fn label(u: u32) -> u32 {
    u & ((1 << 31) | 0xFF)
}

#[inline(always)]
fn offset(u: u32) -> usize {
    ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize
}

impl Precompiled {
    /// Reads a charsmap. Errors as the reference's: fewer bytes than the trie size promises,
    /// replacement strings that are not UTF-8.
    pub fn from_charsmap(charsmap: Vec<u8>) -> Result<Self> {
        let bad = |why: &str| Error::Invalid(why.to_owned());
        let head: [u8; 4] = charsmap
            .get(..4)
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| bad("shorter than its 4-byte header"))?;
        // The size is in bytes; units are whole u32s, and a remainder belongs to the strings.
        let n_units = u32::from_le_bytes(head) as usize / 4;
        let strings_at =
            n_units.checked_mul(4).and_then(|b| b.checked_add(4)).filter(|&e| e <= charsmap.len());
        let strings_at = strings_at.ok_or_else(|| bad("shorter than the trie size it gives"))?;
        let units = charsmap[4..strings_at]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let replacements = String::from_utf8(charsmap[strings_at..].to_vec())
            .map_err(|_| bad("its replacement strings are not UTF-8"))?;
        #[cfg(not(target_arch = "wasm32"))]
        let longest = replacements.split('\0').map(str::len).max().unwrap_or(0);
        let mut p = Precompiled {
            charsmap,
            units,
            replacements,
            ascii: [None; 128],
            kept: [false; 256],
            #[cfg(not(target_arch = "wasm32"))]
            cache_id: crate::models::new_owner_id(),
            #[cfg(not(target_arch = "wasm32"))]
            longest,
            chars: (0..0x10000).map(|_| AtomicU8::new(UNCLASSED)).collect(),
        };
        for b in 0..128u8 {
            let key = [b];
            let key = std::str::from_utf8(&key).expect("ASCII");
            p.ascii[b as usize] = p.replacement(key).map(|r| {
                let start = r.as_ptr() as usize - p.replacements.as_ptr() as usize;
                (start as u32, (start + r.len()) as u32)
            });
            p.kept[b as usize] = b != b'\r' && p.ascii[b as usize].is_none();
        }
        Ok(p)
    }

    /// Names this map in caches keyed by raw text: two maps with different ids may map the
    /// same text differently.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn cache_id(&self) -> u64 {
        self.cache_id
    }

    /// Whether the map leaves the ASCII space a space (read from its table of ASCII chars).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn keeps_space(&self) -> bool {
        self.ascii[b' ' as usize].is_none_or(|(s, e)| &self.replacements[s as usize..e as usize] == " ")
    }

    /// The longest replacement's byte length (a key is at least a byte long: a text maps to
    /// at most this many times its length).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn longest_replacement(&self) -> usize {
        self.longest
    }

    /// The charsmap's bytes, as read.
    pub fn charsmap(&self) -> &[u8] {
        &self.charsmap
    }

    /// The replacement of the shortest key that prefixes `s`, if any.
    ///
    /// On a malformed trie (an index past its end, a value past the strings or inside a
    /// char) the reference panics; this answers "no replacement" there instead.
    pub fn replacement(&self, s: &str) -> Option<&str> {
        let unit = |i: usize| self.units.get(i).copied();
        let mut pos = offset(unit(0)?);
        for &c in s.as_bytes() {
            if c == 0 {
                return None;
            }
            pos ^= c as usize;
            let u = unit(pos)?;
            if label(u) != c as u32 {
                return None;
            }
            pos ^= offset(u);
            if has_leaf(u) {
                let start = value(unit(pos)?);
                let rest = self.replacements.as_bytes().get(start..)?;
                let len = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                return self.replacements.get(start..start + len);
            }
        }
        None
    }

    /// The longest key that prefixes `s`, as SentencePiece's own normalizer looks it up: its
    /// length in bytes and its replacement. (Malformed tries answer "none", as in
    /// [`Precompiled::replacement`].)
    pub fn longest(&self, s: &[u8]) -> Option<(usize, &str)> {
        let unit = |i: usize| self.units.get(i).copied();
        let mut pos = offset(unit(0)?);
        let mut best = None;
        for (k, &c) in s.iter().enumerate() {
            if c == 0 {
                break;
            }
            pos ^= c as usize;
            let Some(u) = unit(pos) else { break };
            if label(u) != c as u32 {
                break;
            }
            pos ^= offset(u);
            if has_leaf(u) {
                let Some(v) = unit(pos) else { break };
                best = Some((k + 1, value(v)));
            }
        }
        let (len, start) = best?;
        let rest = self.replacements.as_bytes().get(start..)?;
        let n = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        Some((len, self.replacements.get(start..start + n)?))
    }

    /// Whether some key is longer than `prefix` and starts with it.
    pub fn extends(&self, prefix: &[u8]) -> bool {
        self.next_bytes(prefix, |_| ())
    }

    /// Calls `f(b)` for each byte `b` that some key longer than `prefix` has right after it;
    /// whether there was one.
    pub fn next_bytes(&self, prefix: &[u8], mut f: impl FnMut(u8)) -> bool {
        let unit = |i: usize| self.units.get(i).copied();
        let Some(mut pos) = unit(0).map(offset) else { return false };
        for &c in prefix {
            pos ^= c as usize;
            match unit(pos) {
                Some(u) if c != 0 && label(u) == c as u32 => pos ^= offset(u),
                _ => return false,
            }
        }
        let mut any = false;
        for c in 1..=255u8 {
            if unit(pos ^ c as usize).is_some_and(|u| label(u) == c as u32) {
                f(c);
                any = true;
            }
        }
        any
    }

    /// The normalized text alone.
    pub fn normalize_str(&self, s: &str) -> String {
        self.apply(&AlignedText::new(s)).text
    }

    /// Normalizes aligned text.
    pub fn apply(&self, t: &AlignedText) -> AlignedText {
        // The rewrite as the reference writes it, begun only at the first change: until then
        // every char is kept as it is.
        let mut items = Items { text: &t.text, items: None };
        self.rewrite(&t.text, &mut items);
        match items.items {
            Some(items) => t.transform(items, 0),
            None => t.clone(),
        }
    }

    /// The normalized text alone: [`Precompiled::apply`]'s text, without the alignment. (In
    /// wasm, `apply`'s: a second copy of the rewrite costs ~1 KB of the general module.)
    pub fn normalize_plain(&self, text: &str) -> String {
        if cfg!(target_arch = "wasm32") {
            return self.apply(&AlignedText::new(text)).text;
        }
        let mut plain = Plain { text, out: String::new(), kept_from: 0 };
        self.rewrite(text, &mut plain);
        if plain.out.is_empty() && plain.kept_from == 0 {
            return text.to_owned();
        }
        plain.out.push_str(&text[plain.kept_from..]);
        plain.out
    }

    /// The class of the char `c` of the Basic Multilingual Plane (see [`Precompiled::chars`]).
    #[inline(always)]
    fn class(&self, c: u32) -> u8 {
        match self.chars[c as usize].load(Ordering::Relaxed) {
            UNCLASSED => self.classify(c),
            class => class,
        }
    }

    /// Whether a space next to the char `c` (`c` after it when `after`, else before it) is a
    /// cluster of its own as far as `c` tells: `c` does not extend it nor is prepended to it.
    /// Then a text cut at that space maps as its two sides map alone.
    #[cfg(not(target_arch = "wasm32"))]
    #[inline(always)]
    pub fn leaves_space_alone(&self, c: char, after: bool) -> bool {
        let cp = c as u32;
        if cp < 0x80 {
            return true;
        }
        if cp < 0x1_0000 {
            // Two plain chars (a space is one) are separate clusters; a mark or a linker joins
            // the char before it, whatever that is, and nothing after it.
            match self.class(cp) & KIND {
                PLAIN => return true,
                MARK | LINKER => return !after,
                _ => {}
            }
        }
        space_alone_by_segmenter(c, after)
    }

    /// Classes the char `c` the first time it is seen (a few segmenter runs and trie walks).
    #[cold]
    #[inline(never)]
    fn classify(&self, c: u32) -> u8 {
        let ch = char::from_u32(c).expect("a char's code point");
        let mut buf = [0; 4];
        let key = &*ch.encode_utf8(&mut buf);
        // A control joins no mark after it: as JOINS, the segmenter takes it.
        let control = || !one_cluster(&[key, "\u{301}"]);
        let replaced = self.replacement(key).is_some();
        let flag = |yes: bool, flag: u8| if yes { flag } else { 0 };
        let replaced = flag(replaced, REPLACED);
        let plain = || {
            let consonant = flag(one_cluster(&[key, "\u{94D}", "\u{915}"]), CONSONANT);
            let extended = flag(replaced == 0 && self.extends(key.as_bytes()), EXTENDED);
            PLAIN | replaced | extended | consonant
        };
        let class = match joins(ch) {
            true if trailing_mark(ch) => {
                MARK | replaced | flag(one_cluster(&["\u{915}", key, "\u{94D}", "\u{915}"]), EXTEND)
            }
            true if linker(ch) => LINKER | replaced,
            true if hangul_syllable(ch) => plain(),
            true => JOINS,
            false if control() => JOINS,
            false => plain(),
        };
        // Classing again gives the same class: a race between threads only repeats the work.
        self.chars[c as usize].store(class, Ordering::Relaxed);
        class
    }

    /// The char at `i`: its code point, length and class (ASCII other than CR as
    /// [`UNCLASSED`]), or `None` for CR and chars outside the Basic Multilingual Plane (to be
    /// taken as [`JOINS`]: the segmenter takes them).
    #[inline(always)]
    fn char_at(&self, bytes: &[u8], i: usize) -> Option<(u32, usize, u8)> {
        let b = bytes[i];
        if b < 0x80 {
            return (b != b'\r').then_some((b as u32, 1, UNCLASSED));
        }
        let (c, n) = wide_char(bytes, i)?;
        Some((c as u32, n, self.class(c as u32)))
    }

    /// The cluster at `at` (which begins one) when it is a [`PLAIN`] char (or ASCII) and the
    /// marks after it, with linked consonants (`क्ष`), followed by a plain char or the end.
    /// Its first char's code point, its length, and what it is: the char's class when it is
    /// alone ([`UNCLASSED`] for ASCII), else [`ALL_KEPT`], [`CHARS_ALONE`] or [`WHOLE`].
    #[inline(always)]
    fn lone_char(&self, bytes: &[u8], at: usize) -> Option<(u32, usize, u8)> {
        let (c, n, class) = self.char_at(bytes, at)?;
        if class != UNCLASSED && class & KIND != PLAIN {
            return None;
        }
        // An ASCII control joins no mark after it.
        let control = c < 0x20 || c == 0x7F;
        let mut cluster = Conjunct::of(class);
        let mut replaced = 0;
        let mut end = at + n;
        while end < bytes.len() {
            let (_, k, next) = self.char_at(bytes, end)?;
            if !cluster.joins(next, !control)? {
                break;
            }
            replaced |= next;
            end += k;
        }
        let what = if end == at + n {
            class
        } else if class & KIND != PLAIN || class & (REPLACED | EXTENDED) != 0 {
            WHOLE
        } else if replaced & REPLACED == 0 {
            ALL_KEPT
        } else {
            CHARS_ALONE
        };
        Some((c, end - at, what))
    }

    /// The end of the clusters from `at` (which begins one) that the rewrite keeps as they
    /// are, found with one decode and table load per char: ASCII chars the map keeps, and
    /// [`PLAIN`] chars the map keeps with the kept marks and linked consonants after them
    /// (the clusters [`Precompiled::lone_char`] finds with nothing replaced, a cluster that
    /// a longer key could match looked up whole). The end is a cluster boundary: where a
    /// cluster of another kind begins.
    #[inline(always)]
    fn kept_run(&self, text: &str, at: usize) -> usize {
        let bytes = text.as_bytes();
        // Where the cluster being read began, and whether with a plain char (marks join only
        // those here; after ASCII the cluster is looked up whole, as `lone_char` has it).
        let (mut start, mut plain) = (at, false);
        // The cluster begins with a char a longer key starts with, and has more chars.
        let (mut extended, mut lookup) = (false, false);
        let mut cluster = Conjunct::of(UNCLASSED);
        // Whether the cluster `start..end` (complete) is kept as it is.
        let kept = |start: usize, end: usize, lookup: bool| !lookup || self.keeps_whole(&text[start..end]);
        let mut i = at;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                // ASCII joins no cluster before it (LF joins CR, which is never kept).
                if !kept(start, i, lookup) {
                    return start;
                }
                if !self.kept[b as usize] {
                    return i;
                }
                (start, plain, lookup) = (i, false, false);
                cluster = Conjunct::of(UNCLASSED);
                i += 1;
                continue;
            }
            // A char outside the Basic Multilingual Plane may join the cluster (emoji
            // modifiers, tags): the segmenter takes it from the cluster's start.
            let Some((c, n)) = wide_char(bytes, i) else { return start };
            let class = self.class(c as u32);
            match cluster.joins(class, plain) {
                // A new cluster: the one read so far is complete.
                Some(false) => {
                    if !kept(start, i, lookup) {
                        return start;
                    }
                    if class & REPLACED != 0 {
                        return i;
                    }
                    (start, plain, lookup) = (i, true, false);
                    extended = class & EXTENDED != 0;
                    cluster = Conjunct::of(class);
                }
                Some(true) if class & REPLACED == 0 => lookup = extended,
                _ => return start,
            }
            i += n;
        }
        if kept(start, i, lookup) {
            i
        } else {
            start
        }
    }

    /// Whether the map keeps `cluster` whole when its chars alone are kept (no key matches it,
    /// or it is looked up char by char).
    #[inline(never)]
    fn keeps_whole(&self, cluster: &str) -> bool {
        cluster.len() >= WHOLE_CLUSTER_BELOW || self.replacement(cluster).is_none()
    }

    /// Tells `sink` what becomes of each char of `text`, in order.
    #[inline(always)]
    fn rewrite<S: Sink>(&self, text: &str, sink: &mut S) {
        self.rewrite_with::<S, true>(text, sink)
    }

    /// [`Precompiled::rewrite`]; with `FAST`, chars that are clusters of their own (see
    /// [`Precompiled::lone_char`]) skip the segmenter, else only lone ASCII chars do (the
    /// tests' oracle).
    #[inline(always)]
    fn rewrite_with<S: Sink, const FAST: bool>(&self, text: &str, sink: &mut S) {
        let bytes = text.as_bytes();
        // An ASCII char other than CR followed by ASCII (or the end) is a cluster of its own:
        // nothing ASCII extends a cluster. Such chars skip the segmenter, which restarts at
        // the next other char (always a cluster boundary, where its rules need no context).
        let lone_ascii =
            |at: usize| bytes[at] < 0x80 && bytes[at] != b'\r' && bytes.get(at + 1).is_none_or(|&b| b < 0x80);
        let mut at = 0;
        while at < bytes.len() {
            if FAST && S::KEEPS_NOTHING {
                let end = self.kept_run(text, at);
                if end > at {
                    at = end;
                    continue;
                }
            }
            if lone_ascii(at) {
                if S::KEEPS_NOTHING && self.ascii[bytes[at] as usize].is_none() {
                    // A run of ASCII chars the map keeps, skipped whole; its last char is a
                    // cluster of its own only before ASCII (or the end).
                    let mut end = at + 1;
                    while end < bytes.len() && self.kept[bytes[end] as usize] {
                        end += 1;
                    }
                    if end < bytes.len() && bytes[end] >= 0x80 {
                        end -= 1;
                    }
                    at = end;
                    continue;
                }
                self.ascii_char(text, at, sink);
                at += 1;
                continue;
            }
            // Then chars that are clusters of their own (most of any script's text): a table
            // load for each and the next char, where the segmenter takes a few hundred
            // instructions a cluster.
            if FAST {
                if let Some((c, n, class)) = self.lone_char(bytes, at) {
                    match class {
                        UNCLASSED => self.ascii_char(text, at, sink),
                        ALL_KEPT if S::KEEPS_NOTHING => {}
                        ALL_KEPT => text[at..at + n].char_indices().for_each(|(i, c)| sink.keep(at + i, c)),
                        CHARS_ALONE => self.chars_alone(text, at, n, sink),
                        WHOLE => self.cluster(text, at, n, sink),
                        // One plain char: kept unless replaced.
                        _ if class & REPLACED == 0 => {
                            sink.keep(at, char::from_u32(c).expect("a char's code point"))
                        }
                        _ => self.cluster(text, at, n, sink),
                    }
                    at += n;
                    continue;
                }
            }
            // The segmenter, from a cluster boundary (its rules look back no further than the
            // char there, which joins nothing before it) to the next char the loops above take.
            let from = at;
            for (i, cluster) in text[from..].grapheme_indices(true) {
                self.cluster(text, from + i, cluster.len(), sink);
                at = from + i + cluster.len();
                if at < bytes.len() && (lone_ascii(at) || FAST && self.lone_char(bytes, at).is_some()) {
                    break;
                }
            }
        }
    }

    /// Rewrites the ASCII char at `at`, a cluster of its own, into `sink`.
    #[inline(always)]
    fn ascii_char(&self, text: &str, at: usize, sink: &mut impl Sink) {
        let b = text.as_bytes()[at];
        match self.ascii[b as usize] {
            Some((s, e)) => sink.replace(at, &text[at..at + 1], &self.replacements[s as usize..e as usize]),
            None => sink.keep(at, b as char),
        }
    }

    /// Rewrites the cluster `text[at..at + len]` into `sink`.
    #[inline]
    fn cluster(&self, text: &str, at: usize, len: usize, sink: &mut impl Sink) {
        let cluster = &text[at..at + len];
        if len < WHOLE_CLUSTER_BELOW {
            if let Some(new) = self.replacement(cluster) {
                sink.replace(at, cluster, new);
                return;
            }
        }
        self.chars_alone(text, at, len, sink);
    }

    /// Rewrites each char of `text[at..at + len]` by its own key.
    #[inline(never)]
    fn chars_alone(&self, text: &str, at: usize, len: usize, sink: &mut impl Sink) {
        let cluster = &text[at..at + len];
        for (i, c) in cluster.char_indices() {
            let old = &cluster[i..i + c.len_utf8()];
            match self.replacement(old) {
                Some(new) => sink.replace(at + i, old, new),
                None => sink.keep(at + i, c),
            }
        }
    }
}

#[cfg(test)]
impl Precompiled {
    /// A charsmap of `rules` (key, replacement), laid out as a double array the way
    /// [`Precompiled`] reads one: a node's children by byte `c` at `base ^ c`, where `base`
    /// is its slot XOR its offset, its value (bit 31 set) at `base`. No two nodes share a
    /// base, so a unit at `base ^ c` labelled `c` is that node's child.
    pub(crate) fn from_rules(rules: &[(&str, &str)]) -> Precompiled {
        use std::collections::BTreeMap;
        let mut strings = String::new();
        let mut children: Vec<BTreeMap<u8, usize>> = vec![BTreeMap::new()];
        let mut values: Vec<Option<u32>> = vec![None];
        for &(key, r) in rules {
            let mut node = 0;
            for &b in key.as_bytes() {
                node = match children[node].get(&b) {
                    Some(&n) => n,
                    None => {
                        children.push(BTreeMap::new());
                        values.push(None);
                        let n = children.len() - 1;
                        children[node].insert(b, n);
                        n
                    }
                };
            }
            values[node] = Some(strings.len() as u32);
            strings.push_str(r);
            strings.push('\0');
        }
        let mut units = vec![0u32; 1 << 16];
        let mut used = vec![false; 1 << 16];
        used[0] = true;
        let mut bases = std::collections::HashSet::new();
        let mut stack = vec![(0usize, 0usize)];
        while let Some((node, slot)) = stack.pop() {
            let labels: Vec<usize> =
                values[node].iter().map(|_| 0).chain(children[node].keys().map(|&b| b as usize)).collect();
            let free = |o: usize| !bases.contains(&o) && labels.iter().all(|&c| !used[o ^ c]);
            let base = (256..).find(|&o| free(o)).unwrap();
            bases.insert(base);
            units[slot] |= ((slot ^ base) as u32) << 10;
            if let Some(v) = values[node] {
                units[base] = 1 << 31 | v;
                used[base] = true;
            }
            for (&b, &child) in &children[node] {
                let at = base ^ b as usize;
                units[at] = b as u32 | (values[child].is_some() as u32) << 8;
                used[at] = true;
                stack.push((child, at));
            }
        }
        let mut bytes = ((units.len() * 4) as u32).to_le_bytes().to_vec();
        for u in &units {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        bytes.extend_from_slice(strings.as_bytes());
        Precompiled::from_charsmap(bytes).unwrap()
    }
}

/// What a rewrite says, in text order: each char is kept, or a run of chars replaced.
trait Sink {
    /// Whether [`Sink::keep`] does nothing (runs of kept chars may then be skipped).
    const KEEPS_NOTHING: bool = false;
    /// The char `c` at byte `at` stays.
    fn keep(&mut self, at: usize, c: char);
    /// `old`, at byte `at`, becomes `new`.
    fn replace(&mut self, at: usize, old: &str, new: &str);
}

/// The reference's `(char, change)` items of a rewrite of `text`, begun at its first change.
struct Items<'a> {
    text: &'a str,
    items: Option<Vec<(char, isize)>>,
}

impl Sink for Items<'_> {
    #[inline]
    fn keep(&mut self, _: usize, c: char) {
        if let Some(items) = self.items.as_mut() {
            items.push((c, 0));
        }
    }

    #[inline]
    fn replace(&mut self, at: usize, old: &str, new: &str) {
        replace(started(&mut self.items, self.text, at), old, new);
    }
}

/// The rewritten text alone: kept chars are copied a run at a time.
struct Plain<'a> {
    text: &'a str,
    out: String,
    /// Where the kept chars not yet copied begin.
    kept_from: usize,
}

impl Sink for Plain<'_> {
    const KEEPS_NOTHING: bool = true;

    #[inline(always)]
    fn keep(&mut self, _: usize, _: char) {}

    #[inline]
    fn replace(&mut self, at: usize, old: &str, new: &str) {
        if self.out.capacity() == 0 {
            self.out.reserve(self.text.len() + new.len());
        }
        self.out.push_str(&self.text[self.kept_from..at]);
        self.out.push_str(new);
        self.kept_from = at + old.len();
    }
}

/// The rewrite so far, begun if need be with every char of `text[..at]` kept.
fn started<'a>(
    items: &'a mut Option<Vec<(char, isize)>>,
    text: &str,
    at: usize,
) -> &'a mut Vec<(char, isize)> {
    items.get_or_insert_with(|| {
        let mut v = Vec::with_capacity(text.len());
        v.extend(text[..at].chars().map(|c| (c, 0)));
        v
    })
}

/// Appends the rewrite of `old` into `new`. The new chars replace the old ones in order;
/// extra new chars are insertions (the last ones); missing ones are removals added to the
/// last item written, which is the previous text's when `new` is empty (and lost when
/// nothing was written yet, as in the reference).
fn replace(items: &mut Vec<(char, isize)>, old: &str, new: &str) {
    let before = items.len();
    items.extend(new.chars().map(|c| (c, 0)));
    let diff = (items.len() - before) as isize - old.chars().count() as isize;
    if diff > 0 {
        items.iter_mut().rev().take(diff as usize).for_each(|it| it.1 = 1);
    } else if diff < 0 {
        if let Some(last) = items.last_mut() {
            last.1 += diff;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A double array built by hand for keys "a" -> "x", "ab" -> "yz", "c" -> "" (strings
    /// "x\0yz\0\0"), in the unit layout above (offsets < 2^22, so bit 9 clear).
    fn tiny() -> Precompiled {
        // Root at 0 with offset 0x100: a child with label L sits at 0x100 ^ L.
        let unit = |label: u32, leaf: bool, off: u32| label | (leaf as u32) << 8 | off << 10;
        let mut units = vec![0u32; 0x400];
        units[0] = unit(0, false, 0x100);
        // "a" (0x61) at 0x161, a leaf whose value unit sits at 0x161 ^ off.
        units[0x161] = unit(0x61, true, 0x200);
        units[0x161 ^ 0x200] = 0; // value 0: "x"
                                  // "ab": from 0x161 ^ 0x200 = 0x361, child b (0x62) at 0x361 ^ 0x62 = 0x303.
        units[0x303] = unit(0x62, true, 0x80);
        units[0x303 ^ 0x80] = 2; // "yz"
                                 // "c" (0x63) at 0x163 with value 5: the empty string.
        units[0x163] = unit(0x63, true, 0x40);
        units[0x163 ^ 0x40] = 5;
        let mut bytes = ((units.len() * 4) as u32).to_le_bytes().to_vec();
        for u in &units {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        bytes.extend_from_slice(b"x\0yz\0\0");
        Precompiled::from_charsmap(bytes).unwrap()
    }

    #[test]
    fn lookups_take_the_shortest_key() {
        let p = tiny();
        assert_eq!(p.replacement("a"), Some("x"));
        // "ab" is a key too, but "a" is shorter.
        assert_eq!(p.replacement("ab"), Some("x"));
        assert_eq!(p.replacement("c"), Some(""));
        assert_eq!(p.replacement("b"), None);
        assert_eq!(p.replacement("\0a"), None);
        assert_eq!(p.replacement(""), None);
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn keeps_space_as_its_key_says() {
        let keeps = |rules: &[(&str, &str)]| Precompiled::from_rules(rules).keeps_space();
        assert!(keeps(&[("a", "x")]));
        assert!(keeps(&[(" ", " "), ("a", "x")]));
        assert!(keeps(&[(" \u{301}", "ab")]));
        assert!(!keeps(&[(" ", "\u{2581}")]));
        assert!(!keeps(&[(" ", "")]));
        assert!(!keeps(&[(" ", "  ")]));
    }

    #[test]
    fn sentencepiece_takes_the_longest_key() {
        let p = tiny();
        assert!(p.extends(b"a"));
        assert!(!p.extends(b"ab"));
        assert!(!p.extends(b"c"));
        assert!(p.extends(b""));
        assert_eq!(p.longest(b"abc"), Some((2, "yz")));
        assert_eq!(p.longest(b"ac"), Some((1, "x")));
        assert_eq!(p.longest(b"c"), Some((1, "")));
        assert_eq!(p.longest(b"ba"), None);
        assert_eq!(p.longest(b""), None);
    }

    #[test]
    fn clusters_then_chars() {
        let p = tiny();
        // "a" + U+0301 is one cluster, matched by its prefix "a": replaced whole.
        assert_eq!(p.normalize_str("a\u{301}ba"), "xbx");
        // A removal folds into the previous char's rewrite.
        let t = p.apply(&AlignedText::new("bca"));
        assert_eq!(t.text, "bx");
        assert_eq!(t.orig, [0, 2]);
        // Removal at the very start is lost: what follows shifts onto the removed char.
        let t = p.apply(&AlignedText::new("cbb"));
        assert_eq!(t.text, "bb");
        assert_eq!(t.orig, [0, 1]);
        // Nothing to change: the same text and alignment.
        assert_eq!(p.apply(&AlignedText::new("bbb")), AlignedText::new("bbb"));
    }

    #[test]
    fn plain_text_is_the_aligned_rewrites_text() {
        let p = tiny();
        let mut rng = crate::testing::Rng(0x0123_4567_89AB_CDEF);
        // Keys, chars that extend clusters (combining marks, CR LF), multi-byte chars.
        let parts = ["a", "b", "c", "ab", "\r", "\n", "\r\n", "\u{301}", "é", "日", "\u{1F600}", " "];
        for _ in 0..5000 {
            let text: String = (0..rng.below(12)).map(|_| rng.pick(&parts)).collect();
            assert_eq!(p.normalize_plain(&text), p.apply(&AlignedText::new(&text)).text, "{text:?}");
        }
    }

    #[test]
    fn lone_chars_match_the_segmenter() {
        let p = Precompiled::from_rules(&[
            ("a", "x"),
            ("é", "e"),
            ("\u{FF21}", "A"),
            ("\u{3099}", ""),
            ("ب\u{654}", "ئ"),
            ("\u{1100}\u{1161}", "가"),
            ("각", "k"),
            ("ष", "s"),
            ("\r", "\n"),
            ("\u{1F600}", "~"),
            ("ab", "yz"),
        ]);
        // Chars of every cluster class: letters, marks, ZWJ, emoji, Hangul L/V/T and LV/LVT
        // syllables, regional indicators, a prepended mark, a spacing mark, a virama between
        // consonants, CR and LF, chars the map replaces alone and in clusters.
        let parts = [
            "a",
            "b",
            " ",
            "\r",
            "\n",
            "é",
            "e\u{301}",
            "\u{301}",
            "\u{FF21}",
            "か",
            "ж",
            "\u{3099}",
            "ب",
            "\u{654}",
            "ب\u{654}",
            "\u{1100}",
            "\u{1161}",
            "\u{11A8}",
            "가",
            "각",
            "\u{200D}",
            "\u{1F600}",
            "\u{1F1E6}",
            "\u{1F1E8}",
            "\u{600}",
            "\u{903}",
            "क",
            "\u{94D}",
            "ष",
            "\u{93C}",
            "\u{93F}",
            "ক",
            "\u{9CD}",
            "日",
            "\u{FE0F}",
            "\u{10000}",
            "\u{1F3FB}",
            "\u{85}",
            "\u{1}",
        ];
        let mut rng = crate::testing::Rng(0x5EED_1E55_C1A5_7E12);
        for _ in 0..20_000 {
            let text: String = (0..rng.below(16)).map(|_| rng.pick(&parts)).collect();
            // Where a cluster starts, a lone char found there is that cluster.
            for (i, cluster) in text.grapheme_indices(true) {
                if let Some((_, n, _)) = p.lone_char(text.as_bytes(), i) {
                    assert_eq!(n, cluster.len(), "{text:?} at {i}");
                }
            }
            let t = AlignedText::new(&text);
            let (mut fast, mut plain) =
                (Items { text: &text, items: None }, Items { text: &text, items: None });
            p.rewrite_with::<_, true>(&text, &mut fast);
            p.rewrite_with::<_, false>(&text, &mut plain);
            assert_eq!(fast.items, plain.items, "{text:?}");
            let want = plain.items.map_or_else(|| text.clone(), |items| t.transform(items, 0).text);
            let mut fast = Plain { text: &text, out: String::new(), kept_from: 0 };
            p.rewrite_with::<_, true>(&text, &mut fast);
            assert_eq!(fast.out + &text[fast.kept_from..], want, "{text:?}");
        }
        let class = |c: char| p.chars[c as usize].load(Ordering::Relaxed);
        for c in ['\u{1100}', '\u{1161}', '\u{11A8}', '\u{200D}', '\u{600}', '\u{85}'] {
            assert_eq!(class(c), JOINS, "{c:?}");
        }
        for c in ['\u{301}', '\u{654}', '\u{93C}', '\u{FE0F}'] {
            assert_eq!(class(c), MARK | EXTEND, "{c:?}");
        }
        assert_eq!([class('\u{903}'), class('\u{93F}')], [MARK; 2]);
        assert_eq!(class('\u{3099}'), MARK | EXTEND | REPLACED);
        assert_eq!([class('\u{94D}'), class('\u{9CD}')], [LINKER; 2]);
        assert_eq!([class('é'), class('\u{FF21}'), class('각')], [PLAIN | REPLACED; 3]);
        assert_eq!([class('か'), class('日'), class('가')], [PLAIN; 3]);
        assert_eq!([class('क'), class('ক')], [PLAIN | CONSONANT; 2]);
        assert_eq!(class('ष'), PLAIN | CONSONANT | REPLACED);
        assert_eq!(class('ب'), PLAIN | EXTENDED);
    }

    #[test]
    fn expansion_followed_by_removal() {
        // The reference's own case: "™" -> "TM" then "\x1e" -> "": the inserted "M" takes the
        // removal, so it is aligned to "\x1e".
        let mut items = Vec::new();
        replace(&mut items, "™", "TM");
        replace(&mut items, "\x1e", "");
        items.push(('g', 0));
        let t = AlignedText::new("™\x1eg").transform(items, 0);
        assert_eq!(t.text, "TMg");
        assert_eq!(t.orig, [0, 1, 2]);
    }

    /// Parses `{"type": "Precompiled", "precompiled_charsmap": b64}` with the loader.
    fn load(b64: &str) -> crate::Result<crate::normalizers::Normalizer> {
        let v = serde_json::json!({"type": "Precompiled", "precompiled_charsmap": b64});
        crate::loaders::tokenizer_json::parse_normalizer_json(&v.to_string())
    }

    #[test]
    fn base64_as_the_reference_reads_it() {
        // 4 + 4 bytes: a size of 4 and one zero unit; base64 "BAAAAAAAAAA=".
        assert!(load("BAAAAAAAAAA=").is_ok());
        // Padding may be left out, but not misplaced or overdone.
        assert!(load("BAAAAAAAAAA").is_ok());
        assert!(load("BAAAAAAAAAA==").is_err());
        assert!(load("BAAAAAAAAA=A").is_err());
        // Bits past the last byte must be zero ("B" sets the lowest of them).
        assert!(load("BAAAAAAAAAB=").is_err());
        assert!(load("BAAAAAAAAAB").is_err());
        // Whitespace, other alphabets, a length of 4n+1.
        assert!(load("BAAA AAAAAAA=").is_err());
        assert!(load("BAAAAAAA_AA=").is_err());
        assert!(load("BAAAAAAAAAAAA").is_err());
        let e = load("").unwrap_err().to_string();
        assert!(e.contains("normalizer.precompiled_charsmap"), "{e}");
    }

    #[test]
    fn malformed_charsmaps() {
        assert!(Precompiled::from_charsmap(vec![]).is_err());
        assert!(Precompiled::from_charsmap(vec![8, 0, 0, 0, 1, 2, 3, 4]).is_err());
        assert!(Precompiled::from_charsmap(vec![0, 0, 0, 0, 0xFF]).is_err());
        // An empty trie matches nothing.
        let p = Precompiled::from_charsmap(vec![0, 0, 0, 0]).unwrap();
        assert_eq!(p.normalize_str("abc"), "abc");
        // Size 6: one unit; the 2 extra bytes begin the strings.
        let p = Precompiled::from_charsmap(vec![6, 0, 0, 0, 0, 0, 0, 0, b'h', b'i']).unwrap();
        assert_eq!(p.replacements, "hi");
    }
}
