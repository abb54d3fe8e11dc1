//! The fused BERT pipeline: BertNormalizer + BertPreTokenizer + WordPiece in one pass over
//! the input ([`super::bert_words::for_each_word`] hands over each normalized word with the
//! alignment of just that word), replacing the staged chain of [`Tokenizer::encode_single`]
//! for inputs without added tokens matched in normalized text. Tested against the staged
//! chain (all fast paths off) on random inputs.

use super::bert_words::{span, OrigCursor, Word, WordView};
use crate::models::wordpiece::SubToken;
use crate::tokenizer::{Encoding, Tokenizer};

type WordScratch = (Word, Vec<SubToken>);

thread_local! {
    /// The fused pass's word buffer and the model's sub-token buffer, kept between calls so
    /// that a short input costs no allocation for them.
    static SCRATCH: std::cell::RefCell<WordScratch> = Default::default();
}

/// This thread's scratch buffers (empty ones if they are in use further up the stack).
pub(crate) fn take_scratch() -> WordScratch {
    SCRATCH.with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)).unwrap_or_default())
}

/// Returns buffers taken with [`take_scratch`] (unless they grew past 64 KB: a rare huge word
/// should not pin its memory).
pub(crate) fn put_scratch(w: Word, subs: Vec<SubToken>) {
    if w.capacity() + subs.capacity() * std::mem::size_of::<SubToken>() <= 1 << 16 {
        SCRATCH.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                *s = (w, subs);
            }
        });
    }
}

impl Tokenizer {
    /// Encodes `raw`, a stretch of input without added tokens whose first char is input char
    /// `char_start`, in one fused pass, appending its tokens to `enc`; false (with `enc` and
    /// `word_idx` as they were) when a char needs canonical reordering, which only the staged
    /// chain does.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn encode_segment_fused(
        &self,
        raw: &str,
        char_start: u32,
        enc: &mut Encoding,
        word_idx: &mut u32,
        scratch_word: &mut Word,
        subs: &mut Vec<SubToken>,
    ) -> bool {
        let cache = self.cache.as_ref().expect("fused_ok checks the cache");
        let mut w = std::mem::take(scratch_word);
        let start_len = enc.len();
        let start_word = *word_idx;
        let whole = self.model.ids_name_tokens;
        // The closure is inlined at every place for_each_word hands over a word (as a
        // call it cost ~18 instructions a word; callgrind: en -6M, zh -5M per MB).
        let r = crate::models::wordpiece::word_cache::with_cache(self.model.cache_id, |mut wc| {
            crate::fused::bert_words::for_each_word(
                cache,
                self.fast,
                raw,
                char_start,
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
                            enc.push_token(id, None, span(wd.orig, 0, wd.n_chars), *word_idx)
                        }
                        _ => self.model_view(wd, wc.as_deref_mut(), subs, enc, *word_idx),
                    }
                    *word_idx += 1;
                },
            )
        });
        *scratch_word = w;
        if r.is_ok() {
            return true;
        }
        // A char that canonical reordering may move: the caller redoes this segment staged.
        enc.truncate_to(start_len);
        *word_idx = start_word;
        false
    }

    /// The ids of `text` through the fused pass (the caller checked [`Tokenizer::fused_ok`]
    /// and that no truncation or padding applies), appended to `ids`.
    pub(crate) fn encode_ids_fused(&self, text: &str, add_special_tokens: bool, ids: &mut Vec<u32>) {
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
    }

    /// Whether the fused fast path applies: BERT normalizer (or none is not enough: the
    /// cache is per normalizer), BERT pre-tokenizer, and no added token that must be
    /// matched in normalized text.
    pub(crate) fn fused_ok(&self) -> bool {
        self.fast.fused
            && self.cache.is_some()
            && matches!(self.pre_tokenizer, Some(crate::pre_tokenizers::PreTokenizer::Bert))
            && self.normalized_matcher.is_none()
    }

    /// [`Tokenizer::model_word`] for a word of the fused path that is not one vocabulary
    /// entry (or whose token texts are not the vocabulary's).
    #[inline(never)]
    pub(crate) fn model_view(
        &self,
        wd: WordView,
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

    /// Appends the ids of `raw`, a stretch of input without added tokens (fused path).
    pub(crate) fn segment_ids(&self, raw: &str, w: &mut Word, subs: &mut Vec<SubToken>, ids: &mut Vec<u32>) {
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
}
