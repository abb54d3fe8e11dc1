//! tokenprism's `normalize_items` against Hugging Face's `unicode-normalization-alignments`
//! 0.1.12 (what `tokenizers` uses): same chars and same `(char, change)` tags, for all four forms.
//!
//! The reference carries Unicode 9.0 data and ours is 15.0, so inputs are limited to chars
//! assigned by Unicode 9.0 (DerivedAge.txt). Unicode's stability policy keeps their
//! decompositions, combining classes and compositions unchanged since, so on these inputs any
//! difference is a difference in the algorithm or its tags.
//!
//! Run: `cargo test --release --manifest-path crate/tools/forms-alignment-check/Cargo.toml -- --nocapture`

use forms_alignment_check::forms::{normalize_items, Form};
use unicode_normalization_alignments::char::canonical_combining_class;
use unicode_normalization_alignments::UnicodeNormalization;

const DERIVED_AGE: &str = "/usr/share/unicode/DerivedAge.txt";

fn reference(text: &str, form: Form) -> Vec<(char, isize)> {
    match form {
        Form::Nfc => text.nfc().collect(),
        Form::Nfd => text.nfd().collect(),
        Form::Nfkc => text.nfkc().collect(),
        Form::Nfkd => text.nfkd().collect(),
    }
}

fn compare(text: &str, form: Form) {
    let ours = normalize_items(text, form);
    let theirs = reference(text, form);
    if ours != theirs {
        let hex: Vec<String> = text.chars().map(|c| format!("{:04X}", c as u32)).collect();
        panic!("{form} of [{}]:\n ours:   {ours:?}\n theirs: {theirs:?}", hex.join(" "));
    }
}

/// Chars assigned in Unicode 9.0 or earlier, excluding surrogates.
fn chars_up_to_unicode_9() -> Vec<char> {
    let data = std::fs::read_to_string(DERIVED_AGE).unwrap_or_else(|e| {
        panic!("cannot read {DERIVED_AGE} ({e}): install the Debian package unicode-data")
    });
    let mut out = Vec::new();
    for line in data.lines() {
        let line = line.split('#').next().unwrap().trim();
        let Some((range, age)) = line.split_once(';') else {
            continue;
        };
        let (major, minor) = age.trim().split_once('.').expect("age like 9.0");
        let age: (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
        if age > (9, 0) {
            continue;
        }
        let range = range.trim();
        let (lo, hi) = range.split_once("..").unwrap_or((range, range));
        let (lo, hi) = (u32::from_str_radix(lo, 16).unwrap(), u32::from_str_radix(hi, 16).unwrap());
        out.extend((lo..=hi).filter_map(char::from_u32));
    }
    out.sort_unstable();
    out
}

/// Deterministic xorshift, so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn forms_tags_match_unicode_normalization_alignments() {
    let assigned = chars_up_to_unicode_9();
    assert!(assigned.len() > 100_000, "DerivedAge.txt gave only {} chars", assigned.len());

    // Every char alone.
    for &c in &assigned {
        for form in Form::ALL {
            compare(c.encode_utf8(&mut [0; 4]), form);
        }
    }

    // Chars that take part in normalization: marks, anything that decomposes, the last char
    // of any canonical decomposition (a potential second half of a composite), Hangul; plus a
    // few plain letters for them to act on.
    let mut pool: Vec<char> = Vec::new();
    let mut marks: Vec<char> = Vec::new();
    // First and last chars of canonical decompositions: the halves composition puts together.
    let mut halves: Vec<char> = Vec::new();
    for &c in &assigned {
        let s = c.to_string();
        let nfkd: String = s.nfkd().map(|(c, _)| c).collect();
        if nfkd != s || canonical_combining_class(c) != 0 {
            pool.push(c);
        }
        if canonical_combining_class(c) != 0 {
            marks.push(c);
        }
        let nfd: Vec<char> = s.nfd().map(|(c, _)| c).collect();
        if nfd.len() > 1 {
            halves.push(nfd[0]);
            halves.push(*nfd.last().unwrap());
        }
    }
    halves.extend((0x1100..=0x1112).chain(0x1161..=0x1175).chain(0x11A7..=0x11C2).filter_map(char::from_u32));
    halves
        .extend("aAeEoOuUsSlLRnN \u{3b1}\u{3c9}\u{5d0}\u{627}\u{915}\u{b47}\u{4e00}\u{ac00}\u{ac01}".chars());
    halves.sort_unstable();
    halves.dedup();
    pool.extend(&halves);

    // Every pair of halves: each possible composition, in both orders.
    let mut pairs = 0;
    let mut text = String::new();
    for &a in &halves {
        for &b in &halves {
            text.clear();
            text.push(a);
            text.push(b);
            for form in Form::ALL {
                compare(&text, form);
            }
            pairs += 1;
        }
    }

    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let strings = 400_000;
    for i in 0..strings {
        text.clear();
        // Half the strings are dense in compositions (halves and marks), half are broad.
        let dense = i % 2 == 0;
        for _ in 0..1 + rng.below(16) {
            let c = match (dense, rng.below(5)) {
                (true, 0 | 1) => marks[rng.below(marks.len())],
                (true, _) => halves[rng.below(halves.len())],
                (false, 0) => assigned[rng.below(assigned.len())],
                (false, _) => pool[rng.below(pool.len())],
            };
            text.push(c);
        }
        for form in Form::ALL {
            compare(&text, form);
        }
    }
    println!(
        "identical tags, 4 forms each: {} single chars, {pairs} pairs of composition halves, \
         {strings} random strings (pool of {} chars)",
        assigned.len(),
        pool.len()
    );
}
