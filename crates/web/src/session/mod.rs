//! What the app holds: the opened files (a session), the load in flight, and navigation between
//! views, shared through Leptos context so views stay decoupled.

pub mod colors;
pub mod derived;
pub mod lane;
pub mod memory;
mod nav;
mod notice;
pub mod pair;
pub mod reveal;
pub mod run;
pub mod series;

pub use nav::{
    FineRules, FlameArea, FlameScope, FlameState, Nav, Progress, Reveal, Tab, TimeWindow,
};
pub use notice::Notice;

use crate::platform::reread::Source;
use derived::TimelineData;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tracelight_core::analysis::et::Producers;
use tracelight_core::analysis::et_link::{link, same_process, EtLink};
use tracelight_core::analysis::kernels::{default_fine_rules, FineRule};
use tracelight_core::analysis::memory_chart::MemoryChart;
use tracelight_core::analysis::scope::ScopeSpec;
use tracelight_core::analysis::snapshot::SnapshotSummary;
use tracelight_core::analysis::snapshot_flame::PeakFlame;
use tracelight_core::ingest::flight_recorder::FrDump;
use tracelight_core::ingest::memory_timeline::MemoryTimeline;
use tracelight_core::ingest::snapshot::Snapshot;
use tracelight_core::model::exec_trace::ExecTrace;
use tracelight_core::model::Trace;
use tracelight_core::report::facts::Facts;
use tracelight_core::report::json::Analysis;
use tracelight_core::report::snapshot_wire::SnapshotViews;

/// A loaded Kineto trace with its facts; the analyses are computed on first use, the timeline's
/// data by the loader.
pub struct TraceFile {
    pub trace: Trace,
    pub facts: Facts,
    /// Rank: `distributedInfo.rank`, else from the file name (`rank-N`, `workerN`), else file order.
    pub rank: i64,
    analysis: OnceLock<Analysis>,
    /// The analyses over the scopes picked so far ([`TraceFile::analysis_in`]).
    scoped: OnceLock<Box<Scoped>>,
    /// A digest's: its analysis came with it and its events are a skeleton, so no scope.
    digest: bool,
    timeline: OnceLock<Arc<TimelineData>>,
    /// The session's ET file of this trace's process and the link to it, made on first use.
    et_link: OnceLock<Option<(usize, EtLink)>>,
    /// Whether a reader worker computed `analysis` (the load stats say so, for the benchmarks).
    from_worker: AtomicBool,
    /// Whether a reader worker computed the timeline's parts beside its index (the same).
    timeline_from_worker: AtomicBool,
    /// The bytes the trace was read from, where its reader left display-only args in them
    /// (the reader workers do): the details panel reads a slice's args there.
    pub source: Option<Source>,
}

impl TraceFile {
    pub fn new(name: &str, trace: Trace) -> Self {
        let bounds = trace.time_bounds();
        TraceFile::with_bounds(name, trace, bounds)
    }

    /// [`TraceFile::new`] given the trace's time bounds ([`Trace::time_bounds`], which the
    /// loader takes a part per task).
    pub fn with_bounds(name: &str, trace: Trace, bounds: Option<(i64, i64)>) -> Self {
        let facts = Facts::with_bounds(name, &trace, bounds);
        TraceFile {
            trace,
            facts,
            rank: 0,
            analysis: OnceLock::new(),
            scoped: OnceLock::new(),
            digest: false,
            timeline: OnceLock::new(),
            et_link: OnceLock::new(),
            from_worker: AtomicBool::new(false),
            timeline_from_worker: AtomicBool::new(false),
            source: None,
        }
    }

    /// The trace as read from `blob` by a reader that left args in it.
    pub fn with_source(mut self, blob: &web_sys::Blob) -> Self {
        self.source = Some(Source::keep(blob));
        self
    }

    /// A trace file whose analysis is already known (a digest's: its skeleton trace would give
    /// other figures).
    pub fn with_analysis(mut self, a: Analysis) -> Self {
        let _ = self.analysis.set(a);
        self.digest = true;
        self
    }

    /// Stores the analysis a reader worker computed from this very model (ignored if one is
    /// already there), so the page does not compute it on its own thread.
    pub fn set_analysis(&self, a: Analysis) {
        if self.analysis.set(a).is_ok() {
            self.from_worker.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the analysis came from a reader worker ([`TraceFile::set_analysis`]).
    pub fn analysed_in_worker(&self) -> bool {
        self.from_worker.load(Ordering::Relaxed)
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

    /// [`TraceFile::set_timeline`] with parts a reader worker computed (`view::parts`).
    pub fn set_timeline_from_worker(&self, d: TimelineData) {
        if self.timeline.set(Arc::new(d)).is_ok() {
            self.timeline_from_worker.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the timeline's parts came from a reader worker.
    pub fn timeline_in_worker(&self) -> bool {
        self.timeline_from_worker.load(Ordering::Relaxed)
    }

    pub fn analysis(&self) -> &Analysis {
        self.analysis
            .get_or_init(|| Analysis::of(&self.facts.file, &self.trace))
    }

    /// The analysis with the finer kernel categories under `rules` (the user's edits); the
    /// cached one, not a copy, while the rules are the defaults.
    pub fn analysis_with(&self, rules: &[FineRule]) -> Cow<'_, Analysis> {
        self.analysis_with_in(rules, &ScopeSpec::Whole)
    }

    /// The tables over `spec` (the scope picker's choice): core's [`Analysis::scoped`], the
    /// function behind the CLI's `--scope`, kept per scope for the session (a scope picked
    /// again, or a tab switch under it, costs nothing). The whole trace's when `spec` is
    /// [`ScopeSpec::Whole`] or names nothing in this trace ([`TraceFile::scope_error`] says so).
    pub fn analysis_in(&self, spec: &ScopeSpec) -> &Analysis {
        if *spec == ScopeSpec::Whole || self.digest {
            return self.analysis();
        }
        // An append-only chain of cells: each scope's analysis lives as long as the file and is
        // lent out by reference, as the whole trace's is.
        let mut cell = &self.scoped;
        loop {
            let node = cell.get_or_init(|| {
                let a = match spec.resolve(&self.trace) {
                    Ok(Some(scope)) => Some(self.analysis().scoped(&self.trace, &scope)),
                    _ => None,
                };
                Box::new(Scoped {
                    spec: spec.clone(),
                    analysis: a,
                    next: OnceLock::new(),
                })
            });
            if node.spec == *spec {
                return node.analysis.as_ref().unwrap_or_else(|| self.analysis());
            }
            cell = &node.next;
        }
    }

    /// [`TraceFile::analysis_in`] under the scope picker's choice (`Nav::scope`); the views
    /// under it remount when it changes, so they read it untracked.
    pub fn analysis_at(&self, scope: leptos::prelude::RwSignal<ScopeSpec>) -> &Analysis {
        use leptos::prelude::WithUntracked;
        scope
            .try_with_untracked(|sp| self.analysis_in(sp))
            .unwrap_or_else(|| self.analysis())
    }

    /// Of `slices`, those in the scope picker's scope (host events by their start, GPU work by
    /// its launch: `TimeScope::slice_mask`, the rule the scoped tables count by), so a row's
    /// "show in timeline" shows the occurrences its scoped figures count.
    pub fn in_scope(
        &self,
        scope: leptos::prelude::RwSignal<ScopeSpec>,
        slices: Vec<u32>,
    ) -> Vec<u32> {
        use leptos::prelude::GetUntracked;
        let spec = scope.try_get_untracked().unwrap_or_default();
        if spec == ScopeSpec::Whole || self.digest {
            return slices;
        }
        match spec.resolve(&self.trace) {
            Ok(Some(sc)) => {
                let keep = sc.slice_mask(&self.trace);
                slices
                    .into_iter()
                    .filter(|&i| keep.get(i as usize).copied().unwrap_or(false))
                    .collect()
            }
            _ => slices,
        }
    }

    /// Why `spec` names nothing in this trace (`no ProfilerStep#9 …`), or `None` when it does.
    pub fn scope_error(&self, spec: &ScopeSpec) -> Option<String> {
        if self.digest && *spec != ScopeSpec::Whole {
            return Some("a digest holds the whole trace's tables, not its events: open the trace to scope them".into());
        }
        spec.resolve(&self.trace).err()
    }

    /// [`TraceFile::analysis_with`] over a scope.
    pub fn analysis_with_in(&self, rules: &[FineRule], spec: &ScopeSpec) -> Cow<'_, Analysis> {
        let a = self.analysis_in(spec);
        if rules == default_fine_rules().as_slice() {
            Cow::Borrowed(a)
        } else {
            Cow::Owned(a.with_fine_rules(rules))
        }
    }
}

/// One scope's analysis in [`TraceFile`]'s chain; `None` when the scope names nothing here.
struct Scoped {
    spec: ScopeSpec,
    analysis: Option<Analysis>,
    next: OnceLock<Box<Scoped>>,
}

pub enum Content {
    Trace(Box<TraceFile>),
    Snapshot(Box<SnapshotFile>),
    MemoryTimeline(Box<MemoryTimeline>),
    ExecTrace(Box<EtFile>),
    /// One rank's Flight Recorder dump.
    FlightRecorder(Box<FrDump>),
}

/// A memory snapshot, with the views (summary, charts) the worker that decoded it built when one
/// did (`report::snapshot_wire`); `session::memory` takes them from here before computing any.
pub struct SnapshotFile {
    pub snap: Snapshot,
    pub summary: Option<Arc<SnapshotSummary>>,
    /// `(device, chart)` of the devices the Memory tab lists.
    pub charts: Vec<(i64, Arc<MemoryChart>)>,
    /// `(device, peak flame graph)`, the same devices.
    pub flames: Vec<(i64, Arc<PeakFlame>)>,
    /// The views alone, while the model is still coming from the snapshot's worker: `snap` is
    /// then empty, and what needs the model (the segment map, an allocation's stack, Compare)
    /// waits for the file that replaces this one ([`SnapshotFile::awaiting_model`]).
    pub pending: bool,
}

impl SnapshotFile {
    pub fn new(snap: Snapshot, views: Option<SnapshotViews>) -> Box<SnapshotFile> {
        let (summary, charts, flames) = match views {
            Some(v) => {
                let flames = v
                    .charts
                    .iter()
                    .map(|(d, _)| *d)
                    .zip(v.flames.into_iter().map(Arc::new))
                    .collect();
                let charts = v
                    .charts
                    .into_iter()
                    .map(|(d, c)| (d, Arc::new(c)))
                    .collect();
                (Some(Arc::new(v.summary)), charts, flames)
            }
            None => (None, Vec::new(), Vec::new()),
        };
        Box::new(SnapshotFile {
            snap,
            summary,
            charts,
            flames,
            pending: false,
        })
    }

    /// The worker's views before its model: the figures and the chart are drawn from them while
    /// the model's sections arrive (`load::snapshot_worker`).
    pub fn awaiting_model(views: SnapshotViews) -> Box<SnapshotFile> {
        let mut f = SnapshotFile::new(Snapshot::default(), Some(views));
        f.pending = true;
        f
    }

    /// This file's views with the whole model: the same charts and summary (shared, not
    /// copied), so nothing drawn from them is computed again.
    pub fn with_model(&self, snap: Snapshot) -> Box<SnapshotFile> {
        Box::new(SnapshotFile {
            snap,
            summary: self.summary.clone(),
            charts: self.charts.clone(),
            flames: self.flames.clone(),
            pending: false,
        })
    }
}

impl std::ops::Deref for SnapshotFile {
    type Target = Snapshot;
    fn deref(&self) -> &Snapshot {
        &self.snap
    }
}

/// A Chakra execution trace with its data-dependency index (built at load: tens of ms).
pub struct EtFile {
    pub et: ExecTrace,
    pub producers: Producers,
}

impl EtFile {
    pub fn new(et: ExecTrace) -> Self {
        let producers = Producers::build(&et);
        EtFile { et, producers }
    }
}

/// A trace this big (decoded bytes) or bigger is read by workers (`load::pool`) and its views
/// render in several tasks ([`LoadedFile::is_big`]); smaller ones parse within a few 30 ms slices
/// and render at once.
pub const BIG_FILE_BYTES: u64 = 16_000_000;

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
    /// Workers that read it on other cores (`load/pool.rs`); 0 when the page's thread did.
    pub workers: u32,
    /// The head of a big trace shown while the whole loads (`load::preview`).
    pub preview: bool,
    pub content: Content,
}

impl LoadedFile {
    /// A snapshot whose views are shown while its model is still coming ([`SnapshotFile::pending`]).
    pub fn awaiting_model(&self) -> bool {
        matches!(&self.content, Content::Snapshot(s) if s.pending)
    }

    /// A big trace (or a big trace's preview): its Overview renders its cards a task each
    /// (`widgets::later`), so no task of the page runs long while workers hold the other cores.
    /// Big from [`BIG_FILE_BYTES`]: at 128 MB and up only, the Overview of a real 35 MB trace
    /// (A100, 8 ranks) was one render of 80-87 ms.
    pub fn is_big(&self) -> bool {
        self.preview || self.decoded_bytes >= BIG_FILE_BYTES
    }
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
        tracelight_core::sort::by_key(&mut v, |&i| self.trace(i).map_or(0, |t| t.rank));
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

    pub fn et(&self, i: usize) -> Option<&EtFile> {
        match &self.files.get(i)?.content {
            Content::ExecTrace(e) => Some(e),
            _ => None,
        }
    }

    pub fn et_indices(&self) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| self.et(i).is_some())
            .collect()
    }

    /// The ET node linked to slice `slice` of trace file `file`: the ET is the one recorded by the
    /// trace's process (same pid), else the session's only ET with its only trace.
    pub fn et_node(&self, file: usize, slice: u32) -> Option<(&EtFile, usize)> {
        let tf = self.trace(file)?;
        let l = tf.et_link.get_or_init(|| {
            let ets = self.et_indices();
            let pick = ets
                .iter()
                .copied()
                .find(|&e| self.et(e).is_some_and(|f| same_process(&tf.trace, &f.et)))
                .or_else(|| match (ets.as_slice(), self.trace_indices().len()) {
                    ([only], 1) => Some(*only),
                    _ => None,
                })?;
            Some((pick, link(&tf.trace, &self.et(pick)?.et)))
        });
        let (e, l) = l.as_ref()?;
        Some((self.et(*e)?, l.node_of(slice)? as usize))
    }

    /// Tabs that have something to show for this session.
    /// Whether a snapshot's model is still coming (its views are on screen meanwhile).
    pub fn awaiting_model(&self) -> bool {
        self.files.iter().any(LoadedFile::awaiting_model)
    }

    pub fn available_tabs(&self) -> Vec<Tab> {
        let has_trace = !self.trace_indices().is_empty();
        let has_memory = !self.snapshot_indices().is_empty()
            || !self.timeline_indices().is_empty()
            || self
                .files
                .iter()
                .any(|f| matches!(&f.content, Content::Trace(t) if !t.trace.memory.ts.is_empty()));
        // A CPU-only trace has no GPU or Kernels tab to open onto an empty page.
        // Through the GPU rows (few, kernels first among them), not every slice: the CPU tracks'
        // millions of slices come first in slice order.
        let has_gpu = self.files.iter().any(|f| match &f.content {
            Content::Trace(t) => {
                let s = &t.trace.slices;
                t.trace
                    .gpu
                    .slice
                    .iter()
                    .any(|&i| s.kind.get(i as usize).is_some_and(|k| k.is_gpu_work()))
            }
            _ => false,
        });
        Tab::ALL
            .into_iter()
            .filter(|t| match t {
                Tab::Memory => has_memory,
                Tab::Ranks => {
                    self.trace_indices().len() > 1
                        || self.has_flight_recorder()
                        || self.snapshot_indices().len() > 1
                }
                // Two snapshots compare too (the snapshot diff), once their models are here.
                Tab::Compare => {
                    (has_trace || !self.snapshot_indices().is_empty()) && !self.awaiting_model()
                }
                Tab::Kernels | Tab::Gpu | Tab::Roofline => has_gpu,
                // Only while a trend is open: `app.rs` adds it.
                Tab::Trend => false,
                _ => has_trace,
            })
            .collect()
    }

    /// Whether any Flight Recorder dump is open (the Ranks tab shows their verdict).
    pub fn has_flight_recorder(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.content, Content::FlightRecorder(_)))
    }

    pub fn timeline_indices(&self) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| matches!(self.files[i].content, Content::MemoryTimeline(_)))
            .collect()
    }
}
