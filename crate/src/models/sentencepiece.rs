//! What SentencePiece's own models share: the kinds of pieces a `.model` file lists, and what
//! SentencePiece does with the pieces its model could not find.
//!
//! Only NORMAL, USER_DEFINED and UNUSED pieces are ever matched in text; the unknown piece,
//! control pieces (`<s>`, `</s>`) and byte pieces (`<0x41>`) are not, even when the text
//! spells them out.

/// The type of a piece (`ModelProto.SentencePiece.Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceKind {
    Normal,
    Unknown,
    Control,
    /// Matched before the model, never split or merged (and, for Unigram, always preferred).
    UserDefined,
    /// In the vocabulary but never produced (BPE still merges through it).
    Unused,
    /// `<0xXX>`: one byte of a char the vocabulary lacks, with byte fallback.
    Byte,
}

impl PieceKind {
    /// The kind of the file's type number, if it names one.
    pub fn from_proto(n: u64) -> Option<Self> {
        Some(match n {
            1 => PieceKind::Normal,
            2 => PieceKind::Unknown,
            3 => PieceKind::Control,
            4 => PieceKind::UserDefined,
            5 => PieceKind::Unused,
            6 => PieceKind::Byte,
            _ => return None,
        })
    }

    /// Whether the model may find this piece in text (SentencePiece's "normal" pieces).
    pub fn matchable(self) -> bool {
        matches!(self, PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused)
    }
}

/// The byte of a `<0xXX>` piece (upper-case hex digits, as SentencePiece writes them).
pub fn piece_byte(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// SentencePiece's last step of an encode: the model's tokens `(id, start, end)` of `text`
/// (byte ranges, in order, covering it), where unknown chars carry `unk_id`, become the
/// output. With byte fallback (`byte_ids`: the id of each byte's piece) an unknown token
/// becomes one token per UTF-8 byte, each spanning the token's text; without, a run of
/// unknown tokens becomes one.
pub fn resolve_unknowns(
    tokens: impl IntoIterator<Item = (u32, usize, usize)>,
    text: &str,
    unk_id: u32,
    byte_ids: Option<&[u32; 256]>,
    mut push: impl FnMut(u32, usize, usize),
) {
    let mut unknowns = Unknowns::new(text, unk_id, byte_ids);
    for (id, start, end) in tokens {
        unknowns.token(id, start, end, &mut push);
    }
    unknowns.finish(&mut push);
}

/// [`resolve_unknowns`] one token at a time, for a model that finds its tokens in order.
pub struct Unknowns<'a> {
    text: &'a [u8],
    unk_id: u32,
    byte_ids: Option<&'a [u32; 256]>,
    /// A run of unknown tokens not yet pushed: its start and end.
    run: Option<(usize, usize)>,
}

impl<'a> Unknowns<'a> {
    pub fn new(text: &'a str, unk_id: u32, byte_ids: Option<&'a [u32; 256]>) -> Self {
        Unknowns { text: text.as_bytes(), unk_id, byte_ids, run: None }
    }

    /// Takes the model's next token, pushing what it resolves to so far.
    #[inline(always)]
    pub fn token(&mut self, id: u32, start: usize, end: usize, push: &mut impl FnMut(u32, usize, usize)) {
        if id == self.unk_id {
            match self.byte_ids {
                Some(bytes) => {
                    for &b in &self.text[start..end] {
                        push(bytes[b as usize], start, end);
                    }
                }
                None => self.run = Some((self.run.map_or(start, |r| r.0), end)),
            }
            return;
        }
        if let Some((s, e)) = self.run.take() {
            push(self.unk_id, s, e);
        }
        push(id, start, end);
    }

    /// Pushes what the last tokens resolve to.
    pub fn finish(self, push: &mut impl FnMut(u32, usize, usize)) {
        if let Some((s, e)) = self.run {
            push(self.unk_id, s, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_pieces_are_exact() {
        assert_eq!(piece_byte("<0x41>"), Some(0x41));
        assert_eq!(piece_byte("<0xFF>"), Some(0xFF));
        assert_eq!(piece_byte("<0xff>"), None);
        assert_eq!(piece_byte("<0x4>"), None);
        assert_eq!(piece_byte("<0x+4>"), None);
    }

    #[test]
    fn unknown_runs_merge_or_become_bytes() {
        let text = "aé€b";
        let toks = [(5, 0, 1), (0, 1, 3), (0, 3, 6), (6, 6, 7)];
        let mut out = Vec::new();
        resolve_unknowns(toks, text, 0, None, |id, s, e| out.push((id, s, e)));
        assert_eq!(out, [(5, 0, 1), (0, 1, 6), (6, 6, 7)]);
        let mut bytes = [0u32; 256];
        for (b, slot) in bytes.iter_mut().enumerate() {
            *slot = 100 + b as u32;
        }
        out.clear();
        resolve_unknowns(toks, text, 0, Some(&bytes), |id, s, e| out.push((id, s, e)));
        let want = [(5, 0, 1), (100 + 0xC3, 1, 3), (100 + 0xA9, 1, 3)];
        assert_eq!(out[..3], want);
        assert_eq!(out.len(), 7);
    }
}
