use super::*;
use crate::pre_tokenizers::byte_level::spans::{marks_split_words, span_end, MARK_SAMPLE_BYTES, MAX_SPAN};

fn pieces(p: Pattern, text: &str) -> Vec<&str> {
    p.split(text).into_iter().map(|(a, b)| &text[a..b]).collect()
}

#[test]
fn gpt2_splits() {
    let p = Pattern::Gpt2;
    assert_eq!(pieces(p, "Hello world"), ["Hello", " world"]);
    assert_eq!(pieces(p, "it's I'LL we're"), ["it", "'s", " I", "'", "LL", " we", "'re"]);
    assert_eq!(pieces(p, "a   b"), ["a", "  ", " b"]);
    assert_eq!(pieces(p, "a  \n b"), ["a", "  \n", " b"]);
    assert_eq!(pieces(p, "a\n\nb"), ["a", "\n", "\n", "b"]);
    assert_eq!(pieces(p, "x  "), ["x", "  "]);
    assert_eq!(pieces(p, " 123 !!? é"), [" 123", " !!?", " é"]);
    assert_eq!(pieces(p, "e\u{301}x"), ["e", "\u{301}", "x"]);
    assert_eq!(pieces(p, "\u{3000}\u{3000}x"), ["\u{3000}", "\u{3000}", "x"]);
    assert_eq!(pieces(p, "!'s"), ["!'", "s"]);
}

#[test]
fn cl100k_splits() {
    let p = Pattern::Cl100k;
    assert_eq!(pieces(p, "Hello world"), ["Hello", " world"]);
    assert_eq!(pieces(p, "I'LL it's 'sa"), ["I", "'LL", " it", "'s", " '", "sa"]);
    assert_eq!(pieces(p, "'\u{17F}x"), ["'\u{17F}", "x"]);
    assert_eq!(pieces(p, "12345 6"), ["123", "45", " ", "6"]);
    assert_eq!(pieces(p, "(foo) \tbar"), ["(foo", ")", " ", "\tbar"]);
    assert_eq!(pieces(p, "a \n\n  b"), ["a", " \n\n", " ", " b"]);
    assert_eq!(pieces(p, "a\n  "), ["a", "\n  "]);
    assert_eq!(pieces(p, " !!\n\nx"), [" !!\n\n", "x"]);
    assert_eq!(pieces(p, "\u{301}abc"), ["\u{301}abc"]);
}

#[test]
fn o200k_splits() {
    let p = Pattern::O200k;
    assert_eq!(pieces(p, "Hello World"), ["Hello", " World"]);
    assert_eq!(pieces(p, "HELLOworld"), ["HELLOworld"]);
    assert_eq!(pieces(p, "HTTPServer"), ["HTTPServer"]);
    assert_eq!(pieces(p, "don't DON'T"), ["don't", " DON'T"]);
    assert_eq!(pieces(p, "日本語ABC"), ["日本語", "ABC"]);
    assert_eq!(pieces(p, "1234"), ["123", "4"]);
    assert_eq!(pieces(p, " 12"), [" ", "12"]);
    assert_eq!(pieces(p, "a\n  "), ["a", "\n", "  "]);
    assert_eq!(pieces(p, "x //\n\ny"), ["x", " //\n\n", "y"]);
    assert_eq!(pieces(p, "(foo"), ["(foo"]);
    assert_eq!(pieces(p, "\u{301}"), ["\u{301}"]);
    assert_eq!(pieces(p, "a\u{301}B"), ["a\u{301}", "B"]);
    assert_eq!(pieces(p, "'s"), ["'s"]);
}

/// The ASCII path of o200k (and Tekken) gives the general matcher's match wherever it answers,
/// at every char of random texts that mix ASCII classes (contractions, slashes, newlines, runs
/// of every kind) with non-ASCII chars next to them.
#[test]
fn o200k_ascii_path_matches_general() {
    let alphabet = [
        "a",
        "z",
        "A",
        "Z",
        "q",
        "0",
        "9",
        " ",
        " ",
        "\t",
        "\n",
        "\r",
        "\x0b",
        "'",
        "/",
        "!",
        "(",
        "_",
        "-",
        "\x00",
        "\x7f",
        "'s",
        "'T",
        "'re",
        "'LL",
        "'d",
        "        ",
        "   \n     ",
        "é",
        "É",
        "\u{a0}",
        "\u{2028}",
        "٣",
        "\u{301}",
        "ʰ",
        "中",
        "—",
        "😀",
        "\u{17f}",
    ];
    // Mostly ASCII (the first 28), so that ASCII matches meet non-ASCII chars only now and then.
    let answered =
        fast_path_answers(o200k_ascii::<false>, o200k_general::<false>, &alphabet, 28, 4, 11, 30_000, 16);
    assert!(answered > 100_000, "{answered}");
    let answered =
        fast_path_answers(o200k_ascii::<true>, o200k_general::<true>, &alphabet, 28, 4, 12, 30_000, 16);
    assert!(answered > 100_000, "{answered}");
}

/// Runs `fast` at every ASCII char of `texts` random texts (seed `seed`, under `max_chars`
/// chars from `alphabet`, one in `every` from all of it, the others from its first
/// `common`) and asserts that wherever it answers, the `general` matcher agrees.
/// Returns how many times it answered.
#[allow(clippy::too_many_arguments)]
fn fast_path_answers(
    fast: fn(&[u8], usize) -> Option<usize>,
    general: fn(&[u8], usize) -> usize,
    alphabet: &[&str],
    common: usize,
    every: u64,
    seed: u64,
    texts: usize,
    max_chars: usize,
) -> usize {
    let mut x = seed;
    let mut answered = 0;
    for _ in 0..texts {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let n = (x >> 40) as usize % max_chars;
        let mut text = String::new();
        for k in 0..n {
            let r = x.rotate_left(7 * k as u32) ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let a = if r.is_multiple_of(every) { alphabet.len() } else { common };
            text.push_str(alphabet[(r >> 13) as usize % a]);
        }
        let s = text.as_bytes();
        for i in (0..s.len()).filter(|&i| s[i] < 0x80) {
            if let Some(e) = fast(s, i) {
                answered += 1;
                assert_eq!(e, general(s, i), "{text:?} at {i}");
            }
        }
    }
    answered
}

/// Wherever `o200k_two_byte` answers, it agrees with the general matcher (o200k's and Tekken's): at every ASCII
/// char of random texts of 2-byte letters of every kind (Lu, Ll, Lt, Lm, Lo, marks: in UP
/// only, LOW only, both), next to ASCII and 3-byte letters, 2-byte non-letters, digits,
/// spaces, punctuation and contractions (also with U+017F, which folds to `s`).
#[test]
fn o200k_two_byte_path_matches_general() {
    let alphabet = [
        "α", "ω", "ς", "Α", "Ω", "ж", "я", "Ж", "Я", "ب", "ش", "\u{64E}", "\u{301}", "ʰ", "ǅ", "é", "É", "ß",
        "ª", "µ", "ſ", " ", " ", ",", "(", "'", "'s", "'T", "'re", "a", "Z", "7", "\n", "\r", "٣", "\u{a0}",
        "×", "«", "中", "ア", "😀",
    ];
    // Mostly 2-byte letters and spaces (the first 23), so that long words occur.
    let answered =
        fast_path_answers(o200k_two_byte::<false>, o200k_general::<false>, &alphabet, 23, 3, 23, 100_000, 14);
    assert!(answered > 30_000, "{answered}");
    let answered =
        fast_path_answers(o200k_two_byte::<true>, o200k_general::<true>, &alphabet, 23, 3, 24, 100_000, 14);
    assert!(answered > 30_000, "{answered}");
}

/// `is_cjk_ideograph` holds exactly for U+4E00..=U+9FFF, whose chars are all Lo (in UP
/// and LOW) in the class tables.
#[test]
fn cjk_ideographs_are_lo() {
    crate::pre_tokenizers::byte_level::classes::for_each_char(|cp, s| {
        let want = (0x4E00..=0x9FFF).contains(&cp);
        assert_eq!(is_cjk_ideograph(s, 0), want, "U+{cp:04X}");
        if want {
            assert_eq!(
                at(s, 0).0,
                crate::pre_tokenizers::byte_level::classes::FLAGS
                    [crate::pre_tokenizers::byte_level::classes::LO as usize],
                "U+{cp:04X}"
            );
        }
    });
}

#[test]
fn qwen_splits() {
    let p = Pattern::Qwen;
    assert_eq!(pieces(p, "Hello 2024!"), ["Hello", " ", "2", "0", "2", "4", "!"]);
    assert_eq!(pieces(p, "a\n  "), ["a", "\n", "  "]);
    assert_eq!(pieces(p, "'Sa"), ["'S", "a"]);
}

/// Llama 3 is cl100k but for a whitespace run that ends the text: split after its last
/// newline, as `\s*[\r\n]+` comes before `\s+(?!\S)` (cl100k's `\s++$` keeps it whole).
#[test]
fn llama3_splits() {
    let (p, c) = (Pattern::Llama3, Pattern::Cl100k);
    assert_eq!(pieces(p, "a\n  "), ["a", "\n", "  "]);
    assert_eq!(pieces(c, "a\n  "), ["a", "\n  "]);
    assert_eq!(pieces(p, "x \n\t\n "), ["x", " \n\t\n", " "]);
    assert_eq!(pieces(p, "a\n\n"), ["a", "\n\n"]);
    assert_eq!(pieces(p, "a  "), ["a", "  "]);
    for text in ["I'LL it's 'sa", "12345 6", "(foo) \tbar", "a \n\n  b", " !!\n\nx", "\u{301}abc"] {
        assert_eq!(pieces(p, text), pieces(c, text), "{text:?}");
    }
}

#[test]
fn tiles_every_input() {
    let text = "It's 10:30\r\n\r\n  a  \u{a0}x\u{301}\u{301}  😀😀 ΑΒΓ abc DEF\t\t\n ";
    for p in Pattern::ALL {
        let r = p.split(text);
        assert_eq!(r.first().unwrap().0, 0);
        assert_eq!(r.last().unwrap().1, text.len());
        assert!(r.windows(2).all(|w| w[0].1 == w[1].0));
    }
}

/// The word scans agree with the flags on every byte, at every position in the word.
#[test]
fn ascii_classes_match_flags() {
    for (class, mask) in
        [(AsciiClass::Letter, L), (AsciiClass::Lower, LOW), (AsciiClass::Upper, UP), (AsciiClass::Digit, N)]
    {
        assert!(matches!(swar_class(mask), Some(c) if c as u8 == class as u8));
        for b in 0..=255u8 {
            let want = b < 0x80 && at(&[b], 0).0 & mask != 0;
            for lane in 0..8 {
                // The other lanes hold bytes that could disturb a carry: 0x7F and 0xFF.
                let fill = if lane % 2 == 0 { 0x7F7F_7F7F_7F7F_7F7Fu64 } else { u64::MAX };
                let w = (fill & !(0xFF << (8 * lane))) | (b as u64) << (8 * lane);
                assert_eq!(class_bits(w, class) >> (8 * lane) & 0x80 != 0, want, "byte {b:#x} lane {lane}");
            }
        }
    }
}

/// 20,000 pseudo-random texts of up to `max_chars` chars: `pick(r, x)` chooses each char
/// from `r` (varies per char) and `x` (per text).
fn random_texts(
    seed: u64,
    max_chars: usize,
    pick: impl Fn(u64, u64) -> &'static str,
) -> impl Iterator<Item = String> {
    let mut x = seed;
    (0..20000).map(move |_| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let n = (x >> 40) as usize % max_chars;
        (0..n)
            .map(|k| pick(x.rotate_left(5 * k as u32) ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15), x))
            .collect()
    })
}

/// `run` from every char of `text` (and its end), for every flag, equals a char-by-char run.
fn assert_runs_match(text: &str) {
    let s = text.as_bytes();
    for mask in [L, LOW, UP, N, O, WS] {
        let mut i = 0;
        loop {
            let mut want = i;
            while want < s.len() && at(s, want).0 & mask != 0 {
                want += at(s, want).1;
            }
            assert_eq!(run(s, i, mask), want, "{text:?} from {i} mask {mask:#x}");
            if i == s.len() {
                break;
            }
            i += at(s, i).1;
        }
    }
}

/// `run` equals a char-by-char run, on mixes of ASCII and non-ASCII chars and lengths
/// around the word size.
#[test]
fn run_matches_char_by_char() {
    let alphabet = ["a", "Z", "q", "0", "7", " ", "'", "é", "É", "ß", "中", "\u{301}", "٣", "😀", "ʰ", "\n"];
    // Mostly ASCII letters, so that long ASCII stretches occur.
    let pick = |r: u64, _| {
        if r.is_multiple_of(3) {
            alphabet[(r >> 8) as usize % alphabet.len()]
        } else {
            ["a", "b", "X"][(r >> 8) as usize % 3]
        }
    };
    for text in random_texts(7, 24, pick) {
        assert_runs_match(&text);
    }
}

/// The same on text of mostly 2-byte chars of every kind (letters of each case, marks,
/// digits, spaces, punctuation), the chars `at` reads through its direct 2-byte table.
#[test]
fn run_matches_char_by_char_two_byte() {
    let alphabet = [
        "а", "б", "Ж", "α", "Ω", "ب", "ش", "\u{64E}", "\u{301}", "٣", "ʰ", "\u{a0}", "«", "é", "a", " ",
        "中", "😀", "\n", "7",
    ];
    // Mostly two letters of one script (chosen per text), so that long runs occur.
    let pick = |r: u64, x: u64| {
        if r.is_multiple_of(4) {
            alphabet[(r >> 8) as usize % alphabet.len()]
        } else {
            alphabet[(r >> 8) as usize % 2 + ((x >> 20) as usize % 3) * 3]
        }
    };
    for text in random_texts(11, 40, pick) {
        assert_runs_match(&text);
    }
}

/// `run` on text of mostly 3-byte chars (Han, kana, Hangul, CJK punctuation and spaces,
/// chars of mixed 128-char blocks) mixed with 2-byte, 4-byte and ASCII chars.
#[test]
fn run_matches_char_by_char_three_byte() {
    let alphabet = [
        "中", "語", "가", "あ", "ア", "、", "\u{3000}", "\u{4DC0}", "€", "ｱ", "Ａ", "ａ", "а", "Ж", "😀",
        "a", " ", "7", "\u{301}", "\n",
    ];
    let pick = |r: u64, x: u64| {
        if r.is_multiple_of(4) {
            alphabet[(r >> 8) as usize % alphabet.len()]
        } else {
            alphabet[(r >> 8) as usize % 2 + ((x >> 20) as usize % 6) * 2]
        }
    };
    for text in random_texts(13, 40, pick) {
        assert_runs_match(&text);
    }
}

/// `o200k_lower` as the char-at-a-time loop it was before its bulk step (the oracle).
fn o200k_lower_by_char(s: &[u8], start: usize) -> Option<usize> {
    let mut j = start;
    let mut last_low_end = 0;
    while j < s.len() {
        let (f, len) = at(s, j);
        if f & UP == 0 {
            if f & LOW != 0 {
                let mut e = j + len;
                while e < s.len() && at(s, e).0 & LOW != 0 {
                    e += at(s, e).1;
                }
                return Some(e);
            }
            break;
        }
        j += len;
        if f & LOW != 0 {
            last_low_end = j;
        }
    }
    (last_low_end != 0).then_some(last_low_end)
}

/// `o200k_lower` (with its bulk step over Lo/Lm/marks) equals the char-at-a-time loop from
/// every char of texts that mix Han, Arabic, marks, Lm, cased letters of every script.
#[test]
fn o200k_lower_matches_char_by_char() {
    let alphabet = [
        "中", "語", "ب", "ش", "\u{64E}", "\u{301}", "ʰ", "あ", "а", "Ж", "α", "Ω", "a", "Z", "ǅ", "\u{4DC0}",
        "😀", "𠀀", " ", "7", "'",
    ];
    let pick = |r: u64, x: u64| {
        if r.is_multiple_of(3) {
            alphabet[(r >> 8) as usize % alphabet.len()]
        } else {
            alphabet[(r >> 8) as usize % 2 + ((x >> 20) as usize % 8) * 2]
        }
    };
    for text in random_texts(17, 40, pick) {
        let s = text.as_bytes();
        for i in (0..=s.len()).filter(|&i| text.is_char_boundary(i)) {
            assert_eq!(o200k_lower(s, i), o200k_lower_by_char(s, i), "{text:?} from {i}");
        }
    }
}

/// Chars that make spans and break them: spaces (ASCII, no-break, ideographic), newlines,
/// tabs, Arabic letters and vowel marks, Devanagari, a combining acute, Latin letters of
/// both cases, the apostrophe and the contraction letters, digits, punctuation.
const SPAN_ALPHABET: &[&str] = &[
    " ", " ", " ", " ", "\n", "\t", "\r", "\u{a0}", "\u{3000}", "\u{2009}", "ب", "ل", "ه", "\u{64e}",
    "\u{650}", "\u{652}", "\u{651}", "ٱ", "क", "\u{93f}", "\u{94d}", "\u{301}", "a", "E", "s", "l", "L", "r",
    "e", "t", "'", "'", "ſ", "1", "٣", ",", "/", "!", "(", "中", "，", "😀", "\u{7f}", "\u{1}",
];

/// A span splits into the same pre-tokens wherever it occurs (whatever follows its
/// space), its last pre-token ends at the space, and its bytes are never a single
/// pre-token anywhere (so spans and pieces can share a table under distinct keys).
#[test]
fn spans_split_the_same_anywhere() {
    let tails = ["", "s", "ll", "re", "e", "\n", " ", "  x", "\u{a0}", "x", "'", "\u{64e}ب", "1", "!"];
    let mut spans = 0;
    for p in Pattern::ALL {
        for (t, text) in
            random_texts(0x5EED + p as u64, 40, |r, _| SPAN_ALPHABET[(r >> 7) as usize % SPAN_ALPHABET.len()])
                .take(4000)
                .enumerate()
        {
            let s = text.as_bytes();
            let pieces = p.split(&text);
            for (k, &(a, b)) in pieces.iter().enumerate() {
                let Ok(e) = span_end(s, a) else { continue };
                assert!(e > a && s[e] == b' ' && e - a < MAX_SPAN, "{p:?} {text:?} at {a}");
                // In the text: pre-tokens from a, the last ending at e.
                let inside: Vec<(usize, usize)> =
                    pieces[k..].iter().take_while(|r| r.1 <= e).map(|&(x, y)| (x - a, y - a)).collect();
                assert_eq!(
                    inside.last().map(|r| r.1),
                    Some(e - a),
                    "{p:?} {text:?}: no pre-token ends at the span's end {e}"
                );
                spans += (b < e) as usize;
                let tail = tails[t % tails.len()];
                let alone = format!("{} {tail}", &text[a..e]);
                let there: Vec<(usize, usize)> =
                    p.split(&alone).into_iter().take_while(|r| r.1 <= e - a).collect();
                assert_eq!(there, inside, "{p:?} span {:?} followed by {tail:?}", &text[a..e]);
                // Never one pre-token: not before anything that could follow it.
                if b < e {
                    for tail in tails {
                        let other = format!("{}{tail}", &text[a..e]);
                        assert_ne!(
                            p.next_end(other.as_bytes(), 0),
                            e - a,
                            "{p:?} {:?} is one pre-token before {tail:?}",
                            &text[a..e]
                        );
                    }
                }
            }
        }
    }
    assert!(spans > 10_000, "only {spans} spans of several pre-tokens");
}

#[test]
fn span_end_cases() {
    let ends = |t: &str, a: usize| span_end(t.as_bytes(), a);
    assert_eq!(ends(" ab,c d", 0), Ok(5));
    assert_eq!(ends("ab\nc d", 0), Err(2));
    assert_eq!(ends("\nab c", 0), Err(1));
    assert_eq!(ends("abc", 0), Err(3));
    // The last char before the space is whitespace (U+00A0): no span.
    assert!(ends("ab\u{a0} c", 0).is_err());
    assert_eq!(ends("ab\u{301} c", 0), Ok(4));
    let long = "x".repeat(MAX_SPAN);
    assert_eq!(ends(&format!("{long} y"), 0), Err(MAX_SPAN));
    assert_eq!(ends(&format!("{} y", &long[1..]), 0), Ok(MAX_SPAN - 1));
    assert_eq!(ends(&format!("{} y", &long[2..]), 0), Ok(MAX_SPAN - 2));
    // Every start and length around the 8-byte words, against a byte-by-byte search.
    for n in 0..80 {
        for a in 0..10 {
            let t = format!("{}p{}{} z", "q".repeat(a), "é".repeat(n / 2), "w".repeat(n % 2));
            let s = t.as_bytes();
            let e = a + 1 + s[a + 1..].iter().position(|&c| c < 0x21).unwrap();
            let want = if e - a < MAX_SPAN { Ok(e) } else { Err((a + MAX_SPAN).min(s.len())) };
            assert_eq!(span_end(s, a), want, "{t:?} from {a}");
        }
    }
}

#[test]
fn marks_split_words_of_pointed_and_indic_text() {
    assert!(marks_split_words("بِسْمِ ٱللَّهِ ٱلرَّحْمَـٰنِ ٱلرَّحِيمِ".as_bytes()));
    assert!(marks_split_words("हिन्दी भाषा में लिखा गया".as_bytes()));
    assert!(marks_split_words(format!("{}ภาษาไทย ที่มี สระ", "ascii ".repeat(70)).as_bytes()));
    assert!(!marks_split_words("بسم الله الرحمن الرحيم".as_bytes()));
    assert!(!marks_split_words("Привет, как дела? Ёлка".as_bytes()));
    assert!(!marks_split_words("中文文本，没有空格。".as_bytes()));
    assert!(!marks_split_words(b"plain ASCII text"));
    assert!(!marks_split_words(b""));
    // Beyond the first 512 bytes: not looked at.
    assert!(!marks_split_words(format!("{}بِسْمِ", "a".repeat(MARK_SAMPLE_BYTES)).as_bytes()));
}

#[test]
fn regex_spellings() {
    for p in Pattern::ALL {
        assert_eq!(Pattern::from_regexes(p.regexes()), Some(p));
        assert_eq!(Pattern::parse(p.name()), Some(p));
    }
}

#[test]
fn deepseek_splits() {
    let p = Pattern::DeepSeek;
    assert_eq!(pieces(p, "Hello world"), ["Hello", " world"]);
    assert_eq!(pieces(p, "it's 'sa"), ["it", "'s", " '", "sa"]);
    assert_eq!(pieces(p, "1234567 x"), ["123", "456", "7", " x"]);
    assert_eq!(pieces(p, "a 1"), ["a", " ", "1"]);
    assert_eq!(pieces(p, "中文abc 日本語"), ["中文", "abc", " ", "日本語"]);
    assert_eq!(pieces(p, "naïve e\u{301}x"), ["naïve", " e\u{301}x"]);
    assert_eq!(pieces(p, "..abc (foo) ¡¿x"), ["..", "abc", " (", "foo", ")", " ¡¿", "x"]);
    assert_eq!(pieces(p, "a  \n\n b"), ["a", "  \n\n", " b"]);
    assert_eq!(pieces(p, "\u{200d}\u{200d}ab"), ["\u{200d}", "\u{200d}ab"]);
    // U+9FA6 is Han but outside the second split's range; U+309B (Sk) is inside it.
    assert_eq!(pieces(p, "\u{9fa5}\u{9fa6}"), ["\u{9fa5}", "\u{9fa6}"]);
    assert_eq!(pieces(p, "か\u{309b}き"), ["か", "\u{309b}", "き"]);
}

/// A pattern's regexes as the reference applies them: a Sequence of Splits (behavior
/// Isolated) on Oniguruma, the engine of `tokenizers`, in the spelling that reads there as the
/// matcher (tiktoken's fancy-regex reads DeepSeek's and Tekken's alike: no `$`, no possessive
/// quantifier).
#[cfg(feature = "general")]
pub(crate) fn splits_by_regex(p: Pattern) -> crate::pre_tokenizers::PreTokenizer {
    use crate::pre_tokenizers::split::{Split, SplitDelimiterBehavior, SplitPattern};
    crate::pre_tokenizers::PreTokenizer::Sequence(
        p.oniguruma_regexes()
            .iter()
            .map(|r| {
                let split =
                    Split::new(SplitPattern::Regex(r.to_string()), SplitDelimiterBehavior::Isolated, false);
                crate::pre_tokenizers::PreTokenizer::Split(split.expect("the pattern compiles"))
            })
            .collect(),
    )
}

#[cfg(feature = "general")]
fn assert_splits_as_regex(p: Pattern, reference: &crate::pre_tokenizers::PreTokenizer, text: &str) -> usize {
    let mut want = Vec::new();
    crate::pre_tokenizers::pre_tokenize(Some(reference), text, |q| want.push((q.byte_start, q.byte_end)));
    let got = p.split(text);
    if got != want {
        let k = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
        let show =
            |v: &[(usize, usize)]| v.iter().skip(k).take(3).map(|&(a, b)| &text[a..b]).collect::<Vec<_>>();
        panic!("{p:?} {text:?}: piece {k}: ours {:?}, the regex {:?}", show(&got), show(&want));
    }
    want.len()
}

/// Every code point in `contexts` ("{c}" stands for it), 2048 at a time: pre-tokens counted.
#[cfg(feature = "general")]
fn assert_every_code_point_splits_as_regex(p: Pattern, contexts: &[&str]) -> usize {
    let reference = splits_by_regex(p);
    let mut chars = Vec::new();
    super::super::classes::for_each_char(|cp, _| chars.push(char::from_u32(cp).expect("a scalar value")));
    let mut n = 0;
    for context in contexts {
        for chunk in chars.chunks(2048) {
            let text: String =
                chunk.iter().map(|c| context.replace("{c}", c.encode_utf8(&mut [0; 4]))).collect();
            n += assert_splits_as_regex(p, &reference, &text);
        }
    }
    n
}

/// DeepSeek V4's matcher splits as its three regexes in turn, on every code point next to what
/// the branches ask about: a digit, ASCII punctuation and letters, a newline, a Han char, a
/// kana, a format char, a space.
#[cfg(feature = "general")]
#[test]
fn deepseek_is_its_splits_on_every_code_point() {
    // One context (the Python tests take more, against the reference itself): debug builds
    // take about a minute per million code points here.
    let n = assert_every_code_point_splits_as_regex(Pattern::DeepSeek, &["1{c}'s\r\n中{c}あ\u{200d}{c} "]);
    assert!(n > 3_000_000, "{n}");
}

/// Random texts of the chars where the branches and the three splits meet: every range edge
/// of the second split, numbers of several scripts, marks, controls and format chars,
/// unassigned and private-use code points, every kind of whitespace, ASCII punctuation
/// before letters, and non-ASCII punctuation and symbols.
#[cfg(feature = "general")]
#[test]
fn deepseek_is_its_splits_on_random_texts() {
    const ALPHABET: &[&str] = &[
        "a",
        "Z",
        "é",
        "ß",
        "Ж",
        "ب",
        "\u{64e}",
        "\u{301}",
        "\u{93f}",
        "ʰ",
        "1",
        "٣",
        "½",
        "Ⅻ",
        "𝟙",
        " ",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "\u{85}",
        "\x0b",
        "'",
        "!",
        ".",
        "(",
        "-",
        "_",
        "`",
        "~",
        "$",
        "«",
        "—",
        "€",
        "、",
        "。",
        "\u{309b}",
        "\u{30a0}",
        "\u{30fb}",
        "\u{30fc}",
        "\u{3099}",
        "\u{3040}",
        "\u{3097}",
        "\u{303f}",
        "\u{3100}",
        "\u{4dff}",
        "\u{4e00}",
        "中",
        "\u{9fa5}",
        "\u{9fa6}",
        "\u{9fff}",
        "あ",
        "ア",
        "ｱ",
        "가",
        "😀",
        "\u{200d}",
        "\u{200b}",
        "\u{feff}",
        "\x00",
        "\x7f",
        "\u{e000}",
        "\u{378}",
        "\u{10ffff}",
        "\u{1f3fb}",
        "s",
        "t",
        "ll",
    ];
    let reference = splits_by_regex(Pattern::DeepSeek);
    let mut n = 0;
    for seed in [1, 2, 3] {
        for text in random_texts(seed, 30, |r, _| ALPHABET[(r >> 7) as usize % ALPHABET.len()]) {
            n += assert_splits_as_regex(Pattern::DeepSeek, &reference, &text);
        }
    }
    assert!(n > 300_000, "{n}");
}

/// Tekken's matcher (o200k's with `TEKKEN`) splits as its regex: every code point next to
/// letters of each case, a digit, an apostrophe, spaces, newlines, a slash and an Lm; and random texts
/// of cased letters, marks, Lm/Lo, digits, contractions (which Tekken does not keep), slashes
/// and every kind of whitespace.
#[cfg(feature = "general")]
#[test]
fn tekken_is_its_regex() {
    let n = assert_every_code_point_splits_as_regex(Pattern::Tekken, &["a{c}B1'S {c}\r\n  {c}/ʰ"]);
    assert!(n > 3_000_000, "{n}");
    const ALPHABET: &[&str] = &[
        "a", "z", "A", "Z", "é", "É", "ǅ", "ʰ", "中", "ب", "\u{64e}", "\u{301}", "1", "23", "٣", "½", "'",
        "'s", "'LL", "'re", "/", "//", "!", "(", " ", " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}",
        "😀", "\x00", "\u{200d}", "ſ", "HTTP", "Server",
    ];
    let reference = splits_by_regex(Pattern::Tekken);
    let mut n = 0;
    for text in random_texts(5, 30, |r, _| ALPHABET[(r >> 7) as usize % ALPHABET.len()]) {
        n += assert_splits_as_regex(Pattern::Tekken, &reference, &text);
    }
    assert!(n > 100_000, "{n}");
}

/// `is_han_kana` is the second split's class on every code point.
#[test]
fn han_kana_is_the_second_class() {
    super::super::classes::for_each_char(|cp, s| {
        let want = (0x3040..=0x30FF).contains(&cp) || (0x4E00..=0x9FA5).contains(&cp);
        assert_eq!(deepseek::is_han_kana(s, 0), want, "U+{cp:04X}");
    });
}

/// Every pattern's Oniguruma spelling (what the general pipeline runs for a tiktoken or tekken
/// file) splits as its matcher, on random texts of what the branches ask about: contractions in
/// both cases, runs of digits, whitespace runs that end the text with and without newlines,
/// letters of each case, marks, punctuation with slashes and newlines after it.
#[cfg(feature = "general")]
#[test]
fn oniguruma_spellings_split_as_the_matchers() {
    const ALPHABET: &[&str] = &[
        "a", "Z", "é", "Ж", "中", "ʰ", "\u{301}", "1", "2345", "٣", " ", " ", "  ", "\t", "\n", "\r\n",
        "\n ", " \n", "\u{a0}", "\u{3000}", "'", "'s", "'S", "'ll", "'Ve", "ſ", "!", "/", "//", "(", ".",
        "😀", "\x00",
    ];
    for p in Pattern::ALL {
        let reference = splits_by_regex(p);
        let mut n = 0;
        for text in random_texts(21 + p as u64, 24, |r, _| ALPHABET[(r >> 7) as usize % ALPHABET.len()]) {
            n += assert_splits_as_regex(p, &reference, &text);
        }
        assert!(n > 50_000, "{p:?} {n}");
    }
}
