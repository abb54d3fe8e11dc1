//! The ByteLevel alphabet: every byte stands for one visible char, so that byte-level
//! vocabularies can be written as text.

/// GPT-2's byte-to-char table: the printable bytes `!`..`~`, `¡`..`¬` and `®`..`ÿ` stand for
/// themselves; the other 68 bytes, in order, become U+0100, U+0101, ... so that every byte
/// is a visible, non-space char in vocab files.
pub fn byte_to_char(b: u8) -> char {
    BYTE_TO_CHAR[b as usize]
}

/// The reference's rewrite of `text` into byte-level chars, as the `(char, change)` items of
/// [`crate::normalizers::AlignedText::transform`]: each char's first byte replaces it, its
/// other bytes are inserted after it.
#[cfg(feature = "general")]
pub fn byte_items(text: &str) -> Vec<(char, isize)> {
    let mut items = Vec::with_capacity(text.len());
    for c in text.chars() {
        for (i, &b) in c.encode_utf8(&mut [0; 4]).as_bytes().iter().enumerate() {
            items.push((byte_to_char(b), (i > 0) as isize));
        }
    }
    items
}

static BYTE_TO_CHAR: [char; 256] = {
    let mut t = ['\0'; 256];
    let mut next = 0x100u32;
    let mut b = 0usize;
    while b < 256 {
        let printable = matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
        let cp = if printable {
            b as u32
        } else {
            next += 1;
            next - 1
        };
        t[b] = match char::from_u32(cp) {
            Some(c) => c,
            None => panic!("unreachable"),
        };
        b += 1;
    }
    t
};

/// The byte a byte-level char stands for, if it is one.
pub fn char_to_byte(c: char) -> Option<u8> {
    let cp = c as u32;
    match cp {
        0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF => Some(cp as u8),
        0x100..=0x143 => Some(REMAPPED[(cp - 0x100) as usize]),
        _ => None,
    }
}

/// The 68 bytes that are not printable, in order: the ones mapped to U+0100 and on.
static REMAPPED: [u8; 68] = {
    let mut t = [0u8; 68];
    let mut n = 0;
    let mut b = 0usize;
    while b < 256 {
        if !matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF) {
            t[n] = b as u8;
            n += 1;
        }
        b += 1;
    }
    t
};

/// A byte-level token string back to its bytes. A char outside the byte-level alphabet
/// (found in some vocabularies' special entries) stands for its own UTF-8 bytes, as in the
/// `tokenizers` ByteLevel decoder.
pub fn byte_level_decode(token: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len());
    for c in token.chars() {
        match char_to_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// Bytes to their byte-level string (the form vocab files and the page show).
pub fn byte_level_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| byte_to_char(b)).collect()
}

/// Each byte's token of a byte-level vocabulary (its char here), its id the byte: where the
/// unit tests' vocabularies start.
#[cfg(test)]
pub(crate) fn byte_level_tokens() -> impl Iterator<Item = (String, u32)> {
    (0..=255u8).map(|b| (byte_level_encode(&[b]), b as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_alphabet() {
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(byte_to_char(0xAD), 'Ń'); // the last of the 68 remapped bytes
        let mut seen = std::collections::HashSet::new();
        for b in 0..=255u8 {
            let c = byte_to_char(b);
            assert!(seen.insert(c));
            assert_eq!(char_to_byte(c), Some(b));
        }
        assert_eq!(byte_level_decode("ĠhelloĊ"), b" hello\n");
        assert_eq!(byte_level_encode(b" hello\n"), "ĠhelloĊ");
        assert_eq!(char_to_byte('ń'), None); // U+0144, just past the 68 remapped bytes
    }
}
