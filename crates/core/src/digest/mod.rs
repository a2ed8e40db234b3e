//! Digests: a compact, versioned summary of one rank's trace, enough for the multi-rank figures
//! (ranks, collective matching, straggler, aligned timelines) without the trace.
//!
//! A 1,000-rank job writes a trace per rank; no single machine (let alone a tab) opens them all.
//! A digest is made where each trace lies (`tracelight digest`, or a Ray task through the Python
//! package) and a folder of digests is then opened as the run, by the CLI or the page.
//!
//! **Layout** (per rank, `STEM` = the trace's file name without `.json[.gz]`):
//! - `STEM.digest.json`: the header ([`Header`]): format and [`VERSION`], the source file (name,
//!   size, CRC-32), rank, the tables' schemas, and the analysis's scalar figures ([`Figures`]:
//!   exactly the structs `analyze --json` is printed from, so the per-trace JSON of a digest is
//!   the trace's).
//! - `STEM.ops.parquet`, `.kernels.parquet`, `.steps.parquet`, `.collectives.parquet`,
//!   `.timeline.parquet` ([`TABLES`]): the operator and kernel tables, per-step breakdown, the
//!   rank's collective calls with timestamps and args, and the level-of-detail timeline
//!   ([`lod`]). Every table has a `rank` column, so `read_parquet('run/*.kernels.parquet')` in
//!   DuckDB, Spark, Polars or pandas is already a cross-rank table.
//!
//! Parquet is written natively (the `tracelight-digest` crate, with the `parquet` crate: PLAIN,
//! no dictionary, GZIP, data page v1) and read here by [`crate::parquet`], which the page can
//! afford. Times are `i64` ns throughout.

mod lite;
pub mod lod;
mod rebuild;
mod tables;

pub use lite::table_files;
pub use rebuild::Rebuilt;

use crate::analysis::gpu::{GpuSummary, Temporal};
use crate::analysis::launch::{LaunchStats, SyncGroup};
use crate::analysis::memory::DeviceMemory;
use crate::analysis::memory_ops::OpMemoryRow;
use crate::analysis::mfu::FlopsSummary;
use crate::analysis::recommend::Recommendation;
use crate::model::Trace;
use crate::parquet::Table;
use crate::report::analysis::Analysis;
use crate::{Error, ErrorKind};
use serde::{Deserialize, Serialize};

/// What [`Header::format`] says.
pub const FORMAT: &str = "tracelight-digest";
/// Bumped when a table or the header changes incompatibly; a reader refuses other versions.
pub const VERSION: u32 = 1;
/// The tables of a digest, in the order they are written.
pub const TABLES: [&str; 5] = ["ops", "kernels", "steps", "collectives", "timeline"];
/// Suffix of a digest's header file.
pub const HEADER_SUFFIX: &str = ".digest.json";

/// The trace a digest was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub name: String,
    pub size: u64,
    /// CRC-32 (zlib's) of the file's bytes as stored, hex.
    pub crc32: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableInfo {
    pub name: String,
    pub file: String,
    pub rows: u64,
    /// `name:type`, the type one of `int32`, `int64`, `double`, `boolean`, `string` (Parquet
    /// BYTE_ARRAY, UTF-8), with `?` after it when the column is nullable (`pg:string?`). One
    /// string per column keeps the header small; the Parquet footer has the same schema.
    pub columns: Vec<String>,
}

/// A track of the level-of-detail timeline (the `track` column indexes this list).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackInfo {
    /// `pid` / `tid` as the trace wrote them (integers as decimal text).
    pub pid: String,
    pub tid: String,
    pub process: String,
    pub name: String,
    pub gpu: bool,
    pub device: Option<i64>,
    pub stream: Option<i64>,
    pub sort_index: Option<i64>,
}

/// The analysis's figures that are not tables: the very structs `analyze --json` prints, so a
/// digest's analysis is the trace's, number for number.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figures {
    pub self_cpu_total_ns: i64,
    pub self_device_total_ns: i64,
    pub kernels_total_ns: i64,
    pub categories: Vec<(String, i64)>,
    pub categories_literal: Vec<(String, i64)>,
    pub fine_categories: Vec<(String, i64)>,
    pub gpu: GpuSummary,
    pub temporal_hta: Temporal,
    pub memory: Vec<DeviceMemory>,
    pub memory_ops: Vec<OpMemoryRow>,
    pub launch: LaunchStats,
    pub sync: Vec<SyncGroup>,
    pub flops: FlopsSummary,
    /// Absent in digests written before the roofline existed.
    #[serde(default)]
    pub roofline: crate::analysis::roofline::Roofline,
    #[serde(default)]
    pub idle: crate::analysis::idle::IdleCauses,
    pub recommendations: Vec<Recommendation>,
    /// The module tree, source lines and forward ↔ backward (absent from older digests).
    #[serde(default)]
    pub modules: crate::analysis::modules::ModuleTable,
    #[serde(default)]
    pub sources: crate::analysis::source::SourceTable,
    #[serde(default)]
    pub backward: Vec<crate::analysis::autograd::BackwardRow>,
    #[serde(default)]
    pub backward_unmatched: u64,
    #[serde(default)]
    pub graphs: crate::analysis::graphs::Graphs,
    #[serde(default)]
    pub health: crate::analysis::graphs::GpuHealth,
}

/// The level-of-detail timeline's parameters (see [`lod`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LodInfo {
    pub resolution_ns: i64,
    pub max_depth: u16,
    /// Slices of the trace at depth ≤ `max_depth` (before merging) and rows written.
    pub slices: u64,
    pub rows: u64,
}

/// `STEM.digest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub source: Source,
    pub rank: Option<i64>,
    pub events: u64,
    pub lod: LodInfo,
    pub tracks: Vec<TrackInfo>,
    pub tables: Vec<TableInfo>,
    pub figures: Figures,
    pub warnings: Vec<String>,
    pub info: Vec<String>,
}

/// Refuses another format or version (`name` for the error).
fn check(name: &str, format: &str, version: u32) -> crate::Result<()> {
    let err = |k: ErrorKind| Error::new(k, 0).in_file(name);
    if format != FORMAT {
        return Err(err(ErrorKind::Incompatible(format!(
            "format {format:?}, not {FORMAT}"
        ))));
    }
    if version != VERSION {
        return Err(err(ErrorKind::Refused(format!(
            "digest version {version} (this build reads version {VERSION}: make the digest again)"
        ))));
    }
    Ok(())
}

/// One rank's digest in memory: the header and the tables, in [`TABLES`] order.
#[derive(Debug, Clone)]
pub struct Digest {
    pub header: Header,
    pub tables: Vec<Table>,
}

/// `worker0.pt.trace.json.gz` → `worker0.pt.trace`: the stem every file of a digest shares.
pub fn stem(file_name: &str) -> &str {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    let s = base.strip_suffix(".gz").unwrap_or(base);
    s.strip_suffix(".json").unwrap_or(s)
}

/// CRC-32 of `bytes`, as [`Source::crc32`] holds it.
pub fn crc32(bytes: &[u8]) -> String {
    let mut c = flate2::Crc::new();
    c.update(bytes);
    format!("{:08x}", c.sum())
}

impl Digest {
    /// The digest of `t` (analysed as `a`), read from a file of `size` bytes whose CRC-32 is
    /// `crc`, to be written under `stem` ([`stem`] of the source name, made unique by the caller).
    pub fn of(t: &Trace, a: &Analysis, source: Source, stem: &str) -> Digest {
        let (timeline, tracks, lod) = lod::timeline(t, a);
        let mut tables = tables::of(a);
        tables.push(timeline);
        let rank = a.rank;
        let tables: Vec<Table> = tables
            .into_iter()
            .map(|mut tb| {
                let r = crate::parquet::Column::new(
                    "rank",
                    crate::parquet::Values::I64(vec![rank.unwrap_or(-1); tb.rows]),
                );
                tb.columns.insert(0, r);
                tb
            })
            .collect();
        let infos = TABLES
            .iter()
            .zip(&tables)
            .map(|(name, tb)| TableInfo {
                name: (*name).to_owned(),
                file: format!("{stem}.{name}.parquet"),
                rows: tb.rows as u64,
                columns: tb
                    .columns
                    .iter()
                    .map(|c| {
                        let null = if c.valid.is_some() { "?" } else { "" };
                        format!("{}:{}{null}", c.name, c.values.type_name())
                    })
                    .collect(),
            })
            .collect();
        Digest {
            header: Header {
                format: FORMAT.to_owned(),
                version: VERSION,
                source,
                rank,
                events: a.events,
                lod,
                tracks,
                tables: infos,
                figures: tables::figures(a),
                warnings: a.warnings.clone(),
                info: a.info.clone(),
            },
            tables,
        }
    }

    /// Parses a header (`name` for errors), refusing other formats and versions.
    pub fn parse_header(name: &str, bytes: &[u8]) -> crate::Result<Header> {
        let err = |k: ErrorKind| Error::new(k, 0).in_file(name);
        let h: Header = serde_json::from_slice(bytes)
            .map_err(|e| err(ErrorKind::Syntax(format!("digest header: {e}"))))?;
        check(name, &h.format, h.version)?;
        Ok(h)
    }

    /// A digest from its header and a reader of its table files by name (relative to the
    /// header's folder). Every table the header lists must be there and readable.
    pub fn read(
        header_name: &str,
        header: &[u8],
        file: impl FnMut(&str) -> Option<Vec<u8>>,
    ) -> crate::Result<Digest> {
        let header = Self::parse_header(header_name, header)?;
        Self::with_tables(header_name, header, file)
    }

    /// [`Digest::read`] keeping of the header's figures only what the run figures and the Ranks
    /// tab read ([`lite`]); launch, sync, FLOP, per-op memory figures, recommendations and the
    /// GPU summary's per-device and per-stream rows come back empty. The page reads digests this
    /// way: deserializing every figure struct cost ~115 KB of wasm (serde's generated visitors),
    /// the run needs none of them.
    pub fn read_run_only(
        header_name: &str,
        header: &[u8],
        file: impl FnMut(&str) -> Option<Vec<u8>>,
    ) -> crate::Result<Digest> {
        let header = lite::parse(header_name, header)?;
        Self::with_tables(header_name, header, file)
    }

    fn with_tables(
        header_name: &str,
        header: Header,
        mut file: impl FnMut(&str) -> Option<Vec<u8>>,
    ) -> crate::Result<Digest> {
        let mut tables = Vec::new();
        for name in TABLES {
            let info = header
                .tables
                .iter()
                .find(|t| t.name == name)
                .ok_or_else(|| {
                    Error::new(ErrorKind::Syntax(format!("no {name} table")), 0)
                        .in_file(header_name)
                })?;
            let bytes = file(&info.file).ok_or_else(|| {
                Error::new(ErrorKind::Io(format!("missing {}", info.file)), 0).in_file(header_name)
            })?;
            tables.push(crate::parquet::read_table(&info.file, &bytes)?);
        }
        Ok(Digest { header, tables })
    }

    /// The analysis and a skeleton trace (the timeline's slices) back from the digest; `name`
    /// names the file in errors and becomes the analysis's path.
    pub fn rebuild(&self, name: &str) -> crate::Result<Rebuilt> {
        rebuild::rebuild(self, name)
    }
}
