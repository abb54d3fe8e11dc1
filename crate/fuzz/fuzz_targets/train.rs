//! The BPE trainer (chapter and byte-level): training ends, every merge is the most frequent
//! pair of the words as they are split at that moment (recounted from scratch, so the
//! incremental pair counts are checked; for the first 24 merges, which keeps an input
//! cheap), counts never increase, a run stopped by the progress callback and resumed makes
//! the same merges as one run, the chapter `tokenize` of a word concatenates back to the
//! word, and a byte-level result exports as a tokenizer.json that encodes and decodes the
//! text losslessly.
//!
//! Input bytes: [mode] [vocab headroom] [stop after] text (at most 2 KiB of text, so the
//! from-scratch recount after each merge stays cheap).
#![no_main]

#[path = "common.rs"]
mod common;

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use tokenprism::train::{apply_merge, export, is_py_space, Config, Control, Mode, Trainer, END_OF_WORD};

fuzz_target!(|data: &[u8]| {
    let [mode, headroom, stop_after, rest @ ..] = data else { return };
    if rest.len() > 2048 {
        return;
    }
    let text = common::text(rest);
    let byte_level = mode & 1 == 1;
    let mode = if byte_level { Mode::ByteLevel } else { Mode::Chapter };
    let base = if byte_level { 256 } else { 0 };
    let config = Config { mode, vocab_size: base + *headroom as usize, min_frequency: 0 };
    let mut t = match Trainer::new(&[&text], &config) {
        Ok(t) => t,
        Err(e) => panic!("a valid config was refused: {e}"),
    };

    // Chapter mode: the words, to recount pairs from scratch after each merge.
    let words: Vec<&str> =
        if byte_level { Vec::new() } else { text.split(is_py_space).filter(|w| !w.is_empty()).collect() };
    let mut freq: HashMap<&str, u64> = HashMap::new();
    for w in &words {
        *freq.entry(w).or_default() += 1;
    }

    let mut last = u64::MAX;
    let mut steps = 0usize;
    while let Some(m) = t.step() {
        steps += 1;
        assert!(steps <= 256, "more merges than the vocabulary allows");
        assert!(m.count <= last, "pair counts went up: {} after {}", m.count, last);
        assert!(m.count > 0);
        last = m.count;
        if !byte_level && steps <= 24 {
            // Split every word with the merges so far (the last one included) and count
            // the merged symbol and every adjacent pair before it.
            let mut pairs: HashMap<(u32, u32), u64> = HashMap::new();
            let mut made = 0u64;
            let before = &t.merges()[..t.merges().len() - 1];
            for (w, &f) in &freq {
                let parts = split_with(&t, w, before);
                for p in parts.windows(2) {
                    *pairs.entry((p[0], p[1])).or_default() += f;
                }
                let after = t.tokenize_ids(w).0;
                made += f * after.iter().filter(|&&id| id == m.id).count() as u64;
            }
            let best = pairs.values().copied().max().unwrap_or(0);
            assert_eq!(
                pairs.get(&(m.left, m.right)).copied(),
                Some(m.count),
                "merge count is not the recount"
            );
            assert_eq!(m.count, best, "merged a pair that is not the most frequent");
            assert!(made >= 1, "the new symbol does not occur after its merge");
        }
    }
    let merges = t.merges().to_vec();

    // Stopped by the callback after `stop_after` merges, then resumed: the same merges.
    let mut u = Trainer::new(&[&text], &config).unwrap();
    // The callback runs after each merge, so a stop at k = 0 still makes one merge.
    let k = (*stop_after as usize).max(1);
    let done = u.train(|p| if p.done >= k { Control::Stop } else { Control::Continue }, None);
    assert!(done || u.merges().len() == k, "stopped after {} merges, not {k}", u.merges().len());
    u.train(|_| Control::Continue, None);
    assert_eq!(u.merges(), &merges[..], "stop and resume changed the merges");

    if byte_level {
        let json = export::tokenizer_json(&t).expect("a byte-level result exports");
        let tok = tokenprism::tokenizer::bpe::BpeTokenizer::from_hf_json(&json).expect("the export loads");
        let ids = tok.encode_ordinary(&text);
        assert_eq!(tok.decode_bytes(&ids).unwrap(), text.as_bytes(), "trained tokenizer is not lossless");
        for w in text.split(' ').take(8) {
            assert_eq!(t.tokenize_bytes(w).concat(), w.as_bytes());
        }
    } else {
        for w in words.iter().take(8) {
            let pieces = t.tokenize_bytes(w).concat();
            assert_eq!(pieces, [w.as_bytes(), END_OF_WORD.as_bytes()].concat());
        }
    }
});

/// The chapter's split of `word` (chars plus the end marker) with `merges` applied in order.
fn split_with(t: &Trainer, word: &str, merges: &[tokenprism::train::Merge]) -> Vec<u32> {
    let symbols = t.symbols();
    let id_of = |s: &[u8]| symbols.iter().position(|x| x == s).map(|i| i as u32).unwrap_or(u32::MAX);
    let mut parts: Vec<u32> = word
        .chars()
        .map(|c| id_of(c.to_string().as_bytes()))
        .chain([id_of(END_OF_WORD.as_bytes())])
        .collect();
    let mut out = Vec::with_capacity(parts.len());
    for m in merges {
        apply_merge(&parts, m, &mut out);
        std::mem::swap(&mut parts, &mut out);
    }
    parts
}
