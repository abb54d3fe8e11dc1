//! Text that remembers where each of its chars came from.
//!
//! Every normalization step the reference performs maps each output char to exactly one
//! char of the original text (a char is kept, replaced, expanded into several, or removed;
//! never merged), so one original char index per output char is the whole alignment.
//! The reference keeps one (start, end) pair per *byte*; this is the same information, with
//! one exception: a char inserted before everything else (a Replace match at the start, an
//! empty Prepend) gets the empty span (0, 0) at the start of the text's original. Such chars
//! always form a prefix of the text (every later step copies alignments from neighbours, in
//! order), and they are marked [`AT_START`].

/// The `orig` of a char the reference aligns to the empty span at the start of the
/// original text it normalized (the segment, when added tokens cut the input).
pub const AT_START: u32 = u32::MAX;

/// A string plus, for each of its chars, the index of the original char it stems from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlignedText {
    pub text: String,
    /// `orig[i]` is the index (in chars) into the original text of the `i`-th char of `text`,
    /// or [`AT_START`].
    pub orig: Vec<u32>,
}

/// The original char range `(start, end)` that the chars with alignments `orig` stem from,
/// as the reference reports it: the start of the first one to the end of the last one.
/// `origin` is the original index of the text's start, where [`AT_START`] chars sit.
pub fn span(orig: &[u32], origin: u32) -> (u32, u32) {
    match (orig.first(), orig.last()) {
        (Some(&first), Some(&last)) => {
            (if first == AT_START { origin } else { first }, if last == AT_START { origin } else { last + 1 })
        }
        _ => (origin, origin),
    }
}

impl AlignedText {
    /// The identity alignment of `s` onto itself.
    pub fn new(s: &str) -> Self {
        let n = s.chars().count();
        AlignedText { text: s.to_owned(), orig: (0..n as u32).collect() }
    }

    pub fn char_len(&self) -> usize {
        self.orig.len()
    }

    /// Whether the text begins with chars aligned [`AT_START`], where the reference's
    /// rewrites of the whole text go astray (see [`AlignedText::transform_reporting`]).
    pub(crate) fn starts_inserted(&self) -> bool {
        self.orig.first() == Some(&AT_START)
    }

    /// Applies a rewrite expressed as the reference expresses it: a sequence of
    /// `(char, change)` where `change == 0` replaces the next input char, `change > 0`
    /// inserts a char that inherits the alignment of the previously consumed input char,
    /// and `change == -n` replaces the next input char and removes the `n` after it.
    /// `skip` input chars are removed before the first item.
    ///
    /// Alignment is positional, exactly like the reference's `transform`: an output char
    /// takes the alignment of the input position it consumes, even when an operation such
    /// as NFD's canonical reordering moved it.
    pub fn transform(&self, items: impl IntoIterator<Item = (char, isize)>, skip: usize) -> Self {
        self.transform_reporting(items, skip, &mut true)
    }

    /// [`AlignedText::transform`], clearing `ok` where the reference fails.
    ///
    /// The reference rewrites the part of the text that the original maps to, and chars
    /// aligned to the empty span at the start lie outside it. So when the text begins with
    /// such chars it keeps them, and rewrites the rest with the items computed for the whole
    /// text: consumed positions run ahead of the chars the items meant, the kept chars appear
    /// twice, and an item that consumes past the end fails (an index out of bounds). We
    /// reproduce this; past the end, the last char's alignment stands in.
    pub fn transform_reporting(
        &self,
        items: impl IntoIterator<Item = (char, isize)>,
        skip: usize,
        ok: &mut bool,
    ) -> Self {
        if self.starts_inserted() {
            return self.transform_after_insert(items, skip, ok);
        }
        let mut text = String::with_capacity(self.text.len());
        let mut orig = Vec::with_capacity(self.orig.len());
        let mut pos = skip;
        for (c, change) in items {
            let o = if change > 0 {
                // An insertion at the very start has no predecessor: the reference gives it
                // the empty span at the start.
                if pos == 0 {
                    AT_START
                } else {
                    self.orig[pos - 1]
                }
            } else {
                let o = self.orig[pos];
                pos += 1 + change.unsigned_abs();
                o
            };
            text.push(c);
            orig.push(o);
        }
        AlignedText { text, orig }
    }

    /// [`AlignedText::transform_reporting`] of a piece a pre-tokenizer cut. A piece of
    /// inserted chars alone stems from no input char, unlike normalized text of inserted chars
    /// alone (whose input chars were all removed): the reference's rewrite then finds an
    /// empty range at the piece's start, and its items go in front of the piece.
    pub fn transform_piece_reporting(
        &self,
        items: impl IntoIterator<Item = (char, isize)>,
        skip: usize,
        ok: &mut bool,
    ) -> Self {
        if self.orig.is_empty() || self.orig.iter().any(|&o| o != AT_START) {
            return self.transform_reporting(items, skip, ok);
        }
        let mut out = AlignedText::default();
        for (c, _) in items {
            out.text.push(c);
            out.orig.push(AT_START);
        }
        out.text.push_str(&self.text);
        out.orig.extend_from_slice(&self.orig);
        out
    }

    /// The reference's transform of a text that begins with chars aligned [`AT_START`]
    /// (see [`AlignedText::transform_reporting`]), which tracks positions in bytes.
    fn transform_after_insert(
        &self,
        items: impl IntoIterator<Item = (char, isize)>,
        skip: usize,
        ok: &mut bool,
    ) -> Self {
        let kept = self.orig.iter().take_while(|&&o| o == AT_START).count();
        let starts: Vec<usize> = self.text.char_indices().map(|(b, _)| b).collect();
        let len = self.text.len();
        let kept_bytes = starts.get(kept).copied().unwrap_or(len);
        // The alignment of the char that holds byte `b`.
        let at = |b: usize| self.orig[starts.partition_point(|&s| s <= b) - 1];
        let mut rest = self.text[kept_bytes..].chars();
        let mut pos = kept_bytes + rest.by_ref().take(skip).map(char::len_utf8).sum::<usize>();
        let mut text = self.text[..kept_bytes].to_owned();
        let mut orig = self.orig[..kept].to_vec();
        for (c, change) in items {
            let o = if change > 0 {
                at(pos - 1)
            } else if pos < len {
                at(pos)
            } else {
                *ok = false;
                self.orig[self.orig.len() - 1]
            };
            if change <= 0 {
                pos += rest.next().map_or(0, char::len_utf8);
                pos += rest.by_ref().take(change.unsigned_abs()).map(char::len_utf8).sum::<usize>();
            }
            text.push(c);
            orig.push(o);
        }
        AlignedText { text, orig }
    }

    /// Keeps the chars where `keep` holds; removed chars leave no trace.
    pub fn filter(&self, keep: impl FnMut(char) -> bool) -> Self {
        self.filter_reporting(keep, &mut true)
    }

    /// [`AlignedText::filter`], clearing `ok` where the reference fails.
    pub fn filter_reporting(&self, mut keep: impl FnMut(char) -> bool, ok: &mut bool) -> Self {
        if self.starts_inserted() {
            // The reference's items: each kept char, tagged with the number of removed chars
            // after it; the removed chars before the first kept one are skipped (none are
            // when nothing is kept).
            let mut items = Vec::with_capacity(self.orig.len());
            let (mut removed, mut skip, mut last) = (0, 0, None);
            for c in self.text.chars() {
                if keep(c) {
                    match last {
                        Some(l) => items.push((l, -removed)),
                        None => skip = removed as usize,
                    }
                    (last, removed) = (Some(c), 0);
                } else {
                    removed += 1;
                }
            }
            if let Some(l) = last {
                items.push((l, -removed));
            }
            return self.transform_reporting(items, skip, ok);
        }
        let mut text = String::with_capacity(self.text.len());
        let mut orig = Vec::with_capacity(self.orig.len());
        for (c, &o) in self.text.chars().zip(&self.orig) {
            if keep(c) {
                text.push(c);
                orig.push(o);
            }
        }
        AlignedText { text, orig }
    }

    /// Replaces each char by `f(c)`, one for one.
    pub fn map(&self, f: impl FnMut(char) -> char) -> Self {
        self.map_reporting(f, &mut true)
    }

    /// [`AlignedText::map`], clearing `ok` where the reference fails.
    pub fn map_reporting(&self, mut f: impl FnMut(char) -> char, ok: &mut bool) -> Self {
        if self.starts_inserted() {
            let items: Vec<_> = self.text.chars().map(|c| (f(c), 0)).collect();
            return self.transform_reporting(items, 0, ok);
        }
        AlignedText { text: self.text.chars().map(&mut f).collect(), orig: self.orig.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "X" inserted before "aé" (as a Replace of "^" does).
    fn inserted() -> AlignedText {
        AlignedText { text: "Xaé".into(), orig: vec![AT_START, 0, 1] }
    }

    #[test]
    fn a_rewrite_after_an_insertion_at_the_start_runs_ahead() {
        // Lowercasing "Xaé": the items x, a, é meet the bytes of a and é, so x takes a's
        // alignment, a takes é's, and é finds no byte left: the reference fails.
        let mut ok = true;
        let t = inserted().transform_reporting([('x', 0), ('a', 0), ('é', 0)], 0, &mut ok);
        assert!(!ok);
        assert_eq!(t.text, "Xxaé");
        // Removing the accent of "X" + "e\u{301}": the items X, e (with one removed) run to
        // the end exactly, and X is kept twice.
        let t = AlignedText { text: "Xe\u{301}".into(), orig: vec![AT_START, 0, 1] };
        let mut ok = true;
        let out = t.filter_reporting(|c| c != '\u{301}', &mut ok);
        assert!(ok);
        assert_eq!((out.text.as_str(), out.orig.as_slice()), ("XXe", &[AT_START, 0, 1][..]));
    }

    #[test]
    fn a_rewrite_of_inserted_chars_alone() {
        let t = AlignedText { text: "XY".into(), orig: vec![AT_START; 2] };
        // Normalized text whose input chars were all removed: the rewrite's range is at the
        // text's end, where the items find no char to replace.
        let mut ok = true;
        let out = t.transform_reporting([('x', 0), ('y', 0)], 0, &mut ok);
        assert!(!ok);
        assert_eq!(out.text, "XYxy");
        // A piece cut from inserted chars: the range is at its start, nothing is replaced.
        let mut ok = true;
        let out = t.transform_piece_reporting([('x', 0), ('y', 0), ('!', 1)], 0, &mut ok);
        assert!(ok);
        assert_eq!((out.text.as_str(), out.orig.as_slice()), ("xy!XY", &[AT_START; 5][..]));
    }

    #[test]
    fn span_of_inserted_chars_is_empty_at_the_origin() {
        let t = inserted();
        assert_eq!(span(&t.orig[..1], 5), (5, 5));
        assert_eq!(span(&t.orig, 5), (5, 2));
        assert_eq!(span(&t.orig[1..], 5), (0, 2));
    }
}
