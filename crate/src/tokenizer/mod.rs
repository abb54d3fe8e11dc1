//! The pipeline: added tokens → normalizer → pre-tokenizer → model → post-processor,
//! with truncation, padding and decoding, and a trace of every stage for the page.
//!
//! Names follow Hugging Face `tokenizers` so its users feel at home.

pub mod added;
pub mod bpe;
pub mod chat;

use crate::clock::now_micros;
use crate::error::{Error, Result};
use crate::models::wordpiece::{SubToken, WordPiece};
use crate::normalizers::AlignedText;
pub use crate::normalizers::Normalizer;
use crate::pre_tokenizers::{self, Piece};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedToken {
    pub id: u32,
    pub content: Arc<str>,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    /// Matched in the normalized text (true) or in the raw input (false).
    pub normalized: bool,
    pub special: bool,
    /// For a `normalized` token whose content the normalizer changes: the normalized
    /// content, which is what is matched and what decoding yields.
    pub normalized_form: Option<Arc<str>>,
}

impl AddedToken {
    /// The text decoding (and `id_to_token`) gives for this token.
    pub fn decode_text(&self) -> &Arc<str> {
        self.normalized_form.as_ref().unwrap_or(&self.content)
    }
}

#[derive(Clone, Debug)]
pub enum PreTokenizer {
    Bert,
}

#[derive(Clone, Debug)]
pub enum TemplatePiece {
    Special {
        id: String,
        type_id: u32,
    },
    /// `seq` 0 is A, 1 is B.
    Sequence {
        seq: usize,
        type_id: u32,
    },
}

#[derive(Clone, Debug)]
pub struct SpecialTokenDef {
    pub ids: Vec<u32>,
    pub tokens: Vec<Arc<str>>,
}

#[derive(Clone, Debug)]
pub enum PostProcessor {
    Template {
        single: Vec<TemplatePiece>,
        pair: Vec<TemplatePiece>,
        specials: HashMap<String, SpecialTokenDef>,
    },
    Bert {
        sep: (Arc<str>, u32),
        cls: (Arc<str>, u32),
    },
}

#[derive(Clone, Debug)]
pub enum Decoder {
    WordPiece { prefix: String, cleanup: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Direction {
    Left,
    Right,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TruncationStrategy {
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    pub max_length: usize,
    pub stride: usize,
    pub strategy: TruncationStrategy,
    pub direction: Direction,
}

impl Truncation {
    pub fn new(
        max_length: usize,
        stride: usize,
        strategy: TruncationStrategy,
        direction: Direction,
    ) -> Result<Self> {
        Ok(Truncation { max_length, stride, strategy, direction })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaddingStrategy {
    BatchLongest,
    Fixed(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Padding {
    pub strategy: PaddingStrategy,
    pub direction: Direction,
    pub pad_to_multiple_of: Option<usize>,
    pub pad_id: u32,
    pub pad_type_id: u32,
    pub pad_token: Arc<str>,
}

/// The token texts of an [`Encoding`]. Nearly every token's text is the vocabulary's
/// text for its id, so only a shared handle on the vocabulary is kept and texts are looked
/// up when asked for; the few that differ (added tokens, padding, template tokens, or every
/// token when a vocabulary repeats ids) are kept by position. Building an Encoding thus
/// costs no string and no reference count per token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenTexts {
    vocab: Option<Arc<Vec<Arc<str>>>>,
    /// (position, text), ascending by position.
    overrides: Vec<(u32, Arc<str>)>,
}

/// What a run of consecutive tokens shares: type id, sequence, special-token and attention
/// flags. An input's tokens all share one, so an Encoding keeps these four fields as a few
/// runs instead of four vectors of one entry per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Attr {
    type_id: u32,
    /// Which input (0 or 1): one byte keeps a run at 12 bytes.
    seq: Option<u8>,
    special: bool,
    attention: bool,
}

/// `words` entry of a token that belongs to no word (special tokens, padding).
const NO_WORD: u32 = u32::MAX;

/// What an [`Encoding`] keeps per token: 16 bytes, written with one push.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tok {
    id: u32,
    /// Offsets in chars of the input.
    start: u32,
    end: u32,
    /// Index of the word (pre-token) the token came from; [`NO_WORD`] for special tokens.
    word: u32,
}

/// The output of an encode, as in the reference: one entry per token of each field.
/// Offsets are in chars of the input (for a pair, each sequence's own input).
///
/// Only what differs from token to token is stored per token (id, offsets, word index, in
/// one vector); type ids, sequence ids and the two masks are runs. Each field is expanded
/// when asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoding {
    toks: Vec<Tok>,
    texts: TokenTexts,
    /// (token count, what those tokens share), in token order; the counts add up to the
    /// token count (once [`Encoding::fill_sequence`] has run).
    runs: Runs,
    /// Inputs encoded (1, or 2 for a pair; 0 before post-processing, counted as 1).
    n_seq: u8,
    /// What truncation cut off, as the reference gives it: windows of the input (with
    /// `stride` tokens repeated), post-processed and padded like the main part.
    overflowing: Vec<Encoding>,
}

/// A run of [`Encoding::runs`]: a token count and what those tokens share.
type Run = (u32, Attr);

/// Runs an Encoding keeps in place; more go to the heap. One input with its template's
/// special tokens takes 3 ([CLS], text, [SEP]): short calls allocate nothing here. (A pair
/// takes 5; more in place would make every Encoding bigger, and it is moved several times.)
const RUNS_INLINE: usize = 3;

/// The runs of an [`Encoding`]: a vector that keeps up to [`RUNS_INLINE`] runs in place.
#[derive(Clone, Debug)]
enum Runs {
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
    fn push(&mut self, r: Run) {
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

    fn truncate(&mut self, len: usize) {
        match self {
            Runs::Inline(n, _) => *n = (*n).min(len as u8),
            Runs::Heap(v) => v.truncate(len),
        }
    }

    /// Puts `front` before the runs there are.
    fn insert_front(&mut self, front: &[Run]) {
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
    fn per_token<T: Clone + 'static>(&self, f: fn(&Attr) -> T) -> impl ExactSizeIterator<Item = T> + '_ {
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
    fn set_text(&mut self, id: u32, text: Option<&Arc<str>>) {
        if let Some(t) = text {
            if !self.names(id, t) {
                self.texts.overrides.push((self.len() as u32, t.clone()));
            }
        }
    }

    /// Whether the vocabulary's text for `id` is `text`.
    #[inline]
    fn names(&self, id: u32, text: &str) -> bool {
        self.texts.vocab.as_ref().and_then(|v| v.get(id as usize)).is_some_and(|v| **v == *text)
    }

    /// Adds `n` tokens sharing `a` to the runs (merged into the last run when equal).
    fn push_run(&mut self, n: usize, a: Attr) {
        if n == 0 {
            return;
        }
        match self.runs.last_mut() {
            Some((k, last)) if *last == a => *k += n as u32,
            _ => self.runs.push((n as u32, a)),
        }
    }

    /// Tokens the runs cover.
    fn covered(&self) -> usize {
        self.runs.iter().map(|r| r.0 as usize).sum()
    }

    /// Pushes a special (template) token.
    fn push_special(&mut self, id: u32, text: &Arc<str>, type_id: u32) {
        self.push_token(id, Some(text), (0, 0), NO_WORD);
        self.push_run(1, Attr { type_id, seq: None, special: true, attention: true });
    }

    /// Pushes the per-token fields only; [`Encoding::fill_sequence`] adds the rest. `text`
    /// is None when the token's text is the vocabulary's for `id`.
    #[inline(always)]
    fn push_token(&mut self, id: u32, text: Option<&Arc<str>>, offsets: (u32, u32), word: u32) {
        self.set_text(id, text);
        self.toks.push(Tok { id, start: offsets.0, end: offsets.1, word });
    }

    /// Pushes the pieces `subs` of word `word` whose chars came from `orig`, when their
    /// texts are the vocabulary's. Chars from consecutive input chars (the common case) make
    /// a plain copy.
    #[inline(always)]
    fn push_pieces(&mut self, subs: &[SubToken], orig: crate::fused::bert_words::Orig, word: u32) {
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
    fn fill_sequence(&mut self, type_id: u32, seq: u32) {
        let n = self.len() - self.covered();
        self.push_run(n, Attr { type_id, seq: Some(seq as u8), special: false, attention: true });
    }

    /// Sets the input count here and in every overflowing part.
    fn set_n_seq(&mut self, n: u8) {
        self.n_seq = n;
        self.overflowing.iter_mut().for_each(|o| o.set_n_seq(n));
    }

    /// [`Encoding::set_type_ids`] here and in every overflowing part.
    fn set_type_ids_all(&mut self, t: u32) {
        self.set_type_ids(t);
        self.overflowing.iter_mut().for_each(|o| o.set_type_ids_all(t));
    }

    /// The overflowing parts, each an Encoding of its own.
    pub fn overflowing(&self) -> &[Encoding] {
        &self.overflowing
    }

    /// This Encoding without its overflowing parts.
    fn shallow(&self) -> Encoding {
        Encoding {
            toks: self.toks.clone(),
            texts: self.texts.clone(),
            runs: self.runs.clone(),
            n_seq: self.n_seq,
            overflowing: Vec::new(),
        }
    }

    /// `self` followed by `p`, with the overflowing parts the reference's merge gives: each
    /// part of `self` merged with `p` (nesting `p`'s parts), then with each part of `p`, then
    /// `self` (with its parts) merged with each part of `p`.
    fn merged(&self, p: &Encoding) -> Encoding {
        let mut over = Vec::new();
        for so in &self.overflowing {
            over.push(so.merged(p));
            for po in &p.overflowing {
                over.push(so.merged(po));
            }
        }
        for po in &p.overflowing {
            over.push(self.merged(po));
        }
        let mut out = self.shallow();
        out.append(p.shallow());
        out.overflowing = over;
        out
    }

    /// Gives every token the type id `t` (the template's, for a sequence).
    fn set_type_ids(&mut self, t: u32) {
        if self.runs.iter().any(|r| r.1.type_id != t) {
            self.runs.iter_mut().for_each(|r| r.1.type_id = t);
            self.merge_runs();
        }
    }

    /// Puts `other`'s tokens after this one's.
    fn append(&mut self, other: Encoding) {
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
    fn prepend_special(&mut self, id: u32, text: &Arc<str>, type_id: u32) {
        self.texts.overrides.iter_mut().for_each(|(p, _)| *p += 1);
        if !self.names(id, text) {
            self.texts.overrides.insert(0, (0, text.clone()));
        }
        self.toks.insert(0, Tok { id, start: 0, end: 0, word: NO_WORD });
        self.runs.insert_front(&[(1, Attr { type_id, seq: None, special: true, attention: true })]);
        self.merge_runs();
    }

    /// Merges neighbouring runs that share their attributes.
    fn merge_runs(&mut self) {
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
    fn keep_range(&mut self, r: std::ops::Range<usize>) {
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

    fn truncate_to(&mut self, n: usize) {
        self.keep_range(0..n.min(self.len()));
    }

    /// Keeps the first (`Right`) or last (`Left`) `n` tokens. The reference refuses (it
    /// panics) when the overflow windows would not advance: a stride of `n` or more.
    fn truncate(&mut self, n: usize, stride: usize, direction: Direction) -> Result<()> {
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

    fn pad(&mut self, target: usize, p: &Padding) {
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
struct ExactIter<I> {
    it: I,
    left: usize,
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

/// One stage of the trace: its output text, where its chars came from, and how long it took.
#[derive(Clone, Debug, Serialize)]
pub struct StageTrace {
    pub name: &'static str,
    pub text: String,
    pub micros: f64,
    /// The alignment of `text` to the input, run-length encoded: `(first, len, step)` stands
    /// for `len` chars of `text` coming from input chars `first, first + step, ...`
    /// (`step` is 0 or 1). Compact for the common cases: unchanged text is one run, an
    /// expansion (NFD, CJK spacing) a run with step 0.
    pub runs: Vec<(u32, u32, u32)>,
}

/// Appends `orig` (one input char index per output char) to run-length encoded `runs`.
pub fn push_runs(runs: &mut Vec<(u32, u32, u32)>, orig: &[u32]) {
    for &o in orig {
        if let Some((first, len, step)) = runs.last_mut() {
            let last = *first + (*len - 1) * *step;
            if *len == 1 && (o == last || o == last + 1) {
                *step = o - last;
                *len += 1;
                continue;
            }
            if *len > 1 && o == last + *step {
                *len += 1;
                continue;
            }
        }
        runs.push((o, 1, 1));
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PreTokenTrace {
    pub text: String,
    /// Char offsets into the input.
    pub offsets: (u32, u32),
}

/// Everything the page shows about one run of the pipeline on one input.
#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    /// raw, clean, cjk, nfd, strip_accents, lowercase (a disabled step repeats its input).
    pub stages: Vec<StageTrace>,
    /// For each char of the final normalized text, the index of the input char it came from.
    pub alignment: Vec<u32>,
    pub pre_tokens: Vec<PreTokenTrace>,
    pub pre_tokenize_micros: f64,
    pub model_micros: f64,
    pub tokens: Vec<String>,
    pub ids: Vec<u32>,
    pub offsets: Vec<(u32, u32)>,
    pub special_tokens_mask: Vec<u32>,
    /// The whole run, from input to ids.
    pub micros: f64,
    /// What the fast paths did on this input (BERT normalizers only).
    pub fast: Option<FastTrace>,
}

/// The fast paths at work on one input: the normalizer's statistics (blocks skipped,
/// pages hit, zero copy or not) and its time with each fast path switched off in turn.
#[derive(Clone, Debug, Serialize)]
pub struct FastTrace {
    /// The switches in force.
    pub paths: crate::fused::FastPaths,
    /// The vector implementation used: avx2, sse2, simd128, swar or scalar.
    pub kernel: &'static str,
    pub stats: crate::fused::Stats,
    /// (variant, microseconds per run of the normalizer alone), warm: "fast paths on",
    /// "simd off", "page cache off", "lazy output off", "all off (staged)".
    pub normalize_micros: Vec<(&'static str, f64)>,
}

/// A matcher for a set of added tokens: leftmost-longest, as the reference.
#[derive(Clone, Debug)]
struct AddedMatcher {
    ac: AhoCorasick,
    /// Pattern index -> index into `Tokenizer::added`.
    which: Vec<usize>,
    /// The first byte of every pattern, when they all share it (BERT's `[CLS]`, `[SEP]`...):
    /// a text without that byte has no match, which one byte search tells.
    first_byte: Option<u8>,
}

impl AddedMatcher {
    /// False when `text` certainly holds no match.
    #[inline]
    fn may_match(&self, text: &str) -> bool {
        match self.first_byte {
            Some(b) => text.as_bytes().contains(&b),
            None => true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Tokenizer {
    pub normalizer: Option<Normalizer>,
    pub pre_tokenizer: Option<PreTokenizer>,
    pub model: WordPiece,
    pub post_processor: Option<PostProcessor>,
    pub decoder: Option<Decoder>,
    pub added: Vec<AddedToken>,
    pub truncation: Option<Truncation>,
    pub padding: Option<Padding>,
    /// Which fast paths encode and normalize use (all on by default).
    pub fast: crate::fused::FastPaths,
    /// Per-page answers for the BERT normalizer, when there is one.
    cache: Option<crate::normalizers::charmap::PageCache>,
    /// The special-token ids the single-sequence template puts before and after the text.
    template_ids: (Vec<u32>, Vec<u32>),
    raw_matcher: Option<AddedMatcher>,
    normalized_matcher: Option<AddedMatcher>,
    added_by_id: HashMap<u32, usize>,
    /// Contents of the special added tokens (what `skip_special_tokens` drops).
    special_contents: HashSet<Arc<str>>,
}

/// A part of an input: either text for the normalizer and model, or an added token found in it.
struct Segment {
    byte_start: usize,
    byte_end: usize,
    char_start: usize,
    added: Option<usize>,
}

/// Optional observer of the stages, so the trace and the plain encode share one path.
type Observer<'a> = Option<&'a mut dyn FnMut(usize, &'static str, &AlignedText, f64)>;

impl Tokenizer {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        normalizer: Option<Normalizer>,
        pre_tokenizer: Option<PreTokenizer>,
        model: WordPiece,
        post_processor: Option<PostProcessor>,
        decoder: Option<Decoder>,
        added: Vec<AddedToken>,
        truncation: Option<Truncation>,
        padding: Option<Padding>,
    ) -> Result<Self> {
        let mut t = Tokenizer {
            normalizer,
            pre_tokenizer,
            model,
            post_processor,
            decoder,
            added,
            truncation,
            padding,
            fast: crate::fused::FastPaths::default(),
            cache: None,
            template_ids: (Vec::new(), Vec::new()),
            raw_matcher: None,
            normalized_matcher: None,
            added_by_id: HashMap::new(),
            special_contents: HashSet::new(),
        };
        if let Some(Normalizer::Bert(cfg)) = &t.normalizer {
            t.cache = Some(crate::normalizers::charmap::PageCache::new(*cfg));
        }
        t.rebuild_added()?;
        t.template_ids = t.single_template_ids();
        Ok(t)
    }

    pub fn from_json_str(json: &str) -> Result<Self> {
        crate::loaders::tokenizer_json::parse_tokenizer_json(json)
    }

    pub fn from_vocab_txt(text: &str) -> Result<Self> {
        crate::loaders::tokenizer_json::tokenizer_from_vocab_txt(text)
    }

    /// Resolves the added tokens as the reference does when it loads a file: the ids in the
    /// file are not used; a token already in the vocabulary takes that id, a new one takes
    /// the next id after the vocabulary; an exact repeat is dropped; a token matched in
    /// normalized text is stored (for matching and decoding) in its normalized form.
    fn rebuild_added(&mut self) -> Result<()> {
        let listed = std::mem::take(&mut self.added);
        let mut next_id = self.model.vocab.len() as u32;
        let mut by_content: HashMap<Arc<str>, u32> = HashMap::new();
        let mut by_id: std::collections::BTreeMap<u32, AddedToken> = std::collections::BTreeMap::new();
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
            let id = match by_content
                .get(&t.content)
                .copied()
                .or_else(|| self.model.vocab.get(&*t.content).copied())
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
        let build = |pats: Vec<(String, usize)>| -> Result<Option<AddedMatcher>> {
            let pats: Vec<_> = pats.into_iter().filter(|(p, _)| !p.is_empty()).collect();
            if pats.is_empty() {
                return Ok(None);
            }
            let ac = AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostLongest)
                .build(pats.iter().map(|(p, _)| p.as_str()))
                .map_err(|e| Error::Invalid(format!("added tokens: {e}")))?;
            let first = pats[0].0.as_bytes()[0];
            let first_byte = pats.iter().all(|(p, _)| p.as_bytes()[0] == first).then_some(first);
            Ok(Some(AddedMatcher { ac, which: pats.into_iter().map(|(_, i)| i).collect(), first_byte }))
        };
        let mut raw = Vec::new();
        let mut norm = Vec::new();
        for (i, a) in self.added.iter().enumerate() {
            if a.normalized {
                // Matched in normalized text, so the pattern is the normalized content.
                norm.push((a.decode_text().to_string(), i));
            } else {
                raw.push((a.content.to_string(), i));
            }
        }
        self.raw_matcher = build(raw)?;
        self.normalized_matcher = build(norm)?;
        Ok(())
    }

    fn normalize_plain(&self, s: &str) -> String {
        match &self.normalizer {
            Some(n) => n.normalize(s),
            None => s.to_owned(),
        }
    }

    /// The added tokens found in `text`, as segments covering all of `text`.
    fn split_added(&self, m: Option<&AddedMatcher>, text: &str) -> Vec<Segment> {
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
            for mat in m.ac.find_iter(text) {
                let idx = m.which[mat.pattern().as_usize()];
                let tok = &self.added[idx];
                let (mut s, mut e) = (mat.start(), mat.end());
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
        out
    }

    /// Normalizes one raw segment whose first char is input char `char_start`.
    fn normalize_segment(&self, text: &str, char_start: usize, observer: &mut Observer) -> AlignedText {
        let mut input = AlignedText::new(text);
        for o in &mut input.orig {
            *o += char_start as u32;
        }
        match &self.normalizer {
            Some(n) => {
                let mut t0 = now_micros();
                let mut k = 0;
                n.apply(input, &mut |name, t| {
                    let t1 = now_micros();
                    if let Some(obs) = observer.as_mut() {
                        obs(k, name, t, t1 - t0);
                    }
                    k += 1;
                    t0 = now_micros();
                })
            }
            None => input,
        }
    }

    /// The names of the trace's stages after "raw".
    pub fn stage_names(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if let Some(n) = &self.normalizer {
            n.stage_names(&mut v);
        }
        v
    }

    fn pre_tokenize(&self, text: &str, emit: impl FnMut(Piece)) {
        match &self.pre_tokenizer {
            Some(PreTokenizer::Bert) => pre_tokenizers::bert::split(text, emit),
            None => {
                let mut emit = emit;
                if !text.is_empty() {
                    emit(Piece {
                        byte_start: 0,
                        byte_end: text.len(),
                        char_start: 0,
                        char_end: text.chars().count(),
                    });
                }
            }
        }
    }

    /// Encodes one input without post-processing: tokens with their offsets into `text`.
    fn encode_single(
        &self,
        text: &str,
        type_id: u32,
        seq: u32,
        mut observer: Observer,
        mut pre_tokens: Option<&mut Vec<PreTokenTrace>>,
        timings: &mut (f64, f64),
    ) -> Encoding {
        let mut enc = Encoding::default();
        // At most about one token per three bytes (CJK: one per 3-byte char; English ~4.5):
        // one allocation, not a series.
        let guess = text.len() / 3 + 4;
        enc.texts.vocab = Some(self.model.vocab_r.clone());
        enc.toks.reserve(guess);
        let mut word_idx = 0u32;
        let mut scratch = crate::models::wordpiece::Scratch::default();
        let (mut scratch_word, mut subs) = take_scratch();
        // A text that certainly holds no added token is one segment (no matcher pass).
        let matcher = self.raw_matcher.as_ref().filter(|m| m.may_match(text));
        // Without a matcher the text is one segment: no segment list is allocated.
        let (whole, listed) = match matcher {
            None => (
                Some(Segment { byte_start: 0, byte_end: text.len(), char_start: 0, added: None }),
                Vec::new(),
            ),
            Some(m) => (None, self.split_added(Some(m), text)),
        };
        for seg in whole.into_iter().chain(listed) {
            let raw = &text[seg.byte_start..seg.byte_end];
            if let Some(i) = seg.added {
                let n = raw.chars().count() as u32;
                let off = (seg.char_start as u32, seg.char_start as u32 + n);
                if let Some(obs) = observer.as_mut() {
                    // Added tokens skip the normalizer: they appear verbatim in every stage.
                    let mut t = AlignedText::new(raw);
                    for o in &mut t.orig {
                        *o += seg.char_start as u32;
                    }
                    for (k, name) in self.stage_names().into_iter().enumerate() {
                        obs(k, name, &t, 0.0);
                    }
                }
                if let Some(p) = pre_tokens.as_mut() {
                    p.push(PreTokenTrace { text: raw.to_owned(), offsets: off });
                }
                enc.push_token(self.added[i].id, Some(&Arc::from(raw)), off, word_idx);
                word_idx += 1;
                continue;
            }
            if observer.is_none() && pre_tokens.is_none() && self.fused_ok() {
                let cache = self.cache.as_ref().expect("fused_ok checks the cache");
                let mut w = std::mem::take(&mut scratch_word);
                let start_len = enc.len();
                let start_word = word_idx;
                let whole = self.model.ids_name_tokens;
                // The closure is inlined at every place for_each_word hands over a word (as a
                // call it cost ~18 instructions a word; callgrind: en -6M, zh -5M per MB).
                let r = crate::models::wordpiece::word_cache::with_cache(self.model.cache_id, |mut wc| {
                    crate::fused::bert_words::for_each_word(
                        cache,
                        self.fast,
                        raw,
                        seg.char_start as u32,
                        &mut w,
                        None,
                        #[inline(always)]
                        |wd| {
                            // Most words are one vocabulary entry: that case is kept here, small
                            // (as in the ids-only pass), and the rest is a call.
                            // (With ids naming tokens, the unk token is named by its id too.)
                            let id = if wd.ascii {
                                self.model.whole_ascii_word(wd.padded, wd.len)
                            } else {
                                self.model.whole_word_or_unk(wd.padded, wd.len)
                            };
                            match id {
                                Some(id) if whole => {
                                    enc.push_token(id, None, span(wd.orig, 0, wd.n_chars), word_idx)
                                }
                                _ => self.model_view(wd, wc.as_deref_mut(), &mut subs, &mut enc, word_idx),
                            }
                            word_idx += 1;
                        },
                    )
                });
                scratch_word = w;
                if r.is_ok() {
                    continue;
                }
                // A char that canonical reordering may move: redo this segment staged.
                enc.truncate_to(start_len);
                word_idx = start_word;
            }
            let norm = self.normalize_segment(raw, seg.char_start, &mut observer);
            for nseg in self.split_added(self.normalized_matcher.as_ref(), &norm.text) {
                let ntext = &norm.text[nseg.byte_start..nseg.byte_end];
                let orig = &norm.orig[nseg.char_start..nseg.char_start + ntext.chars().count()];
                if orig.is_empty() {
                    continue;
                }
                if let Some(i) = nseg.added {
                    let off = (orig[0], orig[orig.len() - 1] + 1);
                    if let Some(p) = pre_tokens.as_mut() {
                        p.push(PreTokenTrace { text: ntext.to_owned(), offsets: off });
                    }
                    enc.push_token(self.added[i].id, Some(&Arc::from(ntext)), off, word_idx);
                    word_idx += 1;
                    continue;
                }
                let t0 = now_micros();
                let mut pieces = Vec::new();
                self.pre_tokenize(ntext, |p| pieces.push(p));
                let t1 = now_micros();
                timings.0 += t1 - t0;
                for p in pieces {
                    let word = &ntext[p.byte_start..p.byte_end];
                    let worig = &orig[p.char_start..p.char_end];
                    if let Some(pt) = pre_tokens.as_mut() {
                        pt.push(PreTokenTrace {
                            text: word.to_owned(),
                            offsets: (worig[0], worig[worig.len() - 1] + 1),
                        });
                    }
                    self.model_word(
                        word,
                        worig.len(),
                        |k| worig[k],
                        &mut scratch,
                        &mut subs,
                        &mut enc,
                        word_idx,
                    );
                    word_idx += 1;
                }
                timings.1 += now_micros() - t1;
            }
        }
        put_scratch(scratch_word, subs);
        enc.fill_sequence(type_id, seq);
        enc
    }

    /// Whether the fused fast path applies: BERT normalizer (or none is not enough: the
    /// cache is per normalizer), BERT pre-tokenizer, and no added token that must be
    /// matched in normalized text.
    fn fused_ok(&self) -> bool {
        self.fast.fused
            && self.cache.is_some()
            && matches!(self.pre_tokenizer, Some(PreTokenizer::Bert))
            && self.normalized_matcher.is_none()
    }

    /// Runs the model on one word of `n_chars` chars and appends its tokens; `orig(k)` is
    /// the input char of the word's `k`-th char.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn model_word(
        &self,
        word: &str,
        n_chars: usize,
        orig: impl Fn(usize) -> u32,
        scratch: &mut crate::models::wordpiece::Scratch,
        subs: &mut Vec<SubToken>,
        enc: &mut Encoding,
        word_idx: u32,
    ) {
        subs.clear();
        let unk = self.model.tokenize_word(word, n_chars, scratch, subs);
        for s in subs.iter() {
            let off = (orig(s.char_start), orig(s.char_end - 1) + 1);
            if unk {
                enc.push_token(s.id, Some(&self.model.unk_token), off, word_idx);
            } else if self.model.ids_name_tokens {
                enc.push_token(s.id, None, off, word_idx);
            } else {
                enc.push_token(s.id, Some(&self.model.token_text(word, s)), off, word_idx);
            }
        }
    }

    /// [`Tokenizer::model_word`] for a word of the fused path that is not one vocabulary
    /// entry (or whose token texts are not the vocabulary's).
    #[inline(never)]
    fn model_view(
        &self,
        wd: crate::fused::bert_words::WordView,
        wc: Option<&mut crate::models::wordpiece::word_cache::WordCache>,
        subs: &mut Vec<SubToken>,
        enc: &mut Encoding,
        word_idx: u32,
    ) {
        if let (true, Some(c)) = (self.model.ids_name_tokens, wc.as_deref()) {
            // A word seen before: its pieces straight from the cache to the Encoding (what
            // tokenize_cached_not_whole would copy out of the same entry). The unk token is
            // named by its id too (ids name tokens), so an unknown word takes this way as well.
            if wd.len <= crate::models::wordpiece::word_cache::MAX_KEY {
                let key = crate::models::wordpiece::word_cache::Key::new(wd.padded, wd.len);
                if let Some((hit, _)) = c.get(&key, wd.padded) {
                    enc.push_pieces(hit, wd.orig, word_idx);
                    return;
                }
            }
        }
        subs.clear();
        let unk = if self.model.ids_name_tokens {
            // The caller asked whole_word already.
            self.model.tokenize_cached_not_whole(wc, wd.padded, wd.len, wd.n_chars, subs)
        } else {
            self.model.tokenize_cached(wc, wd.padded, wd.len, wd.n_chars, subs)
        };
        if self.model.ids_name_tokens {
            // The unk token's text is its id's (set_text would record nothing).
            enc.push_pieces(subs, wd.orig, word_idx);
            return;
        }
        let mut at = OrigCursor::new(wd.orig);
        for s in subs.iter() {
            let off = (at.at(s.char_start), at.at(s.char_end - 1) + 1);
            if unk {
                enc.push_token(s.id, Some(&self.model.unk_token), off, word_idx);
            } else {
                enc.push_token(s.id, Some(&self.model.token_text(wd.text(), s)), off, word_idx);
            }
        }
    }

    fn added_tokens_count(&self, is_pair: bool) -> usize {
        match &self.post_processor {
            None => 0,
            Some(PostProcessor::Bert { .. }) => {
                if is_pair {
                    3
                } else {
                    2
                }
            }
            Some(PostProcessor::Template { single, pair, specials }) => {
                let t = if is_pair { pair } else { single };
                t.iter()
                    .map(|p| match p {
                        TemplatePiece::Special { id, .. } => specials[id].ids.len(),
                        TemplatePiece::Sequence { .. } => 0,
                    })
                    .sum()
            }
        }
    }

    fn truncate(&self, a: &mut Encoding, b: Option<&mut Encoding>, add_special_tokens: bool) -> Result<()> {
        let Some(tr) = &self.truncation else { return Ok(()) };
        let n_added = if add_special_tokens { self.added_tokens_count(b.is_some()) } else { 0 };
        // The reference subtracts without a check; when the template adds more tokens than
        // max_length allows, its release build wraps around and so never truncates.
        let Some(max_length) = tr.max_length.checked_sub(n_added) else { return Ok(()) };
        let (stride, dir) = (tr.stride, tr.direction);
        let total = a.len() + b.as_ref().map_or(0, |b| b.len());
        if max_length == 0 {
            a.truncate(0, stride, dir)?;
            if let Some(b) = b {
                b.truncate(0, stride, dir)?;
            }
            return Ok(());
        }
        if total <= max_length {
            return Ok(());
        }
        let to_remove = total - max_length;
        match tr.strategy {
            TruncationStrategy::LongestFirst => match b {
                Some(b) => {
                    let (mut n1, mut n2) = (a.len(), b.len());
                    let swap = n1 > n2;
                    if swap {
                        std::mem::swap(&mut n1, &mut n2);
                    }
                    n2 = if n1 > max_length { n1 } else { n1.max(max_length - n1) };
                    if n1 + n2 > max_length {
                        n1 = max_length / 2;
                        n2 = n1 + max_length % 2;
                    }
                    if swap {
                        std::mem::swap(&mut n1, &mut n2);
                    }
                    a.truncate(n1, stride, dir)?;
                    b.truncate(n2, stride, dir)?;
                }
                None => a.truncate(total - to_remove, stride, dir)?,
            },
            TruncationStrategy::OnlyFirst | TruncationStrategy::OnlySecond => {
                let target = if tr.strategy == TruncationStrategy::OnlyFirst {
                    a
                } else {
                    b.ok_or_else(|| Error::Input("truncation error: second sequence not provided".into()))?
                };
                let len = target.len();
                if len > to_remove {
                    target.truncate(len - to_remove, stride, dir)?;
                } else {
                    return Err(Error::Input(
                        "truncation error: sequence to truncate too short to respect the provided max_length"
                            .into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Sets truncation as the reference's `enable_truncation` does, refusing a stride larger
    /// than the room left for text in a single sequence.
    pub fn set_truncation(&mut self, t: Option<Truncation>) -> Result<()> {
        if let Some(tr) = &t {
            let n = self.added_tokens_count(false);
            if let Some(effective) = tr.max_length.checked_sub(n) {
                if effective < tr.stride {
                    return Err(Error::Invalid(format!(
                        "tokenizer stride set to {}, which is greater than or equal to its effective max length of {} \
                         (= {} original max length - {} added special tokens)",
                        tr.stride, effective, tr.max_length, n
                    )));
                }
            }
        }
        self.truncation = t;
        Ok(())
    }

    fn post_process(&self, a: Encoding, b: Option<Encoding>, add_special_tokens: bool) -> Encoding {
        let n_seq = 1 + b.is_some() as u8;
        let overflows = !a.overflowing.is_empty() || b.as_ref().is_some_and(|b| !b.overflowing.is_empty());
        let mut out = if overflows {
            self.post_process_overflowing(a, b, add_special_tokens)
        } else {
            self.post_process_inner(a, b, add_special_tokens)
        };
        out.set_n_seq(n_seq);
        out
    }

    /// Post-processing when truncation left overflowing parts, as the reference does it: the
    /// template's pieces are merged left to right, and each merge pairs every overflowing
    /// part of the left side with the right side and each of its parts, and the left side
    /// with each part of the right (see [`Encoding::merged`]).
    fn post_process_overflowing(
        &self,
        a: Encoding,
        b: Option<Encoding>,
        add_special_tokens: bool,
    ) -> Encoding {
        let vocab = Some(self.model.vocab_r.clone());
        let bare = || Encoding {
            texts: TokenTexts { vocab: vocab.clone(), overrides: Vec::new() },
            ..Default::default()
        };
        let special = |ids: &[u32], toks: &[Arc<str>], type_id: u32| {
            let mut e = bare();
            for (id, t) in ids.iter().zip(toks) {
                e.push_special(*id, t, type_id);
            }
            e
        };
        let pieces: Vec<Encoding> = match &self.post_processor {
            Some(PostProcessor::Template { single, pair, specials }) => {
                let template = if b.is_some() { pair } else { single };
                template
                    .iter()
                    .filter_map(|p| match p {
                        TemplatePiece::Sequence { seq, type_id } => {
                            let s = if *seq == 0 { Some(&a) } else { b.as_ref() };
                            s.map(|s| {
                                let mut s = s.clone();
                                s.set_type_ids_all(*type_id);
                                s
                            })
                        }
                        TemplatePiece::Special { id, type_id } => add_special_tokens
                            .then(|| special(&specials[id].ids, &specials[id].tokens, *type_id)),
                    })
                    .collect()
            }
            Some(PostProcessor::Bert { sep, cls }) if add_special_tokens => {
                let mut v = vec![
                    special(&[cls.1], std::slice::from_ref(&cls.0), 0),
                    a,
                    special(&[sep.1], std::slice::from_ref(&sep.0), 0),
                ];
                if let Some(b) = b {
                    v.push(b);
                    v.push(special(&[sep.1], std::slice::from_ref(&sep.0), 1));
                }
                v
            }
            _ => std::iter::once(a).chain(b).collect(),
        };
        pieces.iter().fold(bare(), |acc, p| acc.merged(p))
    }

    fn post_process_inner(&self, a: Encoding, b: Option<Encoding>, add_special_tokens: bool) -> Encoding {
        match &self.post_processor {
            Some(PostProcessor::Template { single, pair, specials }) => {
                let template = if b.is_some() { pair } else { single };
                if b.is_none() && !add_special_tokens {
                    // One input, no special tokens: only its type id to set.
                    let mut type_ids = template.iter().filter_map(|p| match p {
                        TemplatePiece::Sequence { seq: 0, type_id } => Some(*type_id),
                        _ => None,
                    });
                    if let (Some(t), None) = (type_ids.next(), type_ids.next()) {
                        let mut a = a;
                        a.set_type_ids(t);
                        return a;
                    }
                }
                let mut seqs = [Some(a), b];
                // A sequence used once by the template is moved, not copied.
                let mut uses = [0usize; 2];
                for p in template {
                    if let TemplatePiece::Sequence { seq, .. } = p {
                        uses[*seq] += 1;
                    }
                }
                let mut take = |seq: usize, uses: &mut [usize; 2], type_id: u32| {
                    uses[seq] -= 1;
                    let s = if uses[seq] == 0 { seqs[seq].take() } else { seqs[seq].clone() };
                    s.map(|mut s| {
                        s.set_type_ids(type_id);
                        s
                    })
                };
                // The first sequence becomes the output and the special tokens before it are
                // put in front in place: its tokens move once, within their own buffer, and
                // no Encoding is made per special token.
                let first = template.iter().position(|p| matches!(p, TemplatePiece::Sequence { .. }));
                let (mut out, rest) = match first.map(|i| (i, &template[i])) {
                    Some((i, TemplatePiece::Sequence { seq, type_id })) => {
                        match take(*seq, &mut uses, *type_id) {
                            Some(mut s) => {
                                if add_special_tokens {
                                    for p in template[..i].iter().rev() {
                                        if let TemplatePiece::Special { id, type_id } = p {
                                            let d = &specials[id];
                                            for (id, t) in d.ids.iter().zip(&d.tokens).rev() {
                                                s.prepend_special(*id, t, *type_id);
                                            }
                                        }
                                    }
                                }
                                (s, &template[i + 1..])
                            }
                            None => (Encoding::default(), &template[i + 1..]),
                        }
                    }
                    _ => (Encoding::default(), &template[..]),
                };
                if out.texts.vocab.is_none() {
                    out.texts.vocab = Some(self.model.vocab_r.clone());
                }
                for p in rest {
                    match p {
                        TemplatePiece::Sequence { seq, type_id } => {
                            if let Some(s) = take(*seq, &mut uses, *type_id) {
                                out.append(s);
                            }
                        }
                        TemplatePiece::Special { id, type_id } => {
                            if add_special_tokens {
                                let d = &specials[id];
                                for (id, t) in d.ids.iter().zip(&d.tokens) {
                                    out.push_special(*id, t, *type_id);
                                }
                            }
                        }
                    }
                }
                out
            }
            Some(PostProcessor::Bert { sep, cls }) if add_special_tokens => {
                // [CLS] is put in front of `a` in place: the input's tokens move once
                // (within their own buffers), not into a fresh Encoding.
                let mut out = a;
                out.prepend_special(cls.1, &cls.0, 0);
                out.push_special(sep.1, &sep.0, 0);
                if let Some(b) = b {
                    out.append(b);
                    out.push_special(sep.1, &sep.0, 1);
                }
                out
            }
            _ => {
                let mut out = a;
                if let Some(b) = b {
                    out.append(b);
                }
                out
            }
        }
    }

    /// Encodes `text` (and `pair`) as the reference's `Tokenizer.encode` does, including
    /// truncation and padding as configured.
    pub fn encode(&self, text: &str, pair: Option<&str>, add_special_tokens: bool) -> Result<Encoding> {
        let mut t = (0.0, 0.0);
        let mut a = self.encode_single(text, 0, 0, None, None, &mut t);
        let mut b = pair.map(|p| self.encode_single(p, 1, 1, None, None, &mut t));
        self.truncate(&mut a, b.as_mut(), add_special_tokens)?;
        let mut enc = self.post_process(a, b, add_special_tokens);
        if let Some(p) = &self.padding {
            let target = match p.strategy {
                PaddingStrategy::Fixed(n) => n,
                PaddingStrategy::BatchLongest => enc.len(),
            };
            enc.pad(round_up(target, p.pad_to_multiple_of), p);
        }
        Ok(enc)
    }

    /// Just the ids of `text` (with special tokens when asked), for users who need nothing
    /// else: no offsets, token strings or masks are built. Same ids as [`Tokenizer::encode`].
    pub fn encode_ids(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        self.encode_ids_into(text, add_special_tokens, &mut ids)?;
        Ok(ids)
    }

    /// [`Tokenizer::encode_ids`] into a caller's buffer (cleared first), so that a caller
    /// that keeps one buffer pays no allocation per call.
    pub fn encode_ids_into(&self, text: &str, add_special_tokens: bool, ids: &mut Vec<u32>) -> Result<()> {
        ids.clear();
        if self.truncation.is_some() || self.padding.is_some() || !self.fused_ok() {
            ids.extend(self.encode(text, None, add_special_tokens)?.ids());
            return Ok(());
        }
        ids.reserve(text.len() / 3 + 4); // as encode_single's guess
        if add_special_tokens {
            ids.extend_from_slice(&self.template_ids.0);
        }
        let (mut w, mut subs) = take_scratch();
        if self.raw_matcher.as_ref().is_none_or(|m| !m.may_match(text)) {
            // No added token in the text (the common case): one segment, no segment list.
            self.segment_ids(text, &mut w, &mut subs, ids);
        } else {
            for seg in self.split_added(self.raw_matcher.as_ref(), text) {
                match seg.added {
                    Some(i) => ids.push(self.added[i].id),
                    None => self.segment_ids(&text[seg.byte_start..seg.byte_end], &mut w, &mut subs, ids),
                }
            }
        }
        put_scratch(w, subs);
        if add_special_tokens {
            ids.extend_from_slice(&self.template_ids.1);
        }
        Ok(())
    }

    /// Appends the ids of `raw`, a stretch of input without added tokens (fused path).
    fn segment_ids(
        &self,
        raw: &str,
        w: &mut crate::fused::bert_words::Word,
        subs: &mut Vec<SubToken>,
        ids: &mut Vec<u32>,
    ) {
        let cache = self.cache.as_ref().expect("fused_ok checks the cache");
        let mark = ids.len();
        // Inlined into for_each_word, as in encode_single.
        let r = crate::models::wordpiece::word_cache::with_cache(self.model.cache_id, |mut wc| {
            crate::fused::bert_words::for_each_word(
                cache,
                self.fast,
                raw,
                0,
                w,
                None,
                #[inline(always)]
                |wd| {
                    let id = if wd.ascii {
                        self.model.whole_ascii_word(wd.padded, wd.len)
                    } else {
                        self.model.whole_word(wd.padded, wd.len)
                    };
                    if let Some(id) = id {
                        ids.push(id);
                        return;
                    }
                    self.model.ids_not_whole(wc.as_deref_mut(), wd.padded, wd.len, wd.n_chars, subs, ids);
                },
            )
        });
        if r.is_err() {
            ids.truncate(mark);
            let mut t = (0.0, 0.0);
            ids.extend(self.encode_single(raw, 0, 0, None, None, &mut t).ids());
        }
    }

    /// The special-token ids the single-sequence template puts before and after the text.
    fn single_template_ids(&self) -> (Vec<u32>, Vec<u32>) {
        let (mut before, mut after) = (Vec::new(), Vec::new());
        match &self.post_processor {
            Some(PostProcessor::Template { single, specials, .. }) => {
                let mut seen_seq = false;
                for p in single {
                    match p {
                        TemplatePiece::Sequence { .. } => seen_seq = true,
                        TemplatePiece::Special { id, .. } => {
                            let ids = &specials[id].ids;
                            if seen_seq {
                                after.extend(ids)
                            } else {
                                before.extend(ids)
                            }
                        }
                    }
                }
            }
            Some(PostProcessor::Bert { sep, cls }) => {
                before.push(cls.1);
                after.push(sep.1);
            }
            None => {}
        }
        (before, after)
    }

    /// Encodes many inputs; padding `BatchLongest` pads to the longest of the batch.
    pub fn encode_batch(
        &self,
        inputs: &[(&str, Option<&str>)],
        add_special_tokens: bool,
    ) -> Result<Vec<Encoding>> {
        self.encode_batch_threads(inputs, add_special_tokens, 1)
    }

    /// [`Tokenizer::encode_batch`] on up to `threads` threads (contiguous slices of the
    /// batch, so the output order is the input order). Results never depend on `threads`.
    pub fn encode_batch_threads(
        &self,
        inputs: &[(&str, Option<&str>)],
        add_special_tokens: bool,
        threads: usize,
    ) -> Result<Vec<Encoding>> {
        let one = |(a, b): &(&str, Option<&str>)| -> Result<Encoding> {
            let mut t = (0.0, 0.0);
            let mut ea = self.encode_single(a, 0, 0, None, None, &mut t);
            let mut eb = b.map(|p| self.encode_single(p, 1, 1, None, None, &mut t));
            self.truncate(&mut ea, eb.as_mut(), add_special_tokens)?;
            Ok(self.post_process(ea, eb, add_special_tokens))
        };
        let threads = threads.clamp(1, inputs.len().max(1));
        let mut encs: Vec<Encoding> = if threads == 1 {
            inputs.iter().map(one).collect::<Result<_>>()?
        } else {
            let chunk = inputs.len().div_ceil(threads);
            let parts: Vec<Result<Vec<Encoding>>> = std::thread::scope(|sc| {
                let handles: Vec<_> = inputs
                    .chunks(chunk)
                    .map(|part| sc.spawn(move || part.iter().map(one).collect::<Result<Vec<_>>>()))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| Err(Error::Input("a worker thread panicked".into())))
                    })
                    .collect()
            });
            let mut all = Vec::with_capacity(inputs.len());
            for p in parts {
                all.extend(p?);
            }
            all
        };
        if let Some(p) = &self.padding {
            let target = match p.strategy {
                PaddingStrategy::Fixed(n) => n,
                PaddingStrategy::BatchLongest => encs.iter().map(|e| e.len()).max().unwrap_or(0),
            };
            let target = round_up(target, p.pad_to_multiple_of);
            for e in &mut encs {
                e.pad(target, p);
            }
        }
        Ok(encs)
    }

    /// Runs the pipeline on one input, recording every stage (no truncation or padding:
    /// the page shows the whole input).
    pub fn trace(&self, text: &str) -> Trace {
        let start = now_micros();
        let mut stages: Vec<StageTrace> = std::iter::once("raw")
            .chain(self.stage_names())
            .map(|name| StageTrace { name, text: String::new(), micros: 0.0, runs: Vec::new() })
            .collect();
        stages[0].text = text.to_owned();
        let n_chars = text.chars().count() as u32;
        if n_chars > 0 {
            stages[0].runs.push((0, n_chars, 1));
        }
        let mut alignment = Vec::new();
        if stages.len() == 1 {
            alignment.extend(0..text.chars().count() as u32);
        }
        let mut observer = |k: usize, _name: &'static str, t: &AlignedText, micros: f64| {
            let i = 1 + k;
            stages[i].text.push_str(&t.text);
            stages[i].micros += micros;
            push_runs(&mut stages[i].runs, &t.orig);
            if i == stages.len() - 1 {
                alignment.extend_from_slice(&t.orig);
            }
        };
        let mut pre_tokens = Vec::new();
        let mut timings = (0.0, 0.0);
        let a = self.encode_single(text, 0, 0, Some(&mut observer), Some(&mut pre_tokens), &mut timings);
        let enc = self.post_process(a, None, true);
        let special_tokens_mask = enc.special_tokens_mask().collect();
        Trace {
            stages,
            alignment,
            pre_tokens,
            pre_tokenize_micros: timings.0,
            model_micros: timings.1,
            tokens: enc.tokens().into_iter().map(str::to_owned).collect(),
            ids: enc.ids().collect(),
            offsets: enc.offsets().collect(),
            special_tokens_mask,
            micros: now_micros() - start,
            fast: self.fast_trace(text),
        }
    }

    /// Runs the BERT normalizer alone on `text` with detailed statistics, then times it
    /// with each fast path off in turn (warm, repeated until the clock can see it).
    fn fast_trace(&self, text: &str) -> Option<FastTrace> {
        use crate::fused::{bert_normalizer::normalize, FastPaths, Stats};
        let cache = self.cache.as_ref()?;
        let mut stats = Stats::detailed();
        let _ = normalize(cache, self.fast, text, Some(&mut stats));
        let variants: [(&'static str, Option<FastPaths>); 5] = [
            (
                "fast paths on",
                Some(FastPaths { simd: true, page_cache: true, lazy_output: true, fused: false }),
            ),
            ("simd off", Some(FastPaths { simd: false, ..FastPaths::default() })),
            ("page cache off", Some(FastPaths { page_cache: false, ..FastPaths::default() })),
            ("lazy output off", Some(FastPaths { lazy_output: false, ..FastPaths::default() })),
            ("all off (staged)", None),
        ];
        let cfg = *cache.config();
        let run = |v: &Option<FastPaths>| match v {
            Some(fp) => normalize(cache, *fp, text, None).len(),
            None => crate::normalizers::bert::normalize(&cfg, text).text.len(),
        };
        let mut normalize_micros = Vec::new();
        for (name, v) in &variants {
            run(v); // warm: pages built, code paged in
            let t0 = now_micros();
            run(v);
            let first = (now_micros() - t0).max(0.0);
            // Browsers round the clock to 0.1 ms or coarser: repeat short runs until the
            // total is long enough to measure (at most 50 runs, at most ~5 ms).
            let reps = if first >= 2000.0 { 1 } else { (2000.0 / first.max(1.0)).ceil().min(50.0) as usize };
            let t0 = now_micros();
            for _ in 0..reps {
                std::hint::black_box(run(v));
            }
            normalize_micros.push((*name, (now_micros() - t0) / reps as f64));
        }
        Some(FastTrace {
            paths: self.fast,
            kernel: if self.fast.simd { crate::simd::Kernel::best().name() } else { "scalar" },
            stats,
            normalize_micros,
        })
    }

    /// The BERT normalizer's switches, when the normalizer is a BertNormalizer.
    pub fn bert_options(&self) -> Option<crate::normalizers::BertNormalizerConfig> {
        match &self.normalizer {
            Some(Normalizer::Bert(cfg)) => Some(*cfg),
            _ => None,
        }
    }

    /// Replaces the BertNormalizer's switches (the page's toggles): rebuilds the page cache
    /// and the added tokens' normalized forms, as loading a file with these switches would.
    pub fn set_bert_options(&mut self, cfg: crate::normalizers::BertNormalizerConfig) -> Result<()> {
        if self.bert_options().is_none() {
            return Err(Error::Invalid("this tokenizer's normalizer is not a BertNormalizer".into()));
        }
        self.normalizer = Some(Normalizer::Bert(cfg));
        self.cache = Some(crate::normalizers::charmap::PageCache::new(cfg));
        self.rebuild_added()
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        match self.added_by_id.get(&id) {
            Some(&i) => Some(&**self.added[i].decode_text()),
            None => self.model.id_to_token(id).filter(|t| !t.is_empty() || self.model.vocab.contains_key("")),
        }
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.added
            .iter()
            .find(|a| &*a.content == token)
            .map(|a| a.id)
            .or_else(|| self.model.vocab.get(token).copied())
    }

    /// The reference's decode: ids to tokens (unknown ids dropped, special tokens dropped
    /// when asked), then the decoder.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> String {
        let tokens: Vec<&str> = ids
            .iter()
            .filter_map(|&id| self.id_to_token(id))
            .filter(|t| !skip_special_tokens || !self.is_special_token(t))
            .collect();
        match &self.decoder {
            Some(Decoder::WordPiece { prefix, cleanup }) => {
                let mut out = String::new();
                for (i, t) in tokens.iter().enumerate() {
                    let piece = if i != 0 {
                        match t.strip_prefix(prefix.as_str()) {
                            Some(rest) => rest.to_owned(),
                            None => format!(" {t}"),
                        }
                    } else {
                        (*t).to_owned()
                    };
                    if *cleanup {
                        out.push_str(&cleanup_decoded(&piece));
                    } else {
                        out.push_str(&piece);
                    }
                }
                out
            }
            None => tokens.join(" "),
        }
    }

    fn is_special_token(&self, t: &str) -> bool {
        // As the reference: the decoded text is looked up among special contents.
        self.special_contents.contains(t)
    }

    pub fn vocab_size(&self) -> usize {
        let mut ids: HashSet<u32> = self.model.vocab.values().copied().collect();
        ids.extend(self.added.iter().map(|a| a.id));
        ids.len()
    }

    /// Normalizes with this tokenizer's normalizer only, using the enabled fast paths.
    pub fn normalize_str<'a>(
        &self,
        text: &'a str,
        stats: Option<&mut crate::fused::Stats>,
    ) -> std::borrow::Cow<'a, str> {
        match &self.cache {
            Some(cache) if self.fast != crate::fused::FastPaths::NONE => {
                crate::fused::bert_normalizer::normalize(cache, self.fast, text, stats)
            }
            _ => std::borrow::Cow::Owned(self.normalize_plain(text)),
        }
    }
}

type WordScratch = (crate::fused::bert_words::Word, Vec<SubToken>);

thread_local! {
    /// The fused pass's word buffer and the model's sub-token buffer, kept between calls so
    /// that a short input costs no allocation for them.
    static SCRATCH: std::cell::RefCell<WordScratch> = Default::default();
}

/// This thread's scratch buffers (empty ones if they are in use further up the stack).
fn take_scratch() -> WordScratch {
    SCRATCH.with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)).unwrap_or_default())
}

/// Returns buffers taken with [`take_scratch`] (unless they grew past 64 KB: a rare huge word
/// should not pin its memory).
fn put_scratch(w: crate::fused::bert_words::Word, subs: Vec<SubToken>) {
    if w.capacity() + subs.capacity() * std::mem::size_of::<SubToken>() <= 1 << 16 {
        SCRATCH.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                *s = (w, subs);
            }
        });
    }
}

/// The input chars `(first, last + 1)` that chars `a..b` of a word came from (`a < b`): what
/// `(orig.at(a), orig.at(b - 1) + 1)` gives, without a search in the common cases (a word
/// whose chars map to consecutive input chars).
#[inline(always)]
fn span(orig: crate::fused::bert_words::Orig, a: usize, b: usize) -> (u32, u32) {
    use crate::fused::bert_words::Orig;
    match orig {
        Orig::Linear(first) => (first + a as u32, first + b as u32),
        Orig::Runs(&[(s, o)]) => (o + (a as u32 - s), o + (b as u32 - s)),
        _ => (orig.at(a), orig.at(b - 1) + 1),
    }
}

/// `b` such that char `k` of the word came from input char `b + k` (wrapping), when the
/// word's chars map to consecutive input chars.
#[inline(always)]
fn linear_base(orig: crate::fused::bert_words::Orig) -> Option<u32> {
    use crate::fused::bert_words::Orig;
    match orig {
        Orig::Linear(first) => Some(first),
        // A word's first run starts at its char 0 (`Orig::at` relies on it too).
        Orig::Runs(&[(s, o)]) => Some(o.wrapping_sub(s)),
        _ => None,
    }
}

/// [`crate::fused::bert_words::Orig::at`] for chars asked in ascending order (a word's pieces):
/// the run of each char is found by walking forward from the last one, not by a search, so
/// a word whose chars came from many runs (accents stripped between letters) costs
/// O(runs + pieces), not O(runs x pieces).
struct OrigCursor<'a> {
    orig: crate::fused::bert_words::Orig<'a>,
    run: usize,
}

impl<'a> OrigCursor<'a> {
    fn new(orig: crate::fused::bert_words::Orig<'a>) -> Self {
        OrigCursor { orig, run: 0 }
    }

    /// The input char of the word's char `k`; `k` must not be less than the last one asked.
    #[inline]
    fn at(&mut self, k: usize) -> u32 {
        use crate::fused::bert_words::Orig;
        match self.orig {
            Orig::Linear(first) => first + k as u32,
            Orig::Runs(runs) => {
                let k = k as u32;
                // Runs start at ascending chars, the first at char 0 (as Orig::at assumes).
                while self.run + 1 < runs.len() && runs[self.run + 1].0 <= k {
                    self.run += 1;
                }
                let (s, o) = runs[self.run];
                debug_assert!(s <= k);
                o + (k - s)
            }
        }
    }
}

fn round_up(n: usize, multiple: Option<usize>) -> usize {
    match multiple {
        Some(m) if m > 0 && n % m > 0 => n + m - n % m,
        _ => n,
    }
}

/// The reference's WordPiece decoder cleanup: spaces before punctuation and in English
/// contractions removed, in this order.
fn cleanup_decoded(s: &str) -> String {
    s.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" do not", " don't")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}
