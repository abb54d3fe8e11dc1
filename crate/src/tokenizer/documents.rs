//! Token counts of a text's documents, cut as the package's corpus counting cuts a text file
//! (`python/tokenprism/corpus.py`, `--docs`): the whole file, each non-empty line (a final
//! carriage return dropped), or each run of non-blank lines joined by "\n". No special tokens
//! are added, as there by default.
//!
//! A long file arrives in blocks: [`Tokenizer::count_documents`] counts the documents that end
//! in its block and says how many bytes it used; the caller hands the rest back with the next
//! block, so a document (or a UTF-8 sequence) cut by a block's end is counted whole, once.

use std::borrow::Cow;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{FlatIds, Tokenizer};
use crate::error::Result;

/// What one document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Documents {
    File,
    Line,
    BlankLine,
}

impl Documents {
    /// The mode by its name in the package's `--docs`: "file", "line", "blank-line".
    pub fn parse(name: &str) -> Option<Documents> {
        match name {
            "file" => Some(Documents::File),
            "line" => Some(Documents::Line),
            "blank-line" => Some(Documents::BlankLine),
            _ => None,
        }
    }
}

/// What [`Tokenizer::count_documents`] found in a block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DocumentCount {
    pub documents: u64,
    pub tokens: u64,
    /// Bytes of the block counted; the rest belongs with the next block.
    pub used: usize,
    /// Where the block stops being UTF-8 (nothing is counted then).
    pub invalid_at: Option<usize>,
}

/// What a blank line may hold besides nothing (Python's `bytes.strip` set).
fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c))
}

/// The lines of `text` without their "\n" or one final "\r"; a final "\n" ends the last line
/// (no empty line after it).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').filter(move |_| !text.is_empty()).map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// The end of the last blank line that is whole in `text` (0 when there is none).
fn after_last_blank_line(text: &str) -> usize {
    let mut end = 0;
    let mut start = 0;
    while let Some(nl) = text[start..].find('\n') {
        let stop = start + nl + 1;
        if is_blank(&text[start..stop - 1]) {
            end = stop;
        }
        start = stop;
    }
    end
}

impl Tokenizer {
    /// This tokenizer without padding and truncation (a copy only when it has either): a
    /// count is of what the model makes of a text, as the corpus counting loads a tokenizer.
    pub(crate) fn unpadded(&self) -> Cow<'_, Tokenizer> {
        if self.padding.is_none() && self.truncation.is_none() {
            return Cow::Borrowed(self);
        }
        Cow::Owned(Tokenizer { padding: None, truncation: None, ..self.clone() })
    }

    /// How many tokens `text` is, no special tokens added (`ids` is a reused buffer). One
    /// call site for the whole encode path, kept out of line: the wasm modules stay small.
    #[inline(never)]
    pub(crate) fn count_tokens(&self, text: &str, ids: &mut Vec<u32>) -> Result<usize> {
        self.encode_ids_into(text, false, ids)?;
        Ok(ids.len())
    }

    /// Counts the documents of `block` that a later block cannot change: all of them when
    /// `last` (the input ends here), else those before its last line end (line mode), after
    /// its last blank line (blank-line mode), none (file mode). Bytes that are not UTF-8 stop
    /// the count (`invalid_at`), except a sequence cut by the end of a block that is not the last.
    pub fn count_documents(&self, block: &[u8], docs: Documents, last: bool) -> Result<DocumentCount> {
        let text = match std::str::from_utf8(block) {
            Ok(text) => text,
            Err(e) if e.error_len().is_none() && !last => {
                // SAFETY: `valid_up_to` bytes are UTF-8, as the error says.
                unsafe { std::str::from_utf8_unchecked(&block[..e.valid_up_to()]) }
            }
            Err(e) => return Ok(DocumentCount { invalid_at: Some(e.valid_up_to()), ..Default::default() }),
        };
        let end = match (docs, last) {
            (_, true) => text.len(),
            (Documents::File, false) => 0,
            (Documents::Line, false) => text.rfind('\n').map_or(0, |i| i + 1),
            (Documents::BlankLine, false) => after_last_blank_line(text),
        };
        let mut count = DocumentCount { used: end, ..Default::default() };
        let tok = self.unpadded();
        let mut ids = Vec::new();
        let mut add = |doc: &str, count: &mut DocumentCount| -> Result<()> {
            count.documents += 1;
            count.tokens += tok.count_tokens(doc, &mut ids)? as u64;
            Ok(())
        };
        for doc in text_documents(&text[..end], docs) {
            add(&doc, &mut count)?;
        }
        Ok(count)
    }
}

/// The documents of a block of whole lines, as the corpus commands read a text file (each
/// non-empty line, or each run of non-blank lines joined by "\n"; one final "\r" of a line
/// dropped) or, with `field`, a JSONL file (the string `field` of each non-blank line's JSON
/// object). None when some line is not a JSON object holding `field` as a string: the caller
/// reads that block the slow way, which says which line and why. `Documents::File` is not
/// read by lines: the whole block is then one document.
pub fn line_documents<'a>(block: &'a str, docs: Documents, field: Option<&str>) -> Option<Vec<Cow<'a, str>>> {
    match field {
        Some(field) => block.split('\n').filter(|l| !is_blank(l)).map(|l| json_field(l, field)).collect(),
        None => Some(text_documents(block, docs)),
    }
}

/// [`line_documents`] of a text file.
fn text_documents(block: &str, docs: Documents) -> Vec<Cow<'_, str>> {
    match docs {
        Documents::File => [block].into_iter().filter(|b| !b.is_empty()).map(Cow::Borrowed).collect(),
        Documents::Line => lines(block).filter(|l| !l.is_empty()).map(Cow::Borrowed).collect(),
        Documents::BlankLine => runs(block),
    }
}

/// The runs of non-blank lines of `block`, each joined by "\n": a slice of the block unless
/// a line of it lost a final "\r".
fn runs(block: &str) -> Vec<Cow<'_, str>> {
    fn join(block: &str, start: usize, end: usize, cr: bool) -> Cow<'_, str> {
        let run = &block[start..end];
        match cr {
            false => Cow::Borrowed(run),
            true => Cow::Owned(
                run.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect::<Vec<_>>().join("\n"),
            ),
        }
    }
    let mut docs = Vec::new();
    // The open run: its start, the end of its last line (without the "\r"), whether a line lost one.
    let mut run: Option<(usize, usize, bool)> = None;
    let mut at = 0;
    for raw in block.split_inclusive('\n') {
        let start = at;
        at += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let (line, cr) = line.strip_suffix('\r').map_or((line, false), |l| (l, true));
        if is_blank(line) {
            if let Some((s, e, c)) = run.take() {
                docs.push(join(block, s, e, c));
            }
            continue;
        }
        let end = start + line.len();
        run = Some(run.map_or((start, end, cr), |(s, _, c)| (s, end, c || cr)));
    }
    if let Some((s, e, c)) = run {
        docs.push(join(block, s, e, c));
    }
    docs
}

/// The string `field` of the JSON object `line` (the last one when the key repeats, as in
/// Python's `json.loads`), borrowed when it has no escapes.
fn json_field<'a>(line: &'a str, field: &str) -> Option<Cow<'a, str>> {
    let mut de = serde_json::Deserializer::from_str(line);
    let value = FieldOf(field).deserialize(&mut de).ok()?;
    de.end().ok()?;
    value
}

struct FieldOf<'f>(&'f str);

impl<'de> DeserializeSeed<'de> for FieldOf<'_> {
    type Value = Option<Cow<'de, str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FieldOf<'_> {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key_seed(Text)? {
            if key.as_deref() == Some(self.0) {
                found = map.next_value_seed(Text)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// A JSON value: Some when it is a string (borrowed from the input when it can be).
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Option<Cow<'de, str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v)))
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// What a block of documents holds besides its ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextCounts {
    pub bytes: u64,
    pub chars: u64,
    /// Runs of non-whitespace chars, as Python's `str.split()` counts them.
    pub words: u64,
}

impl TextCounts {
    pub fn of<'a>(docs: impl IntoIterator<Item = &'a str>, words: bool) -> TextCounts {
        let mut c = TextCounts::default();
        for doc in docs {
            c.bytes += doc.len() as u64;
            c.chars += doc.bytes().filter(|&b| b & 0xc0 != 0x80).count() as u64;
            if words {
                c.words += doc.split(is_python_space).filter(|w| !w.is_empty()).count() as u64;
            }
        }
        c
    }
}

/// Python's `str.isspace`: Unicode White_Space and the four ASCII separators U+001C..U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

impl Tokenizer {
    /// The ids of `docs` end to end, each followed by `eos` when given, on up to `threads`
    /// threads: what [`Tokenizer::encode_batch_ids`] gives without padding or truncation.
    pub fn encode_documents(
        &self,
        docs: &[&str],
        add_special_tokens: bool,
        eos: Option<u32>,
        threads: usize,
    ) -> Result<FlatIds> {
        let tok = self.unpadded();
        FlatIds::encode(docs, threads, |doc, ids| {
            tok.append_ids(doc, add_special_tokens, ids)?;
            ids.extend(eos);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok() -> Tokenizer {
        Tokenizer::from_vocab_txt("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n##b\n.\n").unwrap()
    }

    /// The documents of a whole text, counted in blocks of `step` bytes as the page feeds them.
    fn in_blocks(tok: &Tokenizer, text: &[u8], docs: Documents, step: usize) -> (u64, u64) {
        let mut carry: Vec<u8> = Vec::new();
        let (mut d, mut t) = (0, 0);
        for (k, piece) in text.chunks(step.max(1)).enumerate() {
            carry.extend_from_slice(piece);
            let last = (k + 1) * step >= text.len();
            let c = tok.count_documents(&carry, docs, last).unwrap();
            assert_eq!(c.invalid_at, None);
            d += c.documents;
            t += c.tokens;
            carry.drain(..c.used);
        }
        (d, t)
    }

    #[test]
    fn documents_follow_the_corpus_modes() {
        let tok = tok();
        let text = "a b\r\n\n  \nab.\nb\n\n\nz\n";
        let whole = |docs| {
            let c = tok.count_documents(text.as_bytes(), docs, true).unwrap();
            (c.documents, c.tokens)
        };
        // Lines: "a b", "  " (whitespace is a document, of no tokens), "ab.", "b", "z".
        assert_eq!(whole(Documents::Line), (5, 7));
        // Runs: "a b"; "ab.\nb"; "z" (the "  " line is blank).
        assert_eq!(whole(Documents::BlankLine), (3, 2 + 4 + 1));
        assert_eq!(whole(Documents::File), (1, 2 + 4 + 1));
        for step in 1..text.len() + 1 {
            for docs in [Documents::Line, Documents::BlankLine, Documents::File] {
                assert_eq!(in_blocks(&tok, text.as_bytes(), docs, step), whole(docs), "{docs:?} {step}");
            }
        }
    }

    #[test]
    fn jsonl_lines_give_their_field() {
        fn docs(block: &str) -> Option<Vec<Cow<'_, str>>> {
            line_documents(block, Documents::Line, Some("text"))
        }
        let got = docs(
            "{\"text\": \"a\\u00e9\", \"n\": [1, {\"text\": 2}]}\r\n \x0b\n{\"text\": 1, \"text\": \"b\"}",
        )
        .unwrap();
        assert_eq!(got, ["a\u{e9}", "b"]);
        assert!(matches!(got[1], Cow::Borrowed(_)), "no escapes: borrowed");
        for bad in [
            "{\"text\": \"b\", \"text\": 1}",
            "{\"body\": \"b\"}",
            "[\"text\"]",
            "{\"text\": \"a\"} x",
            "{\"text\": \"\\ud800\"}",
        ] {
            assert_eq!(docs(bad), None, "{bad}");
        }
        assert_eq!(line_documents("a\r\n\n\r\nb", Documents::Line, None).unwrap(), ["a", "b"]);
        let runs = line_documents("a\nb\n \n\nc\r\r\nd\r\n\x0c\ne", Documents::BlankLine, None).unwrap();
        assert_eq!(runs, ["a\nb", "c\r\nd", "e"]);
        assert!(matches!(runs[0], Cow::Borrowed(_)) && matches!(runs[1], Cow::Owned(_)));
    }

    #[test]
    fn words_are_python_split_words() {
        let c = TextCounts::of(["a\u{1c}b\u{3000}c\u{200b}d", " é "], true);
        assert_eq!((c.bytes, c.chars, c.words), (15, 10, 4));
    }

    #[test]
    fn padding_and_truncation_do_not_count() {
        let mut tok = tok();
        tok.padding = Some(crate::tokenizer::Padding {
            strategy: crate::tokenizer::PaddingStrategy::Fixed(16),
            direction: crate::tokenizer::Direction::Right,
            pad_to_multiple_of: None,
            pad_id: 0,
            pad_type_id: 0,
            pad_token: "[PAD]".into(),
        });
        let c = tok.count_documents(b"a b\nb\n", Documents::Line, true).unwrap();
        assert_eq!((c.documents, c.tokens), (2, 3));
    }

    #[test]
    fn a_sequence_cut_by_a_block_waits_and_a_bad_byte_stops() {
        let tok = tok();
        let text = "a\né\nb".as_bytes();
        for step in 1..text.len() + 1 {
            assert_eq!(in_blocks(&tok, text, Documents::Line, step), (3, 3), "{step}");
        }
        let cut = tok.count_documents(&text[..3], Documents::Line, false).unwrap();
        assert_eq!((cut.documents, cut.used, cut.invalid_at), (1, 2, None));
        assert_eq!(tok.count_documents(&text[..3], Documents::Line, true).unwrap().invalid_at, Some(2));
        assert_eq!(tok.count_documents(b"a\n\xff\n", Documents::Line, false).unwrap().invalid_at, Some(2));
    }
}
