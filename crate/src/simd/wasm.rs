//! WebAssembly SIMD128 lanes: the same algorithm as SSE2, in the browser.

use super::Vector;
use core::arch::wasm32::*;

#[derive(Clone, Copy)]
pub struct Simd128(v128);

// SAFETY (all methods): this module is compiled only with `target_feature = "simd128"`,
// so every intrinsic is available; loads and stores are unaligned (v128_load/v128_store
// have no alignment requirement) and the caller guarantees 16 bytes.
impl Vector for Simd128 {
    const LANES: usize = 16;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        unsafe { Simd128(v128_load(p as *const v128)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        unsafe { v128_store(p as *mut v128, self.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        Simd128(u8x16_splat(b))
    }
    #[inline(always)]
    unsafe fn high_bits(self) -> u32 {
        u8x16_bitmask(self.0) as u32
    }
    #[inline(always)]
    unsafe fn eq_ascii(self, b: u8) -> Self {
        Simd128(u8x16_eq(self.0, u8x16_splat(b)))
    }
    #[inline(always)]
    unsafe fn in_ascii_range(self, lo: u8, hi: u8) -> Self {
        Simd128(v128_and(u8x16_ge(self.0, u8x16_splat(lo)), u8x16_le(self.0, u8x16_splat(hi))))
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        Simd128(v128_or(self.0, o.0))
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        Simd128(v128_and(self.0, o.0))
    }
    #[inline(always)]
    unsafe fn and_not(self, o: Self) -> Self {
        Simd128(v128_andnot(self.0, o.0))
    }
    #[inline(always)]
    unsafe fn blend(self, b: Self, mask: Self) -> Self {
        Simd128(v128_bitselect(b.0, self.0, mask.0))
    }
}
