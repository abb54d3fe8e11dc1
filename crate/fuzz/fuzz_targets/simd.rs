//! Every SIMD kernel this CPU runs against the scalar oracle (crate::simd::scalar), for
//! folding and classifying one block and for the ASCII prefix length.
//!
//! Input: one byte of options (bit 0 lower, bit 1 clean), the rest is read in blocks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenprism::simd::{scalar, Block, Kernel};

fuzz_target!(|data: &[u8]| {
    let Some((&opt, rest)) = data.split_first() else { return };
    let (lower, clean) = (opt & 1 != 0, opt & 2 != 0);
    for k in Kernel::all_available() {
        let n = k.lanes();
        // Every block of the input, starting at every offset modulo the block size, so a
        // byte is seen in every lane.
        for shift in 0..n.min(rest.len().max(1)) {
            for chunk in rest.get(shift..).unwrap_or(&[]).chunks(n) {
                let mut src = [b'a'; 32];
                src[..chunk.len()].copy_from_slice(chunk);
                let (mut want, mut got) = ([0u8; 32], [0u8; 32]);
                let w = scalar::fold_ascii_block(&src[..n], &mut want[..n], lower, clean);
                let g = k.fold_block(&src, &mut got, lower, clean);
                assert_eq!(g, w, "{} fold {:?} lower={lower} clean={clean}", k.name(), &src[..n]);
                if let Block::Folded { .. } = w {
                    assert_eq!(&got[..n], &want[..n], "{} fold output", k.name());
                }
                let w = scalar::classify_ascii_block(&src[..n], &mut want[..n], lower, clean);
                let g = k.classify_block(&src, &mut got, lower, clean);
                // Lanes at and after the first stop are unspecified.
                let valid = w.stop.trailing_zeros() as usize;
                let m = if valid >= 32 { u32::MAX } else { (1u32 << valid) - 1 };
                assert_eq!(
                    g.stop.trailing_zeros(),
                    w.stop.trailing_zeros(),
                    "{} stop on {:?}",
                    k.name(),
                    &src[..n]
                );
                assert_eq!(
                    (g.punct & m, g.space & m),
                    (w.punct & m, w.space & m),
                    "{} classes on {:?}",
                    k.name(),
                    &src[..n]
                );
                assert_eq!(&got[..valid.min(n)], &want[..valid.min(n)], "{} classify output", k.name());
            }
        }
        let naive = rest.iter().take_while(|b| b.is_ascii()).count();
        assert_eq!(k.ascii_prefix_len(rest), naive, "{} ascii_prefix_len", k.name());
    }
});
