//! UnicodeScripts: cut where the script changes (Unicode 9.0 scripts, as the reference's own
//! table; sentencepiece's rules for Japanese).

use crate::unicode::generated::scripts_tables::{HAN, HIRAGANA, KATAKANA, UNKNOWN};
use crate::unicode::script;

/// The script UnicodeScripts compares: kana and the prolonged sound mark `ー` count as Han, and
/// `None` (U+0020 and unassigned code points) belongs to whatever surrounds it.
fn script_of(c: char) -> Option<u8> {
    if c == '\u{30FC}' {
        return Some(HAN);
    }
    if c == ' ' {
        return None;
    }
    match script(c) {
        UNKNOWN => None,
        HIRAGANA | KATAKANA => Some(HAN),
        s => Some(s),
    }
}

/// Calls `emit(start, end)` for each piece of `text`. A piece starts at each char whose script
/// differs from the last scripted char before it; scriptless chars before the first scripted
/// one are dropped, as the reference's cuts start at that char.
pub fn cut(text: &str, emit: &mut dyn FnMut(usize, usize)) {
    let mut last: Option<u8> = None;
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let Some(s) = script_of(c) else { continue };
        if last != Some(s) {
            if let Some(st) = start {
                emit(st, i);
            }
            start = Some(i);
            last = Some(s);
        }
    }
    if let Some(st) = start {
        emit(st, text.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let mut v = Vec::new();
        cut(text, &mut |s, e| v.push(&text[s..e]));
        v
    }

    #[test]
    fn cuts_at_script_changes() {
        // Digits and punctuation are Common: a script of their own.
        assert_eq!(pieces("ab x 12"), ["ab x ", "12"]);
        // Kana and ー join Han; a space joins the piece before it.
        assert_eq!(pieces("東京 ひらがなカタカナー x"), ["東京 ひらがなカタカナー ", "x"]);
        assert_eq!(pieces("Русский language"), ["Русский ", "language"]);
    }

    #[test]
    fn leading_scriptless_chars_are_dropped() {
        assert_eq!(pieces("  abc"), ["abc"]);
        assert_eq!(pieces(" \u{0378}a"), ["a"]);
        assert!(pieces("   ").is_empty());
        // U+0378 is unassigned in Unicode 9.0: it joins the Greek before it.
        assert_eq!(pieces("α\u{0378}β1"), ["α\u{0378}β", "1"]);
    }
}
