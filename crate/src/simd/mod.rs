//! ASCII fast paths, written once over a small vector trait.
//!
//! The first trick of the blog post on how Hugging Face made BERT's normalizer ~50x
//! faster: ASCII is invariant under every Unicode normalization form, and ASCII lowercase
//! is `| 0x20` on `A..=Z`, so a block of ASCII bytes can be classified and folded with a
//! handful of vector instructions instead of being decoded char by char. The algorithm
//! ([`fold_ascii_block`]) is generic over [`Vector`]; the implementations are SSE2 and AVX2
//! (x86_64, AVX2 chosen at run time), SIMD128 (wasm32 built with `+simd128`) and a SWAR
//! `u64` fallback for everything else; the 64-byte masks of the byte-level scanners have an
//! AVX-512BW kernel of their own (chosen at run time). [`scalar`] is the naive oracle every
//! implementation is tested against.

mod swar;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm;
#[cfg(target_arch = "x86_64")]
mod x86;

/// A vector of byte lanes. All operations that compare assume every lane holds an ASCII
/// byte (< 0x80) unless said otherwise; callers check [`Vector::high_bits`] first.
///
/// Every method is `unsafe` because implementations may use CPU features (AVX2) that the
/// caller must have verified; `load`/`store` additionally need valid pointers.
pub trait Vector: Copy {
    /// Number of byte lanes.
    const LANES: usize;

    /// # Safety
    /// `p` must be valid for reads of `LANES` bytes; the CPU must support the implementation.
    unsafe fn load(p: *const u8) -> Self;
    /// # Safety
    /// `p` must be valid for writes of `LANES` bytes; the CPU must support the implementation.
    unsafe fn store(self, p: *mut u8);
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn splat(b: u8) -> Self;
    /// A bit mask with bit `i` set iff the high bit of lane `i` is set (valid for any bytes).
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn high_bits(self) -> u32;
    /// Lanes equal to `b` become 0xFF, others 0 (lanes must be ASCII, and so must `b`).
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn eq_ascii(self, b: u8) -> Self;
    /// Lanes in `lo..=hi` become 0xFF, others 0 (lanes must be ASCII; `1 <= lo <= hi < 0x7F`).
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn in_ascii_range(self, lo: u8, hi: u8) -> Self;
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn or(self, o: Self) -> Self;
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn and(self, o: Self) -> Self;
    /// `self & !o`.
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn and_not(self, o: Self) -> Self;
    /// Lanes where `mask` is 0xFF take `b`, the rest keep `self` (`mask` lanes are 0 or 0xFF).
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn blend(self, b: Self, mask: Self) -> Self {
        self.and_not(mask).or(b.and(mask))
    }
    /// Bit mask of lanes whose byte is nonzero (`mask` lanes are 0 or 0xFF).
    /// # Safety
    /// The CPU must support the implementation.
    unsafe fn mask_bits(self) -> u32 {
        self.high_bits()
    }
}

/// What one block of input turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// All ASCII and nothing to delete; the folded bytes were written. `changed` says
    /// whether they differ from the input.
    Folded { changed: bool },
    /// Not all ASCII, or holds a byte the cleaner deletes: handle it char by char.
    /// `ascii_prefix` bytes at the start are plain ASCII.
    Stop { ascii_prefix: usize },
}

/// Folds one block of `V::LANES` bytes the way BertNormalizer treats ASCII: `\t \n \r`
/// become spaces (when `clean`), `A..=Z` become lowercase (when `lower`).
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `V::LANES` bytes, and the CPU
/// must support `V`.
#[inline(always)]
pub unsafe fn fold_ascii_block<V: Vector>(src: *const u8, dst: *mut u8, lower: bool, clean: bool) -> Block {
    let x = V::load(src);
    let high = x.high_bits();
    // Controls other than tab/newline/return are deleted by the cleaner, and 0x7F too.
    let ws = x.eq_ascii(b'\t').or(x.eq_ascii(b'\n')).or(x.eq_ascii(b'\r'));
    let ctrl = if clean {
        x.in_ascii_range(1, 0x1F).or(x.eq_ascii(0)).or(x.eq_ascii(0x7F)).and_not(ws).mask_bits()
    } else {
        0
    };
    let stop = high | ctrl;
    if stop != 0 {
        return Block::Stop { ascii_prefix: stop.trailing_zeros() as usize };
    }
    let mut y = x;
    let mut changed = 0u32;
    if lower {
        let upper = x.in_ascii_range(b'A', b'Z');
        changed |= upper.mask_bits();
        y = y.or(upper.and(V::splat(0x20)));
    }
    if clean {
        changed |= ws.mask_bits();
        y = y.blend(V::splat(b' '), ws);
    }
    y.store(dst);
    Block::Folded { changed: changed != 0 }
}

/// A block classified for BERT's pre-tokenizer: bit masks over its lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classes {
    /// Lanes the block processing must stop at: non-ASCII bytes, and (when cleaning)
    /// control bytes the cleaner deletes. Only its lowest set bit is meaningful.
    pub stop: u32,
    /// ASCII punctuation: each one a word of its own. This and `space` are exact only
    /// for lanes before the first stop.
    pub punct: u32,
    /// Word boundaries: space, and (when cleaning) tab, newline, return; with `clean` off
    /// also vertical tab and form feed, which Rust counts as whitespace.
    pub space: u32,
}

/// Folds a block like [`fold_ascii_block`] (lanes before the first stop are valid in
/// `dst`) and classifies its lanes for the BERT pre-tokenizer.
///
/// # Safety
/// As [`fold_ascii_block`].
#[inline(always)]
pub unsafe fn classify_ascii_block<V: Vector>(
    src: *const u8,
    dst: *mut u8,
    lower: bool,
    clean: bool,
) -> Classes {
    let x = V::load(src);
    let high = x.high_bits();
    let tnr = x.eq_ascii(b'\t').or(x.eq_ascii(b'\n')).or(x.eq_ascii(b'\r'));
    let ctl = x.in_ascii_range(1, 0x1F).or(x.eq_ascii(0)).or(x.eq_ascii(0x7F));
    let (stop, space) = if clean {
        (high | ctl.and_not(tnr).mask_bits(), x.eq_ascii(b' ').or(tnr))
    } else {
        // Unchanged controls: \t \n \x0b \x0c \r are whitespace, the rest word chars.
        (high, x.eq_ascii(b' ').or(x.in_ascii_range(0x09, 0x0D)))
    };
    let punct = x
        .in_ascii_range(0x21, 0x2F)
        .or(x.in_ascii_range(0x3A, 0x40))
        .or(x.in_ascii_range(0x5B, 0x60))
        .or(x.in_ascii_range(0x7B, 0x7E));
    let mut y = x;
    if lower {
        y = y.or(x.in_ascii_range(b'A', b'Z').and(V::splat(0x20)));
    }
    if clean {
        y = y.blend(V::splat(b' '), tnr);
    }
    y.store(dst);
    let lanes = if V::LANES == 32 { u32::MAX } else { (1u32 << V::LANES) - 1 };
    Classes { stop: stop & lanes, punct: punct.mask_bits() & lanes, space: space.mask_bits() & lanes }
}

/// Bit masks over 64 bytes (bit `k` for byte `k`), for scanners that find their tokens with
/// bit operations (the o200k pre-tokenizer). The class masks hold ASCII bytes only: a byte
/// with its high bit set is in `high` and in no class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteMasks {
    /// Bytes `>= 0x80`.
    pub high: u64,
    /// `A..=Z`.
    pub upper: u64,
    /// `a..=z`.
    pub lower: u64,
    /// `0..=9`.
    pub digit: u64,
    /// `\t \n \x0b \x0c \r` and space: the ASCII part of Unicode's White_Space.
    pub ws: u64,
    /// `\r` and `\n`.
    pub newline: u64,
    /// U+0020.
    pub space: u64,
    /// `/`.
    pub slash: u64,
    /// Controls that are not whitespace: `\x00..=\x08`, `\x0e..=\x1f` and `\x7f`, when
    /// asked for (`CTRL`; else 0: only DeepSeek V4's scanner needs them).
    pub ctrl: u64,
}

/// [`ByteMasks`] of the 64 bytes at `p`, `V::LANES` at a time, with `ctrl` when `CTRL`.
///
/// # Safety
/// `p` must be valid for reads of 64 bytes, and the CPU must support `V`.
#[inline(always)]
pub unsafe fn byte_masks<V: Vector, const CTRL: bool>(p: *const u8) -> ByteMasks {
    let mut m = ByteMasks::default();
    let mut c = 0;
    while c < 64 {
        // SAFETY: c + V::LANES <= 64 (LANES divides 64), within the caller's 64 bytes.
        let raw = V::load(p.add(c));
        // The comparisons want ASCII lanes: clear the high bits, and drop those lanes below.
        let x = raw.and(V::splat(0x7F));
        let bits = |v: V| (v.mask_bits() as u64) << c;
        m.high |= (raw.high_bits() as u64) << c;
        m.upper |= bits(x.in_ascii_range(b'A', b'Z'));
        m.lower |= bits(x.in_ascii_range(b'a', b'z'));
        m.digit |= bits(x.in_ascii_range(b'0', b'9'));
        let ws = x.in_ascii_range(0x09, 0x0D).or(x.eq_ascii(b' '));
        m.ws |= bits(ws);
        m.newline |= bits(x.eq_ascii(b'\n').or(x.eq_ascii(b'\r')));
        m.space |= bits(x.eq_ascii(b' '));
        m.slash |= bits(x.eq_ascii(b'/'));
        if CTRL {
            m.ctrl |= bits(x.in_ascii_range(1, 0x1F).or(x.eq_ascii(0)).or(x.eq_ascii(0x7F)).and_not(ws));
        }
        c += V::LANES;
    }
    let ascii = !m.high;
    m.upper &= ascii;
    m.lower &= ascii;
    m.digit &= ascii;
    m.ws &= ascii;
    m.newline &= ascii;
    m.space &= ascii;
    m.slash &= ascii;
    m.ctrl &= ascii;
    m
}

/// The naive oracle: the same contracts as [`fold_ascii_block`] and
/// [`classify_ascii_block`], one byte at a time.
/// The position of the first `needle` byte in `hay`, eight bytes at a time with no set-up:
/// for the short distances between spaces of text, where a vector search's set-up costs more
/// than it saves.
#[inline(always)]
pub fn find_byte_near(hay: &[u8], needle: u8) -> Option<usize> {
    const LOW: u64 = u64::MAX / 255;
    const HIGH: u64 = LOW << 7;
    let spread = needle as u64 * LOW;
    let mut i = 0;
    while i + 8 <= hay.len() {
        let w = u64::from_le_bytes(hay[i..i + 8].try_into().expect("8 bytes")) ^ spread;
        // The lowest byte the zero-byte test flags is always a true zero (a borrow only
        // flags bytes above it).
        let found = w.wrapping_sub(LOW) & !w & HIGH;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    hay[i..].iter().position(|&b| b == needle).map(|k| i + k)
}

pub mod scalar {
    use super::{Block, Classes};

    /// [`super::byte_masks`], one byte at a time.
    pub fn byte_masks<const CTRL: bool>(src: &[u8; 64]) -> super::ByteMasks {
        let mut m = super::ByteMasks::default();
        for (k, &b) in src.iter().enumerate() {
            let bit = 1u64 << k;
            let set = |mask: &mut u64, yes: bool| {
                if yes {
                    *mask |= bit
                }
            };
            set(&mut m.high, b >= 0x80);
            set(&mut m.upper, b.is_ascii_uppercase());
            set(&mut m.lower, b.is_ascii_lowercase());
            set(&mut m.digit, b.is_ascii_digit());
            set(&mut m.ws, matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' '));
            set(&mut m.newline, matches!(b, b'\r' | b'\n'));
            set(&mut m.space, b == b' ');
            set(&mut m.slash, b == b'/');
            set(&mut m.ctrl, CTRL && matches!(b, 0..=0x08 | 0x0E..=0x1F | 0x7F));
        }
        m
    }

    pub fn classify_ascii_block(src: &[u8], dst: &mut [u8], lower: bool, clean: bool) -> Classes {
        let mut c = Classes { stop: 0, punct: 0, space: 0 };
        for (i, (&b, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
            let tnr = matches!(b, b'\t' | b'\n' | b'\r');
            let deleted = clean && (b < 0x20 || b == 0x7F) && !tnr;
            if b >= 0x80 || deleted {
                c.stop |= 1 << i;
            }
            if b.is_ascii_punctuation() {
                c.punct |= 1 << i;
            }
            let space = if clean { b == b' ' || tnr } else { b == b' ' || (0x09..=0x0D).contains(&b) };
            if space {
                c.space |= 1 << i;
            }
            let mut y = b;
            if lower && b.is_ascii_uppercase() {
                y |= 0x20;
            }
            if clean && tnr {
                y = b' ';
            }
            *d = y;
        }
        c
    }

    pub fn fold_ascii_block(src: &[u8], dst: &mut [u8], lower: bool, clean: bool) -> Block {
        for (i, &b) in src.iter().enumerate() {
            let deleted = clean && (b < 0x20 || b == 0x7F) && !matches!(b, b'\t' | b'\n' | b'\r');
            if b >= 0x80 || deleted {
                return Block::Stop { ascii_prefix: i };
            }
        }
        let mut changed = false;
        for (d, &b) in dst.iter_mut().zip(src) {
            let mut y = b;
            if lower && b.is_ascii_uppercase() {
                y = b | 0x20;
            }
            if clean && matches!(b, b'\t' | b'\n' | b'\r') {
                y = b' ';
            }
            changed |= y != b;
            *d = y;
        }
        Block::Folded { changed }
    }
}

/// Which vector implementation a call uses; chosen once per call site by [`Kernel::best`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// No vector code: byte at a time (the "SIMD off" switch).
    Scalar,
    /// Eight lanes in a `u64`.
    Swar,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512BW for the 64-byte masks (one load, compares into mask registers); AVX2 for
    /// the 32-byte blocks.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

impl Kernel {
    /// The widest implementation this CPU runs.
    pub fn best() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if x86::has_avx512() {
                return Kernel::Avx512;
            }
            if x86::has_avx2() {
                return Kernel::Avx2;
            }
            return Kernel::Sse2;
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            return Kernel::Simd128;
        }
        #[allow(unreachable_code)]
        Kernel::Swar
    }

    /// Every implementation this CPU can run (for tests and benchmarks).
    pub fn all_available() -> Vec<Kernel> {
        #[allow(unused_mut)] // only x86_64 adds kernels
        let mut v = vec![Kernel::Scalar, Kernel::Swar];
        #[cfg(target_arch = "x86_64")]
        {
            v.push(Kernel::Sse2);
            if x86::has_avx2() {
                v.push(Kernel::Avx2);
            }
            if x86::has_avx512() {
                v.push(Kernel::Avx512);
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        v.push(Kernel::Simd128);
        v
    }

    /// Bytes per block.
    pub fn lanes(self) -> usize {
        match self {
            Kernel::Scalar => 16,
            Kernel::Swar => 8,
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => 16,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 | Kernel::Avx512 => 32,
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => 16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Swar => "swar",
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => "sse2",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => "avx512",
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => "simd128",
        }
    }

    /// Folds `src[..self.lanes()]` into `dst[..self.lanes()]`; see [`fold_ascii_block`].
    /// Panics if either slice is shorter than a block.
    // On wasm, V8 does not inline across wasm functions and LLVM leaves this call in the
    // normalizer's per-block loop (a quarter of its time in a V8 profile): force it there.
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    #[cfg_attr(not(target_arch = "wasm32"), inline)]
    pub fn fold_block(self, src: &[u8], dst: &mut [u8], lower: bool, clean: bool) -> Block {
        let n = self.lanes();
        let (src, dst) = (&src[..n], &mut dst[..n]);
        match self {
            Kernel::Scalar => scalar::fold_ascii_block(src, dst, lower, clean),
            // SAFETY: both slices hold exactly one block (checked by the slicing above);
            // SWAR needs no CPU feature.
            Kernel::Swar => unsafe {
                fold_ascii_block::<swar::Swar>(src.as_ptr(), dst.as_mut_ptr(), lower, clean)
            },
            // SAFETY: as above; SSE2 is part of the x86_64 baseline.
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => unsafe { x86::fold_sse2(src.as_ptr(), dst.as_mut_ptr(), lower, clean) },
            // SAFETY: as above; Kernel::Avx2 and Kernel::Avx512 are only constructed after
            // run-time detection (`best`, `all_available`) of AVX2 (AVX-512BW's also checks it).
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 | Kernel::Avx512 => unsafe {
                x86::fold_avx2(src.as_ptr(), dst.as_mut_ptr(), lower, clean)
            },
            // SAFETY: as above; this variant exists only in builds with simd128 enabled.
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => unsafe {
                fold_ascii_block::<wasm::Simd128>(src.as_ptr(), dst.as_mut_ptr(), lower, clean)
            },
        }
    }

    /// Classifies `src[..self.lanes()]` into `dst`; see [`classify_ascii_block`].
    /// Panics if either slice is shorter than a block.
    // On wasm, V8 does not inline across wasm functions and LLVM leaves this call in the
    // normalizer's per-block loop (a quarter of its time in a V8 profile): force it there.
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    #[cfg_attr(not(target_arch = "wasm32"), inline)]
    pub fn classify_block(self, src: &[u8], dst: &mut [u8], lower: bool, clean: bool) -> Classes {
        let n = self.lanes();
        let (src, dst) = (&src[..n], &mut dst[..n]);
        match self {
            Kernel::Scalar => scalar::classify_ascii_block(src, dst, lower, clean),
            // SAFETY: both slices hold exactly one block; SWAR needs no CPU feature.
            Kernel::Swar => unsafe {
                classify_ascii_block::<swar::Swar>(src.as_ptr(), dst.as_mut_ptr(), lower, clean)
            },
            // SAFETY: one block each; SSE2 is part of the x86_64 baseline.
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => unsafe { x86::classify_sse2(src.as_ptr(), dst.as_mut_ptr(), lower, clean) },
            // SAFETY: one block each; Kernel::Avx2 and Kernel::Avx512 exist only after run-time
            // detection of AVX2.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 | Kernel::Avx512 => unsafe {
                x86::classify_avx2(src.as_ptr(), dst.as_mut_ptr(), lower, clean)
            },
            // SAFETY: one block each; built only with simd128 enabled.
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => unsafe {
                classify_ascii_block::<wasm::Simd128>(src.as_ptr(), dst.as_mut_ptr(), lower, clean)
            },
        }
    }

    /// [`ByteMasks`] of a 64-byte block, with `ctrl` when `CTRL`; see [`byte_masks`].
    // Not inlined for AVX2 and AVX-512 (a call per 64 bytes: the caller's loop need not be
    // compiled for them); the other kernels inline into the caller.
    #[inline(always)]
    pub fn byte_masks<const CTRL: bool>(self, src: &[u8; 64]) -> ByteMasks {
        let p = src.as_ptr();
        match self {
            Kernel::Scalar => scalar::byte_masks::<CTRL>(src),
            // SAFETY: `src` holds 64 bytes; SWAR needs no CPU feature.
            Kernel::Swar => unsafe { byte_masks::<swar::Swar, CTRL>(p) },
            // SAFETY: 64 bytes; SSE2 is part of the x86_64 baseline.
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => unsafe { byte_masks::<x86::Sse2, CTRL>(p) },
            // SAFETY: 64 bytes; Kernel::Avx2 exists only after run-time detection.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { x86::byte_masks_avx2::<CTRL>(p) },
            // SAFETY: 64 bytes; Kernel::Avx512 exists only after run-time detection of
            // AVX-512BW.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { x86::byte_masks_avx512::<CTRL>(p) },
            // SAFETY: 64 bytes; built only with simd128 enabled.
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => unsafe { byte_masks::<wasm::Simd128, CTRL>(p) },
        }
    }

    /// Length of the longest all-ASCII prefix of `s`.
    pub fn ascii_prefix_len(self, s: &[u8]) -> usize {
        let n = self.lanes();
        let mut i = 0;
        if self != Kernel::Scalar {
            let mut sink = [0u8; 32];
            while i + n <= s.len() {
                // Folding without lower/clean only stops on non-ASCII bytes.
                match self.fold_block(&s[i..], &mut sink, false, false) {
                    Block::Folded { .. } => i += n,
                    Block::Stop { ascii_prefix } => return i + ascii_prefix,
                }
            }
        }
        i + s[i..].iter().take_while(|b| b.is_ascii()).count()
    }
}

#[cfg(test)]
mod tests {
    /// The word-at-a-time search against a plain one, at every offset and length to 40
    /// bytes, with the needle at each position and next to bytes that differ from it by one
    /// bit or by the high bit.
    #[test]
    fn find_byte_near_finds_the_first() {
        let mut rng = crate::testing::Rng(0x5DEE_CE66_D1CE_4E5B);
        for _ in 0..20_000 {
            let needle = [b' ', 0x00, 0x80, 0xFF, 0x7F][rng.below(5)];
            let near = [needle ^ 1, needle ^ 0x80, needle.wrapping_add(1), needle, b'a'];
            let hay: Vec<u8> = (0..rng.below(41)).map(|_| near[rng.below(near.len())]).collect();
            let from = rng.below(hay.len() + 1);
            let want = hay[from..].iter().position(|&b| b == needle);
            assert_eq!(find_byte_near(&hay[from..], needle), want, "{hay:?} {from} {needle}");
        }
    }

    use super::*;
    use crate::testing::Rng;

    fn interesting_byte(r: &mut Rng) -> u8 {
        const PICKS: &[u8] = b"\0\t\n\r\x0b\x0c\x1f\x7f\x80\xff @AZ[`az{~\xc3\xa9";
        match r.next() % 4 {
            0 => PICKS[(r.next() % PICKS.len() as u64) as usize],
            1 => (r.next() % 256) as u8,
            _ => (0x20 + r.next() % 0x5F) as u8,
        }
    }

    #[test]
    fn every_kernel_matches_the_scalar_oracle() {
        let mut r = Rng(0x9E3779B97F4A7C15);
        for k in Kernel::all_available() {
            let n = k.lanes();
            for round in 0..20000 {
                let mut src = [b'a'; 32];
                // Mostly-ASCII blocks with one or two odd bytes at every position, plus
                // fully random ones.
                for b in src.iter_mut().take(n) {
                    *b = if round % 3 == 0 {
                        interesting_byte(&mut r)
                    } else {
                        (0x20 + r.next() % 0x5F) as u8
                    };
                }
                if round % 3 == 1 {
                    let pos = (r.next() % n as u64) as usize;
                    src[pos] = interesting_byte(&mut r);
                }
                for (lower, clean) in [(false, false), (true, false), (false, true), (true, true)] {
                    let mut want = [0u8; 32];
                    let mut got = [0u8; 32];
                    let w = scalar::fold_ascii_block(&src[..n], &mut want[..n], lower, clean);
                    let g = k.fold_block(&src, &mut got, lower, clean);
                    assert_eq!(g, w, "{} on {:?} lower={lower} clean={clean}", k.name(), &src[..n]);
                    if let Block::Folded { .. } = w {
                        assert_eq!(&got[..n], &want[..n], "{}", k.name());
                    }
                }
            }
        }
    }

    #[test]
    fn every_kernel_classifies_like_the_scalar_oracle() {
        let mut r = Rng(0x2545F4914F6CDD1D);
        for k in Kernel::all_available() {
            let n = k.lanes();
            for round in 0..20000 {
                let mut src = [0u8; 32];
                for b in src.iter_mut().take(n) {
                    *b = if round % 2 == 0 { interesting_byte(&mut r) } else { (r.next() % 128) as u8 };
                }
                for (lower, clean) in [(false, false), (true, false), (false, true), (true, true)] {
                    let mut want = [0u8; 32];
                    let mut got = [0u8; 32];
                    let w = scalar::classify_ascii_block(&src[..n], &mut want[..n], lower, clean);
                    let g = k.classify_block(&src, &mut got, lower, clean);
                    // Lanes at and after the first stop are unspecified (they may hold
                    // non-ASCII bytes, which the comparisons don't order).
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
                        "{} on {:?} lower={lower} clean={clean}",
                        k.name(),
                        &src[..n]
                    );
                    assert_eq!(&got[..valid.min(n)], &want[..valid.min(n)], "{}", k.name());
                }
            }
        }
    }

    /// Every kernel's byte masks equal the byte-at-a-time ones, on blocks of ASCII with
    /// non-ASCII bytes now and then (and fully random ones), at every lane; with the bytes at
    /// each class's edges, and those bytes with the high bit set (which the 32-lane kernels
    /// clear before comparing, and AVX-512's compare as they are).
    #[test]
    fn every_kernel_masks_like_the_scalar_oracle() {
        const EDGES: &[u8] = b"\x00\x08\t\r\x0e\x1f /0\x2e9:@AZ[`az{\x7f";
        let mut r = Rng(0x1234_5678_9ABC_DEF1);
        for round in 0..20000 {
            let mut src = [0u8; 64];
            for b in src.iter_mut() {
                *b = match round % 4 {
                    0 => interesting_byte(&mut r),
                    1 => (r.next() % 128) as u8,
                    2 => EDGES[(r.next() % EDGES.len() as u64) as usize] | ((r.next() % 2) << 7) as u8,
                    _ => (r.next() % 256) as u8,
                };
            }
            let want = scalar::byte_masks::<true>(&src);
            assert_eq!(scalar::byte_masks::<false>(&src), ByteMasks { ctrl: 0, ..want });
            for k in Kernel::all_available() {
                assert_eq!(k.byte_masks::<true>(&src), want, "{} on {:?}", k.name(), src);
                assert_eq!(k.byte_masks::<false>(&src), ByteMasks { ctrl: 0, ..want }, "{}", k.name());
            }
        }
    }

    /// The AVX-512 kernel is among those the tests run wherever the CPU has AVX-512BW.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_is_tested_where_the_cpu_has_it() {
        let has = x86::has_avx512();
        assert_eq!(Kernel::all_available().contains(&Kernel::Avx512), has);
        assert_eq!(has, std::is_x86_feature_detected!("avx512bw"), "an AVX-512BW CPU without BMI2?");
        if !has {
            eprintln!("this CPU lacks AVX-512BW: the avx512 kernel is not tested here");
        }
    }

    #[test]
    fn ascii_prefix_len_at_every_boundary() {
        for k in Kernel::all_available() {
            for len in 0..80 {
                for bad in 0..=len {
                    let mut s = vec![b'x'; len];
                    if bad < len {
                        s[bad] = 0xC3;
                    }
                    assert_eq!(k.ascii_prefix_len(&s), bad, "{} len={len} bad={bad}", k.name());
                }
            }
        }
    }
}
