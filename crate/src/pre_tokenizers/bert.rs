//! BertPreTokenizer: split on whitespace (dropped), then on punctuation (each punctuation
//! char its own piece).

use super::Piece;
use crate::unicode;

/// Calls `emit` with every piece of `text`, in order.
pub fn split(text: &str, mut emit: impl FnMut(Piece)) {
    let mut word: Option<(usize, usize)> = None; // (byte_start, char_start) of the open word
    let mut ci = 0usize;
    for (bi, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some((bs, cs)) = word.take() {
                emit(Piece { byte_start: bs, byte_end: bi, char_start: cs, char_end: ci });
            }
        } else if unicode::is_bert_punctuation(c) {
            if let Some((bs, cs)) = word.take() {
                emit(Piece { byte_start: bs, byte_end: bi, char_start: cs, char_end: ci });
            }
            emit(Piece { byte_start: bi, byte_end: bi + c.len_utf8(), char_start: ci, char_end: ci + 1 });
        } else if word.is_none() {
            word = Some((bi, ci));
        }
        ci += 1;
    }
    if let Some((bs, cs)) = word {
        emit(Piece { byte_start: bs, byte_end: text.len(), char_start: cs, char_end: ci });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        let mut v = Vec::new();
        split(s, |p| v.push(&s[p.byte_start..p.byte_end]));
        v
    }

    #[test]
    fn splits_whitespace_and_isolates_punctuation() {
        assert_eq!(words("hello, world!  東 "), vec!["hello", ",", "world", "!", "東"]);
        assert_eq!(words("a$b"), vec!["a", "$", "b"]);
        assert_eq!(words("   "), Vec::<&str>::new());
    }
}
