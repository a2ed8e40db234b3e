//! A Parquet reader for exactly what the digest writer produces, small enough for the page
//! (the `parquet` crate would add hundreds of KB to a wasm bundle already over its budget).
//!
//! Supported (<https://parquet.apache.org/docs/file-format/>): flat schemas of REQUIRED or
//! OPTIONAL leaf columns of physical type BOOLEAN, INT32, INT64, DOUBLE and BYTE_ARRAY (read as
//! UTF-8 strings); any number of row groups; data pages v1 with PLAIN values and RLE/bit-packed
//! definition levels; UNCOMPRESSED or GZIP pages. That is what `tracelight digest` writes
//! (through the `parquet` crate) and what pyarrow writes with `use_dictionary=False,
//! compression='gzip', data_page_version='1.0'`. Anything else (dictionary pages, data pages v2,
//! other codecs, nested or repeated columns, other types) is refused with an error that says
//! which, never guessed at; no input panics.

mod table;
pub mod thrift;

pub use table::{Column, Strings, Table, Values};

use crate::{Error, ErrorKind};
use thrift::{Reader, T_BINARY, T_LIST, T_STRUCT};

const MAGIC: &[u8; 4] = b"PAR1";

/// Reads a Parquet file `name` (for the error) into a [`Table`].
pub fn read_table(name: &str, bytes: &[u8]) -> crate::Result<Table> {
    read(bytes).map_err(|(kind, at)| Error::new(kind, at).in_file(name))
}

type R<T> = Result<T, (ErrorKind, u64)>;

fn syntax(at: usize) -> impl Fn(String) -> (ErrorKind, u64) {
    move |s| (ErrorKind::Syntax(format!("Parquet: {s}")), at as u64)
}

fn refuse<T>(what: String, at: usize) -> R<T> {
    Err((
        ErrorKind::Refused(format!("Parquet {what}: tracelight reads the digest's subset only (PLAIN, data page v1, GZIP or none, flat columns)")),
        at as u64,
    ))
}

/// A leaf column of the schema.
struct Leaf {
    name: String,
    ty: i32,
    optional: bool,
}

struct Chunk {
    ty: i32,
    codec: i32,
    values: i64,
    data_page: i64,
    dictionary: bool,
    external: bool,
}

fn schema(r: &mut Reader, at: usize) -> R<Vec<Leaf>> {
    let (_, n) = r.list().map_err(syntax(at))?;
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let (mut name, mut ty, mut rep, mut children) = (String::new(), -1, 0, 0);
        r.fields(|r, id, _| {
            Ok(match id {
                1 => {
                    ty = r.i32()?;
                    true
                }
                3 => {
                    rep = r.i32()?;
                    true
                }
                4 => {
                    name = r.string()?;
                    true
                }
                5 => {
                    children = r.i32()?;
                    true
                }
                _ => false,
            })
        })
        .map_err(syntax(at))?;
        if k == 0 {
            if children != n as i32 - 1 {
                return refuse("nested schema".into(), at);
            }
            continue;
        }
        if children != 0 || rep == 2 {
            return refuse(format!("nested or repeated column {name}"), at);
        }
        if !matches!(ty, 0 | 1 | 2 | 5 | 6) {
            return refuse(format!("column {name} of physical type {ty}"), at);
        }
        out.push(Leaf {
            name,
            ty,
            optional: rep == 1,
        });
    }
    Ok(out)
}

fn column_chunk(r: &mut Reader) -> Result<Chunk, String> {
    let mut c = Chunk {
        ty: -1,
        codec: 0,
        values: 0,
        data_page: -1,
        dictionary: false,
        external: false,
    };
    r.fields(|r, id, ty| {
        Ok(match (id, ty) {
            (1, T_BINARY) => {
                c.external = !r.binary()?.is_empty();
                true
            }
            (3, T_STRUCT) => {
                r.fields(|r, id, _| {
                    Ok(match id {
                        1 => {
                            c.ty = r.i32()?;
                            true
                        }
                        4 => {
                            c.codec = r.i32()?;
                            true
                        }
                        5 => {
                            c.values = r.zigzag()?;
                            true
                        }
                        9 => {
                            c.data_page = r.zigzag()?;
                            true
                        }
                        11 => {
                            c.dictionary = true;
                            false
                        }
                        _ => false,
                    })
                })?;
                true
            }
            _ => false,
        })
    })?;
    Ok(c)
}

/// The footer: leaf columns, and per row group its column chunks.
fn footer(meta: &[u8], at: usize) -> R<(Vec<Leaf>, Vec<Vec<Chunk>>)> {
    let mut r = Reader::new(meta);
    let mut leaves = None;
    let mut groups = Vec::new();
    let mut err: Option<(ErrorKind, u64)> = None;
    r.fields(|r, id, ty| {
        Ok(match (id, ty) {
            (2, T_LIST) => {
                match schema(r, at) {
                    Ok(l) => leaves = Some(l),
                    Err(e) => {
                        err = Some(e);
                        return Err(String::new());
                    }
                }
                true
            }
            (4, T_LIST) => {
                let (_, n) = r.list()?;
                for _ in 0..n {
                    let mut chunks = Vec::new();
                    r.fields(|r, id, ty| {
                        if (id, ty) != (1, T_LIST) {
                            return Ok(false);
                        }
                        let (_, n) = r.list()?;
                        for _ in 0..n {
                            chunks.push(column_chunk(r)?);
                        }
                        Ok(true)
                    })?;
                    groups.push(chunks);
                }
                true
            }
            _ => false,
        })
    })
    .map_err(|e| err.clone().unwrap_or_else(|| syntax(at)(e)))?;
    let leaves = leaves.ok_or_else(|| syntax(at)("footer without a schema".into()))?;
    Ok((leaves, groups))
}

fn read(bytes: &[u8]) -> R<Table> {
    let n = bytes.len();
    if n < 12 || &bytes[..4] != MAGIC || &bytes[n - 4..] != MAGIC {
        return Err((
            ErrorKind::Incompatible("not a Parquet file (no PAR1 magic)".into()),
            0,
        ));
    }
    let len = u32::from_le_bytes([bytes[n - 8], bytes[n - 7], bytes[n - 6], bytes[n - 5]]) as usize;
    let Some(start) = (n - 8).checked_sub(len).filter(|&s| s >= 4) else {
        return Err(syntax(n - 8)("footer length past the file's start".into()));
    };
    let (leaves, groups) = footer(&bytes[start..n - 8], start)?;
    let mut cols: Vec<Column> = leaves
        .iter()
        .map(|l| Column {
            name: l.name.clone(),
            values: match l.ty {
                0 => Values::Bool(Vec::new()),
                1 => Values::I32(Vec::new()),
                2 => Values::I64(Vec::new()),
                5 => Values::F64(Vec::new()),
                _ => Values::Str(Strings::default()),
            },
            valid: l.optional.then(Vec::new),
        })
        .collect();
    for g in &groups {
        if g.len() != leaves.len() {
            return Err(syntax(start)(
                "a row group's columns differ from the schema".into(),
            ));
        }
        for (k, c) in g.iter().enumerate() {
            if c.external {
                return refuse("column chunk in another file".into(), start);
            }
            if c.dictionary {
                return refuse(format!("dictionary page in column {}", cols[k].name), start);
            }
            if c.ty != leaves[k].ty {
                return Err(syntax(start)(format!(
                    "column {} changes type",
                    cols[k].name
                )));
            }
            if !matches!(c.codec, 0 | 2) {
                return refuse(
                    format!("codec {} in column {}", c.codec, cols[k].name),
                    start,
                );
            }
            pages::read_chunk(bytes, c.data_page, c.values, c.codec, &mut cols[k])?;
        }
    }
    Table::new(cols).map_err(syntax(start))
}

mod pages;
