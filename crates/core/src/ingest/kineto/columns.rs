//! Which args of a slice the reader keeps as typed columns rather than as args text, and how it
//! decodes those (a kernel's grid and registers, a copy's bytes): `Trace::slice_args` rebuilds the
//! text from them, so the two lists must agree.

use super::event::{key, ArgSpans};
use crate::ingest::json::{parse_f64, parse_int};
use crate::model::*;

/// `[x, y, z]` of a grid or block arg (missing parts 0).
fn dims3(v: Option<&[u8]>) -> [u32; 3] {
    let mut out = [0u32; 3];
    let Some(v) = v else { return out };
    let mut k = 0;
    for part in v.split(|&c| matches!(c, b'[' | b']' | b',' | b' ')) {
        if part.is_empty() {
            continue;
        }
        if k < 3 {
            out[k] = parse_int(part).unwrap_or(0).clamp(0, i64::from(u32::MAX)) as u32;
            k += 1;
        }
    }
    out
}

/// Appends slice `idx`'s GPU details (a kernel's launch shape, a copy's bytes) to `g`.
pub(super) fn gpu_row(g: &mut GpuDetails, idx: u32, a: &ArgSpans<'_>) {
    let int = |v: Option<&[u8]>| v.and_then(parse_int);
    let f = |v: Option<&[u8]>| v.and_then(parse_f64).unwrap_or(f64::NAN) as f32;
    g.slice.push(idx);
    g.device.push(int(a.device).unwrap_or(-1) as i32);
    g.stream.push(int(a.stream).unwrap_or(-1) as i32);
    g.grid.push(dims3(a.grid));
    g.block.push(dims3(a.block));
    g.registers
        .push(int(a.registers).unwrap_or(0).clamp(0, i64::from(u32::MAX)) as u32);
    g.shared_memory.push(
        int(a.shared_memory)
            .unwrap_or(0)
            .clamp(0, i64::from(u32::MAX)) as u32,
    );
    g.blocks_per_sm.push(f(a.blocks_per_sm));
    g.warps_per_sm.push(f(a.warps_per_sm));
    g.occupancy_pct.push(f(a.occupancy));
    g.bytes.push(int(a.bytes).unwrap_or(0).max(0) as u64);
    g.bandwidth_gbs.push(f(a.bandwidth));
    g.launch.push(NONE);
}

/// Whether [`parse_int`] reads `v`, without reading it where it is plain digits (the slice's
/// builder parses the same ids again for their columns).
fn is_int(v: &[u8]) -> bool {
    let d = v.strip_prefix(b"-").unwrap_or(v);
    (!d.is_empty() && d.len() <= 19 && d.iter().all(u8::is_ascii_digit)) || parse_int(v).is_some()
}

/// Whether a slice's arg of this key (its [`key`] number) is kept in a column (and rebuilt by
/// `Trace::slice_args`).
#[inline]
pub(super) fn is_columnar(key: usize, value: &[u8], kind: SliceKind) -> bool {
    match key {
        // Ids are columns only when they parse as integers.
        key::EXTERNAL_ID | key::EXTERNAL_ID_LOWER | key::RECORD_FUNCTION_ID | key::CORRELATION => {
            is_int(value)
        }
        key::INPUT_DIMS | key::INPUT_DIMS_LOWER | key::INPUT_TYPE => true,
        key::DEVICE | key::STREAM => kind.is_gpu_work(),
        key::GRID
        | key::BLOCK
        | key::REGISTERS
        | key::SHARED_MEMORY
        | key::BLOCKS_PER_SM
        | key::WARPS_PER_SM
        | key::OCCUPANCY => kind == SliceKind::Kernel,
        key::BYTES | key::BANDWIDTH => {
            matches!(kind, SliceKind::Memcpy | SliceKind::Memset)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_an_int_where_parse_int_reads_it() {
        for v in [
            &b"0"[..],
            b"123",
            b"-7",
            b"-",
            b"",
            b"1234567890123456789",
            b"18446744073709551615",
            b"00000000000000000000001",
            b"+5",
            b"5.0",
            b"5.5",
            b"\"5\"",
            b"abc",
            b"1e3",
        ] {
            assert_eq!(
                is_int(v),
                parse_int(v).is_some(),
                "{}",
                String::from_utf8_lossy(v)
            );
        }
    }
}
