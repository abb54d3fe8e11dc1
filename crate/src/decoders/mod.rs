//! Decoders: the tokens of some ids back to text.
//!
//! As in the reference, a decoder is a step from tokens to tokens ([`Decoder::decode_chain`]),
//! so that a Sequence feeds each step's tokens to the next; decoding joins the last step's
//! tokens with nothing between them.

#[cfg(feature = "general")]
mod general;
#[cfg(feature = "general")]
pub mod sentencepiece;
mod wordpiece;

use crate::error::Result;
#[cfg(feature = "general")]
pub use general::PrependScheme;

#[derive(Clone, Debug, PartialEq)]
pub enum Decoder {
    /// Drops `prefix` from continuation tokens and puts a space before the others.
    WordPiece { prefix: String, cleanup: bool },
    /// Byte-level chars back to bytes, all tokens at once, then UTF-8 (invalid bytes become
    /// U+FFFD).
    #[cfg(feature = "general")]
    ByteLevel,
    /// `replacement` back to spaces.
    #[cfg(feature = "general")]
    Metaspace { replacement: char, prepend_scheme: PrependScheme, split: bool },
    /// The end-of-word `suffix` to a space (nothing on the last token).
    #[cfg(feature = "general")]
    Bpe { suffix: String },
    /// Runs of byte tokens like `<0xE2>` to the text of their bytes.
    #[cfg(feature = "general")]
    ByteFallback,
    /// All tokens into one.
    #[cfg(feature = "general")]
    Fuse,
    #[cfg(feature = "general")]
    Replace(crate::normalizers::Replace),
    /// Removes up to `start` leading and `stop` trailing `content` chars from each token.
    #[cfg(feature = "general")]
    Strip { content: char, start: usize, stop: usize },
    /// Connectionist Temporal Classification output: repeats merged, padding dropped.
    #[cfg(feature = "general")]
    Ctc { pad_token: String, word_delimiter_token: String, cleanup: bool },
    #[cfg(feature = "general")]
    Sequence(Vec<Decoder>),
    /// SentencePiece's own decoding (a `.model` file's tokenizer).
    #[cfg(feature = "general")]
    SentencePiece(std::sync::Arc<sentencepiece::SpmDecoder>),
}

impl Decoder {
    /// One decoding step: tokens to tokens.
    pub fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(match self {
            Decoder::WordPiece { prefix, cleanup } => wordpiece::decode_chain(prefix, *cleanup, tokens),
            #[cfg(feature = "general")]
            Decoder::ByteLevel => vec![general::byte_level(&tokens)],
            #[cfg(feature = "general")]
            Decoder::Metaspace { replacement, prepend_scheme, .. } => {
                general::metaspace(*replacement, *prepend_scheme, tokens)
            }
            #[cfg(feature = "general")]
            Decoder::Bpe { suffix } => general::bpe(suffix, tokens),
            #[cfg(feature = "general")]
            Decoder::ByteFallback => general::byte_fallback(tokens),
            #[cfg(feature = "general")]
            Decoder::Fuse => vec![tokens.concat()],
            #[cfg(feature = "general")]
            Decoder::Replace(r) => tokens.iter().map(|t| r.replace_str(t)).collect(),
            #[cfg(feature = "general")]
            Decoder::Strip { content, start, stop } => {
                tokens.iter().map(|t| general::strip(t, *content, *start, *stop)).collect::<Result<_>>()?
            }
            #[cfg(feature = "general")]
            Decoder::Ctc { pad_token, word_delimiter_token, cleanup } => {
                general::ctc(pad_token, word_delimiter_token, *cleanup, tokens)
            }
            #[cfg(feature = "general")]
            Decoder::SentencePiece(d) => vec![d.decode(&tokens)],
            #[cfg(feature = "general")]
            Decoder::Sequence(steps) => {
                let mut tokens = tokens;
                for d in steps {
                    tokens = d.decode_chain(tokens)?;
                }
                tokens
            }
        })
    }

    /// The text of `tokens`: the steps, then the tokens joined.
    pub fn decode(&self, tokens: Vec<String>) -> Result<String> {
        Ok(self.decode_chain(tokens)?.concat())
    }
}

/// Decodes `tokens` with `decoder` (with no decoder: joined by spaces, as the reference).
pub(crate) fn decode(decoder: Option<&Decoder>, tokens: &[&str]) -> Result<String> {
    match decoder {
        Some(d) => d.decode(tokens.iter().map(|&t| t.to_owned()).collect()),
        None => Ok(tokens.join(" ")),
    }
}

#[cfg(all(test, feature = "general"))]
mod tests {
    use super::*;

    fn toks(v: &[&str]) -> Vec<String> {
        v.iter().map(|&t| t.to_owned()).collect()
    }

    fn dec(d: &Decoder, v: &[&str]) -> String {
        d.decode(toks(v)).unwrap()
    }

    #[test]
    fn byte_level_reads_all_bytes_together() {
        // "Ã©" are the byte chars of 0xC3 0xA9 (é), split over two tokens.
        assert_eq!(dec(&Decoder::ByteLevel, &["ĠhelloĊ", "Ã", "©"]), " hello\né");
        // A token with a char outside the alphabet stands for its own UTF-8, all of it.
        assert_eq!(dec(&Decoder::ByteLevel, &["Ġa東"]), "Ġa東");
        // A lone continuation byte is invalid UTF-8.
        assert_eq!(dec(&Decoder::ByteLevel, &["©a"]), "\u{FFFD}a");
    }

    #[test]
    fn byte_fallback_groups_runs_of_byte_tokens() {
        let d = Decoder::ByteFallback;
        let out = d.decode_chain(toks(&["<0xE2>", "<0x96>", "<0x81>", "a", "<0xE2>", "<0x0a>"])).unwrap();
        assert_eq!(out, toks(&["\u{2581}", "a", "\u{FFFD}", "\u{FFFD}"]));
        // Not byte tokens: wrong length, wrong case of the prefix.
        assert_eq!(dec(&d, &["<0x4>", "<0X41>", "<0x+A>"]), "<0x4><0X41>\n");
    }

    #[test]
    fn metaspace_drops_the_prepended_space() {
        let d = |s| Decoder::Metaspace { replacement: '▁', prepend_scheme: s, split: true };
        // Every ▁ of the first token goes, not only its first.
        assert_eq!(dec(&d(PrependScheme::Always), &["▁Hey▁", "▁friend"]), "Hey friend");
        assert_eq!(dec(&d(PrependScheme::Never), &["▁Hey", "▁friend"]), " Hey friend");
    }

    #[test]
    fn strip_cuts_and_fails_where_the_reference_does() {
        let d = Decoder::Strip { content: '▁', start: 1, stop: 2 };
        assert_eq!(dec(&d, &["▁▁a▁", "b▁▁▁"]), "▁ab▁");
        assert!(d.decode(toks(&["▁"])).is_err());
        let d = Decoder::Strip { content: 'x', start: 2, stop: 1 };
        assert!(d.decode(toks(&["xx"])).is_err());
        assert_eq!(dec(&d, &["xxx"]), "");
    }

    #[test]
    fn ctc_merges_repeats_and_drops_padding() {
        let d = Decoder::Ctc { pad_token: "<pad>".into(), word_delimiter_token: "|".into(), cleanup: true };
        let v =
            ["<pad>", "h", "h", "e", "<pad>", "l", "l", "<pad>", "l", "o", "|", "|", "w", "o", "r", "l", "d"];
        assert_eq!(dec(&d, &v), "hello world");
    }

    #[test]
    fn bpe_suffix_and_sequences() {
        assert_eq!(
            dec(&Decoder::Bpe { suffix: "</w>".into() }, &["hel", "lo</w>", "wor", "ld</w>"]),
            "hello world"
        );
        assert_eq!(dec(&Decoder::Bpe { suffix: "</w>".into() }, &[]), "");
        let seq = Decoder::Sequence(vec![
            Decoder::ByteFallback,
            Decoder::Fuse,
            Decoder::Metaspace { replacement: '▁', prepend_scheme: PrependScheme::Always, split: true },
        ]);
        // Fused first, the whole text is the first token: every ▁ in it is removed.
        assert_eq!(dec(&seq, &["▁a", "<0x62>", "▁c"]), "abc");
        assert_eq!(decode(None, &["a", "b"]).unwrap(), "a b");
    }
}
