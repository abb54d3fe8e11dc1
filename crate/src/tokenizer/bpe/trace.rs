//! One BPE run laid open, for the page and for `BpeTokenizer.trace`: the special-token
//! segments, each text segment's normalized form and pre-tokens, the ids each pre-token became
//! and each token's bytes (a token ending inside a UTF-8 character shows as bytes).
//!
//! Built from the same steps as [`BpeTokenizer::encode`], so the trace's ids are the encode's
//! ids (a test checks this on random text); it just keeps what the fast path throws away.

use serde::Serialize;

use super::{Allowed, BpeTokenizer, Work};
use crate::clock::now_micros;
use crate::Result;

/// A whole run.
#[derive(Clone, Debug, Serialize)]
pub struct BpeTrace {
    /// The input cut at special tokens, in order.
    pub segments: Vec<Segment>,
    /// Every token of the run, in order.
    pub tokens: Vec<Token>,
    /// Microseconds: cutting out special tokens, normalizing, pre-tokenizing, merging.
    pub times: Times,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Times {
    pub specials: f64,
    pub normalize: f64,
    pub pre_tokenize: f64,
    pub merge: f64,
}

/// A piece of the input: ordinary text, or one special token.
#[derive(Clone, Debug, Serialize)]
pub struct Segment {
    /// `"text"` or `"special"`.
    pub kind: &'static str,
    /// Byte range in the input.
    pub start: usize,
    pub end: usize,
    /// What the pre-tokenizer saw (after NFC and the prefix space), if not the input itself.
    pub normalized: Option<String>,
    /// The pre-tokens (empty for a special token).
    pub pre_tokens: Vec<PreToken>,
    /// The range of [`BpeTrace::tokens`] this segment produced.
    pub first_token: usize,
    pub end_token: usize,
}

/// One pre-token and what it became.
#[derive(Clone, Debug, Serialize)]
pub struct PreToken {
    /// Byte range in the segment's (normalized) text.
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub ids: Vec<u32>,
    /// The pre-token was a token by itself, so no merging ran.
    pub whole: bool,
}

/// One token.
#[derive(Clone, Debug, Serialize)]
pub struct Token {
    pub id: u32,
    pub bytes: Vec<u8>,
    /// The characters this token completes (see [`BpeTokenizer::decode_pieces`]).
    pub text: String,
    /// Its bytes are not whole characters (a character starts or ends inside it).
    pub partial: bool,
    pub special: bool,
}

impl BpeTokenizer {
    /// Encodes `text` like [`BpeTokenizer::encode_with_special`] (special tokens in
    /// `allowed` as themselves, disallowed ones refused) and reports every step.
    pub fn trace(&self, text: &str, allowed: &Allowed, disallowed: &Allowed) -> Result<BpeTrace> {
        let mut times = Times::default();
        let t0 = now_micros();
        self.check_disallowed(text, allowed, disallowed)?;
        let mut cuts: Vec<(usize, usize, Option<u32>)> = Vec::new();
        let mut start = 0;
        self.added.split(
            text,
            |t| !t.special || allowed.contains(&t.content),
            |seg_end, token| {
                if seg_end > start {
                    cuts.push((start, seg_end, None));
                }
                if let Some(t) = token {
                    cuts.push((seg_end, seg_end + t.content.len(), Some(t.id)));
                    start = seg_end + t.content.len();
                }
            },
        );
        times.specials = now_micros() - t0;

        let mut w = Work::default();
        let mut segments = Vec::with_capacity(cuts.len());
        let mut ids: Vec<u32> = Vec::new();
        for (start, end, special) in cuts {
            let first_token = ids.len();
            let mut seg = Segment {
                kind: "text",
                start,
                end,
                normalized: None,
                pre_tokens: Vec::new(),
                first_token,
                end_token: first_token,
            };
            if let Some(id) = special {
                seg.kind = "special";
                ids.push(id);
            } else {
                let t1 = now_micros();
                let norm = self.normalize(&text[start..end]);
                let t2 = now_micros();
                let pieces = self.pattern.split(&norm);
                let t3 = now_micros();
                for (a, b) in pieces {
                    let piece = &norm.as_bytes()[a..b];
                    let mut out = Vec::new();
                    self.encode_piece(piece, super::PieceKey::of(piece), &mut out, &mut w);
                    let whole = out.len() == 1 && piece.len() > 1;
                    ids.extend_from_slice(&out);
                    seg.pre_tokens.push(PreToken {
                        start: a,
                        end: b,
                        text: norm[a..b].to_string(),
                        ids: out,
                        whole,
                    });
                }
                times.normalize += t2 - t1;
                times.pre_tokenize += t3 - t2;
                times.merge += now_micros() - t3;
                if norm != text[start..end] {
                    seg.normalized = Some(norm.into_owned());
                }
            }
            seg.end_token = ids.len();
            segments.push(seg);
        }

        let texts = self.decode_pieces(&ids)?;
        let tokens = ids
            .iter()
            .zip(texts)
            .map(|(&id, text)| {
                let bytes = self.token_bytes(id).unwrap_or_default().to_vec();
                let partial = std::str::from_utf8(&bytes).is_err();
                let special = self.added.by_id(id).is_some_and(|t| t.special);
                Token { id, bytes, text, partial, special }
            })
            .collect();
        Ok(BpeTrace { segments, tokens, times })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::toy;
    use super::*;

    #[test]
    fn trace_ids_are_encode_ids() {
        let tok = toy();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let alphabet = [
            "a",
            "b",
            "ab",
            " ",
            "  ",
            "\n",
            "é",
            "日本",
            "😀",
            "'s",
            "123",
            "<|eot|>",
            "<|eot|>x",
            "éé",
            "hello world",
            "x\u{301}",
        ];
        for _ in 0..500 {
            let mut s = String::new();
            for _ in 0..(seed % 12) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let tr = tok.trace(&s, &Allowed::All, &Allowed::none()).unwrap();
            let ids: Vec<u32> = tr.tokens.iter().map(|t| t.id).collect();
            assert_eq!(ids, tok.encode_with_special(&s, &Allowed::All, &Allowed::none()).unwrap(), "{s:?}");
            let from_pieces: Vec<u32> = tr
                .segments
                .iter()
                .flat_map(|g| g.pre_tokens.iter().flat_map(|p| p.ids.iter().copied()))
                .collect();
            let text_ids: Vec<u32> = tr.tokens.iter().filter(|t| !t.special).map(|t| t.id).collect();
            assert_eq!(from_pieces, text_ids);
            // Segments tile the input.
            let mut at = 0;
            for g in &tr.segments {
                assert_eq!(g.start, at);
                at = g.end;
            }
            assert_eq!(at, s.len());
            let joined: String = tr.tokens.iter().map(|t| t.text.as_str()).collect();
            assert_eq!(joined, s);
        }
    }
}
