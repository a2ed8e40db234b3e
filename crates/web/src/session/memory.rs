//! What the Memory tab and the memory lanes under a trace (`session::lane`) can show (one entry per
//! snapshot device, memory timeline, trace device with `[memory]` events) and a cache of the charts
//! and summaries built for them, so switching devices, tabs or views never recomputes. Session data,
//! so the memory and ranks features share it without importing each other.

use crate::session::{Content, Session, SessionRef};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use tracelight_core::analysis::memory::memory_summary;
use tracelight_core::analysis::memory_chart::{
    snapshot_chart, timeline_chart, trace_chart, MemoryChart, MAX_BANDS,
};
use tracelight_core::analysis::snapshot::{summarize, SnapshotSummary};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    Snapshot { device: i64 },
    Timeline,
    Trace { device_type: i16, device_id: i16 },
}

/// One thing the Memory tab can chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub file: usize,
    pub kind: SourceKind,
}

impl Source {
    pub fn device_label(&self) -> String {
        match self.kind {
            SourceKind::Snapshot { device } => format!("cuda:{device}"),
            SourceKind::Timeline => "all categories".into(),
            SourceKind::Trace { device_type: 0, .. } => "CPU".into(),
            SourceKind::Trace { device_id, .. } => format!("cuda:{device_id}"),
        }
    }
}

/// Files of the session that have memory to show, in file order.
pub fn memory_files(s: &Session) -> Vec<usize> {
    (0..s.files.len())
        .filter(|&i| match &s.files[i].content {
            Content::Trace(t) => !t.trace.memory.ts.is_empty(),
            Content::ExecTrace(_) | Content::FlightRecorder(_) => false,
            _ => true,
        })
        .collect()
}

/// The sources of one file; the first is the default (for snapshots: the device with the most
/// trace entries, else the most segments).
pub fn sources_of(session: &SessionRef, file: usize) -> Vec<Source> {
    let Some(f) = session.files.get(file) else {
        return Vec::new();
    };
    let mut v = match &f.content {
        Content::Snapshot(_) => {
            let Some(sum) = snapshot_summary(session, file) else {
                return Vec::new();
            };
            let mut devs: Vec<_> = sum
                .devices
                .iter()
                .filter(|d| d.trace_entries > 0 || d.segments > 0)
                .collect();
            if devs.is_empty() {
                devs = sum.devices.iter().collect();
            }
            devs.iter()
                .map(|d| Source {
                    file,
                    kind: SourceKind::Snapshot { device: d.device },
                })
                .collect::<Vec<_>>()
        }
        Content::MemoryTimeline(_) => vec![Source {
            file,
            kind: SourceKind::Timeline,
        }],
        Content::Trace(t) => memory_summary(&t.trace)
            .iter()
            .map(|d| Source {
                file,
                kind: SourceKind::Trace {
                    device_type: d.device_type,
                    device_id: d.device_id,
                },
            })
            .collect(),
        Content::ExecTrace(_) | Content::FlightRecorder(_) => Vec::new(),
    };
    // Default first: the busiest device (GPU before CPU for traces).
    if let Some(sum) = snapshot_summary(session, file) {
        let rank = |s: &Source| match s.kind {
            SourceKind::Snapshot { device } => sum
                .devices
                .iter()
                .find(|d| d.device == device)
                .map_or((0, 0), |d| (d.trace_entries, d.segments)),
            _ => (0, 0),
        };
        if let Some(best) = (0..v.len()).max_by_key(|&i| (rank(&v[i]), std::cmp::Reverse(i))) {
            let b = v.remove(best);
            v.insert(0, b);
        }
    } else if let Some(p) = v
        .iter()
        .position(|s| matches!(s.kind, SourceKind::Trace { device_type, .. } if device_type != 0))
    {
        let b = v.remove(p);
        v.insert(0, b);
    }
    v
}

#[derive(Default)]
struct Cache {
    session: Weak<Session>,
    charts: HashMap<(usize, SourceKind), Arc<MemoryChart>>,
    summaries: HashMap<usize, Arc<SnapshotSummary>>,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

fn with_cache<R>(session: &SessionRef, f: impl FnOnce(&mut Cache) -> R) -> R {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if !std::ptr::eq(c.session.as_ptr(), Arc::as_ptr(session)) {
            *c = Cache {
                session: Arc::downgrade(session),
                ..Cache::default()
            };
        }
        f(&mut c)
    })
}

/// The snapshot's per-device figures (docs/definitions.md, `.snapshot.devices[]`), computed once.
pub fn snapshot_summary(session: &SessionRef, file: usize) -> Option<Arc<SnapshotSummary>> {
    let Content::Snapshot(s) = &session.files.get(file)?.content else {
        return None;
    };
    // The one the snapshot's worker built, else computed here once.
    if let Some(sum) = &s.summary {
        return Some(sum.clone());
    }
    Some(with_cache(session, |c| {
        c.summaries
            .entry(file)
            .or_insert_with(|| Arc::new(summarize(s)))
            .clone()
    }))
}

/// The chart of a source, built once per session.
pub fn chart(session: &SessionRef, src: &Source) -> Option<Arc<MemoryChart>> {
    let f = session.files.get(src.file)?;
    let build = || -> Option<MemoryChart> {
        Some(match (&f.content, src.kind) {
            (Content::Snapshot(s), SourceKind::Snapshot { device }) => {
                snapshot_chart(s, device, MAX_BANDS)
            }
            (Content::MemoryTimeline(m), SourceKind::Timeline) => timeline_chart(m),
            (
                Content::Trace(t),
                SourceKind::Trace {
                    device_type,
                    device_id,
                },
            ) => trace_chart(&t.trace, device_type, device_id),
            _ => return None,
        })
    };
    // The snapshot worker's chart of this device, else one built here once.
    if let (Content::Snapshot(s), SourceKind::Snapshot { device }) = (&f.content, src.kind) {
        if let Some((_, c)) = s.charts.iter().find(|(d, _)| *d == device) {
            return Some(c.clone());
        }
        // Not from a model that is still on its way (empty until then).
        if s.pending {
            return None;
        }
    }
    if let Some(c) = with_cache(session, |c| c.charts.get(&(src.file, src.kind)).cloned()) {
        return Some(c);
    }
    let c = Arc::new(build()?);
    with_cache(session, |cache| {
        cache.charts.insert((src.file, src.kind), c.clone());
    });
    Some(c)
}
