//! The tiktoken rank-file loader on arbitrary bytes: Ok or Err, never a panic. Most random
//! files lack some single byte and are refused, so the input may also be appended to a
//! file that has all 256 bytes (first input byte odd); whatever loads must round-trip text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenprism::loaders::tiktoken as load;
use tokenprism::tokenizer::bpe::{Allowed, BpeTokenizer, Pattern};

const PROBES: [&str; 3] =
    ["Hello, world! héllo 東京 <|endoftext|>", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", " \n\n  x1234567 'll"];

fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in b.chunks(3) {
        let n = c.iter().enumerate().fold(0u32, |x, (i, &y)| x | (y as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let mut file = Vec::new();
    if mode & 1 == 1 {
        for b in 0..=255u8 {
            file.extend_from_slice(format!("{} {}\n", base64(&[b]), b).as_bytes());
        }
    }
    file.extend_from_slice(rest);
    // The decoder agrees with an encoder written here, on the input's own bytes.
    assert_eq!(load::base64_decode(base64(rest).as_bytes()).as_deref(), Some(rest));
    let _ = load::parse_tiktoken(&file);
    let pattern = [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k][(mode >> 1) as usize % 3];
    let specials = [("<|endoftext|>".to_string(), 100_000u32 + (mode as u32 >> 3))];
    let Ok(t) = BpeTokenizer::from_tiktoken("fuzz", &file, pattern, &specials) else { return };
    for p in PROBES {
        let ids = t.encode_ordinary(p);
        assert_eq!(t.decode_bytes(&ids).unwrap(), p.as_bytes(), "round trip through a fuzzed rank file");
        let _ = t.encode(p, &Allowed::All);
        let _ = t.trace_piece(p.as_bytes());
    }
});
