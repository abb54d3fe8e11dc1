//! BertPreTokenizer on its own (pieces are the non-whitespace text, in order, on char
//! boundaries, punctuation alone) and fused with the normalizer: the fused pass's words
//! and their alignment must equal normalizing, then splitting, for every switch setting.
//!
//! Input: one byte of options (normalizer switches as in the normalizer target), then text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenprism::fused::bert_words::{for_each_word, Word};
use tokenprism::fused::FastPaths;
use tokenprism::normalizers::bert::{self, BertNormalizerConfig};
use tokenprism::normalizers::charmap::PageCache;
use tokenprism::pre_tokenizers::bert::split;

fuzz_target!(|data: &[u8]| {
    let Some((&opt, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);

    // The plain splitter.
    let mut pieces = Vec::new();
    split(&text, |p| pieces.push(p));
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut rebuilt = String::new();
    let (mut last_b, mut last_c) = (0, 0);
    for p in &pieces {
        assert!(p.byte_start < p.byte_end && p.byte_end <= text.len());
        assert!(text.is_char_boundary(p.byte_start) && text.is_char_boundary(p.byte_end));
        assert!(p.byte_start >= last_b && p.char_start >= last_c, "pieces out of order");
        let w = &text[p.byte_start..p.byte_end];
        assert_eq!(w.chars().count(), p.char_end - p.char_start);
        assert_eq!(chars[p.char_start].0, p.byte_start, "char and byte ranges disagree");
        assert!(!w.chars().any(char::is_whitespace), "whitespace inside a piece {w:?}");
        if w.chars().count() > 1 {
            assert!(
                !w.chars().any(tokenprism::unicode::is_bert_punctuation),
                "punctuation not split off in {w:?}"
            );
        }
        rebuilt.push_str(w);
        (last_b, last_c) = (p.byte_end, p.char_end);
    }
    let kept: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    assert_eq!(rebuilt, kept, "pieces do not cover the non-whitespace text");

    // Fused normalizer + pre-tokenizer against the staged pipeline.
    let cfg = BertNormalizerConfig {
        clean_text: opt & 1 != 0,
        handle_chinese_chars: opt & 2 != 0,
        strip_accents: if opt & 4 != 0 { Some(opt & 8 != 0) } else { None },
        lowercase: opt & 16 != 0,
    };
    let n = bert::normalize(&cfg, &text);
    let mut want = Vec::new();
    split(&n.text, |p| {
        want.push((n.text[p.byte_start..p.byte_end].to_owned(), n.orig[p.char_start..p.char_end].to_vec()))
    });
    let base = (opt >> 5) as u32 * 1000; // offsets start anywhere
    let cache = PageCache::new(cfg);
    for bits in 0..8u32 {
        let fp = FastPaths {
            simd: bits & 1 != 0,
            page_cache: bits & 2 != 0,
            lazy_output: bits & 4 != 0,
            fused: true,
        };
        let mut got = Vec::new();
        let mut w = Word::default();
        let r = for_each_word(&cache, fp, &text, base, &mut w, None, |v| {
            assert_eq!(v.word.padded().len(), v.word.len() + 16, "a word is followed by 16 readable bytes");
            got.push((v.text().to_owned(), (0..v.n_chars).map(|k| v.orig.at(k) - base).collect::<Vec<u32>>()))
        });
        match r {
            Ok(()) => assert_eq!(got, want, "{cfg:?} {fp:?} on {text:?}"),
            // Only canonical reordering may send the fused pass to the staged pipeline.
            Err(_) => assert!(cfg.strips_accents(), "{cfg:?} refused {text:?}"),
        }
    }
});
