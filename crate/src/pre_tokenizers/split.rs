//! Splitting by a pattern, as the reference's `NormalizedString::split` does: a pattern tiles
//! a piece's text into matches and the stretches between them, and a
//! [`SplitDelimiterBehavior`] says what becomes of the matches.
//!
//! Three kinds of pattern feed a [`Cutter`]: a char predicate (each char where it holds is a
//! match of its own, never a run), a regex (Oniguruma's own iteration, empty matches
//! included), and the [`Split`] pre-tokenizer's pattern, which is a regex even when the file
//! gives a literal string (the reference escapes it and compiles it the same way).

use crate::error::Result;
use crate::regex::Regex;

/// What a split does with the text its pattern matches. With `-` as the pattern,
/// `the-final--countdown` becomes:
/// - `Removed`: `the`, `final`, `countdown`
/// - `Isolated`: `the`, `-`, `final`, `-`, `-`, `countdown`
/// - `MergedWithPrevious`: `the-`, `final-`, `-`, `countdown`
/// - `MergedWithNext`: `the`, `-final`, `-`, `-countdown`
/// - `Contiguous`: `the`, `-`, `final`, `--`, `countdown`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitDelimiterBehavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

impl SplitDelimiterBehavior {
    pub const ALL: [SplitDelimiterBehavior; 5] = [
        SplitDelimiterBehavior::Removed,
        SplitDelimiterBehavior::Isolated,
        SplitDelimiterBehavior::MergedWithPrevious,
        SplitDelimiterBehavior::MergedWithNext,
        SplitDelimiterBehavior::Contiguous,
    ];

    /// The name a tokenizer.json uses.
    pub fn name(self) -> &'static str {
        match self {
            SplitDelimiterBehavior::Removed => "Removed",
            SplitDelimiterBehavior::Isolated => "Isolated",
            SplitDelimiterBehavior::MergedWithPrevious => "MergedWithPrevious",
            SplitDelimiterBehavior::MergedWithNext => "MergedWithNext",
            SplitDelimiterBehavior::Contiguous => "Contiguous",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// Turns the tiling of a text by a pattern, pushed item by item in order, into the pieces the
/// behavior keeps, emitted as byte ranges in order (some may be empty: an empty match is an
/// item like any other, and the caller drops empty pieces as the reference does).
///
/// The merging behaviors hold back at most one piece: the last group, which a following item
/// may still extend.
pub(crate) struct Cutter<'a> {
    behavior: SplitDelimiterBehavior,
    pending: Option<(usize, usize)>,
    prev_match: bool,
    emit: &'a mut dyn FnMut(usize, usize),
}

impl<'a> Cutter<'a> {
    pub(crate) fn new(behavior: SplitDelimiterBehavior, emit: &'a mut dyn FnMut(usize, usize)) -> Self {
        Cutter { behavior, pending: None, prev_match: false, emit }
    }

    fn flush(&mut self) {
        if let Some((s, e)) = self.pending.take() {
            (self.emit)(s, e);
        }
    }

    /// The next item of the tiling: bytes `start..end`, a match of the pattern or not.
    pub(crate) fn push(&mut self, start: usize, end: usize, is_match: bool) {
        use SplitDelimiterBehavior::*;
        match self.behavior {
            Removed => {
                if !is_match {
                    (self.emit)(start, end);
                }
            }
            Isolated => (self.emit)(start, end),
            // Consecutive items of the same kind form one piece.
            Contiguous => match &mut self.pending {
                Some(p) if is_match == self.prev_match => p.1 = end,
                _ => {
                    self.flush();
                    self.pending = Some((start, end));
                }
            },
            // A match joins the item before it when that one is not a match.
            MergedWithPrevious => match &mut self.pending {
                Some(p) if is_match && !self.prev_match => p.1 = end,
                _ => {
                    self.flush();
                    self.pending = Some((start, end));
                }
            },
            // A match joins the item after it when that one is not a match: only a match is
            // held back, until the next item tells.
            MergedWithNext => {
                if let Some((s, e)) = self.pending.take() {
                    if !is_match {
                        (self.emit)(s, end);
                        self.prev_match = is_match;
                        return;
                    }
                    (self.emit)(s, e);
                }
                if is_match {
                    self.pending = Some((start, end));
                } else {
                    (self.emit)(start, end);
                }
            }
        }
        self.prev_match = is_match;
    }

    /// Emits the piece still held back.
    pub(crate) fn finish(mut self) {
        self.flush();
    }
}

/// Tiles `text` by a char predicate: each char where `is_match` holds is a match of its own,
/// each run of other chars one non-match.
pub(crate) fn char_matches(
    text: &str,
    mut is_match: impl FnMut(char) -> bool,
    f: &mut dyn FnMut(usize, usize, bool),
) {
    let mut run_start = 0;
    for (i, c) in text.char_indices() {
        if is_match(c) {
            if run_start < i {
                f(run_start, i, false);
            }
            run_start = i + c.len_utf8();
            f(i, run_start, true);
        }
    }
    if run_start < text.len() {
        f(run_start, text.len(), false);
    }
}

/// Tiles `text` by the matches of `regex`, in the engine's own order (an empty match is an
/// item too), with the stretches between them as non-matches.
pub(crate) fn regex_matches(regex: &Regex, text: &str, f: &mut dyn FnMut(usize, usize, bool)) {
    let mut prev = 0;
    regex.for_each_match(text, |s, e| {
        if prev != s {
            f(prev, s, false);
        }
        f(s, e, true);
        prev = e;
    });
    if prev != text.len() {
        f(prev, text.len(), false);
    }
}

/// The pattern of a [`Split`] as the file gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitPattern {
    /// Matched literally.
    String(String),
    /// An Oniguruma regex.
    Regex(String),
}

/// The Split pre-tokenizer: cut each piece where `pattern` matches (or, with `invert`, where
/// it does not), keeping the matches as `behavior` says.
#[derive(Clone, Debug)]
pub struct Split {
    pub pattern: SplitPattern,
    pub behavior: SplitDelimiterBehavior,
    pub invert: bool,
    regex: Regex,
}

impl Split {
    pub fn new(pattern: SplitPattern, behavior: SplitDelimiterBehavior, invert: bool) -> Result<Self> {
        let regex = match &pattern {
            SplitPattern::String(s) => Regex::new(&escape(s))?,
            SplitPattern::Regex(r) => Regex::new(r)?,
        };
        Ok(Split { pattern, behavior, invert, regex })
    }

    /// Tiles `text` by the pattern, flags inverted when `invert` is set.
    pub(crate) fn matches(&self, text: &str, f: &mut dyn FnMut(usize, usize, bool)) {
        if self.invert {
            regex_matches(&self.regex, text, &mut |s, e, m| f(s, e, !m));
        } else {
            regex_matches(&self.regex, text, f);
        }
    }
}

/// `s` with a backslash before each char the Rust regex syntax treats as special (the
/// reference escapes a literal pattern this way, then hands it to Oniguruma, for which each
/// of these escapes is the char itself).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '.'
                | '+'
                | '*'
                | '?'
                | '('
                | ')'
                | '|'
                | '['
                | ']'
                | '{'
                | '}'
                | '^'
                | '$'
                | '#'
                | '&'
                | '-'
                | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(behavior: SplitDelimiterBehavior, text: &str, pattern: char) -> Vec<&str> {
        let mut out = Vec::new();
        let mut emit = |s: usize, e: usize| {
            if s < e {
                out.push(&text[s..e]);
            }
        };
        let mut c = Cutter::new(behavior, &mut emit);
        char_matches(text, |ch| ch == pattern, &mut |s, e, m| c.push(s, e, m));
        c.finish();
        out
    }

    #[test]
    fn behaviors_on_the_documented_example() {
        use SplitDelimiterBehavior::*;
        let t = "the-final--countdown";
        assert_eq!(cut(Removed, t, '-'), ["the", "final", "countdown"]);
        assert_eq!(cut(Isolated, t, '-'), ["the", "-", "final", "-", "-", "countdown"]);
        assert_eq!(cut(MergedWithPrevious, t, '-'), ["the-", "final-", "-", "countdown"]);
        assert_eq!(cut(MergedWithNext, t, '-'), ["the", "-final", "-", "-countdown"]);
        assert_eq!(cut(Contiguous, t, '-'), ["the", "-", "final", "--", "countdown"]);
    }

    #[test]
    fn behaviors_at_the_edges() {
        use SplitDelimiterBehavior::*;
        // A leading match has nothing to merge with before it, a trailing one nothing after.
        assert_eq!(cut(MergedWithPrevious, "-a-", '-'), ["-", "a-"]);
        assert_eq!(cut(MergedWithNext, "-a-", '-'), ["-a", "-"]);
        assert_eq!(cut(Contiguous, "--a--", '-'), ["--", "a", "--"]);
        assert_eq!(cut(Removed, "---", '-'), Vec::<&str>::new());
        assert_eq!(cut(MergedWithNext, "ab", '-'), ["ab"]);
    }

    #[test]
    fn empty_regex_matches_are_items() {
        // "" matches before every char and at the end: Isolated gives each char.
        let s =
            Split::new(SplitPattern::String(String::new()), SplitDelimiterBehavior::Isolated, false).unwrap();
        let mut items = Vec::new();
        s.matches("ab", &mut |a, b, m| items.push((a, b, m)));
        assert_eq!(items, [(0, 0, true), (0, 1, false), (1, 1, true), (1, 2, false), (2, 2, true)]);
    }

    #[test]
    fn string_patterns_are_literal_and_invert_flips() {
        let s =
            Split::new(SplitPattern::String("a.b".into()), SplitDelimiterBehavior::Removed, false).unwrap();
        let mut items = Vec::new();
        s.matches("xa.byaxb", &mut |a, b, m| items.push((a, b, m)));
        assert_eq!(items, [(0, 1, false), (1, 4, true), (4, 8, false)]);
        let s =
            Split::new(SplitPattern::String("-&~#".into()), SplitDelimiterBehavior::Removed, true).unwrap();
        items.clear();
        s.matches("a-&~#b", &mut |a, b, m| items.push((a, b, m)));
        assert_eq!(items, [(0, 1, true), (1, 5, false), (5, 6, true)]);
        assert!(Split::new(SplitPattern::Regex("(".into()), SplitDelimiterBehavior::Removed, false).is_err());
    }
}
