//! Byte-level BPE pipelines run by the byte-level engine ([`BpeTokenizer`]): a pipeline of
//! [NFC] → a pattern the engine matches by hand (Splits, or ByteLevel's own regex) →
//! ByteLevel → BPE on byte-level tokens is what the engine computes, so
//! [`Tokenizer::encode_single`] hands it each segment between added tokens instead of the
//! staged chain, and the ids-only calls skip the Encoding altogether. Added tokens stay the
//! pipeline's (found in any text, with their lstrip, rstrip and single-word rules), as does the
//! post-processor. Tested against the staged chain (all fast paths off) on random inputs.

use std::sync::Arc;

#[cfg(feature = "general")]
use crate::models::bpe::table::Vocab;
#[cfg(feature = "general")]
use crate::models::Model;
#[cfg(feature = "general")]
use crate::normalizers::Normalizer;
#[cfg(feature = "general")]
use crate::pre_tokenizers::byte_level::alphabet::{byte_level_decode, char_to_byte};
#[cfg(feature = "general")]
use crate::pre_tokenizers::byte_level::Pattern;
#[cfg(feature = "general")]
use crate::pre_tokenizers::split::{SplitDelimiterBehavior, SplitPattern};
#[cfg(feature = "general")]
use crate::pre_tokenizers::PreTokenizer;
use crate::tokenizer::bpe::BpeTokenizer;
use crate::tokenizer::{Encoding, Tokenizer};
#[cfg(feature = "general")]
use crate::unicode::forms::Form;

/// Without the `general` components (ByteLevel, Split, the BPE model of a tokenizer.json) no
/// pipeline is byte-level BPE.
#[cfg(not(feature = "general"))]
pub(crate) fn engine(_: &Tokenizer) -> Option<Arc<BpeTokenizer>> {
    None
}

/// The engine for `t`'s pipeline, when the engine gives exactly its tokens.
#[cfg(feature = "general")]
pub(crate) fn engine(t: &Tokenizer) -> Option<Arc<BpeTokenizer>> {
    let Model::Bpe(bpe) = &t.model else { return None };
    let o = &bpe.options;
    // An empty prefix or suffix picks the same tokens as none.
    let empty = |s: &Option<String>| s.as_deref().is_none_or(str::is_empty);
    if o.byte_fallback || !empty(&o.continuing_subword_prefix) || !empty(&o.end_of_word_suffix) {
        return None;
    }
    let nfc = match &t.normalizer {
        None => false,
        Some(Normalizer::Form(Form::Nfc)) => true,
        Some(Normalizer::Sequence(v)) => match v.as_slice() {
            [] => false,
            [Normalizer::Form(Form::Nfc)] => true,
            _ => return None,
        },
        Some(_) => return None,
    };
    let mut steps = Vec::new();
    flatten(t.pre_tokenizer.as_ref()?, &mut steps);
    let (pattern, add_prefix_space) = match steps.as_slice() {
        [PreTokenizer::ByteLevel(bl)] if bl.use_regex => (Pattern::Gpt2, bl.add_prefix_space),
        // (A ByteLevel after Splits puts its prefix space before every piece: not the engine's.)
        [splits @ .., PreTokenizer::ByteLevel(bl)] if !bl.use_regex && !bl.add_prefix_space => {
            let mut regexes = Vec::with_capacity(splits.len());
            for s in splits {
                match s {
                    PreTokenizer::Split(s) if s.behavior == SplitDelimiterBehavior::Isolated && !s.invert => {
                        let SplitPattern::Regex(r) = &s.pattern else { return None };
                        regexes.push(r.as_str());
                    }
                    _ => return None,
                }
            }
            (Pattern::from_regexes(&regexes)?, false)
        }
        _ => return None,
    };
    // Only tokens spelled in the byte-level alphabet: the staged chain looks up nothing else
    // (a vocabulary entry such as " " or "é" is never a byte-level piece).
    let tokens: Vec<(Vec<u8>, u32)> = bpe
        .vocab
        .iter()
        .filter(|(t, _)| t.chars().all(|c| char_to_byte(c).is_some()))
        .map(|(t, &id)| (byte_level_decode(t), id))
        .collect();
    let vocab = Vocab::new(tokens).ok()?;
    let mut byte_ids = [0u32; 256];
    for (b, id) in byte_ids.iter_mut().enumerate() {
        *id = vocab.get_id(&[b as u8])?;
    }
    let model = crate::models::bpe::Model { vocab, pairs: bpe.pairs().clone(), byte_ids };
    Some(Arc::new(BpeTokenizer::for_segments(model, pattern, nfc, add_prefix_space, o.ignore_merges)))
}

/// The components of a pre-tokenizer, Sequences opened.
#[cfg(feature = "general")]
fn flatten<'a>(p: &'a PreTokenizer, out: &mut Vec<&'a PreTokenizer>) {
    match p {
        PreTokenizer::Sequence(v) => v.iter().for_each(|p| flatten(p, out)),
        other => out.push(other),
    }
}

impl Tokenizer {
    /// The byte-level engine, when the fused paths are on, the pipeline is one it runs
    /// ([`engine`], made on first use), and any added token matched in normalized text is
    /// matched in text the normalizer leaves alone (none, or an empty Sequence).
    ///
    /// Never in a wasm module (size; the staged chain gives the same tokens), nor without the
    /// `general` components: a constant None there, so the engine is not linked.
    #[inline]
    pub(crate) fn byte_level(&self) -> Option<&BpeTokenizer> {
        if cfg!(any(target_arch = "wasm32", not(feature = "general"))) {
            return None;
        }
        let identity = match &self.normalizer {
            None => true,
            Some(crate::normalizers::Normalizer::Sequence(v)) => v.is_empty(),
            Some(_) => false,
        };
        if !self.fast.fused || (self.normalized_matcher.is_some() && !identity) {
            return None;
        }
        self.byte_level.get_or_init(|| engine(self)).as_deref()
    }

    /// Pushes the tokens of `raw`, a stretch of input between added tokens of the raw text
    /// whose first char is input char `char_start`: added tokens matched in normalized text
    /// (here the raw text, see [`Tokenizer::byte_level`]) as themselves, the rest by the
    /// engine; false (with `enc` and `word_idx` as they were) where the staged chain must.
    pub(crate) fn encode_segment_byte_level(
        &self,
        engine: &BpeTokenizer,
        raw: &str,
        char_start: u32,
        enc: &mut Encoding,
        word_idx: &mut u32,
    ) -> bool {
        let Some(m) = self.normalized_matcher.as_ref().filter(|m| m.may_match(raw)) else {
            return engine.push_segment_tokens(raw, char_start, enc, word_idx);
        };
        let (len, words) = (enc.len(), *word_idx);
        // A split the reference refuses is the staged chain's to report.
        let Ok(segments) = self.split_added(Some(m), raw) else { return false };
        for seg in segments {
            let text = &raw[seg.byte_start..seg.byte_end];
            let at = char_start + seg.char_start as u32;
            match seg.added {
                Some(i) => {
                    let n = text.chars().count() as u32;
                    enc.push_token(self.added[i].id, Some(&Arc::from(text)), (at, at + n), *word_idx);
                    *word_idx += 1;
                }
                None if engine.push_segment_tokens(text, at, enc, word_idx) => {}
                None => {
                    enc.truncate_to(len);
                    *word_idx = words;
                    return false;
                }
            }
        }
        true
    }

    /// Appends the ids of `raw`, a stretch of input between added tokens of the raw text
    /// (see [`Tokenizer::encode_segment_byte_level`]).
    pub(crate) fn segment_ids_byte_level(
        &self,
        engine: &BpeTokenizer,
        raw: &str,
        ids: &mut Vec<u32>,
    ) -> crate::Result<()> {
        let Some(m) = self.normalized_matcher.as_ref().filter(|m| m.may_match(raw)) else {
            engine.segment_ids(raw, ids);
            return Ok(());
        };
        for seg in self.split_added(Some(m), raw)? {
            match seg.added {
                Some(i) => ids.push(self.added[i].id),
                None => engine.segment_ids(&raw[seg.byte_start..seg.byte_end], ids),
            }
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "general"))]
mod tests {
    use super::*;
    use crate::fused::FastPaths;
    use crate::testing::Rng;

    /// A byte-level BPE `tokenizer.json` with every byte, `n_merges` random merges of the
    /// tokens made so far, added tokens, and the pipeline `normalizer` / `pre_tokenizer`.
    fn json(rng: &mut Rng, n_merges: usize, normalizer: &str, pre_tokenizer: &str, ignore: bool) -> String {
        // An added token matched in normalized text, where that is the raw text.
        let normalized = normalizer == "null" || normalizer.contains("[]");
        use crate::pre_tokenizers::byte_level::alphabet::byte_level_encode;
        let mut vocab: Vec<String> = (0..=255u8).map(|b| byte_level_encode(&[b])).collect();
        // Frequent pairs first, so that merges show up in the test texts.
        let seeds: Vec<String> = ["th", "he", "in", " t", "er", "an", "é", "東京", "ab", "  ", "\n\n", "12"]
            .iter()
            .map(|s| byte_level_encode(s.as_bytes()))
            .collect();
        let mut merges: Vec<(String, String)> = Vec::new();
        let mut known: std::collections::HashSet<String> = vocab.iter().cloned().collect();
        let mut tries = 0;
        while merges.len() < n_merges && tries < 20 * n_merges {
            tries += 1;
            let (a, b) = if tries % 3 == 0 {
                let s = &seeds[rng.below(seeds.len())];
                let cut = s.char_indices().next_back().map_or(0, |(i, _)| i);
                if cut == 0 {
                    continue;
                }
                (s[..cut].to_string(), s[cut..].to_string())
            } else {
                (vocab[rng.below(vocab.len())].clone(), vocab[rng.below(vocab.len())].clone())
            };
            if !known.contains(&a) || !known.contains(&b) {
                continue;
            }
            let ab = format!("{a}{b}");
            if known.insert(ab.clone()) {
                vocab.push(ab);
            }
            merges.push((a, b));
        }
        // An entry outside the byte-level alphabet, which the staged chain never looks up.
        vocab.push("é".into());
        let n = vocab.len();
        let added = [
            (r#""<|endoftext|>""#, true, false, false, false),
            (r#""<tool>""#, false, false, false, false),
            (r#""[M]""#, true, true, true, false),
            (r#""word""#, false, false, false, true),
            (r#""<n>""#, false, false, true, false),
        ];
        let added_json: Vec<String> = added
            .iter()
            .enumerate()
            .map(|(i, (c, special, l, r, single))| {
                let normalized = normalized && *c == r#""<n>""#;
                format!(
                    r#"{{"id": {}, "content": {c}, "single_word": {single}, "lstrip": {l}, "rstrip": {r}, "normalized": {normalized}, "special": {special}}}"#,
                    n + i
                )
            })
            .collect();
        let vocab_json: Vec<String> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{}: {i}", serde_json::to_string(t).unwrap()))
            .collect();
        let merges_json: Vec<String> =
            merges.iter().map(|m| serde_json::to_string(&[&m.0, &m.1]).unwrap()).collect();
        format!(
            r#"{{"version": "1.0", "truncation": null, "padding": null,
               "added_tokens": [{}], "normalizer": {normalizer}, "pre_tokenizer": {pre_tokenizer},
               "post_processor": {{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}},
               "decoder": {{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}},
               "model": {{"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
                         "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": {ignore},
                         "vocab": {{{}}}, "merges": [{}]}}}}"#,
            added_json.join(","),
            vocab_json.join(","),
            merges_json.join(",")
        )
    }

    fn bl(prefix: bool, regex: bool) -> String {
        format!(
            r#"{{"type": "ByteLevel", "add_prefix_space": {prefix}, "trim_offsets": true, "use_regex": {regex}}}"#
        )
    }

    fn split(regex: &str) -> String {
        format!(
            r#"{{"type": "Split", "pattern": {{"Regex": {}}}, "behavior": "Isolated", "invert": false}}"#,
            serde_json::to_string(regex).unwrap()
        )
    }

    /// Random text from every class of code point the patterns treat apart, added tokens
    /// and long pieces.
    fn text(rng: &mut Rng) -> String {
        const BITS: &[&str] = &[
            "the",
            " the",
            "The",
            "THE",
            "ab",
            "théâtre",
            "e\u{301}",
            "東京",
            "한국어",
            "ру",
            "١٢٣",
            "12345",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\n\n",
            "'s",
            "'LL",
            "’re",
            "!!",
            "...",
            "$",
            "(",
            "\u{200d}",
            "👍🏽",
            "\u{fe0f}",
            "ॐ",
            "क्षि",
            "<|endoftext|>",
            "<tool>",
            " [M] ",
            "[M]",
            "word",
            "words",
            " word ",
            "\u{0}",
            "\u{7f}",
            "\u{a0}",
            "\u{2028}",
            "\u{3000}",
            "Å",
            "\u{212b}",
            "ﬁ",
        ];
        let mut s = String::new();
        for _ in 0..rng.below(24) {
            match rng.below(10) {
                0 => {
                    // Any code point.
                    let c = loop {
                        let v = (rng.next() % 0x11_0000) as u32;
                        if let Some(c) = char::from_u32(v) {
                            break c;
                        }
                    };
                    s.push(c);
                }
                1 => {
                    // A long piece.
                    let unit = rng.pick(&["a", "ab", "東", "1", " ", "\n", "é"]);
                    s.push_str(&unit.repeat(1 + rng.below(300)));
                }
                _ => s.push_str(rng.pick(BITS)),
            }
        }
        s
    }

    #[test]
    fn fast_and_staged_agree() {
        let llama = split(crate::pre_tokenizers::byte_level::pattern::LLAMA3_REGEX);
        let qwen = split(crate::pre_tokenizers::byte_level::pattern::QWEN_REGEX);
        let pipelines = [
            ("null".to_string(), bl(false, true)),
            ("null".to_string(), bl(true, true)),
            (
                "null".to_string(),
                format!(r#"{{"type": "Sequence", "pretokenizers": [{llama}, {}]}}"#, bl(false, false)),
            ),
            (
                r#"{"type": "NFC"}"#.to_string(),
                format!(r#"{{"type": "Sequence", "pretokenizers": [{qwen}, {}]}}"#, bl(false, false)),
            ),
        ];
        let mut rng = Rng(0x5eed_b17e);
        for (k, (norm, pre)) in pipelines.iter().enumerate() {
            for ignore in [false, true] {
                let fast = Tokenizer::from_json_str(&json(&mut rng, 300, norm, pre, ignore)).unwrap();
                assert!(fast.byte_level().is_some(), "pipeline {k} runs on the engine");
                let mut plain = fast.clone();
                plain.fast = FastPaths::NONE;
                assert!(plain.byte_level().is_none());
                for _ in 0..300 {
                    let t = text(&mut rng);
                    for special in [false, true] {
                        let (a, b) = (
                            fast.encode(&t, None, special).unwrap(),
                            plain.encode(&t, None, special).unwrap(),
                        );
                        let ctx = format!("pipeline {k}, ignore_merges {ignore}, {t:?}");
                        assert_eq!(a.ids().collect::<Vec<_>>(), b.ids().collect::<Vec<_>>(), "{ctx}");
                        assert_eq!(a.offsets().collect::<Vec<_>>(), b.offsets().collect::<Vec<_>>(), "{ctx}");
                        assert_eq!(a.tokens(), b.tokens(), "{ctx}");
                        assert_eq!(
                            a.word_ids().collect::<Vec<_>>(),
                            b.word_ids().collect::<Vec<_>>(),
                            "{ctx}"
                        );
                        assert_eq!(
                            fast.encode_ids(&t, special).unwrap(),
                            b.ids().collect::<Vec<_>>(),
                            "{ctx}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn other_pipelines_stay_staged() {
        let mut rng = Rng(7);
        let gpt2 = split(crate::pre_tokenizers::byte_level::pattern::GPT2_REGEX);
        let odd = split("[a-z]+");
        for (norm, pre) in [
            // A prefix space before each piece of the Split.
            ("null", format!(r#"{{"type": "Sequence", "pretokenizers": [{gpt2}, {}]}}"#, bl(true, false))),
            // A pattern the engine has no matcher for.
            ("null", format!(r#"{{"type": "Sequence", "pretokenizers": [{odd}, {}]}}"#, bl(false, false))),
            // No pattern at all.
            ("null", bl(false, false)),
            (r#"{"type": "Lowercase"}"#, bl(false, true)),
        ] {
            let t = Tokenizer::from_json_str(&json(&mut rng, 50, norm, &pre, false)).unwrap();
            assert!(t.byte_level().is_none(), "{norm} {pre}");
        }
    }
}
