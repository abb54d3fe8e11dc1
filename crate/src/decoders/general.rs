//! The decoders of tokenizers other than BERT's.

use super::wordpiece::cleanup_decoded;
use crate::error::{Error, Result};
use crate::pre_tokenizers::byte_level::alphabet::char_to_byte;
pub use crate::pre_tokenizers::metaspace::PrependScheme;

/// ByteLevel: a token whose chars are all byte-level chars stands for those bytes, any other
/// token for its own UTF-8; the bytes of all tokens are read as UTF-8 together.
pub(super) fn byte_level(tokens: &[String]) -> String {
    let mut bytes = Vec::with_capacity(tokens.iter().map(String::len).sum());
    for t in tokens {
        let start = bytes.len();
        for c in t.chars() {
            match char_to_byte(c) {
                Some(b) => bytes.push(b),
                None => {
                    bytes.truncate(start);
                    bytes.extend_from_slice(t.as_bytes());
                    break;
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Metaspace: `replacement` becomes a space, except in the first token (unless the scheme is
/// Never), where it is removed: the space a pre-tokenizer prepended.
pub(super) fn metaspace(replacement: char, scheme: PrependScheme, tokens: Vec<String>) -> Vec<String> {
    let mut buf = [0; 4];
    let rep: &str = replacement.encode_utf8(&mut buf);
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            if !t.contains(rep) {
                t
            } else if i == 0 && scheme != PrependScheme::Never {
                t.replace(rep, "")
            } else {
                t.replace(rep, " ")
            }
        })
        .collect()
}

/// BPEDecoder: the end-of-word suffix becomes a space, or nothing in the last token.
pub(super) fn bpe(suffix: &str, tokens: Vec<String>) -> Vec<String> {
    let n = tokens.len();
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| t.replace(suffix, if i + 1 == n { "" } else { " " }))
        .collect()
}

/// The byte of a token spelled `<0xHH>` (Rust's `from_str_radix` reading, which also takes
/// `<0x+H>`).
fn byte_token(t: &str) -> Option<u8> {
    let b = t.as_bytes();
    if b.len() != 6 || !t.starts_with("<0x") || b[5] != b'>' {
        return None;
    }
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    match b[3] {
        b'+' => hex(b[4]),
        h => Some(hex(h)? * 16 + hex(b[4])?),
    }
}

/// ByteFallback: each run of byte tokens becomes the text of its bytes, or one U+FFFD per
/// byte when they are not valid UTF-8.
pub(super) fn byte_fallback(tokens: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut run = Vec::new();
    let flush = |run: &mut Vec<u8>, out: &mut Vec<String>| {
        if !run.is_empty() {
            match String::from_utf8(std::mem::take(run)) {
                Ok(s) => out.push(s),
                Err(e) => out.extend(std::iter::repeat_n("\u{FFFD}".to_owned(), e.as_bytes().len())),
            }
        }
    };
    for t in tokens {
        match byte_token(&t) {
            Some(b) => run.push(b),
            None => {
                flush(&mut run, &mut out);
                out.push(t);
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Strip: up to `start` leading and `stop` trailing `content` chars off the token. A token
/// made only of `content` chars, fewer than the cuts ask for, makes the reference fail (an
/// index out of bounds); so it is an error here.
pub(super) fn strip(token: &str, content: char, start: usize, stop: usize) -> Result<String> {
    let chars: Vec<char> = token.chars().collect();
    let n = chars.len();
    let lead = chars.iter().take(start).take_while(|&&c| c == content).count();
    let mut trail = 0;
    while trail < stop {
        if trail >= n {
            return Err(strip_error(token, start, stop));
        }
        if chars[n - 1 - trail] != content {
            break;
        }
        trail += 1;
    }
    if lead > n - trail {
        return Err(strip_error(token, start, stop));
    }
    Ok(chars[lead..n - trail].iter().collect())
}

fn strip_error(token: &str, start: usize, stop: usize) -> Error {
    Error::Input(format!("the Strip decoder cannot cut {start} and {stop} chars from the token {token:?}"))
}

/// CTC: repeated tokens merged, the pad token removed, then (with cleanup) the WordPiece
/// cleanup and the word delimiter made a space; tokens left empty are dropped.
pub(super) fn ctc(pad: &str, delimiter: &str, cleanup: bool, tokens: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    let mut prev: Option<String> = None;
    for t in tokens {
        if prev.as_deref() == Some(t.as_str()) {
            continue;
        }
        let mut s = t.replace(pad, "");
        if cleanup {
            s = cleanup_decoded(&s).replace(delimiter, " ");
        }
        if !s.is_empty() {
            out.push(s);
        }
        prev = Some(t);
    }
    out
}
