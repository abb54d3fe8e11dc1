//! Whitespace and WhitespaceSplit.
//!
//! Whitespace keeps the matches of `\w+|[^\w\s]+` and drops the rest. The reference runs that
//! pattern on the Rust regex crate (not Oniguruma): `\w` is regex-syntax's word class on
//! Unicode 16.0 ([`unicode::is_word_char`]) and `\s` White_Space. Leftmost-first with two
//! greedy branches that exclude each other, the matches are exactly the maximal runs of word
//! chars and the maximal runs of chars that are neither word nor whitespace.
//!
//! WhitespaceSplit cuts at whitespace (`char::is_whitespace`, White_Space) and drops it.

use crate::unicode;

/// Calls `emit(start, end)` with the byte range of each word of `text` for Whitespace.
pub fn words(text: &str, emit: &mut dyn FnMut(usize, usize)) {
    #[derive(PartialEq, Clone, Copy)]
    enum Kind {
        Word,
        Other,
        Space,
    }
    let kind = |c: char| {
        if unicode::is_word_char(c) {
            Kind::Word
        } else if c.is_whitespace() {
            Kind::Space
        } else {
            Kind::Other
        }
    };
    let mut run: Option<(usize, Kind)> = None;
    for (i, c) in text.char_indices() {
        let k = kind(c);
        match run {
            Some((_, rk)) if rk == k => {}
            _ => {
                if let Some((s, rk)) = run {
                    if rk != Kind::Space {
                        emit(s, i);
                    }
                }
                run = Some((i, k));
            }
        }
    }
    if let Some((s, rk)) = run {
        if rk != Kind::Space {
            emit(s, text.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(text: &str) -> Vec<&str> {
        let mut v = Vec::new();
        words(text, &mut |s, e| v.push(&text[s..e]));
        v
    }

    #[test]
    fn words_and_symbol_runs() {
        assert_eq!(
            ws("Hey man!! How's it going?"),
            ["Hey", "man", "!!", "How", "'", "s", "it", "going", "?"]
        );
        // A combining mark and the underscore are word chars; NBSP is whitespace.
        assert_eq!(ws("e\u{301}_x\u{a0}+-\t"), ["e\u{301}_x", "+-"]);
        assert!(ws(" \u{3000}\n").is_empty());
    }
}
