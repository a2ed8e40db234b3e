//! Where the JSON scanner has to look next, sixteen bytes at a time.
//!
//! The Kineto scanner spends most of its bytes inside strings (kernel names of hundreds of bytes)
//! and inside args values it skips whole (`"Input Dims": [[8, 2048, 4096], []]`). In both it only
//! stops at a few bytes: a quote or a backslash inside a string; a quote or a bracket inside a
//! skipped container. These functions classify sixteen bytes in a handful of vector instructions
//! (wasm `simd128`, x86-64 SSE2, which every x86-64 CPU has) into a bit mask of those stops, as
//! simdjson's stage 1 does, so the scanner jumps from stop to stop instead of testing every byte.
//! Elsewhere (or when the feature is off) two 64-bit words compute the same mask (SWAR); the tests
//! compare both with a byte-by-byte reading on every byte value in every lane.

/// Bit `i` is set when `b[at + i]` is `"` or `\`. Needs `at + 16 <= b.len()`; 0 otherwise.
#[inline]
pub(crate) fn string_stops(b: &[u8], at: usize) -> u32 {
    let Some(block) = block16(b, at) else {
        return 0;
    };
    imp::string_stops(block)
}

/// Bit `i` is set when `b[at + i]` is `"`, `{`, `[`, `}` or `]`. Needs `at + 16 <= b.len()`; 0
/// otherwise.
#[inline]
pub(crate) fn container_stops(b: &[u8], at: usize) -> u32 {
    let Some(block) = block16(b, at) else {
        return 0;
    };
    imp::container_stops(block)
}

#[inline]
fn block16(b: &[u8], at: usize) -> Option<&[u8; 16]> {
    b.get(at..at.checked_add(16)?)?.try_into().ok()
}

/// The same masks byte by byte: the reference the other versions are tested against.
#[cfg(test)]
mod bytewise {
    fn mask(block: &[u8; 16], hit: impl Fn(u8) -> bool) -> u32 {
        block
            .iter()
            .enumerate()
            .fold(0, |m, (i, &c)| m | (u32::from(hit(c)) << i))
    }

    pub(super) fn string_stops(block: &[u8; 16]) -> u32 {
        mask(block, |c| c == b'"' || c == b'\\')
    }

    pub(super) fn container_stops(block: &[u8; 16]) -> u32 {
        mask(block, |c| matches!(c, b'"' | b'{' | b'[' | b'}' | b']'))
    }
}

/// The same masks from two 64-bit words (SWAR): the fallback for targets without the vector
/// instructions (an aarch64 build of the CLI, wasm without `simd128`).
#[cfg_attr(
    any(
        all(target_arch = "wasm32", target_feature = "simd128"),
        all(target_arch = "x86_64", target_feature = "sse2")
    ),
    allow(dead_code)
)]
mod words {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

    fn splat(c: u8) -> u64 {
        0x0101_0101_0101_0101 * u64::from(c)
    }

    /// The high bit of every byte of `x` that equals `c`, and no other bit. Exact: the add cannot
    /// carry from one byte into the next (at most 0x7f + 0x7f).
    fn eq(x: u64, c: u8) -> u64 {
        let y = x ^ splat(c);
        !(((y & LOW7).wrapping_add(LOW7)) | y | LOW7)
    }

    /// Byte `k`'s high bit as bit `k`: each of the eight products lands on its own bit, so
    /// nothing carries.
    fn bits(m: u64) -> u32 {
        ((m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
    }

    fn halves(block: &[u8; 16]) -> [u64; 2] {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&block[..8]);
        hi.copy_from_slice(&block[8..]);
        [u64::from_le_bytes(lo), u64::from_le_bytes(hi)]
    }

    fn both(block: &[u8; 16], m: impl Fn(u64) -> u64) -> u32 {
        let [lo, hi] = halves(block);
        bits(m(lo)) | bits(m(hi)) << 8
    }

    pub(super) fn string_stops(block: &[u8; 16]) -> u32 {
        both(block, |x| eq(x, b'"') | eq(x, b'\\'))
    }

    pub(super) fn container_stops(block: &[u8; 16]) -> u32 {
        both(block, |x| {
            // `{`/`[` and `}`/`]` differ only in bit 5 (0x7b/0x5b, 0x7d/0x5d).
            let folded = x & !splat(0x20);
            eq(x, b'"') | eq(folded, b'[') | eq(folded, b']')
        })
    }
}

// The workspace denies `unsafe`; these two modules load 16 bytes into a vector register, which
// the intrinsics only offer through a raw pointer. Each block says why it is sound.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[allow(unsafe_code)]
mod imp {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load, v128_or};

    #[inline]
    fn load(block: &[u8; 16]) -> v128 {
        // SAFETY: `block` is 16 readable bytes (a reference to `[u8; 16]`); wasm's `v128.load` has
        // no alignment requirement and any 16 bytes are a valid `v128`.
        unsafe { v128_load(block.as_ptr().cast()) }
    }

    #[inline]
    fn eq(v: v128, c: u8) -> v128 {
        u8x16_eq(v, u8x16_splat(c))
    }

    #[inline]
    pub(super) fn string_stops(block: &[u8; 16]) -> u32 {
        let v = load(block);
        u32::from(u8x16_bitmask(v128_or(eq(v, b'"'), eq(v, b'\\'))))
    }

    #[inline]
    pub(super) fn container_stops(block: &[u8; 16]) -> u32 {
        let v = load(block);
        // `{`/`[` and `}`/`]` differ from each other only in bit 5 (0x7b/0x5b, 0x7d/0x5d):
        // clearing it matches both with one compare each.
        let folded = core::arch::wasm32::v128_andnot(v, u8x16_splat(0x20));
        let brackets = v128_or(eq(folded, b'['), eq(folded, b']'));
        u32::from(u8x16_bitmask(v128_or(eq(v, b'"'), brackets)))
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[allow(unsafe_code)]
mod imp {
    use core::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8,
    };

    #[inline]
    fn load(block: &[u8; 16]) -> __m128i {
        // SAFETY: `block` is 16 readable bytes (a reference to `[u8; 16]`) and `loadu` has no
        // alignment requirement; SSE2 is enabled (this module's cfg).
        unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
    }

    #[inline]
    fn eq(v: __m128i, c: u8) -> __m128i {
        // SAFETY: SSE2 is enabled (this module's cfg); the intrinsics only read their arguments.
        unsafe { _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)) }
    }

    #[inline]
    fn bits(v: __m128i) -> u32 {
        // SAFETY: as above. `movemask` sets only the low 16 bits.
        unsafe { _mm_movemask_epi8(v) as u32 }
    }

    #[inline]
    pub(super) fn string_stops(block: &[u8; 16]) -> u32 {
        let v = load(block);
        // SAFETY: SSE2 is enabled (this module's cfg).
        bits(unsafe { _mm_or_si128(eq(v, b'"'), eq(v, b'\\')) })
    }

    #[inline]
    pub(super) fn container_stops(block: &[u8; 16]) -> u32 {
        let v = load(block);
        // SAFETY: SSE2 is enabled (this module's cfg). `{`/`[` and `}`/`]` differ only in bit 5:
        // clearing it matches both with one compare each.
        unsafe {
            let folded = _mm_andnot_si128(_mm_set1_epi8(0x20), v);
            let brackets = _mm_or_si128(eq(folded, b'['), eq(folded, b']'));
            bits(_mm_or_si128(eq(v, b'"'), brackets))
        }
    }
}

#[cfg(not(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    all(target_arch = "x86_64", target_feature = "sse2")
)))]
use words as imp;

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    /// The vector (through the public functions, at `off` in `b`) and word versions give the
    /// byte-by-byte masks of the 16 bytes at `off`.
    fn agree(b: &[u8], off: usize, at: &str) {
        let block: &[u8; 16] = b[off..off + 16].try_into().unwrap();
        let (strings, containers) = (
            bytewise::string_stops(block),
            bytewise::container_stops(block),
        );
        assert_eq!(string_stops(b, off), strings, "{at}");
        assert_eq!(words::string_stops(block), strings, "{at}");
        assert_eq!(container_stops(b, off), containers, "{at}");
        assert_eq!(words::container_stops(block), containers, "{at}");
    }

    /// Every byte value at every lane, in the vector and word versions against the byte-by-byte
    /// rule, with the other lanes set to a byte that is a stop for neither (and then for both).
    #[test]
    fn the_masks_match_the_byte_by_byte_rule_for_every_byte_at_every_lane() {
        for fill in [b'a', b'"', b'{'] {
            for lane in 0..16 {
                for c in 0..=255u8 {
                    let mut block = [fill; 16];
                    block[lane] = c;
                    let mut b = vec![b' '; 3];
                    b.extend_from_slice(&block);
                    agree(&b, 3, &format!("{c:#x} at {lane} among {fill:#x}"));
                }
            }
        }
    }

    /// Blocks of several stops and near-stops (bytes one bit away) in every lane.
    #[test]
    fn mixed_blocks_match_the_byte_by_byte_rule() {
        let alphabet = *b"\"\\{}[]zZ{\x5b\x7d;:\x02\xdc\xfb\x5c";
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut block = [0u8; 16];
            for byte in &mut block {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *byte = alphabet[(x % alphabet.len() as u64) as usize];
            }
            agree(&block, 0, &format!("{block:?}"));
        }
    }

    #[test]
    fn fewer_than_sixteen_bytes_give_no_stops() {
        assert_eq!(string_stops(b"\"\"\"", 0), 0);
        assert_eq!(container_stops(&[b'{'; 16], 1), 0);
        assert_eq!(container_stops(&[b'{'; 16], usize::MAX), 0);
    }
}
