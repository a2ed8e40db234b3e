//! Launch statistics and sync points (docs/definitions.md, after HTA's
//! `get_cuda_kernel_launch_stats`): launch delay = GPU start − launching runtime call end; a short
//! kernel runs shorter on the GPU than its launch call took on the CPU (the launch-bound pattern);
//! sync points are `cudaStreamSynchronize`, `cudaDeviceSynchronize`, `cudaEventSynchronize` (and
//! their `hip*` twins) and blocking `cudaMemcpy*` calls without `Async` whose copy is DtoH — the
//! `.item()` / `.cpu()` pattern — each with the op that caused it (innermost enclosing
//! cpu_op / user_annotation).
//!
//! What a long delay means. HTA's delay mixes two things: time the work sat **queued behind
//! earlier work on its stream** (the CPU is ahead of the GPU: healthy, the usual reason for
//! delays of 100+ ms — on the A100 rank-0-of-16 trace the compute stream runs behind 190 ms of
//! NCCL SendRecv kernels, so the median delay is 162 ms of which all but 4 µs is queueing), and
//! time it waited **with its stream idle** (a cross-stream event wait, or the driver's own launch
//! latency). Each pair is split into both parts: `queued` = from the launch call's end to the end
//! of the previous work on the same stream, `ready` = the rest. A **late launch** is the
//! opposite case: the stream was idle before the launch call returned, so the GPU waited for the
//! CPU.
//!
//! Pairing is by `correlation` (or the `ac2g` flow on old traces). A pair whose GPU work starts
//! before its launch call returns is not a launch delay at all: the call blocked until the work
//! ran (a `cudaMemcpyAsync` from pageable memory, a `cudaMemcpy`), or the ids are mixed up. HTA
//! clips those to 0 and keeps them; they are counted here as `blocking_pairs` and left out of
//! the delay figures.

use super::kernels::enclosing_op;
use crate::model::{Ns, SliceKind, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct LaunchStats {
    /// GPU slices with a launch call that returned before they started (the sound pairs).
    pub launched: u64,
    /// HTA's launch delay over the sound pairs.
    pub mean_delay_ns: f64,
    pub median_delay_ns: Ns,
    pub p95_delay_ns: Ns,
    pub max_delay_ns: Ns,
    /// The part of each delay spent queued behind earlier work on the same stream.
    pub median_queued_ns: Ns,
    pub queued_total_ns: Ns,
    /// The rest of each delay: the stream was idle and the work still did not start.
    pub median_ready_ns: Ns,
    pub p95_ready_ns: Ns,
    pub max_ready_ns: Ns,
    pub ready_total_ns: Ns,
    /// Launches whose delay is mostly queueing (`queued ≥ ready`).
    pub mostly_queued: u64,
    /// Launches that found the whole device idle: every earlier piece of GPU work had ended
    /// before the launch call returned, so the GPU waited for the CPU. `late_launch_idle_ns`
    /// sums those waits (from the end of the device's earlier work to the call's end, or the
    /// work's start if sooner); the device's first work is not counted.
    pub late_launches: u64,
    pub late_launch_idle_ns: Ns,
    /// Pairs whose GPU work started before the launch call returned (a blocking call, e.g.
    /// `cudaMemcpyAsync` from pageable memory): not launch delays, left out of the figures.
    pub blocking_pairs: u64,
    /// Kernels whose GPU duration is below their launch call's duration.
    pub short_kernels: u64,
    pub short_kernel_total_ns: Ns,
    /// Up to 20 slice ids of the shortest-vs-launch kernels, for "show me".
    pub short_kernel_slices: Vec<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SyncPoint {
    /// The runtime call's slice id.
    pub slice: u32,
    pub name: String,
    pub op: Option<String>,
    pub start_ns: Ns,
    pub dur_ns: Ns,
}

/// Sync points grouped by (call, causing op).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SyncGroup {
    pub name: String,
    pub op: Option<String>,
    pub count: u64,
    pub total_ns: Ns,
    pub slices: Vec<u32>,
}

const SYNC_NAMES: &[&str] = &[
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "cudaEventSynchronize",
    "hipStreamSynchronize",
    "hipDeviceSynchronize",
    "hipEventSynchronize",
];

fn median(v: &mut [Ns]) -> Ns {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn p95(sorted: &[Ns]) -> Ns {
    sorted
        .get((sorted.len() * 95 / 100).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0)
}

pub fn launch_stats(t: &Trace) -> LaunchStats {
    let s = &t.slices;
    let g = &t.gpu;
    // GPU rows per (device, stream) in start order, to know when each stream became free.
    let mut order: Vec<usize> = (0..g.slice.len())
        .filter(|&r| s.kind[g.slice[r] as usize].is_gpu_work())
        .collect();
    crate::sort::by_key(&mut order, |&r| {
        (g.device[r], g.stream[r], s.start[g.slice[r] as usize], r)
    });
    let mut delays = Vec::new();
    let mut queued = Vec::new();
    let mut ready = Vec::new();
    let mut short = Vec::new();
    let mut st = LaunchStats::default();
    let mut prev: Option<((i32, i32), Ns)> = None;
    for &r in &order {
        let (i, l) = (g.slice[r] as usize, g.launch[r]);
        let key = (g.device[r], g.stream[r]);
        let free_at = prev.filter(|p| p.0 == key).map(|p| p.1);
        prev = Some((key, free_at.map_or(s.end(i), |f| f.max(s.end(i)))));
        if l == NONE {
            continue;
        }
        let l = l as usize;
        let launch_end = s.end(l);
        if s.start[i] < launch_end {
            st.blocking_pairs += 1;
            continue;
        }
        let delay = s.start[i] - launch_end;
        let q = free_at.map_or(0, |f| (f.min(s.start[i]) - launch_end).max(0));
        delays.push(delay);
        queued.push(q);
        ready.push(delay - q);
        if q >= delay - q {
            st.mostly_queued += 1;
        }
        if s.kind[i] == SliceKind::Kernel && s.dur[i] < s.dur[l] {
            st.short_kernels += 1;
            st.short_kernel_total_ns += s.dur[i];
            short.push((s.dur[i] - s.dur[l], i as u32));
        }
    }
    late_launches(t, &mut st);
    st.launched = delays.len() as u64;
    if !delays.is_empty() {
        st.mean_delay_ns = delays.iter().map(|&d| d as f64).sum::<f64>() / delays.len() as f64;
        st.median_delay_ns = median(&mut delays);
        st.p95_delay_ns = p95(&delays);
        st.max_delay_ns = delays[delays.len() - 1];
        st.queued_total_ns = queued.iter().sum();
        st.ready_total_ns = ready.iter().sum();
        st.median_queued_ns = median(&mut queued);
        st.median_ready_ns = median(&mut ready);
        st.p95_ready_ns = p95(&ready);
        st.max_ready_ns = ready[ready.len() - 1];
    }
    short.sort_unstable();
    st.short_kernel_slices = short.iter().take(20).map(|x| x.1).collect();
    st
}

/// The launch calls HTA's `get_cuda_kernel_launch_stats` pairs (its default
/// `include_memory_events=True`): hta/analyzers/cuda_kernel_analysis.py,
/// `cuda_kernel_launch_stats`.
const HTA_LAUNCH_NAMES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
];

/// Launch delays as HTA computes them, sorted: every GPU slice launched by one of
/// [`HTA_LAUNCH_NAMES`] (so not `cudaGraphLaunch`, `cuLaunchKernel`, `hip*`), negatives — the
/// blocking pairs that [`launch_stats`] leaves out — clipped to 0. For parity checks only.
pub fn hta_launch_delays(t: &Trace) -> Vec<Ns> {
    let s = &t.slices;
    let g = &t.gpu;
    let mut v: Vec<Ns> = (0..g.slice.len())
        .filter(|&r| g.launch[r] != NONE && s.kind[g.slice[r] as usize].is_gpu_work())
        .filter(|&r| HTA_LAUNCH_NAMES.contains(&t.str(s.name[g.launch[r] as usize])))
        .map(|r| (s.start[g.slice[r] as usize] - s.end(g.launch[r] as usize)).max(0))
        .collect();
    v.sort_unstable();
    v
}

/// Late launches: GPU work whose device had run dry before its launch call returned.
fn late_launches(t: &Trace, st: &mut LaunchStats) {
    let s = &t.slices;
    let g = &t.gpu;
    let mut order: Vec<usize> = (0..g.slice.len())
        .filter(|&r| s.kind[g.slice[r] as usize].is_gpu_work())
        .collect();
    crate::sort::by_key(&mut order, |&r| {
        (g.device[r], s.start[g.slice[r] as usize], r)
    });
    let mut busy_until: Option<(i32, Ns)> = None;
    for &r in &order {
        let i = g.slice[r] as usize;
        let dev = g.device[r];
        let before = busy_until.filter(|b| b.0 == dev).map(|b| b.1);
        busy_until = Some((dev, before.map_or(s.end(i), |b| b.max(s.end(i)))));
        let (Some(b), l) = (before, g.launch[r]) else {
            continue;
        };
        if l == NONE {
            continue;
        }
        let ready = s.end(l as usize).min(s.start[i]);
        if b < ready {
            st.late_launches += 1;
            st.late_launch_idle_ns += ready - b;
        }
    }
}

/// Launch calls that started a DtoH copy (by the launch link), found in one pass.
fn dtoh_launches(t: &Trace) -> rustc_hash::FxHashSet<u32> {
    let s = &t.slices;
    let g = &t.gpu;
    (0..g.slice.len())
        .filter(|&r| {
            let i = g.slice[r] as usize;
            g.launch[r] != NONE
                && s.kind[i] == SliceKind::Memcpy
                && t.str(s.name[i]).contains("DtoH")
        })
        .map(|r| g.launch[r])
        .collect()
}

/// Every sync point in time order.
pub fn sync_points(t: &Trace) -> Vec<SyncPoint> {
    let s = &t.slices;
    let dtoh = dtoh_launches(t);
    let mut v = Vec::new();
    for i in 0..s.len() {
        if !s.kind[i].is_launch() {
            continue;
        }
        let name = t.str(s.name[i]);
        let candidate = SYNC_NAMES.contains(&name)
            || ((name.starts_with("cudaMemcpy") || name.starts_with("hipMemcpy"))
                && !name.contains("Async"));
        let blocking = SYNC_NAMES.contains(&name) || dtoh.contains(&(i as u32));
        if !candidate || !blocking {
            continue;
        }
        let op = enclosing_op(t, i as u32);
        v.push(SyncPoint {
            slice: i as u32,
            name: name.to_owned(),
            op: (op != NONE).then(|| t.str(s.name[op as usize]).to_owned()),
            start_ns: s.start[i],
            dur_ns: s.dur[i],
        });
    }
    crate::sort::by_key(&mut v, |p| (p.start_ns, p.slice));
    v
}

/// Sync points grouped by call and causing op, by total time descending.
pub fn sync_groups(points: &[SyncPoint]) -> Vec<SyncGroup> {
    let mut m: FxHashMap<(&str, Option<&str>), SyncGroup> = FxHashMap::default();
    for p in points {
        let g = m
            .entry((p.name.as_str(), p.op.as_deref()))
            .or_insert_with(|| SyncGroup {
                name: p.name.clone(),
                op: p.op.clone(),
                count: 0,
                total_ns: 0,
                slices: Vec::new(),
            });
        g.count += 1;
        g.total_ns += p.dur_ns;
        if g.slices.len() < 20 {
            g.slices.push(p.slice);
        }
    }
    let mut v: Vec<SyncGroup> = m.into_values().collect();
    crate::sort::by(&mut v, |a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.op.cmp(&b.op))
    });
    v
}
