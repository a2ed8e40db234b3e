//! The header as the page reads it ([`super::Digest::read_run_only`]): the fields the run and the
//! Ranks tab use, taken by hand from a `serde_json::Value` (whose parser the page has anyway).
//! Deriving `Deserialize` for them cost ~60 KB of wasm in serde's generated visitors; the launch,
//! sync, FLOP and per-op memory figures and the recommendations are not read (left empty), nor
//! the GPU summary's per-device and per-stream rows.

use super::{Figures, Header, LodInfo, Source, TableInfo, TrackInfo};
use crate::analysis::gpu::{GpuSummary, Overlap, Temporal};
use crate::analysis::memory::DeviceMemory;
use crate::{Error, ErrorKind};
use serde_json::Value;

type R<T> = Result<T, String>;

fn get<'v>(v: &'v Value, k: &str) -> R<&'v Value> {
    v.get(k).ok_or_else(|| format!("no {k}"))
}

fn int(v: &Value, k: &str) -> R<i64> {
    get(v, k)?
        .as_i64()
        .ok_or_else(|| format!("{k} is not an integer"))
}

fn opt_int(v: &Value, k: &str) -> Option<i64> {
    v.get(k).and_then(Value::as_i64)
}

fn text(v: &Value, k: &str) -> R<String> {
    get(v, k)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{k} is not a string"))
}

fn flag(v: &Value, k: &str) -> R<bool> {
    get(v, k)?
        .as_bool()
        .ok_or_else(|| format!("{k} is not a boolean"))
}

fn list<'v>(v: &'v Value, k: &str) -> R<&'v Vec<Value>> {
    get(v, k)?
        .as_array()
        .ok_or_else(|| format!("{k} is not a list"))
}

fn strings(v: &Value, k: &str) -> R<Vec<String>> {
    list(v, k)?
        .iter()
        .map(|s| {
            s.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{k}: not a string"))
        })
        .collect()
}

/// `[["comm", 5798000], …]`.
fn pairs(v: &Value, k: &str) -> R<Vec<(String, i64)>> {
    list(v, k)?
        .iter()
        .map(|p| match p.as_array().map(Vec::as_slice) {
            Some([a, b]) => Ok((
                a.as_str().unwrap_or_default().to_owned(),
                b.as_i64().ok_or_else(|| format!("{k}: not an integer"))?,
            )),
            _ => Err(format!("{k}: not a pair")),
        })
        .collect()
}

fn temporal(v: &Value) -> R<Temporal> {
    Ok(Temporal {
        kernel_span_ns: int(v, "kernel_span_ns")?,
        busy_ns: int(v, "busy_ns")?,
        compute_ns: int(v, "compute_ns")?,
        non_compute_ns: int(v, "non_compute_ns")?,
        idle_ns: int(v, "idle_ns")?,
    })
}

fn gpu(v: &Value) -> R<GpuSummary> {
    let o = get(v, "overlap")?;
    Ok(GpuSummary {
        utilization: v.get("utilization").and_then(Value::as_f64),
        busy_ns: int(v, "busy_ns")?,
        idle_ns: int(v, "idle_ns")?,
        window_ns: int(v, "window_ns")?,
        window_start_ns: int(v, "window_start_ns")?,
        window_end_ns: int(v, "window_end_ns")?,
        window_from_steps: flag(v, "window_from_steps")?,
        devices: Vec::new(),
        temporal: temporal(get(v, "temporal")?)?,
        overlap: Overlap {
            comm_ns: int(o, "comm_ns")?,
            compute_ns: int(o, "compute_ns")?,
            overlap_ns: int(o, "overlap_ns")?,
            exposed_comm_ns: int(o, "exposed_comm_ns")?,
            overlap_pct: o.get("overlap_pct").and_then(Value::as_f64),
        },
        idle_gaps: Vec::new(),
    })
}

fn memory(v: &Value) -> R<DeviceMemory> {
    Ok(DeviceMemory {
        device_type: int(v, "device_type")? as i16,
        device_id: int(v, "device_id")? as i16,
        events: int(v, "events")? as u64,
        peak_allocated_bytes: int(v, "peak_allocated_bytes")?,
        peak_reserved_bytes: int(v, "peak_reserved_bytes")?,
        reserved_recorded: flag(v, "reserved_recorded")?,
        peak_ts_ns: int(v, "peak_ts_ns")?,
        peak_op: v.get("peak_op").and_then(Value::as_str).map(str::to_owned),
        peak_op_slice: opt_int(v, "peak_op_slice").map(|x| x as u32),
        capacity_bytes: opt_int(v, "capacity_bytes").map(|x| x as u64),
    })
}

fn track(v: &Value) -> R<TrackInfo> {
    Ok(TrackInfo {
        pid: text(v, "pid")?,
        tid: text(v, "tid")?,
        process: text(v, "process")?,
        name: text(v, "name")?,
        gpu: flag(v, "gpu")?,
        device: opt_int(v, "device"),
        stream: opt_int(v, "stream"),
        sort_index: opt_int(v, "sort_index"),
    })
}

fn table(v: &Value) -> R<TableInfo> {
    Ok(TableInfo {
        name: text(v, "name")?,
        file: text(v, "file")?,
        rows: int(v, "rows")? as u64,
        columns: strings(v, "columns")?,
    })
}

fn header(v: &Value, name: &str) -> crate::Result<Header> {
    let format = text(v, "format").unwrap_or_default();
    let version = int(v, "version").unwrap_or(-1);
    super::check(name, &format, u32::try_from(version).unwrap_or(u32::MAX))?;
    let rest = || -> R<Header> {
        let s = get(v, "source")?;
        let l = get(v, "lod")?;
        let f = get(v, "figures")?;
        Ok(Header {
            format: format.clone(),
            version: super::VERSION,
            source: Source {
                name: text(s, "name")?,
                size: int(s, "size")? as u64,
                crc32: text(s, "crc32")?,
            },
            rank: opt_int(v, "rank"),
            events: int(v, "events")? as u64,
            lod: LodInfo {
                resolution_ns: int(l, "resolution_ns")?,
                max_depth: int(l, "max_depth")? as u16,
                slices: int(l, "slices")? as u64,
                rows: int(l, "rows")? as u64,
            },
            tracks: list(v, "tracks")?.iter().map(track).collect::<R<_>>()?,
            tables: list(v, "tables")?.iter().map(table).collect::<R<_>>()?,
            figures: Figures {
                self_cpu_total_ns: int(f, "self_cpu_total_ns")?,
                self_device_total_ns: int(f, "self_device_total_ns")?,
                kernels_total_ns: int(f, "kernels_total_ns")?,
                categories: pairs(f, "categories")?,
                categories_literal: pairs(f, "categories_literal")?,
                fine_categories: pairs(f, "fine_categories")?,
                gpu: gpu(get(f, "gpu")?)?,
                temporal_hta: temporal(get(f, "temporal_hta")?)?,
                memory: list(f, "memory")?.iter().map(memory).collect::<R<_>>()?,
                memory_ops: Vec::new(),
                launch: Default::default(),
                sync: Vec::new(),
                flops: Default::default(),
                roofline: Default::default(),
                idle: Default::default(),
                recommendations: Vec::new(),
                modules: Default::default(),
                sources: Default::default(),
                backward: Vec::new(),
                backward_unmatched: 0,
                graphs: Default::default(),
                health: Default::default(),
            },
            warnings: strings(v, "warnings")?,
            info: strings(v, "info")?,
        })
    };
    rest()
        .map_err(|e| Error::new(ErrorKind::Syntax(format!("digest header: {e}")), 0).in_file(name))
}

fn value(name: &str, bytes: &[u8]) -> crate::Result<Value> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::new(ErrorKind::Syntax(format!("digest header: {e}")), 0).in_file(name))
}

pub fn parse(name: &str, bytes: &[u8]) -> crate::Result<Header> {
    header(&value(name, bytes)?, name)
}

/// The table files a header lists (what to read before [`super::Digest::read_run_only`]).
pub fn table_files(name: &str, bytes: &[u8]) -> crate::Result<Vec<String>> {
    let v = value(name, bytes)?;
    let files = list(&v, "tables")
        .and_then(|t| t.iter().map(|x| text(x, "file")).collect::<R<Vec<_>>>())
        .map_err(|e| {
            Error::new(ErrorKind::Syntax(format!("digest header: {e}")), 0).in_file(name)
        })?;
    Ok(files)
}
