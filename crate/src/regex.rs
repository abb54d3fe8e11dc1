//! Regular expressions for the patterns no hand-written matcher covers (Split and Replace
//! in a tokenizer.json), on the engine the reference uses: Oniguruma natively, fancy-regex in
//! WebAssembly, so a pattern matches here exactly where it matches there.

use crate::error::{Error, Result};

pub struct Regex {
    pattern: String,
    #[cfg(not(target_arch = "wasm32"))]
    inner: onig::Regex,
    #[cfg(target_arch = "wasm32")]
    inner: fancy_regex::Regex,
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Self> {
        #[cfg(not(target_arch = "wasm32"))]
        let inner =
            onig::Regex::new(pattern).map_err(|e| Error::Invalid(format!("regex {pattern:?}: {e}")))?;
        #[cfg(target_arch = "wasm32")]
        let inner = fancy_regex::Regex::new(pattern)
            .map_err(|e| Error::Invalid(format!("regex {pattern:?}: {e}")))?;
        Ok(Regex { pattern: pattern.to_owned(), inner })
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Calls `f(start, end)` with the byte range of every match in `text`, left to right, as
    /// the engine's own iteration finds them (an empty match included).
    pub fn for_each_match(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        #[cfg(not(target_arch = "wasm32"))]
        for (s, e) in self.inner.find_iter(text) {
            f(s, e);
        }
        #[cfg(target_arch = "wasm32")]
        for m in self.inner.find_iter(text).flatten() {
            f(m.start(), m.end());
        }
    }
}

impl Clone for Regex {
    fn clone(&self) -> Self {
        // Compiling again cannot fail: the pattern compiled once already.
        Regex::new(&self.pattern).expect("a pattern that compiled once compiles again")
    }
}

impl std::fmt::Debug for Regex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Regex({:?})", self.pattern)
    }
}

impl PartialEq for Regex {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(p: &str, t: &str) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        Regex::new(p).unwrap().for_each_match(t, |s, e| v.push((s, e)));
        v
    }

    #[test]
    fn finds_matches_with_lookahead_and_unicode_classes() {
        assert_eq!(matches(r"\s+(?!\S)|\s+", "a  b"), vec![(1, 2), (2, 3)]);
        assert_eq!(matches(r"\p{L}+", "añb 東京"), vec![(0, 4), (5, 11)]);
        assert!(Regex::new("(").is_err());
    }
}
