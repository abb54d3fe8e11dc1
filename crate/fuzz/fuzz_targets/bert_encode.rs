//! The full BERT pipeline on the real bert-base-uncased vocabulary, with every normalizer
//! option combination, with and without added tokens matched in normalized text, with
//! truncation and padding: the fast paths (any switch setting) and the staged pipeline
//! must give identical encodings; `encode_ids` the same ids; offsets are char ranges
//! within the input; decode and trace never panic.
//!
//! Input bytes: [tokenizer variant] [fast-path switches] [truncation] [padding] text,
//! and text after the first 0xFF byte (if any) is the pair.
#![no_main]

#[path = "common.rs"]
mod common;

use std::cell::RefCell;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use tokenprism::fused::FastPaths;
use tokenprism::normalizers::bert::BertNormalizerConfig;
use tokenprism::normalizers::Normalizer;
use tokenprism::tokenizer::{
    AddedToken, Direction, Padding, PaddingStrategy, Truncation, TruncationStrategy,
};
use tokenprism::Tokenizer;

const VARIANTS: usize = 64;

thread_local! {
    static BASE: Tokenizer = {
        let json = String::from_utf8(common::data_file("bert-base-uncased/tokenizer.json")).unwrap();
        let mut t = Tokenizer::from_json_str(&json).expect("bert tokenizer.json loads");
        t.truncation = None;
        t.padding = None;
        t
    };
    static TOKS: RefCell<Vec<Option<Tokenizer>>> = RefCell::new((0..VARIANTS).map(|_| None).collect());
}

fn added(
    content: &str,
    normalized: bool,
    single_word: bool,
    lstrip: bool,
    rstrip: bool,
    special: bool,
) -> AddedToken {
    AddedToken {
        id: 0,
        content: Arc::from(content),
        single_word,
        lstrip,
        rstrip,
        normalized,
        special,
        normalized_form: None,
    }
}

/// Variant `v`: bits 0-4 the normalizer switches, bit 5 extra added tokens (some matched in
/// normalized text, which turns the fused path off).
fn build(v: usize) -> Tokenizer {
    BASE.with(|b| {
        let cfg = BertNormalizerConfig {
            clean_text: v & 1 != 0,
            handle_chinese_chars: v & 2 != 0,
            strip_accents: if v & 4 != 0 { Some(v & 8 != 0) } else { None },
            lowercase: v & 16 != 0,
        };
        let mut list = b.added.clone();
        if v & 32 != 0 {
            list.extend([
                added("hello", true, true, false, false, false),
                added("Wörld", true, false, true, false, false),
                added("@@", false, false, false, true, true),
                added("東", true, false, false, false, false),
                added("[MASK]x", false, false, true, true, true),
                added("é", true, false, false, false, false),
            ]);
        }
        Tokenizer::new(
            Some(Normalizer::Bert(cfg)),
            b.pre_tokenizer.clone(),
            b.model.clone(),
            b.post_processor.clone(),
            b.decoder.clone(),
            list,
            None,
            None,
        )
        .expect("variant builds")
    })
}

fn all<T>(it: impl Iterator<Item = T>) -> Vec<T> {
    it.collect()
}

fn ids(e: &tokenprism::Encoding) -> Vec<u32> {
    e.ids().collect()
}

fn check_offsets(enc: &tokenprism::Encoding, lens: [u32; 2]) {
    for (i, ((s, e), seq)) in enc.offsets().zip(enc.sequence_ids()).enumerate() {
        match seq {
            Some(q) => assert!(
                s <= e && e <= lens[q as usize],
                "token {i} offsets {:?} outside input {q} of {} chars",
                (s, e),
                lens[q as usize]
            ),
            None => assert_eq!((s, e), (0, 0), "special or pad token {i} with offsets"),
        }
    }
}

fuzz_target!(init: {
    BASE.with(|b| { b.vocab_size(); });
}, |data: &[u8]| {
    let [v, fpb, trb, padb, rest @ ..] = data else { return };
    let (a, b) = match rest.iter().position(|&x| x == 0xFF) {
        Some(k) => (common::text(&rest[..k]), Some(common::text(&rest[k + 1..]))),
        None => (common::text(rest), None),
    };
    let add_special = fpb & 0x80 == 0;
    let fp = FastPaths { simd: fpb & 1 != 0, page_cache: fpb & 2 != 0, lazy_output: fpb & 4 != 0, fused: fpb & 8 != 0 };
    let v = *v as usize % VARIANTS;
    TOKS.with(|toks| {
        let mut toks = toks.borrow_mut();
        let tok = toks[v].get_or_insert_with(|| build(v));
        let truncation = (*trb != 0).then(|| Truncation {
            max_length: (trb & 0x1F) as usize,
            stride: (trb >> 5 & 3) as usize,
            strategy: [TruncationStrategy::LongestFirst, TruncationStrategy::OnlyFirst, TruncationStrategy::OnlySecond][(padb >> 6) as usize % 3],
            direction: if trb & 0x80 != 0 { Direction::Left } else { Direction::Right },
        });
        if tok.set_truncation(truncation).is_err() {
            tok.truncation = None;
        }
        tok.padding = (*padb & 1 != 0).then(|| Padding {
            strategy: if padb & 2 != 0 { PaddingStrategy::BatchLongest } else { PaddingStrategy::Fixed((padb >> 2 & 15) as usize * 3) },
            direction: if padb & 0x20 != 0 { Direction::Left } else { Direction::Right },
            pad_to_multiple_of: [None, Some(0), Some(1), Some(8)][(padb >> 6) as usize],
            pad_id: 0,
            pad_type_id: 0,
            pad_token: Arc::from("[PAD]"),
        });

        tok.fast = FastPaths::NONE;
        let staged = tok.encode(&a, b.as_deref(), add_special);
        let staged_batch = tok.encode_batch(&[(&a, b.as_deref())], add_special);
        tok.fast = fp;
        let fast = tok.encode(&a, b.as_deref(), add_special);
        let fast_ids = tok.encode_ids(&a, add_special);
        let fast_single = tok.encode(&a, None, add_special);
        let fast_batch = tok.encode_batch(&[(&a, b.as_deref())], add_special);
        tok.fast = FastPaths::default();
        match (&staged, &fast) {
            (Ok(s), Ok(f)) => {
                assert_eq!(ids(f), ids(s), "ids differ, {fp:?} on {a:?} / {b:?}");
                assert_eq!(f.tokens(), s.tokens(), "tokens differ on {a:?}");
                assert_eq!(all(f.offsets()), all(s.offsets()), "offsets differ on {a:?}");
                assert_eq!((all(f.type_ids()), all(f.word_ids()), all(f.sequence_ids())), (all(s.type_ids()), all(s.word_ids()), all(s.sequence_ids())));
                assert_eq!((all(f.special_tokens_mask()), all(f.attention_mask())), (all(s.special_tokens_mask()), all(s.attention_mask())));
                let lens = [a.chars().count() as u32, b.as_deref().map_or(0, |b| b.chars().count() as u32)];
                check_offsets(f, lens);
                let _ = tok.decode(&ids(f), true);
                let _ = tok.decode(&ids(f), false);
            }
            (Err(x), Err(y)) => assert_eq!(x.to_string(), y.to_string()),
            _ => panic!("fast and staged disagree on success: {:?} vs {:?} on {a:?}", fast.is_ok(), staged.is_ok()),
        }
        match (&fast_single, &fast_ids) {
            (Ok(e), Ok(got)) => assert_eq!(&ids(e), got, "encode_ids differs from encode on {a:?}"),
            (Err(_), Err(_)) => {}
            _ => panic!("encode_ids and encode disagree on success on {a:?}"),
        }
        match (&staged_batch, &fast_batch, &fast) {
            (Ok(sb), Ok(fb), Ok(f)) => {
                assert_eq!(ids(&sb[0]), ids(&fb[0]));
                if tok.padding.as_ref().is_none_or(|p| p.strategy != PaddingStrategy::BatchLongest) {
                    assert_eq!(ids(&fb[0]), ids(f), "a batch of one differs from encode on {a:?}");
                }
            }
            (Err(_), Err(_), Err(_)) => {}
            _ => panic!("batch and single encode disagree on success on {a:?}"),
        }
        // Ids that may not exist: decode must not panic.
        let odd: Vec<u32> = rest.chunks(3).map(|c| c.iter().fold(0u32, |x, &y| x << 8 | y as u32)).collect();
        let _ = tok.decode(&odd, fpb & 0x40 != 0);
        if a.len() <= 256 {
            tok.truncation = None;
            tok.padding = None;
            let tr = tok.trace(&a).unwrap();
            let e = tok.encode(&a, None, true).expect("no truncation, no error");
            assert_eq!(tr.ids, ids(&e), "trace and encode differ on {a:?}");
            assert_eq!(tr.offsets, all(e.offsets()), "trace and encode offsets differ on {a:?}");
        }
    });
});
