//! Encode a file with a tiktoken encoding and print MB/s (for profiling the BPE path).
//!
//!     cargo run --release --example bpe_encode -- o200k_base ~/.cache/tokenprism/data/corpora/en.txt [rounds]

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map(String::as_str).unwrap_or("o200k_base");
    let path = args.get(2).expect("usage: bpe_encode ENCODING FILE [ROUNDS]");
    let rounds: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
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
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        n = tok.encode_ordinary(&text).len();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{name}: {n} ids, best {:.1} MB/s", text.len() as f64 / best / 1e6);
}
