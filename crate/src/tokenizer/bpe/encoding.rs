//! [`BpeTokenizer::encode_full`]: what `tokenizers`' `Tokenizer.encode` returns for a
//! byte-level BPE `tokenizer.json`: tokens, offsets, word ids, type ids and masks, with the
//! post-processor's special tokens.
//!
//! The ids come from the ordinary encoder; the rest is read off them. A token's bytes are a
//! run of its segment's bytes (the tokens of a segment spell it), so each token's byte range
//! is the sum of the lengths before it; its pre-token (word) is the one that range falls in,
//! as a token never crosses a pre-token's end. Offsets are in chars of the input, and a token
//! that holds part of a char covers that whole char (the reference aligns every byte-level
//! char with the input char it came from).

use std::sync::Arc;

use super::{BpeTokenizer, Work};
use crate::normalizers::nfc;
use crate::pre_tokenizers::byte_level::alphabet::byte_to_char;
use crate::processors;
use crate::tokenizer::encoding::{Encoding, TokenTexts};
use crate::{Error, Result};

/// Byte offsets of one text to char indices, for offsets that only move forward.
struct CharCursor<'a> {
    bytes: &'a [u8],
    /// Bytes counted so far.
    at: usize,
    /// Chars that start in `bytes[..at]`.
    starts: u32,
}

impl<'a> CharCursor<'a> {
    /// A cursor on `text`, whose first char is char `base` of the input.
    fn new(text: &'a str, base: u32) -> Self {
        CharCursor { bytes: text.as_bytes(), at: 0, starts: base }
    }

    /// The index of the char that holds byte `p`; `p` never less than a previous call's.
    fn char_of(&mut self, p: usize) -> u32 {
        while self.at <= p {
            // A UTF-8 continuation byte is 10xxxxxx; every other byte starts a char.
            self.starts += (self.bytes[self.at] & 0xC0 != 0x80) as u32;
            self.at += 1;
        }
        self.starts - 1
    }
}

impl BpeTokenizer {
    /// Encodes `text` (and `pair`) as `tokenizers`' `Tokenizer.encode(text, pair,
    /// add_special_tokens)` does: every added token in the text is recognized (special ones
    /// included), and `add_special_tokens` applies the file's post-processor.
    ///
    /// Refused (with [`Error::Unsupported`]) where offsets would differ from the reference's:
    /// NFC (Qwen) on a text that NFC changes.
    pub fn encode_full(&self, text: &str, pair: Option<&str>, add_special_tokens: bool) -> Result<Encoding> {
        let texts = self.token_texts();
        let a = self.encode_sequence(text, 0, texts)?;
        let b = pair.map(|p| self.encode_sequence(p, 1, texts)).transpose()?;
        processors::post_process(self.post_processor.as_ref(), texts, a, b, add_special_tokens)
    }

    /// `ids` with the special tokens the post-processor puts around one text: the ids of
    /// `tokenizers`' `add_special_tokens=True` (unchanged for tiktoken encodings).
    pub fn add_special_tokens(&self, ids: Vec<u32>) -> Result<Vec<u32>> {
        processors::add_special_ids(self.post_processor.as_ref(), self.template_ids.as_ref(), ids)
    }

    /// Each id's token text, as `tokenizers` names it: the byte-level chars of its bytes, or
    /// an added token's content.
    fn token_texts(&self) -> &Arc<Vec<Arc<str>>> {
        self.token_texts.get_or_init(|| {
            let empty: Arc<str> = Arc::from("");
            let mut v = vec![empty; self.n_vocab() as usize];
            for (id, bytes) in self.model.vocab.iter() {
                v[id as usize] = bytes.iter().map(|&b| byte_to_char(b)).collect::<String>().into();
            }
            for t in self.added.tokens() {
                v[t.id as usize] = t.content.clone();
            }
            Arc::new(v)
        })
    }

    /// One input as an Encoding of sequence `seq` (before post-processing).
    fn encode_sequence(&self, text: &str, seq: u32, texts: &Arc<Vec<Arc<str>>>) -> Result<Encoding> {
        let mut enc = Encoding {
            texts: TokenTexts { vocab: Some(texts.clone()), overrides: Vec::new() },
            ..Default::default()
        };
        let mut chars = CharCursor::new(text, 0);
        let mut word = 0u32;
        let mut failed = None;
        self.with_work(|w| {
            let mut ids = Vec::new();
            let mut start = 0;
            // The reference splits every added token out of the text, special or not.
            self.added.split(
                text,
                |_| true,
                |at, token| {
                    if failed.is_none() {
                        let seg = (start, at);
                        if !self.push_segment(text, seg, &mut enc, &mut chars, &mut word, &mut ids, w) {
                            failed = Some(Error::Unsupported(
                                "BpeTokenizer: normalizer: offsets of a text the NFC normalizer changes"
                                    .into(),
                            ));
                        }
                    }
                    if let Some(t) = token {
                        let end = at + t.content.len();
                        enc.push_token(t.id, None, (chars.char_of(at), chars.char_of(end - 1) + 1), word);
                        word += 1;
                        start = end;
                    }
                },
            );
        });
        if let Some(e) = failed {
            return Err(e);
        }
        enc.fill_sequence(seq, seq);
        Ok(enc)
    }

    /// Pushes the tokens of `segment`, a stretch of input without added tokens whose first
    /// char is input char `char_start`, with their offsets and words (from `*word` on);
    /// false (and nothing pushed) where the offsets would differ from the reference's: NFC
    /// (Qwen) changes the segment.
    pub(crate) fn push_segment_tokens(
        &self,
        segment: &str,
        char_start: u32,
        enc: &mut Encoding,
        word: &mut u32,
    ) -> bool {
        let mut chars = CharCursor::new(segment, char_start);
        self.with_work(|w| {
            let mut ids = Vec::with_capacity(segment.len() / 3 + 1);
            self.push_segment(segment, (0, segment.len()), enc, &mut chars, word, &mut ids, w)
        })
    }

    /// The tokens of the ordinary text `text[a..b]`, pushed with their offsets and words;
    /// false (nothing pushed) where NFC changes that text (see [`Self::push_segment_tokens`]).
    #[allow(clippy::too_many_arguments)]
    fn push_segment(
        &self,
        text: &str,
        (a, b): (usize, usize),
        enc: &mut Encoding,
        chars: &mut CharCursor<'_>,
        word: &mut u32,
        ids: &mut Vec<u32>,
        w: &mut Work,
    ) -> bool {
        let seg = &text[a..b];
        if seg.is_empty() {
            return true;
        }
        if self.nfc && nfc::nfc_unicode9(seg) != seg {
            return false;
        }
        let norm = self.normalize(seg);
        // The prefix space (ByteLevel's add_prefix_space) stands for the segment's first char.
        let shift = norm.len() - seg.len();
        ids.clear();
        self.encode_segment(seg, ids, w);
        let words = self.pattern.split(&norm);
        let (mut pos, mut k) = (0usize, 0usize);
        for &id in ids.iter() {
            let len = self.token_bytes(id).map_or(1, <[u8]>::len);
            while words[k].1 <= pos {
                k += 1;
            }
            let first = a + pos.saturating_sub(shift);
            let last = a + (pos + len - 1).saturating_sub(shift);
            enc.push_token(id, None, (chars.char_of(first), chars.char_of(last) + 1), *word + k as u32);
            pos += len;
        }
        debug_assert_eq!(pos, norm.len(), "the tokens of a segment spell it");
        *word += words.len() as u32;
        true
    }
}
