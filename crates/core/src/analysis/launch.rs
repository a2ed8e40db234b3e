//! Launch statistics and sync points (DESIGN §4 "Launch statistics", after HTA's
//! `get_cuda_kernel_launch_stats`): launch delay = GPU start − launching runtime call end; a short
//! kernel runs shorter on the GPU than its launch call took on the CPU (the launch-bound pattern);
//! sync points are `cudaStreamSynchronize`, `cudaDeviceSynchronize`, `cudaEventSynchronize` (and
//! their `hip*` twins) and blocking `cudaMemcpy*` calls without `Async` whose copy is DtoH — the
//! `.item()` / `.cpu()` pattern — each with the op that caused it (innermost enclosing
//! cpu_op / user_annotation).

use super::kernels::enclosing_op;
use crate::model::{Ns, SliceKind, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, Default)]
pub struct LaunchStats {
    /// GPU slices with a known launch call.
    pub launched: u64,
    pub mean_delay_ns: f64,
    pub median_delay_ns: Ns,
    pub p95_delay_ns: Ns,
    pub max_delay_ns: Ns,
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
#[derive(Debug, Clone, Serialize)]
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

pub fn launch_stats(t: &Trace) -> LaunchStats {
    let s = &t.slices;
    let g = &t.gpu;
    let mut delays = Vec::new();
    let mut short = Vec::new();
    let mut st = LaunchStats::default();
    for r in 0..g.slice.len() {
        let (i, l) = (g.slice[r] as usize, g.launch[r]);
        if l == NONE || !s.kind[i].is_gpu_work() {
            continue;
        }
        let l = l as usize;
        delays.push(s.start[i] - s.end(l));
        if s.kind[i] == SliceKind::Kernel && s.dur[i] < s.dur[l] {
            st.short_kernels += 1;
            st.short_kernel_total_ns += s.dur[i];
            short.push((s.dur[i] - s.dur[l], i as u32));
        }
    }
    st.launched = delays.len() as u64;
    if !delays.is_empty() {
        delays.sort_unstable();
        st.mean_delay_ns = delays.iter().map(|&d| d as f64).sum::<f64>() / delays.len() as f64;
        st.median_delay_ns = delays[delays.len() / 2];
        st.p95_delay_ns = delays[(delays.len() * 95 / 100).min(delays.len() - 1)];
        st.max_delay_ns = delays[delays.len() - 1];
    }
    short.sort_unstable();
    st.short_kernel_slices = short.iter().take(20).map(|x| x.1).collect();
    st
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
    v.sort_by_key(|p| (p.start_ns, p.slice));
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
    v.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.op.cmp(&b.op))
    });
    v
}
