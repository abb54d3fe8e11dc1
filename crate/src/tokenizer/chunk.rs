//! Cuts a text into chunks of at most N tokens each: at the last paragraph end that fits,
//! else the last sentence end, else the last token boundary. A chunk's count is the count of
//! encoding its text alone (no special tokens): a cut can part what the tokenizer merges
//! across it (a word, a byte-level char), so every candidate is encoded again before it is
//! taken. The chunks' texts put together are the text.

use super::Tokenizer;
use crate::error::Result;

/// Where a chunk ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// After the blank line(s) that end a paragraph.
    Paragraph,
    /// After a sentence's final punctuation (and the spaces after it).
    Sentence,
    /// At the start of a token.
    Token,
    /// At the end of the text.
    End,
}

/// One chunk: bytes `start..end` of the text and the count of its tokens alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
    pub tokens: usize,
    pub cut: Cut,
}

const SENTENCE_ENDS: &[char] = &['.', '!', '?', '…', '。', '！', '？'];
// Closing marks that stay with the sentence they close.
const CLOSERS: &[char] = &['"', '\'', ')', ']', '”', '’', '»', '」', '』'];
// Sentence ends followed by no space still end a sentence (Chinese, Japanese).
const WIDE_ENDS: &[char] = &['。', '！', '？'];

/// The paragraph and sentence ends in `text` after `from` and at most at `to`, as byte
/// offsets where the next chunk would start (after the whitespace that follows them).
fn boundaries(text: &str, from: usize, to: usize) -> (Vec<usize>, Vec<usize>) {
    let (mut paragraphs, mut sentences) = (Vec::new(), Vec::new());
    let s = &text[from..];
    let window = to - from;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if i >= window {
            break;
        }
        if c.is_whitespace() {
            // A whitespace run: a paragraph end when it holds two line ends.
            let mut newlines = usize::from(c == '\n');
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = it.peek() {
                if !d.is_whitespace() {
                    break;
                }
                newlines += usize::from(d == '\n');
                end = j + d.len_utf8();
                it.next();
            }
            if newlines >= 2 && i > 0 && end <= window {
                paragraphs.push(from + end);
            }
            continue;
        }
        if SENTENCE_ENDS.contains(&c) {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = it.peek() {
                if !(SENTENCE_ENDS.contains(&d) || CLOSERS.contains(&d)) {
                    break;
                }
                end = j + d.len_utf8();
                it.next();
            }
            let next = s[end..].chars().next();
            let at = if next.is_some_and(char::is_whitespace) {
                s[end..].find(|d: char| !d.is_whitespace()).map_or(s.len(), |k| end + k)
            } else if WIDE_ENDS.contains(&c) {
                end
            } else {
                continue;
            };
            if at <= window {
                sentences.push(from + at);
            }
        }
    }
    (paragraphs, sentences)
}

impl Tokenizer {
    /// `text` in chunks of at most `max_tokens` tokens (at least 1). A piece that no cut
    /// brings within the limit (one char of more tokens than that) is a chunk of its own,
    /// over it.
    pub fn chunk(&self, text: &str, max_tokens: usize) -> Result<Vec<Chunk>> {
        let tok = self.unpadded();
        let max = max_tokens.max(1);
        let enc = tok.encode(text, None, false)?;
        let char_at: Vec<usize> = text.char_indices().map(|(b, _)| b).chain([text.len()]).collect();
        let byte = |c: u32| char_at[(c as usize).min(char_at.len() - 1)];
        // Each token's start, and the starts a cut may use: not inside an earlier token.
        let mut starts = Vec::with_capacity(enc.len());
        let mut clean = Vec::new();
        let mut reach = 0;
        for (s, e) in enc.offsets() {
            let (s, e) = (byte(s), byte(e));
            starts.push(s);
            if s >= reach && s > 0 {
                clean.push(s);
            }
            reach = reach.max(e);
        }
        let mut ids = Vec::new();
        let mut count = |a: usize, b: usize| tok.count_tokens(&text[a..b], &mut ids);
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let first = starts.partition_point(|&s| s < pos);
            let limit = match starts.get(first + max) {
                None => text.len(),
                Some(&s) => clean[..clean.partition_point(|&c| c <= s)].last().copied().unwrap_or(0),
            }
            .max(pos);
            if limit == text.len() {
                let n = count(pos, limit)?;
                if n <= max {
                    out.push(Chunk { start: pos, end: limit, tokens: n, cut: Cut::End });
                    break;
                }
            }
            let (paragraphs, sentences) = boundaries(text, pos, limit);
            let tokens = &clean[clean.partition_point(|&c| c <= pos)..clean.partition_point(|&c| c <= limit)];
            let mut taken = None;
            'kinds: for (cut, candidates) in
                [(Cut::Paragraph, &paragraphs[..]), (Cut::Sentence, &sentences[..]), (Cut::Token, tokens)]
            {
                for &c in candidates.iter().rev() {
                    let n = count(pos, c)?;
                    if n <= max {
                        taken = Some(Chunk { start: pos, end: c, tokens: n, cut });
                        break 'kinds;
                    }
                }
            }
            let chunk = match taken {
                Some(chunk) => chunk,
                None => {
                    // Nothing fits: the smallest piece, the next token boundary (or char).
                    let next = clean.get(clean.partition_point(|&c| c <= pos)).copied();
                    let char_end = pos + text[pos..].chars().next().map_or(0, char::len_utf8);
                    let end = next.unwrap_or(text.len()).min(text.len()).max(char_end);
                    let cut = if end == text.len() { Cut::End } else { Cut::Token };
                    Chunk { start: pos, end, tokens: count(pos, end)?, cut }
                }
            };
            pos = chunk.end;
            out.push(chunk);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok() -> Tokenizer {
        let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nc\n##b\n##c\n.\n";
        Tokenizer::from_vocab_txt(vocab).unwrap()
    }

    fn check(tok: &Tokenizer, text: &str, max: usize) -> Vec<Chunk> {
        let chunks = tok.chunk(text, max).unwrap();
        let joined: String = chunks.iter().map(|c| &text[c.start..c.end]).collect();
        assert_eq!(joined, text);
        for c in &chunks {
            let alone = tok.encode_ids(&text[c.start..c.end], false).unwrap().len();
            assert_eq!(c.tokens, alone);
            assert!(c.tokens <= max, "{c:?} over {max}");
        }
        chunks
    }

    #[test]
    fn paragraphs_then_sentences_then_tokens() {
        let tok = tok();
        let text = "a b. c a.\n\nb c a b c. a\n";
        let chunks = check(&tok, text, 6);
        let cuts: Vec<_> = chunks.iter().map(|c| (&text[c.start..c.end], c.cut)).collect();
        assert_eq!(
            cuts,
            [("a b. c a.\n\n", Cut::Paragraph), ("b c a b c. ", Cut::Sentence), ("a\n", Cut::End)]
        );
        let chunks = check(&tok, "a b c a b c", 4);
        assert_eq!(chunks.iter().map(|c| c.cut).collect::<Vec<_>>(), [Cut::Token, Cut::End]);
    }

    #[test]
    fn a_cut_inside_a_word_is_counted_alone() {
        let tok = tok();
        // "abcbc" is a ##b ##c ##b ##c: cut after 2 tokens, "ab" | "cbc" is 2 + 3.
        for max in 1..8 {
            check(&tok, "abcbc abc a", max);
        }
        assert!(tok.chunk("", 3).unwrap().is_empty());
        assert_eq!(check(&tok, "  \n", 1), [Chunk { start: 0, end: 3, tokens: 0, cut: Cut::End }]);
    }
}
