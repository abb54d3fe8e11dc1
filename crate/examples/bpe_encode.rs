//! Encode a file with a tiktoken encoding and print MB/s (for profiling the BPE path).
//!
//!     cargo run --release --example bpe_encode -- o200k_base ~/.cache/tokenprism/data/corpora/en.txt [rounds] [doc_bytes]
//!
//! With `doc_bytes`, the file is encoded as documents of whole lines of at least that many
//! bytes, one call each (as the benchmarks call from Python), not in one call.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map(String::as_str).unwrap_or("o200k_base");
    let path = args.get(2).expect("usage: bpe_encode ENCODING FILE [ROUNDS]");
    let rounds: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
    let doc_bytes: Option<usize> = args.get(4).and_then(|r| r.parse().ok());
    let home = std::env::var("HOME").unwrap();
    let data = std::env::var("TOKENPRISM_DATA").unwrap_or(format!("{home}/.cache/tokenprism/data"));
    let t0 = Instant::now();
    let tok = if name.ends_with(".json") {
        tokenprism::tokenizer::bpe::BpeTokenizer::from_hf_json(&std::fs::read_to_string(name).unwrap())
            .unwrap()
    } else {
        let ranks = std::fs::read(format!("{data}/bpe/{name}.tiktoken")).unwrap();
        tokenprism::tokenizer::bpe::BpeTokenizer::from_tiktoken_named(name, &ranks).unwrap()
    };
    eprintln!("load {:.3} s", t0.elapsed().as_secs_f64());
    let text = std::fs::read_to_string(path).unwrap();
    let docs = match doc_bytes {
        Some(min) => documents(&text, min),
        None => vec![text.as_str()],
    };
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        n = docs.iter().map(|d| tok.encode_ordinary(d).len()).sum();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{name}: {n} ids, best {:.1} MB/s", text.len() as f64 / best / 1e6);
}

/// `text` cut into runs of whole lines (ends kept) of at least `min` bytes, the last one shorter.
fn documents(text: &str, min: usize) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices('\n') {
        if i + 1 - start >= min {
            docs.push(&text[start..i + 1]);
            start = i + 1;
        }
    }
    if start < text.len() {
        docs.push(&text[start..]);
    }
    docs
}
