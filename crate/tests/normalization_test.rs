//! Conformance of `unicode::forms` to Unicode's NormalizationTest.txt: every line, all four
//! forms, all five columns, and Part 1's rule that every code point it does not list is left
//! unchanged by every form.
//!
//! The file comes from the Debian package `unicode-data` (/usr/share/unicode/
//! NormalizationTest.txt.bz2, decompressed with `bzip2 -dc`); set NORMALIZATION_TEST to use
//! another copy (`.bz2` or plain text). A missing file fails the test: it never skips.

use std::collections::HashSet;
use std::process::Command;

use tokenprism::unicode::forms::{is_normalized, normalize, normalize_items, Form, UNICODE_VERSION};

const DEFAULT_PATH: &str = "/usr/share/unicode/NormalizationTest.txt.bz2";

fn read_test_file() -> String {
    let path = std::env::var("NORMALIZATION_TEST").unwrap_or_else(|_| DEFAULT_PATH.to_owned());
    let bytes = if path.ends_with(".bz2") {
        let output = Command::new("bzip2").arg("-dc").arg(&path).output().unwrap_or_else(|e| {
            panic!("cannot run `bzip2 -dc {path}` ({e}): install bzip2 (apt-get install bzip2)")
        });
        assert!(
            output.status.success(),
            "`bzip2 -dc {path}` failed: {}\nNormalizationTest.txt comes from the Debian package \
             unicode-data (apt-get install unicode-data), or set NORMALIZATION_TEST to a copy",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    } else {
        std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
    };
    String::from_utf8(bytes).expect("NormalizationTest.txt is UTF-8")
}

fn parse_column(field: &str) -> String {
    field
        .split_whitespace()
        .map(|hex| {
            let cp = u32::from_str_radix(hex, 16).expect("hex code point");
            char::from_u32(cp).expect("a scalar value")
        })
        .collect()
}

/// Checks one normalization and the variants that must agree with it; returns 1 per check.
fn check(input: &str, form: Form, expected: &str, line: &str) -> usize {
    let got = normalize(input, form);
    assert_eq!(got, expected, "{form} of {input:?} (line: {line})");
    assert_eq!(is_normalized(input, form), input == expected, "is_normalized, {form}, {line}");
    let items = normalize_items(input, form);
    let chars: String = items.iter().map(|&(c, _)| c).collect();
    assert_eq!(chars, expected, "normalize_items, {form} of {input:?} (line: {line})");
    // Each item consumes 1 - change input chars; together they consume the whole input.
    let consumed: isize = items.iter().map(|&(_, change)| 1 - change).sum();
    assert_eq!(consumed, input.chars().count() as isize, "alignment tags, {form}, {line}");
    1
}

#[test]
fn forms_pass_every_line_of_normalization_test() {
    let file = read_test_file();
    let (major, minor, patch) = UNICODE_VERSION;
    let version = format!("NormalizationTest-{major}.{minor}.{patch}.txt");
    assert!(
        file.lines().next().is_some_and(|first| first.contains(&version)),
        "the test file is not {version}: {:?}",
        file.lines().next()
    );

    let mut part = "";
    let mut part1_chars: HashSet<char> = HashSet::new();
    let mut lines = 0;
    let mut checks = 0;
    for line in file.lines() {
        let data = line.split('#').next().unwrap().trim();
        if data.is_empty() {
            continue;
        }
        if let Some(name) = data.strip_prefix('@') {
            part = name.split_whitespace().next().unwrap_or("");
            continue;
        }
        let fields: Vec<&str> = data.split(';').collect();
        assert!(fields.len() >= 5, "malformed line: {line}");
        let c: Vec<String> = fields[..5].iter().map(|f| parse_column(f)).collect();
        let [c1, c2, c3, c4, c5] = [&c[0], &c[1], &c[2], &c[3], &c[4]];
        if part == "Part1" {
            let mut chars = c1.chars();
            let only = chars.next().expect("Part 1 lines list one char");
            assert!(chars.next().is_none(), "Part 1 line with several chars: {line}");
            part1_chars.insert(only);
        }
        for x in [c1, c2, c3] {
            checks += check(x, Form::Nfc, c2, line);
            checks += check(x, Form::Nfd, c3, line);
        }
        for x in [c4, c5] {
            checks += check(x, Form::Nfc, c4, line);
            checks += check(x, Form::Nfd, c5, line);
        }
        for x in [c1, c2, c3, c4, c5] {
            checks += check(x, Form::Nfkc, c4, line);
            checks += check(x, Form::Nfkd, c5, line);
        }
        lines += 1;
    }
    assert!(lines > 18_000, "only {lines} test lines: a truncated file?");
    assert!(part1_chars.len() > 10_000, "Part 1 lists only {} chars", part1_chars.len());

    // Part 1's rule for the code points it does not list: every form leaves them unchanged.
    // Checked for every scalar value (unassigned ones too, which must not change either).
    let mut invariant = 0;
    let mut buf = [0u8; 4];
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        if part1_chars.contains(&c) {
            continue;
        }
        let x: &str = c.encode_utf8(&mut buf);
        for form in Form::ALL {
            assert!(is_normalized(x, form), "{form} changes U+{:04X}, not in Part 1", c as u32);
        }
        invariant += 1;
    }
    println!(
        "NormalizationTest {major}.{minor}.{patch}: {lines} lines, {checks} normalizations checked \
         (all 5 columns, 4 forms); {invariant} code points outside Part 1 checked invariant"
    );
}
