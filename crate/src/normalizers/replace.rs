//! Replace: every match of a pattern becomes a given text. A normalizer, and with the same
//! JSON a decoder (applied to each token), as in the reference.

use super::aligned::{AlignedText, AT_START};
use crate::error::Result;
use crate::regex::Regex;

/// What Replace looks for: a literal string, or an Oniguruma regex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplacePattern {
    String(String),
    Regex(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Replace {
    pub pattern: ReplacePattern,
    pub content: String,
    regex: Regex,
}

/// The chars the `regex` crate's `escape` escapes. The reference compiles a literal
/// pattern as that escaped text with Oniguruma, so an empty literal matches everywhere.
const META: &str = "\\.+*?()|[]{}^$#&-~";

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if META.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Replace {
    pub fn new(pattern: ReplacePattern, content: impl Into<String>) -> Result<Self> {
        let regex = match &pattern {
            ReplacePattern::String(s) => Regex::new(&escape(s))?,
            ReplacePattern::Regex(r) => Regex::new(r)?,
        };
        Ok(Replace { pattern, content: content.into(), regex })
    }

    /// Calls `f(start, end)` for each match in `text` (none in an empty text, as the
    /// reference).
    fn for_each_match(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        match &self.pattern {
            // A literal's regex finds its leftmost occurrences, each search starting where the
            // last match ended: what `match_indices` finds, without a regex search per match.
            ReplacePattern::String(s) if !s.is_empty() => {
                for (at, m) in text.match_indices(s.as_str()) {
                    f(at, at + m.len());
                }
            }
            _ if !text.is_empty() => self.regex.for_each_match(text, f),
            _ => {}
        }
    }

    /// The normalizer. Each char of the content takes the alignment of the char that ends
    /// where the match ends: the match's last char, or for an empty match the char before
    /// it ([`AT_START`] at the very start).
    pub fn apply(&self, t: &AlignedText) -> AlignedText {
        let mut text = String::with_capacity(t.text.len());
        let mut orig = Vec::with_capacity(t.orig.len());
        let (mut last, mut last_char) = (0, 0);
        let n_content = self.content.chars().count();
        self.for_each_match(&t.text, |start, end| {
            let before = t.text[last..start].chars().count();
            text.push_str(&t.text[last..start]);
            orig.extend_from_slice(&t.orig[last_char..last_char + before]);
            let end_char = last_char + before + t.text[start..end].chars().count();
            let o = if end_char == 0 { AT_START } else { t.orig[end_char - 1] };
            text.push_str(&self.content);
            orig.extend(std::iter::repeat_n(o, n_content));
            (last, last_char) = (end, end_char);
        });
        text.push_str(&t.text[last..]);
        orig.extend_from_slice(&t.orig[last_char..]);
        AlignedText { text, orig }
    }

    /// The decoder's step on one token.
    pub fn replace_str(&self, token: &str) -> String {
        let mut out = String::with_capacity(token.len());
        let mut last = 0;
        self.for_each_match(token, |start, end| {
            out.push_str(&token[last..start]);
            out.push_str(&self.content);
            last = end;
        });
        out.push_str(&token[last..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(p: &str, c: &str) -> Replace {
        Replace::new(ReplacePattern::String(p.into()), c).unwrap()
    }

    #[test]
    fn content_takes_the_alignment_of_the_matchs_last_char() {
        let t = lit("bc", "XYZ").apply(&AlignedText::new("abcd"));
        assert_eq!(t.text, "aXYZd");
        assert_eq!(t.orig, vec![0, 2, 2, 2, 3]);
        // Removal: the match leaves nothing.
        let t = lit("é", "").apply(&AlignedText::new("aéb"));
        assert_eq!((t.text.as_str(), t.orig.as_slice()), ("ab", &[0, 2][..]));
    }

    #[test]
    fn empty_matches_insert_after_the_previous_char() {
        let re = Replace::new(ReplacePattern::Regex("^|$".into()), "_").unwrap();
        let t = re.apply(&AlignedText::new("ab"));
        assert_eq!(t.text, "_ab_");
        assert_eq!(t.orig, vec![AT_START, 0, 1, 1]);
        // An empty literal matches at every char boundary.
        let t = lit("", "-").apply(&AlignedText::new("aé"));
        assert_eq!(t.text, "-a-é-");
        assert_eq!(t.orig, vec![AT_START, 0, 0, 1, 1]);
        // Nothing happens to empty text.
        assert_eq!(lit("", "-").apply(&AlignedText::new("")).text, "");
        assert_eq!(lit("", "-").replace_str(""), "");
    }

    #[test]
    fn literals_are_found_as_their_regex_finds_them() {
        let mut rng = crate::testing::Rng(0x5851_F42D_4C95_7F2D);
        let parts = ["a", "b", " ", "  ", "é", "▁", ".", "*", "\\", "ab", "aa"];
        for _ in 0..3000 {
            let pattern: String = (0..1 + rng.below(3)).map(|_| rng.pick(&parts)).collect();
            let text: String = (0..rng.below(14)).map(|_| rng.pick(&parts)).collect();
            let r = lit(&pattern, "-");
            let (mut fast, mut plain) = (Vec::new(), Vec::new());
            r.for_each_match(&text, |s, e| fast.push((s, e)));
            if !text.is_empty() {
                r.regex.for_each_match(&text, |s, e| plain.push((s, e)));
            }
            assert_eq!(fast, plain, "{pattern:?} in {text:?}");
        }
    }

    #[test]
    fn literals_are_not_patterns() {
        assert_eq!(lit("a.c", "!").replace_str("abc a.c"), "abc !");
        assert_eq!(lit("-~&#", "=").replace_str("x-~&#y"), "x=y");
        let re = Replace::new(ReplacePattern::Regex(r"\s+".into()), " ").unwrap();
        assert_eq!(re.replace_str("a \t b\n"), "a b ");
    }
}
