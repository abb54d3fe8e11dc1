//! Normalization forms exactly as `tokenizers` 0.23 computes them, on top of our Unicode 15.0
//! forms.
//!
//! `tokenizers` normalizes with `unicode-normalization-alignments` 0.1.12, whose tables are
//! Unicode 9.0. A char assigned after 9.0 is unassigned there: combining class 0, no
//! decomposition, composes with nothing, so it is an inert starter that nothing reorders or
//! composes across. For 15.0 it may be a combining mark (e.g. U+1DF6, class 232): then
//! "e U+1DF6 U+0301" reorders and composes to "é U+1DF6" in 15.0 but stays as it is in 9.0.
//!
//! So: cut the text at chars assigned after 9.0, keep those chars as they are, and normalize
//! the pieces between them with 15.0 tables. Each piece holds only chars that 9.0 knows, and
//! Unicode's normalization stability policy makes its NFC the same in 9.0 and 15.0.
//!
//! Text that 15.0 leaves unchanged is also unchanged under 9.0 (cutting at an inert starter
//! can only remove interactions), so the cut is needed only when our NFC changed something:
//! the common case costs one [`normalize_cow`] pass and no allocation.

use std::borrow::Cow;

use crate::unicode::assigned_after_9_0;
use crate::unicode::forms::{normalize_cow, normalize_items, Form};

/// NFC with the results of Unicode 9.0 tables (see the module docs).
pub fn nfc_unicode9(text: &str) -> Cow<'_, str> {
    form_unicode9(text, Form::Nfc)
}

/// `text` in `form` with the results of Unicode 9.0 tables, borrowed when it already is.
pub fn form_unicode9(text: &str, form: Form) -> Cow<'_, str> {
    let Cow::Owned(changed) = normalize_cow(text, form) else {
        return Cow::Borrowed(text);
    };
    if !text.chars().any(assigned_after_9_0) {
        return Cow::Owned(changed);
    }
    let mut out = String::with_capacity(changed.len());
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if assigned_after_9_0(c) {
            out.push_str(&normalize_cow(&text[start..i], form));
            out.push(c);
            start = i + c.len_utf8();
        }
    }
    out.push_str(&normalize_cow(&text[start..], form));
    Cow::Owned(out)
}

/// [`normalize_items`] with the results of Unicode 9.0 tables: the reference's `(char, change)`
/// items for `form` (see the module docs; a char assigned after 9.0 is its own item, tagged 0).
pub fn normalize_items_unicode9(text: &str, form: Form) -> Vec<(char, isize)> {
    if !text.chars().any(assigned_after_9_0) {
        return normalize_items(text, form);
    }
    let mut items = Vec::with_capacity(text.len());
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if assigned_after_9_0(c) {
            items.extend(normalize_items(&text[start..i], form));
            items.push((c, 0));
            start = i + c.len_utf8();
        }
    }
    items.extend(normalize_items(&text[start..], form));
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_marks_are_inert_starters() {
        // U+1DF6 (Unicode 10.0, class 232) between e and U+0301: 9.0 cannot reorder it.
        assert_eq!(nfc_unicode9("e\u{1DF6}\u{301}"), "e\u{1DF6}\u{301}");
        assert_eq!(normalize_cow("e\u{1DF6}\u{301}", Form::Nfc), "\u{E9}\u{1DF6}");
        // Old chars normalize as usual, on both sides of a new one.
        assert_eq!(nfc_unicode9("e\u{301}\u{1DF6}a\u{30A}"), "\u{E9}\u{1DF6}\u{E5}");
        assert!(matches!(nfc_unicode9("plain text"), Cow::Borrowed(_)));
        assert!(assigned_after_9_0('\u{0860}'));
        assert!(assigned_after_9_0('\u{0560}'));
        assert!(!assigned_after_9_0('\u{0561}'));
        assert!(!assigned_after_9_0('\u{085F}'));
    }

    #[test]
    fn items_keep_new_chars_in_place() {
        // NFD of "é U+1DF6 U+0301": é decomposes (e tagged 0, U+0301 inserted), the new mark
        // stays, and the last mark is not reordered before it.
        assert_eq!(
            normalize_items_unicode9("\u{E9}\u{1DF6}\u{301}", Form::Nfd),
            vec![('e', 0), ('\u{301}', 1), ('\u{1DF6}', 0), ('\u{301}', 0)]
        );
        assert_eq!(normalize_items_unicode9("e\u{301}", Form::Nfc), vec![('\u{E9}', -1)]);
    }
}
