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
#[cfg(feature = "general")]
pub mod metaspace;
#[cfg(feature = "general")]
pub mod split;
#[cfg(feature = "general")]
pub mod unicode_scripts;
#[cfg(feature = "general")]
pub mod whitespace;

use crate::normalizers::AlignedText;
#[cfg(feature = "general")]
use split::{char_matches, Cutter, SplitDelimiterBehavior};

/// A word of the normalized text: its byte range and its char range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub byte_start: usize,
    pub byte_end: usize,
    pub char_start: usize,
    pub char_end: usize,
}

/// The pre-tokenizers of a tokenizer.json, named as there.
#[derive(Clone, Debug)]
pub enum PreTokenizer {
    /// BertPreTokenizer: whitespace removed, each punctuation char its own piece.
    Bert,
    #[cfg(feature = "general")]
    ByteLevel(byte_level::ByteLevel),
    /// Words (`\w+`) and runs of other non-space chars; whitespace removed.
    #[cfg(feature = "general")]
    Whitespace,
    /// Cut at whitespace, which is removed.
    #[cfg(feature = "general")]
    WhitespaceSplit,
    /// Split at each punctuation char (BERT's punctuation).
    #[cfg(feature = "general")]
    Punctuation(SplitDelimiterBehavior),
    #[cfg(feature = "general")]
    Split(split::Split),
    #[cfg(feature = "general")]
    Metaspace(metaspace::Metaspace),
    /// Split at numeric chars (`char::is_numeric`): each one alone, or runs of them.
    #[cfg(feature = "general")]
    Digits { individual_digits: bool },
    /// Cut at this char, which is removed.
    #[cfg(feature = "general")]
    CharDelimiterSplit(char),
    #[cfg(feature = "general")]
    UnicodeScripts,
    /// Pieces of this many chars (the last may be shorter); never 0.
    #[cfg(feature = "general")]
    FixedLength(usize),
    /// Each pre-tokenizer in turn on the pieces of the previous one.
    #[cfg(feature = "general")]
    Sequence(Vec<PreTokenizer>),
}

/// Splits `text` into words as `pre_tokenizer` does (with none: the whole text is one word).
///
/// A pre-tokenizer that rewrites its pieces (ByteLevel, Metaspace) gives, for each piece, the
/// span of `text` it stems from; [`PreTokenizer::apply`] gives the pieces themselves.
pub fn pre_tokenize(pre_tokenizer: Option<&PreTokenizer>, text: &str, emit: impl FnMut(Piece)) {
    let mut emit = emit;
    match pre_tokenizer {
        Some(PreTokenizer::Bert) => bert::split(text, emit),
        #[cfg(feature = "general")]
        Some(p) => {
            let out = p.apply(PreTokenized::whole(AlignedText::new(text)), &mut |_, _| {});
            // The byte offset of each char of `text`, and of its end.
            let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            for i in 0..out.pieces.len() {
                let orig = out.piece_orig(i);
                let (cs, ce) = (orig[0] as usize, orig[orig.len() - 1] as usize + 1);
                emit(Piece { byte_start: starts[cs], byte_end: starts[ce], char_start: cs, char_end: ce });
            }
        }
        None => {
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
    /// The input char that chars aligned [`crate::normalizers::AT_START`] stand for: where
    /// the segment of the input this text was normalized from starts.
    pub origin: u32,
}

impl PreTokenized {
    /// One piece holding all of `text` (none when it is empty).
    pub fn whole(text: AlignedText) -> Self {
        let pieces = if text.text.is_empty() {
            Vec::new()
        } else {
            vec![Piece { byte_start: 0, byte_end: text.text.len(), char_start: 0, char_end: text.orig.len() }]
        };
        PreTokenized { text, pieces, origin: 0 }
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
    /// A builder of the stage after `input` (whose origin it keeps), with room for `bytes`
    /// bytes and `chars` chars.
    pub fn after(input: &PreTokenized, bytes: usize, chars: usize) -> Self {
        Builder {
            out: PreTokenized {
                text: AlignedText { text: String::with_capacity(bytes), orig: Vec::with_capacity(chars) },
                pieces: Vec::new(),
                origin: input.origin,
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
    /// The names of the stages [`PreTokenizer::apply`] reports, in order: one per component.
    pub fn stage_names(&self, out: &mut Vec<&'static str>) {
        match self {
            #[cfg(feature = "general")]
            PreTokenizer::Sequence(list) => list.iter().for_each(|p| p.stage_names(out)),
            p => out.push(p.stage_name()),
        }
    }

    fn stage_name(&self) -> &'static str {
        match self {
            PreTokenizer::Bert => "bert_pre_tokenizer",
            #[cfg(feature = "general")]
            PreTokenizer::ByteLevel(_) => "byte_level",
            #[cfg(feature = "general")]
            PreTokenizer::Whitespace => "whitespace",
            #[cfg(feature = "general")]
            PreTokenizer::WhitespaceSplit => "whitespace_split",
            #[cfg(feature = "general")]
            PreTokenizer::Punctuation(_) => "punctuation",
            #[cfg(feature = "general")]
            PreTokenizer::Split(_) => "split",
            #[cfg(feature = "general")]
            PreTokenizer::Metaspace(_) => "metaspace",
            #[cfg(feature = "general")]
            PreTokenizer::Digits { .. } => "digits",
            #[cfg(feature = "general")]
            PreTokenizer::CharDelimiterSplit(_) => "char_delimiter_split",
            #[cfg(feature = "general")]
            PreTokenizer::UnicodeScripts => "unicode_scripts",
            #[cfg(feature = "general")]
            PreTokenizer::FixedLength(_) => "fixed_length",
            #[cfg(feature = "general")]
            PreTokenizer::Sequence(_) => "sequence",
        }
    }

    /// Splits every piece of `input`, calling `observe` after each stage (in the order of
    /// [`PreTokenizer::stage_names`]).
    ///
    /// Where the reference fails (ByteLevel's rewrite of a piece that begins with chars a
    /// normalizer inserted before the text's start) this carries on;
    /// [`PreTokenizer::try_apply`] reports it.
    pub fn apply(
        &self,
        input: PreTokenized,
        observe: &mut dyn FnMut(&'static str, &PreTokenized),
    ) -> PreTokenized {
        self.run(input, observe, &mut true)
    }

    /// [`PreTokenizer::apply`], or an error where the reference fails.
    pub fn try_apply(
        &self,
        input: PreTokenized,
        observe: &mut dyn FnMut(&'static str, &PreTokenized),
    ) -> crate::error::Result<PreTokenized> {
        let mut ok = true;
        let out = self.run(input, observe, &mut ok);
        if ok {
            Ok(out)
        } else {
            Err(crate::error::Error::Input(
                "the reference fails on this text: a pre-tokenizer rewrites a piece that begins with chars a normalizer inserted before its start".into(),
            ))
        }
    }

    fn run(
        &self,
        input: PreTokenized,
        observe: &mut dyn FnMut(&'static str, &PreTokenized),
        #[allow(unused_variables)] ok: &mut bool,
    ) -> PreTokenized {
        let out = match self {
            PreTokenizer::Bert => split_each(&input, |text, emit| bert::split(text, emit)),
            #[cfg(feature = "general")]
            PreTokenizer::Sequence(list) => {
                return list.iter().fold(input, |acc, p| p.run(acc, observe, ok));
            }
            #[cfg(feature = "general")]
            PreTokenizer::ByteLevel(b) => b.apply(&input, ok),
            #[cfg(feature = "general")]
            PreTokenizer::Metaspace(m) => m.apply(&input),
            #[cfg(feature = "general")]
            p => cut_each(&input, |text, emit| {
                p.cut(text, emit);
            }),
        };
        observe(self.stage_name(), &out);
        out
    }
}

#[cfg(feature = "general")]
impl PreTokenizer {
    /// Calls `emit(start, end)` with the byte ranges of `text` this pre-tokenizer keeps as
    /// pieces, for one that only cuts (neither rewrites nor moves chars); empty ranges may
    /// come and mean nothing. False (nothing emitted) for the others: ByteLevel, Metaspace and
    /// Sequence.
    fn cut(&self, text: &str, emit: &mut dyn FnMut(usize, usize)) -> bool {
        match self {
            PreTokenizer::Bert => bert::split(text, |p| emit(p.byte_start, p.byte_end)),
            PreTokenizer::Whitespace => whitespace::words(text, emit),
            PreTokenizer::WhitespaceSplit => cut_by(text, SplitDelimiterBehavior::Removed, emit, |t, f| {
                char_matches(t, char::is_whitespace, f)
            }),
            PreTokenizer::Punctuation(behavior) => {
                cut_by(text, *behavior, emit, |t, f| char_matches(t, crate::unicode::is_bert_punctuation, f))
            }
            PreTokenizer::Split(s) => cut_by(text, s.behavior, emit, |t, f| s.matches(t, f)),
            // Rust's `char::is_numeric` (General_Category N*) on the Unicode of the Rust it is
            // built with, as the reference's: 17.0 for tokenizers 0.23.3.
            PreTokenizer::Digits { individual_digits } => {
                let behavior = if *individual_digits {
                    SplitDelimiterBehavior::Isolated
                } else {
                    SplitDelimiterBehavior::Contiguous
                };
                cut_by(text, behavior, emit, |t, f| char_matches(t, char::is_numeric, f))
            }
            PreTokenizer::CharDelimiterSplit(d) => {
                cut_by(text, SplitDelimiterBehavior::Removed, emit, |t, f| char_matches(t, |c| c == *d, f))
            }
            PreTokenizer::UnicodeScripts => unicode_scripts::cut(text, emit),
            PreTokenizer::FixedLength(n) => fixed_length(*n, text, emit),
            PreTokenizer::ByteLevel(_) | PreTokenizer::Metaspace(_) | PreTokenizer::Sequence(_) => {
                return false
            }
        }
        true
    }

    /// Whether every stage only cuts ([`PreTokenizer::cut_plain`] answers).
    pub fn only_cuts(&self) -> bool {
        match self {
            PreTokenizer::Sequence(list) => list.iter().all(PreTokenizer::only_cuts),
            PreTokenizer::ByteLevel(_) | PreTokenizer::Metaspace(_) => false,
            _ => true,
        }
    }

    /// Calls `piece` with each piece of `text`, in order, for a pre-tokenizer that
    /// [`PreTokenizer::only_cuts`]: the pieces [`PreTokenizer::apply`] gives, without the
    /// alignment. Stops at the first error.
    pub fn cut_plain<E>(&self, text: &str, mut piece: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
        let pieces = self.cut_ranges(text);
        pieces.iter().try_for_each(|&(s, e)| piece(&text[s as usize..e as usize]))
    }

    /// The byte ranges of [`PreTokenizer::cut_plain`]'s pieces, in order.
    pub fn cut_ranges(&self, text: &str) -> Vec<(u32, u32)> {
        // About one piece per 4 bytes of prose: room for most texts without regrowing.
        let room = text.len() / 4 + 1;
        let mut pieces = Vec::with_capacity(room);
        if !text.is_empty() {
            pieces.push((0, text.len() as u32));
        }
        self.refine(text, &mut pieces, &mut Vec::with_capacity(room));
        pieces
    }

    /// Cuts each range of `text` in `pieces` as this stage does.
    fn refine(&self, text: &str, pieces: &mut Vec<(u32, u32)>, scratch: &mut Vec<(u32, u32)>) {
        if let PreTokenizer::Sequence(list) = self {
            list.iter().for_each(|p| p.refine(text, pieces, scratch));
            return;
        }
        scratch.clear();
        for &(s, e) in pieces.iter() {
            let cut = self.cut(&text[s as usize..e as usize], &mut |a, b| {
                if a < b {
                    scratch.push((s + a as u32, s + b as u32));
                }
            });
            debug_assert!(cut, "{self:?} rewrites its pieces");
        }
        std::mem::swap(pieces, scratch);
    }
}

/// [`Cutter`] over the tiling `matches(text, f)` calls `f` with.
#[cfg(feature = "general")]
fn cut_by(
    text: &str,
    behavior: SplitDelimiterBehavior,
    emit: &mut dyn FnMut(usize, usize),
    matches: impl Fn(&str, &mut dyn FnMut(usize, usize, bool)),
) {
    let mut cutter = Cutter::new(behavior, emit);
    matches(text, &mut |s, e, m| cutter.push(s, e, m));
    cutter.finish();
}

/// Applies a pre-tokenizer that only cuts (it neither rewrites nor drops chars inside its
/// pieces) to every piece of `input`: `split(piece_text, emit)` emits sub-pieces relative to
/// the piece.
pub fn split_each(input: &PreTokenized, mut split: impl FnMut(&str, &mut dyn FnMut(Piece))) -> PreTokenized {
    let mut b = Builder::after(input, input.text.text.len(), input.text.orig.len());
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

/// Like [`split_each`] for a splitter that knows byte ranges only: `cut(piece_text, emit)`
/// calls `emit(start, end)` with byte ranges of the piece, in order and not overlapping; text
/// outside them is dropped, and empty ranges add nothing.
#[cfg(feature = "general")]
fn cut_each(input: &PreTokenized, mut cut: impl FnMut(&str, &mut dyn FnMut(usize, usize))) -> PreTokenized {
    let mut b = Builder::after(input, input.text.text.len(), input.text.orig.len());
    for p in &input.pieces {
        let text = &input.text.text[p.byte_start..p.byte_end];
        // Chars are counted from the end of the previous range on: linear in the piece.
        let (mut byte, mut char) = (0usize, p.char_start);
        cut(text, &mut |s, e| {
            debug_assert!(byte <= s && s <= e && e <= text.len(), "ranges out of order");
            if s == e {
                return;
            }
            char += text[byte..s].chars().count();
            let cs = char;
            char += text[s..e].chars().count();
            byte = e;
            b.copy(&input.text, p.byte_start + s..p.byte_start + e, cs..char);
        });
    }
    b.finish()
}

/// FixedLength: pieces of `n` chars, the last one what remains.
#[cfg(feature = "general")]
fn fixed_length(n: usize, text: &str, emit: &mut dyn FnMut(usize, usize)) {
    let mut start = 0;
    for (k, (i, _)) in text.char_indices().enumerate() {
        if k > 0 && k % n == 0 {
            emit(start, i);
            start = i;
        }
    }
    emit(start, text.len());
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

    #[cfg(feature = "general")]
    fn texts(p: &PreTokenized) -> Vec<&str> {
        (0..p.pieces.len()).map(|i| p.piece_text(i)).collect()
    }

    #[cfg(feature = "general")]
    fn load(json: &str) -> PreTokenizer {
        crate::loaders::tokenizer_json::parse_pre_tokenizer_json(json).unwrap()
    }

    #[cfg(feature = "general")]
    #[test]
    fn a_sequence_reports_each_stage_and_splits_within_pieces() {
        let pt = load(
            r#"{"type":"Sequence","pretokenizers":[{"type":"WhitespaceSplit"},
                {"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":false}]},
                {"type":"Metaspace","replacement":"_","prepend_scheme":"first","split":true}]}"#,
        );
        let mut names = Vec::new();
        pt.stage_names(&mut names);
        assert_eq!(names, ["whitespace_split", "digits", "metaspace"]);
        let mut seen = Vec::new();
        let out = pt.apply(PreTokenized::whole(AlignedText::new("ab12 c")), &mut |name, p| {
            seen.push((name, texts(p).into_iter().map(str::to_owned).collect::<Vec<_>>()))
        });
        assert_eq!(seen[0], ("whitespace_split", vec!["ab12".to_owned(), "c".to_owned()]));
        assert_eq!(seen[1].1, ["ab", "12", "c"]);
        // Only the piece that starts the input gets the prefix under "first".
        assert_eq!(texts(&out), ["_ab", "12", "c"]);
        assert_eq!(pieces(&out)[0], ("_ab", &[0u32, 0, 1][..]));
        assert_eq!(pieces(&out)[2], ("c", &[5u32][..]));
    }

    #[cfg(feature = "general")]
    #[test]
    fn cuts_keep_the_alignment_of_each_piece() {
        // Two pieces whose chars stem from scattered input chars (as after a normalizer).
        let mut t = AlignedText::new("a-bé-c");
        t.orig = vec![0, 2, 3, 4, 7, 9];
        let input = PreTokenized {
            pieces: vec![
                Piece { byte_start: 0, byte_end: 5, char_start: 0, char_end: 4 },
                Piece { byte_start: 5, byte_end: 7, char_start: 4, char_end: 6 },
            ],
            text: t,
            origin: 0,
        };
        let pt =
            load(r#"{"type":"Split","pattern":{"String":"-"},"behavior":"MergedWithNext","invert":false}"#);
        let out = pt.apply(input.clone(), &mut |_, _| {});
        assert_eq!(pieces(&out), [("a", &[0u32][..]), ("-bé", &[2, 3, 4][..]), ("-c", &[7, 9][..])]);
        // Inverted, the stretches between matches count as the delimiters: Removed keeps
        // only what the pattern matches.
        let pt = load(r#"{"type":"Split","pattern":{"Regex":"[a-c]"},"behavior":"Removed","invert":true}"#);
        let out = pt.apply(input, &mut |_, _| {});
        assert_eq!(pieces(&out), [("a", &[0u32][..]), ("b", &[3][..]), ("c", &[9][..])]);
    }

    #[cfg(feature = "general")]
    #[test]
    fn char_predicates_and_fixed_length() {
        let run = |json: &str, text: &str| {
            texts(&load(json).apply(PreTokenized::whole(AlignedText::new(text)), &mut |_, _| {}))
                .into_iter()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(r#"{"type":"Digits","individual_digits":true}"#, "a12Ⅻ"), ["a", "1", "2", "Ⅻ"]);
        assert_eq!(run(r#"{"type":"Digits","individual_digits":false}"#, "a12b3"), ["a", "12", "b", "3"]);
        assert_eq!(run(r#"{"type":"CharDelimiterSplit","delimiter":"x"}"#, "axxbx"), ["a", "b"]);
        assert_eq!(run(r#"{"type":"Punctuation","behavior":"Contiguous"}"#, "a,.b$"), ["a", ",.", "b", "$"]);
        assert_eq!(run(r#"{"type":"FixedLength","length":2}"#, "abcdé"), ["ab", "cd", "é"]);
        assert_eq!(run(r#"{"type":"FixedLength"}"#, "abcdefg"), ["abcde", "fg"]);
        assert_eq!(run(r#"{"type":"WhitespaceSplit"}"#, " a\u{3000}b\n"), ["a", "b"]);
    }

    #[cfg(feature = "general")]
    #[test]
    fn pre_tokenize_gives_input_spans() {
        let pt = load(r#"{"type":"Metaspace","replacement":"_","prepend_scheme":"always","split":true}"#);
        let text = "é b";
        let mut v = Vec::new();
        pre_tokenize(Some(&pt), text, |p| v.push(&text[p.byte_start..p.byte_end]));
        assert_eq!(v, ["é", " b"]);
    }

    #[cfg(feature = "general")]
    #[test]
    fn loader_errors_name_the_path() {
        let err = |json: &str| {
            crate::loaders::tokenizer_json::parse_pre_tokenizer_json(json).unwrap_err().to_string()
        };
        let e = err(
            r#"{"type":"Sequence","pretokenizers":[{"type":"Whitespace"},{"type":"Split","pattern":{"Regex":"("},"behavior":"Isolated","invert":false}]}"#,
        );
        assert!(e.contains("pre_tokenizer.pretokenizers[1].pattern"), "{e}");
        assert!(err(r#"{"type":"Metaspace","replacement":"ab"}"#).contains("pre_tokenizer.replacement"));
        assert!(err(r#"{"type":"ByteLevel","add_prefix_space":true}"#).contains("pre_tokenizer.trim_offsets"));
        assert!(err(r#"{"type":"Punctuation","behavior":"removed"}"#).contains("pre_tokenizer.behavior"));
        assert!(err(r#"{"type":"Delimiter","delimiter":"x"}"#).contains("\"Delimiter\""));
        assert!(err(r#"{"type":"FixedLength","length":0}"#).contains("pre_tokenizer.length"));
    }
}
