//! The ByteLevel pre-tokenizer of a tokenizer.json: an optional space in front of each piece,
//! GPT-2's split pattern, then every byte written as its char of the byte-level alphabet.

use super::alphabet::{byte_items, byte_to_char};
#[cfg(target_arch = "wasm32")]
use super::pattern::GPT2_REGEX;
use super::ByteLevel;
#[cfg(not(target_arch = "wasm32"))]
use super::Pattern;
use crate::normalizers::{AlignedText, AT_START};
use crate::pre_tokenizers::{Builder, PreTokenized};

impl ByteLevel {
    /// Clears `ok` where the reference fails (see [`AlignedText::transform_reporting`]).
    pub fn apply(&self, input: &PreTokenized, ok: &mut bool) -> PreTokenized {
        let mut b = Builder::after(input, 2 * input.text.text.len(), 2 * input.text.orig.len());
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
                let n = text[s..e].chars().count();
                b.begin();
                if s < e && orig_at(k) == AT_START {
                    // The reference rewrites such a piece as it does normalized text that
                    // begins with inserted chars: astray, or failing.
                    let piece =
                        AlignedText { text: text[s..e].to_owned(), orig: (k..k + n).map(orig_at).collect() };
                    let out = piece.transform_piece_reporting(byte_items(&piece.text), 0, ok);
                    for (c, &o) in out.text.chars().zip(&out.orig) {
                        b.push(c, o);
                    }
                } else {
                    for (c, j) in text[s..e].chars().zip(k..) {
                        let o = orig_at(j);
                        let mut buf = [0u8; 4];
                        for &byte in c.encode_utf8(&mut buf).as_bytes() {
                            b.push(byte_to_char(byte), o);
                        }
                    }
                }
                k += n;
                b.end();
            };
            if self.use_regex {
                gpt2_split(&text, &mut write);
            } else {
                write(0, text.len());
            }
        }
        b.finish()
    }
}

/// Calls `f(start, end)` for each piece of GPT-2's pattern in `text`, in order.
///
/// In WebAssembly on the regex engine, as the reference's wasm build does: the hand-written
/// matcher's class tables would cost the general module ~25 KB gzip.
#[cfg(target_arch = "wasm32")]
fn gpt2_split(text: &str, f: impl FnMut(usize, usize)) {
    static GPT2: std::sync::OnceLock<crate::regex::Regex> = std::sync::OnceLock::new();
    GPT2.get_or_init(|| crate::regex::Regex::new(GPT2_REGEX).expect("GPT-2's pattern compiles"))
        .for_each_match(text, f);
}

#[cfg(not(target_arch = "wasm32"))]
fn gpt2_split(text: &str, f: impl FnMut(usize, usize)) {
    Pattern::Gpt2.for_each(text, f);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(bl: ByteLevel, text: &str) -> Vec<(String, Vec<u32>)> {
        let out = bl.apply(&PreTokenized::whole(AlignedText::new(text)), &mut true);
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

    /// A piece that begins with chars inserted before the text (a Replace of "^" makes
    /// them): the reference rewrites it as normalizers rewrite such text.
    #[test]
    fn pieces_that_begin_before_the_text() {
        let bl = ByteLevel { add_prefix_space: false, trim_offsets: false, use_regex: true };
        let mut t = AlignedText::new("XY:");
        t.orig = vec![AT_START, AT_START, 0];
        // GPT-2's pattern cuts "XY" from ":": inserted chars alone get their rewrite in front
        // of them.
        let mut ok = true;
        let out = bl.apply(&PreTokenized::whole(t.clone()), &mut ok);
        assert!(ok);
        assert_eq!(out.piece_text(0), "XYXY");
        assert_eq!(out.piece_orig(0), [AT_START; 4]);
        assert_eq!((out.piece_text(1), out.piece_orig(1)), (":", &[0][..]));
        // Without the pattern, "XY:" is one piece: its rewrite runs past its end.
        let bl = ByteLevel { use_regex: false, ..bl };
        let mut ok = true;
        bl.apply(&PreTokenized::whole(t), &mut ok);
        assert!(!ok);
    }
}
