//! The trace's per-stage alignment (run-length encoded) and the BERT switches the page sets.

use tokenprism::normalizers::BertNormalizerConfig;
use tokenprism::tokenizer::trace::push_runs;
use tokenprism::tokenizer::Tokenizer;

const VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n,\n!\nhe\n##llo\n東\n京\n";

fn expand(runs: &[(u32, u32, u32)]) -> Vec<u32> {
    runs.iter().flat_map(|&(first, len, step)| (0..len).map(move |k| first + k * step)).collect()
}

#[test]
fn runs_round_trip_any_alignment() {
    let cases: [&[u32]; 6] =
        [&[], &[0], &[0, 1, 2, 3], &[0, 0, 0, 1, 1, 1], &[5, 5, 6, 7, 9, 9, 2], &[3, 4, 4, 4, 5]];
    for orig in cases {
        let mut runs = Vec::new();
        push_runs(&mut runs, &orig[..2.min(orig.len())]);
        push_runs(&mut runs, &orig[2.min(orig.len())..]);
        assert_eq!(expand(&runs), orig, "{runs:?}");
        assert!(runs.iter().all(|r| r.1 > 0 && r.2 <= 1));
    }
    let mut runs = Vec::new();
    push_runs(&mut runs, &(0..1000).collect::<Vec<u32>>());
    assert_eq!(runs, vec![(0, 1000, 1)]);
}

#[test]
fn every_stage_has_one_alignment_entry_per_char() {
    let t = Tokenizer::from_vocab_txt(VOCAB).unwrap();
    let text = "Héllo,\tWörld! 東京\u{200b}x";
    let trace = t.trace(text).unwrap();
    for stage in &trace.stages {
        let orig = expand(&stage.runs);
        assert_eq!(orig.len(), stage.text.chars().count(), "{}", stage.name);
        assert!(orig.iter().all(|&o| (o as usize) < text.chars().count()));
    }
    assert_eq!(expand(&trace.stages.last().unwrap().runs), trace.alignment);
    // The raw stage is the identity; CJK spacing gives each ideograph a space on both sides,
    // all three chars from the ideograph.
    assert_eq!(trace.stages[0].runs, vec![(0, text.chars().count() as u32, 1)]);
    let cjk = &trace.stages[2];
    assert_eq!(cjk.name, "cjk");
    let pos = text.chars().position(|c| c == '東').unwrap() as u32;
    let chars: Vec<char> = cjk.text.chars().collect();
    let orig = expand(&cjk.runs);
    let at: Vec<char> = chars.iter().zip(&orig).filter(|(_, &o)| o == pos).map(|(c, _)| *c).collect();
    assert_eq!(at, vec![' ', '東', ' ']);
}

#[test]
fn bert_switches_change_the_stages() {
    let mut t = Tokenizer::from_vocab_txt(VOCAB).unwrap();
    assert_eq!(t.bert_options(), Some(BertNormalizerConfig::default()));
    let off = BertNormalizerConfig {
        clean_text: false,
        handle_chinese_chars: false,
        strip_accents: Some(false),
        lowercase: false,
    };
    t.set_bert_options(off).unwrap();
    assert_eq!(t.bert_options(), Some(off));
    let trace = t.trace("Héllo\t東京").unwrap();
    for s in &trace.stages {
        assert_eq!(s.text, "Héllo\t東京", "{}", s.name);
    }
    let lower_only = BertNormalizerConfig { lowercase: true, strip_accents: Some(false), ..off };
    t.set_bert_options(lower_only).unwrap();
    assert_eq!(t.trace("Héllo").unwrap().stages.last().unwrap().text, "héllo");
    // Encoding agrees with the trace: the cache was rebuilt with the new switches.
    assert_eq!(t.encode("HELLO", None, true).unwrap().ids().collect::<Vec<_>>(), vec![2, 5, 3]);
}
