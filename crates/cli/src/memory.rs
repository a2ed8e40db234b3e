//! Allocator snapshots and memory timelines given to `summary` / `analyze`: their `files`
//! entries, Markdown and JSON blocks.

use tracelight_core::ingest::Loaded;
use tracelight_core::report::memory as memory_report;

/// A snapshot or memory timeline, analysed for `summary` / `analyze`.
pub struct MemoryFile {
    path: String,
    format: &'static str,
    events: u64,
    warnings: Vec<String>,
    snapshot: Option<tracelight_core::analysis::snapshot::SnapshotSummary>,
    timeline: Option<tracelight_core::ingest::memory_timeline::TimelinePeak>,
}

impl MemoryFile {
    /// Its `files` entry (docs/definitions.md).
    pub fn file_json(&self) -> serde_json::Value {
        serde_json::json!({"path": self.path, "format": self.format, "events": self.events})
    }

    pub fn of(path: &str, loaded: &Loaded) -> MemoryFile {
        use tracelight_core::analysis::snapshot::summarize;
        use tracelight_core::ingest::memory_timeline::peak;
        let mut m = MemoryFile {
            path: path.to_owned(),
            format: loaded.format().label(),
            events: 0,
            warnings: Vec::new(),
            snapshot: None,
            timeline: None,
        };
        match loaded {
            Loaded::Snapshot(s) => {
                m.events = s.records();
                m.warnings = s.warnings.lines();
                m.snapshot = Some(summarize(s));
            }
            Loaded::MemoryTimeline(t) => {
                m.events = t.records;
                m.timeline = Some(peak(t));
            }
            Loaded::Trace(_) | Loaded::ExecTrace(_) | Loaded::FlightRecorder(_) => {}
        }
        m
    }
}

/// `summary`'s Markdown for snapshots and memory timelines.
pub fn memory_markdown(files: &[MemoryFile]) -> String {
    let mut out = String::new();
    for f in files {
        if let Some(s) = &f.snapshot {
            out += &memory_report::snapshot_markdown(&f.path, s, &f.warnings);
        }
        if let Some(t) = &f.timeline {
            out += &memory_report::timeline_markdown(&f.path, t);
        }
        out.push('\n');
    }
    out
}

/// `analyze --json`'s object for snapshots and memory timelines (docs/definitions.md): `files` plus
/// a `snapshot` block (devices of every snapshot given) and, for timelines, a `memory_timeline`
/// block.
pub fn memory_json(files: &[MemoryFile]) -> serde_json::Value {
    let list: Vec<serde_json::Value> = files
        .iter()
        .map(|f| serde_json::json!({"path": f.path, "format": f.format, "events": f.events}))
        .collect();
    let mut v = serde_json::json!({"files": list});
    let devices: Vec<&tracelight_core::analysis::snapshot::DeviceMemory> = files
        .iter()
        .filter_map(|f| f.snapshot.as_ref())
        .flat_map(|s| s.devices.iter())
        .collect();
    if files.iter().any(|f| f.snapshot.is_some()) {
        v["snapshot"] = serde_json::json!({ "devices": devices });
    }
    let timelines: Vec<serde_json::Value> = files
        .iter()
        .filter_map(|f| {
            f.timeline
                .as_ref()
                .map(|t| serde_json::json!({"path": f.path, "peak": t}))
        })
        .collect();
    if !timelines.is_empty() {
        v["memory_timeline"] = serde_json::Value::Array(timelines);
    }
    let warnings: Vec<String> = files
        .iter()
        .flat_map(|f| f.warnings.iter().map(move |w| format!("{}: {w}", f.path)))
        .collect();
    v["warnings"] = serde_json::json!(warnings);
    v
}
