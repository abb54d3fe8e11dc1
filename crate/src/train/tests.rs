use std::sync::atomic::AtomicBool;

use super::*;
use crate::testing::Rng;

fn chapter_corpus() -> String {
    let mut w = vec!["низ"; 5];
    w.extend(["низко"; 3]);
    w.extend(["близко"; 2]);
    w.extend(["низина"; 2]);
    w.join(" ")
}

fn strings(t: &Trainer) -> Vec<(String, String, u64)> {
    t.merges().iter().map(|m| (t.symbol_text(m.left), t.symbol_text(m.right), m.count)).collect()
}

fn run(texts: &[&str], mode: Mode, vocab_size: usize) -> Trainer {
    let mut t = Trainer::new(texts, &Config { mode, vocab_size, min_frequency: 0 }).unwrap();
    assert!(t.train(|_| Control::Continue, None));
    t
}

/// The chapter's `train_bpe` (section 1.3), transcribed literally: recount every pair after
/// each merge, in an insertion-ordered list, and take the first maximum.
fn chapter_reference(corpus: &str, vocab_size: usize) -> Vec<(String, String, u64)> {
    let words: Vec<&str> = corpus.split(is_py_space).filter(|w| !w.is_empty()).collect();
    reference(&words, |w| w.chars().map(String::from).chain(["_".to_string()]).collect(), vocab_size, 0)
}

/// The chapter's loop on any words and base units; `base` extra symbols start in the vocab.
fn reference(
    all: &[&str],
    units: impl Fn(&str) -> Vec<String>,
    vocab_size: usize,
    base: usize,
) -> Vec<(String, String, u64)> {
    let mut words: Vec<(String, u64)> = Vec::new();
    for &w in all {
        match words.iter_mut().find(|x| x.0 == w) {
            Some(x) => x.1 += 1,
            None => words.push((w.to_string(), 1)),
        }
    }
    let mut splits: Vec<Vec<String>> = words.iter().map(|(w, _)| units(w)).collect();
    let mut vocab: std::collections::HashSet<String> = splits.iter().flatten().cloned().collect();
    let extra = (0..base).map(|i| format!("\u{0}base{i}")).collect::<Vec<_>>();
    vocab.extend(extra);
    let mut merges = Vec::new();
    while vocab.len() < vocab_size {
        let mut freq: Vec<((String, String), u64)> = Vec::new();
        for (parts, (_, f)) in splits.iter().zip(&words) {
            for i in 0..parts.len().saturating_sub(1) {
                let p = (parts[i].clone(), parts[i + 1].clone());
                match freq.iter_mut().find(|x| x.0 == p) {
                    Some(x) => x.1 += f,
                    None => freq.push((p, *f)),
                }
            }
        }
        let Some(max) = freq.iter().map(|x| x.1).max() else { break };
        let ((a, b), c) = freq.into_iter().find(|x| x.1 == max).unwrap();
        for parts in &mut splits {
            let (mut i, mut out) = (0, Vec::new());
            while i < parts.len() {
                if i + 1 < parts.len() && parts[i] == a && parts[i + 1] == b {
                    out.push(format!("{a}{b}"));
                    i += 2;
                } else {
                    out.push(parts[i].clone());
                    i += 1;
                }
            }
            *parts = out;
        }
        vocab.insert(format!("{a}{b}"));
        merges.push((a, b, c));
    }
    merges
}

#[test]
fn train_chapter_example() {
    let corpus = chapter_corpus();
    let t = run(&[&corpus], Mode::Chapter, 20);
    assert_eq!(t.initial_len(), 9);
    let want: Vec<(String, String, u64)> = [
        ("и", "з", 12),
        ("н", "из", 10),
        ("низ", "_", 5),
        ("к", "о", 5),
        ("ко", "_", 5),
        ("низ", "ко_", 3),
        ("б", "л", 2),
        ("бл", "из", 2),
        ("близ", "ко_", 2),
        ("низ", "и", 2),
        ("низи", "н", 2),
    ]
    .iter()
    .map(|&(a, b, c)| (a.to_string(), b.to_string(), c))
    .collect();
    assert_eq!(strings(&t), want);
    assert_eq!(chapter_reference(&corpus, 20), want);
    let tok =
        |w: &str| t.tokenize_bytes(w).into_iter().map(|b| String::from_utf8(b).unwrap()).collect::<Vec<_>>();
    assert_eq!(tok("низко"), ["низко_"]);
    assert_eq!(tok("низменность"), ["низ", "м", "е", "н", "н", "о", "с", "т", "ь", "_"]);
    assert_eq!(tok("низина"), ["низин", "а", "_"]);
}

#[test]
fn train_random_corpora_match_the_chapter() {
    let mut rng = Rng(0x2545F4914F6CDD1D);
    for round in 0..1000 {
        let alphabet: Vec<char> = "ab_cдe".chars().take(2 + rng.below(5)).collect();
        let mut corpus = String::new();
        for _ in 0..rng.below(30) {
            for _ in 0..1 + rng.below(7) {
                corpus.push(alphabet[rng.below(alphabet.len())]);
            }
            corpus.push(if rng.below(5) == 0 { '\n' } else { ' ' });
        }
        let vocab_size = rng.below(40);
        let t = run(&[&corpus], Mode::Chapter, vocab_size);
        assert_eq!(
            strings(&t),
            chapter_reference(&corpus, vocab_size),
            "round {round}: {corpus:?} {vocab_size}"
        );
    }
}

#[test]
fn train_progress_and_cancel() {
    let corpus = chapter_corpus();
    let mut t =
        Trainer::new(&[&corpus], &Config { mode: Mode::Chapter, vocab_size: 20, min_frequency: 0 }).unwrap();
    let mut seen = Vec::new();
    let done = t.train(
        |p| {
            seen.push((p.done, String::from_utf8(p.left.to_vec()).unwrap(), p.count));
            if p.done == 3 {
                Control::Stop
            } else {
                Control::Continue
            }
        },
        None,
    );
    assert!(!done);
    assert_eq!(seen, [(1, "и".to_string(), 12), (2, "н".to_string(), 10), (3, "низ".to_string(), 5)]);
    assert_eq!(t.merges().len(), 3);
    let flag = AtomicBool::new(true);
    assert!(!t.train(|_| Control::Continue, Some(&flag)));
    assert_eq!(t.merges().len(), 3);
    assert!(t.train(|_| Control::Continue, None));
    assert_eq!(t.merges().len(), 11);
}

#[test]
fn train_min_frequency_and_bad_sizes() {
    let corpus = chapter_corpus();
    let mut t =
        Trainer::new(&[&corpus], &Config { mode: Mode::Chapter, vocab_size: 20, min_frequency: 3 }).unwrap();
    t.train(|_| Control::Continue, None);
    assert_eq!(t.merges().len(), 6);
    assert!(
        Trainer::new(&["x"], &Config { mode: Mode::ByteLevel, vocab_size: 255, min_frequency: 0 }).is_err()
    );
    let empty = run(&[""], Mode::Chapter, 100);
    assert_eq!(empty.merges().len(), 0);
    assert_eq!(empty.tokenize_bytes("ab"), [b"a".to_vec(), b"b".to_vec(), b"_".to_vec()]);
}

#[test]
fn train_byte_level_export_encodes_its_own_text() {
    let text = "hello world, hello there! The world is wide; hello hello 123 1234  \n\tспасибо мир мир";
    let t = run(&[text], Mode::ByteLevel, 300);
    assert!(t.merges().len() >= 10);
    let tok = export::tokenizer(&t).unwrap();
    assert_eq!(tok.decode(&tok.encode_ordinary(text)).unwrap(), text);
    // " hello" was learned as one token
    let hello = tok.token_to_id(b" hello").expect("' hello' learned");
    assert!(tok.encode_ordinary(" hello").contains(&hello));
}

#[test]
fn train_byte_level_random_corpora_match_the_reference() {
    let mut rng = Rng(0x9E3779B97F4A7C15);
    for round in 0..300 {
        let pieces = ["a", "b", "ab", " ", "  ", "\n", "1", "é", "'s", "!"];
        let mut text = String::new();
        for _ in 0..rng.below(40) {
            text.push_str(pieces[rng.below(pieces.len())]);
        }
        let vocab_size = 256 + rng.below(30);
        let t = run(&[&text], Mode::ByteLevel, vocab_size);
        let words: Vec<&str> = Pattern::Gpt2.split(&text).into_iter().map(|(a, b)| &text[a..b]).collect();
        // bytes as one-char strings of their GPT-2 spelling, so that concatenation is exact
        let spell = |w: &str| {
            w.bytes()
                .map(|b| crate::pre_tokenizers::byte_level::alphabet::byte_to_char(b).to_string())
                .collect::<Vec<_>>()
        };
        let base = 256 - words.iter().flat_map(|w| w.bytes()).collect::<std::collections::HashSet<_>>().len();
        let want = reference(&words, spell, vocab_size, base);
        let got: Vec<(String, String, u64)> = t
            .merges()
            .iter()
            .map(|m| {
                let s = |id: u32| {
                    crate::pre_tokenizers::byte_level::alphabet::byte_level_encode(&t.symbols()[id as usize])
                };
                (s(m.left), s(m.right), m.count)
            })
            .collect();
        assert_eq!(got, want, "round {round}: {text:?} {vocab_size}");
    }
}
