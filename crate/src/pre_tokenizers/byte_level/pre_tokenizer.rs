//! The ByteLevel pre-tokenizer of a tokenizer.json: an optional space in front of each piece,
//! GPT-2's split pattern, then every byte written as its char of the byte-level alphabet.

use super::alphabet::byte_to_char;
use super::{ByteLevel, Pattern};
use crate::pre_tokenizers::{Builder, PreTokenized};

impl ByteLevel {
    pub fn apply(&self, input: &PreTokenized) -> PreTokenized {
        let mut b = Builder::with_capacity(2 * input.text.text.len(), 2 * input.text.orig.len());
        let mut text = String::new();
        for i in 0..input.pieces.len() {
            let piece = input.piece_text(i);
            let orig = input.piece_orig(i);
            // The added space stands for the piece's first char.
            let prefix = self.add_prefix_space && !piece.starts_with(' ');
            text.clear();
            if prefix {
                text.push(' ');
            }
            text.push_str(piece);
            let orig_at = |k: usize| if prefix { orig[k.saturating_sub(1)] } else { orig[k] };
            // The split's ranges tile the text in order: count chars as they go by.
            let mut k = 0;
            let mut write = |s: usize, e: usize| {
                b.begin();
                for c in text[s..e].chars() {
                    let o = orig_at(k);
                    let mut buf = [0u8; 4];
                    for &byte in c.encode_utf8(&mut buf).as_bytes() {
                        b.push(byte_to_char(byte), o);
                    }
                    k += 1;
                }
                b.end();
            };
            if self.use_regex {
                Pattern::Gpt2.for_each(&text, &mut write);
            } else {
                write(0, text.len());
            }
        }
        b.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizers::AlignedText;

    fn run(bl: ByteLevel, text: &str) -> Vec<(String, Vec<u32>)> {
        let out = bl.apply(&PreTokenized::whole(AlignedText::new(text)));
        (0..out.pieces.len()).map(|i| (out.piece_text(i).to_owned(), out.piece_orig(i).to_vec())).collect()
    }

    #[test]
    fn prefix_space_split_and_byte_chars() {
        let bl = ByteLevel { add_prefix_space: true, trim_offsets: true, use_regex: true };
        assert_eq!(
            run(bl, "hé llo"),
            [("ĠhÃ©".to_owned(), vec![0, 0, 1, 1]), ("Ġllo".to_owned(), vec![2, 3, 4, 5])]
        );
        // No second space before a piece that starts with one; GPT-2 keeps "'s" apart.
        let out: Vec<_> = run(bl, " it's  ok").into_iter().map(|p| p.0).collect();
        assert_eq!(out, ["Ġit", "'s", "Ġ", "Ġok"]);
        let bl = ByteLevel { add_prefix_space: false, trim_offsets: false, use_regex: false };
        assert_eq!(run(bl, "a b\n"), [("aĠbĊ".to_owned(), vec![0, 1, 2, 3])]);
    }
}
