//! The largest GPU idle gaps, one by one, so a view can link each to the timeline. Same gaps and
//! the same classification as [`super::gpu::idle_gaps`] (HTA `_analyze_idle_time_for_stream`):
//! per stream, the gap before a GPU slice is host wait when its launch call started after the
//! previous work ended, kernel wait when shorter than [`KERNEL_WAIT_NS`], else other.

use crate::model::{Ns, Trace, Track, TrackKind, NONE};

/// HTA's `consecutive_kernel_delay` default (30 µs).
pub const KERNEL_WAIT_NS: Ns = 30_000;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapKind {
    HostWait,
    KernelWait,
    Other,
}

impl GapKind {
    pub fn label(self) -> &'static str {
        match self {
            GapKind::HostWait => "host wait",
            GapKind::KernelWait => "kernel wait",
            GapKind::Other => "other",
        }
    }
}

/// One idle gap on a stream.
#[derive(Debug, Clone, Serialize)]
pub struct Gap {
    pub device: i64,
    pub stream: i64,
    pub start_ns: Ns,
    pub dur_ns: Ns,
    pub kind: GapKind,
    /// The GPU slice that ended the gap, and its launch call ([`NONE`] when unknown).
    pub next: u32,
    pub launch: u32,
}

/// Every idle gap of every GPU stream, in stream then time order.
pub fn gaps(t: &Trace) -> Vec<Gap> {
    let mut out = Vec::new();
    for tr in t.tracks.iter().filter(|tr| tr.kind == TrackKind::Gpu) {
        track_gaps(t, tr, |g| out.push(g));
    }
    out
}

/// Walks one stream's gaps in time order, handing each to `f`; false when the track holds no GPU
/// work at all. The one place gaps are found and classified (the per-stream sums fold over it).
pub fn track_gaps(t: &Trace, tr: &Track, mut f: impl FnMut(Gap)) -> bool {
    let s = &t.slices;
    let mut prev_end: Option<Ns> = None;
    for i in tr.first as usize..(tr.first + tr.count) as usize {
        if !s.kind[i].is_gpu_work() {
            continue;
        }
        if let Some(pe) = prev_end {
            let gap = s.start[i] - pe;
            if gap > 0 {
                let launch = t.gpu.row(i as u32).map_or(NONE, |r| t.gpu.launch[r]);
                let kind = if launch != NONE && s.start[launch as usize] > pe {
                    GapKind::HostWait
                } else if gap < KERNEL_WAIT_NS {
                    GapKind::KernelWait
                } else {
                    GapKind::Other
                };
                f(Gap {
                    device: tr.device.unwrap_or(-1),
                    stream: tr.stream.unwrap_or(-1),
                    start_ns: pe,
                    dur_ns: gap,
                    kind,
                    next: i as u32,
                    launch,
                });
            }
        }
        prev_end = Some(prev_end.map_or(s.end(i), |p| p.max(s.end(i))));
    }
    prev_end.is_some()
}

/// The `n` longest gaps, longest first (ties by time).
pub fn largest_gaps(t: &Trace, n: usize) -> Vec<Gap> {
    let mut v = gaps(t);
    crate::sort::by(&mut v, |a, b| {
        b.dur_ns
            .cmp(&a.dur_ns)
            .then(a.start_ns.cmp(&b.start_ns))
            .then(a.next.cmp(&b.next))
    });
    v.truncate(n);
    v
}
