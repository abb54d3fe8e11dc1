//! The small normalizers of a tokenizer.json: Strip, Prepend, ByteLevel and Nmt.

use super::aligned::{AlignedText, AT_START};
use crate::pre_tokenizers::byte_level::alphabet::byte_items;

/// Strip: removes whitespace (Rust's `char::is_whitespace`) at the start and/or the end.
/// (The steps that rewrite the whole text clear `ok` where the reference fails; see
/// [`AlignedText::transform_reporting`].)
pub fn strip(t: &AlignedText, left: bool, right: bool, ok: &mut bool) -> AlignedText {
    let n = t.char_len();
    let lead = if left { t.text.chars().take_while(|c| c.is_whitespace()).count() } else { 0 };
    let trail = if right { t.text.chars().rev().take_while(|c| c.is_whitespace()).count() } else { 0 };
    if lead == 0 && trail == 0 {
        return t.clone();
    }
    // The reference's items, which tag the char at index (byte length - trail - 1) as the
    // one before the removed end: the last kept char only in ASCII text. It matters only
    // after an insertion at the start, where positions are counted as the items say.
    let tagged = t.text.len().wrapping_sub(trail).wrapping_sub(1);
    let items = t.text.chars().enumerate().filter_map(|(i, c)| {
        if i < lead || i >= n - trail {
            None
        } else if i == tagged {
            Some((c, -(trail as isize)))
        } else {
            Some((c, 0))
        }
    });
    t.transform_reporting(items, lead, ok)
}

/// [`strip`]'s text alone (text with no char inserted at its start).
pub fn strip_str(mut s: String, left: bool, right: bool) -> String {
    if right {
        let keep = s.trim_end_matches(char::is_whitespace).len();
        s.truncate(keep);
    }
    if left {
        let lead = s.len() - s.trim_start_matches(char::is_whitespace).len();
        s.drain(..lead);
    }
    s
}

/// Prepend: `s` before non-empty text. The reference writes `s` over the first char and
/// inserts the rest: all of `s` shares the first char's alignment, and an empty `s`
/// leaves the first char with the empty span at the start.
pub fn prepend(t: &AlignedText, s: &str) -> AlignedText {
    let Some(&first) = t.orig.first() else {
        return t.clone();
    };
    let mut text = String::with_capacity(s.len() + t.text.len());
    text.push_str(s);
    text.push_str(&t.text);
    let mut orig = Vec::with_capacity(s.len() + t.orig.len());
    orig.extend(s.chars().map(|_| first));
    orig.push(if s.is_empty() { AT_START } else { first });
    orig.extend_from_slice(&t.orig[1..]);
    AlignedText { text, orig }
}

/// ByteLevel: each char becomes the byte-level chars of its UTF-8 bytes, all aligned to it.
pub fn byte_level(t: &AlignedText, ok: &mut bool) -> AlignedText {
    if t.text.is_empty() {
        return t.clone();
    }
    t.transform_reporting(byte_items(&t.text), 0, ok)
}

/// Nmt: removes ASCII control chars (and U+008F, U+009F), then maps some whitespace and
/// invisible chars to ' ' (the reference's lists).
pub fn nmt(t: &AlignedText, ok: &mut bool) -> AlignedText {
    let removed = |c: char| matches!(c as u32, 0x1..=0x8 | 0xB | 0xE..=0x1F | 0x7F | 0x8F | 0x9F);
    let to_space = |c: char| {
        matches!(
            c as u32,
            0x9 | 0xA | 0xC | 0xD | 0x1680 | 0x200B..=0x200F | 0x2028 | 0x2029 | 0x2581 | 0xFEFF | 0xFFFD
        )
    };
    t.filter_reporting(|c| !removed(c), ok).map_reporting(|c| if to_space(c) { ' ' } else { c }, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_sides() {
        let t = AlignedText::new(" \u{3000}a b\t");
        let both = strip(&t, true, true, &mut true);
        assert_eq!((both.text.as_str(), both.orig.as_slice()), ("a b", &[2, 3, 4][..]));
        assert_eq!(strip(&t, true, false, &mut true).text, "a b\t");
        assert_eq!(strip(&t, false, true, &mut true).orig, vec![0, 1, 2, 3, 4]);
        assert_eq!(strip(&AlignedText::new(" \n "), true, true, &mut true), AlignedText::default());
        assert_eq!(strip(&AlignedText::new(" \n "), false, true, &mut true), AlignedText::default());
    }

    #[test]
    fn prepend_aligns_to_the_first_char() {
        let t = prepend(&AlignedText::new("ab"), "▁x");
        assert_eq!((t.text.as_str(), t.orig.as_slice()), ("▁xab", &[0, 0, 0, 1][..]));
        assert_eq!(prepend(&AlignedText::new("ab"), "").orig, vec![AT_START, 1]);
        assert_eq!(prepend(&AlignedText::new(""), "▁").text, "");
    }

    #[test]
    fn byte_level_expands_chars() {
        let t = byte_level(&AlignedText::new(" é"), &mut true);
        assert_eq!((t.text.as_str(), t.orig.as_slice()), ("ĠÃ©", &[0, 1, 1][..]));
    }

    #[test]
    fn nmt_removes_and_maps() {
        let t = nmt(&AlignedText::new("a\u{1}\tb\u{200B}\u{9F}"), &mut true);
        assert_eq!((t.text.as_str(), t.orig.as_slice()), ("a b ", &[0, 2, 3, 4][..]));
    }
}
