//! What the app holds: the opened files (a session), the load in flight, and navigation between
//! views, shared through Leptos context so views stay decoupled.

use crate::timeline::data::TimelineData;
use leptos::prelude::*;
use std::sync::{Arc, OnceLock};
use tracelight_core::ingest::memory_timeline::MemoryTimeline;
use tracelight_core::ingest::snapshot::Snapshot;
use tracelight_core::model::Trace;
use tracelight_core::report::facts::Facts;
use tracelight_core::report::json::Analysis;

/// A loaded Kineto trace with its facts; the analyses are computed on first use, the timeline's
/// data by the loader.
pub struct TraceFile {
    pub trace: Trace,
    pub facts: Facts,
    /// Rank: `distributedInfo.rank`, else from the file name (`rank-N`, `workerN`), else file order.
    pub rank: i64,
    analysis: OnceLock<Analysis>,
    timeline: OnceLock<Arc<TimelineData>>,
}

impl TraceFile {
    pub fn new(name: &str, trace: Trace) -> Self {
        let facts = Facts::of(name, &trace);
        TraceFile {
            trace,
            facts,
            rank: 0,
            analysis: OnceLock::new(),
            timeline: OnceLock::new(),
        }
    }

    /// The timeline's precomputed data (LOD index, counters, groups), built on first use unless
    /// the loader already set it.
    pub fn timeline(&self) -> &Arc<TimelineData> {
        self.timeline
            .get_or_init(|| Arc::new(TimelineData::build(&self.trace)))
    }

    /// Stores data built ahead of the first view (ignored if some is already there).
    pub fn set_timeline(&self, d: TimelineData) {
        let _ = self.timeline.set(Arc::new(d));
    }

    pub fn analysis(&self) -> &Analysis {
        self.analysis
            .get_or_init(|| Analysis::of(&self.facts.file, &self.trace))
    }
}

pub enum Content {
    Trace(Box<TraceFile>),
    Snapshot(Box<Snapshot>),
    MemoryTimeline(Box<MemoryTimeline>),
}

/// One opened file.
pub struct LoadedFile {
    pub name: String,
    pub bytes: u64,
    pub decoded_bytes: u64,
    pub load_ms: f64,
    /// Of `load_ms`, the time the reader itself ran (the rest is the browser reading and yielding).
    pub parse_ms: f64,
    /// From the read request: when the first bytes reached the parser, and when the model was
    /// ready (before the timeline's index is built, which `load_ms` includes).
    pub first_bytes_ms: f64,
    pub model_ms: f64,
    pub content: Content,
}

/// Everything opened together (one drop, one pick, one `?url=`).
#[derive(Default)]
pub struct Session {
    pub files: Vec<LoadedFile>,
}

pub type SessionRef = Arc<Session>;

impl Session {
    /// Indices of the trace files, by rank.
    pub fn trace_indices(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.files.len())
            .filter(|&i| self.trace(i).is_some())
            .collect();
        v.sort_by_key(|&i| self.trace(i).map_or(0, |t| t.rank));
        v
    }

    pub fn trace(&self, i: usize) -> Option<&TraceFile> {
        match &self.files.get(i)?.content {
            Content::Trace(t) => Some(t),
            _ => None,
        }
    }

    pub fn snapshot_indices(&self) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| matches!(self.files[i].content, Content::Snapshot(_)))
            .collect()
    }

    pub fn timeline_indices(&self) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| matches!(self.files[i].content, Content::MemoryTimeline(_)))
            .collect()
    }
}

/// Progress of the load in flight, measured in raw bytes read.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub name: String,
    pub done: u64,
    pub total: Option<u64>,
    pub mb_per_s: f64,
    pub phase: &'static str,
}

impl Progress {
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .filter(|&t| t > 0)
            .map(|t| (self.done as f64 / t as f64).min(1.0))
    }
}

/// The views of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tab {
    Overview,
    Timeline,
    Operators,
    Kernels,
    Gpu,
    Memory,
}

impl Tab {
    pub const ALL: [Tab; 6] = [
        Tab::Overview,
        Tab::Timeline,
        Tab::Operators,
        Tab::Kernels,
        Tab::Gpu,
        Tab::Memory,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Tab::Overview => "Overview",
            Tab::Timeline => "Timeline",
            Tab::Operators => "Operators",
            Tab::Kernels => "Kernels",
            Tab::Gpu => "GPU",
            Tab::Memory => "Memory",
        }
    }

    pub fn slug(self) -> &'static str {
        match self {
            Tab::Overview => "overview",
            Tab::Timeline => "timeline",
            Tab::Operators => "operators",
            Tab::Kernels => "kernels",
            Tab::Gpu => "gpu",
            Tab::Memory => "memory",
        }
    }

    pub fn from_slug(s: &str) -> Option<Tab> {
        Tab::ALL.into_iter().find(|t| t.slug() == s)
    }
}

/// A request from any view to show slices in the timeline ("row click → occurrences").
#[derive(Clone, Debug, PartialEq)]
pub struct Reveal {
    /// Index of the trace file in the session.
    pub file: usize,
    /// Slice indices to highlight; the timeline zooms to the first and lets the user step through.
    pub slices: Arc<Vec<u32>>,
    /// What they are, for the timeline's banner ("aten::mm — 120 occurrences").
    pub label: String,
}

/// Navigation state shared by all views through context (`use_context::<Nav>()`).
#[derive(Clone, Copy)]
pub struct Nav {
    pub tab: RwSignal<Tab>,
    /// The trace file (index into `Session::files`) the trace views show.
    pub file: RwSignal<usize>,
    pub reveal: RwSignal<Option<Reveal>>,
}

impl Nav {
    pub fn new() -> Self {
        Nav {
            tab: RwSignal::new(Tab::Overview),
            file: RwSignal::new(0),
            reveal: RwSignal::new(None),
        }
    }

    /// Switches to the timeline showing `slices` of trace file `file`.
    pub fn reveal(&self, file: usize, slices: Vec<u32>, label: String) {
        // Only real changes: setting the same tab or file re-renders (remounts) the active view.
        if self.file.get_untracked() != file {
            self.file.set(file);
        }
        self.reveal.set(Some(Reveal {
            file,
            slices: Arc::new(slices),
            label,
        }));
        if self.tab.get_untracked() != Tab::Timeline {
            self.tab.set(Tab::Timeline);
        }
    }
}

impl Default for Nav {
    fn default() -> Self {
        Self::new()
    }
}

/// The trace time the timeline shows, `[start_ns, end_ns)` in the trace's own clock; other views
/// (the memory lane under the timeline) follow it. Provided through context by `App`.
#[derive(Clone, Copy)]
pub struct TimeWindow(pub RwSignal<(i64, i64)>);
