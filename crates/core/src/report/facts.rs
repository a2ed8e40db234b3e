//! The first facts about a loaded trace: what the page's header and `tracelight summary` show.

use crate::model::{time::format_duration, Trace, TrackKind};
use crate::warnings::Severity;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct TrackFacts {
    pub process: String,
    pub name: String,
    pub kind: TrackKind,
    pub slices: u32,
    pub max_depth: u16,
}

#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    pub file: String,
    pub events: u64,
    pub slices: usize,
    pub start_ns: i64,
    pub end_ns: i64,
    pub span_ns: i64,
    pub devices: Vec<String>,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub tracks: Vec<TrackFacts>,
    /// What the user must know: data lost or repaired ([`Severity::Warning`]).
    pub warnings: Vec<String>,
    /// Expected of the producer, changes no figure ([`Severity::Info`]): shown collapsed.
    pub info: Vec<String>,
}

/// Device names, identical ones collapsed as "8 × NVIDIA A100…" (traces list every GPU of the host).
fn device_names(t: &Trace) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for d in &t.meta.devices {
        match out.iter_mut().find(|(n, _)| *n == d.name) {
            Some((_, c)) => *c += 1,
            None => out.push((d.name.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(n, c)| if c > 1 { format!("{c} × {n}") } else { n })
        .collect()
}

impl Facts {
    pub fn of(file: &str, t: &Trace) -> Facts {
        Facts::with_bounds(file, t, t.time_bounds())
    }

    /// [`Facts::of`] given the trace's [`Trace::time_bounds`], taken apart (a pass over every
    /// slice: one task of ~60 ms on the page's thread for a 10 GB trace).
    pub fn with_bounds(file: &str, t: &Trace, bounds: Option<(i64, i64)>) -> Facts {
        let (start_ns, end_ns) = bounds.unwrap_or((0, 0));
        Facts {
            file: file.to_owned(),
            events: t.event_count,
            slices: t.slices.len(),
            start_ns,
            end_ns,
            span_ns: end_ns - start_ns,
            devices: device_names(t),
            rank: t.meta.distributed.as_ref().and_then(|d| d.rank),
            world_size: t.meta.distributed.as_ref().and_then(|d| d.world_size),
            tracks: t
                .tracks
                .iter()
                .map(|tr| TrackFacts {
                    process: t.process_label(tr.pid),
                    name: t.str(tr.name).to_owned(),
                    kind: tr.kind,
                    slices: tr.count,
                    max_depth: tr.max_depth,
                })
                .collect(),
            warnings: t.warnings.lines_of(Severity::Warning),
            info: t.warnings.lines_of(Severity::Info),
        }
    }

    /// A few lines of Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!("# {}\n\n", self.file);
        s += &format!("- events: {}\n", self.events);
        s += &format!("- slices: {}\n", self.slices);
        s += &format!("- time span: {}\n", format_duration(self.span_ns));
        if !self.devices.is_empty() {
            s += &format!("- devices: {}\n", self.devices.join(", "));
        }
        if let Some(r) = self.rank {
            s += &format!(
                "- rank: {r}{}\n",
                self.world_size
                    .map(|w| format!(" of {w}"))
                    .unwrap_or_default()
            );
        }
        let shown = self.tracks.iter().filter(|t| t.slices > 0);
        let cpu = shown.clone().filter(|t| t.kind == TrackKind::Cpu).count();
        let gpu = shown.filter(|t| t.kind == TrackKind::Gpu).count();
        s += &format!(
            "- tracks: {} ({cpu} CPU threads, {gpu} GPU streams)\n\n",
            cpu + gpu
        );
        s += "| process | track | kind | slices |\n|---|---|---|---:|\n";
        for t in self.tracks.iter().filter(|t| t.slices > 0) {
            let kind = match t.kind {
                TrackKind::Cpu => "CPU",
                TrackKind::Gpu => "GPU",
            };
            s += &format!("| {} | {} | {kind} | {} |\n", t.process, t.name, t.slices);
        }
        if !self.warnings.is_empty() {
            s += "\n## Warnings\n\n";
            for w in &self.warnings {
                s += &format!("- {w}\n");
            }
        }
        if !self.info.is_empty() {
            s += "\n## Info (expected of the profiler, no figure changes)\n\n";
            for w in &self.info {
                s += &format!("- {w}\n");
            }
        }
        s
    }
}
