//! Tests of the whole tokenizer on a small hand-made vocabulary, plus (when the files from
//! `scripts/data/bpe_data.sh` are present) a few known ids of the real encodings. Exhaustive
//! parity with the references is in tests/parity/test_bpe_parity.py.

use super::*;

fn b64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = c.iter().fold(0u32, |acc, &b| acc << 8 | b as u32) << (8 * (3 - c.len()));
        for k in 0..=c.len() {
            s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
        }
        s.extend(std::iter::repeat_n('=', 3 - c.len()));
    }
    s
}

/// Bytes, then "he" "ll" "hell" "hello" " w" "or" " wor" "ld" " world" "éé"(bytes).
pub(super) fn toy() -> BpeTokenizer {
    toy_with(Pattern::Cl100k)
}

/// [`toy`] with another pre-tokenizer pattern, and tokens for Arabic with vowel marks.
fn toy_with(pattern: Pattern) -> BpeTokenizer {
    let mut lines: Vec<String> = (0..=255u8).map(|b| format!("{} {b}", b64(&[b]))).collect();
    let extra: [&[u8]; 10] =
        [b"he", b"ll", b"hell", b"hello", b" w", b"or", b" wor", b"ld", b" world", "éé".as_bytes()];
    for (i, t) in extra.iter().enumerate() {
        lines.push(format!("{} {}", b64(t), 256 + i));
    }
    // Tokens from 310 on (the specials are 300 and 301): ids nobody reads, merges that fire.
    let arabic = [
        "\u{64e}",
        "\u{650}",
        "ب",
        "ل",
        "\u{64e}ب",
        "\u{650}ل",
        " ب",
        " ب\u{64e}",
        "ال",
        "\u{651}",
        "ل\u{651}",
    ];
    for (i, t) in arabic.iter().enumerate() {
        lines.push(format!("{} {}", b64(t.as_bytes()), 310 + i));
    }
    // A token longer than word keys.
    lines.push(format!("{} 330", b64(b" hellohellohello")));
    let specials = vec![("<|eot|>".to_string(), 300), ("<|eot|>x".to_string(), 301)];
    BpeTokenizer::from_tiktoken("toy", lines.join("\n").as_bytes(), pattern, &specials).unwrap()
}

#[test]
fn encodes_and_decodes() {
    let t = toy();
    assert_eq!(t.encode_ordinary("hello world"), [259, 264]);
    assert_eq!(t.encode_ordinary("hello worl"), [259, 262, b'l' as u32]);
    assert_eq!(t.decode_bytes(&[259, 264]).unwrap(), b"hello world");
    assert_eq!(t.encode_ordinary(""), Vec::<u32>::new());
    // A token longer than word keys, new and seen.
    for _ in 0..2 {
        assert_eq!(t.encode_ordinary(" hellohellohello!"), [330, b'!' as u32]);
    }
    assert!(t.decode_bytes(&[999]).is_err());
}

#[test]
fn special_tokens_follow_tiktoken() {
    let t = toy();
    let text = "hello<|eot|> world";
    // Disallowed by default: an error that names the token.
    let err = t.encode(text, &Allowed::none()).unwrap_err().to_string();
    assert!(err.contains("<|eot|>"), "{err}");
    // Allowed: one id.
    let ids = t.encode(text, &Allowed::All).unwrap();
    assert_eq!(ids, [259, 300, 264]);
    // Neither: ordinary text.
    let ids = t.encode_with_special(text, &Allowed::none(), &Allowed::none()).unwrap();
    assert_eq!(ids, t.encode_ordinary(text));
    assert_eq!(t.decode_bytes(&ids).unwrap(), text.as_bytes());
    // Leftmost-longest; an unaccepted longer match does not hide an accepted shorter one.
    assert_eq!(t.encode("<|eot|>x", &Allowed::All).unwrap(), [301]);
    let only_short = Allowed::Only(["<|eot|>".to_string()].into());
    assert_eq!(t.encode_with_special("<|eot|>x", &only_short, &Allowed::none()).unwrap(), [300, b'x' as u32]);
    // The text between specials is encoded separately: `\s++$` sees the segment's end.
    assert_eq!(t.pattern().regexes(), [crate::pre_tokenizers::byte_level::pattern::CL100K_REGEX]);
}

#[test]
fn decode_pieces_is_lossless() {
    let t = toy();
    // "é" is two bytes; a token boundary inside it gives "" then the char.
    let ids = [0xC3, 0xA9, b'x' as u32];
    assert_eq!(t.decode_pieces(&ids).unwrap(), ["", "é", "x"]);
    let ids = t.encode_ordinary("ééé");
    assert_eq!(t.decode_pieces(&ids).unwrap().concat(), "ééé");
    // An invalid byte becomes U+FFFD, as in decode().
    assert_eq!(t.decode_pieces(&[0xFF, b'a' as u32]).unwrap(), ["\u{FFFD}", "a"]);
    assert_eq!(t.decode_pieces(&[0xC3]).unwrap(), ["\u{FFFD}"]);
    assert_eq!(t.decode(&[0xC3]).unwrap(), "\u{FFFD}");
}

#[test]
fn trace_shows_each_merge() {
    let t = toy();
    let tr = t.trace_piece(b"hello").unwrap();
    assert_eq!(tr.ids, [259]);
    let ranks: Vec<u32> = tr.steps.iter().map(|s| s.rank).collect();
    assert_eq!(ranks, [256, 257, 258, 259]); // he, ll, hell, hello
    assert_eq!(tr.steps[1].parts, [256, 257, b'o' as u32]);
}

#[test]
fn trace_refuses_pieces_over_the_limit() {
    let t = toy();
    assert!(t.trace_piece(&[b'a'; MAX_TRACE_BYTES]).is_ok());
    let err = t.trace_piece(&[b'a'; MAX_TRACE_BYTES + 1]).unwrap_err().to_string();
    assert!(err.contains(&format!("at most {MAX_TRACE_BYTES} bytes")), "{err}");
}

/// Units of work (crate::cost) `encode` does on `unit` repeated to 10,000 and to 100,000
/// bytes, after checking that the ids decode back to the text.
fn run_cost(unit: &str, encode: impl Fn(&str) -> Vec<u32>, decode: impl Fn(&[u32]) -> Vec<u8>) -> (u64, u64) {
    let work = |bytes: usize| {
        let text = unit.repeat(bytes / unit.len());
        let (ids, units) = crate::cost::of(|| encode(&text));
        assert_eq!(decode(&ids), text.as_bytes(), "{unit:?}");
        units
    };
    (work(10_000), work(100_000))
}

/// Runs of one char, 100,000 bytes: linear work in pre-tokenizing and merging, counted rather
/// than timed (a loaded machine fails a time bound): a few units a byte, and ten times the
/// input about ten times the work (a quadratic step: a hundred times).
fn assert_linear(what: &str, unit: &str, (small, large): (u64, u64)) {
    assert!(large <= 16 * 100_000, "{what} {unit:?}: {large} units for 100,000 bytes");
    assert!(large <= 12 * small, "{what} {unit:?}: 10x the input took {large} / {small} units");
}

#[test]
fn long_identical_runs_are_fast() {
    let t = toy();
    for unit in ["a", " ", "1", "!", "é"] {
        let cost = run_cost(unit, |s| t.encode_ordinary(s), |ids| t.decode_bytes(ids).unwrap());
        assert_linear("toy", unit, cost);
    }
}

fn data_dir() -> std::path::PathBuf {
    std::env::var_os("TOKENPRISM_DATA")
        .map(Into::into)
        .unwrap_or_else(|| {
            std::path::Path::new(&std::env::var("HOME").unwrap()).join(".cache/tokenprism/data")
        })
        .join("bpe")
}

/// Known ids of the real encodings (from tiktoken 0.14 and tokenizers 0.23.3).
#[test]
fn real_encodings_when_present() {
    let dir = data_dir();
    let Ok(o200k) = std::fs::read(dir.join("o200k_base.tiktoken")) else {
        eprintln!("skipping: {} has no o200k_base.tiktoken (run scripts/data/bpe_data.sh)", dir.display());
        return;
    };
    let t = BpeTokenizer::from_tiktoken_named("o200k_base", &o200k).unwrap();
    assert_eq!(t.encode_ordinary("hello world, it's me"), [24912, 2375, 11, 4275, 668]);

    let cl = std::fs::read(dir.join("cl100k_base.tiktoken")).unwrap();
    let t = BpeTokenizer::from_tiktoken_named("cl100k_base", &cl).unwrap();
    assert_eq!(t.encode_ordinary("hello world, it's me"), [15339, 1917, 11, 433, 596, 757]);

    let r50k = std::fs::read(dir.join("r50k_base.tiktoken")).unwrap();
    let t = BpeTokenizer::from_tiktoken_named("r50k_base", &r50k).unwrap();
    assert_eq!(t.encode_ordinary("hello world, it's me"), [31373, 995, 11, 340, 338, 502]);

    let gpt2 = std::fs::read_to_string(dir.join("gpt2/tokenizer.json")).unwrap();
    let h = BpeTokenizer::from_hf_json(&gpt2).unwrap();
    assert_eq!(h.encode_ordinary("hello world, it's me"), [31373, 995, 11, 340, 338, 502]);
}

/// tests/parity/test_bpe_parity.py's long runs (there compared with the references) on the real
/// encodings: linear work for every one (when the files of `scripts/data/bpe_data.sh` are present).
#[test]
fn real_encodings_long_runs_cost_linear_work() {
    let dir = data_dir();
    if !dir.join("o200k_base.tiktoken").exists() {
        eprintln!("skipping: {} has no o200k_base.tiktoken (run scripts/data/bpe_data.sh)", dir.display());
        return;
    }
    let mut all = Vec::new();
    for name in ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"] {
        let data = std::fs::read(dir.join(format!("{name}.tiktoken"))).unwrap();
        all.push((name, BpeTokenizer::from_tiktoken_named(name, &data).unwrap()));
    }
    for name in ["gpt2", "qwen3"] {
        let json = std::fs::read_to_string(dir.join(name).join("tokenizer.json")).unwrap();
        all.push((name, BpeTokenizer::from_hf_json(&json).unwrap()));
    }
    for (name, t) in &all {
        for unit in ["a", "A", " ", "\n", "1", "!", "é", "中", "😀", "ab", " a", "\r\n", "'s"] {
            let cost =
                run_cost(unit, |s| t.encode(s, &Allowed::All).unwrap(), |ids| t.decode_bytes(ids).unwrap());
            assert_linear(name, unit, cost);
        }
    }
}

/// Hostile ids (the kind tests/core/test_hostile.py sends): refused clearly, never truncated
/// to another id, allocated for, or overflowed.
#[test]
fn huge_ids_are_refused() {
    let lines: Vec<String> = (0..=255u8).map(|b| format!("{} {b}", b64(&[b]))).collect();
    let mut file = lines.join("\n");
    file.push_str("\nYWI= 4294967295\n");
    let e = BpeTokenizer::from_tiktoken("x", file.as_bytes(), Pattern::Cl100k, &[]).unwrap_err();
    assert!(e.to_string().contains("beyond"), "{e}");
    let base = lines.join("\n");
    let e = BpeTokenizer::from_tiktoken("x", base.as_bytes(), Pattern::Cl100k, &[("<s>".into(), u32::MAX)])
        .unwrap_err();
    assert!(e.to_string().contains("too large"), "{e}");
    let vocab: String = crate::pre_tokenizers::byte_level::alphabet::byte_level_tokens()
        .map(|(token, id)| format!("{token:?}: {id}"))
        .collect::<Vec<_>>()
        .join(", ");
    let json = |id: u64| {
        format!(
            r#"{{"model": {{"type": "BPE", "vocab": {{{vocab}}}, "merges": []}},
                "pre_tokenizer": {{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}},
                "added_tokens": [{{"id": {id}, "content": "<x>", "special": true}}]}}"#
        )
    };
    let t = BpeTokenizer::from_hf_json(&json(256)).unwrap();
    assert_eq!(t.encode("a<x>", &Allowed::All).unwrap(), [97, 256]);
    assert!(BpeTokenizer::from_hf_json(&json((1 << 32) + 5)).unwrap_err().to_string().contains("32 bits"));
    assert!(BpeTokenizer::from_hf_json(&json(u32::MAX as u64)).is_err());
}

/// Encoding by whole spans (see `spans::span_end`) gives the ids of their pre-tokens, when
/// a span is first met and when it is found again; spans of up to 15 bytes are in the word
/// table and longer ones in the span table.
#[test]
fn spans_encode_as_their_pre_tokens() {
    let chars = [
        "ب", "ل", "ا", "\u{64e}", "\u{650}", "\u{651}", "\u{652}", "ٱ", "क", "\u{93f}", "\u{301}", "e", "l",
        "'", "s", ",", "1", "\u{a0}", "\u{3000}", "中", "😀",
    ];
    let seps = [" ", " ", " ", " ", "  ", "\n", " \n", "\t", ", ", "\u{a0}"];
    let mut x = 0x5EEDu64;
    let mut next = |n: usize| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) as usize % n
    };
    for p in Pattern::ALL {
        let t = toy_with(p);
        // Seeded (natively): a piece the word table lacks is then looked up in the seed, not
        // the vocabulary; `plain` below is not seeded.
        let mut warm = t.new_work();
        for _ in 0..300 {
            // Texts of a few recurring words, so spans come back.
            let words: Vec<String> =
                (0..6).map(|_| (0..1 + next(12)).map(|_| chars[next(chars.len())]).collect()).collect();
            let mut text = String::new();
            for _ in 0..next(40) {
                text.push_str(&words[next(words.len())]);
                text.push_str(seps[next(seps.len())]);
            }
            let mut plain = Vec::new();
            t.encode_text::<CharMatcher, false>(&text, &mut plain, &mut Work::default());
            for pass in 0..2 {
                let mut spans = Vec::new();
                t.encode_text::<CharMatcher, true>(&text, &mut spans, &mut warm);
                assert_eq!(spans, plain, "{p:?} pass {pass}: {text:?}");
            }
        }
    }
    // Both tables hold spans after a text with a short and a long one.
    let t = toy_with(Pattern::Cl100k);
    let mut w = Work::default();
    let (short, long) = (" بَلِ", " بَلِّبَلِّبَلِّبَلِّ");
    let text = format!("{short}{long} .");
    let mut ids = Vec::new();
    t.encode_text::<CharMatcher, true>(&text, &mut ids, &mut w);
    let key = words::span_key(words::key_at(short.as_bytes(), 0, short.len()));
    assert!(w.words.get_into(key, words::hash(key), &mut Vec::new()), "{short:?} not in the word table");
    assert!(long.len() > words::MAX_PIECE);
    let h = table::hash_bytes(long.as_bytes());
    assert!(w.spans.get_into(long.as_bytes(), h, 0, &mut Vec::new()), "{long:?} not in the span table");
}

/// A byte-level tokenizer.json with merges "h e", "he l", "l o" and the added token `<s>` (id
/// 300), with the given post-processor.
fn template_json(post_processor: &str) -> String {
    let vocab: String = crate::pre_tokenizers::byte_level::alphabet::byte_level_tokens()
        .map(|(token, id)| format!("{token:?}: {id}"))
        .chain(["\"he\": 256".into(), "\"hel\": 257".into(), "\"lo\": 258".into()])
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"{{"model": {{"type": "BPE", "vocab": {{{vocab}}}, "merges": ["h e", "he l", "l o"]}},
            "pre_tokenizer": {{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}},
            "post_processor": {post_processor},
            "added_tokens": [{{"id": 300, "content": "<s>", "special": true}}]}}"#
    )
}

const LLAMA_LIKE: &str = r#"{"type": "Sequence", "processors": [
    {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
    {"type": "TemplateProcessing",
     "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
     "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
              {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
     "special_tokens": {"<s>": {"id": "<s>", "ids": [300], "tokens": ["<s>"]}}}]}"#;

#[test]
fn template_post_processor() {
    let t = BpeTokenizer::from_hf_json(&template_json(LLAMA_LIKE)).unwrap();
    assert_eq!(t.encode_ordinary("hello"), [257, 258]);
    assert_eq!(t.add_special_tokens(t.encode_ordinary("hello")).unwrap(), [300, 257, 258]);
    let e = t.encode_full("hello é<s>", None, true).unwrap();
    assert_eq!(e.ids().collect::<Vec<_>>(), [300, 257, 258, 32, 0xC3, 0xA9, 300]);
    assert_eq!(e.tokens(), ["<s>", "hel", "lo", "Ġ", "Ã", "©", "<s>"]);
    // The two bytes of "é" each cover the whole char; the typed <s> is text, not template.
    assert_eq!(e.offsets().collect::<Vec<_>>(), [(0, 0), (0, 3), (3, 5), (5, 6), (6, 7), (6, 7), (7, 10)]);
    assert_eq!(e.special_tokens_mask().collect::<Vec<_>>(), [1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        e.word_ids().collect::<Vec<_>>(),
        [None, Some(0), Some(0), Some(1), Some(1), Some(1), Some(2)]
    );
    let p = t.encode_full("he", Some("lo"), true).unwrap();
    assert_eq!(p.ids().collect::<Vec<_>>(), [300, 256, 300, 258]);
    assert_eq!(p.type_ids().collect::<Vec<_>>(), [0, 0, 1, 1]);
    assert_eq!(p.sequence_ids().collect::<Vec<_>>(), [None, Some(0), None, Some(1)]);
    let bare = t.encode_full("hello", None, false).unwrap();
    assert_eq!(bare.ids().collect::<Vec<_>>(), [257, 258]);
    assert_eq!(t.decode_bytes_skipping(&[300, 257, 258], true).unwrap(), b"hello");
}

/// ByteLevel's trimming: "a b" is `a`, `Ġ`, `b` (no merge makes `Ġb`); the `Ġ` token's offsets
/// lose their one char of space at the start, and then may not end before they start.
#[test]
fn trimmed_offsets() {
    let trim = LLAMA_LIKE.replace(r#""trim_offsets": false"#, r#""trim_offsets": true"#);
    let t = BpeTokenizer::from_hf_json(&template_json(&trim)).unwrap();
    assert_eq!(t.add_special_tokens(t.encode_ordinary("hello")).unwrap(), [300, 257, 258]);
    let e = t.encode_full("a b", None, true).unwrap();
    assert_eq!(e.tokens(), ["<s>", "a", "Ġ", "b"]);
    assert_eq!(e.offsets().collect::<Vec<_>>(), [(0, 0), (0, 1), (2, 2), (2, 3)]);
    let e = t.encode_full("a b", None, false).unwrap();
    assert_eq!(e.offsets().collect::<Vec<_>>(), [(0, 1), (2, 2), (2, 3)]);
}

/// Every post-processor the reference reads loads, a Sequence's steps in any order; what
/// cannot be read is refused with its JSON path.
#[test]
fn post_processors_of_any_shape() {
    let two = LLAMA_LIKE.replace(
        r#"{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}"#,
        &{
            let start = LLAMA_LIKE.find(r#"{"type": "TemplateProcessing""#).unwrap();
            LLAMA_LIKE[start..LLAMA_LIKE.len() - 2].to_string()
        },
    );
    // Two templates in turn: the first gives two encodings (<s>, the text), which the second
    // takes for a pair: <s> A <s> B.
    let t = BpeTokenizer::from_hf_json(&template_json(&two)).unwrap();
    assert_eq!(t.add_special_tokens(vec![257]).unwrap(), [300, 300, 300, 257]);
    let roberta = r#"{"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                      "trim_offsets": true, "add_prefix_space": false}"#;
    let t = BpeTokenizer::from_hf_json(&template_json(roberta)).unwrap();
    assert_eq!(t.add_special_tokens(vec![257]).unwrap(), [0, 257, 2]);
    let nested = format!(r#"{{"type": "Sequence", "processors": [{LLAMA_LIKE}]}}"#);
    let t = BpeTokenizer::from_hf_json(&template_json(&nested)).unwrap();
    assert_eq!(t.add_special_tokens(vec![257]).unwrap(), [300, 257]);
    let bad = LLAMA_LIKE.replace(r#""trim_offsets": false,"#, "");
    let e = BpeTokenizer::from_hf_json(&template_json(&bad)).err().unwrap().to_string();
    assert!(e.contains("post_processor.processors[0].trim_offsets"), "{e}");
    let unknown = r#"{"type": "Sequence", "processors": [{"type": "Foo"}]}"#;
    let e = BpeTokenizer::from_hf_json(&template_json(unknown)).err().unwrap().to_string();
    assert!(e.contains("BpeTokenizer: post_processor.processors[0]") && e.contains("\"Foo\""), "{e}");
}

/// Batches that mix pieces seen before with new ones (at a batch's first word-table miss the
/// vocabulary slots of its other misses are loaded first) give each pre-token's own encoding
/// by the plain rule (the piece's token, else its bytes merged by the min-scan), on a fresh
/// tokenizer's first pass and on the passes after, with a word table seeded with every token
/// (natively, `encode_ordinary`) and without one.
#[test]
fn batches_of_new_and_seen_pieces() {
    const BITS: &[&str] = &[
        "hello",
        " world",
        " wor",
        "hell",
        "ld",
        "he",
        "or",
        " éé",
        "é",
        "1234",
        "  ",
        "\n",
        "!",
        "x",
        " hellohellohello",
    ];
    let mut x: u64 = 5;
    let mut rnd = |k: usize| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) as usize % k
    };
    for _ in 0..20 {
        let t = toy();
        assert_eq!(t.new_work().seeded, cfg!(not(target_arch = "wasm32")));
        let plain = |piece: &[u8]| -> Vec<u32> {
            if let Some(id) = t.model.vocab.get_id(piece) {
                return vec![id];
            }
            let mut parts: Vec<u32> = piece.iter().map(|&b| t.model.byte_ids[b as usize]).collect();
            merge::merge_scan(&t.model.pairs, &mut parts, &mut Vec::new());
            parts
        };
        for _ in 0..4 {
            let mut text = String::new();
            for _ in 0..rnd(300) {
                if rnd(3) == 0 {
                    // A word seen once or a few times: 1 to 20 letters (longer than word keys too).
                    text.push(' ');
                    text.extend((0..1 + rnd(20)).map(|_| ["h", "e", "l", "o", "w", "r", "d"][rnd(7)]));
                } else {
                    text.push_str(BITS[rnd(BITS.len())]);
                }
            }
            let want: Vec<u32> = t.pre_tokenize(&text).iter().flat_map(|p| plain(p.as_bytes())).collect();
            assert_eq!(t.encode_ordinary(&text), want, "{text:?}");
            let mut unseeded = Vec::new();
            t.encode_text::<CharMatcher, false>(&text, &mut unseeded, &mut Work::default());
            assert_eq!(unseeded, want, "unseeded: {text:?}");
        }
    }
}

/// A token that merging its bytes does not give ("abc" here: "b c" merges first, and "a bc"
/// is no merge) is taken whole only with `ignore_merges`; without it, its pieces are merged,
/// whether the piece is found in the seed, the vocabulary, or (a piece longer than word keys)
/// past the seed's filter, on the first sight of the token and after its check is known; the
/// checks decided at load by the merge ranks (merges in rank order) or by merging each token's
/// bytes ("ab c" ranked before the merge that makes "ab": the rule of the ranks does not
/// hold), and at first sight for a token longer than word keys.
#[test]
fn tokens_the_merges_do_not_reach() {
    let long = "xyzxyzxyzxyzxyzxyz";
    let vocab: String = crate::pre_tokenizers::byte_level::alphabet::byte_level_tokens()
        .map(|(token, id)| format!("{token:?}: {id}"))
        .chain([
            "\"bc\": 256".into(),
            "\"ab\": 257".into(),
            "\"abc\": 258".into(),
            "\"xy\": 259".into(),
            format!("{long:?}: 260"),
        ])
        .collect::<Vec<_>>()
        .join(", ");
    // The checks of "abc" and of the long token known at load, natively.
    let orders = [(r#"["b c", "a b", "ab c", "x y"]"#, [2, 2]), (r#"["ab c", "b c", "a b", "x y"]"#, [2, 0])];
    for ((merges, known_at_load), ignore_merges) in orders.into_iter().flat_map(|o| [(o, false), (o, true)]) {
        let json = format!(
            r#"{{"model": {{"type": "BPE", "vocab": {{{vocab}}}, "merges": {merges},
                "ignore_merges": {ignore_merges}}},
                "pre_tokenizer": {{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}}}}"#
        );
        let t = BpeTokenizer::from_hf_json(&json).unwrap();
        match (&t.whole, ignore_merges) {
            (WholeToken::Checked(known), false) => {
                // Natively; wasm checks every token at first sight.
                let want = if cfg!(target_arch = "wasm32") { [0, 0] } else { known_at_load };
                assert_eq!([258, 260].map(|id| known[id].load(Ordering::Relaxed)), want, "{merges}");
            }
            (WholeToken::Always, true) => {}
            _ => panic!("ignore_merges {ignore_merges} took the other rule"),
        }
        let plain = |piece: &[u8]| -> Vec<u32> {
            if let Some(id) = t.model.vocab.get_id(piece).filter(|_| ignore_merges) {
                return vec![id];
            }
            let mut parts: Vec<u32> = piece.iter().map(|&b| t.model.byte_ids[b as usize]).collect();
            merge::merge_scan(&t.model.pairs, &mut parts, &mut Vec::new());
            parts
        };
        for text in ["abc", "abc abc", long, &format!("{long} abc {long}ab abc")] {
            let want: Vec<u32> = t.pre_tokenize(text).iter().flat_map(|p| plain(p.as_bytes())).collect();
            assert_eq!(want.contains(&258) || want.contains(&260), ignore_merges, "{text:?}");
            for _ in 0..2 {
                assert_eq!(t.encode_ordinary(text), want, "{text:?} ignore_merges: {ignore_merges}");
                let mut unseeded = Vec::new();
                t.encode_text::<CharMatcher, false>(text, &mut unseeded, &mut Work::default());
                assert_eq!(unseeded, want, "unseeded: {text:?} ignore_merges: {ignore_merges}");
            }
        }
        if let WholeToken::Checked(known) = &t.whole {
            assert_eq!(known[260].load(Ordering::Relaxed), 2, "{merges}: checked by its first sight");
        }
    }
}
