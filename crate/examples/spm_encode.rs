//! Encode a file with a SentencePiece `.model` and print MB/s, for the whole text and for the
//! normalizer alone (for profiling the SentencePiece path).
//!
//!     cargo run --release --example spm_encode -- MODEL FILE [BYTES] [ROUNDS]

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = args.get(1).expect("usage: spm_encode MODEL FILE [BYTES] [ROUNDS]");
    let path = args.get(2).expect("usage: spm_encode MODEL FILE [BYTES] [ROUNDS]");
    let bytes: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(200_000);
    let rounds: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(5);
    let tok =
        tokenprism::loaders::sentencepiece::tokenizer_from_model(&std::fs::read(model).unwrap()).unwrap();
    let all = std::fs::read_to_string(path).unwrap();
    let mut end = bytes.min(all.len());
    while !all.is_char_boundary(end) {
        end -= 1;
    }
    let text = &all[..end];
    let Some(tokenprism::normalizers::Normalizer::SentencePiece(norm)) = &tok.normalizer else {
        panic!("not a SentencePiece pipeline")
    };
    let mut best = (f64::MAX, f64::MAX);
    let mut n = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let s = norm.normalize_str(text);
        best.0 = best.0.min(t.elapsed().as_secs_f64());
        std::hint::black_box(s);
        let t = Instant::now();
        n = tok.encode_ids(text, false).unwrap().len();
        best.1 = best.1.min(t.elapsed().as_secs_f64());
    }
    let mbs = |s: f64| text.len() as f64 / s / 1e6;
    println!("{n} ids; normalizer {:.1} MB/s, encode_ids {:.1} MB/s", mbs(best.0), mbs(best.1));
}
