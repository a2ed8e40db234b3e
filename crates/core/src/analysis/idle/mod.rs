//! Why the GPU is idle (docs/definitions.md): every stretch of time a device runs no
//! kernel, memcpy or memset gets exactly one cause, from what the host was doing meanwhile, so
//! the causes of a device sum to its idle time and no interval counts twice.
//!
//! The window is the ProfilerStep window (first step start → last step end), else the kernel
//! span (first GPU work → last). An idle gap ends where the device's next work N starts. N was
//! launched by a runtime call that returned at L:
//!
//! - from L to the gap's end the work was already queued and the host is not to blame:
//!   **queued** (driver launch latency, a wait on another stream's event);
//! - before L the host was late. That part goes, by priority, each cause claiming only time no
//!   higher one claimed, to:
//!   1. **data loading** — a DataLoader `__next__` / an annotation naming data loading on any
//!      thread, or a pin-memory / loader thread busy;
//!   2. **collective wait** — the host inside a blocking collective or barrier (`gloo:*`,
//!      `c10d::*`, `nccl:*`);
//!   3. **device sync** — the gap began while the host sat in a sync (`cudaStreamSynchronize`,
//!      `cudaDeviceSynchronize`, `cudaEventSynchronize`, a blocking DtoH `cudaMemcpy`,
//!      `aten::item` / `_local_scalar_dense` / `nonzero`): it returned only when the device had
//!      drained, so the host could not run ahead, and the whole late part is the sync's cost
//!      (also any time the host sat in a sync during the gap);
//!   4. **host-to-device copy** — the host inside a runtime copy call whose device side is HtoD
//!      (a pageable `.to("cuda")` stages on the CPU first);
//!   5. **launch-bound** — the host inside a launch call on the launching thread, or the gap lies
//!      between two kernels each shorter than its own launch call (back-to-back tiny kernels);
//!   6. **optimizer** — the launching thread inside the optimizer (`Optimizer.step#…`, an
//!      annotation naming it, a fused optimizer op);
//!   7. **host ops** — the launching thread inside any other CPU op;
//!   8. **Python** — the launching thread inside annotations or Python frames but no op: Python
//!      between launches;
//!   9. **unknown** — nothing recorded on the launching thread.
//!
//! Per stream, the stream's own idle time splits the same way where the whole device is idle;
//! where another stream of the device is busy it is **collective wait** (an NCCL kernel there) or
//! **other stream** (other work there). Figures per device, per stream, per step and for the
//! trace; each cause keeps the events that were there (by time) and its intervals (the longest
//! [`INTERVALS_KEPT`] per cause) for the timeline.

mod classify;
mod host;
mod streams;

pub use host::is_data_loading;

use super::gpu::step_window;
use super::steps::Step;
use crate::model::{Ns, StrId, Trace, NONE};
use crate::report::num;
use classify::{device_work, gaps, Ctx};
use host::Host;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// GPU work per device: `(device, [(start, end, slice)])`, each list by start.
pub(crate) type DeviceWork = Vec<(i64, Vec<(Ns, Ns, u32)>)>;

/// Intervals kept per cause for the timeline (the longest; the totals count all).
pub const INTERVALS_KEPT: usize = 500;
/// How long after the device drained a sync may return and still be the one the host sat in.
pub const SYNC_SLACK_NS: Ns = 20_000;

/// Why the device was idle, in priority order (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    DataLoading,
    CollectiveWait,
    DeviceSync,
    H2dCopy,
    LaunchBound,
    Optimizer,
    HostOps,
    Python,
    Unknown,
    Queued,
    OtherStream,
}

impl Cause {
    pub const ALL: [Cause; 11] = [
        Cause::DataLoading,
        Cause::CollectiveWait,
        Cause::DeviceSync,
        Cause::H2dCopy,
        Cause::LaunchBound,
        Cause::Optimizer,
        Cause::HostOps,
        Cause::Python,
        Cause::Unknown,
        Cause::Queued,
        Cause::OtherStream,
    ];

    pub fn slug(self) -> &'static str {
        match self {
            Cause::DataLoading => "data_loading",
            Cause::CollectiveWait => "collective_wait",
            Cause::DeviceSync => "device_sync",
            Cause::H2dCopy => "h2d_copy",
            Cause::LaunchBound => "launch_bound",
            Cause::Optimizer => "optimizer",
            Cause::HostOps => "host_ops",
            Cause::Python => "python",
            Cause::Unknown => "unknown",
            Cause::Queued => "queued",
            Cause::OtherStream => "other_stream",
        }
    }

    /// What the GPU waited for, for a sentence ("the GPU waits for …").
    pub fn label(self) -> &'static str {
        match self {
            Cause::DataLoading => "the data loader",
            Cause::CollectiveWait => "a collective",
            Cause::DeviceSync => "the host after a sync (.item(), .cpu(), synchronize)",
            Cause::H2dCopy => "host-to-device copies",
            Cause::LaunchBound => "kernel launches (launch-bound)",
            Cause::Optimizer => "the optimizer on the host",
            Cause::HostOps => "other CPU ops",
            Cause::Python => "Python between launches",
            Cause::Unknown => "nothing recorded on the host",
            Cause::Queued => "queued work to start (launch latency, stream waits)",
            Cause::OtherStream => "another stream",
        }
    }

    /// Short name for legends and table headers.
    pub fn short(self) -> &'static str {
        match self {
            Cause::DataLoading => "data loading",
            Cause::CollectiveWait => "collective wait",
            Cause::DeviceSync => "device sync",
            Cause::H2dCopy => "H2D copy",
            Cause::LaunchBound => "launch-bound",
            Cause::Optimizer => "optimizer",
            Cause::HostOps => "host ops",
            Cause::Python => "Python",
            Cause::Unknown => "unknown",
            Cause::Queued => "queued",
            Cause::OtherStream => "other stream",
        }
    }
}

/// Time per cause, causes with time only, in [`Cause`] order.
pub type ByCause = Vec<(Cause, Ns)>;

pub(crate) fn add(v: &mut ByCause, c: Cause, ns: Ns) {
    if ns <= 0 {
        return;
    }
    match v.iter_mut().find(|x| x.0 == c) {
        Some(x) => x.1 += ns,
        None => {
            v.push((c, ns));
            v.sort_unstable();
        }
    }
}

/// One idle sub-interval with its cause.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IdleInterval {
    pub device: i64,
    pub start_ns: Ns,
    pub end_ns: Ns,
    pub cause: Cause,
    /// The event that decided it (the DataLoader slice, the sync, the op…), empty when none.
    pub evidence: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DeviceIdle {
    pub device: i64,
    pub busy_ns: Ns,
    pub idle_ns: Ns,
    pub by_cause: ByCause,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct StreamIdle {
    pub device: i64,
    pub stream: i64,
    pub idle_ns: Ns,
    pub by_cause: ByCause,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct StepIdle {
    pub name: String,
    pub start_ns: Ns,
    pub dur_ns: Ns,
    /// Mean over devices.
    pub idle_ns: Ns,
    pub by_cause: ByCause,
}

/// One cause over the trace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CauseTotal {
    pub cause: Cause,
    /// Mean over devices.
    pub ns: Ns,
    /// Of the window.
    pub share: f64,
    /// Sub-intervals, all devices.
    pub intervals: u64,
    /// The events that were there, by time (at most 5).
    pub top: Vec<(String, Ns)>,
}

/// The idle causes of a trace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct IdleCauses {
    pub window_start_ns: Ns,
    pub window_end_ns: Ns,
    pub window_from_steps: bool,
    /// Mean over devices.
    pub idle_ns: Ns,
    /// By time, largest first.
    pub causes: Vec<CauseTotal>,
    pub devices: Vec<DeviceIdle>,
    pub streams: Vec<StreamIdle>,
    pub steps: Vec<StepIdle>,
    /// The longest [`INTERVALS_KEPT`] per cause, in time order.
    pub intervals: Vec<IdleInterval>,
}

impl IdleCauses {
    pub fn window_ns(&self) -> Ns {
        self.window_end_ns - self.window_start_ns
    }

    /// The time of one cause (mean over devices), 0 when it has none.
    pub fn ns(&self, c: Cause) -> Ns {
        self.causes
            .iter()
            .find(|x| x.cause == c)
            .map_or(0, |x| x.ns)
    }

    /// The kept intervals of one cause, as `(start, end)`.
    pub fn ranges(&self, c: Cause) -> Vec<(Ns, Ns)> {
        self.intervals
            .iter()
            .filter(|x| x.cause == c)
            .map(|x| (x.start_ns, x.end_ns))
            .collect()
    }
}

/// The idle causes of `t` (`steps` as [`super::steps::steps`] returns them).
pub fn idle_causes(t: &Trace, steps: &[Step]) -> IdleCauses {
    let work = device_work(t);
    let (mut lo, mut hi, from_steps) = step_window(t);
    if !from_steps {
        lo = work
            .iter()
            .filter_map(|(_, w)| w.first().map(|x| x.0))
            .min()
            .unwrap_or(0);
        hi = work
            .iter()
            .flat_map(|(_, w)| w.iter().map(|x| x.1))
            .max()
            .unwrap_or(lo);
    }
    let mut out = IdleCauses {
        window_start_ns: lo,
        window_end_ns: hi,
        window_from_steps: from_steps,
        ..Default::default()
    };
    if work.is_empty() || hi <= lo {
        return out;
    }
    let ctx = Ctx { t, h: Host::of(t) };
    let s = &t.slices;
    let n_dev = work.len() as i64;
    let mut totals: ByCause = Vec::new();
    let mut counts: FxHashMap<Cause, u64> = FxHashMap::default();
    let mut names: FxHashMap<(Cause, StrId), Ns> = FxHashMap::default();
    let mut kept: Vec<Part> = Vec::new();
    let mut step_acc: Vec<(Ns, ByCause)> = vec![(0, Vec::new()); steps.len()];
    // Device-level sub-intervals per device, kept for the per-stream split.
    let mut dev_parts: FxHashMap<i64, Vec<(Ns, Ns, Cause)>> = FxHashMap::default();
    for (d, w) in &work {
        let mut parts: Vec<(Ns, Ns, Cause, u32)> = Vec::new();
        for g in gaps(w, lo, hi) {
            ctx.classify(&g, &mut parts);
        }
        parts.sort_unstable_by_key(|p| (p.0, p.1));
        let mut di = DeviceIdle {
            device: *d,
            ..Default::default()
        };
        for &(a, b, c, ev) in &parts {
            let ns = b - a;
            di.idle_ns += ns;
            add(&mut di.by_cause, c, ns);
            *counts.entry(c).or_default() += 1;
            if ev != NONE {
                *names.entry((c, s.name[ev as usize])).or_default() += ns;
            }
            kept.push(Part {
                device: *d,
                start_ns: a,
                end_ns: b,
                cause: c,
                evidence: ev,
            });
            // Keep the longest of each cause so far (the merge below keeps the cap).
            if kept.len() > 64 * INTERVALS_KEPT {
                cap_intervals(&mut kept);
            }
            // Steps it overlaps (steps are in time order and rarely overlap).
            let k0 = steps.partition_point(|st| st.start_ns + st.dur_ns <= a);
            for (k, st) in steps.iter().enumerate().skip(k0) {
                if st.start_ns >= b {
                    break;
                }
                let ov = b.min(st.start_ns + st.dur_ns) - a.max(st.start_ns);
                if ov > 0 {
                    step_acc[k].0 += ov;
                    add(&mut step_acc[k].1, c, ov);
                }
            }
        }
        di.busy_ns = (hi - lo) - di.idle_ns;
        for &(c, ns) in &di.by_cause {
            add(&mut totals, c, ns);
        }
        out.idle_ns += di.idle_ns;
        out.devices.push(di);
        // In place: the three fields fit the four's buffer (this list holds every gap's parts).
        dev_parts.insert(*d, parts.into_iter().map(|p| (p.0, p.1, p.2)).collect());
    }
    cap_intervals(&mut kept);
    out.intervals = kept
        .into_iter()
        .map(|p| IdleInterval {
            device: p.device,
            start_ns: p.start_ns,
            end_ns: p.end_ns,
            cause: p.cause,
            evidence: if p.evidence == NONE {
                String::new()
            } else {
                t.str(s.name[p.evidence as usize]).to_owned()
            },
        })
        .collect();
    out.idle_ns /= n_dev;
    let window = (hi - lo) as f64;
    let mut causes: Vec<CauseTotal> = totals
        .iter()
        .map(|&(c, ns)| {
            let mut top: Vec<(String, Ns)> = names
                .iter()
                .filter(|((k, _), _)| *k == c)
                .map(|((_, n), v)| (t.str(*n).to_owned(), *v / n_dev))
                .collect();
            crate::sort::by(&mut top, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            top.truncate(5);
            CauseTotal {
                cause: c,
                ns: ns / n_dev,
                share: (ns / n_dev) as f64 / window,
                intervals: counts.get(&c).copied().unwrap_or(0),
                top,
            }
        })
        .collect();
    crate::sort::by(&mut causes, |a, b| {
        b.ns.cmp(&a.ns).then(a.cause.cmp(&b.cause))
    });
    out.causes = causes;
    out.steps = steps
        .iter()
        .zip(step_acc)
        .map(|(st, (idle, by))| StepIdle {
            name: st.name.clone(),
            start_ns: st.start_ns,
            dur_ns: st.dur_ns,
            idle_ns: idle / n_dev,
            by_cause: by.into_iter().map(|(c, ns)| (c, ns / n_dev)).collect(),
        })
        .collect();
    // The host's lists are done with: the per-stream split's working set goes where they were.
    drop(ctx);
    out.streams = streams::stream_idle(t, &work, &dev_parts, lo, hi);
    out
}

/// What [`cap_intervals`] reads of an idle interval.
trait Capped {
    /// `(start, end, device, cause)`.
    fn key(&self) -> (Ns, Ns, i64, Cause);
}

impl Capped for IdleInterval {
    fn key(&self) -> (Ns, Ns, i64, Cause) {
        (self.start_ns, self.end_ns, self.device, self.cause)
    }
}

/// An idle interval while they are collected: its evidence as a slice index, named only for the
/// few kept (a `String` per part was most of this analysis's memory on a big trace).
struct Part {
    device: i64,
    start_ns: Ns,
    end_ns: Ns,
    cause: Cause,
    evidence: u32,
}

impl Capped for Part {
    fn key(&self) -> (Ns, Ns, i64, Cause) {
        (self.start_ns, self.end_ns, self.device, self.cause)
    }
}

/// Keeps the longest [`INTERVALS_KEPT`] of each cause, then puts them in time order.
fn cap_intervals<T: Capped>(v: &mut Vec<T>) {
    // The longest per cause (ties: earlier start, then the earlier interval), found by selection
    // within each cause instead of sorting every interval of a big trace; then, as before, in
    // time order (ties: device, cause, then the order above).
    let key = |i: u32| {
        let (a, b, _, _) = v[i as usize].key();
        (std::cmp::Reverse(b - a), a, i)
    };
    let mut by_cause: std::collections::BTreeMap<Cause, Vec<u32>> = Default::default();
    for (i, x) in v.iter().enumerate() {
        by_cause.entry(x.key().3).or_default().push(i as u32);
    }
    let mut kept: Vec<u32> = Vec::new();
    for (_, mut ids) in by_cause {
        if ids.len() > INTERVALS_KEPT {
            ids.select_nth_unstable_by_key(INTERVALS_KEPT - 1, |&i| key(i));
            ids.truncate(INTERVALS_KEPT);
        }
        ids.sort_unstable_by_key(|&i| key(i));
        kept.extend(ids);
    }
    crate::sort::by(&mut kept, |&a, &b| {
        let (x, y) = (v[a as usize].key(), v[b as usize].key());
        x.0.cmp(&y.0).then(x.2.cmp(&y.2)).then(x.3.cmp(&y.3))
    });
    let mut slots: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    *v = kept
        .into_iter()
        .filter_map(|i| slots.get_mut(i as usize).and_then(Option::take))
        .collect();
}

impl IdleCauses {
    /// The causes that matter (at least 0.5 % of the window), largest first.
    pub fn main_causes(&self) -> impl Iterator<Item = &CauseTotal> {
        self.causes.iter().filter(|c| c.share >= 0.005)
    }

    /// "GPU idle 31.2% of step time: 18% data loading, 9.1% device sync, 4% launch-bound" (shares
    /// through [`num::share`], as every share on the page). `None` without GPU work.
    pub fn headline(&self) -> Option<String> {
        if self.devices.is_empty() || self.window_ns() <= 0 {
            return None;
        }
        let of = if self.window_from_steps {
            "step time"
        } else {
            "the kernel span"
        };
        let share = self.idle_ns as f64 / self.window_ns() as f64;
        let parts: Vec<String> = self
            .main_causes()
            .map(|c| format!("{} {}", num::share(c.share), c.cause.short()))
            .collect();
        Some(if parts.is_empty() {
            format!("GPU idle {} of {of}", num::share(share))
        } else {
            format!(
                "GPU idle {} of {of}: {}",
                num::share(share),
                parts.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    /// The sort-everything version this replaced: what [`cap_intervals`] must equal.
    fn by_sorting(v: &mut Vec<IdleInterval>) {
        crate::sort::by(v, |a, b| {
            a.cause
                .cmp(&b.cause)
                .then((b.end_ns - b.start_ns).cmp(&(a.end_ns - a.start_ns)))
                .then(a.start_ns.cmp(&b.start_ns))
        });
        let mut k = 0;
        let mut prev = None;
        v.retain(|x| {
            if prev != Some(x.cause) {
                prev = Some(x.cause);
                k = 0;
            }
            k += 1;
            k <= INTERVALS_KEPT
        });
        crate::sort::by(v, |a, b| {
            a.start_ns
                .cmp(&b.start_ns)
                .then(a.device.cmp(&b.device))
                .then(a.cause.cmp(&b.cause))
        });
    }

    #[test]
    fn selection_keeps_what_sorting_kept_in_the_same_order() {
        let causes = [
            Cause::DataLoading,
            Cause::DeviceSync,
            Cause::HostOps,
            Cause::Unknown,
        ];
        let mut next = tracelight_testkit::xorshift(0x2545_f491_4f6c_dd1d);
        for n in [0usize, 7, 499, 500, 501, 3000] {
            let mut v: Vec<IdleInterval> = (0..n)
                .map(|k| {
                    // Few distinct lengths and starts: many ties, on every key.
                    let start = (next() % 200) as Ns;
                    IdleInterval {
                        device: (next() % 2) as i64,
                        start_ns: start,
                        end_ns: start + 1 + (next() % 40) as Ns,
                        cause: causes[(next() % 4) as usize],
                        evidence: format!("e{k}"),
                    }
                })
                .collect();
            let mut want = v.clone();
            by_sorting(&mut want);
            cap_intervals(&mut v);
            assert_eq!(v, want, "{n} intervals");
        }
    }
}
