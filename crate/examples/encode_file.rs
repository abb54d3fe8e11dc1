//! Encodes a text file with a tokenizer.json, for profiling (callgrind) and quick timing:
//! `cargo run --release --example encode_file -- tokenizer.json corpus.txt [rounds] [mode]`
//! Modes: `encode` (default: the full Encoding, then its ids as a vector: what
//! `tok.encode(doc).ids` costs short of the Python ints), `ids` (`encode_ids`), `normalize`.
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: encode_file TOKENIZER_JSON TEXT_FILE [ROUNDS] [normalize|encode|ids]");
        std::process::exit(2);
    }
    let json = std::fs::read_to_string(&args[1]).expect("read tokenizer");
    let text = std::fs::read_to_string(&args[2]).expect("read text");
    let rounds: usize = args.get(3).map_or(1, |r| r.parse().expect("rounds"));
    let what = args.get(4).map_or("encode", |s| s.as_str());
    let mut tok = tokenprism::Tokenizer::from_json_str(&json).expect("load");
    tok.truncation = None;
    tok.padding = None;
    let t0 = Instant::now();
    let mut n = 0usize;
    for _ in 0..rounds {
        n += match what {
            "normalize" => tok.normalize_str(&text, None).len(),
            "ids" => tok.encode_ids(&text, false).expect("encode").len(),
            // What `tok.encode(doc).ids` costs a Python user, short of the Python ints: the
            // whole Encoding, then its ids as a vector of their own (as `.ids` builds a list).
            _ => {
                let enc = tok.encode(&text, None, false).expect("encode");
                std::hint::black_box(enc.ids().collect::<Vec<u32>>()).len()
            }
        };
    }
    let s = t0.elapsed().as_secs_f64();
    println!("{what}: {n} units, {:.1} MB/s", (text.len() * rounds) as f64 / s / 1e6);
}
