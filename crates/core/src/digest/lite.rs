//! The header as the page reads it ([`super::Digest::read_run_only`]): every field but the
//! figures the run does not use, so serde generates visitors for a handful of structs only.

use super::{Figures, Header, LodInfo, Source, TableInfo, TrackInfo};
use crate::analysis::gpu::{GpuSummary, Temporal};
use crate::analysis::memory::DeviceMemory;
use crate::{Error, ErrorKind};
use serde::Deserialize;

#[derive(Deserialize)]
struct FiguresLite {
    self_cpu_total_ns: i64,
    self_device_total_ns: i64,
    kernels_total_ns: i64,
    categories: Vec<(String, i64)>,
    categories_literal: Vec<(String, i64)>,
    fine_categories: Vec<(String, i64)>,
    gpu: GpuSummary,
    temporal_hta: Temporal,
    memory: Vec<DeviceMemory>,
}

#[derive(Deserialize)]
struct HeaderLite {
    format: String,
    version: u32,
    source: Source,
    rank: Option<i64>,
    events: u64,
    lod: LodInfo,
    tracks: Vec<TrackInfo>,
    tables: Vec<TableInfo>,
    figures: FiguresLite,
    warnings: Vec<String>,
    info: Vec<String>,
}

pub fn parse(name: &str, bytes: &[u8]) -> crate::Result<Header> {
    let h: HeaderLite = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(ErrorKind::Syntax(format!("digest header: {e}")), 0).in_file(name)
    })?;
    super::check(name, &h.format, h.version)?;
    let f = h.figures;
    Ok(Header {
        format: h.format,
        version: h.version,
        source: h.source,
        rank: h.rank,
        events: h.events,
        lod: h.lod,
        tracks: h.tracks,
        tables: h.tables,
        figures: Figures {
            self_cpu_total_ns: f.self_cpu_total_ns,
            self_device_total_ns: f.self_device_total_ns,
            kernels_total_ns: f.kernels_total_ns,
            categories: f.categories,
            categories_literal: f.categories_literal,
            fine_categories: f.fine_categories,
            gpu: f.gpu,
            temporal_hta: f.temporal_hta,
            memory: f.memory,
            memory_ops: Vec::new(),
            launch: Default::default(),
            sync: Vec::new(),
            flops: Default::default(),
            recommendations: Vec::new(),
        },
        warnings: h.warnings,
        info: h.info,
    })
}

#[derive(Deserialize)]
struct TablesOnly {
    tables: Vec<TableInfo>,
}

/// The table files a header lists (what to read before [`super::Digest::read_run_only`]).
pub fn table_files(name: &str, bytes: &[u8]) -> crate::Result<Vec<String>> {
    let t: TablesOnly = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(ErrorKind::Syntax(format!("digest header: {e}")), 0).in_file(name)
    })?;
    Ok(t.tables.into_iter().map(|t| t.file).collect())
}
