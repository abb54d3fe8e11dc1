//! [`Encoding`]: what an encode returns, as in the reference: ids, tokens, offsets, masks,
//! word and sequence ids, overflowing parts; and the edits post-processing, truncation and
//! padding make to it.

use std::sync::Arc;

use super::{Direction, Padding};
use crate::error::{Error, Result};
use crate::fused::bert_words::{linear_base, OrigCursor};
use crate::models::wordpiece::SubToken;

/// The token texts of an [`Encoding`]. Nearly every token's text is the vocabulary's
/// text for its id, so only a shared handle on the vocabulary is kept and texts are looked
/// up when asked for; the few that differ (added tokens, padding, template tokens, or every
/// token when a vocabulary repeats ids) are kept by position. Building an Encoding thus
/// costs no string and no reference count per token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenTexts {
    pub(crate) vocab: Option<Arc<Vec<Arc<str>>>>,
    /// (position, text), ascending by position.
    pub(crate) overrides: Vec<(u32, Arc<str>)>,
}

/// What a run of consecutive tokens shares: type id, sequence, special-token and attention
/// flags. An input's tokens all share one, so an Encoding keeps these four fields as a few
/// runs instead of four vectors of one entry per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Attr {
    pub(crate) type_id: u32,
    /// Which input (0 or 1): one byte keeps a run at 12 bytes.
    pub(crate) seq: Option<u8>,
    pub(crate) special: bool,
    pub(crate) attention: bool,
}

/// `words` entry of a token that belongs to no word (special tokens, padding).
pub(crate) const NO_WORD: u32 = u32::MAX;

/// What an [`Encoding`] keeps per token: 16 bytes, written with one push.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tok {
    pub(crate) id: u32,
    /// Offsets in chars of the input.
    pub(crate) start: u32,
    pub(crate) end: u32,
    /// Index of the word (pre-token) the token came from; [`NO_WORD`] for special tokens.
    pub(crate) word: u32,
}

/// The output of an encode, as in the reference: one entry per token of each field.
/// Offsets are in chars of the input (for a pair, each sequence's own input).
///
/// Only what differs from token to token is stored per token (id, offsets, word index, in
/// one vector); type ids, sequence ids and the two masks are runs. Each field is expanded
/// when asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoding {
    pub(crate) toks: Vec<Tok>,
    pub(crate) texts: TokenTexts,
    /// (token count, what those tokens share), in token order; the counts add up to the
    /// token count (once [`Encoding::fill_sequence`] has run).
    pub(crate) runs: Runs,
    /// Inputs encoded (1, or 2 for a pair; 0 before post-processing, counted as 1).
    pub(crate) n_seq: u8,
    /// What truncation cut off, as the reference gives it: windows of the input (with
    /// `stride` tokens repeated), post-processed and padded like the main part.
    pub(crate) overflowing: Vec<Encoding>,
}

/// A run of [`Encoding::runs`]: a token count and what those tokens share.
pub(crate) type Run = (u32, Attr);

/// Runs an Encoding keeps in place; more go to the heap. One input with its template's
/// special tokens takes 3 (`[CLS]`, text, `[SEP]`): short calls allocate nothing here. (A pair
/// takes 5; more in place would make every Encoding bigger, and it is moved several times.)
const RUNS_INLINE: usize = 3;

/// The runs of an [`Encoding`]: a vector that keeps up to [`RUNS_INLINE`] runs in place.
#[derive(Clone, Debug)]
pub(crate) enum Runs {
    Inline(u8, [Run; RUNS_INLINE]),
    Heap(Vec<Run>),
}

const NO_RUN: Run = (0, Attr { type_id: 0, seq: None, special: false, attention: false });

impl Default for Runs {
    fn default() -> Self {
        Runs::Inline(0, [NO_RUN; RUNS_INLINE])
    }
}

impl PartialEq for Runs {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Runs {}

impl std::ops::Deref for Runs {
    type Target = [Run];
    #[inline]
    fn deref(&self) -> &[Run] {
        match self {
            Runs::Inline(n, a) => &a[..*n as usize],
            Runs::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for Runs {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Run] {
        match self {
            Runs::Inline(n, a) => &mut a[..*n as usize],
            Runs::Heap(v) => v,
        }
    }
}

impl Runs {
    #[inline]
    pub(crate) fn push(&mut self, r: Run) {
        match self {
            Runs::Inline(n, a) if (*n as usize) < RUNS_INLINE => {
                a[*n as usize] = r;
                *n += 1;
            }
            Runs::Inline(_, a) => {
                let mut v = Vec::with_capacity(2 * RUNS_INLINE);
                v.extend_from_slice(a);
                v.push(r);
                *self = Runs::Heap(v);
            }
            Runs::Heap(v) => v.push(r),
        }
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        match self {
            Runs::Inline(n, _) => *n = (*n).min(len as u8),
            Runs::Heap(v) => v.truncate(len),
        }
    }

    /// Puts `front` before the runs there are.
    pub(crate) fn insert_front(&mut self, front: &[Run]) {
        let old = std::mem::take(self);
        for r in front.iter().chain(old.iter()) {
            self.push(*r);
        }
    }
}

impl Encoding {
    pub fn len(&self) -> usize {
        self.toks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.toks.is_empty()
    }

    /// The id of every token.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.toks.iter().map(|t| t.id)
    }

    /// (start, end) of every token in chars of its input; (0, 0) for special tokens.
    pub fn offsets(&self) -> impl ExactSizeIterator<Item = (u32, u32)> + '_ {
        self.toks.iter().map(|t| (t.start, t.end))
    }

    /// Each token's value of `f`, expanded from the runs.
    pub(crate) fn per_token<T: Clone + 'static>(
        &self,
        f: fn(&Attr) -> T,
    ) -> impl ExactSizeIterator<Item = T> + '_ {
        debug_assert_eq!(self.covered(), self.len());
        let it = self.runs.iter().flat_map(move |(n, a)| std::iter::repeat_n(f(a), *n as usize));
        ExactIter { it, left: self.len() }
    }

    /// The segment (type) id of every token.
    pub fn type_ids(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.per_token(|a| a.type_id)
    }

    /// Which input each token came from (0 or 1); None for special tokens.
    pub fn sequence_ids(&self) -> impl ExactSizeIterator<Item = Option<u32>> + '_ {
        self.per_token(|a| a.seq.map(u32::from))
    }

    /// 1 for special tokens (template tokens, padding), else 0.
    pub fn special_tokens_mask(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.per_token(|a| a.special as u32)
    }

    /// 0 for padding, else 1.
    pub fn attention_mask(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.per_token(|a| a.attention as u32)
    }

    /// Index of the word (pre-token) each token came from; None for special tokens.
    pub fn word_ids(&self) -> impl ExactSizeIterator<Item = Option<u32>> + '_ {
        self.toks.iter().map(|t| (t.word != NO_WORD).then_some(t.word))
    }

    /// How many inputs were encoded: 2 for a pair (even an empty one), else 1.
    pub fn n_sequences(&self) -> usize {
        (self.n_seq as usize).max(1)
    }

    /// The tokens of input `seq` (a range, empty when it has none); every token when there
    /// is no input `seq`, as the reference does.
    pub fn sequence_range(&self, seq: usize) -> std::ops::Range<usize> {
        if seq >= self.n_sequences() {
            return 0..self.len();
        }
        let (mut at, mut range) = (0usize, None::<std::ops::Range<usize>>);
        for &(n, a) in self.runs.iter() {
            let end = at + n as usize;
            if a.seq.map(usize::from) == Some(seq) {
                range = Some(range.map_or(at..end, |r| r.start..end));
            }
            at = end;
        }
        range.unwrap_or(0..0)
    }

    /// The input (0 or 1) token `t` came from; None for special tokens, padding and past the end.
    pub fn token_to_sequence(&self, t: usize) -> Option<usize> {
        let mut at = 0usize;
        for &(n, a) in self.runs.iter() {
            at += n as usize;
            if t < at {
                return a.seq.map(usize::from);
            }
        }
        None
    }

    /// (start, end) in chars of its input of token `t`, when it belongs to an input.
    pub fn token_to_chars(&self, t: usize) -> Option<(u32, u32)> {
        self.token_to_sequence(t)?;
        self.toks.get(t).map(|k| (k.start, k.end))
    }

    /// The word of its input token `t` came from, when it belongs to an input.
    pub fn token_to_word(&self, t: usize) -> Option<u32> {
        self.token_to_sequence(t)?;
        self.toks.get(t).map(|k| k.word).filter(|&w| w != NO_WORD)
    }

    /// The token of input `seq` whose chars hold char `pos` of that input.
    pub fn char_to_token(&self, pos: usize, seq: usize) -> Option<usize> {
        let r = self.sequence_range(seq);
        let p = pos as u64;
        self.toks
            .get(r.clone())?
            .iter()
            .position(|k| u64::from(k.start) <= p && p < u64::from(k.end))
            .map(|i| r.start + i)
    }

    /// The word of input `seq` that holds char `pos` of that input.
    pub fn char_to_word(&self, pos: usize, seq: usize) -> Option<u32> {
        self.token_to_word(self.char_to_token(pos, seq)?)
    }

    /// The tokens `(first, last + 1)` of word `word` of input `seq`. As the reference, the
    /// search stops at the first token of a later word.
    pub fn word_to_tokens(&self, word: u32, seq: usize) -> Option<(usize, usize)> {
        let r = self.sequence_range(seq);
        let (mut first, mut end) = (None, None);
        for (i, k) in self.toks.get(r.clone())?.iter().enumerate() {
            // A token of no word (NO_WORD) sorts before every word, as None does in the reference.
            let w = (k.word != NO_WORD).then_some(k.word);
            if w > Some(word) {
                break;
            }
            if w == Some(word) {
                first.get_or_insert(i);
                end = Some(i + 1);
            }
        }
        Some((r.start + first?, r.start + end?))
    }

    /// (start, end) in chars of its input of word `word` of input `seq`.
    pub fn word_to_chars(&self, word: u32, seq: usize) -> Option<(u32, u32)> {
        let (a, b) = self.word_to_tokens(word, seq)?;
        Some((self.toks[a].start, self.toks[b - 1].end))
    }

    /// An Encoding from its fields, one entry per token each (as the getters give them):
    /// what unpickling builds. Token texts are all kept by position.
    #[allow(clippy::too_many_arguments)]
    pub fn from_fields(
        ids: &[u32],
        type_ids: &[u32],
        tokens: &[String],
        offsets: &[(u32, u32)],
        words: &[Option<u32>],
        sequence_ids: &[Option<u32>],
        special_tokens_mask: &[u32],
        attention_mask: &[u32],
        n_sequences: usize,
        overflowing: Vec<Encoding>,
    ) -> Result<Encoding> {
        let n = ids.len();
        let lens = [
            type_ids.len(),
            tokens.len(),
            offsets.len(),
            words.len(),
            sequence_ids.len(),
            special_tokens_mask.len(),
            attention_mask.len(),
        ];
        if lens.iter().any(|&l| l != n) {
            return Err(Error::Input(format!(
                "an Encoding's fields must have one entry per token ({n} ids, then {lens:?})"
            )));
        }
        if n_sequences > 2 || sequence_ids.iter().flatten().any(|&s| s > 1) {
            return Err(Error::Input("an Encoding has at most 2 sequences".into()));
        }
        let mut e = Encoding { n_seq: n_sequences as u8, overflowing, ..Default::default() };
        for i in 0..n {
            e.toks.push(Tok {
                id: ids[i],
                start: offsets[i].0,
                end: offsets[i].1,
                word: words[i].unwrap_or(NO_WORD),
            });
            e.texts.overrides.push((i as u32, Arc::from(tokens[i].as_str())));
            let a = Attr {
                type_id: type_ids[i],
                seq: sequence_ids[i].map(|s| s as u8),
                special: special_tokens_mask[i] != 0,
                attention: attention_mask[i] != 0,
            };
            e.push_run(1, a);
        }
        Ok(e)
    }

    /// The text of every token.
    pub fn tokens(&self) -> Vec<&str> {
        let mut out = Vec::with_capacity(self.len());
        let mut ov = self.texts.overrides.iter().peekable();
        for (i, id) in self.ids().enumerate() {
            match ov.peek() {
                Some((p, t)) if *p as usize == i => {
                    out.push(&**t);
                    ov.next();
                }
                _ => {
                    out.push(self.texts.vocab.as_ref().and_then(|v| v.get(id as usize)).map_or("", |t| &**t))
                }
            }
        }
        out
    }

    /// Records `text` for the token about to be pushed unless the vocabulary already names it.
    #[inline]
    pub(crate) fn set_text(&mut self, id: u32, text: Option<&Arc<str>>) {
        if let Some(t) = text {
            if !self.names(id, t) {
                self.texts.overrides.push((self.len() as u32, t.clone()));
            }
        }
    }

    /// Whether the vocabulary's text for `id` is `text`.
    #[inline]
    pub(crate) fn names(&self, id: u32, text: &str) -> bool {
        self.texts.vocab.as_ref().and_then(|v| v.get(id as usize)).is_some_and(|v| **v == *text)
    }

    /// Adds `n` tokens sharing `a` to the runs (merged into the last run when equal).
    pub(crate) fn push_run(&mut self, n: usize, a: Attr) {
        if n == 0 {
            return;
        }
        match self.runs.last_mut() {
            Some((k, last)) if *last == a => *k += n as u32,
            _ => self.runs.push((n as u32, a)),
        }
    }

    /// Tokens the runs cover.
    pub(crate) fn covered(&self) -> usize {
        self.runs.iter().map(|r| r.0 as usize).sum()
    }

    /// Pushes a special (template) token.
    pub(crate) fn push_special(&mut self, id: u32, text: &Arc<str>, type_id: u32) {
        self.push_token(id, Some(text), (0, 0), NO_WORD);
        self.push_run(1, Attr { type_id, seq: None, special: true, attention: true });
    }

    /// Pushes the per-token fields only; [`Encoding::fill_sequence`] adds the rest. `text`
    /// is None when the token's text is the vocabulary's for `id`.
    #[inline(always)]
    pub(crate) fn push_token(&mut self, id: u32, text: Option<&Arc<str>>, offsets: (u32, u32), word: u32) {
        self.set_text(id, text);
        self.toks.push(Tok { id, start: offsets.0, end: offsets.1, word });
    }

    /// Pushes the pieces `subs` of word `word` whose chars came from `orig`, when their
    /// texts are the vocabulary's. Chars from consecutive input chars (the common case) make
    /// a plain copy.
    #[inline(always)]
    pub(crate) fn push_pieces(&mut self, subs: &[SubToken], orig: crate::fused::bert_words::Orig, word: u32) {
        match linear_base(orig) {
            Some(base) => self.toks.extend(subs.iter().map(|s| Tok {
                id: s.id,
                start: base.wrapping_add(s.char_start as u32),
                end: base.wrapping_add(s.char_end as u32),
                word,
            })),
            None => {
                let mut at = OrigCursor::new(orig);
                self.toks.extend(subs.iter().map(|s| Tok {
                    id: s.id,
                    start: at.at(s.char_start),
                    end: at.at(s.char_end - 1) + 1,
                    word,
                }));
            }
        }
    }

    /// Gives the tokens pushed since the runs last covered them the type id, sequence and
    /// masks of an input's tokens: all tokens of one input share them.
    pub(crate) fn fill_sequence(&mut self, type_id: u32, seq: u32) {
        let n = self.len() - self.covered();
        self.push_run(n, Attr { type_id, seq: Some(seq as u8), special: false, attention: true });
    }

    /// The overflowing parts, each an Encoding of its own.
    pub fn overflowing(&self) -> &[Encoding] {
        &self.overflowing
    }

    /// Gives token `i` the sequence `seq[i]` (None: no input), keeping its other attributes.
    pub(crate) fn set_sequences(&mut self, seq: &[Option<u8>]) {
        debug_assert_eq!(seq.len(), self.len());
        let runs = std::mem::take(&mut self.runs);
        let mut at = 0usize;
        for &(n, a) in runs.iter() {
            for &s in &seq[at..at + n as usize] {
                self.push_run(1, Attr { seq: s, ..a });
            }
            at += n as usize;
        }
    }

    /// Makes every token a plain, attended one (not special), of type `type_id` when given: what
    /// BERT and RoBERTa make of an input they put special tokens around.
    pub(crate) fn set_plain(&mut self, type_id: Option<u32>) {
        for (_, a) in self.runs.iter_mut() {
            a.special = false;
            a.attention = true;
            if let Some(t) = type_id {
                a.type_id = t;
            }
        }
        self.merge_runs();
    }

    /// Trims each token's offsets of the spaces its text starts and ends with (`Ġ`, the
    /// byte-level char of a space, or any white space), as the reference's ByteLevel
    /// post-processor does: a char of offset per char of text, the start never past the end.
    /// With `add_prefix_space`, a first token (the first, or one whose offsets start at 0)
    /// that starts with exactly one space keeps it: it is the space the pre-tokenizer added.
    pub(crate) fn trim_offsets(&mut self, add_prefix_space: bool) {
        fn is_space(c: char) -> bool {
            c == '\u{120}' || c.is_whitespace()
        }
        let Encoding { toks, texts, .. } = self;
        let mut overrides = texts.overrides.iter().peekable();
        for (i, t) in toks.iter_mut().enumerate() {
            let text = match overrides.next_if(|(p, _)| *p as usize == i) {
                Some((_, text)) => &**text,
                None => texts.vocab.as_ref().and_then(|v| v.get(t.id as usize)).map_or("", |s| &**s),
            };
            if !text.starts_with(is_space) && !text.ends_with(is_space) {
                continue;
            }
            let lead = text.chars().take_while(|&c| is_space(c)).count() as u32;
            let trail = text.chars().rev().take_while(|&c| is_space(c)).count() as u32;
            if lead > 0 {
                let first = i == 0 || t.start == 0;
                let lead = if first && add_prefix_space && lead == 1 { 0 } else { lead };
                t.start = t.start.saturating_add(lead).min(t.end);
            }
            if trail > 0 && t.end >= trail {
                t.end = (t.end - trail).max(t.start);
            }
        }
    }

    /// Gives every token the type id `t` (the template's, for a sequence).
    pub(crate) fn set_type_ids(&mut self, t: u32) {
        if self.runs.iter().any(|r| r.1.type_id != t) {
            self.runs.iter_mut().for_each(|r| r.1.type_id = t);
            self.merge_runs();
        }
    }

    /// Puts `other`'s tokens after this one's.
    pub(crate) fn append(&mut self, other: Encoding) {
        if self.toks.is_empty() && self.texts.overrides.is_empty() && self.runs.is_empty() {
            let vocab = self.texts.vocab.take();
            *self = other;
            if self.texts.vocab.is_none() {
                self.texts.vocab = vocab;
            }
            return;
        }
        let shift = self.len() as u32;
        if self.texts.vocab.is_none() {
            self.texts.vocab = other.texts.vocab.clone();
        }
        self.texts.overrides.extend(other.texts.overrides.into_iter().map(|(p, t)| (p + shift, t)));
        self.toks.extend(other.toks);
        for (n, a) in other.runs.iter() {
            self.push_run(*n as usize, *a);
        }
    }

    /// Puts the special token `id` (text `text`, type id `type_id`) before every token: for
    /// a template's leading token, so that an input's tokens are moved once, not copied.
    pub(crate) fn prepend_special(&mut self, id: u32, text: &Arc<str>, type_id: u32) {
        self.texts.overrides.iter_mut().for_each(|(p, _)| *p += 1);
        if !self.names(id, text) {
            self.texts.overrides.insert(0, (0, text.clone()));
        }
        self.toks.insert(0, Tok { id, start: 0, end: 0, word: NO_WORD });
        self.runs.insert_front(&[(1, Attr { type_id, seq: None, special: true, attention: true })]);
        self.merge_runs();
    }

    /// Merges neighbouring runs that share their attributes.
    pub(crate) fn merge_runs(&mut self) {
        let r = &mut *self.runs;
        let mut w = 0;
        for i in 0..r.len() {
            if i > 0 && r[w].1 == r[i].1 {
                r[w].0 += r[i].0;
            } else {
                if i > 0 {
                    w += 1;
                }
                r[w] = r[i];
            }
        }
        let kept = if r.is_empty() { 0 } else { w + 1 };
        self.runs.truncate(kept);
    }

    /// Keeps the tokens in `r` (every field).
    pub(crate) fn keep_range(&mut self, r: std::ops::Range<usize>) {
        let first = r.start as u32;
        self.texts.overrides.retain(|(p, _)| r.contains(&(*p as usize)));
        self.texts.overrides.iter_mut().for_each(|(p, _)| *p -= first);
        self.toks.truncate(r.end);
        self.toks.drain(..r.start);
        let runs = std::mem::take(&mut self.runs);
        let mut at = 0usize;
        for &(n, a) in runs.iter() {
            let (s, e) = (at.max(r.start), (at + n as usize).min(r.end));
            if s < e {
                self.push_run(e - s, a);
            }
            at += n as usize;
        }
    }

    pub(crate) fn truncate_to(&mut self, n: usize) {
        self.keep_range(0..n.min(self.len()));
    }

    /// Keeps the first (`Right`) or last (`Left`) `n` tokens. The reference refuses (it
    /// panics) when the overflow windows would not advance: a stride of `n` or more.
    pub(crate) fn truncate(&mut self, n: usize, stride: usize, direction: Direction) -> Result<()> {
        let len = self.len();
        if n >= len {
            return Ok(());
        }
        if n == 0 {
            // The reference keeps the whole input as the one overflowing part.
            let whole = std::mem::replace(
                self,
                Encoding {
                    texts: TokenTexts { vocab: self.texts.vocab.clone(), overrides: Vec::new() },
                    ..Default::default()
                },
            );
            self.overflowing.push(whole);
            return Ok(());
        }
        if stride >= n {
            return Err(Error::Input(format!(
                "truncation stride ({stride}) must be strictly less than the length a sequence is truncated to ({n}): \
                 the overflowing windows would not advance"
            )));
        }
        // Windows of n tokens, each starting n - stride after the last (Right) or ending
        // n - stride before it (Left), until one reaches the end; the first is kept, the
        // others overflow.
        let step = n - stride;
        let mut windows = Vec::new();
        match direction {
            Direction::Right => {
                let mut start = 0;
                loop {
                    let stop = (start + n).min(len);
                    windows.push(start..stop);
                    if stop == len {
                        break;
                    }
                    start += step;
                }
            }
            Direction::Left => {
                let mut stop = len;
                loop {
                    let start = stop.saturating_sub(n);
                    windows.push(start..stop);
                    if start == 0 || stop <= step {
                        break;
                    }
                    stop -= step;
                }
            }
        }
        let mut over: Vec<Encoding> = windows[1..]
            .iter()
            .map(|r| {
                let mut part = Encoding {
                    toks: Vec::new(),
                    texts: self.texts.clone(),
                    runs: self.runs.clone(),
                    n_seq: self.n_seq,
                    overflowing: Vec::new(),
                };
                part.toks.extend_from_slice(&self.toks[..r.end]);
                part.keep_range(r.clone());
                part
            })
            .collect();
        self.keep_range(windows[0].clone());
        self.overflowing.clear();
        self.overflowing.append(&mut over);
        Ok(())
    }

    pub(crate) fn pad(&mut self, target: usize, p: &Padding) {
        for o in &mut self.overflowing {
            o.pad(target, p);
        }
        let len = self.len();
        if len >= target {
            return;
        }
        let n = target - len;
        let d = p.direction;
        let named = self.names(p.pad_id, &p.pad_token);
        let new_positions = match d {
            Direction::Right => len..target,
            Direction::Left => {
                self.texts.overrides.iter_mut().for_each(|(q, _)| *q += n as u32);
                0..n
            }
        };
        if !named {
            let pads = new_positions.map(|q| (q as u32, p.pad_token.clone()));
            match d {
                Direction::Right => self.texts.overrides.extend(pads),
                Direction::Left => {
                    self.texts.overrides.splice(0..0, pads);
                }
            }
        }
        let pad = std::iter::repeat_n(Tok { id: p.pad_id, start: 0, end: 0, word: NO_WORD }, n);
        let a = Attr { type_id: p.pad_type_id, seq: None, special: true, attention: false };
        match d {
            Direction::Right => {
                self.toks.extend(pad);
                self.push_run(n, a);
            }
            Direction::Left => {
                self.toks.splice(0..0, pad);
                self.runs.insert_front(&[(n as u32, a)]);
                self.merge_runs();
            }
        }
    }
}

/// An iterator that knows its length (a `flat_map` over runs does not).
pub(crate) struct ExactIter<I> {
    pub(crate) it: I,
    pub(crate) left: usize,
}

impl<I: Iterator> Iterator for ExactIter<I> {
    type Item = I::Item;
    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        let x = self.it.next()?;
        self.left -= 1;
        Some(x)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: Iterator> ExactSizeIterator for ExactIter<I> {}
