//! Pre-tokenizers: how normalized text is split into words before the model sees it.
//!
//! Two forms of the same step: [`pre_tokenize`] calls back with the pieces of a text the
//! pre-tokenizer leaves unchanged (the fused BERT path), and [`PreTokenizer::apply`] runs on
//! [`PreTokenized`] text, where a pre-tokenizer may also rewrite its pieces (ByteLevel maps
//! bytes to chars, Metaspace replaces spaces) or drop text (whitespace), as the reference's
//! `PreTokenizedString` allows. Each stage of a sequence splits every piece of the previous
//! one, never across two.

pub mod bert;
pub mod byte_level;

use crate::normalizers::AlignedText;

/// A word of the normalized text: its byte range and its char range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub byte_start: usize,
    pub byte_end: usize,
    pub char_start: usize,
    pub char_end: usize,
}

#[derive(Clone, Debug)]
pub enum PreTokenizer {
    Bert,
}

/// Splits `text` into words as `pre_tokenizer` does (with none: the whole text is one word).
pub fn pre_tokenize(pre_tokenizer: Option<&PreTokenizer>, text: &str, emit: impl FnMut(Piece)) {
    match pre_tokenizer {
        Some(PreTokenizer::Bert) => bert::split(text, emit),
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

/// Normalized text cut into pieces: the pieces, in order, are `text` from start to end (text
/// a pre-tokenizer removed is gone from `text`, and `text.orig` still maps every char that
/// is left to its input char). No piece is empty, as the reference drops empty splits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreTokenized {
    pub text: AlignedText,
    pub pieces: Vec<Piece>,
}

impl PreTokenized {
    /// One piece holding all of `text` (none when it is empty).
    pub fn whole(text: AlignedText) -> Self {
        let pieces = if text.text.is_empty() {
            Vec::new()
        } else {
            vec![Piece { byte_start: 0, byte_end: text.text.len(), char_start: 0, char_end: text.orig.len() }]
        };
        PreTokenized { text, pieces }
    }

    /// The text of piece `i`.
    pub fn piece_text(&self, i: usize) -> &str {
        let p = self.pieces[i];
        &self.text.text[p.byte_start..p.byte_end]
    }

    /// The input chars of piece `i`'s chars.
    pub fn piece_orig(&self, i: usize) -> &[u32] {
        let p = self.pieces[i];
        &self.text.orig[p.char_start..p.char_end]
    }
}

/// Builds the next [`PreTokenized`]: pieces copied from the previous one, or written char by
/// char.
#[derive(Debug, Default)]
pub struct Builder {
    out: PreTokenized,
    open: Option<(usize, usize)>,
}

impl Builder {
    pub fn with_capacity(bytes: usize, chars: usize) -> Self {
        Builder {
            out: PreTokenized {
                text: AlignedText { text: String::with_capacity(bytes), orig: Vec::with_capacity(chars) },
                pieces: Vec::new(),
            },
            open: None,
        }
    }

    /// Appends the chars `chars` (bytes `bytes`) of `src` as one piece, unchanged. Empty
    /// ranges add nothing.
    pub fn copy(&mut self, src: &AlignedText, bytes: std::ops::Range<usize>, chars: std::ops::Range<usize>) {
        debug_assert!(self.open.is_none(), "a piece is open");
        if bytes.is_empty() {
            return;
        }
        self.begin();
        self.out.text.text.push_str(&src.text[bytes]);
        self.out.text.orig.extend_from_slice(&src.orig[chars]);
        self.end();
    }

    /// Starts a piece written by [`Builder::push`].
    pub fn begin(&mut self) {
        debug_assert!(self.open.is_none(), "a piece is open");
        self.open = Some((self.out.text.text.len(), self.out.text.orig.len()));
    }

    /// Appends `c`, which stems from input char `orig`, to the open piece.
    pub fn push(&mut self, c: char, orig: u32) {
        debug_assert!(self.open.is_some(), "no piece is open");
        self.out.text.text.push(c);
        self.out.text.orig.push(orig);
    }

    /// Closes the open piece; an empty one is dropped.
    pub fn end(&mut self) {
        let (bs, cs) = self.open.take().expect("no piece is open");
        if self.out.text.text.len() > bs {
            self.out.pieces.push(Piece {
                byte_start: bs,
                byte_end: self.out.text.text.len(),
                char_start: cs,
                char_end: self.out.text.orig.len(),
            });
        }
    }

    pub fn finish(self) -> PreTokenized {
        debug_assert!(self.open.is_none(), "a piece is open");
        self.out
    }
}

impl PreTokenizer {
    /// The names of the stages [`PreTokenizer::apply`] reports, in order.
    pub fn stage_names(&self, out: &mut Vec<&'static str>) {
        match self {
            PreTokenizer::Bert => out.push("bert_pre_tokenizer"),
        }
    }

    /// Splits every piece of `input`, calling `observe` after each stage (in the order of
    /// [`PreTokenizer::stage_names`]).
    pub fn apply(
        &self,
        input: PreTokenized,
        observe: &mut dyn FnMut(&'static str, &PreTokenized),
    ) -> PreTokenized {
        let out = match self {
            PreTokenizer::Bert => split_each(&input, |text, emit| bert::split(text, emit)),
        };
        observe("bert_pre_tokenizer", &out);
        out
    }
}

/// Applies a pre-tokenizer that only cuts (it neither rewrites nor drops chars inside its
/// pieces) to every piece of `input`: `split(piece_text, emit)` emits sub-pieces relative to
/// the piece.
pub fn split_each(input: &PreTokenized, mut split: impl FnMut(&str, &mut dyn FnMut(Piece))) -> PreTokenized {
    let mut b = Builder::with_capacity(input.text.text.len(), input.text.orig.len());
    for p in &input.pieces {
        let text = &input.text.text[p.byte_start..p.byte_end];
        split(text, &mut |q| {
            b.copy(
                &input.text,
                p.byte_start + q.byte_start..p.byte_start + q.byte_end,
                p.char_start + q.char_start..p.char_start + q.char_end,
            )
        });
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: &PreTokenized) -> Vec<(&str, &[u32])> {
        (0..p.pieces.len()).map(|i| (p.piece_text(i), p.piece_orig(i))).collect()
    }

    #[test]
    fn bert_stage_cuts_each_piece_and_keeps_the_alignment() {
        let mut t = AlignedText::new("ab, cé");
        // As if a normalizer had removed an input char before "cé".
        t.orig = vec![0, 1, 2, 3, 5, 6];
        let input = PreTokenized::whole(t);
        let out = PreTokenizer::Bert.apply(input, &mut |_, _| {});
        assert_eq!(out.text.text, "ab,cé");
        assert_eq!(pieces(&out), vec![("ab", &[0u32, 1][..]), (",", &[2][..]), ("cé", &[5, 6][..])]);
    }

    #[test]
    fn builder_drops_empty_pieces() {
        let mut b = Builder::default();
        b.begin();
        b.end();
        b.begin();
        b.push('x', 7);
        b.end();
        let out = b.finish();
        assert_eq!(out.pieces.len(), 1);
        assert_eq!(pieces(&out), vec![("x", &[7u32][..])]);
        assert!(PreTokenized::whole(AlignedText::new("")).pieces.is_empty());
    }
}
