//! Byte-level BPE: GPT-2, r50k/p50k, cl100k, o200k (tiktoken rank files) and Hugging Face
//! `tokenizer.json` BPE models such as GPT-2, Qwen3, Llama 3 and DeepSeek V4, with the same ids
//! as tiktoken and `tokenizers`.
//!
//! The pipeline of one [`BpeTokenizer::encode`] call:
//! 1. special and added tokens are cut out of the text ([`super::added`]); what a typed
//!    special token does is the caller's choice, as in tiktoken ([`Allowed`]);
//! 2. each remaining segment is normalized (NFC for Qwen; nothing for the others);
//! 3. the segment is split into pre-tokens by a hand-written matcher for its pattern
//!    ([`crate::pre_tokenizers::byte_level::pattern`]), with no regex engine;
//! 4. each pre-token is looked up in a cache; one seen for the first time is looked up in
//!    the vocabulary and, when it is not a token by itself, merged byte pair by byte pair
//!    ([`merge`]).
//!
//! Where the time goes, and what keeps it down: each pre-token is hashed
//! and looked up in a per-thread cache that holds whole tokens and merged pieces alike (the
//! word table, `models::bpe::words`, for pieces of up to 15 bytes; the piece cache,
//! `models::bpe::cache`, for longer ones), so a repeated pre-token costs one probe of one 32-byte entry; the cache
//! slots of a batch of pre-tokens are prefetched together. A pre-token seen for the first
//! time is looked up in the vocabulary (one probe, or the small table of frequent low-rank
//! tokens, [`table::HOT_IDS`]; natively, a piece of up to 15 bytes in the tokenizer's seed of
//! every such token, [`words::Seed`], under the key it already has) and, when it is not a
//! token, merged (a few dozen pair lookups). The pair table keeps one pair per token, which is exact (see
//! [`Model::from_ranks`]). Long pieces merge a window at a time ([`merge::merge_chunked`]),
//! in time linear in their length; a run of equal windows (100,000 identical bytes) is merged
//! once. Pieces longer than the cache's bound (1 KB) are not remembered.
//!
//! NFC: `tokenizers` 0.23 normalizes with Unicode 9.0 tables, ours ([`crate::unicode::forms`])
//! are Unicode 15.0; [`nfc`] gets 9.0's results from them (they differ only around chars
//! assigned since 9.0, e.g. newer combining marks).

mod decode;
mod encoding;
#[cfg(test)]
mod tests;
pub mod trace;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

pub use super::added::AddedToken;
use super::added::AddedTokens;
use super::batch::{self, FlatIds};
pub use crate::loaders::tiktoken::tiktoken_encoding;
use crate::models::bpe::cache::PieceCache;
pub use crate::models::bpe::merge::MergeStep;
use crate::models::bpe::merge::Scratch;
use crate::models::bpe::table::PieceKey;
use crate::models::bpe::Model;
use crate::models::bpe::{merge, table, words};
use crate::normalizers::nfc;
pub use crate::pre_tokenizers::byte_level::Pattern;
use crate::pre_tokenizers::byte_level::{scan, spans};
use crate::processors::{self, PostProcessor};

use crate::{Error, Result};

/// Which special tokens a call may encode as themselves (tiktoken's `allowed_special`), or
/// must refuse to see in the text (`disallowed_special`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// Every special token of the tokenizer.
    All,
    /// Just these (empty: none).
    Only(HashSet<String>),
}

impl Allowed {
    /// No special token.
    pub fn none() -> Allowed {
        Allowed::Only(HashSet::new())
    }

    pub fn contains(&self, token: &str) -> bool {
        match self {
            Allowed::All => true,
            Allowed::Only(set) => set.contains(token),
        }
    }
}

/// When a pre-token that is itself a token may skip merging.
enum WholeToken {
    /// Always (tiktoken's rule: a piece found in the ranks is that token, merges or not).
    Always,
    /// Only when merging its bytes gives that one token (`tokenizers` BPE merges every word
    /// unless `ignore_merges` is set), per id: 0 unknown, 1 yes, 2 no. Natively decided at
    /// load for every token of up to [`words::MAX_PIECE`] bytes ([`Model::reached_tokens`]
    /// where the merge ranks allow, else [`whole_by_merging`]); longer ones, and all in wasm,
    /// are checked at a token's first sight and remembered.
    Checked(Vec<AtomicU8>),
}

impl WholeToken {
    /// The rule of a `tokenizers` BPE model with or without `ignore_merges`.
    fn new(ignore_merges: bool, model: &Model) -> WholeToken {
        if ignore_merges {
            return WholeToken::Always;
        }
        // On text seen once, checking each token at its first sight was two thirds of the
        // merges (Llama 3.2, English): natively every token of a word key's length is decided
        // at load, by the merge ranks where they allow, else by merging its bytes.
        let bound = model.vocab.id_bound();
        #[cfg(not(target_arch = "wasm32"))]
        let known: Vec<u8> = match model.reached_tokens() {
            Some(reached) => reached.iter().map(|&r| 2 - r as u8).collect(),
            None => {
                let mut parts = Vec::new();
                (0..bound).map(|id| whole_by_merging(model, id, &mut parts)).collect()
            }
        };
        #[cfg(target_arch = "wasm32")]
        let known = vec![0u8; bound as usize];
        WholeToken::Checked(known.into_iter().map(AtomicU8::new).collect())
    }
}

/// 1 if merging the bytes of token `id` gives `id`, else 2 (0 for a token of more than
/// [`words::MAX_PIECE`] bytes: decided at its first sight).
#[cfg(not(target_arch = "wasm32"))]
fn whole_by_merging(model: &Model, id: u32, parts: &mut Vec<u32>) -> u8 {
    let Some(bytes) = model.vocab.get_bytes(id) else { return 0 };
    if bytes.len() > words::MAX_PIECE {
        return 0;
    }
    parts.clear();
    parts.extend(bytes.iter().map(|&b| model.byte_ids[b as usize]));
    merge::merge_small(&model.pairs, parts);
    if parts[..] == [id] {
        1
    } else {
        2
    }
}

/// A byte-level BPE tokenizer.
///
/// ```no_run
/// # use tokenprism::tokenizer::bpe::{Allowed, BpeTokenizer};
/// let data = std::fs::read("o200k_base.tiktoken").unwrap();
/// let tok = BpeTokenizer::from_tiktoken_named("o200k_base", &data).unwrap();
/// let ids = tok.encode_ordinary("hello world");
/// assert_eq!(ids, [24912, 2375]);
/// assert_eq!(tok.decode_bytes(&ids).unwrap(), b"hello world");
/// assert!(tok.encode("<|endoftext|>", &Allowed::none()).is_err());
/// ```
pub struct BpeTokenizer {
    /// Identifies this tokenizer's per-thread work buffers and piece cache.
    uid: u64,
    name: String,
    pattern: Pattern,
    model: Model,
    nfc: bool,
    add_prefix_space: bool,
    whole: WholeToken,
    added: AddedTokens,
    /// What `add_special_tokens` does to an encoded text (a `tokenizer.json`'s
    /// post-processor; tiktoken encodings have none).
    post_processor: Option<PostProcessor>,
    /// The ids the post-processor puts before and after one text's ids, when it does just that.
    template_ids: Option<(Vec<u32>, Vec<u32>)>,
    /// Each id's token text (byte-level chars; an added token's content), made on the first
    /// [`BpeTokenizer::encode_full`]: the tiktoken-shaped calls never need it.
    token_texts: OnceLock<Arc<Vec<Arc<str>>>>,
    /// Every token of 2 to [`words::MAX_PIECE`] bytes, which each thread's word table asks on
    /// a miss (see [`words::Seed`]); made at load (at the first encode for a general
    /// pipeline's engine), natively. Where a piece that is a token is that token only when
    /// merging gives it ([`WholeToken::Checked`]), a hit is checked as a vocabulary hit is.
    /// `None` in wasm.
    seed: OnceLock<Option<Arc<words::Seed>>>,
}

/// Buffers and the piece cache one thread uses for one tokenizer.
#[derive(Default)]
struct Work {
    merge: Scratch,
    cache: PieceCache,
    words: words::Words,
    /// Spans (see [`spans::span_end`]) of more than one pre-token and more than
    /// [`words::MAX_PIECE`] bytes → their ids (shorter ones are in `words`).
    spans: PieceCache,
    /// Whether a miss of `words` asks the tokenizer's seed (see [`BpeTokenizer::seed_for`]).
    seeded: bool,
}

/// The batch entry's key of a span longer than word keys (see [`spans::span_end`]): no
/// word key is `[0, 1]` (their second word holds the length, at least 1, in its top byte).
const SPAN: words::Key = [0, 1];

/// Pre-tokens found ahead of the one being encoded, their vocabulary slots being prefetched.
/// Long enough that the last pieces' word-table lines arrive before they are probed (32
/// against 16: ~3% faster on code and English; 64 no faster).
const BATCH: usize = 32;

/// Tokenizers whose work a thread keeps, most recently used last.
const WORK_PER_THREAD: usize = 4;

thread_local! {
    static WORK: RefCell<Vec<(u64, Work)>> = const { RefCell::new(Vec::new()) };
}

/// How [`BpeTokenizer::encode_text`] finds pre-tokens.
trait Tiling {
    /// Calls `f(start, end)` for each pre-token of `text` by `pattern`, in order.
    fn for_each(pattern: Pattern, text: &str, f: impl FnMut(usize, usize));
}

/// The pattern's char-at-a-time matcher.
struct CharMatcher;

impl Tiling for CharMatcher {
    #[inline(always)]
    fn for_each(pattern: Pattern, text: &str, f: impl FnMut(usize, usize)) {
        pattern.for_each(text, f);
    }
}

/// The block scanner of shape `S` (the pattern's: see [`BpeTokenizer::encode_segment`]).
struct Windows<S>(std::marker::PhantomData<S>);

impl<S: scan::Shape> Tiling for Windows<S> {
    #[inline(always)]
    fn for_each(_: Pattern, text: &str, f: impl FnMut(usize, usize)) {
        scan::tile::<S>(text.as_bytes(), crate::simd::Kernel::best(), f);
    }
}

/// How one pre-token was encoded, for display.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PieceTrace {
    pub bytes: Vec<u8>,
    /// The token the whole piece is, when that decided the result without merging.
    pub whole_token: Option<u32>,
    /// One part per byte.
    pub initial: Vec<u32>,
    /// The merges BPE makes, in order (not used when `whole_token` decided).
    pub steps: Vec<MergeStep>,
    pub ids: Vec<u32>,
}

/// The longest piece [`BpeTokenizer::trace_piece`] and [`crate::Tokenizer::merge_trace`] accept
/// (their cost is quadratic).
pub const MAX_TRACE_BYTES: usize = 4096;

/// Refuses a piece of `len` bytes that is longer than [`MAX_TRACE_BYTES`].
pub(crate) fn check_trace_len(len: usize) -> Result<()> {
    if len > MAX_TRACE_BYTES {
        return Err(Error::Input(format!(
            "a traced piece is at most {MAX_TRACE_BYTES} bytes, this one has {len}"
        )));
    }
    Ok(())
}

impl BpeTokenizer {
    /// A tokenizer from tiktoken ranks (`data` is a `.tiktoken` file), a pattern and
    /// special tokens.
    pub fn from_tiktoken(
        name: &str,
        data: &[u8],
        pattern: Pattern,
        specials: &[(String, u32)],
    ) -> Result<BpeTokenizer> {
        let model = Model::from_ranks(crate::loaders::tiktoken::parse_tiktoken(data)?)?;
        let added = specials.iter().map(|(t, id)| AddedToken::new(t.as_str(), *id, true)).collect();
        Ok(BpeTokenizer {
            uid: crate::models::new_owner_id(),
            name: name.to_string(),
            pattern,
            model,
            nfc: false,
            add_prefix_space: false,
            whole: WholeToken::Always,
            added: AddedTokens::new(added)?,
            post_processor: None,
            template_ids: Some((Vec::new(), Vec::new())),
            token_texts: OnceLock::new(),
            seed: OnceLock::new(),
        }
        .seeded())
    }

    /// A known tiktoken encoding (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
    /// o200k_base, o200k_harmony, or such a name without `_base`) from its `.tiktoken` file.
    pub fn from_tiktoken_named(name: &str, data: &[u8]) -> Result<BpeTokenizer> {
        let (name, pattern, specials) = crate::loaders::tiktoken::encoding_named(name)
            .ok_or_else(|| crate::loaders::tiktoken::unknown_encoding(name))?;
        BpeTokenizer::from_tiktoken(&name, data, pattern, &specials)
    }

    /// A tokenizer from a Hugging Face `tokenizer.json` with a byte-level BPE model.
    pub fn from_hf_json(json: &str) -> Result<BpeTokenizer> {
        let hf = crate::loaders::hf_bpe::parse(json)?;
        let model = Model::from_merges(&hf.vocab, &hf.merges)?;
        let whole = WholeToken::new(hf.ignore_merges, &model);
        Ok(BpeTokenizer {
            uid: crate::models::new_owner_id(),
            name: hf.name,
            pattern: hf.pattern,
            model,
            nfc: hf.nfc,
            add_prefix_space: hf.add_prefix_space,
            whole,
            added: AddedTokens::new(hf.added)?,
            template_ids: processors::single_template_ids(hf.post_processor.as_ref()),
            post_processor: hf.post_processor,
            token_texts: OnceLock::new(),
            seed: OnceLock::new(),
        }
        .seeded())
    }

    /// The engine of a general pipeline that is byte-level BPE ([`crate::tokenizer::Tokenizer`]
    /// hands it the segments between added tokens, which it splits out itself, and
    /// post-processes the result): no added tokens, no post-processor.
    #[cfg_attr(not(feature = "general"), allow(dead_code))]
    pub(crate) fn for_segments(
        model: Model,
        pattern: Pattern,
        nfc: bool,
        add_prefix_space: bool,
        ignore_merges: bool,
    ) -> BpeTokenizer {
        BpeTokenizer {
            uid: crate::models::new_owner_id(),
            name: "tokenizer.json".to_string(),
            pattern,
            whole: WholeToken::new(ignore_merges, &model),
            model,
            nfc,
            add_prefix_space,
            added: AddedTokens::default(),
            post_processor: None,
            template_ids: Some((Vec::new(), Vec::new())),
            token_texts: OnceLock::new(),
            seed: OnceLock::new(),
        }
    }

    /// Appends the ids of `segment`, a stretch of text without added tokens.
    pub(crate) fn segment_ids(&self, segment: &str, out: &mut Vec<u32>) {
        self.with_work(|w| self.encode_segment(segment, out, w));
    }

    /// A tokenizer from Mistral's `tekken.json` (see [`crate::loaders::tekken`]): the ids
    /// mistral-common's `Tekkenizer.encode` gives, as [`BpeTokenizer::encode_ordinary`]. With
    /// `add_special_tokens`, `<s>` goes before each input (`encode(text, bos=True, eos=False)`).
    pub fn from_tekken_json(json: &str) -> Result<BpeTokenizer> {
        let tekken = crate::loaders::tekken::parse(json)?;
        let model = Model::from_ranks(tekken.tokens)?;
        let post_processor = crate::loaders::tekken::post_processor(&tekken.specials);
        let added = crate::loaders::tekken::added_tokens(&tekken.specials);
        Ok(BpeTokenizer {
            uid: crate::models::new_owner_id(),
            name: "tekken".to_string(),
            pattern: tekken.pattern,
            model,
            nfc: false,
            add_prefix_space: false,
            whole: WholeToken::Always,
            added: AddedTokens::new(added)?,
            template_ids: processors::single_template_ids(post_processor.as_ref()),
            post_processor,
            token_texts: OnceLock::new(),
            seed: OnceLock::new(),
        }
        .seeded())
    }

    /// A tokenizer from a Hugging Face `tokenizer.json` or a Mistral `tekken.json`, whichever
    /// `json` is.
    pub fn from_json(json: &str) -> Result<BpeTokenizer> {
        if crate::loaders::tekken::is_tekken(json) {
            BpeTokenizer::from_tekken_json(json)
        } else {
            BpeTokenizer::from_hf_json(json)
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same tokenizer under another name (e.g. the file it came from).
    pub fn with_name(mut self, name: &str) -> BpeTokenizer {
        self.name = name.to_string();
        self
    }

    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// Whether segments are NFC-normalized before pre-tokenization.
    pub fn normalizes_nfc(&self) -> bool {
        self.nfc
    }

    /// One more than the largest id, special tokens included.
    pub fn n_vocab(&self) -> u32 {
        self.model.vocab.id_bound().max(self.added.id_bound())
    }

    /// The special and added tokens.
    pub fn added_tokens(&self) -> &[AddedToken] {
        self.added.tokens()
    }

    /// The id of the token with these bytes (a special token's content included).
    pub fn token_to_id(&self, bytes: &[u8]) -> Option<u32> {
        self.added
            .tokens()
            .iter()
            .find(|t| t.content.as_bytes() == bytes)
            .map(|t| t.id)
            .or_else(|| self.model.vocab.get_id(bytes))
    }

    /// The bytes of token `id`.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.model.vocab.get_bytes(id).or_else(|| self.added.by_id(id).map(|t| t.content.as_bytes()))
    }

    /// Encodes `text` with no special tokens: a special token's text is encoded as ordinary
    /// text. (Added tokens that are not special, like Qwen's `<think>`, are always
    /// recognized: in `tokenizers` they are part of the vocabulary.)
    pub fn encode_ordinary(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3);
        self.with_work(|w| self.encode_into(text, &Allowed::none(), &mut out, w));
        out
    }

    /// Runs `f` with this thread's work buffers and piece cache for this tokenizer.
    fn with_work<R>(&self, f: impl FnOnce(&mut Work) -> R) -> R {
        WORK.with(|cell| {
            let Ok(mut all) = cell.try_borrow_mut() else {
                return f(&mut Work::default());
            };
            let at = match all.iter().position(|(uid, _)| *uid == self.uid) {
                Some(at) => at,
                None => {
                    if all.len() >= WORK_PER_THREAD {
                        all.remove(0);
                    }
                    all.push((self.uid, self.new_work()));
                    all.len() - 1
                }
            };
            let last = all.len() - 1;
            all.swap(at, last);
            f(&mut all[last].1)
        })
    }

    /// Work buffers for one thread, using the seed where there is one.
    fn new_work(&self) -> Work {
        let mut w = Work::default();
        if self.seed().is_some() {
            w.words = words::Words::grown();
            w.seeded = true;
        }
        w
    }

    /// The seed, when `w` uses it. (The threads' work holds no reference to it, so a dropped
    /// tokenizer's seed is freed with it.)
    #[inline(always)]
    fn seed_for(&self, w: &Work) -> Option<&words::Seed> {
        if cfg!(target_arch = "wasm32") || !w.seeded {
            return None;
        }
        self.seed.get().and_then(|s| s.as_deref())
    }

    /// `self` with its seed made (see [`BpeTokenizer::seed`]'s field): at load, where the first
    /// encode would have evicted from the CPU caches what it needs next (made there, the seed
    /// made o200k English's first 64 KB after it 10% slower).
    fn seeded(self) -> BpeTokenizer {
        self.seed();
        self
    }

    /// The seed of the word tables (see [`BpeTokenizer::seed`]'s field), made on first use.
    fn seed(&self) -> Option<&Arc<words::Seed>> {
        // wasm: 16 MB more per tokenizer (o200k) would not fit the page's memory budget.
        if cfg!(target_arch = "wasm32") {
            return None;
        }
        self.seed.get_or_init(|| Some(Arc::new(words::Seed::new(&self.model.vocab)))).as_ref()
    }

    /// Encodes `text`, encoding the special tokens in `allowed` as themselves and refusing
    /// (with [`Error::Input`]) any other special token found in the text; tiktoken's
    /// `encode(text, allowed_special=...)`.
    pub fn encode(&self, text: &str, allowed: &Allowed) -> Result<Vec<u32>> {
        self.encode_with_special(text, allowed, &Allowed::All)
    }

    /// tiktoken's `encode(text, allowed_special, disallowed_special)`: `disallowed` is
    /// checked first (`Allowed::All` meaning "every special token not in `allowed`"); a
    /// special token in neither set is encoded as ordinary text.
    pub fn encode_with_special(
        &self,
        text: &str,
        allowed: &Allowed,
        disallowed: &Allowed,
    ) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3);
        self.append_with_special(text, allowed, disallowed, &mut out)?;
        Ok(out)
    }

    /// [`BpeTokenizer::encode_with_special`] appended to `out`.
    fn append_with_special(
        &self,
        text: &str,
        allowed: &Allowed,
        disallowed: &Allowed,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        self.check_disallowed(text, allowed, disallowed)?;
        self.with_work(|w| self.encode_into(text, allowed, out, w));
        Ok(())
    }

    fn check_disallowed(&self, text: &str, allowed: &Allowed, disallowed: &Allowed) -> Result<()> {
        // Nothing to refuse: no scan (its automaton's prefilter may find candidates in every
        // char of a script, as for DeepSeek V4's fullwidth bars in Korean).
        let none_refused = match disallowed {
            Allowed::All => *allowed == Allowed::All,
            Allowed::Only(set) => set.is_empty(),
        };
        if none_refused {
            return Ok(());
        }
        let refused = |t: &AddedToken| match disallowed {
            Allowed::All => !allowed.contains(&t.content),
            Allowed::Only(set) => set.contains(&*t.content),
        };
        if let Some((at, t)) = self.added.first_special(text, refused) {
            let chars = text[..at].chars().count();
            return Err(Error::Input(format!(
                "the text contains the special token {:?} (at character {chars}), which is disallowed. \
                 To encode it as the special token, allow it (allowed_special={{{:?}}} or \"all\"); \
                 to encode it as ordinary text, leave it out of disallowed_special (disallowed_special=() disables this check)",
                t.content, t.content
            )));
        }
        Ok(())
    }

    /// Encodes `text` into `out`: allowed special and all non-special added tokens become
    /// their ids, the rest is encoded as text. Does not check for disallowed tokens.
    fn encode_into(&self, text: &str, allowed: &Allowed, out: &mut Vec<u32>, w: &mut Work) {
        if matches!(allowed, Allowed::Only(set) if set.is_empty()) && self.added.all_special() {
            // Nothing can be split out: skip the special-token scan (encode_ordinary).
            self.encode_segment(text, out, w);
            return;
        }
        let mut start = 0;
        self.added.split(
            text,
            |t| !t.special || allowed.contains(&t.content),
            |seg_end, token| {
                self.encode_segment(&text[start..seg_end], out, w);
                if let Some(t) = token {
                    out.push(t.id);
                    start = seg_end + t.content.len();
                }
            },
        );
    }

    /// Normalizes, pre-tokenizes and merges one segment of ordinary text.
    ///
    /// Pre-tokens are found in batches of [`BATCH`]: each one's piece-cache slot is prefetched
    /// when it is found, and the batch is encoded after, so the slots' cache misses overlap
    /// instead of stalling one after the other. The batch lives on the stack and its encoding
    /// is a function of its own, which keeps the matcher's per-pre-token step small enough to
    /// be inlined into the matcher's loop.
    fn encode_segment(&self, segment: &str, out: &mut Vec<u32>, w: &mut Work) {
        if segment.is_empty() {
            return;
        }
        // o200k and DeepSeek V4 keep marks in their words: their words need no spans.
        if !matches!(self.pattern, Pattern::O200k | Pattern::DeepSeek)
            && spans::marks_split_words(segment.as_bytes())
        {
            self.encode_spans(segment, out, w);
            return;
        }
        let text = self.normalize(segment);
        let bytes = text.as_bytes();
        match self.pattern {
            Pattern::O200k if scan::windows_pay::<scan::O200k>(bytes) => {
                self.encode_scanned::<scan::O200k>(&text, out, w)
            }
            Pattern::Cl100k if scan::windows_pay::<scan::Cl100k>(bytes) => {
                self.encode_scanned::<scan::Cl100k>(&text, out, w)
            }
            Pattern::Llama3 if scan::windows_pay::<scan::Llama3>(bytes) => {
                self.encode_scanned::<scan::Llama3>(&text, out, w)
            }
            Pattern::Qwen if scan::windows_pay::<scan::Qwen>(bytes) => {
                self.encode_scanned::<scan::Qwen>(&text, out, w)
            }
            Pattern::DeepSeek if scan::windows_pay::<scan::DeepSeek>(bytes) => {
                self.encode_scanned::<scan::DeepSeek>(&text, out, w)
            }
            _ => self.encode_text::<CharMatcher, false>(&text, out, w),
        }
    }

    /// [`Self::encode_text`] with the block scanner ([`scan`]) of shape `S`, in a function of
    /// its own per shape (see [`scan::tile`]).
    #[inline(never)]
    fn encode_scanned<S: scan::Shape>(&self, text: &str, out: &mut Vec<u32>, w: &mut Work) {
        self.encode_text::<Windows<S>, false>(text, out, w);
    }

    /// [`Self::encode_text`] looking up whole spans (see [`spans::span_end`]) where a
    /// pre-token ends inside one, in a function of its own.
    #[inline(never)]
    fn encode_spans(&self, segment: &str, out: &mut Vec<u32>, w: &mut Work) {
        let text = self.normalize(segment);
        self.encode_text::<CharMatcher, true>(&text, out, w);
    }

    /// Pre-tokenizes and merges normalized text, finding the pre-tokens with `T`; with
    /// `SPANS`, with the pattern's char-at-a-time matcher, looking up spans.
    #[inline(always)]
    fn encode_text<T: Tiling, const SPANS: bool>(&self, text: &str, out: &mut Vec<u32>, w: &mut Work) {
        let bytes = text.as_bytes();
        let mut batch = [(0u32, 0u32, words::NO_KEY, 0u64); BATCH];
        let mut n = 0;
        // Queues a batch entry, and encodes the batch when it is full.
        macro_rules! push {
            ($a:expr, $b:expr, $key:expr, $h:expr) => {
                batch[n] = ($a as u32, $b as u32, $key, $h);
                n += 1;
                if n == BATCH {
                    self.encode_pieces::<SPANS>(bytes, &batch, out, w);
                    n = 0;
                }
            };
        }
        // The per-pre-token step, written once for the three loops below (a macro, not a
        // closure in a variable: an attribute on a closure needs it in argument position).
        macro_rules! piece {
            ($a:expr, $b:expr) => {{
                let (a, b): (usize, usize) = ($a, $b);
                let len = bytes[a..b].len();
                // A piece longer than the word table's keys is looked up by `encode_piece`.
                // (A single byte has a key too: in the table it costs what every other hit
                // costs, where a path of its own cost a mispredicted branch now and then.)
                let (key, h) = if len <= words::MAX_PIECE {
                    let key = words::key_at(bytes, a, len);
                    let h = words::hash(key);
                    w.words.prefetch(h);
                    (key, h)
                } else {
                    // Longer: its hash for the piece cache, whose slot is prefetched.
                    let h = table::hash_bytes(&bytes[a..b]);
                    w.cache.prefetch(h, len);
                    (words::NO_KEY, h)
                };
                push!(a, b, key, h);
            }};
        }
        if !SPANS {
            T::for_each(
                self.pattern,
                text,
                #[inline(always)]
                |a, b| piece!(a, b),
            );
        } else {
            // Where no span can start before (see `spans::span_end`).
            let mut no_span = 0;
            self.pattern.for_each_skipping(
                text,
                #[inline(always)]
                |a, b| {
                    // A pre-token that ends before a non-ASCII char inside its span (the text
                    // up to the next space, see `spans::span_end`), as at a vowel mark: the
                    // whole span is looked up instead, and on a miss split and remembered.
                    // (Where the next char is ASCII, as at a comma after a word, the split
                    // costs less than the span.)
                    if b < bytes.len() && bytes[b] >= 0x80 && a >= no_span {
                        match spans::span_end(bytes, a) {
                            Ok(e) if e > b => {
                                let len = e - a;
                                if len <= words::MAX_PIECE {
                                    // In the word table, under a key no piece has.
                                    let key = words::span_key(words::key_at(bytes, a, len));
                                    let h = words::hash(key);
                                    w.words.prefetch(h);
                                    push!(a, e, key, h);
                                } else {
                                    let h = table::hash_bytes(&bytes[a..e]);
                                    w.spans.prefetch(h, len);
                                    push!(a, e, SPAN, h);
                                }
                                return e;
                            }
                            Ok(_) => {}
                            Err(until) => no_span = until,
                        }
                    }
                    piece!(a, b);
                    b
                },
            );
        }
        self.encode_pieces::<SPANS>(bytes, &batch[..n], out, w);
    }

    /// Encodes a batch of pre-tokens of `bytes`: (start, end, word key, hash) each; the hash
    /// is the word key's, or for a piece longer than word keys its [`table::hash_bytes`].
    ///
    /// A piece with a word key is looked up in the word table ([`words`]); on a miss it is
    /// encoded from the vocabulary and the merge and its ids are stored there. Other pieces go
    /// through [`Self::encode_piece`] and the piece cache.
    ///
    /// Hits of up to 3 ids (nearly all) are written into room reserved for the batch, four
    /// ids at a time (the fourth is the count, overwritten by what comes next), with the
    /// length kept in a register: no capacity check, and no store and load of `out`'s length
    /// between one piece and the next.
    #[inline(never)]
    fn encode_pieces<const SPANS: bool>(
        &self,
        bytes: &[u8],
        batch: &[(u32, u32, words::Key, u64)],
        out: &mut Vec<u32>,
        w: &mut Work,
    ) {
        let mut rest = batch;
        loop {
            out.reserve(4 * rest.len());
            let mut len = out.len();
            let dst = out.as_mut_ptr();
            let mut k = 0;
            // NO_KEY and SPAN are the keys whose length byte is 0.
            while let Some(&(_, _, key, h)) = rest.get(k).filter(|e| e.2[1] >> 56 != 0) {
                let Some(ids) = w.words.get_short(key, h) else { break };
                // SAFETY: room for 4 ids per entry was reserved, and each entry before this one
                // took at most 3 of it, so `len + 4` is within the capacity.
                unsafe { dst.add(len).cast::<[u32; 4]>().write_unaligned(ids) };
                len += ids[3] as usize;
                k += 1;
            }
            // SAFETY: within the capacity (above), and every id up to `len` was written.
            unsafe { out.set_len(len) };
            let Some((&e, tail)) = rest[k..].split_first() else { return };
            rest = tail;
            let (_, _, key, h) = e;
            if key != words::NO_KEY && (!SPANS || key != SPAN) {
                if w.words.get_into(key, h, out) {
                    continue;
                }
                // (wasm has no prefetch: there the miss is encoded below, without the code.)
                if cfg!(not(target_arch = "wasm32")) {
                    return self.encode_missing::<SPANS>(bytes, e, tail, out, w);
                }
            }
            self.encode_entry::<SPANS>(bytes, e, out, w);
        }
    }

    /// The rest of [`Self::encode_pieces`] from a batch's first word-table miss, `first`: on
    /// text seen once, where more misses follow, their vocabulary slots are loaded first.
    #[inline(never)]
    fn encode_missing<const SPANS: bool>(
        &self,
        bytes: &[u8],
        first: (u32, u32, words::Key, u64),
        rest: &[(u32, u32, words::Key, u64)],
        out: &mut Vec<u32>,
        w: &mut Work,
    ) {
        self.prefetch_misses(bytes, rest, w);
        self.encode_entry::<SPANS>(bytes, first, out, w);
        for &e in rest {
            let (_, _, key, h) = e;
            if key != words::NO_KEY && (!SPANS || key != SPAN) && w.words.get_into(key, h, out) {
                continue;
            }
            self.encode_entry::<SPANS>(bytes, e, out, w);
        }
    }

    /// A batch entry of [`Self::encode_pieces`] that is not a word-table hit.
    #[inline(always)]
    fn encode_entry<const SPANS: bool>(
        &self,
        bytes: &[u8],
        (a, b, key, h): (u32, u32, words::Key, u64),
        out: &mut Vec<u32>,
        w: &mut Work,
    ) {
        let (a, b) = (a as usize, b as usize);
        debug_assert!(a < b && b <= bytes.len());
        if SPANS && key == SPAN {
            // A span longer than word keys.
            let span = &bytes[a..b];
            let short = if span.len() <= 8 { table::pack(span) } else { 0 };
            if !w.spans.get_into(span, h, short, out) {
                let start = out.len();
                self.encode_span_uncached(bytes, a, b, out, w);
                w.spans.insert(span, h, &out[start..]);
            }
            return;
        }
        if SPANS && words::is_span_key(key) {
            let start = out.len();
            self.encode_span_uncached(bytes, a, b, out, w);
            w.words.insert(key, h, &out[start..]);
            return;
        }
        // SAFETY: every batch entry is made by `encode_text`'s step from a piece it has
        // just sliced as `&bytes[a..b]` (which checked a <= b <= bytes.len()), with this
        // same `bytes`.
        let piece = unsafe { bytes.get_unchecked(a..b) };
        if key == words::NO_KEY {
            // One byte, or longer than word keys (`h` is its piece-cache hash).
            self.encode_piece(piece, PieceKey { hash: h, short: 0 }, out, w);
            return;
        }
        // A piece with a word key is only ever remembered in the word table.
        let start = out.len();
        self.encode_word_miss(piece, key, h, out, w);
        w.words.insert(key, h, &out[start..]);
    }

    /// Encodes a piece with word key `key` and hash `h` that the word table does not have:
    /// from the seed (every token with a key) and the merge, or without a seed from the
    /// vocabulary and the merge.
    #[inline(always)]
    fn encode_word_miss(&self, piece: &[u8], key: words::Key, h: u64, out: &mut Vec<u32>, w: &mut Work) {
        if let [byte] = piece {
            out.push(self.model.byte_ids[*byte as usize]);
            return;
        }
        match self.seed_for(w) {
            Some(seed) => match seed.get(key, h) {
                Some(id) => self.token_or_merged(id, piece, out, &mut w.merge),
                None => self.merge_bytes(piece, out, &mut w.merge),
            },
            None => self.encode_piece_uncached(piece, PieceKey::of(piece), out, w, false),
        }
    }

    /// Starts loading the seed's or the vocabulary's slots of the pieces of `batch` that the
    /// word table does not have, so that on text seen once their lookups overlap instead of
    /// following one another (each is a cache miss there). Called at a batch's first miss: a
    /// batch of pieces seen before never gets here.
    #[inline(never)]
    fn prefetch_misses(&self, bytes: &[u8], batch: &[(u32, u32, words::Key, u64)], w: &Work) {
        for &(a, b, key, h) in batch {
            if b - a < 2
                || key == words::NO_KEY
                || key == SPAN
                || words::is_span_key(key)
                || w.words.contains(key, h)
            {
                continue;
            }
            if let Some(seed) = self.seed_for(w) {
                seed.prefetch(h);
                continue;
            }
            // SAFETY: as in `encode_pieces`: the entry was made from `&bytes[a..b]`.
            let piece = unsafe { bytes.get_unchecked(a as usize..b as usize) };
            self.model.vocab.prefetch_full(PieceKey::of(piece).hash);
        }
    }

    /// Encodes the span `bytes[a..e]` (see [`spans::span_end`]) from its pre-tokens, one
    /// by one (a span the span table did not have).
    #[inline(never)]
    fn encode_span_uncached(&self, bytes: &[u8], a: usize, e: usize, out: &mut Vec<u32>, w: &mut Work) {
        let mut i = a;
        while i < e {
            let b = self.pattern.next_end(bytes, i);
            debug_assert!(b <= e, "a pre-token of a span ends past it");
            let piece = &bytes[i..b];
            let len = piece.len();
            if (2..=words::MAX_PIECE).contains(&len) {
                let key = words::key_at(bytes, i, len);
                let kh = words::hash(key);
                if !w.words.get_into(key, kh, out) {
                    let at = out.len();
                    self.encode_word_miss(piece, key, kh, out, w);
                    w.words.insert(key, kh, &out[at..]);
                }
            } else {
                self.encode_piece(piece, PieceKey::of(piece), out, w);
            }
            i = b;
        }
    }

    /// A segment as the pre-tokenizer sees it: NFC as of Unicode 9.0 (Qwen), then the prefix space
    /// (`add_prefix_space` of a ByteLevel pre-tokenizer).
    fn normalize<'a>(&self, segment: &'a str) -> Cow<'a, str> {
        let mut text = if self.nfc { nfc::nfc_unicode9(segment) } else { Cow::Borrowed(segment) };
        if self.add_prefix_space && !text.starts_with(' ') {
            text = Cow::Owned(format!(" {text}"));
        }
        text
    }

    /// Encodes one pre-token whose [`PieceKey`] is `key`.
    ///
    /// The piece cache is asked first: after a thread's first sight of a piece, whether it was
    /// a whole token or had to be merged, one probe of one cache line gives its ids.
    #[inline(always)]
    fn encode_piece(&self, piece: &[u8], key: PieceKey, out: &mut Vec<u32>, w: &mut Work) {
        if piece.len() == 1 {
            out.push(self.model.byte_ids[piece[0] as usize]);
            return;
        }
        if w.cache.get_into(piece, key.hash, key.short, out) {
            return;
        }
        self.encode_piece_uncached(piece, key, out, w, true);
    }

    /// A piece of two or more bytes from the vocabulary and the merge, without asking a cache
    /// ([`BpeTokenizer::encode_piece`]'s miss): a whole token, or merged; then remembered in
    /// the piece cache if `remember` (pieces with a word key are remembered in the word table
    /// instead, by [`BpeTokenizer::encode_pieces`]).
    #[inline(never)]
    fn encode_piece_uncached(
        &self,
        piece: &[u8],
        key: PieceKey,
        out: &mut Vec<u32>,
        w: &mut Work,
        remember: bool,
    ) {
        let hash = key.hash;
        let found = match self.seed_for(w) {
            Some(seed) if piece.len() > words::MAX_PIECE && !seed.may_be_long_token(hash) => None,
            _ => self.model.vocab.get_cold(piece, key.short, hash),
        };
        let start = out.len();
        match found {
            Some(id) => self.token_or_merged(id, piece, out, &mut w.merge),
            None => self.merge_bytes(piece, out, &mut w.merge),
        }
        if remember {
            w.cache.insert(piece, hash, &out[start..]);
        }
    }

    /// Appends the ids of `piece`'s bytes merged.
    #[inline(never)]
    fn merge_bytes(&self, piece: &[u8], out: &mut Vec<u32>, sc: &mut Scratch) {
        let mut parts = std::mem::take(&mut sc.parts);
        parts.clear();
        parts.extend(piece.iter().map(|&b| self.model.byte_ids[b as usize]));
        merge::merge(&self.model.pairs, &mut parts, sc);
        out.extend_from_slice(&parts);
        sc.parts = parts;
    }

    /// Appends the ids of `piece`, which is token `id`: `id` where a piece that is a token is
    /// that token or its merge is known to give it, else its bytes merged (which also tells,
    /// the first time, whether they give `id`: the merge is the answer either way).
    #[inline]
    fn token_or_merged(&self, id: u32, piece: &[u8], out: &mut Vec<u32>, sc: &mut Scratch) {
        let WholeToken::Checked(known) = &self.whole else { return out.push(id) };
        match known[id as usize].load(Ordering::Relaxed) {
            1 => out.push(id),
            2 => self.merge_bytes(piece, out, sc),
            _ => {
                let start = out.len();
                self.merge_bytes(piece, out, sc);
                let whole = out[start..] == [id];
                known[id as usize].store(if whole { 1 } else { 2 }, Ordering::Relaxed);
            }
        }
    }

    /// Encodes many texts on up to `threads` threads (like [`BpeTokenizer::encode_with_special`]
    /// for each); the first error wins.
    pub fn encode_batch(
        &self,
        texts: &[&str],
        allowed: &Allowed,
        disallowed: &Allowed,
        threads: usize,
    ) -> Result<Vec<Vec<u32>>> {
        let parts = batch::on_slices(texts, threads, |part| {
            part.iter().map(|t| self.encode_with_special(t, allowed, disallowed)).collect::<Result<Vec<_>>>()
        })?;
        Ok(parts.into_iter().flatten().collect())
    }

    /// [`BpeTokenizer::encode_batch`] end to end, with the post-processor's special tokens
    /// around each text's ids when `add_special_tokens` (as [`BpeTokenizer::add_special_tokens`]).
    pub fn encode_batch_flat(
        &self,
        texts: &[&str],
        allowed: &Allowed,
        disallowed: &Allowed,
        add_special_tokens: bool,
        threads: usize,
    ) -> Result<FlatIds> {
        let (before, after) = match (add_special_tokens, &self.template_ids) {
            (false, _) => (&[][..], &[][..]),
            (true, Some((before, after))) => (&before[..], &after[..]),
            // A post-processor that does more than surround the text (one that repeats it).
            (true, None) => {
                return FlatIds::encode(texts, threads, |t, ids| {
                    let one = self.encode_with_special(t, allowed, disallowed)?;
                    ids.extend(self.add_special_tokens(one)?);
                    Ok(())
                })
            }
        };
        FlatIds::encode(texts, threads, |t, ids| {
            ids.extend_from_slice(before);
            self.append_with_special(t, allowed, disallowed, ids)?;
            ids.extend_from_slice(after);
            Ok(())
        })
    }

    /// The pre-tokens of `text` (special tokens left in as text), after normalization.
    pub fn pre_tokenize(&self, text: &str) -> Vec<String> {
        let text = self.normalize(text);
        self.pattern.split(&text).into_iter().map(|(a, b)| text[a..b].to_string()).collect()
    }

    /// How one pre-token's bytes become ids: the merge sequence step by step.
    pub fn trace_piece(&self, bytes: &[u8]) -> Result<PieceTrace> {
        check_trace_len(bytes.len())?;
        let initial: Vec<u32> = bytes.iter().map(|&b| self.model.byte_ids[b as usize]).collect();
        let steps = merge::merge_steps(&self.model.pairs, &initial);
        let mut ids = Vec::new();
        if !bytes.is_empty() {
            self.encode_piece(bytes, PieceKey::of(bytes), &mut ids, &mut Work::default());
        }
        let merged = steps.last().map_or(&initial, |s| &s.parts);
        let whole_token = (ids.len() == 1 && *merged != ids && bytes.len() > 1).then(|| ids[0]);
        Ok(PieceTrace { bytes: bytes.to_vec(), whole_token, initial: initial.clone(), steps, ids })
    }
}

impl std::fmt::Debug for BpeTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpeTokenizer")
            .field("name", &self.name)
            .field("pattern", &self.pattern)
            .field("n_vocab", &self.n_vocab())
            .field("nfc", &self.nfc)
            .finish()
    }
}
