//! The pipeline: added tokens → normalizer → pre-tokenizer → model → post-processor,
//! with truncation, padding and decoding, and a trace of every stage for the page.
//!
//! Names follow Hugging Face `tokenizers` so its users feel at home.

pub mod added;
pub mod batch;
pub mod bpe;
pub mod chat;
pub mod chunk;
pub mod documents;
pub mod encoding;
pub mod padding;
#[cfg(all(feature = "general", not(target_arch = "wasm32")))]
mod raw;
pub mod round_trip;
pub mod trace;
pub mod truncation;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub use self::added::AddedToken;
use self::added::{AddedMatcher, Segment};
pub use self::batch::FlatIds;
pub use self::encoding::{Encoding, TokenTexts};
pub use self::padding::{Padding, PaddingStrategy};
use self::trace::PieceLog;
pub use self::trace::{FastTrace, PreTokenTrace, PreTokenizerStageTrace, StageTrace, Trace};
pub use self::truncation::{Direction, Truncation, TruncationStrategy};
use crate::clock::now_micros;
pub use crate::decoders::Decoder;
use crate::error::{Error, Result};
use crate::models::wordpiece::{Hint, Sink, SubToken, WordPiece};
pub use crate::models::Model;
use crate::models::Token;
use crate::normalizers::aligned::span;
use crate::normalizers::AlignedText;
#[cfg(feature = "general")]
use crate::normalizers::Lead;
pub use crate::normalizers::Normalizer;
#[cfg(feature = "general")]
use crate::pre_tokenizers::metaspace::PrependScheme;
use crate::pre_tokenizers::PreTokenized;
pub use crate::pre_tokenizers::PreTokenizer;
use crate::processors;
pub use crate::processors::{PostProcessor, SpecialTokenDef, TemplatePiece};

#[derive(Clone, Debug)]
pub struct Tokenizer {
    pub normalizer: Option<Normalizer>,
    pub pre_tokenizer: Option<PreTokenizer>,
    pub model: Model,
    pub post_processor: Option<PostProcessor>,
    pub decoder: Option<Decoder>,
    pub added: Vec<AddedToken>,
    pub truncation: Option<Truncation>,
    pub padding: Option<Padding>,
    /// Which fast paths encode and normalize use (all on by default).
    pub fast: crate::fused::FastPaths,
    /// Per-page answers for the BERT normalizer, when there is one.
    pub(crate) cache: Option<crate::normalizers::charmap::PageCache>,
    /// The special-token ids the post-processor puts before and after one text's ids, when it
    /// does just that.
    pub(crate) template_ids: Option<(Vec<u32>, Vec<u32>)>,
    pub(crate) raw_matcher: Option<AddedMatcher>,
    pub(crate) normalized_matcher: Option<AddedMatcher>,
    pub(crate) added_by_id: HashMap<u32, usize>,
    /// Contents of the special added tokens (what `skip_special_tokens` drops).
    pub(crate) special_contents: HashSet<Arc<str>>,
    /// The byte-level engine, for a pipeline it runs (see [`crate::fused::byte_level`]).
    pub(crate) byte_level: std::sync::OnceLock<Option<Arc<bpe::BpeTokenizer>>>,
}

/// Optional observer of the stages, so the trace and the plain encode share one path.
type Observer<'a> = Option<&'a mut dyn FnMut(usize, &'static str, &AlignedText, f64)>;

impl Tokenizer {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        normalizer: Option<Normalizer>,
        pre_tokenizer: Option<PreTokenizer>,
        model: impl Into<Model>,
        post_processor: Option<PostProcessor>,
        decoder: Option<Decoder>,
        added: Vec<AddedToken>,
        truncation: Option<Truncation>,
        padding: Option<Padding>,
    ) -> Result<Self> {
        let mut t = Tokenizer {
            normalizer,
            pre_tokenizer,
            model: model.into(),
            post_processor,
            decoder,
            added,
            truncation,
            padding,
            fast: crate::fused::FastPaths::default(),
            cache: None,
            template_ids: None,
            raw_matcher: None,
            normalized_matcher: None,
            added_by_id: HashMap::new(),
            special_contents: HashSet::new(),
            byte_level: std::sync::OnceLock::new(),
        };
        if let Some(Normalizer::Bert(cfg)) = &t.normalizer {
            t.cache = Some(crate::normalizers::charmap::PageCache::new(*cfg));
        }
        t.rebuild_added()?;
        t.template_ids = processors::single_template_ids(t.post_processor.as_ref());
        Ok(t)
    }

    /// A tokenizer from a Hugging Face `tokenizer.json`, or (with the `general` feature) a
    /// Mistral `tekken.json`.
    pub fn from_json_str(json: &str) -> Result<Self> {
        #[cfg(feature = "general")]
        if crate::loaders::tekken::is_tekken(json) {
            return crate::loaders::tekken::tokenizer(json);
        }
        // Said as unsupported, so a build without the general pipeline (the page's BERT
        // module) hands the file on to one with it.
        // A substring test, not is_tekken's parse: that parse costs the BERT module 27 KB gzip.
        // A tekken.json may hold "model" as a token's text, never as a key.
        #[cfg(not(feature = "general"))]
        if !json.contains("\"model\":") && json.contains("\"config\"") && json.contains("\"vocab\"") {
            return Err(crate::Error::Unsupported("Mistral tekken.json files".into()));
        }
        crate::loaders::tokenizer_json::parse_tokenizer_json(json)
    }

    pub fn from_vocab_txt(text: &str) -> Result<Self> {
        crate::loaders::tokenizer_json::tokenizer_from_vocab_txt(text)
    }

    fn normalize_plain(&self, s: &str) -> String {
        match &self.normalizer {
            Some(n) => n.normalize(s),
            None => s.to_owned(),
        }
    }

    /// Normalizes one raw segment whose first char is input char `char_start`; an error where
    /// the reference fails on it.
    fn normalize_segment(
        &self,
        text: &str,
        char_start: usize,
        observer: &mut Observer,
    ) -> Result<AlignedText> {
        let mut input = AlignedText::new(text);
        for o in &mut input.orig {
            *o += char_start as u32;
        }
        match &self.normalizer {
            Some(n) => {
                let mut t0 = now_micros();
                let mut k = 0;
                n.try_apply(input, &mut |name, t| {
                    let t1 = now_micros();
                    if let Some(obs) = observer.as_mut() {
                        obs(k, name, t, t1 - t0);
                    }
                    k += 1;
                    t0 = now_micros();
                })
            }
            None => Ok(input),
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

    /// The names of the trace's pre-tokenizer stages: one per component.
    pub fn pre_tokenizer_stage_names(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if let Some(p) = &self.pre_tokenizer {
            p.stage_names(&mut v);
        }
        v
    }

    /// Encodes one input without post-processing: tokens with their offsets into `text`.
    pub(crate) fn encode_single(
        &self,
        text: &str,
        type_id: u32,
        seq: u32,
        mut observer: Observer,
        mut pieces: Option<&mut PieceLog>,
        timings: &mut (f64, f64),
    ) -> Result<Encoding> {
        let mut enc = Encoding::default();
        // At most about one token per three bytes (CJK: one per 3-byte char; English ~4.5):
        // one allocation, not a series.
        let guess = text.len() / 3 + 4;
        enc.texts.vocab = Some(self.model.vocab_r().clone());
        enc.toks.reserve(guess);
        let mut word_idx = 0u32;
        let mut scratch = crate::models::wordpiece::Scratch::default();
        let mut tokens = Vec::new();
        let (mut scratch_word, mut subs) = crate::fused::bert::take_scratch();
        // A text that certainly holds no added token is one segment (no matcher pass).
        let matcher = self.raw_matcher.as_ref().filter(|m| m.may_match(text));
        // Without a matcher the text is one segment: no segment list is allocated.
        let (whole, listed) = match matcher {
            None => (
                Some(Segment { byte_start: 0, byte_end: text.len(), char_start: 0, added: None }),
                Vec::new(),
            ),
            Some(m) => (None, self.split_added(Some(m), text)?),
        };
        let mut result = Ok(());
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
                if let Some(p) = pieces.as_mut() {
                    p.push_whole(PreTokenTrace { text: raw.to_owned(), offsets: off });
                }
                enc.push_token(self.added[i].id, Some(&Arc::from(raw)), off, word_idx);
                word_idx += 1;
                continue;
            }
            if observer.is_none() && pieces.is_none() {
                if let Some(engine) = self.byte_level() {
                    let at = seg.char_start as u32;
                    if self.encode_segment_byte_level(engine, raw, at, &mut enc, &mut word_idx) {
                        continue;
                    }
                }
            }
            if observer.is_none()
                && pieces.is_none()
                && self.fused_ok()
                && self.encode_segment_fused(
                    raw,
                    seg.char_start as u32,
                    &mut enc,
                    &mut word_idx,
                    &mut scratch_word,
                    &mut subs,
                )
            {
                continue;
            }
            let mut staged = Staged {
                input: text,
                observer: &mut observer,
                pieces: &mut pieces,
                enc: &mut enc,
                word_idx: &mut word_idx,
                scratch: &mut scratch,
                subs: &mut subs,
                tokens: &mut tokens,
                timings,
            };
            result = self.encode_segment_staged(raw, seg.char_start, &mut staged);
            if result.is_err() {
                break;
            }
        }
        crate::fused::bert::put_scratch(scratch_word, subs);
        result?;
        enc.fill_sequence(type_id, seq);
        Ok(enc)
    }

    /// The staged chain on one segment without added tokens of the raw text: normalizer
    /// (with the observer told each stage), added tokens of the normalized text,
    /// pre-tokenizer, model. The oracle the fused path is tested against, and what the trace
    /// shows.
    fn encode_segment_staged(&self, raw: &str, char_start: usize, st: &mut Staged) -> Result<()> {
        let norm = self.normalize_segment(raw, char_start, st.observer)?;
        for nseg in self.split_added(self.normalized_matcher.as_ref(), &norm.text)? {
            let ntext = &norm.text[nseg.byte_start..nseg.byte_end];
            let orig = &norm.orig[nseg.char_start..nseg.char_start + ntext.chars().count()];
            if orig.is_empty() {
                continue;
            }
            if let Some(i) = nseg.added {
                let off = span(orig, char_start as u32);
                if let Some(p) = st.pieces.as_mut() {
                    p.push_whole(PreTokenTrace { text: ntext.to_owned(), offsets: off });
                }
                st.enc.push_token(self.added[i].id, Some(&Arc::from(ntext)), off, *st.word_idx);
                *st.word_idx += 1;
                continue;
            }
            let origin = char_start as u32;
            #[cfg(all(feature = "general", not(target_arch = "wasm32")))]
            if let Some(p) = self.pre_tokenizer.as_ref().filter(|p| st.pieces.is_none() && p.only_cuts()) {
                // No trace to record: the pieces as ranges of the normalized text, no copies.
                let t0 = now_micros();
                let ranges = p.cut_ranges(ntext);
                let t1 = now_micros();
                st.timings.0 += t1 - t0;
                let mut chars = ByteToChar::new(ntext);
                for (s, e) in ranges {
                    let (s, e) = (s as usize, e as usize);
                    let (cs, ce) = (chars.char_at(s), chars.char_at(e - 1) + 1);
                    self.model_piece(&ntext[s..e], &orig[cs..ce], origin, st)?;
                    *st.word_idx += 1;
                }
                st.timings.1 += now_micros() - t1;
                continue;
            }
            // The stages' times leave out the trace's recording of their pieces.
            let (mut t0, mut spent, mut k) = (now_micros(), 0.0, 0);
            let text = AlignedText { text: ntext.to_owned(), orig: orig.to_vec() };
            let mut pre = PreTokenized { origin, ..PreTokenized::whole(text) };
            if let Some(p) = &self.pre_tokenizer {
                pre = p.try_apply(pre, &mut |_, out| {
                    let t1 = now_micros();
                    spent += t1 - t0;
                    if let Some(log) = st.pieces.as_mut() {
                        let stage = &mut log.stages[k];
                        stage.micros += t1 - t0;
                        stage.pieces.extend((0..out.pieces.len()).map(|i| PreTokenTrace {
                            text: out.piece_text(i).to_owned(),
                            offsets: span(out.piece_orig(i), origin),
                        }));
                    }
                    k += 1;
                    t0 = now_micros();
                })?;
            }
            let t1 = now_micros();
            st.timings.0 += spent + (t1 - t0);
            for i in 0..pre.pieces.len() {
                let (word, worig) = (pre.piece_text(i), pre.piece_orig(i));
                if let Some(log) = st.pieces.as_mut() {
                    log.pre_tokens
                        .push(PreTokenTrace { text: word.to_owned(), offsets: span(worig, origin) });
                }
                self.model_piece(word, worig, origin, st)?;
                *st.word_idx += 1;
            }
            st.timings.1 += now_micros() - t1;
        }
        Ok(())
    }

    /// Runs the model on one pre-token `word` and appends its tokens; `orig[k]` is the input
    /// char of the word's `k`-th char, `origin` the segment's first.
    fn model_piece(&self, word: &str, orig: &[u32], origin: u32, st: &mut Staged) -> Result<()> {
        match self.model.wordpiece() {
            // WordPiece's own sink gives char ranges, without the byte-range detour.
            Some(wp) => self.model_word(wp, word, orig, origin, st),
            None => {
                st.tokens.clear();
                self.model.tokenize(word, st.tokens)?;
                self.push_model_tokens(word, orig, origin, st);
            }
        }
        Ok(())
    }

    /// Runs WordPiece on one pre-token `word` and appends its tokens; `orig[k]` is the input
    /// char of the word's `k`-th char, `origin` the segment's first.
    #[inline]
    fn model_word(&self, wp: &WordPiece, word: &str, orig: &[u32], origin: u32, st: &mut Staged) {
        let n_chars = orig.len();
        let (enc, word_idx) = (&mut *st.enc, *st.word_idx);
        let mut sink = StagedSink { wp, word, n_chars, orig: |k| orig[k], origin, enc, word_idx };
        wp.lookup(st.scratch.pad(word), n_chars, Hint::Nothing, None, st.subs, &mut sink);
    }

    /// Appends the model's tokens of one pre-token `piece` (in `st.tokens`), whose chars came
    /// from input chars `orig`, with the reference's offsets: a token's byte range in the
    /// piece spans the input chars of its first and last bytes. A range reaching past the
    /// piece (BPE byte fallback with a prefix or suffix) is, as in the reference, read as
    /// bytes of the whole input instead.
    fn push_model_tokens(&self, piece: &str, orig: &[u32], origin: u32, st: &mut Staged) {
        let named = self.model.ids_name_tokens();
        let mut chars = ByteToChar::new(piece);
        // Byte fallback gives each byte of a run of unknown text the run's range: its offsets
        // once, not a walk across the run per byte.
        let mut last = (usize::MAX, 0, (0, 0));
        for t in st.tokens.iter() {
            let (s, e) = (t.start as usize, t.end as usize);
            let off = if (s, e) == (last.0, last.1) {
                last.2
            } else if s < e && e <= piece.len() {
                span(&[orig[chars.char_at(s)], orig[chars.char_at(e - 1)]], origin)
            } else {
                unaligned_offsets(st.input, s, e)
            };
            last = (s, e, off);
            let text = (!named).then(|| self.model.token_text(piece, t));
            st.enc.push_token(t.id, text.as_ref(), off, *st.word_idx);
        }
    }

    /// Encodes `text` (and `pair`) as the reference's `Tokenizer.encode` does, including
    /// truncation and padding as configured.
    pub fn encode(&self, text: &str, pair: Option<&str>, add_special_tokens: bool) -> Result<Encoding> {
        let mut t = (0.0, 0.0);
        let mut a = self.encode_single(text, 0, 0, None, None, &mut t)?;
        let mut b = pair.map(|p| self.encode_single(p, 1, 1, None, None, &mut t)).transpose()?;
        self.truncate(&mut a, b.as_mut(), add_special_tokens)?;
        let mut enc = processors::post_process(
            self.post_processor.as_ref(),
            self.model.vocab_r(),
            a,
            b,
            add_special_tokens,
        )?;
        if let Some(p) = &self.padding {
            let target = match p.strategy {
                PaddingStrategy::Fixed(n) => n,
                PaddingStrategy::BatchLongest => enc.len(),
            };
            enc.pad(padding::round_up(target, p.pad_to_multiple_of), p);
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
        self.append_ids(text, add_special_tokens, ids)
    }

    /// [`Tokenizer::encode_ids`] appended to `ids`.
    fn append_ids(&self, text: &str, add_special_tokens: bool, ids: &mut Vec<u32>) -> Result<()> {
        #[cfg(feature = "general")]
        if let Some(n) = self.sentencepiece_normalizer() {
            let around = match (add_special_tokens, &self.template_ids) {
                (false, _) => Some((&[][..], &[][..])),
                (true, Some((before, after))) => Some((&before[..], &after[..])),
                (true, None) => None,
            };
            if let Some((before, after)) = around {
                // The whole text is one word of the model: normalize it plainly, no alignment.
                let norm = n.normalize_str(text);
                ids.reserve(norm.len() / 3 + before.len() + after.len() + 1);
                ids.extend_from_slice(before);
                self.model.tokenize_ids(&norm, &mut Vec::new(), ids)?;
                ids.extend_from_slice(after);
                return Ok(());
            }
        }
        let template = self.template_ids.is_some() || !add_special_tokens;
        if self.truncation.is_none() && self.padding.is_none() && template {
            if let Some(engine) = self.byte_level() {
                return self.ids_by_segment(text, add_special_tokens, ids, |seg, ids| {
                    self.segment_ids_byte_level(engine, seg, ids)
                });
            }
            if self.fused_ok() {
                return self.encode_ids_fused(text, add_special_tokens, ids);
            }
            #[cfg(feature = "general")]
            return self.append_ids_staged(text, add_special_tokens, ids);
        }
        ids.extend(self.encode(text, None, add_special_tokens)?.ids());
        Ok(())
    }

    /// The staged pipeline's ids alone: the stages [`Tokenizer::encode_single`] runs, without
    /// building an Encoding (offsets, token texts), with a template post-processor and no
    /// truncation or padding.
    #[cfg(feature = "general")]
    fn append_ids_staged(&self, text: &str, add_special_tokens: bool, ids: &mut Vec<u32>) -> Result<()> {
        let template = self.template_ids.as_ref().filter(|_| add_special_tokens);
        if let Some((before, _)) = template {
            ids.extend_from_slice(before);
        }
        let mut tokens = Vec::new();
        match self.raw_matcher.as_ref().filter(|m| m.may_match(text)) {
            None => self.segment_ids_staged(text, 0, ids, &mut tokens)?,
            Some(m) => {
                for seg in self.split_added(Some(m), text)? {
                    match seg.added {
                        Some(i) => ids.push(self.added[i].id),
                        None => {
                            let raw = &text[seg.byte_start..seg.byte_end];
                            self.segment_ids_staged(raw, seg.char_start, ids, &mut tokens)?
                        }
                    }
                }
            }
        }
        if let Some((_, after)) = template {
            ids.extend_from_slice(after);
        }
        Ok(())
    }

    /// The ids of one segment between added tokens of the raw text (starting at input char
    /// `char_start`: Metaspace's "first" asks), as [`Tokenizer::encode_segment_staged`] finds
    /// its tokens.
    #[cfg(feature = "general")]
    fn segment_ids_staged(
        &self,
        raw: &str,
        char_start: usize,
        ids: &mut Vec<u32>,
        tokens: &mut Vec<Token>,
    ) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        if self.segment_ids_raw(raw, char_start, ids)? {
            return Ok(());
        }
        if self.segment_ids_plain(raw, char_start, ids, tokens)? {
            return Ok(());
        }
        let norm = self.normalize_segment(raw, char_start, &mut None)?;
        for nseg in self.split_added(self.normalized_matcher.as_ref(), &norm.text)? {
            let ntext = &norm.text[nseg.byte_start..nseg.byte_end];
            if ntext.is_empty() {
                continue;
            }
            if let Some(i) = nseg.added {
                ids.push(self.added[i].id);
                continue;
            }
            let orig = &norm.orig[nseg.char_start..nseg.char_start + ntext.chars().count()];
            let text = AlignedText { text: ntext.to_owned(), orig: orig.to_vec() };
            let mut pre = PreTokenized { origin: char_start as u32, ..PreTokenized::whole(text) };
            if let Some(p) = &self.pre_tokenizer {
                pre = p.try_apply(pre, &mut |_, _| {})?;
            }
            for i in 0..pre.pieces.len() {
                self.model.tokenize_ids(pre.piece_text(i), tokens, ids)?;
            }
        }
        Ok(())
    }

    /// [`Tokenizer::segment_ids_staged`] without the alignment, where no stage needs it: a
    /// normalizer that tells its text alone ([`Normalizer::plain_text`]), and no pre-tokenizer,
    /// one that only cuts ([`PreTokenizer::only_cuts`], natively) or a Metaspace (whose prepend
    /// scheme "first" asks whether the text's first char stems from the input's first: the
    /// normalizer tells it where it can). False (nothing appended) where it cannot tell.
    #[cfg(feature = "general")]
    fn segment_ids_plain(
        &self,
        raw: &str,
        char_start: usize,
        ids: &mut Vec<u32>,
        tokens: &mut Vec<Token>,
    ) -> Result<bool> {
        let (metaspace, cuts): (_, Option<&PreTokenizer>) = match &self.pre_tokenizer {
            None => (None, None),
            Some(PreTokenizer::Metaspace(m)) => (Some(m), None),
            #[cfg(not(target_arch = "wasm32"))]
            Some(p) if p.only_cuts() => (None, Some(p)),
            Some(_) => return Ok(false),
        };
        if self.normalizer.as_ref().is_some_and(|n| !n.has_plain_text()) {
            return Ok(false);
        }
        let mut lead = if char_start == 0 { Lead::One } else { Lead::Later };
        let text = match &self.normalizer {
            Some(n) => match n.plain_text(raw.to_owned(), &mut lead) {
                Some(text) => text,
                None => return Ok(false),
            },
            None => raw.to_owned(),
        };
        let normalized_cut = self.normalized_matcher.as_ref().filter(|m| m.may_match(&text));
        if metaspace.is_some_and(|m| m.prepend_scheme == PrependScheme::First) {
            // A piece cut after a normalized added token starts at a later char, unless the
            // first chars may all stem from the input's first.
            let unknown = match lead {
                Lead::Unknown => true,
                Lead::Some => normalized_cut.is_some(),
                Lead::One | Lead::Later => false,
            };
            if unknown {
                return Ok(false);
            }
        }
        let starts_input = matches!(lead, Lead::One | Lead::Some);
        let mut buf = String::new();
        let mut segment_ids = |ntext: &str, starts_input: bool, ids: &mut Vec<u32>| {
            let mut piece_ids = |piece: &str| self.model.tokenize_ids(piece, tokens, ids);
            match (metaspace, cuts) {
                (Some(m), _) => m.pieces_plain(ntext, starts_input, &mut buf, piece_ids),
                #[cfg(not(target_arch = "wasm32"))]
                (None, Some(p)) => p.cut_plain(ntext, piece_ids),
                _ => piece_ids(ntext),
            }
        };
        // The staged pipeline's cut at added tokens matched in normalized text.
        match normalized_cut {
            None if text.is_empty() => {}
            None => segment_ids(&text, starts_input, ids)?,
            Some(m) => {
                for nseg in self.split_added(Some(m), &text)? {
                    let ntext = &text[nseg.byte_start..nseg.byte_end];
                    match nseg.added {
                        _ if ntext.is_empty() => {}
                        Some(i) => ids.push(self.added[i].id),
                        None => segment_ids(ntext, starts_input && nseg.byte_start == 0, ids)?,
                    }
                }
            }
        }
        Ok(true)
    }

    /// The ids of `text` (the template's around them when `add_special_tokens`): added tokens
    /// of the raw text as their ids, and `segment` appending the ids of each stretch between
    /// them. For pipelines with no added token matched in normalized text, no truncation or
    /// padding, and a template post-processor.
    pub(crate) fn ids_by_segment(
        &self,
        text: &str,
        add_special_tokens: bool,
        ids: &mut Vec<u32>,
        mut segment: impl FnMut(&str, &mut Vec<u32>) -> Result<()>,
    ) -> Result<()> {
        ids.reserve(text.len() / 3 + 4); // as encode_single's guess
        let template = self.template_ids.as_ref().filter(|_| add_special_tokens);
        if let Some((before, _)) = template {
            ids.extend_from_slice(before);
        }
        if self.raw_matcher.as_ref().is_none_or(|m| !m.may_match(text)) {
            // No added token in the text (the common case): one segment, no segment list.
            segment(text, ids)?;
        } else {
            for seg in self.split_added(self.raw_matcher.as_ref(), text)? {
                match seg.added {
                    Some(i) => ids.push(self.added[i].id),
                    None => segment(&text[seg.byte_start..seg.byte_end], ids)?,
                }
            }
        }
        if let Some((_, after)) = template {
            ids.extend_from_slice(after);
        }
        Ok(())
    }

    /// [`Tokenizer::encode_ids`] of every text on up to `threads` threads, end to end. The ids
    /// are those of [`Tokenizer::encode_batch_threads`] (padding `BatchLongest` pads to the
    /// longest of the batch).
    pub fn encode_batch_ids(
        &self,
        texts: &[&str],
        add_special_tokens: bool,
        threads: usize,
    ) -> Result<FlatIds> {
        if self.padding.is_some() {
            let inputs: Vec<(&str, Option<&str>)> = texts.iter().map(|&t| (t, None)).collect();
            let encs = self.encode_batch_threads(&inputs, add_special_tokens, threads)?;
            return Ok(encs.iter().map(|e| e.ids().collect()).collect());
        }
        FlatIds::encode(texts, threads, |t, ids| self.append_ids(t, add_special_tokens, ids))
    }

    /// SentencePiece's normalizer, when it and the model are all there is to encoding (as in a
    /// tokenizer read from a `.model` file): no added tokens, pre-tokenizer, truncation or
    /// padding.
    #[cfg(feature = "general")]
    fn sentencepiece_normalizer(&self) -> Option<&crate::normalizers::sentencepiece::SpmNormalizer> {
        match &self.normalizer {
            Some(Normalizer::SentencePiece(n))
                if self.pre_tokenizer.is_none()
                    && self.raw_matcher.is_none()
                    && self.normalized_matcher.is_none()
                    && self.truncation.is_none()
                    && self.padding.is_none() =>
            {
                Some(n)
            }
            _ => None,
        }
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
            let mut ea = self.encode_single(a, 0, 0, None, None, &mut t)?;
            let mut eb = b.map(|p| self.encode_single(p, 1, 1, None, None, &mut t)).transpose()?;
            self.truncate(&mut ea, eb.as_mut(), add_special_tokens)?;
            processors::post_process(
                self.post_processor.as_ref(),
                self.model.vocab_r(),
                ea,
                eb,
                add_special_tokens,
            )
        };
        let parts =
            batch::on_slices(inputs, threads, |part| part.iter().map(&one).collect::<Result<Vec<_>>>())?;
        let mut encs: Vec<Encoding> = parts.into_iter().flatten().collect();
        if let Some(p) = &self.padding {
            let target = match p.strategy {
                PaddingStrategy::Fixed(n) => n,
                PaddingStrategy::BatchLongest => encs.iter().map(|e| e.len()).max().unwrap_or(0),
            };
            let target = padding::round_up(target, p.pad_to_multiple_of);
            for e in &mut encs {
                e.pad(target, p);
            }
        }
        Ok(encs)
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
            None => self.model.id_to_token(id),
        }
    }

    /// The model's lattice of one pre-token ([`crate::models::Model::lattice`]); an added
    /// token's text is refused: the pipeline cuts it out before the model ever sees it.
    #[cfg(feature = "general")]
    pub fn lattice(&self, piece: &str, max_nodes: usize) -> crate::Result<crate::models::unigram::Lattice> {
        self.refuse_added(piece)?;
        self.model.lattice(piece, max_nodes)
    }

    /// How the WordPiece model searches one pre-token ([`crate::models::Model::wordpiece_steps`]).
    pub fn wordpiece_steps(
        &self,
        piece: &str,
        max_attempts: usize,
    ) -> crate::Result<crate::models::wordpiece::steps::WordPieceSteps> {
        self.refuse_added(piece)?;
        self.model.wordpiece_steps(piece, max_attempts)
    }

    /// How the BPE model merges one pre-token ([`crate::models::Model::merge_trace`]).
    #[cfg(feature = "general")]
    pub fn merge_trace(&self, piece: &str) -> crate::Result<crate::models::bpe::general::MergeTrace> {
        self.refuse_added(piece)?;
        crate::tokenizer::bpe::check_trace_len(piece.len())?;
        self.model.merge_trace(piece)
    }

    /// An added token's text: the pipeline cuts it out before the model ever sees it.
    fn refuse_added(&self, piece: &str) -> crate::Result<()> {
        if self.added.iter().any(|a| &*a.content == piece) {
            return Err(crate::Error::Input(format!(
                "{piece} is an added token, which the model never sees"
            )));
        }
        Ok(())
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.added
            .iter()
            .find(|a| &*a.content == token)
            .map(|a| a.id)
            .or_else(|| self.model.token_to_id(token))
    }

    /// The reference's decode: ids to tokens (unknown ids dropped, special tokens dropped
    /// when asked), then the decoder.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        #[cfg(feature = "general")]
        if let Some(Decoder::SentencePiece(_)) = &self.decoder {
            // SentencePiece refuses ids it has no piece for.
            if let Some(id) = ids.iter().find(|&&id| self.id_to_token(id).is_none()) {
                return Err(Error::Input(format!("id {id} is out of range")));
            }
        }
        let tokens: Vec<&str> = ids
            .iter()
            .filter_map(|&id| self.id_to_token(id))
            .filter(|t| !skip_special_tokens || !self.is_special_token(t))
            .collect();
        crate::decoders::decode(self.decoder.as_ref(), &tokens)
    }

    fn is_special_token(&self, t: &str) -> bool {
        // As the reference: the decoded text is looked up among special contents.
        self.special_contents.contains(t)
    }

    pub fn vocab_size(&self) -> usize {
        let mut ids: HashSet<u32> = self.model.vocab().values().copied().collect();
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

/// The staged chain's state while it encodes one input.
struct Staged<'a, 'o, 'p> {
    /// The whole input (offsets that the pre-token cannot place are read in it).
    input: &'a str,
    observer: &'a mut Observer<'o>,
    pieces: &'a mut Option<&'p mut PieceLog>,
    enc: &'a mut Encoding,
    word_idx: &'a mut u32,
    scratch: &'a mut crate::models::wordpiece::Scratch,
    subs: &'a mut Vec<SubToken>,
    tokens: &'a mut Vec<Token>,
    timings: &'a mut (f64, f64),
}

/// Char indices of byte positions of one text, for positions that mostly increase (a step
/// costs the bytes it moves over).
struct ByteToChar<'a> {
    text: &'a [u8],
    ascii: bool,
    /// `char` is the index of the char that starts at or before byte `byte`.
    byte: usize,
    char: usize,
}

impl<'a> ByteToChar<'a> {
    fn new(text: &'a str) -> Self {
        ByteToChar { text: text.as_bytes(), ascii: text.is_ascii(), byte: 0, char: 0 }
    }

    /// The index of the char that holds byte `b` (`b < text.len()`).
    fn char_at(&mut self, b: usize) -> usize {
        if self.ascii {
            return b;
        }
        if b < self.byte {
            // Back (byte fallback repeats a char's range for each of its bytes): uncount the
            // char starts passed.
            let starts = self.text[b + 1..=self.byte].iter().filter(|&&x| x & 0xC0 != 0x80).count();
            (self.byte, self.char) = (b, self.char - starts);
            return self.char;
        }
        let starts = self.text[self.byte + 1..=b].iter().filter(|&&x| x & 0xC0 != 0x80).count();
        self.byte = b;
        self.char += starts;
        self.char
    }
}

/// The reference's offsets of a token whose byte range `s..e` in its pre-token reaches past
/// the pre-token: the range is taken as is, as bytes of the whole input, and turned into
/// chars of it where it can be (the start's char, and the end's; an end past the input: one
/// past the char before the end, or past the start's char plus one); else it stays in bytes.
fn unaligned_offsets(input: &str, s: usize, e: usize) -> (u32, u32) {
    let b = input.as_bytes();
    let char_of = |i: usize| (i < b.len()).then(|| b[..=i].iter().filter(|&&x| x & 0xC0 != 0x80).count() - 1);
    let off = match (char_of(s), char_of(e)) {
        (Some(a), Some(z)) => (a, z),
        // (The reference's fallback for the char before the end is the start's plus one, and
        // the end is one past that char.)
        (Some(a), None) => (a, e.checked_sub(1).and_then(char_of).unwrap_or(a + 1) + 1),
        _ => (s, e),
    };
    (off.0 as u32, off.1 as u32)
}

/// One word's tokens, from the staged chain into an Encoding; `orig(k)` is the input char of
/// the word's `k`-th char (or [`crate::normalizers::AT_START`]: the empty span at `origin`).
struct StagedSink<'a, F> {
    wp: &'a WordPiece,
    word: &'a str,
    n_chars: usize,
    orig: F,
    origin: u32,
    enc: &'a mut Encoding,
    word_idx: u32,
}

impl<F: Fn(usize) -> u32> Sink for StagedSink<'_, F> {
    fn whole(&mut self, id: u32) {
        self.pieces(&[SubToken { id, char_start: 0, char_end: self.n_chars }]);
    }

    fn unk(&mut self, unk_id: u32) {
        let off = span(&[(self.orig)(0), (self.orig)(self.n_chars - 1)], self.origin);
        self.enc.push_token(unk_id, Some(&self.wp.unk_token), off, self.word_idx);
    }

    fn pieces(&mut self, pieces: &[SubToken]) {
        for s in pieces {
            let off = span(&[(self.orig)(s.char_start), (self.orig)(s.char_end - 1)], self.origin);
            if self.wp.ids_name_tokens {
                self.enc.push_token(s.id, None, off, self.word_idx);
            } else {
                self.enc.push_token(s.id, Some(&self.wp.token_text(self.word, s)), off, self.word_idx);
            }
        }
    }
}

#[cfg(all(test, feature = "general"))]
mod tests {
    use super::*;
    use crate::models::bpe::general::{Bpe, BpeOptions};

    #[test]
    fn byte_to_char_finds_the_char_of_each_byte() {
        let text = "aé東b";
        let mut m = ByteToChar::new(text);
        // Bytes: a=0, é=1..3, 東=3..6, b=6.
        let want = [0, 1, 1, 2, 2, 2, 3];
        for (b, &c) in want.iter().enumerate() {
            assert_eq!(m.char_at(b), c, "byte {b}");
        }
        assert_eq!(m.char_at(2), 1, "backwards");
    }

    #[test]
    fn ranges_past_the_piece_read_the_input_bytes() {
        // Within the input: the chars holding the start and the end byte.
        assert_eq!(unaligned_offsets("aé東b", 1, 3), (1, 2));
        assert_eq!(unaligned_offsets("aé東b", 2, 4), (1, 2));
        // The end at or past the input's end: the char before it, plus one.
        assert_eq!(unaligned_offsets("abc", 2, 3), (2, 3));
        assert_eq!(unaligned_offsets("abc", 2, 9), (2, 4));
        // The start past the input's end: the bytes themselves.
        assert_eq!(unaligned_offsets("abc", 3, 4), (3, 4));
    }

    /// Byte fallback with a prefix: `"acb"` gives a, then the bytes of "##c" as three
    /// one-byte tokens (the last one ends past the input: 4 > 3), and "##b" has no token or
    /// byte tokens and no unk: it is dropped.
    #[test]
    fn staged_bpe_offsets_follow_the_reference_rule() {
        let vocab = [("a", 0), ("b", 1), ("<0x63>", 2), ("<0x23>", 3)].map(|(t, i)| (t.to_owned(), i)).into();
        let options = BpeOptions {
            continuing_subword_prefix: Some("##".into()),
            byte_fallback: true,
            ..Default::default()
        };
        let model = Bpe::new(vocab, &[], options).unwrap();
        let t = Tokenizer::new(None, None, Model::Bpe(model), None, None, Vec::new(), None, None).unwrap();
        let e = t.encode("acb", None, false).unwrap();
        assert_eq!(e.ids().collect::<Vec<_>>(), [0, 3, 3, 2]);
        assert_eq!(e.offsets().collect::<Vec<_>>(), [(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(e.tokens(), ["a", "<0x23>", "<0x23>", "<0x63>"]);
    }
}

#[cfg(all(test, feature = "general"))]
mod staged_ids_tests {
    use super::*;
    use crate::testing::Rng;

    fn unigram(unk_id: &str, byte_fallback: bool) -> Tokenizer {
        let bytes: String = (0..256).map(|b| format!(r#", ["<0x{b:02X}>", -9.0]"#)).collect();
        Tokenizer::from_json_str(&format!(
            r#"{{"normalizer": {{"type": "Sequence", "normalizers": [{{"type": "Lowercase"}},
                    {{"type": "Replace", "pattern": {{"String": "q"}}, "content": "yy"}}]}},
                "pre_tokenizer": {{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                    "split": true}},
                "added_tokens": [{{"id": 9, "content": "<x>", "special": true, "normalized": false}},
                    {{"id": 10, "content": "yy", "special": false, "normalized": true}},
                    {{"id": 11, "content": "<s>", "special": true, "normalized": false}}],
                "post_processor": {{"type": "TemplateProcessing",
                    "single": [{{"SpecialToken": {{"id": "<s>", "type_id": 0}}}},
                        {{"Sequence": {{"id": "A", "type_id": 0}}}}],
                    "pair": [{{"Sequence": {{"id": "A", "type_id": 0}}}},
                        {{"Sequence": {{"id": "B", "type_id": 1}}}}],
                    "special_tokens": {{"<s>": {{"id": "<s>", "ids": [11], "tokens": ["<s>"]}}}}}},
                "model": {{"type": "Unigram", "unk_id": {unk_id}, "byte_fallback": {byte_fallback},
                    "vocab": [["<unk>", 0.0], ["▁", -2.0], ["a", -3.0], ["b", -3.0], ["c", -3.5],
                        ["ab", -4.0], ["▁a", -3.0], ["▁ab", -4.5], ["bc", -5.0], ["é", -6.0],
                        ["y", -1.0], ["<x>", -1.0], ["<s>", -1.0]{bytes}]}}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn ids_alone_match_the_encoding() {
        let parts = ["a", "b", "c", "A", "é", " ", "  ", "<x>", "yy", "q", "z", "東", "\u{301}", "y", "<s>"];
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        for (unk, fallback) in [("0", false), ("0", true), ("null", false)] {
            let t = unigram(unk, fallback);
            for _ in 0..2000 {
                let text: String = (0..rng.below(10)).map(|_| rng.pick(&parts)).collect();
                for special in [false, true] {
                    let want = t.encode(&text, None, special).map(|e| e.ids().collect::<Vec<u32>>());
                    let got = t.encode_ids(&text, special);
                    match (got, want) {
                        (Ok(got), Ok(want)) => assert_eq!(got, want, "{text:?} {unk} {fallback}"),
                        (got, want) => assert_eq!(got.is_err(), want.is_err(), "{text:?} {unk}"),
                    }
                }
            }
        }
    }

    fn plain_unigram(normalizer: &str, pre_tokenizer: &str) -> Tokenizer {
        Tokenizer::from_json_str(&format!(
            r#"{{"normalizer": {normalizer}, "pre_tokenizer": {pre_tokenizer},
                "added_tokens": [{{"id": 9, "content": "<x>", "special": true, "normalized": false}},
                    {{"id": 10, "content": "yy", "special": false, "normalized": true}}],
                "model": {{"type": "Unigram", "unk_id": 0, "byte_fallback": false,
                    "vocab": [["<unk>", 0.0], ["▁", -2.0], ["a", -3.0], ["b", -3.0], ["c", -3.5],
                        ["ab", -4.0], ["▁a", -3.0], ["▁ab", -4.5], ["bc", -5.0], ["é", -6.0],
                        ["y", -1.0], ["▁y", -1.5], ["x", -2.0]]}}}}"#
        ))
        .unwrap()
    }

    /// `encode_ids` of `text` gives the Encoding's ids, or both fail.
    fn assert_ids_match_the_encoding(t: &Tokenizer, text: &str, what: &str) {
        let want = t.encode(text, None, false).map(|e| e.ids().collect::<Vec<u32>>());
        match (t.encode_ids(text, false), want) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "{text:?} {what}"),
            (got, want) => assert_eq!(got.is_err(), want.is_err(), "{text:?} {what}"),
        }
    }

    /// The alignment-free path (`segment_ids_plain`) against the Encoding's staged pipeline:
    /// Metaspace "first" after chars the normalizers remove or replace at the start, after
    /// added tokens (raw and normalized), with the one-char-class Replace regexes.
    #[test]
    fn plain_ids_match_the_encoding() {
        let replace = |pattern: &str, content: &str| {
            format!(r#"{{"type": "Replace", "pattern": {pattern}, "content": "{content}"}}"#)
        };
        let seq = |v: &[String]| format!(r#"{{"type": "Sequence", "normalizers": [{}]}}"#, v.join(", "));
        let soft = r#"{"Regex": "[\\u00AD\\u200B\\u200C\\u200D\\u2060\\uFEFF]"}"#;
        let zs = r#"{"Regex": "\\p{Zs}"}"#;
        let nfc = r#"{"type": "NFC"}"#.to_owned();
        let normalizers = [
            "null".to_owned(),
            seq(&[replace(soft, ""), replace(zs, " "), nfc.clone()]),
            seq(&[
                r#"{"type": "Strip", "strip_left": true, "strip_right": false}"#.into(),
                replace(r#"{"String": " "}"#, "▁"),
            ]),
            seq(&[replace(r#"{"String": "a"}"#, ""), replace(zs, "xy"), nfc.clone()]),
            seq(&[replace(r#"{"Regex": "[^ab ]"}"#, "b"), replace(r#"{"Regex": "[b]"}"#, "")]),
            seq(&[replace(r#"{"String": "ab"}"#, "c"), replace(r#"{"String": "a"}"#, "yy")]),
            seq(&[r#"{"type": "NFD"}"#.into(), replace(r#"{"Regex": "\\u0301"}"#, "")]),
            nfc,
        ];
        let parts = [
            "a", "b", "c", "é", "e\u{301}", " ", "  ", "\u{AD}", "\u{200B}", "\u{3000}", "\u{A0}", "<x>",
            "yy", "▁", "x", "ab", "\u{301}",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for normalizer in &normalizers {
            for scheme in ["first", "always", "never"] {
                for split in [true, false] {
                    let pre = format!(
                        r#"{{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "{scheme}", "split": {split}}}"#
                    );
                    let t = plain_unigram(normalizer, &pre);
                    for _ in 0..600 {
                        let text: String = (0..rng.below(8)).map(|_| rng.pick(&parts)).collect();
                        assert_ids_match_the_encoding(&t, &text, &format!("{normalizer} {pre}"));
                    }
                }
            }
        }
        // The plain path answers for "first" where the start is told.
        let pre = r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}"#;
        let t = plain_unigram(&normalizers[1], pre);
        for (text, char_start) in [("ab c", 0), ("\u{AD}ab", 0), ("\u{3000}ab", 0), ("ab", 4)] {
            let (mut ids, mut tokens) = (Vec::new(), Vec::new());
            assert!(t.segment_ids_plain(text, char_start, &mut ids, &mut tokens).unwrap(), "{text:?}");
        }
    }

    /// The plain path with pre-tokenizers that only cut, and the normalizers that lowercase and
    /// strip accents, against the Encoding's staged pipeline.
    #[test]
    fn cut_ids_match_the_encoding() {
        let normalizers = [
            r#"{"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]}"#,
            r#"{"type": "Sequence", "normalizers": [{"type": "StripAccents"}, {"type": "NFKC"}, {"type": "Lowercase"}]}"#,
        ];
        let pre_tokenizers = [
            r#"{"type": "Whitespace"}"#,
            r#"{"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                {"type": "Punctuation", "behavior": "Isolated"}, {"type": "Digits", "individual_digits": true}]}"#,
            r#"{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "[ab]+"},
                "behavior": "MergedWithNext", "invert": true}, {"type": "Sequence", "pretokenizers": [
                {"type": "CharDelimiterSplit", "delimiter": "c"}, {"type": "UnicodeScripts"}]}]}"#,
            r#"{"type": "BertPreTokenizer"}"#,
            r#"{"type": "Sequence", "pretokenizers": [{"type": "FixedLength", "length": 2},
                {"type": "Punctuation", "behavior": "Contiguous"}]}"#,
        ];
        let parts = [
            "a", "b", "c", "é", "E\u{301}", " ", "  ", "\u{3000}", "<x>", "yy", "YY", "x", "AB", "\u{301}",
            "1", "23", ",", "!?", "İ", "日本", "Ǆ", "\t",
        ];
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for normalizer in normalizers {
            for pre in pre_tokenizers {
                let t = plain_unigram(normalizer, pre);
                let (mut ids, mut tokens) = (Vec::new(), Vec::new());
                assert!(t.segment_ids_plain("ab c", 0, &mut ids, &mut tokens).unwrap(), "{pre}");
                for _ in 0..600 {
                    let text: String = (0..rng.below(10)).map(|_| rng.pick(&parts)).collect();
                    assert_ids_match_the_encoding(&t, &text, &format!("{normalizer} {pre}"));
                }
            }
        }
    }

    /// SentencePiece's map for the raw-stretch tests: chars mapped to spaces, removed,
    /// expanded to several words or to "▁"; marks that join a space before them, prepended
    /// chars that join one after. Whitespace it keeps ("\t", U+2003) is what a Strip removes.
    #[cfg(not(target_arch = "wasm32"))]
    fn raw_test_map() -> String {
        use crate::loaders::tiktoken::base64_encode;
        use crate::normalizers::precompiled::Precompiled;
        let map = Precompiled::from_rules(&[
            ("\n", " "),
            ("\u{3000}", " "),
            ("\u{200B}", ""),
            ("x", "ab c"),
            ("z", "  a  "),
            ("w", "\u{2581}"),
            ("e\u{301}", "é"),
            ("\u{301}", "y"),
            (" \u{301}", "ab"),
            ("\u{600} ", "x"),
        ]);
        base64_encode(map.charsmap())
    }

    const RAW_TEST_PARTS: [&str; 26] = [
        "a", "b", "c", "é", "e\u{301}", " ", "  ", "\u{301}", "\u{600}", "\n", "\u{3000}", "\u{200B}", "x",
        "y", "ab", "<x>", "▁", "ab ab", "c a", "q", "qq a", "z", "w", "\t", "\u{2003}", "b  ",
    ];

    /// Encodes random texts with `t` (whose pipeline the raw path serves) and compares
    /// `encode_ids` and the raw path's own ids with the Encoding's staged pipeline; each text
    /// twice, the second time from the stretch cache. A fifth of the texts have stretches
    /// between spaces of up to ~1,400 bytes, across the length the piece cache keeps; two
    /// fifths are shorter than 256 bytes (where the bytes file's pipeline leaves the text to
    /// its cache of pre-tokens), half of them lines of a few words; the rest just reach 256.
    #[cfg(not(target_arch = "wasm32"))]
    fn check_raw_stretches(t: &Tokenizer, rng: &mut Rng, what: &str, min_answered: usize) {
        let parts = RAW_TEST_PARTS;
        let mut raw_answered = 0;
        for _ in 0..1500 {
            let mut text: String = (0..rng.below(12)).map(|_| rng.pick(&parts)).collect();
            let (len, spaced) = match rng.below(5) {
                0 => (256 + rng.below(1200), 40),
                1 => (rng.below(256), 1),
                // Lines with a space or two, or none.
                2 => (rng.below(40), 8),
                _ => (crate::models::cache::MAX_WORD, 1),
            };
            while text.len() < len {
                let part = rng.pick(&parts);
                let odds = match part {
                    "<x>" => 200,
                    _ if part.contains(' ') => spaced,
                    _ => 1,
                };
                if rng.below(odds) == 0 {
                    text.push_str(part);
                }
            }
            // Text ends that a Strip removes.
            for _ in 0..rng.below(3) {
                text.push_str(rng.pick(&[" ", "\t", "\n", "\u{2003}", "\u{200B}"]));
            }
            let want = t.encode(&text, None, false).unwrap().ids().collect::<Vec<u32>>();
            for _ in 0..2 {
                assert_eq!(t.encode_ids(&text, false).unwrap(), want, "{text:?} {what}");
            }
            // The raw path alone where the text is one segment (no added token).
            if !text.contains("<x>") {
                for _ in 0..2 {
                    let mut ids = Vec::new();
                    if t.segment_ids_raw(&text, 0, &mut ids).unwrap() {
                        assert_eq!(ids, want, "{text:?} {what}");
                        raw_answered += 1;
                    }
                }
            }
        }
        assert!(raw_answered >= min_answered, "{raw_answered} {what}");
    }

    const RAW_TEST_MODEL: &str = r#""added_tokens": [{"id": 9, "content": "<x>", "special": true, "normalized": false}],
        "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": false,
            "vocab": [["<unk>", 0.0], ["▁", -2.0], ["a", -3.0], ["b", -3.0], ["c", -3.5],
                ["ab", -4.0], ["▁a", -3.0], ["▁ab", -4.5], ["bc", -5.0], ["é", -6.0],
                ["y", -1.0], ["▁y", -1.5], ["x", -2.0], ["\t", -2.0]]}"#;

    /// The raw-stretch path for the bytes file's pipeline: the map, spaces to "▁", Metaspace
    /// keeping the text whole.
    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn raw_stretch_ids_match_the_encoding() {
        let charsmap = raw_test_map();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for scheme in ["first", "always"] {
            let t = Tokenizer::from_json_str(&format!(
                r#"{{"normalizer": {{"type": "Sequence", "normalizers": [
                        {{"type": "Precompiled", "precompiled_charsmap": "{charsmap}"}},
                        {{"type": "Replace", "pattern": {{"String": " "}}, "content": "▁"}}]}},
                    "pre_tokenizer": {{"type": "Metaspace", "replacement": "▁",
                        "prepend_scheme": "{scheme}", "split": false}},
                    {RAW_TEST_MODEL}}}"#
            ))
            .unwrap();
            assert!(t.raw_words_shape().is_some());
            check_raw_stretches(&t, &mut rng, scheme, 2200);
            // The same text at the input's start and after an added token: Metaspace's
            // "first" prepends "▁" to the one and not the other.
            for text in ["ab a", "<x>ab a", "ab a<x>ab a", "<x>c", "c<x>c", "c"] {
                let want = t.encode(text, None, false).unwrap().ids().collect::<Vec<u32>>();
                assert_eq!(t.encode_ids(text, false).unwrap(), want, "{text:?} {scheme}");
            }
        }
    }

    /// The raw-stretch path for a normalizer that sees nothing across a space (a Replace of
    /// char sets, Unicode forms, literals without a space), Metaspace splitting before each
    /// "▁"; then with a token matched in normalized text added.
    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn raw_stretch_spaced_match_the_encoding() {
        let pipeline = |replace: &str| {
            Tokenizer::from_json_str(&format!(
                r#"{{"normalizer": {{"type": "Sequence", "normalizers": [
                        {{"type": "Replace", "pattern": {{"Regex": "[\\u00AD\\u200B]"}}, "content": ""}},
                        {{"type": "Replace", "pattern": {{"Regex": "\\p{{Zs}}"}}, "content": " "}},
                        {replace},
                        {{"type": "NFC"}}]}},
                    "pre_tokenizer": {{"type": "Metaspace", "replacement": "▁",
                        "prepend_scheme": "always", "split": true}},
                    {RAW_TEST_MODEL}}}"#
            ))
            .unwrap()
        };
        let t = pipeline(r#"{"type": "Replace", "pattern": {"String": "qq"}, "content": " ▁e"}"#);
        assert!(t.raw_spaced_shape().is_some());
        check_raw_stretches(&t, &mut Rng(0x0123_4567_89AB_CDEF), "spaced", 2200);
        let mut with_token = t.clone();
        let token = AddedToken { normalized: true, lstrip: true, ..AddedToken::new("yc", 10, true) };
        with_token.added.push(token);
        with_token.rebuild_added().unwrap();
        assert!(with_token.raw_spaced_shape().is_some());
        check_raw_stretches(&with_token, &mut Rng(0x0FED_CBA9_8765_4321), "spaced with a token", 1500);
        // Steps that see across a space.
        for replace in [
            r#"{"type": "Replace", "pattern": {"String": "a b"}, "content": "x"}"#,
            r#"{"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "▁"}"#,
            r#"{"type": "Replace", "pattern": {"Regex": "\\s"}, "content": "x"}"#,
            r#"{"type": "Strip", "strip_left": false, "strip_right": true}"#,
        ] {
            assert!(pipeline(replace).raw_spaced_shape().is_none(), "{replace}");
        }
    }

    /// The raw-stretch path for T5's and XLM-R's pipeline: the map, Strip of the right end,
    /// runs of two or more spaces to "▁", Metaspace splitting before each "▁"; then the same
    /// texts with a token matched in normalized text added (as XLM-R's "<mask>", taking the
    /// whitespace before it), whose matches the cache of the first run must not hide.
    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn raw_stretch_pieces_match_the_encoding() {
        let charsmap = raw_test_map();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let t = Tokenizer::from_json_str(&format!(
            r#"{{"normalizer": {{"type": "Sequence", "normalizers": [
                    {{"type": "Precompiled", "precompiled_charsmap": "{charsmap}"}},
                    {{"type": "Strip", "strip_left": false, "strip_right": true}},
                    {{"type": "Replace", "pattern": {{"Regex": " {{2,}}"}}, "content": "▁"}}]}},
                "pre_tokenizer": {{"type": "Metaspace", "replacement": "▁",
                    "prepend_scheme": "always", "split": true}},
                {RAW_TEST_MODEL}}}"#
        ))
        .unwrap();
        assert!(t.raw_pieces_shape().is_some());
        check_raw_stretches(&t, &mut Rng(rng.0), "pieces", 1900);
        let mut with_token = t.clone();
        let token = AddedToken { normalized: true, lstrip: true, ..AddedToken::new("yc", 10, true) };
        with_token.added.push(token);
        with_token.rebuild_added().unwrap();
        assert!(with_token.raw_pieces_shape().is_some());
        check_raw_stretches(&with_token, &mut rng, "pieces with a normalized token", 1100);
    }
}
