//! The fused BERT pipeline: BertNormalizer + BertPreTokenizer + WordPiece in one pass over
//! the input ([`super::bert_words::for_each_word`] hands over each normalized word with the
//! alignment of just that word), replacing the staged chain of [`Tokenizer::encode_single`]
//! for inputs without added tokens matched in normalized text. Tested against the staged
//! chain (all fast paths off) on random inputs.

use super::bert_words::{span, OrigCursor, Word, WordView};
use crate::models::wordpiece::word_cache::{Hit, WordCache};
use crate::models::wordpiece::{Hint, Sink, SubToken};
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
        let wp = self.model.wordpiece().expect("fused_ok checks the model");
        let mut w = std::mem::take(scratch_word);
        let start_len = enc.len();
        let start_word = *word_idx;
        let mut st = EncodeState { tok: self, named: wp.ids_name_tokens, enc, word_idx: *word_idx };
        let st_ref = &mut st;
        // The closure is inlined at every place for_each_word hands over a word: as a call
        // it cost ~18 instructions a word.
        let r = crate::models::wordpiece::word_cache::with_cache(wp.cache_id, |mut wc| {
            let st = &mut *st_ref;
            crate::fused::bert_words::for_each_word(
                cache,
                self.fast,
                raw,
                char_start,
                &mut w,
                None,
                // (move: the closure holds the references themselves, not references to them.)
                #[inline(always)]
                move |wd| {
                    let hint = if wd.ascii { Hint::Ascii } else { Hint::Nothing };
                    let mut sink = EncodeSink { st: &mut *st, wd };
                    wp.lookup(wd.word, wd.n_chars, hint, wc.as_deref_mut(), subs, &mut sink);
                    st.word_idx += 1;
                },
            )
        });
        *scratch_word = w;
        if r.is_ok() {
            *word_idx = st.word_idx;
            return true;
        }
        let enc = st.enc;
        // A char that canonical reordering may move: the caller redoes this segment staged.
        enc.truncate_to(start_len);
        *word_idx = start_word;
        false
    }

    /// The ids of `text` through the fused pass (the caller checked [`Tokenizer::fused_ok`],
    /// that no truncation or padding applies, and that the post-processor only puts ids around
    /// the text's), appended to `ids`.
    pub(crate) fn encode_ids_fused(
        &self,
        text: &str,
        add_special_tokens: bool,
        ids: &mut Vec<u32>,
    ) -> crate::Result<()> {
        let (mut w, mut subs) = take_scratch();
        let done = self.ids_by_segment(text, add_special_tokens, ids, |seg, ids| {
            self.segment_ids(seg, &mut w, &mut subs, ids);
            Ok(())
        });
        put_scratch(w, subs);
        done
    }

    /// Whether the fused fast path applies: BERT normalizer (or none is not enough: the
    /// cache is per normalizer), BERT pre-tokenizer, and no added token that must be
    /// matched in normalized text.
    ///
    /// Never in the general wasm module, which leaves the fused pass out (20 KB of its gzip
    /// budget): the page opens BERT files with the BERT module, and the staged chain gives
    /// the same tokens.
    pub(crate) fn fused_ok(&self) -> bool {
        !cfg!(all(target_arch = "wasm32", feature = "general"))
            && self.fast.fused
            && self.cache.is_some()
            && matches!(self.pre_tokenizer, Some(crate::pre_tokenizers::PreTokenizer::Bert))
            && self.normalized_matcher.is_none()
            && self.model.wordpiece().is_some()
    }

    /// Pushes the tokens `subs` of a word of the fused path with their texts, for a model
    /// whose ids do not name its tokens (`unk`: the word is the unk token).
    #[inline(never)]
    fn push_named(&self, wd: WordView, subs: &[SubToken], unk: bool, enc: &mut Encoding, word_idx: u32) {
        let wp = self.model.wordpiece().expect("fused_ok checks the model");
        let mut at = OrigCursor::new(wd.orig);
        for s in subs {
            let off = (at.at(s.char_start), at.at(s.char_end - 1) + 1);
            if unk {
                enc.push_token(s.id, Some(&wp.unk_token), off, word_idx);
            } else {
                enc.push_token(s.id, Some(&wp.token_text(wd.text(), s)), off, word_idx);
            }
        }
    }

    /// Appends the ids of `raw`, a stretch of input without added tokens (fused path).
    pub(crate) fn segment_ids(&self, raw: &str, w: &mut Word, subs: &mut Vec<SubToken>, ids: &mut Vec<u32>) {
        let cache = self.cache.as_ref().expect("fused_ok checks the cache");
        let wp = self.model.wordpiece().expect("fused_ok checks the model");
        let mark = ids.len();
        // Inlined into for_each_word, as in encode_single.
        let r = crate::models::wordpiece::word_cache::with_cache(wp.cache_id, |mut wc| {
            let (ids, subs) = (&mut *ids, &mut *subs);
            crate::fused::bert_words::for_each_word(
                cache,
                self.fast,
                raw,
                0,
                w,
                None,
                // (move: the closure holds the references themselves, not references to them.)
                #[inline(always)]
                move |wd| {
                    let hint = if wd.ascii { Hint::Ascii } else { Hint::Nothing };
                    wp.lookup(wd.word, wd.n_chars, hint, wc.as_deref_mut(), subs, ids);
                },
            )
        });
        if r.is_err() {
            ids.truncate(mark);
            let mut t = (0.0, 0.0);
            // (WordPiece never fails: only a missing unk token makes a model fail.)
            let enc = self.encode_single(raw, 0, 0, None, None, &mut t).expect("WordPiece encodes any text");
            ids.extend(enc.ids());
        }
    }
}

/// Where the fused pass puts tokens: built once per segment (so that the per-word sink is
/// two pointers' worth of stores, not all of this).
struct EncodeState<'t, 'e> {
    tok: &'t Tokenizer,
    /// Whether the model's ids name its tokens (read once, not per word).
    named: bool,
    enc: &'e mut Encoding,
    word_idx: u32,
}

/// One word's tokens, from the fused pass into an Encoding.
struct EncodeSink<'s, 't, 'e, 'w> {
    st: &'s mut EncodeState<'t, 'e>,
    wd: WordView<'w>,
}

impl EncodeSink<'_, '_, '_, '_> {
    /// The one token of the whole word.
    #[inline(always)]
    fn one(&mut self, id: u32, unk: bool) {
        // Most words are one vocabulary entry: that case is kept small, in the caller's loop.
        // (With ids naming tokens, the unk token is named by its id too.)
        let st = &mut *self.st;
        if st.named {
            st.enc.push_token(id, None, span(self.wd.orig, 0, self.wd.n_chars), st.word_idx);
        } else {
            let s = SubToken { id, char_start: 0, char_end: self.wd.n_chars };
            st.tok.push_named(self.wd, &[s], unk, st.enc, st.word_idx);
        }
    }
}

impl Sink for EncodeSink<'_, '_, '_, '_> {
    #[inline(always)]
    fn whole(&mut self, id: u32) {
        self.one(id, false);
    }

    #[inline(always)]
    fn unk(&mut self, unk_id: u32) {
        self.one(unk_id, true);
    }

    #[inline(always)]
    fn pieces(&mut self, pieces: &[SubToken]) {
        let st = &mut *self.st;
        if st.named {
            st.enc.push_pieces(pieces, self.wd.orig, st.word_idx);
        } else {
            st.tok.push_named(self.wd, pieces, false, st.enc, st.word_idx);
        }
    }
}

/// One word's ids, from the fused pass into a list.
impl Sink for Vec<u32> {
    // The extra branch in the loop cost English more than it saved.
    const UNK_INLINE: bool = false;

    #[inline(always)]
    fn whole(&mut self, id: u32) {
        self.push(id);
    }

    #[inline(always)]
    fn unk(&mut self, unk_id: u32) {
        self.push(unk_id);
    }

    #[inline(always)]
    fn pieces(&mut self, pieces: &[SubToken]) {
        self.extend(pieces.iter().map(|s| s.id));
    }

    /// The cache's copy of the word's ids, in one block.
    #[inline(always)]
    fn cached(&mut self, cache: &WordCache, hit: Hit) {
        cache.push_ids(hit, self);
    }
}

#[cfg(test)]
mod tests {
    use crate::fused::FastPaths;
    use crate::models::wordpiece::WordPiece;
    use crate::normalizers::{BertNormalizerConfig, Normalizer};
    use crate::pre_tokenizers::PreTokenizer;
    use crate::tokenizer::Tokenizer;
    use std::collections::HashMap;

    use crate::testing::Rng;

    /// Words of 1 to 20 chars, ASCII and not, around the 8- and 16-byte key sizes, each
    /// either a vocabulary entry, made of entries, or holding a char no entry has ('q', 'ж',
    /// '丙'), plus one-char words: the fused pass's every way to the model (straight from a
    /// block, from the word buffer, one char from the input or a padded copy), with every
    /// hint, through the word cache (repeats) and past `max_input_chars_per_word` (12).
    #[test]
    fn fused_tokens_equal_staged_tokens_for_every_lookup_path() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        let letters: Vec<char> = "abcdefgéжя東中丙q".chars().collect();
        let word = |r: &mut Rng, n: usize| -> String { (0..n).map(|_| r.pick(&letters)).collect() };
        for ids_name_tokens in [true, false] {
            let mut vocab: HashMap<String, u32> = HashMap::new();
            for t in ["[UNK]", "[CLS]", "[SEP]", ".", ",", "!", "a", "b", "é", "я", "東", "中"] {
                let id = vocab.len() as u32;
                vocab.insert(t.into(), id);
            }
            for i in 0..3000 {
                let len = 1 + (r.next() % 18) as usize;
                let w: String = word(&mut r, len).replace(['q', 'ж', '丙'], "");
                if w.is_empty() {
                    continue;
                }
                let key = if i % 3 == 0 { format!("##{w}") } else { w };
                let id = vocab.len() as u32;
                vocab.entry(key).or_insert(id);
            }
            if !ids_name_tokens {
                // Two keys with one id: token texts are rebuilt from the input.
                let id = vocab["a"];
                vocab.insert("zz".into(), id);
            }
            let model = WordPiece::new(vocab.clone(), "[UNK]", "##", 12).unwrap();
            assert_eq!(model.ids_name_tokens, ids_name_tokens);
            let cfg = BertNormalizerConfig { strip_accents: Some(false), ..Default::default() };
            let mut fused = Tokenizer::new(
                Some(Normalizer::Bert(cfg)),
                Some(PreTokenizer::Bert),
                model,
                None,
                None,
                Vec::new(),
                None,
                None,
            )
            .unwrap();
            fused.fast = FastPaths::default();
            let mut staged = fused.clone();
            staged.fast = FastPaths::NONE;
            // A pool of words, so that the text repeats them (word cache hits).
            let keys: Vec<&String> = vocab.keys().filter(|k| !k.starts_with('[')).collect();
            let mut pool: Vec<String> = Vec::new();
            for _ in 0..300 {
                pool.push(match r.next() % 4 {
                    0 => r.pick(&keys).trim_start_matches('#').to_owned(),
                    1 => format!(
                        "{}{}",
                        r.pick(&keys).trim_start_matches('#'),
                        r.pick(&keys).trim_start_matches('#')
                    ),
                    _ => {
                        let n = [1, 2, 7, 8, 9, 12, 13, 15, 16, 17, 20][(r.next() % 11) as usize];
                        word(&mut r, n)
                    }
                });
            }
            for _ in 0..400 {
                let mut text = String::new();
                for _ in 0..(r.next() % 40) {
                    text.push_str(&pool[(r.next() % pool.len() as u64) as usize]);
                    text.push_str(r.pick(&[" ", " ", " ", ".", ", ", "!", "  ", "東", "\n"]));
                }
                let (a, b) =
                    (fused.encode(&text, None, false).unwrap(), staged.encode(&text, None, false).unwrap());
                assert_eq!(a.ids().collect::<Vec<_>>(), b.ids().collect::<Vec<_>>(), "{text:?}");
                assert_eq!(a.offsets().collect::<Vec<_>>(), b.offsets().collect::<Vec<_>>(), "{text:?}");
                assert_eq!(a.word_ids().collect::<Vec<_>>(), b.word_ids().collect::<Vec<_>>(), "{text:?}");
                assert_eq!(a.tokens(), b.tokens(), "{text:?}");
                let ids = fused.encode_ids(&text, false).unwrap();
                assert_eq!(ids, b.ids().collect::<Vec<_>>(), "ids of {text:?}");
            }
        }
    }
}
