use super::*;

fn model(pieces: &[(&str, f64)], unk: Option<usize>, byte_fallback: bool) -> Unigram {
    Unigram::new(pieces.iter().map(|&(p, s)| (p.to_owned(), s)).collect(), unk, byte_fallback).unwrap()
}

fn tokens(m: &Unigram, word: &str) -> Vec<(String, u32, usize, usize)> {
    let mut out = Vec::new();
    m.tokenize(word, &mut out).unwrap();
    out.iter().map(|t| (m.token_value(word, t).to_owned(), t.id, t.start as usize, t.end as usize)).collect()
}

fn texts(m: &Unigram, word: &str) -> Vec<String> {
    tokens(m, word).into_iter().map(|t| t.0).collect()
}

#[test]
fn best_split_and_fused_unknowns() {
    let m = model(
        &[
            ("<unk>", 0.0),
            ("a", 0.0),
            ("b", 0.0),
            ("c", 0.0),
            ("d", 0.0),
            ("cd", 1.0),
            ("ab", 2.0),
            ("abc", 5.0),
            ("abcd", 10.0),
        ],
        Some(0),
        false,
    );
    assert_eq!(texts(&m, "abcdacdxx"), ["abcd", "a", "cd", "xx"]);
    assert_eq!(tokens(&m, "xé")[0], ("xé".to_owned(), 0, 0, 3));
    assert!(texts(&m, "").is_empty());
}

#[test]
fn byte_fallback_spans_the_fused_text() {
    let m = model(
        &[("<unk>", 0.0), ("a", -1.0), ("<0x78>", -5.0), ("<0xC3>", -5.0), ("<0xA9>", -5.0)],
        Some(0),
        true,
    );
    assert_eq!(
        tokens(&m, "axéa"),
        [
            ("a".to_owned(), 1, 0, 1),
            ("<0x78>".to_owned(), 2, 1, 4),
            ("<0xC3>".to_owned(), 3, 1, 4),
            ("<0xA9>".to_owned(), 4, 1, 4),
            ("a".to_owned(), 1, 4, 5),
        ]
    );
    // A byte without its piece: the whole fused text is one unk token.
    assert_eq!(tokens(&m, "xy"), [("xy".to_owned(), 0, 0, 2)]);
    // Byte pieces are matched as ordinary pieces when the text spells them.
    assert_eq!(texts(&m, "<0x78>"), ["<0x78>"]);
}

#[test]
fn an_unk_id_that_is_a_byte_piece() {
    // "a" is unknown; its fused text is not a piece, so byte fallback gives <0x61>, which is
    // also the unk id: the token's value is the byte piece.
    let m = model(&[("aa", -1.0), ("<0x61>", -1.0)], Some(1), true);
    assert_eq!(tokens(&m, "a"), [("<0x61>".to_owned(), 1, 0, 1)]);
    // "x" has no byte piece: the fused "xa" is an unk token, whose value is its text although
    // its id is a byte piece's (tokenizers 0.23.3: [(0, 'xa', (0, 2)), (1, 'b', (2, 3))]).
    let m = model(&[("<0x61>", -1.0), ("b", -1.0)], Some(0), true);
    assert_eq!(tokens(&m, "xab"), [("xa".to_owned(), 0, 0, 2), ("b".to_owned(), 1, 2, 3)]);
}

#[test]
fn the_unk_piece_itself_fuses_with_unknown_chars() {
    let m = model(&[("<unk>", 0.0), ("a", -1.0)], Some(0), false);
    assert_eq!(tokens(&m, "x<unk>a"), [("x<unk>".to_owned(), 0, 0, 6), ("a".to_owned(), 1, 6, 7)]);
}

#[test]
fn fused_text_that_is_a_piece_takes_its_id() {
    // Positive scores make two unknowns (2 * (5 - 10) = -10) beat the piece "xy" (-20 + ...):
    // the fused text is then looked up and found.
    let m = model(&[("<unk>", 5.0), ("xy", -20.0), ("z", 30.0)], Some(0), false);
    assert_eq!(tokens(&m, "xy"), [("xy".to_owned(), 1, 0, 2)]);
}

#[test]
fn repeated_pieces_take_their_last_id_and_score() {
    let m = model(&[("<unk>", 0.0), ("ab", -100.0), ("a", -1.0), ("b", -1.0), ("ab", -1.0)], Some(0), false);
    assert_eq!(tokens(&m, "ab"), [("ab".to_owned(), 4, 0, 2)]);
    assert_eq!(m.token_to_id("ab"), Some(4));
    assert_eq!(m.id_to_token(1), Some("ab"));
}

#[test]
fn ties_keep_the_longest_last_token() {
    // "a"+"bc" and "ab"+"c" both score -2. The end is reached from start 1 ("bc") before
    // start 2 ("c"), and an equal score does not replace it.
    let m = model(&[("<unk>", 0.0), ("a", -1.0), ("ab", -1.0), ("bc", -1.0), ("c", -1.0)], Some(0), false);
    assert_eq!(texts(&m, "abc"), ["a", "bc"]);
}

#[test]
fn vocabulary_errors() {
    assert!(Unigram::new(vec![], Some(0), false).is_err());
    assert!(Unigram::new(vec![("a".into(), 0.0)], Some(1), false).is_err());
    let empty = Unigram::new(vec![], None, false).unwrap();
    assert!(texts(&empty, "").is_empty());
    assert!(empty.tokenize("a", &mut Vec::new()).is_err());
}

#[test]
fn missing_unk_is_an_error_only_where_an_unknown_node_wins() {
    let m = model(&[("a", -1.0), ("ab", -1.0)], None, false);
    // "b" alone is unknown, but "ab" already reaches the end with a better score.
    assert_eq!(texts(&m, "ab"), ["ab"]);
    assert!(m.tokenize("b", &mut Vec::new()).is_err());
    assert!(m.tokenize("abb", &mut Vec::new()).is_err());
}

#[test]
fn empty_piece_never_matches() {
    let m = model(&[("<unk>", 0.0), ("", 5.0), ("a", -1.0)], Some(0), false);
    assert_eq!(tokens(&m, "a"), [("a".to_owned(), 2, 0, 1)]);
}

/// Every split of `word` into pieces, or single unknown chars where no one-char piece
/// starts, with its score as the model scores it.
fn all_splits(pieces: &[(&str, f64)], unk_score: f64, word: &str) -> Vec<(f64, Vec<(usize, usize)>)> {
    fn go(
        pieces: &[(&str, f64)],
        unk_score: f64,
        word: &str,
        at: usize,
        score: f64,
        path: &mut Vec<(usize, usize)>,
        all: &mut Vec<(f64, Vec<(usize, usize)>)>,
    ) {
        if at == word.len() {
            all.push((score, path.clone()));
            return;
        }
        let char_end = at + word[at..].chars().next().unwrap().len_utf8();
        let mut one_char = false;
        let mut seen = std::collections::HashSet::new();
        // The last of repeated pieces counts.
        for &(p, s) in pieces.iter().rev() {
            if p.is_empty() || !word[at..].starts_with(p) || !seen.insert(p) {
                continue;
            }
            one_char |= at + p.len() == char_end;
            path.push((at, at + p.len()));
            go(pieces, unk_score, word, at + p.len(), score + s, path, all);
            path.pop();
        }
        if !one_char {
            path.push((at, char_end));
            go(pieces, unk_score, word, char_end, score + unk_score, path, all);
            path.pop();
        }
    }
    let mut all = Vec::new();
    go(pieces, unk_score, word, 0, 0.0, &mut Vec::new(), &mut all);
    all
}

#[test]
fn viterbi_matches_an_exhaustive_search() {
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let alphabet = ["a", "b", "c", "é", "日", "\u{1F600}"];
    let mut compared = 0;
    for round in 0..300 {
        let mut owned: Vec<(String, f64)> = vec![("<unk>".into(), 0.0)];
        for _ in 0..(3 + next() % 12) {
            let len = 1 + next() % 3;
            let p: String = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            // Distinct random scores: sums tie with probability ~0.
            let s = -((next() % 1_000_000) as f64) / 97_531.0 - 0.01;
            owned.push((p, s));
        }
        let pieces: Vec<(&str, f64)> = owned.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        let m = model(&pieces, Some(0), false);
        let min = pieces.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        for _ in 0..20 {
            let len = next() % 8;
            let word: String =
                (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            let mut got = Vec::new();
            m.tokenize(&word, &mut got).unwrap();
            let mut raw = Vec::new();
            if !word.is_empty() {
                m.best_path::<f64, false>(&word, 0.0, &mut Vec::new(), &mut Vec::new(), &mut raw).unwrap();
            }
            let raw: Vec<(usize, usize)> = raw.iter().map(|t| (t.start as usize, t.end as usize)).collect();
            if !word.is_empty() {
                let mut all = all_splits(&pieces, min - 10.0, &word);
                all.sort_by(|a, b| b.0.total_cmp(&a.0));
                // Equal sums (the same pieces in another order) are broken by the lattice's
                // order, which the ties test covers; compare clear winners only.
                if all.len() == 1 || all[0].0 - all[1].0 > 1e-9 {
                    assert_eq!(raw, all[0].1, "round {round}, word {word:?}, pieces {pieces:?}");
                    compared += 1;
                }
            }
            // Fusing covers the same text with no two adjacent unk tokens.
            assert_eq!(got.first().map_or(0, |t| t.start), 0);
            assert_eq!(got.last().map_or(0, |t| t.end as usize), word.len());
            assert!(got.windows(2).all(|w| w[0].end == w[1].start && !(w[0].id == 0 && w[1].id == 0)));
        }
    }
    assert!(compared > 4000, "only {compared} words had a clear winner");
}

#[test]
fn loader_reads_the_reference_fields_and_names_bad_ones() {
    use crate::loaders::tokenizer_json::parse_unigram;
    use serde_json::json;
    let m = parse_unigram(
        &json!({"type": "Unigram", "vocab": [["<unk>", 0], ["a", -1.5]], "unk_id": 0}),
        "model",
    )
    .unwrap();
    assert_eq!(m.vocab(), [("<unk>".to_owned(), 0.0), ("a".to_owned(), -1.5)]);
    assert_eq!((m.unk_id(), m.byte_fallback()), (Some(0), false));
    let m = parse_unigram(&json!({"vocab": [], "unk_id": null, "byte_fallback": true, "other": 1}), "model")
        .unwrap();
    assert_eq!((m.unk_id(), m.byte_fallback(), m.vocab_size()), (None, true, 0));
    for (bad, says) in [
        (json!({"unk_id": 0}), "model.vocab is missing"),
        (json!({"vocab": [["a"]]}), "model.vocab[0]"),
        (json!({"vocab": [["a", 0.0, 1]]}), "model.vocab[0]"),
        (json!({"vocab": [[1, 0.0]]}), "model.vocab[0]"),
        (json!({"vocab": [["a", 0.0]], "unk_id": -1}), "model.unk_id"),
        (json!({"vocab": [["a", 0.0]], "unk_id": 1}), "model.unk_id"),
        (json!({"vocab": [], "unk_id": 0}), "model.vocab is empty"),
        (json!({"vocab": [], "byte_fallback": null}), "model.byte_fallback"),
        (json!({"type": "BPE", "vocab": []}), "model.type"),
    ] {
        let e = parse_unigram(&bad, "model").unwrap_err().to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn cached_words_give_the_same_tokens() {
    let m = model(&[("<unk>", 0.0), ("a", -1.0), ("ab", -1.5), ("<0x78>", -5.0)], Some(0), true);
    let other = model(&[("<unk>", 0.0), ("a", -1.0), ("b", -0.1)], Some(0), false);
    for _ in 0..3 {
        assert_eq!(texts(&m, "abxab"), ["ab", "<0x78>", "ab"]);
        // Another model on the same thread must not see the first one's words.
        assert_eq!(texts(&other, "abxab"), ["a", "b", "x", "a", "b"]);
    }
    let long = "ab".repeat(200);
    assert_eq!(texts(&m, &long).len(), 200);
    assert_eq!(texts(&m, &long).len(), 200);
}

#[test]
fn lattice_lists_every_match_and_marks_the_searchs_path() {
    let m = model(
        &[("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5), ("é", -2.0), ("bé", -4.0)],
        Some(0),
        false,
    );
    let l = m.lattice("abéx", 100).unwrap();
    let nodes: Vec<_> =
        l.nodes.iter().map(|n| (n.start, n.end, n.piece.as_str(), n.unknown, n.best)).collect();
    assert_eq!(
        nodes,
        [
            (0, 1, "a", false, false),
            (0, 2, "ab", false, true),
            (1, 2, "b", false, false),
            (1, 3, "bé", false, false),
            (2, 3, "é", false, true),
            (3, 4, "x", true, true),
        ]
    );
    // The lowest score is -4: an unknown char scores 10 below it.
    assert_eq!(l.nodes[5].score, -14.0);
    assert_eq!(l.score, -1.5 - 2.0 - 14.0);
    let tokens: Vec<_> = l.tokens.iter().map(|t| (t.start, t.end, t.id, t.token.as_str())).collect();
    assert_eq!(tokens, [(0, 2, 3, "ab"), (2, 3, 4, "é"), (3, 4, 0, "x")]);
    assert_eq!((l.chars, l.shown_chars, l.truncated), (4, 4, false));
}

#[test]
fn lattice_is_cut_between_starts_and_keeps_the_path_there() {
    let m = model(&[("<unk>", 0.0), ("a", -1.0), ("aa", -1.5)], Some(0), false);
    let l = m.lattice("aaaaa", 5).unwrap();
    // Two nodes per start but the last: the first two starts fit in 5.
    assert_eq!((l.chars, l.shown_chars, l.truncated, l.nodes.len()), (5, 2, true, 4));
    // The tokens that start in the listed chars, of the whole piece's path.
    let mut all = Vec::new();
    m.tokenize("aaaaa", &mut all).unwrap();
    let starts: Vec<_> = all.iter().map(|t| t.start).filter(|&s| s < 2).collect();
    assert_eq!(l.tokens.iter().map(|t| t.start).collect::<Vec<_>>(), starts);
    assert_eq!(m.lattice("aaaaa", 100).unwrap().tokens.len(), all.len());
}

#[test]
fn lattice_tokens_spell_unknowns_as_bytes() {
    let m = model(&[("<unk>", 0.0), ("a", -1.0), ("<0x78>", -5.0), ("<0x79>", -5.0)], Some(0), true);
    let l = m.lattice("xya", 100).unwrap();
    let best: Vec<_> = l.nodes.iter().filter(|n| n.best).map(|n| (n.piece.as_str(), n.unknown)).collect();
    assert_eq!(best, [("x", true), ("y", true), ("a", false)]);
    let tokens: Vec<_> = l.tokens.iter().map(|t| (t.start, t.end, t.token.as_str())).collect();
    assert_eq!(tokens, [(0, 2, "<0x78>"), (0, 2, "<0x79>"), (2, 3, "a")]);
}

/// The lattice search as plainly written: every piece `pieces_at` finds, then the unknown
/// node, scored and compared one by one (the reference for `best_path`'s own walk).
fn plain_best_path<S: Score>(m: &Unigram, word: &str) -> Result<Vec<(u32, u32, u32)>> {
    let bytes = word.as_bytes();
    let n = bytes.len();
    let mut best = vec![Best { score: S::default(), start: NONE, id: 0 }; n + 1];
    let mut start = 0;
    while start < n {
        let mut here = best[start].score;
        if S::SENTENCEPIECE && here.past_reset() {
            let shift = here;
            for (i, b) in best[start..=(start + m.reach).min(n)].iter_mut().enumerate() {
                if i == 0 || b.start != NONE {
                    b.score = b.score.sub(shift);
                }
            }
            here = S::default();
        }
        let char_end = start + char_len(bytes[start]);
        let one_char = m.pieces_at(bytes, start, |end, id| {
            let score = S::scores(m)[id as usize].add(here);
            if best[end].start == NONE || score > best[end].score {
                best[end] = Best { score, start: start as u32, id };
            }
        });
        if !one_char {
            let score = S::unknown(m).add(here);
            if best[char_end].start == NONE || score > best[char_end].score {
                let id = m.unk_id.ok_or_else(missing_unk)?;
                best[char_end] = Best { score, start: start as u32, id };
            }
        }
        start = char_end;
    }
    let mut path = Vec::new();
    let mut end = n;
    while end > 0 {
        path.push((best[end].id, best[end].start, end as u32));
        end = best[end].start as usize;
    }
    path.reverse();
    Ok(path)
}

#[test]
fn best_path_matches_the_plain_search() {
    use crate::testing::Rng;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // One-byte to four-byte chars, so walks stop inside and at the end of every char length;
    // chars that share a lead byte and differ in the next (é ß, 日 本), that share the low
    // bits of their lead bytes and a second byte (é U+3A40: a char's first step looks its
    // first two bytes up together), and Thai (its chars all start E0 B8 or E0 B9).
    let chars: Vec<String> =
        "ab é\u{3A40}ßɐ日本คมุ่\u{1F600}\u{1D538}\u{10FFFF}".chars().map(String::from).collect();
    let alphabet: Vec<&str> = chars.iter().map(String::as_str).collect();
    let path =
        |r: Result<Vec<Token>>| r.map(|t| t.iter().map(|t| (t.id, t.start, t.end)).collect::<Vec<_>>());
    let mut words = 0;
    for round in 0..400 {
        let mut vocab: Vec<(String, f64)> = Vec::new();
        for _ in 0..(1 + rng.below(60)) {
            let len = 1 + rng.below(4);
            let p: String = (0..len).map(|_| rng.pick(&alphabet)).collect();
            // Few distinct scores: ties; in some rounds, scores that pass SentencePiece's
            // reset bound within a few pieces.
            let scale = if round % 4 == 0 { 30_000.0 } else { 1.0 };
            vocab.push((p, -(rng.below(5) as f64) * scale - 0.5));
        }
        let unk = (round % 3 != 0).then(|| rng.below(vocab.len()));
        let m = Unigram::new(vocab.clone(), unk, false).unwrap();
        let kinds = vocab.iter().map(|(p, s)| (p.clone(), *s as f32, PieceKind::Normal));
        let mut spm_pieces: Vec<(String, f32, PieceKind)> = kinds.collect();
        spm_pieces.push(("<unk>".into(), 0.0, PieceKind::Unknown));
        let spm = Unigram::sentencepiece(spm_pieces.clone(), spm_pieces.len() as u32 - 1, false).unwrap();
        for _ in 0..40 {
            let longest = if rng.below(10) == 0 { 60 } else { 10 };
            let len = rng.below(longest);
            let word: String = (0..len).map(|_| rng.pick(&alphabet)).collect();
            if word.is_empty() {
                continue;
            }
            let mut got = Vec::new();
            let r = m
                .best_path::<f64, false>(&word, 0.0, &mut Vec::new(), &mut Vec::new(), &mut got)
                .map(|_| got);
            let want = plain_best_path::<f64>(&m, &word);
            assert_eq!(path(r).ok(), want.ok(), "{word:?} {vocab:?} unk {unk:?}");
            let mut got = Vec::new();
            spm.best_path::<f32, false>(&word, 0.0, &mut Vec::new(), &mut Vec::new(), &mut got).unwrap();
            let want = plain_best_path::<f32>(&spm, &word).unwrap();
            assert_eq!(path(Ok(got)).unwrap(), want, "{word:?} {spm_pieces:?}");
            words += 1;
        }
    }
    assert!(words > 10_000);
}

/// Twelve words of one or two "▁" and 1-8 chars, for texts drawn from a small pool, so that
/// most words repeat and come from the word cache.
fn word_pool(rng: &mut crate::testing::Rng) -> Vec<String> {
    (0..12)
        .map(|_| {
            let len = 1 + rng.below(8);
            let mut w: String = "▁".repeat(1 + usize::from(rng.below(8) == 0));
            w.extend((0..len).map(|_| rng.pick(&["a", "b", "é", "日", "\u{1F600}", "x"])));
            w
        })
        .collect()
}

#[test]
fn spm_words_follow_the_whole_texts_lattice() {
    use crate::testing::Rng;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let alphabet = ["a", "b", "é", "日", "\u{1F600}"];
    let mut texts = 0;
    for round in 0..300 {
        let mut pieces: Vec<(String, f32, PieceKind)> = Vec::new();
        for _ in 0..(2 + rng.below(40)) {
            let len = 1 + rng.below(4);
            let mut p: String = if rng.below(2) == 0 { "▁".into() } else { String::new() };
            p.extend((0..len).map(|_| rng.pick(&alphabet)));
            // Rounds of few distinct scores (ties), of scores a float32 ulp apart at the reset
            // bound (near ties), and of scores that reach the reset bound within a few words.
            let score = match round % 3 {
                0 => -((1 + rng.below(4)) as f32) * 0.5,
                1 => -1.5 - rng.below(3) as f32 * 0.004,
                _ => -((1 + rng.below(4)) as f32) * 700.0 - rng.below(3) as f32 * 0.004,
            };
            pieces.push((p, score, PieceKind::Normal));
        }
        pieces.push(("▁".into(), -2.0, PieceKind::Normal));
        if round % 5 == 0 {
            pieces.push(("▁a".into(), 0.0, PieceKind::UserDefined));
        }
        pieces.push(("<unk>".into(), 0.0, PieceKind::Unknown));
        let unk = pieces.len() as u32 - 1;
        let words = Unigram::sentencepiece(pieces.clone(), unk, round % 2 == 0).unwrap();
        assert!(words.word_scores.is_some());
        let mut whole = words.clone();
        whole.word_scores = None;
        let pool = word_pool(&mut rng);
        for _ in 0..6 {
            let n = if rng.below(4) == 0 { 3_000 } else { 1 + rng.below(30) };
            let mut text: String = (0..n).map(|_| pool[rng.below(pool.len())].as_str()).collect();
            if rng.below(3) == 0 {
                text = text.trim_start_matches('▁').to_owned();
            }
            let path = |m: &Unigram| {
                let mut out = Vec::new();
                m.tokenize(&text, &mut out).unwrap();
                out.iter().map(|t| (t.id, t.start, t.end)).collect::<Vec<_>>()
            };
            assert_eq!(path(&words), path(&whole), "round {round}: {text:?} {pieces:?}");
            texts += 1;
        }
    }
    assert!(texts >= 1_800);
}

#[test]
fn words_follow_the_whole_texts_float64_lattice() {
    use crate::testing::Rng;
    let mut rng = Rng(0x9E6C_63D0_676A_9A99);
    let alphabet = ["a", "b", "é", "日", "\u{1F600}"];
    let mut texts = 0;
    for round in 0..300 {
        // The unk piece, sometimes one the text holds (its id then marks no unknown char).
        let unk_piece = if round % 4 == 0 { "▁a" } else { "<unk>" };
        let mut vocab: Vec<(String, f64)> = vec![(unk_piece.into(), -1.0)];
        for _ in 0..(2 + rng.below(40)) {
            let len = 1 + rng.below(4);
            let mut p: String = if rng.below(2) == 0 { "▁".into() } else { String::new() };
            p.extend((0..len).map(|_| rng.pick(&alphabet)));
            // Rounds of exact ties, of tenths (whose sums rounding decides: 0.1 + 0.2 against
            // 0.3), of large scores 1e-9 apart (below an ulp of a long text's sums), and of
            // scores so large that a long text's sums pass 2^52 (ulps of 1 and more).
            let score = match round % 4 {
                0 => -((1 + rng.below(4)) as f64) * 0.5,
                1 => -((1 + rng.below(6)) as f64) * 0.1,
                2 => -((1 + rng.below(4)) as f64) * 700.0 - rng.below(3) as f64 * 1e-9,
                _ => -((1 + rng.below(4)) as f64) * 1e13 - rng.below(3) as f64,
            };
            vocab.push((p, score));
        }
        // Without a "▁" piece it is an unknown char, fused with one that ends the word before.
        if round % 7 != 0 {
            vocab.push(("▁".into(), -2.0));
        }
        // With byte fallback, the bytes of "x" and "▁", the unknown chars, spell fused runs.
        if round % 2 == 0 {
            vocab.extend(["<0x78>", "<0xE2>", "<0x96>", "<0x81>"].map(|b| (b.to_owned(), -1.0)));
        }
        let words = Unigram::new(vocab.clone(), Some(0), round % 2 == 0).unwrap();
        assert!(words.word_scores.is_some());
        let mut whole = words.clone();
        whole.word_scores = None;
        let pool = word_pool(&mut rng);
        for _ in 0..6 {
            let n = if rng.below(4) == 0 { 3_000 } else { 70 + rng.below(60) };
            let mut text: String = (0..n).map(|_| pool[rng.below(pool.len())].as_str()).collect();
            if rng.below(3) == 0 {
                text = text.trim_start_matches('▁').to_owned();
            }
            assert!(text.len() >= MAX_WORD);
            let path = |m: &Unigram| {
                let mut out = Vec::new();
                m.tokenize(&text, &mut out).unwrap();
                out.iter().map(|t| (t.id, t.start, t.end)).collect::<Vec<_>>()
            };
            let want = path(&whole);
            assert_eq!(path(&words), want, "round {round}: {text:?} {vocab:?}");
            let mut ids = Vec::new();
            words.tokenize_ids(&text, &mut ids).unwrap();
            assert!(ids.iter().eq(want.iter().map(|t| &t.0)), "round {round}: {text:?} {vocab:?}");
            texts += 1;
        }
        // Short pre-tokens, of one word or a few, are looked up whole (the second time from
        // the cache).
        for _ in 0..20 {
            let text: String = (0..1 + rng.below(3)).map(|_| pool[rng.below(pool.len())].as_str()).collect();
            let mut want = Vec::new();
            whole.tokenize(&text, &mut want).unwrap();
            for _ in 0..2 {
                let mut ids = Vec::new();
                words.tokenize_ids(&text, &mut ids).unwrap();
                assert!(ids.iter().eq(want.iter().map(|t| &t.id)), "round {round}: {text:?} {vocab:?}");
                let mut got = Vec::new();
                words.tokenize(&text, &mut got).unwrap();
                assert_eq!(got, want, "round {round}: {text:?} {vocab:?}");
            }
        }
    }
    assert!(texts >= 1_800);
}

#[test]
fn a_piece_with_an_inner_space_keeps_the_whole_texts_lattice() {
    let pieces = |inner: &str| {
        let kinds = [("▁a", PieceKind::Normal), (inner, PieceKind::Normal), ("<unk>", PieceKind::Unknown)];
        kinds.iter().map(|&(p, k)| (p.to_owned(), -1.0, k)).collect::<Vec<_>>()
    };
    assert!(Unigram::sentencepiece(pieces("▁b"), 2, false).unwrap().word_scores.is_some());
    assert!(Unigram::sentencepiece(pieces("a▁b"), 2, false).unwrap().word_scores.is_none());
    assert!(Unigram::sentencepiece(pieces("b▁"), 2, false).unwrap().word_scores.is_none());
    let vocab = |score: f64| vec![("<unk>".to_owned(), -1.0), ("▁a".to_owned(), score)];
    assert!(Unigram::new(vocab(-2.0), Some(0), false).unwrap().word_scores.is_some());
    // Words need an unk id: without one, only where an unknown char wins is it an error.
    assert!(Unigram::new(vocab(-2.0), None, false).unwrap().word_scores.is_none());
    assert!(Unigram::new(vocab(f64::NAN), Some(0), false).unwrap().word_scores.is_none());
}

#[test]
fn word_end_finds_the_next_space_past_the_first_char() {
    use crate::testing::Rng;
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    // "…" and "€" share the space's lead byte 0xE2, "▀" (E2 96 80) its first two bytes; long
    // runs without one are searched past the first bytes.
    let parts = [
        "▁",
        "a",
        "…",
        "€",
        "▀",
        "日",
        "é",
        "\u{1F600}",
        "▁▁",
        "ภาษาไทยยาวมาก",
        "abcdefghijklmnopqrstuvwxyz",
    ];
    for _ in 0..5_000 {
        let text: String = (0..1 + rng.below(30)).map(|_| rng.pick(&parts)).collect();
        let bytes = text.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            let from = start + char_len(bytes[start]);
            let want =
                (from..bytes.len()).find(|&i| bytes[i..].starts_with("▁".as_bytes())).unwrap_or(bytes.len());
            assert_eq!(word_end(bytes, start), want, "{text:?} from {start}");
            start = from;
        }
    }
}
