//! Replace: every match of a pattern becomes a given text. A normalizer, and with the same
//! JSON a decoder (applied to each token), as in the reference.

use super::aligned::{AlignedText, AT_START};
use super::char_class::CharClass;
use super::Lead;
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
    /// A regex that is one literal char repeated at least n times (n >= 1, as `" {2,}"`):
    /// the char and n. Its matches are the runs of that char at least n long, found without
    /// the regex engine.
    run: Option<(char, usize)>,
    /// A regex that matches one char of a set: the set, found without the regex engine.
    class: Option<CharClass>,
}

/// The char and count of a regex `c{n,}` or `c+` (n >= 1) where `c` is a literal in any
/// Oniguruma syntax: a space, an ASCII letter or digit, or a non-ASCII char other than a
/// space (which an extended syntax would skip).
fn literal_run(pattern: &str) -> Option<(char, usize)> {
    let mut chars = pattern.chars();
    let c = chars.next()?;
    let literal = c == ' ' || c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_whitespace());
    if !literal {
        return None;
    }
    let rest = chars.as_str();
    let n = match rest {
        "+" => 1,
        _ => {
            let digits = rest.strip_prefix('{')?.strip_suffix(",}")?;
            if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse().ok()?
        }
    };
    (n >= 1).then_some((c, n))
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
        let content = content.into();
        let (run, class) = match &pattern {
            ReplacePattern::Regex(r) => (literal_run(r), CharClass::parse(r)),
            ReplacePattern::String(_) => (None, None),
        };
        // A char that the content replaces by itself changes neither the text nor its
        // alignment (the content takes the alignment of the char it replaces): not a match
        // worth reporting (as `\p{Zs}` → " " on the ASCII space).
        let mut one = content.chars();
        let class = match (class, one.next(), one.next()) {
            (Some(class), Some(c), None) if class.contains(c) => Some(class.without(c)),
            (class, _, _) => class,
        };
        Ok(Replace { pattern, content, regex, run, class })
    }

    /// Calls `f(start, end)` for each match in `text` (none in an empty text, as the
    /// reference).
    fn for_each_match(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        match &self.pattern {
            // A literal's regex finds its leftmost occurrences, each search starting where the
            // last match ended: what `match_indices` finds, without a regex search per match.
            ReplacePattern::String(s) if !s.is_empty() => {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    // One char: a byte search (memchr) rather than the substring searcher.
                    (Some(c), None) => {
                        for (at, m) in text.match_indices(c) {
                            f(at, at + m.len());
                        }
                    }
                    _ => {
                        for (at, m) in text.match_indices(s.as_str()) {
                            f(at, at + m.len());
                        }
                    }
                }
            }
            _ if self.run.is_some() => {
                let (c, n) = self.run.expect("checked");
                let mut enc = [0u8; 4];
                let c = c.encode_utf8(&mut enc).as_bytes();
                let bytes = text.as_bytes();
                let at_c = |i: usize| bytes[i] == c[0] && (c.len() == 1 || bytes[i..].starts_with(c));
                let mut i = 0;
                while i < bytes.len() {
                    // Skip to the next byte that may begin `c`.
                    match bytes[i..].iter().position(|&b| b == c[0]) {
                        Some(k) => i += k,
                        None => break,
                    }
                    if !at_c(i) {
                        i += 1;
                        continue;
                    }
                    let (at, mut count) = (i, 0);
                    while i < bytes.len() && at_c(i) {
                        i += c.len();
                        count += 1;
                    }
                    if count >= n {
                        f(at, i);
                    }
                }
            }
            _ if self.class.is_some() => self.class.as_ref().expect("checked").for_each_match(text, f),
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

    /// Whether no match takes in a space or reaches across one, and the text's spaces stay:
    /// a set of single chars without the space, or a literal without one (see
    /// [`super::Normalizer::separable_at_spaces`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn leaves_spaces_alone(&self) -> bool {
        match &self.pattern {
            ReplacePattern::String(s) => !s.is_empty() && !s.contains(' '),
            ReplacePattern::Regex(_) => self.class.as_ref().is_some_and(|c| !c.contains(' ')),
        }
    }

    /// Whether no match lies within ASCII text: a literal or a run of a char that is not
    /// ASCII, or a set of single chars without an ASCII one (see
    /// [`super::Normalizer::leaves_ascii_alone`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn leaves_ascii_alone(&self) -> bool {
        match &self.pattern {
            ReplacePattern::String(s) => !s.is_ascii(),
            ReplacePattern::Regex(_) => match (&self.run, &self.class) {
                (Some((c, _)), _) => !c.is_ascii(),
                (None, Some(class)) => !class.holds_ascii(),
                (None, None) => false,
            },
        }
    }

    /// [`Replace::apply`]'s text alone (text with no char inserted at its start); `None` when
    /// it inserts a char there (content for an empty match at the start). `lead` as
    /// [`super::Normalizer::plain_text`] tells it.
    pub fn plain_text(&self, text: &str, lead: &mut Lead) -> Option<String> {
        let mut at_start = false;
        let mut first = None;
        let out = match &self.pattern {
            // One ASCII byte (as " " -> "▁"): copied byte by byte, each match replaced, where
            // a search per match (and a copy per run between them) cost more in common text.
            ReplacePattern::String(s) if s.len() == 1 => {
                let b = s.as_bytes()[0];
                let bytes = text.as_bytes();
                let content = self.content.as_bytes();
                let matches = bytes.iter().filter(|&&x| x == b).count();
                let len = bytes.len() - matches + matches * content.len();
                // Native only: the page's general module is at its size budget, and the page's
                // texts are short.
                let out = if cfg!(not(target_arch = "wasm32")) && matches * 16 < bytes.len() {
                    // Rare matches (a space in Thai, Chinese or code): a search for each and
                    // one copy for the run before it.
                    let mut out = Vec::with_capacity(len);
                    let mut last = 0;
                    for k in memchr::memchr_iter(b, bytes) {
                        out.extend_from_slice(&bytes[last..k]);
                        out.extend_from_slice(content);
                        last = k + 1;
                    }
                    out.extend_from_slice(&bytes[last..]);
                    out
                } else if content.len() <= 4 {
                    // Four bytes written for every byte, the step chosen without a branch:
                    // where the matches fall (spaces in text) is not predictable.
                    let mut word = [0u8; 4];
                    word[..content.len()].copy_from_slice(content);
                    let word = u32::from_le_bytes(word);
                    let mut out = vec![0u8; len + 4];
                    let mut k = 0;
                    for &x in bytes {
                        let hit = x == b;
                        let w = if hit { word } else { x as u32 };
                        out[k..k + 4].copy_from_slice(&w.to_le_bytes());
                        k += if hit { content.len() } else { 1 };
                    }
                    out.truncate(k);
                    out
                } else {
                    let mut out = Vec::with_capacity(len);
                    for &x in bytes {
                        if x == b {
                            out.extend_from_slice(content);
                        } else {
                            out.push(x);
                        }
                    }
                    out
                };
                first = (bytes.first() == Some(&b)).then_some((0, 1));
                // SAFETY: `text` is UTF-8 and `b` an ASCII byte, a whole char; each was copied
                // as it is or replaced by the bytes of `content`, a str: the result is UTF-8
                // (checking it again cost as much as the copy).
                unsafe { String::from_utf8_unchecked(out) }
            }
            _ => {
                let mut out = String::with_capacity(text.len());
                let mut last = 0;
                self.for_each_match(text, |start, end| {
                    at_start |= end == 0;
                    if first.is_none() && end > 0 {
                        first = Some((start, end));
                    }
                    out.push_str(&text[last..start]);
                    out.push_str(&self.content);
                    last = end;
                });
                out.push_str(&text[last..]);
                out
            }
        };
        if at_start && !self.content.is_empty() {
            return None;
        }
        if let Some((0, end)) = first {
            // The content takes the alignment of the match's last char.
            let one_char = text[..end].chars().nth(1).is_none();
            let mut content = self.content.chars();
            *lead = match (*lead, one_char, content.next(), content.next()) {
                (Lead::One | Lead::Some, true, Some(_), None) => *lead,
                (Lead::One | Lead::Some, true, Some(_), Some(_)) => Lead::Some,
                (Lead::One | Lead::Some, true, None, _) => {
                    lead.first_removed();
                    *lead
                }
                (Lead::One, false, ..) => Lead::Later,
                (Lead::Some, false, ..) => Lead::Unknown,
                (l, ..) => l,
            };
        }
        Some(out)
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
    fn runs_of_one_char_are_found_as_their_regex_finds_them() {
        let mut rng = crate::testing::Rng(0x2F2F_2F2F_1357_9BDF);
        let parts = ["a", "b", " ", "  ", "é", "▁", "▁▁", "\u{1F600}", "aa"];
        // Patterns the run finder takes, and look-alikes it leaves to the regex.
        let patterns =
            [" {2,}", " +", "a{1,}", "a{3,}", "▁{2,}", "▁+", "é{2,}", " {0,}", " {2,}?", ". {2,}", "ab+"];
        for pattern in patterns {
            let r = Replace::new(ReplacePattern::Regex(pattern.into()), "_").unwrap();
            let taken = !matches!(pattern, " {0,}" | " {2,}?" | ". {2,}" | "ab+");
            assert_eq!(r.run.is_some(), taken, "{pattern:?}");
            for _ in 0..500 {
                let text: String = (0..rng.below(16)).map(|_| rng.pick(&parts)).collect();
                let (mut fast, mut plain) = (Vec::new(), Vec::new());
                r.for_each_match(&text, |s, e| fast.push((s, e)));
                if !text.is_empty() {
                    r.regex.for_each_match(&text, |s, e| plain.push((s, e)));
                }
                assert_eq!(fast, plain, "{pattern:?} in {text:?}");
                let aligned = r.apply(&AlignedText::new(&text));
                match r.plain_text(&text, &mut Lead::Later) {
                    Some(t) => assert_eq!(t, aligned.text),
                    None => assert_eq!(aligned.orig.first(), Some(&AT_START)),
                }
            }
        }
    }

    #[test]
    fn plain_text_declines_an_insertion_at_the_start() {
        let re = Replace::new(ReplacePattern::Regex("^".into()), "_").unwrap();
        assert_eq!(re.plain_text("ab", &mut Lead::Later), None);
        let re = Replace::new(ReplacePattern::Regex("^".into()), "").unwrap();
        assert_eq!(re.plain_text("ab", &mut Lead::Later).as_deref(), Some("ab"));
        let re = Replace::new(ReplacePattern::Regex("$".into()), "_").unwrap();
        assert_eq!(re.plain_text("ab", &mut Lead::Later).as_deref(), Some("ab_"));
    }

    #[test]
    fn literals_are_not_patterns() {
        assert_eq!(lit("a.c", "!").replace_str("abc a.c"), "abc !");
        assert_eq!(lit("-~&#", "=").replace_str("x-~&#y"), "x=y");
        let re = Replace::new(ReplacePattern::Regex(r"\s+".into()), " ").unwrap();
        assert_eq!(re.replace_str("a \t b\n"), "a b ");
    }

    #[test]
    fn one_byte_replaced_in_plain_text_as_everywhere() {
        let mut rng = crate::testing::Rng(0x5DEE_CE66_D1CE_4E5B);
        // Long parts give texts with few matches (searched), short ones many (copied).
        let parts = [" ", "a", "▁", "日", "\u{1F600}", "  ", "日本語のテキスト", "abcdefghijklmnopq"];
        for content in ["", "x", "▁", "\u{1F600}", "12345", "▁▁"] {
            let r = lit(" ", content);
            for _ in 0..500 {
                let text: String = (0..rng.below(20)).map(|_| rng.pick(&parts)).collect();
                let got = r.plain_text(&text, &mut Lead::Later);
                assert_eq!(got, Some(r.replace_str(&text)), "{text:?} -> {content:?}");
            }
        }
    }
}
