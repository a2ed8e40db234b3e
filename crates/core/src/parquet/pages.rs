//! Data pages of one column chunk: header, GZIP, definition levels, PLAIN values.

use super::thrift::{Reader, T_STRUCT};
use super::{refuse, syntax, Column, Values, R};
use crate::ErrorKind;
use std::io::Read;

/// A page's size may not exceed this (a hostile header must not make us allocate gigabytes).
const MAX_PAGE: usize = 256 << 20;

struct Header {
    ty: i32,
    uncompressed: i32,
    compressed: i32,
    values: i32,
    encoding: i32,
    def_encoding: i32,
}

fn header(r: &mut Reader) -> Result<Header, String> {
    let mut h = Header {
        ty: -1,
        uncompressed: 0,
        compressed: 0,
        values: 0,
        encoding: 0,
        def_encoding: 3,
    };
    r.fields(|r, id, ty| {
        Ok(match (id, ty) {
            (1, _) => {
                h.ty = r.i32()?;
                true
            }
            (2, _) => {
                h.uncompressed = r.i32()?;
                true
            }
            (3, _) => {
                h.compressed = r.i32()?;
                true
            }
            (5, T_STRUCT) => {
                r.fields(|r, id, _| {
                    Ok(match id {
                        1 => {
                            h.values = r.i32()?;
                            true
                        }
                        2 => {
                            h.encoding = r.i32()?;
                            true
                        }
                        3 => {
                            h.def_encoding = r.i32()?;
                            true
                        }
                        _ => false,
                    })
                })?;
                true
            }
            _ => false,
        })
    })?;
    Ok(h)
}

/// Reads the data pages of a chunk starting at `offset` until `count` values are in `col`.
pub(super) fn read_chunk(
    bytes: &[u8],
    offset: i64,
    count: i64,
    codec: i32,
    col: &mut Column,
) -> R<()> {
    let mut at = usize::try_from(offset).map_err(|_| syntax(0)("negative page offset".into()))?;
    let mut left = count;
    let mut body = Vec::new();
    while left > 0 {
        let rest = bytes
            .get(at..)
            .ok_or_else(|| syntax(at)("page offset past the end".into()))?;
        let mut r = Reader::new(rest);
        let h = header(&mut r).map_err(syntax(at))?;
        let data_at = at + r.pos;
        let size = usize::try_from(h.compressed).map_err(|_| syntax(at)("page size".into()))?;
        let raw_len =
            usize::try_from(h.uncompressed).map_err(|_| syntax(at)("page size".into()))?;
        let data = bytes
            .get(data_at..data_at.saturating_add(size))
            .filter(|d| d.len() == size)
            .ok_or_else(|| syntax(at)("page runs past the end".into()))?;
        match h.ty {
            0 => {}
            2 => return refuse(format!("dictionary page in column {}", col.name), at),
            3 => return refuse(format!("data page v2 in column {}", col.name), at),
            t => return refuse(format!("page type {t} in column {}", col.name), at),
        }
        if h.encoding != 0 {
            return refuse(
                format!("encoding {} in column {}", h.encoding, col.name),
                at,
            );
        }
        if raw_len > MAX_PAGE || h.values < 0 {
            return Err((
                ErrorKind::Limit(format!("Parquet page of {raw_len} bytes")),
                at as u64,
            ));
        }
        let page: &[u8] = if codec == 2 {
            body.clear();
            flate2::read::GzDecoder::new(data)
                .take(raw_len as u64 + 1)
                .read_to_end(&mut body)
                .map_err(|e| {
                    (
                        ErrorKind::Compression(format!("Parquet page: {e}")),
                        at as u64,
                    )
                })?;
            &body
        } else {
            data
        };
        if page.len() != raw_len {
            return Err(syntax(at)(format!(
                "page inflates to {} bytes, header says {raw_len}",
                page.len()
            )));
        }
        let n = h.values as usize;
        values(page, n, h.def_encoding, col).map_err(syntax(data_at))?;
        left -= i64::from(h.values).max(1);
        at = data_at + size;
    }
    Ok(())
}

/// One page's `n` entries: definition levels (OPTIONAL columns), then the PLAIN values.
fn values(page: &[u8], n: usize, def_encoding: i32, col: &mut Column) -> Result<(), String> {
    let mut p = page;
    let present = match &mut col.valid {
        Some(valid) => {
            if def_encoding != 3 {
                return Err(format!("definition levels encoded as {def_encoding}"));
            }
            let len = le_u32(p)? as usize;
            let levels = p
                .get(4..4 + len)
                .ok_or("definition levels run past the page")?;
            let before = valid.len();
            rle_bits(levels, n, valid)?;
            p = &p[4 + len..];
            valid[before..].iter().filter(|&&v| v).count()
        }
        None => n,
    };
    let nulls = n - present;
    let short = || "values run past the page".to_owned();
    match &mut col.values {
        Values::Bool(v) => {
            let bits = p.get(..present.div_ceil(8)).ok_or_else(short)?;
            v.extend((0..present).map(|i| bits[i / 8] >> (i % 8) & 1 == 1));
        }
        Values::I32(v) => {
            let b = p.get(..present * 4).ok_or_else(short)?;
            v.extend(
                b.chunks_exact(4)
                    .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        }
        Values::I64(v) => {
            let b = p.get(..present * 8).ok_or_else(short)?;
            v.extend(
                b.chunks_exact(8)
                    .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            );
        }
        Values::F64(v) => {
            let b = p.get(..present * 8).ok_or_else(short)?;
            v.extend(
                b.chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            );
        }
        Values::Str(s) => {
            for _ in 0..present {
                let len = le_u32(p)? as usize;
                let b = p.get(4..4 + len).ok_or_else(short)?;
                s.push(std::str::from_utf8(b).map_err(|_| "a string is not UTF-8")?);
                p = &p[4 + len..];
            }
        }
    }
    if nulls > 0 {
        spread_nulls(col, n);
    }
    Ok(())
}

/// Values were appended densely for the present rows of the last `n`; move them to their rows
/// and put defaults at the nulls, so value `i` is row `i`.
fn spread_nulls(col: &mut Column, n: usize) {
    let Some(valid) = &col.valid else {
        return;
    };
    let rows = &valid[valid.len() - n..];
    fn spread<T: Clone>(v: &mut Vec<T>, rows: &[bool], fill: T) {
        let present = rows.iter().filter(|&&x| x).count();
        let tail = v.split_off(v.len() - present);
        let mut it = tail.into_iter();
        v.extend(
            rows.iter()
                .map(|&ok| if ok { it.next() } else { None }.unwrap_or(fill.clone())),
        );
    }
    match &mut col.values {
        Values::Bool(v) => spread(v, rows, false),
        Values::I32(v) => spread(v, rows, 0),
        Values::I64(v) => spread(v, rows, 0),
        Values::F64(v) => spread(v, rows, 0.0),
        Values::Str(s) => {
            let present = rows.iter().filter(|&&x| x).count();
            let first = s.len() - present;
            let tail: Vec<String> = (first..s.len()).map(|i| s.get(i).to_owned()).collect();
            let cut = s.offsets[first] as usize;
            s.data.truncate(cut);
            s.offsets.truncate(first + 1);
            let mut it = tail.iter();
            for &ok in rows {
                let v = if ok {
                    it.next().map_or("", String::as_str)
                } else {
                    ""
                };
                s.push(v);
            }
        }
    }
}

fn le_u32(p: &[u8]) -> Result<u32, String> {
    let b = p.get(..4).ok_or("a length runs past the page")?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The RLE / bit-packed hybrid of bit width 1 (definition levels of a flat OPTIONAL column):
/// `n` levels appended to `out` as `level == 1`.
fn rle_bits(mut b: &[u8], n: usize, out: &mut Vec<bool>) -> Result<(), String> {
    let end = out.len() + n;
    while out.len() < end {
        let mut r = Reader::new(b);
        let h = r.varint()?;
        b = &b[r.pos..];
        let run = usize::try_from(h >> 1).map_err(|_| "level run too long")?;
        if h & 1 == 1 {
            // `run` groups of 8 one-bit values, one byte each.
            let bytes = b.get(..run).ok_or("bit-packed levels run past the page")?;
            for i in 0..run * 8 {
                if out.len() == end {
                    break;
                }
                out.push(bytes[i / 8] >> (i % 8) & 1 == 1);
            }
            b = &b[run..];
        } else {
            let v = *b.first().ok_or("levels run past the page")?;
            if v > 1 {
                return Err(format!("definition level {v} in a flat column"));
            }
            if run == 0 {
                return Err("empty level run".into());
            }
            let take = run.min(end - out.len());
            out.extend(std::iter::repeat_n(v == 1, take));
            b = &b[1..];
        }
    }
    Ok(())
}
