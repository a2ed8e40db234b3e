//! Navigation between views (tab, file, "show in timeline"), the trace time the timeline shows,
//! and the load in flight: signals shared through Leptos context.

use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::kernels::{default_fine_rules, FineRule};
use tracelight_core::analysis::scope::ScopeSpec;

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
    /// The nn.Module tree, source lines, forward ↔ backward (issue 25).
    Modules,
    /// The flame graph of the op tree (issue 18).
    Flame,
    Kernels,
    Gpu,
    /// Ops against the device's roofs (issue 26).
    Roofline,
    /// A run of several rank traces (issue 13).
    Ranks,
    Memory,
    Compare,
    /// A folder of runs as a series (issue 28): shown once a trend is open.
    Trend,
}

impl Tab {
    pub const ALL: [Tab; 12] = [
        Tab::Overview,
        Tab::Timeline,
        Tab::Operators,
        Tab::Modules,
        Tab::Flame,
        Tab::Kernels,
        Tab::Gpu,
        Tab::Roofline,
        Tab::Ranks,
        Tab::Memory,
        Tab::Compare,
        Tab::Trend,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Tab::Overview => "Overview",
            Tab::Timeline => "Timeline",
            Tab::Operators => "Operators",
            Tab::Modules => "Modules",
            Tab::Flame => "Flame graph",
            Tab::Kernels => "Kernels",
            Tab::Gpu => "GPU",
            Tab::Roofline => "Roofline",
            Tab::Ranks => "Ranks",
            Tab::Memory => "Memory",
            Tab::Compare => "Compare",
            Tab::Trend => "Trend",
        }
    }

    pub fn slug(self) -> &'static str {
        match self {
            Tab::Overview => "overview",
            Tab::Timeline => "timeline",
            Tab::Operators => "operators",
            Tab::Modules => "modules",
            Tab::Flame => "flame",
            Tab::Kernels => "kernels",
            Tab::Gpu => "gpu",
            Tab::Roofline => "roofline",
            Tab::Ranks => "ranks",
            Tab::Memory => "memory",
            Tab::Compare => "compare",
            Tab::Trend => "trend",
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
    /// Which of them (in time order) to show first: 0 for a row click, N-1 for the Nth
    /// occurrence a deep link or a host page asked for.
    pub first: usize,
    /// Time intervals `[start, end)` (trace ns) to step through instead of slices: idle
    /// stretches have no slice of their own. Empty for a slice reveal.
    pub ranges: Arc<Vec<(i64, i64)>>,
}

/// What the flame graph shows, kept for the session so a trip to the timeline and back (a frame's
/// occurrences) finds it as it was.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FlameState {
    /// The trace file the scope below belongs to.
    pub file: usize,
    /// The scope: the whole trace, one `ProfilerStep#N` (its slice), or the timeline's area.
    pub scope: FlameScope,
    /// An area selection the timeline handed over (`[t0, t1)` and its tracks), kept as a choice
    /// of the scope picker while another scope is shown.
    pub area: Option<FlameArea>,
    /// Width by GPU time launched instead of host time.
    pub device: bool,
    pub python: bool,
    /// The frame shown as root (a node of the graph of this scope), 0 for the whole graph.
    pub zoom: u32,
    /// Slices whose frame to open once the graph is built (a module row's calls): the flame
    /// graph zooms to the frame holding most of them (`Flame::frame_of`), selects it, and clears
    /// this.
    pub focus: Option<Arc<Vec<u32>>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FlameScope {
    #[default]
    Whole,
    /// A `ProfilerStep#N` slice: its time range on every thread.
    Step(u32),
    Area,
}

/// An area selection of the timeline, as the flame graph scope.
#[derive(Clone, Debug, PartialEq)]
pub struct FlameArea {
    pub t0: i64,
    pub t1: i64,
    pub tracks: Arc<Vec<usize>>,
}

/// Navigation state shared by all views through context (`use_context::<Nav>()`).
#[derive(Clone, Copy)]
pub struct Nav {
    pub tab: RwSignal<Tab>,
    /// The trace file (index into `Session::files`) the trace views show.
    pub file: RwSignal<usize>,
    pub reveal: RwSignal<Option<Reveal>>,
    /// A time window `[start_ns, end_ns)` someone outside the timeline asked it to show (a host
    /// page's `timeStart`/`timeEnd`); the timeline takes it and clears it.
    pub goto: RwSignal<Option<(i64, i64)>>,
    /// The timeline's selected slice (file, slice index), published for the embedding host.
    pub selected: RwSignal<Option<(usize, u32)>>,
    pub flame: RwSignal<FlameState>,
    /// The scope of the Overview, Operators, Kernels and Modules tables (the scope picker; the
    /// link's `scope=`): one for all four, as the CLI's `--scope` is one for all its tables.
    pub scope: RwSignal<ScopeSpec>,
}

impl Nav {
    pub fn new() -> Self {
        Nav {
            tab: RwSignal::new(Tab::Overview),
            file: RwSignal::new(0),
            reveal: RwSignal::new(None),
            goto: RwSignal::new(None),
            selected: RwSignal::new(None),
            flame: RwSignal::new(FlameState::default()),
            scope: RwSignal::new(ScopeSpec::Whole),
        }
    }

    /// Switches to the timeline stepping through time intervals (`[start, end)` trace ns) of
    /// trace file `file`: each is zoomed to with some context and shaded.
    pub fn reveal_ranges(&self, file: usize, ranges: Vec<(i64, i64)>, label: String) {
        if self.file.get_untracked() != file {
            self.file.set(file);
        }
        self.reveal.set(Some(Reveal {
            file,
            slices: Arc::new(Vec::new()),
            label,
            first: 0,
            ranges: Arc::new(ranges),
        }));
        if self.tab.get_untracked() != Tab::Timeline {
            self.tab.set(Tab::Timeline);
        }
    }

    /// Switches to the timeline showing `slices` of trace file `file`.
    pub fn reveal(&self, file: usize, slices: Vec<u32>, label: String) {
        self.reveal_nth(file, slices, label, 0);
    }

    /// [`Nav::reveal`] starting at the `first`-th slice in time order (0-based).
    pub fn reveal_nth(&self, file: usize, slices: Vec<u32>, label: String, first: usize) {
        // Only real changes: setting the same tab or file re-renders (remounts) the active view.
        if self.file.get_untracked() != file {
            self.file.set(file);
        }
        self.reveal.set(Some(Reveal {
            file,
            slices: Arc::new(slices),
            label,
            first,
            ranges: Arc::new(Vec::new()),
        }));
        if self.tab.get_untracked() != Tab::Timeline {
            self.tab.set(Tab::Timeline);
        }
    }
}

impl Nav {
    /// Switches to the flame graph of an area of trace file `file`: `[t0, t1)` over `tracks`.
    pub fn flame_of_area(&self, file: usize, t0: i64, t1: i64, tracks: Vec<usize>) {
        let keep = self.flame.get_untracked();
        self.flame.set(FlameState {
            file,
            scope: FlameScope::Area,
            area: Some(FlameArea {
                t0,
                t1,
                tracks: Arc::new(tracks),
            }),
            zoom: 0,
            focus: None,
            ..keep
        });
        if self.file.get_untracked() != file {
            self.file.set(file);
        }
        if self.tab.get_untracked() != Tab::Flame {
            self.tab.set(Tab::Flame);
        }
    }
}

impl Nav {
    /// Switches to the flame graph of trace file `file`, whole trace with Python frames (where
    /// module frames are), opened at the frame holding most of `slices`.
    pub fn flame_of_slices(&self, file: usize, slices: Vec<u32>) {
        let keep = self.flame.get_untracked();
        self.flame.set(FlameState {
            file,
            scope: FlameScope::Whole,
            python: true,
            zoom: 0,
            focus: Some(Arc::new(slices)),
            ..keep
        });
        if self.file.get_untracked() != file {
            self.file.set(file);
        }
        if self.tab.get_untracked() != Tab::Flame {
            self.tab.set(Tab::Flame);
        }
    }

    /// Scopes the tables to `[t0, t1)` (a timeline area selection) and shows the Overview.
    pub fn scope_to_window(&self, t0: i64, t1: i64) {
        self.scope.set(ScopeSpec::Window(t0, t1));
        self.tab.set(Tab::Overview);
    }
}

impl Tab {
    /// The tabs whose tables the scope picker restricts.
    pub fn scoped(self) -> bool {
        matches!(
            self,
            Tab::Overview | Tab::Operators | Tab::Kernels | Tab::Modules
        )
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

/// The finer kernel-category rules in force: the defaults until the user edits them on the
/// Kernels tab; kept for the session (a tab switch keeps them) and applied by every view that
/// shows or exports the finer categories (`TraceFile::analysis_with`). Provided by `App`.
#[derive(Clone, Copy)]
pub struct FineRules(pub RwSignal<Vec<FineRule>>);

impl FineRules {
    pub fn new() -> Self {
        FineRules(RwSignal::new(default_fine_rules()))
    }

    /// The session's rules, or the defaults outside an `App` (tests).
    pub fn current() -> Self {
        use_context::<FineRules>().unwrap_or_default()
    }
}

impl Default for FineRules {
    fn default() -> Self {
        Self::new()
    }
}
