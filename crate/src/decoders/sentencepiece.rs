//! SentencePiece's own decoding, for tokenizers read from a `.model` file.
//!
//! Control pieces vanish, the unknown piece becomes the model's unk surface (" ⁇ " unless the
//! file says otherwise), each run of byte pieces becomes the text of its bytes (each byte
//! that does not start a valid char: U+FFFD), and "▁" becomes a space. While nothing has been
//! written, the first piece loses one leading "▁" (when the model adds a dummy prefix or
//! removes extra whitespace; with the latter, every piece does until something is written).

use crate::models::sentencepiece::PieceKind;
use crate::normalizers::sentencepiece::SPACE_SYMBOL;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub struct SpmDecoder {
    /// The control, unknown and byte pieces by their text (a `.model` file never repeats a
    /// piece, so the text tells the id).
    special: HashMap<String, Special>,
    unk_surface: String,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Special {
    Control,
    Unknown,
    Byte(u8),
}

impl SpmDecoder {
    /// The decoder of pieces `(text, kind)`, with byte pieces' bytes.
    pub fn new<'a>(
        pieces: impl IntoIterator<Item = (&'a str, PieceKind)>,
        unk_surface: String,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
    ) -> Self {
        let special = pieces
            .into_iter()
            .filter_map(|(p, k)| {
                let s = match k {
                    PieceKind::Control => Special::Control,
                    PieceKind::Unknown => Special::Unknown,
                    PieceKind::Byte => Special::Byte(crate::models::sentencepiece::piece_byte(p)?),
                    _ => return None,
                };
                Some((p.to_owned(), s))
            })
            .collect();
        SpmDecoder { special, unk_surface, add_dummy_prefix, remove_extra_whitespaces }
    }

    pub fn decode(&self, tokens: &[String]) -> String {
        let mut text = String::new();
        let mut bytes = Vec::new();
        // Whether a leading "▁" may still be dropped, and whether the last piece dropped one.
        let (mut at_start, mut dropped) = (true, false);
        for t in tokens {
            let kind = self.special.get(t.as_str()).copied();
            if let Some(Special::Byte(b)) = kind {
                bytes.push(b);
                continue;
            }
            push_bytes(&mut text, &bytes);
            bytes.clear();
            if dropped || !text.is_empty() {
                at_start = false;
            }
            dropped = false;
            match kind {
                Some(Special::Control) => {}
                Some(Special::Unknown) => text.push_str(&self.unk_surface),
                _ => {
                    let mut piece = t.as_str();
                    if at_start && (self.add_dummy_prefix || self.remove_extra_whitespaces) {
                        if let Some(rest) = piece.strip_prefix(SPACE_SYMBOL) {
                            piece = rest;
                            dropped = !self.remove_extra_whitespaces;
                        }
                    }
                    for c in piece.chars() {
                        text.push(if c == SPACE_SYMBOL { ' ' } else { c });
                    }
                }
            }
        }
        push_bytes(&mut text, &bytes);
        text
    }
}

/// Appends the text of a run of byte pieces: char by char as SentencePiece decodes UTF-8 (a
/// byte that starts no valid char is U+FFFD, and the next byte starts afresh).
fn push_bytes(text: &mut String, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let (c, n) = decode_char(bytes);
        text.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
        bytes = &bytes[n..];
    }
}

/// The char at the start of `b` and its length, or None (and 1) where SentencePiece finds no
/// valid char: a bad lead or continuation byte, an overlong form, a surrogate, past U+10FFFF.
fn decode_char(b: &[u8]) -> (Option<char>, usize) {
    let trail = |i: usize| b.get(i).is_some_and(|&x| x & 0xC0 == 0x80);
    let bits = |i: usize| (b[i] & 0x3F) as u32;
    let (cp, n, min) = match b[0] {
        x if x < 0x80 => return (Some(x as char), 1),
        x if x & 0xE0 == 0xC0 && trail(1) => (((x & 0x1F) as u32) << 6 | bits(1), 2, 0x80),
        x if x & 0xF0 == 0xE0 && trail(1) && trail(2) => {
            (((x & 0x0F) as u32) << 12 | bits(1) << 6 | bits(2), 3, 0x800)
        }
        x if x & 0xF8 == 0xF0 && trail(1) && trail(2) && trail(3) => {
            (((x & 0x07) as u32) << 18 | bits(1) << 12 | bits(2) << 6 | bits(3), 4, 0x10000)
        }
        _ => return (None, 1),
    };
    match char::from_u32(cp) {
        Some(c) if cp >= min => (Some(c), n),
        _ => (None, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(d: &SpmDecoder, v: &[&str]) -> String {
        d.decode(&v.iter().map(|&t| t.to_owned()).collect::<Vec<_>>())
    }

    fn decoder(dummy: bool, remove: bool) -> SpmDecoder {
        let mut pieces = vec![("<unk>", PieceKind::Unknown), ("<s>", PieceKind::Control)];
        let bytes: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
        pieces.extend(bytes.iter().map(|b| (b.as_str(), PieceKind::Byte)));
        SpmDecoder::new(pieces, " \u{2047} ".into(), dummy, remove)
    }

    #[test]
    fn leading_space_and_specials() {
        let d = decoder(true, true);
        assert_eq!(dec(&d, &["<s>", "▁a", "▁b", "<unk>"]), "a b \u{2047} ");
        // Removing extra whitespace: every leading piece loses one "▁" until text appears.
        assert_eq!(dec(&d, &["▁", "▁▁a"]), " a");
        let d = decoder(true, false);
        assert_eq!(dec(&d, &["▁", "▁▁a"]), "  a");
        let d = decoder(false, false);
        assert_eq!(dec(&d, &["▁a"]), " a");
    }

    #[test]
    fn byte_runs_decode_char_by_char() {
        let d = decoder(true, true);
        assert_eq!(dec(&d, &["<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "<0xFF>", "a"]), "😀\u{FFFD}a");
        // A truncated char: one U+FFFD per byte.
        assert_eq!(dec(&d, &["<0xE2>", "<0x82>"]), "\u{FFFD}\u{FFFD}");
        // Surrogates and overlong forms are not chars.
        assert_eq!(dec(&d, &["<0xED>", "<0xA0>", "<0x80>"]), "\u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(dec(&d, &["<0xC0>", "<0x80>"]), "\u{FFFD}\u{FFFD}");
        // A byte run is text: a piece after it keeps its "▁".
        assert_eq!(dec(&d, &["<0x61>", "▁b"]), "a b");
    }
}
