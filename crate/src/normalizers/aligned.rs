//! Text that remembers where each of its chars came from.
//!
//! Every normalization step the reference performs maps each output char to exactly one
//! char of the original text (a char is kept, replaced, expanded into several, or removed;
//! never merged), so one original char index per output char is the whole alignment.
//! The reference keeps one (start, end) pair per *byte*; this is the same information.

/// A string plus, for each of its chars, the index of the original char it stems from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlignedText {
    pub text: String,
    /// `orig[i]` is the index (in chars) into the original text of the `i`-th char of `text`.
    pub orig: Vec<u32>,
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
        let mut text = String::with_capacity(self.text.len());
        let mut orig = Vec::with_capacity(self.orig.len());
        let mut pos = skip;
        for (c, change) in items {
            let o = if change > 0 {
                // An insertion at the very start has no predecessor: the reference gives it
                // an empty alignment at 0, and so do we.
                if pos == 0 {
                    0
                } else {
                    self.orig[pos - 1]
                }
            } else {
                let o = self.orig[pos];
                pos += 1 + (-change) as usize;
                o
            };
            text.push(c);
            orig.push(o);
        }
        AlignedText { text, orig }
    }

    /// Keeps the chars where `keep` holds; removed chars leave no trace.
    pub fn filter(&self, mut keep: impl FnMut(char) -> bool) -> Self {
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
    pub fn map(&self, mut f: impl FnMut(char) -> char) -> Self {
        AlignedText { text: self.text.chars().map(&mut f).collect(), orig: self.orig.clone() }
    }
}
