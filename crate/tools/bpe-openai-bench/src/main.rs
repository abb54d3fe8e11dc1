//! Times bpe-openai and tokenprism's Rust API on the same documents, in one process.
//!
//!     bpe-openai-bench ENCODING RANK_FILE DOCS.json ROUNDS MIN_SECONDS
//!
//! DOCS.json is a list of strings (scripts/bench/bpe_bench.py writes it). Each implementation
//! encodes every document once to check its ids (FNV-1a 64 of all ids, and equality with
//! tokenprism's), then ROUNDS rounds alternate which goes first; a run repeats whole passes
//! over the documents until MIN_SECONDS. Prints one JSON object: per implementation the seconds per pass of each
//! round, the ids hash, and whether bpe-openai's ids equal tokenprism's.

use std::time::Instant;

fn fnv_step(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01b3)
}

/// The ids hash of scripts/bench/bpe_bench_worker.py: FNV-1a 64 (one step per id) of each
/// document, then of [number of documents, document hashes...], as 16 hex digits.
fn fnv(ids: &[Vec<u32>]) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    let per_doc = ids.iter().map(|doc| doc.iter().fold(OFFSET, |h, &id| fnv_step(h, id as u64)));
    let h = per_doc.fold(fnv_step(OFFSET, ids.len() as u64), fnv_step);
    format!("{h:016x}")
}

/// Seconds per pass over `docs`, repeating passes for at least `min_s` seconds.
fn time_pass(docs: &[String], min_s: f64, mut encode: impl FnMut(&str) -> usize) -> f64 {
    let start = Instant::now();
    let mut passes = 0u32;
    let mut sink = 0usize;
    loop {
        for d in docs {
            sink = sink.wrapping_add(encode(d));
        }
        passes += 1;
        let t = start.elapsed().as_secs_f64();
        if t >= min_s {
            std::hint::black_box(sink);
            return t / passes as f64;
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 6 {
        eprintln!("usage: bpe-openai-bench ENCODING RANK_FILE DOCS.json ROUNDS MIN_SECONDS");
        std::process::exit(2);
    }
    let (enc, rank_file, docs_file) = (&a[1], &a[2], &a[3]);
    let rounds: usize = a[4].parse().expect("ROUNDS");
    let min_s: f64 = a[5].parse().expect("MIN_SECONDS");
    let docs: Vec<String> = serde_json::from_slice(&std::fs::read(docs_file).expect("read DOCS"))
        .expect("DOCS is a JSON list of str");
    let ranks = std::fs::read(rank_file).expect("read RANK_FILE");
    let ours = tokenprism::tokenizer::bpe::BpeTokenizer::from_tiktoken_named(enc, &ranks)
        .expect("a tiktoken encoding");
    let theirs = match enc.as_str() {
        "o200k_base" => bpe_openai::o200k_base(),
        "cl100k_base" => bpe_openai::cl100k_base(),
        _ => panic!("bpe-openai has o200k_base and cl100k_base"),
    };
    let ids_ours: Vec<Vec<u32>> = docs.iter().map(|d| ours.encode_ordinary(d)).collect();
    let ids_theirs: Vec<Vec<u32>> = docs.iter().map(|d| theirs.encode(d.as_str())).collect();
    let bytes: usize = docs.iter().map(String::len).sum();
    let mut t_ours = Vec::new();
    let mut t_theirs = Vec::new();
    for r in 0..rounds {
        let mut run_ours = || t_ours.push(time_pass(&docs, min_s, |d| ours.encode_ordinary(d).len()));
        let mut run_theirs = || t_theirs.push(time_pass(&docs, min_s, |d| theirs.encode(d).len()));
        if r % 2 == 0 {
            run_ours();
            run_theirs();
        } else {
            run_theirs();
            run_ours();
        }
    }
    let out = serde_json::json!({
        "bytes": bytes,
        "docs": docs.len(),
        "tokenprism": {"seconds": t_ours, "fnv1a64": fnv(&ids_ours), "version": "rust api"},
        "bpe-openai": {"seconds": t_theirs, "fnv1a64": fnv(&ids_theirs), "version": "0.3.2",
                        "ids_equal_tokenprism": ids_ours == ids_theirs},
    });
    println!("{out}");
}
