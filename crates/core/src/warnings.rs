//! Structured, counted warnings for partial failures.
//!
//! A trace with a few broken events is still worth reading: each repaired or dropped thing is counted
//! per kind, with the first few examples kept, and shown to the user instead of failing the load.
//!
//! Each kind has a [`Severity`]: what the user must know (the file was cut, events were dropped
//! or repaired) is a warning; what every Kineto trace shows and changes no figure is info. Flow
//! events without a partner are info: libkineto writes an `ac2g` flow end on every CUDA runtime
//! call, also on those that launch nothing (`cudaEventQuery`: 25,773 of the 28,471 unpaired ends
//! of the A100 rank-0-of-16 trace), and flows are cut at the capture window's edges. Launch links
//! come from `correlation`, which those flows only back up.

use serde::Serialize;

/// How many examples of one kind are kept; the count keeps going.
const EXAMPLES_PER_KIND: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// The file ended early; everything before the offset was kept.
    Truncated,
    /// An event that could not be parsed was skipped.
    MalformedEvent,
    /// A complete event with no `dur`: kept with duration 0.
    MissingDuration,
    /// A negative duration: clamped to 0.
    NegativeDuration,
    /// Complete events on one track that overlap without nesting: kept, drawn one level deeper.
    OverlappingSlices,
    /// An event phase this reader does not model.
    UnsupportedPhase,
    /// A flow start or end with no partner.
    UnpairedFlow,
    /// An `E` with no open `B` on its track.
    UnmatchedEnd,
    /// A top-level key whose value could not be read.
    BadMetadata,
    /// A `ts` or `dur` that is there but no usable time: NaN, Infinity, text, or beyond
    /// ±[`crate::model::time::MAX_ABS_NS`] (`1e300`, a `dur` that overflows `i64` ns). A bad `ts`
    /// drops the event; a bad `dur` keeps it with duration 0.
    BadTime,
    /// Names or categories holding bytes that are not UTF-8: kept with U+FFFD in their place.
    InvalidUtf8,
    /// An event giving one of its keys (`name`, `ts`, …) twice: the last value is kept.
    DuplicateKey,
    /// Anything else worth telling.
    Other,
}

impl WarningKind {
    /// Every kind, in declaration order.
    pub const ALL: [WarningKind; 13] = [
        WarningKind::Truncated,
        WarningKind::MalformedEvent,
        WarningKind::MissingDuration,
        WarningKind::NegativeDuration,
        WarningKind::OverlappingSlices,
        WarningKind::UnsupportedPhase,
        WarningKind::UnpairedFlow,
        WarningKind::UnmatchedEnd,
        WarningKind::BadMetadata,
        WarningKind::BadTime,
        WarningKind::InvalidUtf8,
        WarningKind::DuplicateKey,
        WarningKind::Other,
    ];
}

/// How much a warning matters to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Data was lost or repaired: figures may be off. Shown.
    Warning,
    /// Expected of the producer; no figure changes. Shown collapsed.
    Info,
}

impl WarningKind {
    pub fn severity(self) -> Severity {
        match self {
            WarningKind::UnpairedFlow | WarningKind::OverlappingSlices => Severity::Info,
            _ => Severity::Warning,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            WarningKind::Truncated => "file truncated; kept what parsed",
            WarningKind::MalformedEvent => "malformed events skipped",
            WarningKind::MissingDuration => "complete events without dur (kept as 0 ns)",
            WarningKind::NegativeDuration => "negative durations clamped to 0",
            WarningKind::OverlappingSlices => {
                "overlapping slices on one track (kept, drawn one level down)"
            }
            WarningKind::UnsupportedPhase => "events of unsupported phase ignored",
            WarningKind::UnpairedFlow => {
                "flow events without a partner (expected of Kineto: flow ends on runtime calls that launch nothing, flows cut at the window edge)"
            }
            WarningKind::UnmatchedEnd => "end events without a begin",
            WarningKind::BadMetadata => "unreadable metadata values",
            WarningKind::BadTime => {
                "ts or dur not a usable time (NaN, Infinity, text, or out of range): \
                 bad ts skipped the event, bad dur was kept as 0 ns"
            }
            WarningKind::InvalidUtf8 => "names with bytes that are not UTF-8 (shown as U+FFFD)",
            WarningKind::DuplicateKey => {
                "events with a key given twice (the last value kept, as JSON.parse does)"
            }
            WarningKind::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Warning {
    pub kind: WarningKind,
    pub severity: Severity,
    pub count: u64,
    pub message: &'static str,
    pub examples: Vec<String>,
}

/// Counted warnings, one entry per kind, in the order kinds were first seen.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Warnings {
    items: Vec<Warning>,
}

impl Warnings {
    pub fn add(&mut self, kind: WarningKind, example: impl FnOnce() -> String) {
        let w = match self.items.iter_mut().position(|w| w.kind == kind) {
            Some(i) => &mut self.items[i],
            None => {
                self.items.push(Warning {
                    kind,
                    severity: kind.severity(),
                    count: 0,
                    message: kind.describe(),
                    examples: Vec::new(),
                });
                let last = self.items.len() - 1;
                &mut self.items[last]
            }
        };
        w.count += 1;
        if w.examples.len() < EXAMPLES_PER_KIND {
            w.examples.push(example());
        }
    }

    pub fn count(&self, kind: WarningKind) -> u64 {
        self.items
            .iter()
            .find(|w| w.kind == kind)
            .map_or(0, |w| w.count)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Warning> {
        self.items.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds `n` warnings of `kind`, each with an empty example, as though the first had been seen
    /// when the first `kinds_before` kinds were known: the sharded reader's merge
    /// (`ingest/kineto/shard.rs`) learns only then which of a shard's `E` events stay unmatched, and
    /// the kinds must keep the order the one-thread reader gives them.
    pub fn add_as_of(&mut self, kind: WarningKind, kinds_before: usize, n: u64) {
        if n == 0 {
            return;
        }
        let at = kinds_before.min(self.items.len());
        let i = match self.items.iter().position(|w| w.kind == kind) {
            Some(p) if p < at => p,
            Some(p) => {
                let w = self.items.remove(p);
                self.items.insert(at, w);
                at
            }
            None => {
                self.items.insert(
                    at,
                    Warning {
                        kind,
                        severity: kind.severity(),
                        count: 0,
                        message: kind.describe(),
                        examples: Vec::new(),
                    },
                );
                at
            }
        };
        let w = &mut self.items[i];
        w.count += n;
        while w.examples.len() < EXAMPLES_PER_KIND && (w.examples.len() as u64) < w.count {
            w.examples.push(String::new());
        }
    }

    /// Appends a kind with its count and examples as recorded elsewhere (a model moved between
    /// wasm instances, `model/wire.rs`).
    pub fn push_counted(&mut self, kind: WarningKind, count: u64, examples: Vec<String>) {
        self.items.push(Warning {
            kind,
            severity: kind.severity(),
            count,
            message: kind.describe(),
            examples,
        });
    }

    /// Kinds seen so far.
    pub fn kinds(&self) -> usize {
        self.items.len()
    }

    pub fn extend(&mut self, other: &Warnings) {
        for w in &other.items {
            for e in &w.examples {
                self.add(w.kind, || e.clone());
            }
            let extra = w.count.saturating_sub(w.examples.len() as u64);
            if let Some(mine) = self.items.iter_mut().find(|m| m.kind == w.kind) {
                mine.count += extra;
            }
        }
    }

    /// One line per kind, for terminals and the page: warnings first, then info.
    pub fn lines(&self) -> Vec<String> {
        let mut v: Vec<&Warning> = self.items.iter().collect();
        crate::sort::by_key(&mut v, |w| w.severity);
        v.into_iter().map(Warning::line).collect()
    }

    /// Lines of one severity only.
    pub fn lines_of(&self, severity: Severity) -> Vec<String> {
        self.items
            .iter()
            .filter(|w| w.severity == severity)
            .map(Warning::line)
            .collect()
    }
}

impl Warning {
    /// `N × message (e.g. example)`.
    pub fn line(&self) -> String {
        match self.examples.iter().find(|e| !e.is_empty()) {
            Some(e) => format!("{} × {} (e.g. {e})", self.count, self.message),
            None => format!("{} × {}", self.count, self.message),
        }
    }
}
