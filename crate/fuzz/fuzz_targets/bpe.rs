//! Byte-level BPE on the real vocabularies (r50k, cl100k, o200k from tiktoken files; GPT-2 and
//! Qwen3 from tokenizer.json): decode(encode(x)) == x (NFC of x for Qwen3), with and without
//! special tokens; the per-token texts concatenate to the decoded text; the linear merge
//! agrees with the step-by-step merge; batches, repeats (piece cache) and threads agree.
//!
//! Input bytes: [variant] text.
#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tokenprism::normalizers::nfc;
use tokenprism::tokenizer::bpe::{Allowed, BpeTokenizer};

const NAMES: [&str; 5] = ["r50k_base", "cl100k_base", "o200k_base", "gpt2-json", "qwen3-json"];
static TOKS: [OnceLock<BpeTokenizer>; 5] = [const { OnceLock::new() }; 5];

fn tok(v: usize) -> &'static BpeTokenizer {
    TOKS[v].get_or_init(|| match NAMES[v] {
        "gpt2-json" => BpeTokenizer::from_hf_json(
            std::str::from_utf8(&common::data_file("bpe/gpt2/tokenizer.json")).unwrap(),
        )
        .unwrap(),
        "qwen3-json" => BpeTokenizer::from_hf_json(
            std::str::from_utf8(&common::data_file("bpe/qwen3/tokenizer.json")).unwrap(),
        )
        .unwrap(),
        name => BpeTokenizer::from_tiktoken_named(name, &common::data_file(&format!("bpe/{name}.tiktoken")))
            .unwrap(),
    })
}

fuzz_target!(init: {
    // Load every vocabulary before fuzzing, so loading is not charged to an input.
    (0..NAMES.len()).for_each(|v| { tok(v); });
}, |data: &[u8]| {
    let Some((&v, rest)) = data.split_first() else { return };
    let v = v as usize % NAMES.len();
    let t = tok(v);
    let text = common::text(rest);
    let expect = if t.normalizes_nfc() { nfc::nfc_unicode9(&text).into_owned() } else { text.to_string() };

    let ids = t.encode_ordinary(&text);
    let back = t.decode_bytes(&ids).expect("encode gives known ids");
    assert_eq!(back, expect.as_bytes(), "{}: decode(encode(x)) != x for {text:?}", NAMES[v]);
    assert_eq!(t.encode_ordinary(&text), ids, "{}: second encode (piece cache) differs", NAMES[v]);
    let pieces = t.decode_pieces(&ids).unwrap();
    assert_eq!(pieces.concat(), t.decode(&ids).unwrap(), "decode_pieces does not concatenate to decode");
    assert_eq!(pieces.len(), ids.len());

    // Special tokens allowed: the text still decodes to itself (Qwen3's NFC applies only
    // between special tokens, so it is checked only without specials).
    match t.encode(&text, &Allowed::All) {
        Ok(ids2) => {
            if !t.normalizes_nfc() {
                assert_eq!(t.decode_bytes(&ids2).unwrap(), text.as_bytes(), "{}: with specials", NAMES[v]);
            }
        }
        Err(e) => panic!("allowing every special token cannot fail: {e}"),
    }
    // Disallowed specials: an error exactly when the text holds one.
    let has_special = t.added_tokens().iter().any(|a| a.special && text.contains(&*a.content));
    assert_eq!(t.encode(&text, &Allowed::none()).is_err(), has_special, "{}: disallowed check on {text:?}", NAMES[v]);

    // Threads: a batch of the halves of the text on two threads.
    let cut = (0..=text.len() / 2).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let parts = [&text[..cut], &text[cut..], &text[..]];
    let batch = t.encode_batch(&parts, &Allowed::none(), &Allowed::none(), 2).unwrap();
    for (p, got) in parts.iter().zip(&batch) {
        assert_eq!(got, &t.encode_ordinary(p), "batch differs from single encode");
    }

    // The merge of each pre-token agrees with the naive step-by-step merge (tiktoken-style
    // files: there a pre-token is encoded alone, so the pieces' ids concatenate to `ids`).
    if !t.normalizes_nfc() && v < 3 {
        let mut all = Vec::new();
        for piece in t.pre_tokenize(&text) {
            if piece.len() > 512 {
                return;
            }
            let tr = t.trace_piece(piece.as_bytes()).unwrap();
            let merged = tr.steps.last().map_or(&tr.initial, |s| &s.parts);
            if tr.whole_token.is_none() {
                assert_eq!(merged, &tr.ids, "{}: merge and step-by-step merge differ on {piece:?}", NAMES[v]);
            }
            all.extend(tr.ids);
        }
        assert_eq!(all, ids, "{}: per-piece ids differ from encode on {text:?}", NAMES[v]);
    }
    // Unknown ids are an error, never a panic.
    let odd: Vec<u32> = rest.chunks(4).map(|c| c.iter().fold(0u32, |x, &y| x << 8 | y as u32)).collect();
    let _ = t.decode_bytes(&odd);
    let _ = t.decode_pieces(&odd);
});
