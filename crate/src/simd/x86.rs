//! SSE2 (x86_64 baseline) and AVX2 (detected at run time) lanes, and AVX-512BW (detected at
//! run time) for the 64-byte masks.
//!
//! ASCII lanes are below 0x80, so the signed byte compares of SSE2/AVX2 order them
//! correctly; `in_ascii_range` relies on that.

use super::{byte_masks, classify_ascii_block, fold_ascii_block, Block, ByteMasks, Classes, Vector};
use core::arch::x86_64::*;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy)]
pub struct Sse2(__m128i);

#[derive(Clone, Copy)]
pub struct Avx2(__m256i);

/// Cached `is_x86_feature_detected!("avx2")`: 0 unknown, 1 no, 2 yes.
static AVX2: AtomicU8 = AtomicU8::new(0);

pub fn has_avx2() -> bool {
    match AVX2.load(Ordering::Relaxed) {
        0 => {
            let yes = std::is_x86_feature_detected!("avx2");
            AVX2.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
        v => v == 2,
    }
}

/// Cached detection of what [`super::Kernel::Avx512`] needs: AVX-512BW, AVX2 (its 32-byte
/// blocks), and the bit instructions of the scanners compiled for it (BMI1, BMI2, LZCNT,
/// POPCNT; every AVX-512 CPU has them): 0 unknown, 1 no, 2 yes.
static AVX512: AtomicU8 = AtomicU8::new(0);

pub fn has_avx512() -> bool {
    match AVX512.load(Ordering::Relaxed) {
        0 => {
            let yes = has_avx2()
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("bmi1")
                && std::is_x86_feature_detected!("bmi2")
                && std::is_x86_feature_detected!("lzcnt")
                && std::is_x86_feature_detected!("popcnt");
            AVX512.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
        v => v == 2,
    }
}

// SAFETY (all methods): SSE2 is part of the x86_64 baseline, so these intrinsics are
// always available; loads and stores are unaligned and the caller guarantees 16 bytes.
impl Vector for Sse2 {
    const LANES: usize = 16;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { Sse2(_mm_loadu_si128(p as *const __m128i)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { _mm_storeu_si128(p as *mut __m128i, self.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { Sse2(_mm_set1_epi8(b as i8)) }
    }
    #[inline(always)]
    unsafe fn high_bits(self) -> u32 {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { _mm_movemask_epi8(self.0) as u32 }
    }
    #[inline(always)]
    unsafe fn eq_ascii(self, b: u8) -> Self {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { Sse2(_mm_cmpeq_epi8(self.0, _mm_set1_epi8(b as i8))) }
    }
    #[inline(always)]
    unsafe fn in_ascii_range(self, lo: u8, hi: u8) -> Self {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe {
            let ge = _mm_cmpgt_epi8(self.0, _mm_set1_epi8((lo - 1) as i8));
            let le = _mm_cmpgt_epi8(_mm_set1_epi8((hi + 1) as i8), self.0);
            Sse2(_mm_and_si128(ge, le))
        }
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { Sse2(_mm_or_si128(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { Sse2(_mm_and_si128(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn and_not(self, o: Self) -> Self {
        // _mm_andnot_si128(a, b) is !a & b.
        // SAFETY: SSE2 is x86_64 baseline; memory as the impl's note says.
        unsafe { Sse2(_mm_andnot_si128(o.0, self.0)) }
    }
}

// SAFETY (all methods): only reached through `fold_avx2`, whose caller has verified AVX2;
// loads and stores are unaligned and the caller guarantees 32 bytes.
impl Vector for Avx2 {
    const LANES: usize = 32;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { Avx2(_mm256_loadu_si256(p as *const __m256i)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { _mm256_storeu_si256(p as *mut __m256i, self.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { Avx2(_mm256_set1_epi8(b as i8)) }
    }
    #[inline(always)]
    unsafe fn high_bits(self) -> u32 {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { _mm256_movemask_epi8(self.0) as u32 }
    }
    #[inline(always)]
    unsafe fn eq_ascii(self, b: u8) -> Self {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { Avx2(_mm256_cmpeq_epi8(self.0, _mm256_set1_epi8(b as i8))) }
    }
    #[inline(always)]
    unsafe fn in_ascii_range(self, lo: u8, hi: u8) -> Self {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe {
            let ge = _mm256_cmpgt_epi8(self.0, _mm256_set1_epi8((lo - 1) as i8));
            let le = _mm256_cmpgt_epi8(_mm256_set1_epi8((hi + 1) as i8), self.0);
            Avx2(_mm256_and_si256(ge, le))
        }
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { Avx2(_mm256_or_si256(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { Avx2(_mm256_and_si256(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn and_not(self, o: Self) -> Self {
        // SAFETY: AVX2 was verified by the caller; memory as the impl's note says.
        unsafe { Avx2(_mm256_andnot_si256(o.0, self.0)) }
    }
}

/// # Safety
/// `src`/`dst` valid for 16 bytes of reads/writes.
#[inline]
pub unsafe fn fold_sse2(src: *const u8, dst: *mut u8, lower: bool, clean: bool) -> Block {
    // SAFETY: forwarded from the caller; SSE2 is baseline.
    unsafe { fold_ascii_block::<Sse2>(src, dst, lower, clean) }
}

/// # Safety
/// `src`/`dst` valid for 32 bytes of reads/writes, and the CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn fold_avx2(src: *const u8, dst: *mut u8, lower: bool, clean: bool) -> Block {
    // SAFETY: forwarded from the caller; this function is compiled with AVX2 enabled, so
    // the inlined intrinsics are too.
    unsafe { fold_ascii_block::<Avx2>(src, dst, lower, clean) }
}

/// # Safety
/// `src`/`dst` valid for 16 bytes of reads/writes.
#[inline]
pub unsafe fn classify_sse2(src: *const u8, dst: *mut u8, lower: bool, clean: bool) -> Classes {
    // SAFETY: forwarded from the caller; SSE2 is baseline.
    unsafe { classify_ascii_block::<Sse2>(src, dst, lower, clean) }
}

/// # Safety
/// `src`/`dst` valid for 32 bytes of reads/writes, and the CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn classify_avx2(src: *const u8, dst: *mut u8, lower: bool, clean: bool) -> Classes {
    // SAFETY: forwarded from the caller; compiled with AVX2 enabled.
    unsafe { classify_ascii_block::<Avx2>(src, dst, lower, clean) }
}

/// # Safety
/// `src` valid for 64 bytes of reads, and the CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn byte_masks_avx2<const CTRL: bool>(src: *const u8) -> ByteMasks {
    // SAFETY: forwarded from the caller; compiled with AVX2 enabled.
    unsafe { byte_masks::<Avx2, CTRL>(src) }
}

/// [`ByteMasks`] of 64 bytes with one load and a compare into a mask register per class.
/// Byte ranges are unsigned compares of `b - lo` against the range's width, exact for every
/// byte, so no class needs the high bits cleared first (as the 32-lane kernels do).
///
/// # Safety
/// `src` valid for 64 bytes of reads, and the CPU supports AVX-512BW.
#[target_feature(enable = "avx512bw")]
#[inline]
pub unsafe fn byte_masks_avx512<const CTRL: bool>(src: *const u8) -> ByteMasks {
    // SAFETY: the caller guarantees 64 readable bytes; the load is unaligned.
    let x = unsafe { _mm512_loadu_si512(src as *const __m512i) };
    let eq = |b: u8| _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(b as i8));
    let range = |lo: u8, hi: u8| {
        _mm512_cmplt_epu8_mask(
            _mm512_sub_epi8(x, _mm512_set1_epi8(lo as i8)),
            _mm512_set1_epi8((hi - lo + 1) as i8),
        )
    };
    let ws = range(0x09, 0x0D) | eq(b' ');
    ByteMasks {
        high: _mm512_movepi8_mask(x),
        upper: range(b'A', b'Z'),
        lower: range(b'a', b'z'),
        digit: range(b'0', b'9'),
        ws,
        newline: eq(b'\n') | eq(b'\r'),
        space: eq(b' '),
        slash: eq(b'/'),
        ctrl: if CTRL { (range(0, 0x1F) | eq(0x7F)) & !ws } else { 0 },
    }
}
