//! The tokenizer.json loaders (WordPiece and byte-level BPE) on arbitrary bytes: Ok or Err,
//! never a panic, a hang or a runaway allocation; whatever loads must encode, decode and
//! trace a few strings without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenprism::tokenizer::bpe::{Allowed, BpeTokenizer};
use tokenprism::Tokenizer;

const PROBES: [&str; 4] = ["Hello, world! héllo 東京", "[CLS] [MASK] <|endoftext|>", "", "  \t\n x"];

fuzz_target!(|data: &[u8]| {
    let Ok(json) = std::str::from_utf8(data) else { return };
    if let Ok(t) = Tokenizer::from_json_str(json) {
        for p in PROBES {
            if let Ok(e) = t.encode(p, Some(p), true) {
                let _ = t.decode(&e.ids().collect::<Vec<_>>(), true);
                let _ = e.tokens();
            }
            let _ = t.encode_ids(p, false);
            let _ = t.trace(p);
            let _ = t.normalize_str(p, None);
        }
        let _ = t.vocab_size();
        let _ = t.decode(&[0, 1, 2, u32::MAX], false);
    }
    if let Ok(t) = BpeTokenizer::from_hf_json(json) {
        for p in PROBES {
            let ids = t.encode_ordinary(p);
            let _ = t.decode_bytes(&ids);
            let _ = t.encode(p, &Allowed::All);
            let _ = t.pre_tokenize(p);
            let _ = t.trace_piece(p.as_bytes());
        }
        let _ = t.decode_pieces(&[0, 1, u32::MAX]);
    }
});
