//! A regex that matches one char of a set, found without the regex engine: a bracket of
//! literal chars, `\uXXXX` escapes and ranges (possibly negated), or `\p{Zs}` / `\P{Zs}`.
//! Each match of such a regex is one char of the set, so scanning the text char by char
//! finds what the engine's leftmost search finds, without a search per match.

/// The space separators (General_Category Zs), as Oniguruma's tables hold them: unchanged
/// since Unicode 6.3 moved U+180E out.
const ZS: [(u32, u32); 7] = [
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
];

/// A set of chars: sorted, disjoint, non-adjacent ranges, and the ASCII ones as a bitmap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CharClass {
    ranges: Vec<(u32, u32)>,
    ascii: u128,
    /// The lead bytes of the set's non-ASCII chars, as a bitmap: a char of another lead is
    /// skipped undecoded (most chars of a text, for sets such as zero-width chars or `\p{Zs}`).
    leads: [u64; 4],
    /// Those lead bytes when there are one to four (the last repeated to fill) and the set
    /// has no ASCII char: text is then searched for them, not walked char by char.
    #[cfg(not(target_arch = "wasm32"))]
    few_leads: Option<[u8; 4]>,
}

impl CharClass {
    fn from_ranges(mut ranges: Vec<(u32, u32)>, negated: bool) -> Self {
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        if negated {
            let mut out = Vec::with_capacity(merged.len() + 1);
            let mut next = 0u32;
            for &(lo, hi) in &merged {
                if lo > next {
                    out.push((next, lo - 1));
                }
                next = hi + 1;
            }
            if next <= char::MAX as u32 {
                out.push((next, char::MAX as u32));
            }
            merged = out;
        }
        let mut ascii = 0u128;
        let mut leads = [0u64; 4];
        // UTF-8 keeps code point order, lead bytes included: the chars of a range have the
        // lead bytes from its first char's to its last's.
        let lead = |c: u32| char::from_u32(c).map_or(0xED, |c| c.encode_utf8(&mut [0; 4]).as_bytes()[0]);
        for &(lo, hi) in &merged {
            for c in lo..=hi.min(0x7F) {
                ascii |= 1 << c;
            }
            if hi >= 0x80 {
                for b in lead(lo.max(0x80))..=lead(hi) {
                    leads[b as usize >> 6] |= 1 << (b & 63);
                }
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        let few_leads = {
            let list: Vec<u8> =
                (0x80..=0xFF).filter(|&b: &u8| leads[b as usize >> 6] >> (b & 63) & 1 != 0).collect();
            match list.last() {
                Some(&last) if ascii == 0 && list.len() <= 4 => {
                    Some([0, 1, 2, 3].map(|k| list.get(k).copied().unwrap_or(last)))
                }
                _ => None,
            }
        };
        CharClass {
            ranges: merged,
            ascii,
            leads,
            #[cfg(not(target_arch = "wasm32"))]
            few_leads,
        }
    }

    /// The class of `pattern` (Oniguruma's Ruby syntax), when it is one this module reads
    /// fully; `None` for anything else.
    pub fn parse(pattern: &str) -> Option<Self> {
        match pattern {
            "\\p{Zs}" => return Some(Self::from_ranges(ZS.to_vec(), false)),
            "\\P{Zs}" | "\\p{^Zs}" => return Some(Self::from_ranges(ZS.to_vec(), true)),
            _ => {}
        }
        let inner = pattern.strip_prefix('[')?.strip_suffix(']')?;
        let (negated, inner) = match inner.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, inner),
        };
        let mut chars = inner.chars().peekable();
        let mut ranges = Vec::new();
        while chars.peek().is_some() {
            let lo = atom(&mut chars)?;
            let hi = if chars.peek() == Some(&'-') {
                chars.next();
                atom(&mut chars)?
            } else {
                lo
            };
            if lo > hi {
                return None;
            }
            ranges.push((lo, hi));
        }
        if ranges.is_empty() {
            return None;
        }
        Some(Self::from_ranges(ranges, negated))
    }

    #[inline]
    pub fn contains(&self, c: char) -> bool {
        let c = c as u32;
        if c < 0x80 {
            return self.ascii & (1 << c) != 0;
        }
        let i = self.ranges.partition_point(|&(_, hi)| hi < c);
        self.ranges.get(i).is_some_and(|&(lo, _)| lo <= c)
    }

    /// Whether the set has an ASCII char.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn holds_ascii(&self) -> bool {
        self.ascii != 0
    }

    /// The set without `c`.
    pub fn without(&self, c: char) -> Self {
        let c = c as u32;
        let mut ranges = Vec::with_capacity(self.ranges.len() + 1);
        for &(lo, hi) in &self.ranges {
            if c < lo || c > hi {
                ranges.push((lo, hi));
                continue;
            }
            if lo < c {
                ranges.push((lo, c - 1));
            }
            if c < hi {
                ranges.push((c + 1, hi));
            }
        }
        Self::from_ranges(ranges, false)
    }

    /// Calls `f(start, end)` for each char of `text` in the set, in order.
    #[inline]
    pub fn for_each_match(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        let bytes = text.as_bytes();
        // A vector search for the lead bytes (natively): three at once, and a fourth (as
        // `\p{Zs}` without the space has) in a search of its own, the two merged in order.
        #[cfg(not(target_arch = "wasm32"))]
        if let Some([x, y, z, w]) = self.few_leads {
            let mut three = memchr::memchr3_iter(x, y, z, bytes).peekable();
            let mut fourth = (w != z).then(|| memchr::memchr_iter(w, bytes)).into_iter().flatten().peekable();
            loop {
                let start = match (three.peek(), fourth.peek()) {
                    (Some(a), Some(b)) if b < a => fourth.next(),
                    (Some(_), _) => three.next(),
                    (None, _) => fourth.next(),
                };
                let Some(start) = start else { return };
                let c = text[start..].chars().next().expect("a lead byte starts a char");
                if self.contains(c) {
                    f(start, start + c.len_utf8());
                }
            }
        }
        let skip_ascii = self.ascii == 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if skip_ascii {
                    // Eight bytes at a time while they are all ASCII.
                    while let Some(chunk) = bytes.get(i..i + 8) {
                        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
                        if word & 0x8080_8080_8080_8080 != 0 {
                            break;
                        }
                        i += 8;
                    }
                    while i < bytes.len() && bytes[i] < 0x80 {
                        i += 1;
                    }
                    continue;
                }
                if self.ascii & (1 << b) != 0 {
                    f(i, i + 1);
                }
                i += 1;
                continue;
            }
            if self.leads[b as usize >> 6] >> (b & 63) & 1 == 0 {
                i += crate::unicode::char_len(b);
                continue;
            }
            let c = text[i..].chars().next().expect("a char starts here");
            let end = i + c.len_utf8();
            if self.contains(c) {
                f(i, end);
            }
            i = end;
        }
    }
}

/// One char of a bracket: a `\uXXXX` escape (not a surrogate), an escaped ASCII punctuation
/// char, an ASCII letter, digit or space, or a non-ASCII char that is not a control or
/// whitespace char. Anything else (other escapes, nested brackets, `&&`, a bare `-` or `^`)
/// is left to the regex engine.
fn atom(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<u32> {
    let c = chars.next()?;
    if c == '\\' {
        let e = chars.next()?;
        if e == 'u' {
            let hex: String = (0..4).map_while(|_| chars.next()).collect();
            if hex.len() != 4 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let v = u32::from_str_radix(&hex, 16).ok()?;
            return char::from_u32(v).map(|c| c as u32);
        }
        return e.is_ascii_punctuation().then_some(e as u32);
    }
    let literal =
        c == ' ' || c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_control() && !c.is_whitespace());
    literal.then_some(c as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=char::MAX as u32).filter_map(char::from_u32)
    }

    #[test]
    fn sets_are_their_definitions_over_every_char() {
        let zs = |c: char| ZS.iter().any(|&(lo, hi)| (lo..=hi).contains(&(c as u32)));
        let soft =
            |c: char| matches!(c, '\u{AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}');
        let cases: [(&str, &dyn Fn(char) -> bool); 6] = [
            ("\\p{Zs}", &zs),
            ("\\P{Zs}", &|c| !zs(c)),
            ("[\\u00AD\\u200B\\u200C\\u200D\\u2060\\uFEFF]", &soft),
            ("[^\\u00AD\\u200B-\\u200D\\u2060\\uFEFF]", &|c| !soft(c)),
            (
                "[a-cx\\-é\\u3000-\\u3002]",
                &|c| matches!(c, 'a'..='c' | 'x' | '-' | 'é' | '\u{3000}'..='\u{3002}'),
            ),
            ("[ \\u0000]", &|c| c == ' ' || c == '\0'),
        ];
        for (pattern, want) in cases {
            let class = CharClass::parse(pattern).unwrap_or_else(|| panic!("{pattern}"));
            for c in all_chars() {
                assert_eq!(class.contains(c), want(c), "{pattern} {c:?}");
            }
            let without = class.without('a').without('\u{200B}');
            for c in all_chars() {
                assert_eq!(without.contains(c), want(c) && c != 'a' && c != '\u{200B}', "{pattern} {c:?}");
            }
        }
        // Zs as Rust's Unicode tables have it: the whitespace chars that are not controls or
        // line and paragraph separators.
        for c in all_chars() {
            let other_space = c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
            assert_eq!(zs(c), c.is_whitespace() && !other_space, "{c:?}");
        }
    }

    #[test]
    fn other_patterns_stay_with_the_engine() {
        for p in [
            "[]",
            "[^]",
            "[a-]",
            "[-a]",
            "[a&&b]",
            "[[:alpha:]]",
            "[\\w]",
            "[\\d]",
            "[\\uD800]",
            "[\\u12]",
            "[z-a]",
            "a",
            "[a]+",
            "\\p{L}",
            "[\t]",
            "[.]",
            "\\p{Zs}+",
            "(?i)[a]",
        ] {
            assert_eq!(CharClass::parse(p), None, "{p}");
        }
    }

    #[test]
    fn matches_are_the_chars_the_set_contains() {
        // Sets whose chars have leads of every UTF-8 length, and texts of chars at their edges.
        let patterns = [
            "[\\u00AD\\u200B\\u200C\\u200D\\u2060\\uFEFF]",
            "\\p{Zs}",
            "\\P{Zs}",
            "[^\\u0080-\\u07FF]",
            "[\\u07FF-\\u0800]",
            "[a-z\\uFFFF]",
            "[^a]",
        ];
        let chars = [
            'a',
            ' ',
            '\u{7F}',
            '\u{80}',
            '\u{AD}',
            '\u{7FF}',
            '\u{800}',
            '\u{E01}',
            '\u{200B}',
            '\u{3000}',
            '\u{FEFF}',
            '\u{FFFF}',
            '\u{10000}',
            '\u{1F600}',
            '\u{10FFFF}',
            'é',
            '日',
        ];
        let mut rng = crate::testing::Rng(0xC1A5_5E70_2026_1206);
        for pattern in patterns {
            let class = CharClass::parse(pattern).unwrap_or_else(|| panic!("{pattern}"));
            for _ in 0..2_000 {
                let text: String = (0..rng.below(12)).map(|_| rng.pick(&chars)).collect();
                let mut got = Vec::new();
                class.for_each_match(&text, |s, e| got.push((s, e)));
                let want: Vec<_> = text
                    .char_indices()
                    .filter(|&(_, c)| class.contains(c))
                    .map(|(i, c)| (i, i + c.len_utf8()))
                    .collect();
                assert_eq!(got, want, "{pattern} {text:?}");
            }
        }
    }

    #[test]
    fn skipped_runs_hide_no_match() {
        // Long runs of chars of one script (skipped or searched through), broken at every
        // offset by chars of the set, ASCII, and chars of other leads.
        let patterns = [
            "[\\u00AD\\u200B\\u200C\\u200D\\u2060\\uFEFF]",
            "\\p{Zs}",
            "[a-z\\u0E3F]",
            "[\\u0E01]",
            "[\\u0627-\\u0628]",
            // \p{Zs} without the space (as a Replace by " " takes it): four lead bytes.
            "[\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]",
        ];
        let runs = [
            ['\u{E01}', '\u{E2D}', '\u{E48}'],
            ['\u{905}', '\u{94D}', '\u{E01}'],
            ['é', 'ß', 'é'],
            ['\u{627}', '\u{644}', '\u{6CC}'],
            ['한', '국', '어'],
        ];
        let breaks = [
            '\u{AD}',
            '\u{200B}',
            '\u{FEFF}',
            ' ',
            'a',
            '\u{3000}',
            '\u{E3F}',
            '\u{430}',
            '\u{1F600}',
            '日',
            '\u{A0}',
            '\u{1680}',
            '\u{2007}',
        ];
        let mut rng = crate::testing::Rng(0x5EED_1EAD_2026_1207);
        for pattern in patterns {
            let class = CharClass::parse(pattern).unwrap_or_else(|| panic!("{pattern}"));
            for _ in 0..3_000 {
                let run = rng.pick(&runs);
                let text: String = (0..rng.below(40))
                    .map(|_| if rng.below(12) == 0 { rng.pick(&breaks) } else { rng.pick(&run) })
                    .collect();
                let mut got = Vec::new();
                class.for_each_match(&text, |s, e| got.push((s, e)));
                let want: Vec<_> = text
                    .char_indices()
                    .filter(|&(_, c)| class.contains(c))
                    .map(|(i, c)| (i, i + c.len_utf8()))
                    .collect();
                assert_eq!(got, want, "{pattern} {text:?}");
            }
        }
    }

    #[test]
    fn matches_are_the_chars_of_the_set() {
        let class = CharClass::parse("[\\u00AD\\u200Bb]").unwrap();
        let text = "a\u{AD}bc\u{200B}\u{200B}déf ghijklmnopq\u{AD}";
        let mut got = Vec::new();
        class.for_each_match(text, |s, e| got.push(&text[s..e]));
        assert_eq!(got, ["\u{AD}", "b", "\u{200B}", "\u{200B}", "\u{AD}"]);
        let class = CharClass::parse("[\\u00AD\\u200B]").unwrap();
        let mut got = Vec::new();
        class.for_each_match(text, |s, e| got.push(&text[s..e]));
        assert_eq!(got, ["\u{AD}", "\u{200B}", "\u{200B}", "\u{AD}"]);
    }
}
