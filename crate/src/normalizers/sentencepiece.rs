//! SentencePiece's own normalizer, as a `.model` file's `normalizer_spec` asks for it.
//!
//! The text is read prefix by prefix: a user-defined piece that starts there (the longest) is
//! kept as it is; else the longest key of the compiled char map that starts there is
//! replaced; else one char is kept. Around that, the whitespace rules:
//! - `remove_extra_whitespaces`: prefixes that normalize to exactly " " are dropped at the
//!   start; a normalized prefix loses its leading spaces when the previous one ended in a
//!   space; at the end, trailing space symbols are dropped (any "▁" of the input too, when
//!   spaces are escaped).
//! - `add_dummy_prefix`: a space symbol before the text (after it, when
//!   `treat_whitespace_as_suffix`), unless nothing is left.
//! - `escape_whitespaces`: every space becomes "▁" (U+2581).

use super::precompiled::Precompiled;
use super::AlignedText;
use crate::models::wordpiece::trie::Trie;
use std::sync::Arc;

/// What SentencePiece writes for a space.
pub const SPACE_SYMBOL: char = '\u{2581}';

#[derive(Clone, Debug)]
pub struct SpmNormalizer {
    pub charsmap: Option<Arc<Precompiled>>,
    /// The user-defined pieces, in id order, and their trie.
    user_defined: Vec<String>,
    user_trie: Option<Trie>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
    /// Each ASCII char's rule, so that most prefixes need no trie walk.
    ascii: Vec<Ascii>,
}

/// What an ASCII char normalizes to alone, and when that is the answer.
#[derive(Clone, Debug)]
struct Ascii {
    alone: Box<str>,
    /// Some key is longer and starts with this char (then with another ASCII char too, when
    /// `then_ascii`): only the walk knows. Both set when user-defined pieces exist.
    longer: bool,
    then_ascii: bool,
}

impl PartialEq for SpmNormalizer {
    fn eq(&self, o: &Self) -> bool {
        self.charsmap == o.charsmap
            && self.user_defined == o.user_defined
            && self.add_dummy_prefix == o.add_dummy_prefix
            && self.remove_extra_whitespaces == o.remove_extra_whitespaces
            && self.escape_whitespaces == o.escape_whitespaces
            && self.treat_whitespace_as_suffix == o.treat_whitespace_as_suffix
    }
}

impl SpmNormalizer {
    pub fn new(
        charsmap: Option<Arc<Precompiled>>,
        user_defined: Vec<String>,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
    ) -> Self {
        let user_trie = (!user_defined.is_empty())
            .then(|| Trie::new(user_defined.iter().enumerate().map(|(i, p)| (p.as_bytes(), i as u32))));
        let ascii = (0..128u8)
            .map(|b| {
                let key = [b];
                let alone = match &charsmap {
                    Some(c) => c.longest(&key).map(|(_, r)| r.to_owned()),
                    None => None,
                };
                let user = user_trie.is_some();
                let longer = user || charsmap.as_ref().is_some_and(|c| c.extends(&key));
                let then_ascii = user
                    || charsmap.as_ref().is_some_and(|c| {
                        (1..128u8).any(|x| c.extends(&[b, x]) || c.longest(&[b, x]).is_some_and(|m| m.0 == 2))
                    });
                Ascii { alone: alone.unwrap_or_else(|| (b as char).to_string()).into(), longer, then_ascii }
            })
            .collect();
        SpmNormalizer {
            charsmap,
            user_defined,
            user_trie,
            add_dummy_prefix,
            remove_extra_whitespaces,
            escape_whitespaces,
            treat_whitespace_as_suffix,
            ascii,
        }
    }

    /// The space symbol of the normalized text: "▁", or " " when spaces are not escaped.
    pub fn space(&self) -> char {
        if self.escape_whitespaces {
            SPACE_SYMBOL
        } else {
            ' '
        }
    }

    /// The normalized form of the prefix of `s` (not empty): (its text, bytes consumed).
    #[inline]
    fn prefix<'a>(&'a self, s: &'a str) -> (&'a str, usize) {
        let b = s.as_bytes();
        if let Some(a) = self.ascii.get(b[0] as usize) {
            if !a.longer || (!a.then_ascii && b.get(1).is_none_or(|&x| x < 0x80)) {
                return (&a.alone, 1);
            }
        }
        if let Some((_, n)) = self.user_trie.as_ref().and_then(|t| t.longest(b)) {
            return (&s[..n], n);
        }
        if let Some((n, r)) = self.charsmap.as_ref().and_then(|c| c.longest(b)) {
            return (r, n);
        }
        let n = s.chars().next().map_or(1, char::len_utf8);
        (&s[..n], n)
    }

    /// Normalizes `text` into `out`; with `orig` (the alignment of `text`'s chars, and where to
    /// write one per char of `out`) keeps track of where each char came from: the first
    /// input char of the prefix it was written for (for the dummy prefix, the char it stands
    /// before or, at the end, the last char).
    pub fn run(&self, text: &str, out: &mut String, mut orig: Option<(&[u32], &mut Vec<u32>)>) {
        let space = self.space();
        let mut at = 0;
        // The input char at byte `at`.
        let mut ci = 0;
        if self.remove_extra_whitespaces {
            while at < text.len() {
                let (r, n) = self.prefix(&text[at..]);
                if r != " " {
                    break;
                }
                ci += char_count(&text[at..at + n]);
                at += n;
            }
        }
        if at == text.len() {
            return;
        }
        fn push(out: &mut String, orig: &mut Option<(&[u32], &mut Vec<u32>)>, c: char, ci: usize) {
            out.push(c);
            if let Some((from, to)) = orig.as_mut() {
                to.push(from[ci.min(from.len() - 1)]);
            }
        }
        if self.add_dummy_prefix && !self.treat_whitespace_as_suffix {
            push(out, &mut orig, space, ci);
        }
        let mut prev_space = self.remove_extra_whitespaces;
        while at < text.len() {
            let (mut r, n) = self.prefix(&text[at..]);
            if prev_space {
                r = r.trim_start_matches(' ');
            }
            if !r.is_empty() {
                for c in r.chars() {
                    push(out, &mut orig, if c == ' ' { space } else { c }, ci);
                }
                prev_space = r.ends_with(' ');
            }
            ci += char_count(&text[at..at + n]);
            at += n;
            if !self.remove_extra_whitespaces {
                prev_space = false;
            }
        }
        if self.remove_extra_whitespaces {
            while out.ends_with(space) {
                out.pop();
                if let Some((_, to)) = orig.as_mut() {
                    to.pop();
                }
            }
        }
        if self.add_dummy_prefix && self.treat_whitespace_as_suffix {
            push(out, &mut orig, space, ci);
        }
    }

    pub fn normalize_str(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + text.len() / 4 + 4);
        self.run(text, &mut out, None);
        out
    }

    pub fn apply(&self, t: &AlignedText) -> AlignedText {
        let mut out = AlignedText { text: String::with_capacity(t.text.len() + 8), orig: Vec::new() };
        self.run(&t.text, &mut out.text, Some((&t.orig, &mut out.orig)));
        out
    }
}

#[inline(always)]
fn char_count(s: &str) -> usize {
    if s.len() == 1 {
        1
    } else {
        s.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(n: &SpmNormalizer, s: &str) -> String {
        n.normalize_str(s)
    }

    #[test]
    fn whitespace_rules() {
        let n = SpmNormalizer::new(None, vec![], true, true, true, false);
        assert_eq!(norm(&n, "  a  b  "), "▁a▁b");
        assert_eq!(norm(&n, "   "), "");
        assert_eq!(norm(&n, ""), "");
        // Input "▁" at the end goes too.
        assert_eq!(norm(&n, "a ▁"), "▁a");
        let kept = SpmNormalizer::new(None, vec![], true, false, true, false);
        assert_eq!(norm(&kept, "  a  "), "▁▁▁a▁▁");
        let plain = SpmNormalizer::new(None, vec![], false, true, false, false);
        assert_eq!(norm(&plain, " a  b "), "a b");
        let suffix = SpmNormalizer::new(None, vec![], true, true, true, true);
        assert_eq!(norm(&suffix, "a b "), "a▁b▁");
    }

    #[test]
    fn user_defined_pieces_pass_unchanged() {
        let n = SpmNormalizer::new(None, vec!["a  b".into()], true, true, true, false);
        assert_eq!(norm(&n, "a  b  c"), "▁a▁▁b▁c");
    }

    #[test]
    fn alignment_points_at_the_prefix_read() {
        let n = SpmNormalizer::new(None, vec![], true, true, true, false);
        let t = n.apply(&AlignedText::new("  ab  c "));
        assert_eq!(t.text, "▁ab▁c");
        assert_eq!(t.orig, [2, 2, 3, 4, 6]);
    }
}
