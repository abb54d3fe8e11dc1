//! The BERT normalizer with every option combination: the fast paths (each switch on and
//! off) must give exactly the staged pipeline's text, the staged alignment must point into
//! the input, and the Unicode normalization forms must be stable (NFx(NFx(s)) == NFx(s),
//! NFC(NFD(s)) == NFC(s)).
//!
//! Input: one byte of options (bits 0-4: clean_text, handle_chinese_chars,
//! strip_accents None/Some, its value, lowercase), the rest is the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenprism::fused::{bert_normalizer::normalize, FastPaths, Stats};
use tokenprism::normalizers::bert::{self, BertNormalizerConfig};
use tokenprism::normalizers::charmap::PageCache;
use tokenprism::normalizers::Normalizer;
use tokenprism::unicode::forms::{self, Form};

fuzz_target!(|data: &[u8]| {
    let Some((&opt, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let cfg = BertNormalizerConfig {
        clean_text: opt & 1 != 0,
        handle_chinese_chars: opt & 2 != 0,
        strip_accents: if opt & 4 != 0 { Some(opt & 8 != 0) } else { None },
        lowercase: opt & 16 != 0,
    };
    let want = bert::normalize(&cfg, &text);
    let n_in = text.chars().count() as u32;
    assert_eq!(want.orig.len(), want.text.chars().count(), "one alignment entry per char");
    assert!(want.orig.iter().all(|&o| o < n_in), "alignment points past the input");
    // The Normalizer enum's path is the same pipeline.
    assert_eq!(Normalizer::Bert(cfg).normalize(&text), want.text);

    let cache = PageCache::new(cfg);
    for bits in 0..8u32 {
        let fp = FastPaths {
            simd: bits & 1 != 0,
            page_cache: bits & 2 != 0,
            lazy_output: bits & 4 != 0,
            fused: true,
        };
        let mut st = Stats::detailed();
        let got = normalize(&cache, fp, &text, Some(&mut st));
        assert_eq!(got, want.text, "{cfg:?} {fp:?} on {text:?}");
        if fp.lazy_output && want.text == *text {
            assert!(matches!(got, std::borrow::Cow::Borrowed(_)), "unchanged text must not be copied");
        }
    }

    // Unicode normalization forms (the opt byte picks one to check fully; all must not panic).
    let form = Form::ALL[(opt >> 5) as usize % 4];
    let once = forms::normalize(&text, form);
    assert_eq!(forms::normalize(&once, form), once, "{form:?} is not idempotent on {text:?}");
    assert!(forms::is_normalized(&once, form), "{form:?} output not reported normalized");
    if form == Form::Nfc {
        let nfd = forms::normalize(&text, Form::Nfd);
        assert_eq!(forms::normalize(&nfd, Form::Nfc), once, "NFC(NFD(s)) != NFC(s) on {text:?}");
    }
    let items = forms::normalize_items(&text, form);
    assert_eq!(items.iter().map(|x| x.0).collect::<String>(), once);
    let seq =
        Normalizer::Sequence(vec![Normalizer::Form(form), Normalizer::Lowercase, Normalizer::StripAccents]);
    let _ = seq.normalize(&text);
});
