//! Parquet through the `parquet` crate's column writers (no arrow), and the header as JSON.

use super::Written;
use parquet::basic::{Compression, Encoding, GzipLevel, LogicalType, Repetition, Type as Phys};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::path::Path;
use std::sync::Arc;
use tracelight_core::digest::{Digest, HEADER_SUFFIX};
use tracelight_core::parquet::{Table, Values};
use tracelight_core::{Error, ErrorKind};

fn props() -> WriterProperties {
    WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_dictionary_enabled(false)
        .set_encoding(Encoding::PLAIN)
        .set_compression(Compression::GZIP(GzipLevel::default()))
        .set_statistics_enabled(EnabledStatistics::None)
        .set_offset_index_disabled(true)
        .set_created_by("tracelight digest".into())
        .build()
}

fn schema(t: &Table) -> parquet::errors::Result<Type> {
    let fields = t
        .columns
        .iter()
        .map(|c| {
            let (ty, logical) = match c.values {
                Values::Bool(_) => (Phys::BOOLEAN, None),
                Values::I32(_) => (Phys::INT32, None),
                Values::I64(_) => (Phys::INT64, None),
                Values::F64(_) => (Phys::DOUBLE, None),
                Values::Str(_) => (Phys::BYTE_ARRAY, Some(LogicalType::String)),
            };
            let rep = if c.valid.is_some() {
                Repetition::OPTIONAL
            } else {
                Repetition::REQUIRED
            };
            Type::primitive_type_builder(&c.name, ty)
                .with_repetition(rep)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    Type::group_type_builder("digest")
        .with_fields(fields)
        .build()
}

/// Present values of `v` where `valid` says so (all of them for a required column).
fn present<T: Clone>(v: &[T], valid: Option<&Vec<bool>>) -> Vec<T> {
    match valid {
        None => v.to_vec(),
        Some(ok) => v
            .iter()
            .zip(ok)
            .filter(|(_, &k)| k)
            .map(|(x, _)| x.clone())
            .collect(),
    }
}

/// One table as the bytes of a Parquet file (one row group).
pub fn table_bytes(t: &Table) -> parquet::errors::Result<Vec<u8>> {
    let mut w = SerializedFileWriter::new(Vec::new(), Arc::new(schema(t)?), Arc::new(props()))?;
    let mut rg = w.next_row_group()?;
    for c in &t.columns {
        let Some(mut col) = rg.next_column()? else {
            break;
        };
        let def: Option<Vec<i16>> = c
            .valid
            .as_ref()
            .map(|v| v.iter().map(|&k| i16::from(k)).collect());
        let valid = c.valid.as_ref();
        let d = def.as_deref();
        match (col.untyped(), &c.values) {
            (ColumnWriter::BoolColumnWriter(w), Values::Bool(v)) => {
                w.write_batch(&present(v, valid), d, None)?;
            }
            (ColumnWriter::Int32ColumnWriter(w), Values::I32(v)) => {
                w.write_batch(&present(v, valid), d, None)?;
            }
            (ColumnWriter::Int64ColumnWriter(w), Values::I64(v)) => {
                w.write_batch(&present(v, valid), d, None)?;
            }
            (ColumnWriter::DoubleColumnWriter(w), Values::F64(v)) => {
                w.write_batch(&present(v, valid), d, None)?;
            }
            (ColumnWriter::ByteArrayColumnWriter(w), Values::Str(s)) => {
                let all: Vec<ByteArray> = s
                    .iter()
                    .map(|x| ByteArray::from(x.as_bytes().to_vec()))
                    .collect();
                w.write_batch(&present(&all, valid), d, None)?;
            }
            _ => {
                return Err(parquet::errors::ParquetError::General(format!(
                    "column {} does not match its schema",
                    c.name
                )))
            }
        }
        col.close()?;
    }
    rg.close()?;
    w.into_inner()
}

/// Writes `d` into `dir` as `STEM.digest.json` and `STEM.TABLE.parquet`.
pub fn write_digest(d: &Digest, dir: &Path, stem: &str) -> Result<Written, Error> {
    let at = |p: &Path| p.display().to_string();
    let io = |p: &Path, e: String| Error::new(ErrorKind::Io(e), 0).in_file(&at(p));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e.to_string()))?;
    let header = dir.join(format!("{stem}{HEADER_SUFFIX}"));
    let mut files = vec![header.clone()];
    let mut bytes = 0u64;
    for (info, t) in d.header.tables.iter().zip(&d.tables) {
        let p = dir.join(&info.file);
        let b = table_bytes(t).map_err(|e| io(&p, format!("writing Parquet: {e}")))?;
        std::fs::write(&p, &b).map_err(|e| io(&p, e.to_string()))?;
        bytes += b.len() as u64;
        files.push(p);
    }
    let json = serde_json::to_vec(&d.header).map_err(|e| io(&header, e.to_string()))?;
    std::fs::write(&header, &json).map_err(|e| io(&header, e.to_string()))?;
    bytes += json.len() as u64;
    Ok(Written {
        header,
        files,
        bytes,
        source_bytes: d.header.source.size,
        rank: d.header.rank,
    })
}
