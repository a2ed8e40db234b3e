//! GPU time: utilization (TensorBoard plugin), the HTA temporal breakdown, idle gaps per stream,
//! and communication/compute overlap (docs/definitions.md).
//!
//! - Utilization = union of kernel intervals per device ÷ the ProfilerStep window (first step
//!   start → last step end; the whole trace when there are no steps), as the TensorBoard plugin's
//!   "GPU Utilization". Memcpy/memset do not count, as there.
//! - Temporal breakdown reproduces HTA 0.5.0 `BreakdownAnalyzer.get_temporal_breakdown`: over all
//!   GPU work of the rank (kernels, memcpy, memset), kernel span = first start → last end, busy =
//!   union, idle = span − busy, compute = union of kernels HTA types COMPUTATION, non-compute =
//!   busy − compute. HTA's types (hta/utils/utils.py): COMMUNICATION = `^nccl.*Kernel`, MEMORY =
//!   `^Memcpy|^Memset|^dma`, COMPUTATION = none of those and not matching
//!   `.*Memcpy|^Memset|.*Sync`; the rest is OTHER (counted as non-compute). An older definition
//!   quoted a broader COMM pattern (`^nccl|^hip|^hccl|ncclKernel`); the released HTA uses the one
//!   above, and that is what `tests/hta_reference.rs` checks against.
//! - Idle gaps per stream follow HTA's `_analyze_idle_time_for_stream`: the gap before a kernel is
//!   host wait when its launch call started after the previous kernel ended, kernel wait when it is
//!   under [`KERNEL_WAIT_NS`] (HTA's `consecutive_kernel_delay` = 30 µs), else other.
//! - Overlap % = |compute ∩ comm| ÷ |comm|; exposed comm = |comm − compute| (HTA
//!   `get_comm_comp_overlap` and docs/definitions.md).

use super::intervals::{clip, intersect, subtract, total, union};
use crate::model::{Ns, SliceKind, Trace, TrackKind, NONE};
use serde::Serialize;

pub use super::gaps::KERNEL_WAIT_NS;

/// HTA kernel types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HtaKernelType {
    Communication,
    Memory,
    Computation,
    Other,
}

/// HTA 0.5.0 `get_kernel_type`.
pub fn hta_kernel_type(name: &str) -> HtaKernelType {
    let comm = name.starts_with("nccl") && name[4..].contains("Kernel");
    if comm {
        return HtaKernelType::Communication;
    }
    if name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma") {
        return HtaKernelType::Memory;
    }
    if name.contains("Memcpy") || name.starts_with("Memset") || name.contains("Sync") {
        return HtaKernelType::Other;
    }
    HtaKernelType::Computation
}

/// HTA's temporal breakdown of one rank, in ns.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, Default, PartialEq)]
pub struct Temporal {
    pub kernel_span_ns: Ns,
    pub busy_ns: Ns,
    pub compute_ns: Ns,
    pub non_compute_ns: Ns,
    pub idle_ns: Ns,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DeviceUtil {
    pub device: i64,
    pub busy_ns: Ns,
    pub utilization: f64,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct StreamIdle {
    pub device: i64,
    pub stream: i64,
    pub host_wait_ns: Ns,
    pub kernel_wait_ns: Ns,
    pub other_ns: Ns,
}

#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, Default)]
pub struct Overlap {
    pub comm_ns: Ns,
    pub compute_ns: Ns,
    pub overlap_ns: Ns,
    pub exposed_comm_ns: Ns,
    /// comp ∩ comm ÷ comm, in %; `None` without communication.
    pub overlap_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct GpuSummary {
    /// Mean over devices of busy ÷ window; `None` when the trace has no kernels.
    pub utilization: Option<f64>,
    /// Mean over devices of the kernel union inside the window.
    pub busy_ns: Ns,
    pub idle_ns: Ns,
    pub window_ns: Ns,
    pub window_start_ns: Ns,
    pub window_end_ns: Ns,
    /// Whether the window came from ProfilerStep slices.
    pub window_from_steps: bool,
    pub devices: Vec<DeviceUtil>,
    pub temporal: Temporal,
    pub overlap: Overlap,
    pub idle_gaps: Vec<StreamIdle>,
}

/// The step window: first step's start (`ProfilerStep#N`, else a numbered loop annotation:
/// `model::steps`) → last step's end, else the trace bounds.
pub fn step_window(t: &Trace) -> (Ns, Ns, bool) {
    let s = &t.slices;
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for i in 0..s.len() {
        if matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation) && t.is_step(s.name[i])
        {
            lo = lo.min(s.start[i]);
            hi = hi.max(s.end(i));
        }
    }
    if lo <= hi {
        return (lo, hi, true);
    }
    let (a, b) = t.time_bounds().unwrap_or((0, 0));
    (a, b, false)
}

/// GPU work intervals `(start, end)` whose kind passes `keep`, optionally one device.
fn gpu_intervals(t: &Trace, device: Option<i64>, keep: impl Fn(usize) -> bool) -> Vec<(Ns, Ns)> {
    let s = &t.slices;
    let taken = |r: usize, i: usize| {
        s.kind[i].is_gpu_work()
            && keep(i)
            && device.is_none_or(|d| {
                i64::from(t.gpu.device[r]) == d || t.tracks[s.track[i] as usize].device == Some(d)
            })
    };
    let rows = || {
        t.gpu
            .slice
            .iter()
            .enumerate()
            .map(|(r, &gi)| (r, gi as usize))
            .filter(|&(r, i)| taken(r, i))
    };
    // Counted first and made at its size: the page's utilization track makes this list, and
    // grown by doubling it left its spare half and its copies in the page's wasm memory.
    let mut v = Vec::with_capacity(rows().count());
    v.extend(rows().map(|(_, i)| (s.start[i], s.end(i))));
    v
}

/// Temporal breakdown over all GPU work of the trace (kernels, memcpy, memset),
/// docs/definitions.md.
pub fn temporal(t: &Trace) -> Temporal {
    temporal_of(&gpu_intervals_named(t, |_| true))
}

/// Per slice: whether HTA types its name as computation.
fn computation(t: &Trace) -> Vec<bool> {
    t.slice_name_test(|n| hta_kernel_type(n) == HtaKernelType::Computation)
}

/// The same breakdown over exactly the events HTA 0.5.0 keeps, for cross-checking:
/// - every slice on a GPU stream, which adds `cuda_sync` events ("Event Sync", typed OTHER →
///   non-compute) to kernels/memcpy/memset, and `cuda_sync` events elsewhere whose `stream` arg is
///   not -1 (device-wide "Context Sync" on stream 4294967295);
/// - with two or more ProfilerSteps, only GPU work whose launching CPU call (same `correlation`)
///   starts at or before the last step's end (`Trace._filter_irrelevant_gpu_kernels`): work whose
///   launch call is missing from the trace is dropped.
pub fn temporal_hta_compat(t: &Trace) -> Temporal {
    let s = &t.slices;
    let mut steps = 0;
    let mut last_end = i64::MIN;
    for i in 0..s.len() {
        if s.kind[i].is_launch() || !t.str(s.name[i]).starts_with("ProfilerStep") {
            continue;
        }
        if matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation) {
            steps += 1;
            last_end = last_end.max(s.end(i));
        }
    }
    let sync_cat = t.strings.get("cuda_sync");
    let mut v = Vec::new();
    for (i, &comp) in computation(t).iter().enumerate() {
        let on_gpu = t.tracks[s.track[i] as usize].kind == TrackKind::Gpu;
        let k = s.kind[i];
        let keep = if k.is_gpu_work() {
            if steps >= 2 {
                let l = t.gpu.row(i as u32).map_or(NONE, |r| t.gpu.launch[r]);
                l != NONE && s.start[l as usize] <= last_end
            } else {
                true
            }
        } else {
            // HTA keeps every event whose `stream` is not -1: synchronization on GPU streams,
            // and device-wide `Context Sync` whose stream is 4294967295 (on the GPU process's
            // tid -1, a CPU track here: 75.8 ms of alexnet_a100's span is after its last kernel).
            k == SliceKind::Runtime
                && (on_gpu
                    || (Some(s.cat[i]) == sync_cat
                        && t.slice_arg_int(i, "stream").is_some_and(|st| st != -1)))
        };
        if keep {
            v.push((s.start[i], s.end(i), comp));
        }
    }
    temporal_of(&v)
}

/// GPU work kept by `keep`, with whether each is computation.
fn gpu_intervals_named(t: &Trace, keep: impl Fn(usize) -> bool) -> Vec<(Ns, Ns, bool)> {
    let s = &t.slices;
    let comp = computation(t);
    t.gpu
        .slice
        .iter()
        .map(|&i| i as usize)
        .filter(|&i| s.kind[i].is_gpu_work() && keep(i))
        .map(|i| (s.start[i], s.end(i), comp[i]))
        .collect()
}

fn temporal_of(v: &[(Ns, Ns, bool)]) -> Temporal {
    let busy = union(v.iter().map(|x| (x.0, x.1)).collect());
    let (Some(first), Some(last)) = (busy.first(), busy.last()) else {
        return Temporal::default();
    };
    let span = last.1 - first.0;
    let busy_ns = total(&busy);
    let comp = union(v.iter().filter(|x| x.2).map(|x| (x.0, x.1)).collect());
    let compute_ns = total(&comp);
    Temporal {
        kernel_span_ns: span,
        busy_ns,
        compute_ns,
        non_compute_ns: busy_ns - compute_ns,
        idle_ns: span - busy_ns,
    }
}

/// Communication vs compute overlap over all GPU work.
pub fn overlap(t: &Trace) -> Overlap {
    overlap_in(t, None)
}

/// [`overlap`] over the GPU work inside `within` (merged windows), clipped to them.
fn overlap_in(t: &Trace, within: Option<&[(Ns, Ns)]>) -> Overlap {
    let is_comm = t.slice_name_test(|n| hta_kernel_type(n) == HtaKernelType::Communication);
    let is_comp = t.slice_name_test(|n| hta_kernel_type(n) == HtaKernelType::Computation);
    let inside = |u: Vec<(Ns, Ns)>| match within {
        Some(w) => intersect(&u, w),
        None => u,
    };
    let comm = inside(union(gpu_intervals(t, None, |i| is_comm[i])));
    let comp = inside(union(gpu_intervals(t, None, |i| is_comp[i])));
    let comm_ns = total(&comm);
    let overlap_ns = total(&intersect(&comm, &comp));
    Overlap {
        comm_ns,
        compute_ns: total(&comp),
        overlap_ns,
        exposed_comm_ns: total(&subtract(&comm, &comp)),
        overlap_pct: (comm_ns > 0).then(|| 100.0 * overlap_ns as f64 / comm_ns as f64),
    }
}

/// Idle gaps per GPU stream, classified as HTA does.
pub fn idle_gaps(t: &Trace) -> Vec<StreamIdle> {
    use super::gaps::{track_gaps, GapKind};
    let mut out = Vec::new();
    for tr in t.tracks.iter().filter(|tr| tr.kind == TrackKind::Gpu) {
        let mut st = StreamIdle {
            device: tr.device.unwrap_or(-1),
            stream: tr.stream.unwrap_or(-1),
            ..Default::default()
        };
        let has_work = track_gaps(t, tr, |g| match g.kind {
            GapKind::HostWait => st.host_wait_ns += g.dur_ns,
            GapKind::KernelWait => st.kernel_wait_ns += g.dur_ns,
            GapKind::Other => st.other_ns += g.dur_ns,
        });
        if has_work {
            out.push(st);
        }
    }
    crate::sort::by_key(&mut out, |x| (x.device, x.stream));
    out
}

/// [`kernel_intervals_by_device`]'s kernels of device `d` as sorted runs of intervals (rows of one
/// GPU track in start order, cut wherever a start goes back), without a list of them all: the
/// page's utilization track merges the runs ([`crate::view::counters::BusySeries::from_runs`]),
/// where a list of every kernel and its sort's scratch grew the page's wasm memory by 7 MB on a
/// 304 MB trace.
pub fn kernel_runs(t: &Trace, d: i64) -> Vec<impl Iterator<Item = (Ns, Ns)> + Clone + '_> {
    let s = &t.slices;
    let g = &t.gpu;
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut lo = 0;
    for r in 1..=g.slice.len() {
        let split = g.slice.get(r).is_none_or(|&i| {
            let (i, p) = (i as usize, g.slice[r - 1] as usize);
            s.track[i] != s.track[p] || s.start[i] < s.start[p]
        });
        if split {
            cuts.push((lo, r));
            lo = r;
        }
    }
    let claims = move |r: usize| {
        let i = g.slice[r] as usize;
        s.kind[i] == SliceKind::Kernel
            && (i64::from(g.device[r]) == d || t.tracks[s.track[i] as usize].device == Some(d))
    };
    cuts.into_iter()
        .map(|(a, b)| {
            (a..b).filter(move |&r| claims(r)).map(move |r| {
                let i = g.slice[r] as usize;
                (s.start[i], s.end(i))
            })
        })
        .collect()
}

/// The devices [`kernel_intervals_by_device`] lists, ascending.
pub fn kernel_devices(t: &Trace) -> Vec<i64> {
    let devs: std::collections::BTreeSet<i64> = t
        .gpu
        .slice
        .iter()
        .enumerate()
        .filter(|(_, &i)| t.slices.kind[i as usize] == SliceKind::Kernel)
        .map(|(r, &i)| {
            let d = t.gpu.device[r];
            if d >= 0 {
                i64::from(d)
            } else {
                t.tracks[t.slices.track[i as usize] as usize]
                    .device
                    .unwrap_or(-1)
            }
        })
        .collect();
    devs.into_iter().collect()
}

/// Kernel intervals per device: what "GPU utilization" counts (docs/definitions.md), here over the
/// step window and on the timeline's utilization counter per pixel. Kernels only (memcpy / memset
/// are not utilization); a kernel's device is its `device` arg, else its track's, else -1 (unknown,
/// never filed under device 0). Devices ascending; a kernel is counted on every device that claims
/// it (arg or track).
pub fn kernel_intervals_by_device(t: &Trace) -> Vec<(i64, Vec<(Ns, Ns)>)> {
    kernel_devices(t)
        .into_iter()
        .map(|d| {
            let iv = gpu_intervals(t, Some(d), |i| t.slices.kind[i] == SliceKind::Kernel);
            (d, iv)
        })
        .collect()
}

/// Utilization, temporal breakdown, overlap and idle gaps.
pub fn gpu_summary(t: &Trace) -> GpuSummary {
    let (lo, hi, from_steps) = step_window(t);
    let window = (hi - lo).max(0);
    let mut devices = Vec::new();
    for (d, iv) in kernel_intervals_by_device(t) {
        let k = union(iv);
        let busy = total(&clip(&k, lo, hi));
        devices.push(DeviceUtil {
            device: d,
            busy_ns: busy,
            utilization: if window > 0 {
                busy as f64 / window as f64
            } else {
                0.0
            },
        });
    }
    let n = devices.len().max(1) as i64;
    let busy_ns = devices.iter().map(|d| d.busy_ns).sum::<Ns>() / n;
    GpuSummary {
        utilization: (!devices.is_empty())
            .then(|| devices.iter().map(|d| d.utilization).sum::<f64>() / devices.len() as f64),
        busy_ns,
        idle_ns: window - busy_ns,
        window_ns: window,
        window_start_ns: lo,
        window_end_ns: hi,
        window_from_steps: from_steps,
        devices,
        temporal: temporal(t),
        overlap: overlap(t),
        idle_gaps: idle_gaps(t),
    }
}

/// [`gpu_summary`] over a scope's windows (`merged`: sorted, disjoint; see [`super::scope`]):
/// per device the kernels' union inside the windows ÷ their total length, and the temporal
/// breakdown and overlap of the GPU work clipped to them. Idle gaps per stream stay the trace's.
pub fn gpu_summary_in(t: &Trace, merged: &[(Ns, Ns)]) -> GpuSummary {
    let window = total(merged);
    let mut devices = Vec::new();
    for (d, iv) in kernel_intervals_by_device(t) {
        let busy = total(&intersect(&union(iv), merged));
        devices.push(DeviceUtil {
            device: d,
            busy_ns: busy,
            utilization: if window > 0 {
                busy as f64 / window as f64
            } else {
                0.0
            },
        });
    }
    let n = devices.len().max(1) as i64;
    let busy_ns = devices.iter().map(|d| d.busy_ns).sum::<Ns>() / n;
    // Each piece of GPU work cut to the windows it overlaps.
    let mut clipped = Vec::new();
    for (a, b, comp) in gpu_intervals_named(t, |_| true) {
        let k = merged.partition_point(|w| w.1 <= a);
        for w in merged[k..].iter().take_while(|w| w.0 < b) {
            let (x, y) = (a.max(w.0), b.min(w.1));
            if y > x {
                clipped.push((x, y, comp));
            }
        }
    }
    GpuSummary {
        utilization: (!devices.is_empty())
            .then(|| devices.iter().map(|d| d.utilization).sum::<f64>() / devices.len() as f64),
        busy_ns,
        idle_ns: window - busy_ns,
        window_ns: window,
        window_start_ns: merged.first().map_or(0, |w| w.0),
        window_end_ns: merged.last().map_or(0, |w| w.1),
        window_from_steps: false,
        devices,
        temporal: temporal_of(&clipped),
        overlap: overlap_in(t, Some(merged)),
        idle_gaps: idle_gaps(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hta_kernel_types_match_its_regexes() {
        assert_eq!(
            hta_kernel_type("ncclDevKernel_AllReduce"),
            HtaKernelType::Communication
        );
        assert_eq!(
            hta_kernel_type("ncclKernel_AllGather"),
            HtaKernelType::Communication
        );
        assert_eq!(
            hta_kernel_type("Memcpy HtoD (Pageable -> Device)"),
            HtaKernelType::Memory
        );
        assert_eq!(hta_kernel_type("Memset (Device)"), HtaKernelType::Memory);
        assert_eq!(hta_kernel_type("cudaStreamSync"), HtaKernelType::Other);
        assert_eq!(
            hta_kernel_type("volta_sgemm_128x64_nn"),
            HtaKernelType::Computation
        );
    }
}
