//! SWAR: eight byte lanes in a `u64`, for targets without vector instructions (and the
//! scalar wasm build). Comparisons rely on lanes being ASCII (< 0x80): then adding a
//! constant below 0x80 to a lane never carries into the next one.

use super::Vector;

#[derive(Clone, Copy)]
pub struct Swar(u64);

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

impl Swar {
    /// Turns per-lane high bits into full 0xFF lanes.
    #[inline(always)]
    fn widen(h: u64) -> Swar {
        Swar((h >> 7) * 0xFF)
    }
}

impl Vector for Swar {
    const LANES: usize = 8;

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 8 readable bytes; read_unaligned has no alignment need.
        Swar(u64::from_le(unsafe { (p as *const u64).read_unaligned() }))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: the caller guarantees 8 writable bytes.
        unsafe { (p as *mut u64).write_unaligned(self.0.to_le()) }
    }
    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        Swar(ONES * b as u64)
    }
    #[inline(always)]
    unsafe fn high_bits(self) -> u32 {
        // Gather the eight high bits into the top byte with one multiply: each high bit
        // (at 8i+7) lands at 56+i because the multiplier's set bits are 7 apart.
        let h = (self.0 & HIGHS) >> 7;
        ((h.wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u32
    }
    #[inline(always)]
    unsafe fn eq_ascii(self, b: u8) -> Self {
        // y lane is 0 iff equal; y + 0x7F has its high bit set iff y >= 1 (y <= 0x7F).
        let y = self.0 ^ (ONES * b as u64);
        Swar::widen(!(y.wrapping_add(ONES * 0x7F)) & HIGHS)
    }
    #[inline(always)]
    unsafe fn in_ascii_range(self, lo: u8, hi: u8) -> Self {
        // x + (0x80 - lo) has its high bit iff x >= lo; x + (0x7F - hi) iff x > hi.
        let ge = self.0.wrapping_add(ONES * (0x80 - lo) as u64);
        let gt = self.0.wrapping_add(ONES * (0x7F - hi) as u64);
        Swar::widen(ge & !gt & HIGHS)
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        Swar(self.0 | o.0)
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        Swar(self.0 & o.0)
    }
    #[inline(always)]
    unsafe fn and_not(self, o: Self) -> Self {
        Swar(self.0 & !o.0)
    }
}
