//! Metaspace: spaces become a visible replacement char (`▁` by default), which may also be put
//! in front of a piece, and each piece is cut before every replacement char.

use super::{Builder, PreTokenized};
use crate::normalizers::aligned::span;

/// When Metaspace puts the replacement char in front of a piece that does not start with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrependScheme {
    /// Every piece.
    Always,
    /// Only a piece that starts at the very start of the input.
    First,
    Never,
}

impl PrependScheme {
    /// The name a tokenizer.json uses.
    pub fn name(self) -> &'static str {
        match self {
            PrependScheme::Always => "always",
            PrependScheme::First => "first",
            PrependScheme::Never => "never",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [PrependScheme::Always, PrependScheme::First, PrependScheme::Never]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metaspace {
    pub replacement: char,
    pub prepend_scheme: PrependScheme,
    /// Cut before each replacement char (the reference's `MergedWithNext` split on it).
    pub split: bool,
}

impl Metaspace {
    pub fn apply(&self, input: &PreTokenized) -> PreTokenized {
        let rep = self.replacement;
        let mut b =
            Builder::after(input, input.text.text.len() + 3 * input.pieces.len(), input.text.orig.len());
        for i in 0..input.pieces.len() {
            let text = input.piece_text(i);
            let orig = input.piece_orig(i);
            let Some(first) = text.chars().next() else { continue };
            // "first" is decided by where the piece starts in the input: the reference asks
            // whether the piece's original offset is 0, and a piece's original start is the
            // alignment of its first char (a char inserted before the text's start: the
            // start of its segment).
            let prepend = first != ' '
                && first != rep
                && match self.prepend_scheme {
                    PrependScheme::Always => true,
                    PrependScheme::First => span(&orig[..1], input.origin).0 == 0,
                    PrependScheme::Never => false,
                };
            b.begin();
            // The prepended char and each replaced space stand for the char they precede or
            // replace.
            if prepend {
                b.push(rep, orig[0]);
            }
            for (c, &o) in text.chars().zip(orig) {
                let c = if c == ' ' { rep } else { c };
                if self.split && c == rep {
                    // The open piece ends here; an empty one (a leading replacement) is dropped.
                    b.end();
                    b.begin();
                }
                b.push(c, o);
            }
            b.end();
        }
        b.finish()
    }
}

impl Metaspace {
    /// The pieces of `text` (one whole piece) without their alignment, each in turn in `buf`
    /// for `f`. `starts_input`: whether the text's first char stems from the input's first
    /// char (what prepend scheme "first" asks).
    pub fn pieces_plain<E>(
        &self,
        text: &str,
        starts_input: bool,
        buf: &mut String,
        mut f: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        let rep = self.replacement;
        let mut enc = [0u8; 4];
        let rep_bytes = rep.encode_utf8(&mut enc).as_bytes();
        buf.clear();
        let first = text.chars().next();
        let prepend = match self.prepend_scheme {
            PrependScheme::Always => true,
            PrependScheme::First => starts_input,
            PrependScheme::Never => false,
        };
        let prepend = prepend && first.is_some_and(|c| c != ' ' && c != rep);
        if !self.split {
            // One piece: only the spaces change (a byte search for them).
            if !prepend && !text.contains(' ') {
                return if text.is_empty() { Ok(()) } else { f(text) };
            }
            if prepend {
                buf.push(rep);
            }
            let mut run = 0;
            for (i, _) in text.match_indices(' ') {
                buf.push_str(&text[run..i]);
                buf.push(rep);
                run = i + 1;
            }
            buf.push_str(&text[run..]);
            return f(buf);
        }
        if prepend {
            buf.push(rep);
        }
        let bytes = text.as_bytes();
        // The text not yet copied into `buf` starts at `run`.
        let (mut run, mut i) = (0, 0);
        while i < bytes.len() {
            #[cfg(not(target_arch = "wasm32"))]
            {
                i = next_space(bytes, i, rep_bytes[0]);
                if i == bytes.len() {
                    break;
                }
            }
            let b = bytes[i];
            let len = if b == b' ' {
                1
            } else if b == rep_bytes[0] && bytes[i..].starts_with(rep_bytes) {
                rep_bytes.len()
            } else {
                i += 1;
                continue;
            };
            // A space or a replacement char: with split, the open piece ends here (an empty
            // one, a leading replacement, is dropped).
            buf.push_str(&text[run..i]);
            if self.split {
                if !buf.is_empty() {
                    f(buf)?;
                }
                buf.clear();
            }
            buf.push(rep);
            i += len;
            run = i;
        }
        buf.push_str(&text[run..]);
        if buf.is_empty() {
            return Ok(());
        }
        f(buf)
    }
}

/// The first byte at or after `from` that is a space or `lead`, or the text's length: the
/// next eight bytes at once (most words are short), then a vector search (words are long in
/// scripts without spaces). Native only: the page's general module is at its size budget.
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn next_space(bytes: &[u8], from: usize, lead: u8) -> usize {
    const ONES: u64 = u64::MAX / 255;
    // The lowest byte flagged is always a zero byte of `x` (a borrow only flags bytes above it).
    let zeros = |x: u64| x.wrapping_sub(ONES) & !x & (ONES << 7);
    let Some(chunk) = bytes.get(from..from + 8) else {
        return bytes[from..].iter().position(|&b| b == b' ' || b == lead).map_or(bytes.len(), |k| from + k);
    };
    let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
    let found = zeros(word ^ (b' ' as u64 * ONES)) | zeros(word ^ (lead as u64 * ONES));
    if found != 0 {
        return from + (found.trailing_zeros() / 8) as usize;
    }
    memchr::memchr2(b' ', lead, &bytes[from + 8..]).map_or(bytes.len(), |k| from + 8 + k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizers::AlignedText;

    fn run(m: &Metaspace, text: &str) -> Vec<(String, Vec<u32>)> {
        let out = m.apply(&PreTokenized::whole(AlignedText::new(text)));
        (0..out.pieces.len()).map(|i| (out.piece_text(i).to_owned(), out.piece_orig(i).to_vec())).collect()
    }

    #[test]
    fn replaces_prepends_and_cuts() {
        let m = Metaspace { replacement: '▁', prepend_scheme: PrependScheme::Always, split: true };
        assert_eq!(
            run(&m, "hé llo"),
            [("▁hé".to_owned(), vec![0, 0, 1]), ("▁llo".to_owned(), vec![2, 3, 4, 5])]
        );
        // A run of spaces: each replacement but the last stands alone.
        let out: Vec<_> = run(&m, "a  b").into_iter().map(|p| p.0).collect();
        assert_eq!(out, ["▁a", "▁", "▁b"]);
        // No prepend before a leading space or replacement char.
        let out: Vec<_> = run(&m, "▁x y").into_iter().map(|p| p.0).collect();
        assert_eq!(out, ["▁x", "▁y"]);
        let m = Metaspace { replacement: '_', prepend_scheme: PrependScheme::Never, split: false };
        assert_eq!(run(&m, "a b "), [("a_b_".to_owned(), vec![0, 1, 2, 3])]);
    }

    #[test]
    fn plain_pieces_are_the_aligned_ones() {
        let mut rng = crate::testing::Rng(0xDEAD_BEEF_0BAD_F00D);
        // Words longer than the eight bytes looked at before a vector search, and chars that
        // share the replacement's first byte ("…", "€").
        let parts =
            ["a", "b", " ", "  ", "▁", "_", "é", "\u{1F600}", "xy", "…", "€", "abcdefghijklm", "ภาษาไทย"];
        for rep in ['▁', '_', ' '] {
            for scheme in [PrependScheme::Always, PrependScheme::First, PrependScheme::Never] {
                for split in [true, false] {
                    let m = Metaspace { replacement: rep, prepend_scheme: scheme, split };
                    for _ in 0..1_000 {
                        let text: String = (0..rng.below(14)).map(|_| rng.pick(&parts)).collect();
                        let starts_input = rng.below(2) == 0;
                        // A text whose first char stems from a later input char.
                        let mut aligned = AlignedText::new(&text);
                        if !starts_input {
                            aligned.orig.iter_mut().for_each(|o| *o += 1);
                        }
                        let out = m.apply(&PreTokenized::whole(aligned));
                        let want: Vec<String> =
                            (0..out.pieces.len()).map(|i| out.piece_text(i).to_owned()).collect();
                        let mut got = Vec::new();
                        m.pieces_plain::<()>(&text, starts_input, &mut String::new(), |p| {
                            got.push(p.to_owned());
                            Ok(())
                        })
                        .unwrap();
                        assert_eq!(got, want, "{m:?} {text:?} {starts_input}");
                    }
                }
            }
        }
    }

    #[test]
    fn first_prepends_only_at_the_input_start() {
        let m = Metaspace { replacement: '▁', prepend_scheme: PrependScheme::First, split: true };
        let mut t = AlignedText::new("ab");
        t.orig = vec![3, 4];
        let out = m.apply(&PreTokenized::whole(t));
        assert_eq!(out.text.text, "ab");
        let out = m.apply(&PreTokenized::whole(AlignedText::new("ab")));
        assert_eq!(out.text.text, "▁ab");
        // A first char inserted before the text (Prepend("") makes one) starts the input
        // when its segment does.
        let mut t = AlignedText::new("ab");
        t.orig[0] = crate::normalizers::AT_START;
        let out = m.apply(&PreTokenized::whole(t.clone()));
        assert_eq!(out.text.text, "▁ab");
        let out = m.apply(&PreTokenized { origin: 5, ..PreTokenized::whole(t) });
        assert_eq!(out.text.text, "ab");
    }
}
