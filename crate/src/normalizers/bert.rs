//! Hugging Face's BertNormalizer, step by step: clean → CJK spacing → NFD → strip accents →
//! lowercase, with the reference's semantics and Unicode versions (see [`crate::unicode`]).

use super::aligned::AlignedText;
use crate::unicode;
use serde::{Deserialize, Serialize};

/// The four switches of the reference's BertNormalizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BertNormalizerConfig {
    pub clean_text: bool,
    pub handle_chinese_chars: bool,
    /// `None` follows `lowercase`, as in the reference.
    pub strip_accents: Option<bool>,
    pub lowercase: bool,
}

impl Default for BertNormalizerConfig {
    fn default() -> Self {
        BertNormalizerConfig {
            clean_text: true,
            handle_chinese_chars: true,
            strip_accents: None,
            lowercase: true,
        }
    }
}

impl BertNormalizerConfig {
    pub fn strips_accents(&self) -> bool {
        self.strip_accents.unwrap_or(self.lowercase)
    }
}

/// Names of the normalizer's stages, in order; the trace uses them.
pub const STAGES: [&str; 5] = ["clean", "cjk", "nfd", "strip_accents", "lowercase"];

/// Step 1: delete NUL, U+FFFD and controls; turn every whitespace char into ' '.
/// (Each step clears `ok` where the reference fails; see [`AlignedText::transform_reporting`].)
pub fn clean_text(t: &AlignedText, ok: &mut bool) -> AlignedText {
    t.filter_reporting(|c| !(c == '\0' || c == '\u{FFFD}' || unicode::is_bert_control(c)), ok)
        .map_reporting(|c| if unicode::is_bert_whitespace(c) { ' ' } else { c }, ok)
}

/// Step 2: a space before and after every CJK ideograph; both spaces belong to the ideograph.
pub fn cjk_spacing(t: &AlignedText, ok: &mut bool) -> AlignedText {
    let mut items = Vec::with_capacity(t.char_len());
    for c in t.text.chars() {
        if unicode::is_chinese_char(c) {
            items.extend([(' ', 0), (c, 1), (' ', 1)]);
        } else {
            items.push((c, 0));
        }
    }
    t.transform_reporting(items, 0, ok)
}

/// Step 3: canonical decomposition (Unicode 9.0) with canonical reordering of combining marks.
///
/// Marks are sorted by combining class within each run of non-starters, stably, as the
/// reference's decomposer does; each output char carries the reference's `change` tag
/// (0 for the first char of a decomposition, 1 for the rest) through the sort, so that the
/// positional alignment matches the reference's even in reordered runs.
pub fn nfd(t: &AlignedText, ok: &mut bool) -> AlignedText {
    let mut items: Vec<(char, isize)> = Vec::with_capacity(t.char_len() + 8);
    let mut classes: Vec<u8> = Vec::with_capacity(t.char_len() + 8);
    let mut pending = 0; // start of the run of non-starters not yet sorted
    for c in t.text.chars() {
        let mut first = true;
        unicode::decompose_canonical(c, |d| {
            let k = unicode::canonical_combining_class(d);
            if k == 0 {
                sort_run(&mut items[pending..], &mut classes[pending..]);
                pending = items.len() + 1;
            }
            items.push((d, if first { 0 } else { 1 }));
            classes.push(k);
            first = false;
        });
    }
    let n = items.len();
    sort_run(&mut items[pending.min(n)..], &mut classes[pending.min(n)..]);
    t.transform_reporting(items, 0, ok)
}

/// Stable sort of a run of chars by combining class (runs are short: insertion sort).
fn sort_run(items: &mut [(char, isize)], classes: &mut [u8]) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && classes[j - 1] > classes[j] {
            items.swap(j - 1, j);
            classes.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Step 4: drop nonspacing marks (General_Category Mn, Unicode 8.0).
pub fn strip_marks(t: &AlignedText, ok: &mut bool) -> AlignedText {
    t.filter_reporting(|c| !unicode::is_mark_nonspacing(c), ok)
}

/// Step 5: Rust's full, context-free `char::to_lowercase`, char by char.
pub fn lowercase(t: &AlignedText, ok: &mut bool) -> AlignedText {
    let mut items = Vec::with_capacity(t.char_len());
    for c in t.text.chars() {
        for (i, l) in c.to_lowercase().enumerate() {
            items.push((l, (i > 0) as isize));
        }
    }
    t.transform_reporting(items, 0, ok)
}

/// Runs the enabled steps, calling `observe(stage_name, output)` after each stage
/// (a disabled stage reports its input unchanged, so a trace always has all five).
pub fn normalize_staged(
    cfg: &BertNormalizerConfig,
    input: AlignedText,
    ok: &mut bool,
    mut observe: impl FnMut(&'static str, &AlignedText),
) -> AlignedText {
    let mut t = input;
    if cfg.clean_text {
        t = clean_text(&t, ok);
    }
    observe(STAGES[0], &t);
    if cfg.handle_chinese_chars {
        t = cjk_spacing(&t, ok);
    }
    observe(STAGES[1], &t);
    let strip = cfg.strips_accents();
    if strip {
        t = nfd(&t, ok);
    }
    observe(STAGES[2], &t);
    if strip {
        t = strip_marks(&t, ok);
    }
    observe(STAGES[3], &t);
    if cfg.lowercase {
        t = lowercase(&t, ok);
    }
    observe(STAGES[4], &t);
    t
}

/// The normalized text and its alignment, without a trace.
pub fn normalize(cfg: &BertNormalizerConfig, text: &str) -> AlignedText {
    // Text aligned to itself cannot make the reference fail.
    normalize_staged(cfg, AlignedText::new(text), &mut true, |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_from_reference() {
        let n = normalize(&BertNormalizerConfig::default(), "Héllo, Wörld! 東京");
        assert_eq!(n.text, "hello, world!  東  京 ");
    }

    #[test]
    fn deletes_zero_width_and_soft_hyphen() {
        let n = normalize(&BertNormalizerConfig::default(), "caf\u{e9}\u{200b}\u{ad}x");
        assert_eq!(n.text, "cafex");
        assert_eq!(n.orig, vec![0, 1, 2, 3, 6]);
    }

    #[test]
    fn dotted_capital_i() {
        // With accent stripping, NFD splits off the dot and it is stripped.
        assert_eq!(normalize(&BertNormalizerConfig::default(), "\u{130}").text, "i");
        // Without it, lowercasing (which runs last) produces i + U+0307, both from U+0130.
        let cfg = BertNormalizerConfig { strip_accents: Some(false), ..Default::default() };
        let n = normalize(&cfg, "\u{130}");
        assert_eq!(n.text, "i\u{307}");
        assert_eq!(n.orig, vec![0, 0]);
    }

    #[test]
    fn reordering_is_positional() {
        // U+0F73 decomposes into two marks of class 129/130 that sort before U+0301 (230).
        let t = nfd(&AlignedText::new("x\u{301}\u{f73}"), &mut true);
        assert_eq!(t.text, "x\u{f71}\u{f72}\u{301}");
        assert_eq!(t.orig, vec![0, 1, 1, 2]);
    }
}
