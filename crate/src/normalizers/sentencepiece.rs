//! SentencePiece's own normalizer, as a `.model` file's `normalizer_spec` asks for it.
//!
//! The text is read prefix by prefix: a user-defined piece that starts there (the longest) is
//! kept as it is; else the longest key of the compiled char map that starts there is
//! replaced; else one char is kept. Around that, the whitespace rules:
//! - `remove_extra_whitespaces`: prefixes that normalize to exactly " " are dropped at the
//!   start; a normalized prefix loses its leading spaces when the previous one ended in a
//!   space; at the end, trailing space symbols are dropped (any "▁" of the input too, when
//!   spaces are escaped).
//! - `add_dummy_prefix`: a space symbol before the text (after it, when
//!   `treat_whitespace_as_suffix`), unless nothing is left.
//! - `escape_whitespaces`: every space becomes "▁" (U+2581).

use super::precompiled::Precompiled;
use super::AlignedText;
use crate::models::wordpiece::trie::Trie;
use crate::unicode::wide_char;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// What SentencePiece writes for a space.
pub const SPACE_SYMBOL: char = '\u{2581}';

#[derive(Clone, Debug)]
pub struct SpmNormalizer {
    pub charsmap: Option<Arc<Precompiled>>,
    /// The user-defined pieces, in id order, and their trie.
    user_defined: Vec<String>,
    user_trie: Option<Trie>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
    /// Each ASCII char's rule, so that most prefixes need no trie walk.
    ascii: Vec<Ascii>,
    /// Each ASCII char's class for the run loop: [`COPY`] or [`SPACE`], with [`ASCII_NEXT`],
    /// or 0 (ask `prefix`).
    fast: [u8; 128],
    /// The widest range of ASCII bytes, around "a", whose `fast` class is [`COPY`] (with or
    /// without [`ASCII_NEXT`]), or an empty one: eight bytes are checked at once against it.
    copy_range: (u8, u8),
    /// Each char of the Basic Multilingual Plane by code point: for chars of two or three
    /// bytes, [`COPY`] with [`EXT_NEXT`], or 0 (ask `prefix`), or [`UNCLASSED`] until first
    /// seen (classed then: most maps list few of the 63,488 chars, and a text uses few of
    /// them); for any char, [`EXTENDS`]. Shared by clones.
    wide: Arc<[AtomicU8]>,
}

/// An ASCII char that normalizes to itself (and is not a space).
const COPY: u8 = 1;
/// An ASCII char that normalizes to " ".
const SPACE: u8 = 2;
/// ... only when the next char is ASCII (or there is none): some longer key starts with this
/// char, and only with a non-ASCII char after it (as letters and combining marks in an NFKC
/// map).
const ASCII_NEXT: u8 = 4;
/// A char of two or three bytes that normalizes to itself unless an [`EXTENDS`] char follows
/// it: the chars that can follow it in a longer key are all marked so.
const EXT_NEXT: u8 = 8;
/// A char (by code point in [`SpmNormalizer::wide`]) that follows the first char of some
/// longer key of a char classed so far.
const EXTENDS: u8 = 16;
/// A char in [`SpmNormalizer::wide`] not classed yet.
const UNCLASSED: u8 = 0x80;
/// The most chars one char's longer keys may go on with for [`EXT_NEXT`]; a char with more
/// is left to `prefix`.
const MAX_EXTENSIONS: usize = 64;

/// What an ASCII char normalizes to alone, and when that is the answer.
#[derive(Clone, Debug)]
struct Ascii {
    alone: Box<str>,
    /// Some key is longer and starts with this char (then with another ASCII char too, when
    /// `then_ascii`): only the walk knows. Both set when user-defined pieces exist.
    longer: bool,
    then_ascii: bool,
}

impl PartialEq for SpmNormalizer {
    fn eq(&self, o: &Self) -> bool {
        self.charsmap == o.charsmap
            && self.user_defined == o.user_defined
            && self.add_dummy_prefix == o.add_dummy_prefix
            && self.remove_extra_whitespaces == o.remove_extra_whitespaces
            && self.escape_whitespaces == o.escape_whitespaces
            && self.treat_whitespace_as_suffix == o.treat_whitespace_as_suffix
    }
}

impl SpmNormalizer {
    pub fn new(
        charsmap: Option<Arc<Precompiled>>,
        user_defined: Vec<String>,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
    ) -> Self {
        let user_trie = (!user_defined.is_empty())
            .then(|| Trie::new(user_defined.iter().enumerate().map(|(i, p)| (p.as_bytes(), i as u32))));
        let ascii = (0..128u8)
            .map(|b| {
                let key = [b];
                let alone = match &charsmap {
                    Some(c) => c.longest(&key).map(|(_, r)| r.to_owned()),
                    None => None,
                };
                let user = user_trie.is_some();
                let longer = user || charsmap.as_ref().is_some_and(|c| c.extends(&key));
                let then_ascii = user
                    || charsmap.as_ref().is_some_and(|c| {
                        (1..128u8).any(|x| c.extends(&[b, x]) || c.longest(&[b, x]).is_some_and(|m| m.0 == 2))
                    });
                Ascii { alone: alone.unwrap_or_else(|| (b as char).to_string()).into(), longer, then_ascii }
            })
            .collect::<Vec<Ascii>>();
        let mut fast = [0u8; 128];
        for (b, a) in ascii.iter().enumerate() {
            if a.longer && a.then_ascii {
                continue;
            }
            let next = if a.longer { ASCII_NEXT } else { 0 };
            if &*a.alone == " " {
                fast[b] = SPACE | next;
            } else if b != b' ' as usize && a.alone.as_bytes() == [b as u8] {
                fast[b] = COPY | next;
            }
        }
        let copies = |b: u8| fast[b as usize] & (COPY | SPACE) == COPY;
        let copy_range = if copies(b'a') {
            let lo = (1..=b'a').rev().take_while(|&b| copies(b)).last().unwrap_or(b'a');
            let hi = (b'a'..0x80).take_while(|&b| copies(b)).last().unwrap_or(b'a');
            (lo, hi)
        } else {
            (1, 0)
        };
        SpmNormalizer {
            copy_range,
            charsmap,
            user_defined,
            user_trie,
            add_dummy_prefix,
            remove_extra_whitespaces,
            escape_whitespaces,
            treat_whitespace_as_suffix,
            ascii,
            fast,
            wide: (0..0x10000).map(|_| AtomicU8::new(UNCLASSED)).collect(),
        }
    }

    /// The class of the char `c` (two or three bytes, `bytes` its UTF-8) for the run loop, as
    /// [`SpmNormalizer::wide`] keeps it (with [`EXTENDS`] if set).
    fn wide_class(&self, c: usize, bytes: &[u8]) -> u8 {
        // Acquire: the EXTENDS marks of the chars after `c`'s longer keys were set before its
        // class was published.
        let class = self.wide[c].load(Ordering::Acquire);
        if class & UNCLASSED == 0 {
            return class;
        }
        let class = match (&self.charsmap, &self.user_trie) {
            (Some(map), None) => {
                let alone = map.longest(bytes).is_none_or(|(n, r)| n == bytes.len() && r.as_bytes() == bytes);
                let mut after = Vec::new();
                match (alone, next_chars(map, bytes, &mut after)) {
                    (false, _) | (_, false) => 0,
                    (true, true) if after.is_empty() => COPY,
                    (true, true) => {
                        for &x in &after {
                            self.wide[x as usize].fetch_or(EXTENDS, Ordering::Relaxed);
                        }
                        COPY | EXT_NEXT
                    }
                }
            }
            (None, None) => COPY,
            (_, Some(_)) => 0,
        };
        // Classing again gives the same class: a race between threads only repeats the work.
        self.wide[c].fetch_or(class, Ordering::Relaxed);
        self.wide[c].fetch_and(!UNCLASSED, Ordering::Release) & !UNCLASSED
    }

    /// Whether the char `c` of two or three bytes, classed, normalizes to itself when the char
    /// at byte `next` of `bytes` follows it (not after a guarded char: its EXTENDS mark is not
    /// read). A char of four bytes never extends one.
    #[inline(always)]
    fn copies_before(&self, c: usize, bytes: &[u8], next: usize) -> bool {
        match self.wide[c].load(Ordering::Acquire) & !EXTENDS {
            COPY => true,
            x if x == COPY | EXT_NEXT => {
                let after = match bytes.get(next) {
                    None => return true,
                    Some(&x) if x < 0x80 => x as usize,
                    Some(_) => match wide_char(bytes, next) {
                        Some((x, _)) => x,
                        None => return true,
                    },
                };
                self.wide[after].load(Ordering::Relaxed) & EXTENDS == 0
            }
            _ => false,
        }
    }

    /// The space symbol of the normalized text: "▁", or " " when spaces are not escaped.
    pub fn space(&self) -> char {
        if self.escape_whitespaces {
            SPACE_SYMBOL
        } else {
            ' '
        }
    }

    /// The normalized form of the prefix of `s` (not empty): (its text, bytes consumed).
    #[inline]
    fn prefix<'a>(&'a self, s: &'a str) -> (&'a str, usize) {
        let b = s.as_bytes();
        if let Some(a) = self.ascii.get(b[0] as usize) {
            if !a.longer || (!a.then_ascii && b.get(1).is_none_or(|&x| x < 0x80)) {
                return (&a.alone, 1);
            }
        }
        if let Some((_, n)) = self.user_trie.as_ref().and_then(|t| t.longest(b)) {
            return (&s[..n], n);
        }
        if let Some((n, r)) = self.charsmap.as_ref().and_then(|c| c.longest(b)) {
            return (r, n);
        }
        let n = s.chars().next().map_or(1, char::len_utf8);
        (&s[..n], n)
    }

    /// Normalizes `text` into `out`; with `orig` (the alignment of `text`'s chars, and where to
    /// write one per char of `out`) keeps track of where each char came from: the first
    /// input char of the prefix it was written for (for the dummy prefix, the char it stands
    /// before or, at the end, the last char).
    pub fn run(&self, text: &str, out: &mut String, orig: Option<(&[u32], &mut Vec<u32>)>) {
        self.run_with::<true>(text, out, orig)
    }

    /// [`SpmNormalizer::run`]; with `FAST`, runs of ASCII chars whose rule needs no context
    /// (see [`COPY`], [`SPACE`]) skip the prefix lookup, else every prefix is looked up (the
    /// tests' oracle).
    fn run_with<const FAST: bool>(
        &self,
        text: &str,
        out: &mut String,
        mut orig: Option<(&[u32], &mut Vec<u32>)>,
    ) {
        let space = self.space();
        let mut at = 0;
        // The input char at byte `at`.
        let mut ci = 0;
        if self.remove_extra_whitespaces {
            while at < text.len() {
                let (r, n) = self.prefix(&text[at..]);
                if r != " " {
                    break;
                }
                ci += char_count(&text[at..at + n]);
                at += n;
            }
        }
        if at == text.len() {
            return;
        }
        #[inline(always)]
        fn push(out: &mut String, orig: &mut Option<(&[u32], &mut Vec<u32>)>, c: char, ci: usize) {
            // The space symbol as a constant: three known bytes written, not an encode and a
            // copy of a length known only at run time.
            if c == SPACE_SYMBOL {
                out.push(SPACE_SYMBOL);
            } else {
                out.push(c);
            }
            if let Some((from, to)) = orig.as_mut() {
                to.push(from[ci.min(from.len() - 1)]);
            }
        }
        if self.add_dummy_prefix && !self.treat_whitespace_as_suffix {
            push(out, &mut orig, space, ci);
        }
        let mut prev_space = self.remove_extra_whitespaces;
        let bytes = text.as_bytes();
        // The class of the ASCII char at `i`, if its rule applies there.
        let class = |i: usize| {
            let c = self.fast[bytes[i] as usize];
            let next_ok = c & ASCII_NEXT == 0 || bytes.get(i + 1).is_none_or(|&x| x < 0x80);
            if next_ok {
                c & (COPY | SPACE)
            } else {
                0
            }
        };
        while at < text.len() {
            if FAST {
                // A run of chars that normalize to themselves whatever follows them.
                let (mut end, mut chars) = (at, 0);
                // The start of the run's last char when it is EXT_NEXT: it stays in the run
                // only if the char after it is not EXTENDS.
                let mut guarded = None;
                while end < bytes.len() {
                    let b = bytes[end];
                    if b < 0x80 && guarded.is_none() {
                        if class(end) != COPY {
                            break;
                        }
                        end += 1;
                        chars += 1;
                        // Then up to eight bytes in the copy range at once; the last of them
                        // only if what follows it cannot extend it.
                        if let Some(w) = bytes.get(end..end + 8) {
                            let n = copy_prefix(u64::from_le_bytes(w.try_into().unwrap()), self.copy_range);
                            if n > 0 {
                                let last = self.fast[bytes[end + n - 1] as usize];
                                let next_ok =
                                    last & ASCII_NEXT == 0 || bytes.get(end + n).is_none_or(|&x| x < 0x80);
                                let n = if next_ok { n } else { n - 1 };
                                end += n;
                                chars += n;
                            }
                        }
                        continue;
                    }
                    if b >= 0xC0 && guarded.is_none() {
                        // Then chars of two or three bytes that copy whatever follows them
                        // (EXTENDS matters only after a guarded char), and those that copy unless
                        // the next char extends them (Arabic's alef, waw and yeh; kana before a
                        // voicing mark) when it does not: a table load or two each, each length
                        // with a decode of its own (a sixth of Arabic's normalizing time).
                        let start = end;
                        while let Some(&b0) = bytes.get(end) {
                            let (c, n) = if b0 & 0xE0 == 0xC0 {
                                let Some(&b1) = bytes.get(end + 1) else { break };
                                (((b0 & 0x1F) as usize) << 6 | (b1 & 0x3F) as usize, 2)
                            } else if b0 & 0xF0 == 0xE0 {
                                let Some(&[b1, b2]) = bytes.get(end + 1..end + 3) else { break };
                                let c = ((b0 & 0x0F) as usize) << 12 | ((b1 & 0x3F) as usize) << 6;
                                (c | (b2 & 0x3F) as usize, 3)
                            } else {
                                break;
                            };
                            if !self.copies_before(c, bytes, end + n) {
                                break;
                            }
                            end += n;
                            chars += 1;
                        }
                        if end > start {
                            continue;
                        }
                    }
                    let (class, n) = if b < 0x80 {
                        let extends =
                            guarded.is_some() && self.wide[b as usize].load(Ordering::Relaxed) & EXTENDS != 0;
                        (u8::from(class(end) == COPY) | if extends { EXTENDS } else { 0 }, 1)
                    } else {
                        match wide_char(bytes, end) {
                            Some((c, n)) => (self.wide_class(c, &bytes[end..end + n]), n),
                            // Four bytes: never copied here, and never EXTENDS.
                            None => (0, 0),
                        }
                    };
                    if let Some(last) = guarded {
                        if class & EXTENDS != 0 {
                            end = last;
                            chars -= 1;
                            break;
                        }
                    }
                    if class & COPY == 0 {
                        break;
                    }
                    guarded = (class & EXT_NEXT != 0).then_some(end);
                    end += n;
                    chars += 1;
                }
                let from = at;
                if end > at {
                    out.push_str(&text[at..end]);
                    if let Some((from, to)) = orig.as_mut() {
                        to.extend_from_slice(&from[ci..ci + chars]);
                    }
                    ci += chars;
                    at = end;
                    prev_space = false;
                }
                // The spaces after the run, here rather than a loop round each.
                while at < bytes.len() && bytes[at] < 0x80 && class(at) == SPACE {
                    // The prefix " ": dropped after a space when extra spaces go.
                    if !prev_space {
                        push(out, &mut orig, space, ci);
                    }
                    prev_space = self.remove_extra_whitespaces;
                    ci += 1;
                    at += 1;
                }
                if at > from {
                    continue;
                }
            }
            let (mut r, n) = self.prefix(&text[at..]);
            if prev_space {
                r = r.trim_start_matches(' ');
            }
            if !r.is_empty() {
                for c in r.chars() {
                    push(out, &mut orig, if c == ' ' { space } else { c }, ci);
                }
                prev_space = r.ends_with(' ');
            }
            ci += char_count(&text[at..at + n]);
            at += n;
            if !self.remove_extra_whitespaces {
                prev_space = false;
            }
        }
        if self.remove_extra_whitespaces {
            while out.ends_with(space) {
                out.pop();
                if let Some((_, to)) = orig.as_mut() {
                    to.pop();
                }
            }
        }
        if self.add_dummy_prefix && self.treat_whitespace_as_suffix {
            push(out, &mut orig, space, ci);
        }
    }

    pub fn normalize_str(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + text.len() / 4 + 4);
        self.run(text, &mut out, None);
        out
    }

    pub fn apply(&self, t: &AlignedText) -> AlignedText {
        let mut out = AlignedText { text: String::with_capacity(t.text.len() + 8), orig: Vec::new() };
        self.run(&t.text, &mut out.text, Some((&t.orig, &mut out.orig)));
        out
    }
}

/// How many of the eight bytes of `x` (little-endian), from the first, lie in `range` (ASCII).
#[inline(always)]
fn copy_prefix(x: u64, (lo, hi): (u8, u8)) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = ONES << 7;
    if lo > hi {
        return 0;
    }
    // In a lane below 0x80, adding 0x80 - lo sets its high bit iff the byte is >= lo, adding
    // 0x7F - hi iff it is > hi, and neither carries. A lane of 0x80 or more may carry into the
    // next one, but it ends the prefix first.
    let at_least = x.wrapping_add(ONES * (0x80 - lo) as u64);
    let above = x.wrapping_add(ONES * (0x7F - hi) as u64);
    let inside = at_least & !above & !x & HIGHS;
    ((!inside & HIGHS).trailing_zeros() / 8) as usize
}

/// Collects into `after` the code points of the chars that follow `prefix` in the longer keys
/// of `map`; false when one of them is not a char of one to three bytes, or there are more than
/// [`MAX_EXTENSIONS`].
fn next_chars(map: &Precompiled, prefix: &[u8], after: &mut Vec<u32>) -> bool {
    let mut key = prefix.to_vec();
    let mut ok = true;
    let mut firsts = Vec::new();
    map.next_bytes(&key, |b| firsts.push(b));
    for b in firsts {
        let len = match b {
            0x00..=0x7F => 1,
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => return false,
        };
        // Every way the char's remaining bytes go on in the trie.
        let mut chars = vec![vec![b]];
        for _ in 1..len {
            let mut longer = Vec::new();
            for c in &chars {
                key.truncate(prefix.len());
                key.extend_from_slice(c);
                map.next_bytes(&key, |x| {
                    let mut c = c.clone();
                    c.push(x);
                    longer.push(c);
                });
            }
            chars = longer;
        }
        for c in chars {
            match std::str::from_utf8(&c).ok().and_then(|s| s.chars().next()) {
                Some(ch) if after.len() < MAX_EXTENSIONS => after.push(ch as u32),
                _ => ok = false,
            }
        }
    }
    ok
}

#[inline(always)]
fn char_count(s: &str) -> usize {
    if s.len() == 1 {
        1
    } else {
        s.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(n: &SpmNormalizer, s: &str) -> String {
        n.normalize_str(s)
    }

    #[test]
    fn whitespace_rules() {
        let n = SpmNormalizer::new(None, vec![], true, true, true, false);
        assert_eq!(norm(&n, "  a  b  "), "▁a▁b");
        assert_eq!(norm(&n, "   "), "");
        assert_eq!(norm(&n, ""), "");
        // Input "▁" at the end goes too.
        assert_eq!(norm(&n, "a ▁"), "▁a");
        let kept = SpmNormalizer::new(None, vec![], true, false, true, false);
        assert_eq!(norm(&kept, "  a  "), "▁▁▁a▁▁");
        let plain = SpmNormalizer::new(None, vec![], false, true, false, false);
        assert_eq!(norm(&plain, " a  b "), "a b");
        let suffix = SpmNormalizer::new(None, vec![], true, true, true, true);
        assert_eq!(norm(&suffix, "a b "), "a▁b▁");
    }

    #[test]
    fn user_defined_pieces_pass_unchanged() {
        let n = SpmNormalizer::new(None, vec!["a  b".into()], true, true, true, false);
        assert_eq!(norm(&n, "a  b  c"), "▁a▁▁b▁c");
    }

    #[test]
    fn alignment_points_at_the_prefix_read() {
        let n = SpmNormalizer::new(None, vec![], true, true, true, false);
        let t = n.apply(&AlignedText::new("  ab  c "));
        assert_eq!(t.text, "▁ab▁c");
        assert_eq!(t.orig, [2, 2, 3, 4, 6]);
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;
    use crate::testing::Rng;

    fn built_charsmap(rules: &[(&str, &str)]) -> Arc<Precompiled> {
        Arc::new(Precompiled::from_rules(rules))
    }

    /// Normalizes random texts of `parts` both ways (the run loop's fast paths against the
    /// prefix walk, alignment included) under every whitespace flag, with and without `map`
    /// and the user-defined pieces `user`; then hands each normalizer with `map` and without
    /// user-defined pieces to `check` (the others class no char for the fast paths).
    fn fast_matches_plain(
        map: &Arc<Precompiled>,
        user: &[&str],
        parts: &[&str],
        seed: u64,
        check: impl Fn(&SpmNormalizer),
    ) {
        let mut rng = Rng(seed);
        for flags in 0..16u32 {
            for map in [None, Some(map.clone())] {
                for user in [vec![], user.iter().map(|&u| u.to_owned()).collect()] {
                    let n = SpmNormalizer::new(
                        map.clone(),
                        user,
                        flags & 1 != 0,
                        flags & 2 != 0,
                        flags & 4 != 0,
                        flags & 8 != 0,
                    );
                    for _ in 0..300 {
                        let text: String = (0..rng.below(12)).map(|_| rng.pick(parts)).collect();
                        let from: Vec<u32> = (0..text.chars().count() as u32).map(|i| i * 3 + 1).collect();
                        let (mut fast, mut plain) = (String::new(), String::new());
                        let (mut fast_orig, mut plain_orig) = (Vec::new(), Vec::new());
                        n.run_with::<true>(&text, &mut fast, Some((&from, &mut fast_orig)));
                        n.run_with::<false>(&text, &mut plain, Some((&from, &mut plain_orig)));
                        assert_eq!((&fast, &fast_orig), (&plain, &plain_orig), "{text:?} flags {flags}");
                    }
                    if n.user_trie.is_none() && n.charsmap.is_some() {
                        check(&n);
                    }
                }
            }
        }
    }

    #[test]
    fn ascii_runs_match_the_prefix_walk() {
        // One-byte keys, "ab", and "e" and " " followed by U+0301 (0xCC 0x81).
        let map = built_charsmap(&[
            ("a", "x"),
            ("c", ""),
            ("\t", " "),
            ("\n", " "),
            ("A", "a"),
            ("Z", "  "),
            ("_", " q"),
            ("q", "q"),
            (" ", " "),
            ("e", "e"),
            ("ab", "yz"),
            ("e\u{301}", "É"),
            (" \u{301}", "É"),
        ]);
        let parts = [
            " ", " ", "  ", "\t", "\n", "\r", "a", "b", "c", "A", "Z", "_", "q", "x", "ab", "é", "▁", "東",
            "😀", "hello", "a b", "e", "\u{301}", "e\u{301}",
        ];
        fast_matches_plain(&map, &["a b", "q"], &parts, 0x9E37_79B9_7F4A_7C15, |n| {
            // Each kind of rule is there to be tested.
            assert_eq!(n.fast[b'e' as usize], COPY | ASCII_NEXT);
            assert_eq!(n.fast[b' ' as usize], SPACE | ASCII_NEXT);
            assert_eq!(n.fast[b'\t' as usize], SPACE);
            assert_eq!(n.fast[b'q' as usize], COPY);
            assert_eq!(n.fast[b'a' as usize], 0);
        });
    }

    #[test]
    fn ascii_blocks_match_the_prefix_walk() {
        // "a" copies, so eight bytes are checked at once; "e" starts a longer key.
        let map = built_charsmap(&[("e\u{301}", "É"), ("\t", " "), (" ", " "), ("Z", "z"), ("}", "")]);
        let parts = [
            "e",
            "\u{301}",
            "e\u{301}",
            "hello",
            "abcdefghijklm",
            "Z",
            "}",
            " ",
            "\t",
            "é",
            "東",
            "😀",
            "q",
            "~\u{7F}",
        ];
        fast_matches_plain(&map, &["ee"], &parts, 0x3C6E_F372_FE94_F82B, |n| {
            assert_eq!(n.copy_range, (b'[', b'|'));
            assert_eq!(n.fast[b'e' as usize], COPY | ASCII_NEXT);
        });
    }

    #[test]
    fn copy_prefix_counts_the_leading_bytes_in_range() {
        let mut rng = Rng(0x6A09_E667_F3BC_C908);
        let bytes = [0x00, 0x01, 0x20, 0x21, 0x40, 0x60, 0x61, 0x7A, 0x7E, 0x7F, 0x80, 0xC3, 0xE2, 0xFF];
        let ranges = [(1, 0), (0x61, 0x61), (0x21, 0x7E), (0x01, 0x7F), (0x30, 0x7A), (0x41, 0x60)];
        for _ in 0..20_000 {
            let w: [u8; 8] = std::array::from_fn(|_| rng.pick(&bytes));
            for &(lo, hi) in &ranges {
                let plain = w.iter().take_while(|&&b| b < 0x80 && (lo..=hi).contains(&b)).count();
                assert_eq!(copy_prefix(u64::from_le_bytes(w), (lo, hi)), plain, "{w:x?} in {lo:x}..={hi:x}");
            }
        }
    }

    #[test]
    fn wide_runs_match_the_prefix_walk() {
        let map = built_charsmap(&[
            ("a", "x"),
            (" ", " "),
            ("\u{3000}", " "),
            ("é\u{301}", "É"),
            ("и\u{306}", "й"),
            ("ñ", "n"),
            ("東x", "y"),
            ("ß", "ss"),
            ("ab", "yz"),
            ("か\u{3099}", "が"),
            ("ア\u{3099}\u{3099}", "ヴ"),
            ("ü\u{7FF}", "u"),
            ("ы!", "y"),
            ("ё😀", "e"),
            ("\u{FFFF}\u{800}\u{3099}", ""),
        ]);
        assert_eq!(map.longest("ñ".as_bytes()), Some((2, "n")));
        assert_eq!(map.longest("и\u{306}!".as_bytes()), Some((4, "й")));
        let parts = [
            "é",
            "\u{301}",
            "é\u{301}",
            "ñ",
            "東",
            "東x",
            "x",
            "и",
            "и\u{306}",
            "\u{306}",
            "a",
            " ",
            "  ",
            "▁",
            "😀",
            "ß",
            "ab",
            "\u{3000}",
            "q",
            "ü",
            "\u{7FF}",
            "\u{800}",
            "\u{FFFF}",
            "か",
            "\u{3099}",
            "か\u{3099}",
            "ア",
            "ア\u{3099}",
            "ア\u{3099}\u{3099}",
            "ё",
            "😀",
            "ё😀",
            "\u{FFFF}\u{800}",
            "ы",
            "ы!",
            "!",
        ];
        fast_matches_plain(&map, &["é"], &parts, 0x2545_F491_4F6C_DD1D, |n| {
            // Each class was met above.
            let class = |c: char| n.wide[c as usize].load(Ordering::Relaxed) & !EXTENDS;
            let extends = |c: char| n.wide[c as usize].load(Ordering::Relaxed) & EXTENDS != 0;
            for c in ['é', 'и', 'ü', 'ы', '東', 'か', 'ア', '\u{FFFF}'] {
                assert_eq!(class(c), COPY | EXT_NEXT, "{c:?}");
            }
            assert_eq!([class('▁'), class('\u{3099}'), class('\u{7FF}')], [COPY; 3]);
            assert_eq!([class('ñ'), class('ß'), class('\u{3000}'), class('ё')], [0; 4]);
            for c in ['\u{301}', '\u{306}', 'x', '!', '\u{3099}', '\u{7FF}', '\u{800}'] {
                assert!(extends(c), "{c:?}");
            }
            assert!(!extends('か') && !extends('a') && !extends('b'));
        });
    }
}
