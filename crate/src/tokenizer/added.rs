//! Added tokens: strings matched in the text before anything else runs, each becoming one
//! id (special tokens such as `[CLS]` or `<|endoftext|>`, and added words such as Qwen's
//! `<think>`), for both model families.
//!
//! Matching is leftmost-longest, as in `tokenizers`. tiktoken's alternation is leftmost-first
//! in hash-map order, which gives the same matches unless one special token is a prefix of
//! another (no shipped encoding has such a pair). For byte-level BPE, where no accepted token
//! starts, the search goes on one byte later, as in tiktoken, so an accepted token inside a
//! refused one is still found.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use aho_corasick::{AhoCorasick, Anchored, Input, MatchKind, StartKind};

use super::Tokenizer;
use crate::{Error, Result};

/// A string that encodes to one id, with the flags of a `tokenizer.json` added token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedToken {
    pub id: u32,
    pub content: Arc<str>,
    /// Only matched where it is not part of a larger word.
    pub single_word: bool,
    /// Takes the whitespace before it (lstrip) or after it (rstrip) along.
    pub lstrip: bool,
    pub rstrip: bool,
    /// Matched in the normalized text (true) or in the raw input (false).
    pub normalized: bool,
    /// Special tokens are dropped by `skip_special_tokens`, and (byte-level BPE) subject to
    /// `allowed_special`; other added tokens are always recognized.
    pub special: bool,
    /// For a `normalized` token whose content the normalizer changes: the normalized
    /// content, which is what is matched and what decoding yields.
    pub normalized_form: Option<Arc<str>>,
}

impl AddedToken {
    /// A token matched in the raw text, as itself, with no stripping.
    pub fn new(content: impl Into<Arc<str>>, id: u32, special: bool) -> AddedToken {
        AddedToken {
            id,
            content: content.into(),
            single_word: false,
            lstrip: false,
            rstrip: false,
            normalized: false,
            special,
            normalized_form: None,
        }
    }

    /// The text decoding (and `id_to_token`) gives for this token.
    pub fn decode_text(&self) -> &Arc<str> {
        self.normalized_form.as_ref().unwrap_or(&self.content)
    }
}

/// A leftmost-longest matcher for a set of added tokens.
#[derive(Clone, Debug)]
pub(crate) struct AddedMatcher {
    ac: AhoCorasick,
    /// Pattern index -> the caller's index of its token.
    which: Vec<usize>,
    /// The patterns' first bytes, when there are at most three and no pattern is empty
    /// (BERT's `[CLS]`, `[SEP]`...; DeepSeek V4's `<｜...｜>` and `｜DSML｜`): every match
    /// starts at one, and a byte search finds them. The automaton's own prefilter looks for
    /// bytes rare in English, which may be common elsewhere: DeepSeek V4's are continuation
    /// bytes of Hangul, ~110 instructions per byte of Korean text.
    first_bytes: Option<FirstBytes>,
    /// Names the matcher in caches of raw text whose entries hold no match of it.
    #[cfg(not(target_arch = "wasm32"))]
    cache_id: u64,
}

/// Up to three bytes to search for at once.
#[derive(Clone, Copy, Debug)]
enum FirstBytes {
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
}

impl FirstBytes {
    /// The distinct first bytes of `patterns`, if there are at most three and none is empty.
    fn of(patterns: &[(&str, usize)]) -> Option<FirstBytes> {
        let mut firsts: Vec<u8> = Vec::new();
        for (p, _) in patterns {
            let b = *p.as_bytes().first()?;
            if !firsts.contains(&b) {
                firsts.push(b);
            }
        }
        Some(match firsts[..] {
            [a] => FirstBytes::One(a),
            [a, b] => FirstBytes::Two(a, b),
            [a, b, c] => FirstBytes::Three(a, b, c),
            _ => return None,
        })
    }

    /// The offset of the first of these bytes in `hay`.
    #[inline]
    fn find(self, hay: &[u8]) -> Option<usize> {
        match self {
            FirstBytes::One(a) => memchr::memchr(a, hay),
            FirstBytes::Two(a, b) => memchr::memchr2(a, b, hay),
            FirstBytes::Three(a, b, c) => memchr::memchr3(a, b, c, hay),
        }
    }
}

/// A match of an [`AddedMatcher`]: byte range and the caller's index of the token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Found {
    pub start: usize,
    pub end: usize,
    pub which: usize,
}

impl AddedMatcher {
    /// A matcher for `patterns` (text, the caller's index); `None` when there are none. An
    /// empty pattern (a `normalized` token the normalizer erases) is kept: as in the
    /// reference, it matches at every byte where nothing longer does.
    pub(crate) fn new<'a>(patterns: impl IntoIterator<Item = (&'a str, usize)>) -> Result<Option<Self>> {
        let pats: Vec<(&str, usize)> = patterns.into_iter().collect();
        if pats.is_empty() {
            return Ok(None);
        }
        // Native only: the page's general module is at its size budget (the byte searches
        // and anchored automaton cost ~0.9 KB), and the page's texts are short.
        let first_bytes = match cfg!(target_arch = "wasm32") {
            true => None,
            false => FirstBytes::of(&pats),
        };
        // Anchored searches, at the first bytes, as well as unanchored ones (`find_iter`).
        let start = if first_bytes.is_some() { StartKind::Both } else { StartKind::Unanchored };
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .start_kind(start)
            .build(pats.iter().map(|(p, _)| p))
            .map_err(|e| Error::Invalid(format!("added tokens: {e}")))?;
        Ok(Some(AddedMatcher {
            ac,
            which: pats.into_iter().map(|(_, i)| i).collect(),
            first_bytes,
            #[cfg(not(target_arch = "wasm32"))]
            cache_id: crate::models::new_owner_id(),
        }))
    }

    /// Names this matcher in caches keyed by raw text (see the field).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn cache_id(&self) -> u64 {
        self.cache_id
    }

    /// [`AddedMatcher::first_bytes`], known to be `None` in wasm (so its searches are left out).
    #[inline(always)]
    fn first_bytes(&self) -> Option<FirstBytes> {
        self.first_bytes.filter(|_| cfg!(not(target_arch = "wasm32")))
    }

    /// False when `text` certainly holds no match.
    #[inline]
    pub(crate) fn may_match(&self, text: &str) -> bool {
        self.first_bytes().is_none_or(|f| f.find(text.as_bytes()).is_some())
    }

    /// The non-overlapping matches in `text`, left to right.
    pub(crate) fn find_iter<'a>(&'a self, text: &'a str) -> impl Iterator<Item = Found> + 'a {
        // With first bytes no pattern is empty, so each match ends where the next search
        // starts (the automaton's iterator also steps past empty matches).
        let mut all = self.first_bytes().is_none().then(|| self.ac.find_iter(text));
        let mut from = 0;
        std::iter::from_fn(move || match &mut all {
            Some(all) => all.next().map(|m| Found {
                start: m.start(),
                end: m.end(),
                which: self.which[m.pattern().as_usize()],
            }),
            None => {
                let found = self.find_at(text, from)?;
                from = found.end;
                Some(found)
            }
        })
    }

    /// The leftmost-longest match starting at or after byte `from`: with first bytes, the
    /// longest match anchored at the first of them where one starts.
    pub(crate) fn find_at(&self, text: &str, from: usize) -> Option<Found> {
        let found = |m: aho_corasick::Match| Found {
            start: m.start(),
            end: m.end(),
            which: self.which[m.pattern().as_usize()],
        };
        let Some(first_bytes) = self.first_bytes() else {
            return self.ac.find(Input::new(text).span(from..text.len())).map(found);
        };
        let mut at = from;
        while let Some(k) = first_bytes.find(&text.as_bytes()[at..]) {
            at += k;
            let input = Input::new(text).span(at..text.len()).anchored(Anchored::Yes);
            if let Some(m) = self.ac.find(input) {
                return Some(found(m));
            }
            at += 1;
        }
        None
    }
}

/// A part of an input: either text for the normalizer and model, or an added token found in it.
pub(crate) struct Segment {
    pub byte_start: usize,
    pub byte_end: usize,
    pub char_start: usize,
    pub added: Option<usize>,
}

impl Tokenizer {
    /// Resolves the added tokens as the reference does when it loads a file: the ids in the
    /// file are not used; a token already in the vocabulary takes that id, a new one takes
    /// the next id after the vocabulary; an exact repeat is dropped; a token matched in
    /// normalized text is stored (for matching and decoding) in its normalized form.
    pub(crate) fn rebuild_added(&mut self) -> Result<()> {
        let listed = std::mem::take(&mut self.added);
        let mut next_id = self.model.vocab_size() as u32;
        let mut by_content: HashMap<Arc<str>, u32> = HashMap::new();
        let mut by_id: BTreeMap<u32, AddedToken> = BTreeMap::new();
        self.special_contents.clear();
        for mut t in listed {
            if t.content.is_empty() {
                continue;
            }
            if let Some(id) = by_content.get(&t.content) {
                if by_id.get(id).is_some_and(|old| {
                    AddedToken { id: old.id, normalized_form: None, ..t.clone() }
                        == AddedToken { normalized_form: None, ..old.clone() }
                }) {
                    continue;
                }
            }
            let id = match by_content.get(&t.content).copied().or_else(|| self.model.token_to_id(&t.content))
            {
                Some(id) => id,
                None => {
                    next_id += 1;
                    next_id - 1
                }
            };
            t.id = id;
            t.normalized_form = None;
            if t.normalized && self.normalizer.is_some() {
                let normed = self.normalize_plain(&t.content);
                if *normed != *t.content {
                    t.normalized_form = Some(normed.into());
                }
            }
            by_content.insert(t.content.clone(), id);
            if t.special {
                self.special_contents.insert(t.content.clone());
            }
            by_id.insert(id, t);
        }
        self.added = by_id.into_values().collect();
        self.added_by_id = self.added.iter().enumerate().map(|(i, a)| (a.id, i)).collect();
        let mut raw = Vec::new();
        let mut norm = Vec::new();
        for (i, a) in self.added.iter().enumerate() {
            if a.normalized {
                // Matched in normalized text, so the pattern is the normalized content.
                norm.push((&**a.decode_text(), i));
            } else {
                raw.push((&*a.content, i));
            }
        }
        let (raw, norm) = (AddedMatcher::new(raw)?, AddedMatcher::new(norm)?);
        self.raw_matcher = raw;
        self.normalized_matcher = norm;
        Ok(())
    }

    /// The added tokens found in `text`, as segments covering all of `text`. Fails where a
    /// token erased by the normalizer would cut `text` inside a character, where the
    /// reference panics.
    pub(crate) fn split_added(&self, m: Option<&AddedMatcher>, text: &str) -> Result<Vec<Segment>> {
        let mut out = Vec::new();
        let mut start = 0usize;
        let mut char_pos = 0usize;
        let mut counted = 0usize; // byte up to which char_pos counts
        let char_at = |b: usize, counted: &mut usize, char_pos: &mut usize| {
            *char_pos += text[*counted..b].chars().count();
            *counted = b;
            *char_pos
        };
        if let Some(m) = m {
            for found in m.find_iter(text) {
                let idx = found.which;
                let tok = &self.added[idx];
                let (mut s, mut e) = (found.start, found.end);
                if !text.is_char_boundary(s) {
                    return Err(Error::Invalid(format!(
                        "added token {:?} is empty once normalized, and so splits the text inside \
                         a character at byte {s} (tokenizers panics here)",
                        tok.content
                    )));
                }
                if tok.single_word {
                    let before_word = text[..s].chars().next_back().is_some_and(crate::unicode::is_word_char);
                    let after_word = text[e..].chars().next().is_some_and(crate::unicode::is_word_char);
                    if before_word || after_word {
                        continue;
                    }
                }
                if tok.lstrip {
                    let trimmed = text[..s].trim_end_matches(char::is_whitespace).len();
                    s = trimmed.max(start);
                }
                if tok.rstrip {
                    e = text.len() - text[e..].trim_start_matches(char::is_whitespace).len();
                }
                if start < s {
                    let cs = char_at(start, &mut counted, &mut char_pos);
                    out.push(Segment { byte_start: start, byte_end: s, char_start: cs, added: None });
                }
                let cs = char_at(s, &mut counted, &mut char_pos);
                out.push(Segment { byte_start: s, byte_end: e, char_start: cs, added: Some(idx) });
                start = e;
            }
        }
        if start < text.len() || out.is_empty() {
            let cs = char_at(start, &mut counted, &mut char_pos);
            out.push(Segment { byte_start: start, byte_end: text.len(), char_start: cs, added: None });
        }
        Ok(out)
    }
}

/// The added tokens of a byte-level BPE tokenizer: split out of the text by id, with
/// tiktoken's choice of which special tokens a call accepts.
#[derive(Default)]
pub(crate) struct AddedTokens {
    tokens: Vec<AddedToken>,
    by_id: HashMap<u32, usize>,
    /// Leftmost-longest, for splitting.
    splitter: Option<AddedMatcher>,
    /// Every occurrence, overlapping ones included, for the disallowed check.
    finder: Option<AhoCorasick>,
}

impl AddedTokens {
    pub fn new(tokens: Vec<AddedToken>) -> Result<AddedTokens> {
        if let Some(t) = tokens.iter().find(|t| t.content.is_empty()) {
            return Err(Error::Invalid(format!("added token {} is empty", t.id)));
        }
        // `id_bound` (and so `n_vocab`) is the largest id plus one, which must fit in a u32.
        if let Some(t) = tokens.iter().find(|t| t.id == u32::MAX) {
            return Err(Error::Invalid(format!(
                "added token {:?}: id {} is too large (at most {})",
                t.content,
                t.id,
                u32::MAX - 1
            )));
        }
        let by_id = tokens.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        let finder = match tokens.is_empty() {
            true => None,
            false => Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(tokens.iter().map(|t| &*t.content))
                    .map_err(|e| Error::Invalid(format!("added tokens: {e}")))?,
            ),
        };
        let splitter = AddedMatcher::new(tokens.iter().enumerate().map(|(i, t)| (&*t.content, i)))?;
        Ok(AddedTokens { splitter, finder, by_id, tokens })
    }

    pub fn tokens(&self) -> &[AddedToken] {
        &self.tokens
    }

    pub fn by_id(&self, id: u32) -> Option<&AddedToken> {
        self.by_id.get(&id).map(|&i| &self.tokens[i])
    }

    pub fn id_bound(&self) -> u32 {
        self.tokens.iter().map(|t| t.id + 1).max().unwrap_or(0)
    }

    /// Walks `text`: `f(start, Some(token))` for each accepted token found at byte `start`,
    /// then `f(text.len(), None)`. The text between consecutive calls is ordinary text.
    pub fn split(
        &self,
        text: &str,
        accept: impl Fn(&AddedToken) -> bool,
        mut f: impl FnMut(usize, Option<&AddedToken>),
    ) {
        if let Some(m) = &self.splitter {
            let mut from = 0;
            while from < text.len() {
                let Some(m) = m.find_at(text, from) else { break };
                let longest = &self.tokens[m.which];
                // The longest accepted token starting here: the longest match itself, or a
                // shorter token it begins with.
                let t = if accept(longest) {
                    Some(longest)
                } else {
                    self.tokens
                        .iter()
                        .filter(|t| text[m.start..].starts_with(&*t.content) && accept(t))
                        .max_by_key(|t| t.content.len())
                };
                match t {
                    Some(t) => {
                        f(m.start, Some(t));
                        from = m.start + t.content.len();
                    }
                    None => from = m.start + 1,
                }
            }
        }
        f(text.len(), None);
    }

    /// Whether every added token is special (tiktoken's): then a call that allows none of
    /// them has nothing to split out.
    pub fn all_special(&self) -> bool {
        self.tokens.iter().all(|t| t.special)
    }

    /// The leftmost special token in `text` that `refused` refuses, with its byte offset.
    pub fn first_special(
        &self,
        text: &str,
        refused: impl Fn(&AddedToken) -> bool,
    ) -> Option<(usize, &AddedToken)> {
        let ac = self.finder.as_ref()?;
        ac.find_overlapping_iter(text)
            .map(|m| (m.start(), &self.tokens[m.pattern().as_usize()]))
            .filter(|(_, t)| t.special && refused(t))
            .min_by_key(|&(start, _)| start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// `find_at` equals a naive leftmost-longest search (the longest pattern at the first
    /// position where any matches), for pattern sets of one to four first bytes, on random
    /// texts of their pieces, from every position; `find_iter` gives the matches `find_at`
    /// finds from the end of the one before (the automaton's iteration); `may_match` is true
    /// wherever there is a match.
    #[test]
    fn find_at_is_leftmost_longest() {
        let sets: &[&[&str]] = &[
            &["[CLS]", "[SEP]", "[MASK]"],
            &["<|a|>", "<|ab|>", "｜DSML｜", "<"],
            &["<a>", "｜x", "ab", "abc"],
            &["<a>", "｜x", "ab", "zz"],
        ];
        let pieces =
            ["<", "a", "b", "c", "|", ">", "<|", "｜", "DSML", "[", "]", "CLS", "SEP", "x", "z", "한", " "];
        let mut r = Rng(0xADDE_D70C);
        for set in sets {
            let pats: Vec<(&str, usize)> = set.iter().enumerate().map(|(i, p)| (*p, i)).collect();
            let m = AddedMatcher::new(pats.iter().copied()).unwrap().unwrap();
            for _ in 0..2000 {
                let text: String = (0..r.below(24)).map(|_| r.pick(&pieces)).collect();
                let naive = |from: usize| {
                    (from..=text.len()).filter(|&i| text.is_char_boundary(i)).find_map(|i| {
                        let longest = set.iter().enumerate().filter(|(_, p)| text[i..].starts_with(**p));
                        longest.max_by_key(|(_, p)| p.len()).map(|(w, p)| (i, i + p.len(), w))
                    })
                };
                for from in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                    let got = m.find_at(&text, from).map(|f| (f.start, f.end, f.which));
                    assert_eq!(got, naive(from), "{set:?} in {text:?} from {from}");
                }
                assert!(m.may_match(&text) || naive(0).is_none(), "{set:?} in {text:?}");
                let mut want = Vec::new();
                let mut from = 0;
                while let Some((a, b, w)) = naive(from) {
                    want.push((a, b, w));
                    from = b;
                }
                let got: Vec<_> = m.find_iter(&text).map(|f| (f.start, f.end, f.which)).collect();
                assert_eq!(got, want, "{set:?} in {text:?}");
            }
        }
    }
}
