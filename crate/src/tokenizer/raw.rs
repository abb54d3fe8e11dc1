//! Texts encoded by their raw stretches (natively): for SentencePiece-converted pipelines, a
//! text is cut at spaces that its char map leaves alone (for a normalizer that sees nothing
//! across a space, at every space), and each part is looked up by its raw bytes in the
//! model's cache; only parts not seen before are normalized. The ids are the staged
//! pipeline's (tested against it in `staged_ids_tests`).

use std::borrow::Cow;

use super::Tokenizer;
use crate::error::{Error, Result};
use crate::models::unigram::Unigram;
use crate::models::Model;
use crate::normalizers::precompiled::Precompiled;
use crate::normalizers::replace::ReplacePattern;
use crate::normalizers::{Lead, Normalizer};
use crate::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use crate::pre_tokenizers::PreTokenizer;

/// The spaces of a raw text that are grapheme clusters of their own under a SentencePiece char
/// map: the text cut at one maps as its two sides do alone.
struct SpaceCuts<'a> {
    raw: &'a str,
    map: &'a Precompiled,
}

impl SpaceCuts<'_> {
    /// Whether the space at `i` is a cluster of its own (ASCII next to it always is).
    #[inline]
    fn alone(&self, i: usize) -> bool {
        let (raw, bytes) = (self.raw, self.raw.as_bytes());
        let wide = |b: Option<&u8>| b.is_some_and(|&b| b >= 0x80);
        (!wide(i.checked_sub(1).and_then(|j| bytes.get(j)))
            || raw[..i].chars().next_back().is_none_or(|c| self.map.leaves_space_alone(c, false)))
            && (!wide(bytes.get(i + 1))
                || raw[i + 1..].chars().next().is_none_or(|c| self.map.leaves_space_alone(c, true)))
    }

    /// The first such space at or after `from`.
    fn next(&self, mut from: usize) -> Option<usize> {
        let bytes = self.raw.as_bytes();
        loop {
            match crate::simd::find_byte_near(&bytes[from..], b' ') {
                Some(k) if self.alone(from + k) => return Some(from + k),
                Some(k) => from += k + 1,
                None => return None,
            }
        }
    }

    /// The last such space before `end`.
    fn prev(&self, mut end: usize) -> Option<usize> {
        let bytes = self.raw.as_bytes();
        loop {
            match memchr::memrchr(b' ', &bytes[..end]) {
                Some(k) if self.alone(k) => return Some(k),
                Some(k) => end = k,
                None => return None,
            }
        }
    }
}

/// The low bits of the owner of the model's cache of raw stretches: the pipeline's shape (the
/// rest names its map and matcher).
const OWNER_WORDS: u64 = 0;
const OWNER_PIECES: u64 = 1;
const OWNER_SPACED: u64 = 2;

/// Tags of a text's parts in the model's cache of raw stretches (see
/// [`Unigram::raw_pieces_ids`]): the pieces of the text's first and last stretch depend on
/// where they stand.
const MIDDLE: u8 = 0;
const HEAD: u8 = 0xF8;
const TAIL: u8 = 0xF9;
const WHOLE: u8 = 0xFA;
/// A shorter text of the bytes file's pipeline, one pre-token, at the input's start or later.
const WORD_FIRST: u8 = 0xFB;
const WORD_LATER: u8 = 0xFC;

/// Appends the pieces' text of a stretch after a cut space as T5's and XLM-R's pipeline makes
/// it from the stretch's mapped text `mapped`: each run of spaces becomes one "▁" (the Replace
/// of two or more, then Metaspace's of one), and the runs at either end join the cut spaces'
/// runs: "▁" before the first word (none for a text of spaces).
fn spaced_pieces(mapped: &str, out: &mut String) {
    let mut words = mapped.split(' ').filter(|w| !w.is_empty());
    if let Some(first) = words.next() {
        out.push('\u{2581}');
        out.push_str(first);
        for w in words {
            out.push('\u{2581}');
            out.push_str(w);
        }
    }
}

impl Tokenizer {
    /// [`Tokenizer::segment_ids_staged`]'s ids by raw stretches, for the pipelines of
    /// [`Tokenizer::raw_pieces_shape`], [`Tokenizer::raw_spaced_shape`] and
    /// [`Tokenizer::raw_words_shape`]; false (nothing appended) where the pipeline is another
    /// or a part of the text cannot be told alone.
    pub(super) fn segment_ids_raw(&self, raw: &str, char_start: usize, ids: &mut Vec<u32>) -> Result<bool> {
        if let Some((p, u)) = self.raw_pieces_shape() {
            return self.pieces_ids_raw(raw, p, u, ids);
        }
        if let Some(u) = self.raw_spaced_shape() {
            return self.spaced_ids_raw(raw, u, ids);
        }
        if raw.len() < crate::models::cache::MAX_WORD {
            return self.word_ids_raw(raw, char_start, ids);
        }
        self.words_ids_raw(raw, char_start, ids)
    }

    /// [`Tokenizer::segment_ids_raw`] of a shorter text for the pipeline of
    /// [`Tokenizer::raw_words_shape`]: the text is one pre-token, cached by its raw bytes (and
    /// whether it starts the input: Metaspace's "first" asks) with the ids the plain pipeline
    /// finds for it. Cutting it at spaces took longer (a line of text: 27 against 21 ms for
    /// 7,372 lines of Hebrew, through the model's cache of pre-tokens).
    fn word_ids_raw(&self, raw: &str, char_start: usize, ids: &mut Vec<u32>) -> Result<bool> {
        let Some((p, _, u)) = self.raw_words_shape() else { return Ok(false) };
        let (owner, tag) =
            (p.cache_id() << 2 | OWNER_WORDS, if char_start == 0 { WORD_FIRST } else { WORD_LATER });
        if u.raw_text_ids(raw, tag, owner, ids) {
            return Ok(true);
        }
        let at = ids.len();
        if !self.segment_ids_plain(raw, char_start, ids, &mut Vec::new())? {
            return Ok(false);
        }
        u.cache_raw_text(raw, tag, owner, &ids[at..]);
        Ok(true)
    }

    /// The pipeline [`Tokenizer::words_ids_raw`] serves: SentencePiece's char
    /// map keeping the space, then spaces replaced by "▁", a Metaspace that keeps the text
    /// whole, and a Unigram model whose lattice falls apart before each "▁"
    /// ([`Unigram::raw_words_ids`]).
    pub(super) fn raw_words_shape(&self) -> Option<(&Precompiled, &Metaspace, &Unigram)> {
        if self.normalized_matcher.is_some() {
            return None;
        }
        let Some(PreTokenizer::Metaspace(m)) = &self.pre_tokenizer else { return None };
        let Some(Normalizer::Sequence(v)) = &self.normalizer else { return None };
        let [Normalizer::Precompiled(p), Normalizer::Replace(r)] = &v[..] else { return None };
        let Model::Unigram(u) = &self.model else { return None };
        let spaces = matches!(&r.pattern, ReplacePattern::String(s) if s == " ") && r.content == "\u{2581}";
        let whole = !m.split && m.replacement == '\u{2581}';
        let keeps_space = p.keeps_space();
        (spaces && whole && keeps_space && u.model.fuses_by_word()).then_some((p, m, &u.model))
    }

    /// [`Tokenizer::segment_ids_raw`] for the pipeline of [`Tokenizer::raw_words_shape`]: the
    /// text up to its first space (after a non-space) normalized as a whole, then each stretch
    /// between spaces alone, cut only at spaces that are clusters of their own (so the map
    /// sees each stretch as it does in the text, and the space becomes "▁"). False (nothing
    /// appended) where the pipeline is another or the text has no such space.
    fn words_ids_raw(&self, raw: &str, char_start: usize, ids: &mut Vec<u32>) -> Result<bool> {
        let Some((p, m, u)) = self.raw_words_shape() else { return Ok(false) };
        let Some(n) = &self.normalizer else { return Ok(false) };
        let bytes = raw.as_bytes();
        let cuts = SpaceCuts { raw, map: p };
        let spaces = bytes.iter().take_while(|&&b| b == b' ').count();
        let Some(cut) = cuts.next(spaces) else { return Ok(false) };
        let mut lead = if char_start == 0 { Lead::One } else { Lead::Later };
        let Some(head) = n.plain_text(raw[..cut].to_owned(), &mut lead) else { return Ok(false) };
        // Metaspace prepends by the text's first char, which is the head's unless it is empty.
        if head.is_empty() || (m.prepend_scheme == PrependScheme::First && matches!(lead, Lead::Unknown)) {
            return Ok(false);
        }
        let starts_input = matches!(lead, Lead::One | Lead::Some);
        let mut piece = String::new();
        m.pieces_plain(&head, starts_input, &mut String::new(), |s| {
            piece.push_str(s);
            Ok::<(), Error>(())
        })?;
        let mut at = cut;
        let stretches = std::iter::from_fn(|| {
            // `at` is a cut space (or the end): the stretch after it runs to the next cut.
            let start = at + 1;
            (start <= bytes.len()).then(|| {
                at = cuts.next(start).unwrap_or(bytes.len());
                &raw[start..at]
            })
        });
        let normalize = |stretch: &str, out: &mut String| {
            out.push('\u{2581}');
            let text = n.plain_text(stretch.to_owned(), &mut Lead::Later);
            out.push_str(&text.expect("a literal Replace inserts nothing at the start"));
        };
        // Each byte maps to at most the longest replacement, each of its spaces to 3 bytes.
        let len_bound = raw.len().saturating_mul(3 * p.longest_replacement().max(1)).saturating_add(3);
        ids.reserve(raw.len() / 3 + 1); // as encode_single's guess
        u.raw_words_ids(&piece, stretches, len_bound, p.cache_id() << 2 | OWNER_WORDS, normalize, ids)?;
        Ok(true)
    }

    /// The pipeline [`Tokenizer::pieces_ids_raw`] serves: SentencePiece's char map keeping the
    /// space, Strip of the right end, runs of two or more spaces replaced by "▁", then a
    /// Metaspace that always prepends "▁" and splits before each (T5's and XLM-R's files, as
    /// `transformers`' converter writes them).
    pub(super) fn raw_pieces_shape(&self) -> Option<(&Precompiled, &Unigram)> {
        let Some(PreTokenizer::Metaspace(m)) = &self.pre_tokenizer else { return None };
        let Some(Normalizer::Sequence(v)) = &self.normalizer else { return None };
        let [Normalizer::Precompiled(p), Normalizer::Strip { left: false, right: true }, Normalizer::Replace(r)] =
            &v[..]
        else {
            return None;
        };
        let Model::Unigram(u) = &self.model else { return None };
        let runs = matches!(&r.pattern, ReplacePattern::Regex(s) if s == " {2,}") && r.content == "\u{2581}";
        let split = m.split && m.replacement == '\u{2581}' && m.prepend_scheme == PrependScheme::Always;
        let keeps_space = p.keeps_space();
        // A token matched in normalized text with neither a space nor "▁" (XLM-R's "<mask>")
        // lies within one stretch's mapped text, if anywhere.
        (runs && split && keeps_space && self.tokens_apart()).then_some((p, &u.model))
    }

    /// Whether `mapped` (normalized text) holds a token matched in normalized text.
    fn holds_normalized_token(&self, mapped: &str) -> bool {
        self.normalized_matcher.as_ref().is_some_and(|m| m.find_at(mapped, 0).is_some())
    }

    /// Whether each token matched in normalized text has neither a space nor "▁" (as XLM-R's
    /// "<mask>"): a match lies within one stretch's mapped text, if anywhere.
    fn tokens_apart(&self) -> bool {
        let apart =
            |t: &super::AddedToken| !t.decode_text().is_empty() && !t.decode_text().contains([' ', '▁']);
        self.normalized_matcher.is_none() || self.added.iter().filter(|t| t.normalized).all(apart)
    }

    /// The pipeline [`Tokenizer::spaced_ids_raw`] serves: a normalizer that maps a text cut at
    /// a space as it maps the two sides ([`Normalizer::separable_at_spaces`]), or none, then a
    /// Metaspace that always prepends "▁" and splits before each.
    pub(super) fn raw_spaced_shape(&self) -> Option<&Unigram> {
        let Some(PreTokenizer::Metaspace(m)) = &self.pre_tokenizer else { return None };
        let Model::Unigram(u) = &self.model else { return None };
        let split = m.split && m.replacement == '\u{2581}' && m.prepend_scheme == PrependScheme::Always;
        let separable = self.normalizer.as_ref().is_none_or(Normalizer::separable_at_spaces);
        (split && separable && self.tokens_apart()).then_some(&u.model)
    }

    /// [`Tokenizer::segment_ids_raw`] for the pipeline of [`Tokenizer::raw_spaced_shape`]: each
    /// space of the text becomes a "▁" that starts a piece, so the text is its head (up to its
    /// first space: Metaspace prepends "▁" unless it maps to a text that starts with a space
    /// or "▁") and the stretches after spaces, each looked up by its raw bytes. A token
    /// matched in normalized text, or a normalizer that cannot tell a stretch's text alone,
    /// hands the text back to the staged pipeline.
    fn spaced_ids_raw(&self, raw: &str, u: &Unigram, ids: &mut Vec<u32>) -> Result<bool> {
        let matcher = self.normalized_matcher.as_ref();
        let bytes = raw.as_bytes();
        let head = memchr::memchr(b' ', bytes).unwrap_or(raw.len());
        let mut at = head;
        // A stretch runs from after a space to the next space after a non-space: the rest of
        // a run of spaces (indentation) stays with the word after it, one lookup.
        let stretches = std::iter::from_fn(|| {
            (at < raw.len()).then(|| {
                let start = at + 1;
                let word = start + bytes[start..].iter().take_while(|&&b| b == b' ').count();
                at = memchr::memchr(b' ', &bytes[word..]).map_or(raw.len(), |k| word + k);
                (&raw[start..at], MIDDLE)
            })
        });
        let parts = std::iter::once((&raw[..head], HEAD)).chain(stretches);
        // An ASCII stretch (most words of most text) then maps to itself: no copy per step.
        let keeps_ascii = self.normalizer.as_ref().is_none_or(Normalizer::leaves_ascii_alone);
        let normalize = |stretch: &str, part: u8, out: &mut String| {
            let mapped = match &self.normalizer {
                Some(n) if !(keeps_ascii && stretch.is_ascii()) => {
                    match n.plain_text(stretch.to_owned(), &mut Lead::Later) {
                        Some(mapped) => Cow::Owned(mapped),
                        None => return false,
                    }
                }
                _ => Cow::Borrowed(stretch),
            };
            if self.holds_normalized_token(&mapped) {
                return false;
            }
            if part != HEAD || !(mapped.is_empty() || mapped.starts_with([' ', '\u{2581}'])) {
                out.push('\u{2581}');
            }
            for (i, word) in mapped.split(' ').enumerate() {
                if i > 0 {
                    out.push('\u{2581}');
                }
                out.push_str(word);
            }
            true
        };
        // The model's cache is this pipeline's, but for the matcher: it names the entries,
        // which hold none of its matches.
        let owner = matcher.map_or(0, |m| m.cache_id()) << 2 | OWNER_SPACED;
        ids.reserve(raw.len() / 3 + 1); // as encode_single's guess
        u.raw_pieces_ids(parts, owner, normalize, ids)
    }

    /// [`Tokenizer::segment_ids_raw`] for the pipeline of [`Tokenizer::raw_pieces_shape`]. Its
    /// pieces start at each run of spaces of the mapped text, so a cut space starts the
    /// stretch after it (with the spaces its neighbours map to, one run). Every part of the
    /// text is looked up by its raw bytes: the head up to the first cut (Metaspace prepends
    /// by its first char), the stretches between cuts, and the tail after the last cut that
    /// more than cut spaces follow (it takes the Strip's right end; the spaces after it map
    /// to spaces, which the Strip removes), or the whole text where it has no such cut. A
    /// token matched in normalized text hands the text back to the staged pipeline where a
    /// part's mapped text holds one (a cached part holds none), as does a head that maps to
    /// nothing or a tail that maps to whitespace.
    fn pieces_ids_raw(&self, raw: &str, p: &Precompiled, u: &Unigram, ids: &mut Vec<u32>) -> Result<bool> {
        let matcher = self.normalized_matcher.as_ref();
        let cuts = SpaceCuts { raw, map: p };
        let bytes = raw.as_bytes();
        let spaces = bytes.iter().take_while(|&&b| b == b' ').count();
        let first = cuts.next(spaces);
        let (mut end, mut last) = (bytes.len(), None);
        if let Some(first) = first {
            while let Some(cut) = cuts.prev(end).filter(|&cut| cut >= first) {
                if cut + 1 < end {
                    last = Some(cut);
                    break;
                }
                end = cut;
            }
        }
        let (head, tail) = match (first, last) {
            (Some(first), Some(last)) => ((&raw[..first], HEAD), Some((&raw[last + 1..end], TAIL))),
            _ => ((&raw[..end], WHOLE), None),
        };
        let (mut at, last) = (first.unwrap_or(0), last.unwrap_or(0));
        let middle = std::iter::from_fn(|| {
            (at < last).then(|| {
                let start = at + 1;
                at = cuts.next(start).unwrap_or(last);
                (&raw[start..at], MIDDLE)
            })
        });
        // An empty stretch (between two cut spaces) joins their runs: no piece.
        let middle = middle.filter(|(stretch, _)| !stretch.is_empty());
        let parts = std::iter::once(head).chain(middle).chain(tail);
        let normalize = |stretch: &str, part: u8, out: &mut String| {
            let mapped = p.normalize_plain(stretch);
            if self.holds_normalized_token(&mapped) {
                return false;
            }
            // The Strip's right end, then Metaspace's prepend: "▁" unless the text starts
            // with one (a run of spaces at its start becomes one).
            let kept = match part {
                TAIL | WHOLE => mapped.trim_end(),
                _ => &mapped,
            };
            match part {
                HEAD | WHOLE => {
                    let head = kept.trim_end_matches(' ');
                    if head.is_empty() && part == HEAD {
                        return false;
                    }
                    spaced_pieces(head, out);
                    if head.starts_with('\u{2581}') {
                        out.drain(..'\u{2581}'.len_utf8());
                    }
                }
                TAIL if kept.is_empty() => return false,
                _ => spaced_pieces(kept, out),
            }
            true
        };
        // Entries hold no match of this matcher: it names them too.
        let owner = (p.cache_id() << 24 ^ matcher.map_or(0, |m| m.cache_id())) << 2 | OWNER_PIECES;
        ids.reserve(raw.len() / 3 + 1); // as encode_single's guess
        u.raw_pieces_ids(parts, owner, normalize, ids)
    }
}
