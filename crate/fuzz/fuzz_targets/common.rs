//! Shared by the targets: where the real tokenizer files are (`./build.sh setup` fetches them
//! into $TOKENPRISM_DATA, default ~/.cache/tokenprism/data).
#![allow(dead_code)]

use std::path::PathBuf;

pub fn data_file(rel: &str) -> Vec<u8> {
    let dir = std::env::var_os("TOKENPRISM_DATA").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tokenprism/data")
    });
    let p = dir.join(rel);
    std::fs::read(&p).unwrap_or_else(|e| {
        panic!("{}: {e} (run ./build.sh setup to fetch the tokenizer files)", p.display())
    })
}

/// Bytes to text: valid UTF-8 as is, otherwise with U+FFFD for the bad bytes.
pub fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}
