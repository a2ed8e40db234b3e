//! CUDA graph replays, and how much GPU time the op view can explain.
//!
//! A `cudaGraphLaunch` (also `cuGraphLaunch`, `hipGraphLaunch`) replays a captured graph: CUPTI
//! writes every kernel, memcpy and memset of the replay with the launch call's `correlation`, so
//! the reader links them all to that one call (`GpuDetails::launch`), and through it to the op
//! stack around the launch (torch.compile's `CUDAGraphs` wrapper, vLLM's model runner). No op
//! ran per kernel: the per-op columns cannot split a replay, so the replay is its own row here.
//! Per launch: kernels, GPU time (their summed durations), the replay's span (first start → last
//! end), busy time (union on the device) and the idle inside the replay (span − busy: gaps
//! between graph nodes, a dependency or a host-side node). `graph id` / `graph node id` args are
//! shown where the trace records them (newer Kineto). GPU utilization and every headline figure
//! count replayed kernels like any other (they are GPU work on a stream); HTA's launch statistics
//! leave `cudaGraphLaunch` out (`launch::hta_launch_delays`), which its parity test keeps.
//!
//! [`gpu_health`] says how much GPU time the op-level tables can attribute, and why not the rest.

use super::intervals::{total, union};
use super::scope::Mask;
use crate::model::{Ns, SliceKind, Trace, NONE};
use serde::{Deserialize, Serialize};

pub const GRAPH_ID: &str = "graph id";
pub const GRAPH_NODE_ID: &str = "graph node id";

/// Whether a runtime call replays a CUDA/HIP graph.
pub fn is_graph_launch(name: &str) -> bool {
    name.contains("GraphLaunch")
}

/// One graph replay.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GraphLaunch {
    /// The launch call (slice index).
    pub launch: u32,
    /// The innermost op around the launch call, by name.
    pub op: Option<String>,
    pub start_ns: Ns,
    pub kernels: u64,
    pub gpu_ns: Ns,
    pub span_ns: Ns,
    pub busy_ns: Ns,
    pub idle_ns: Ns,
    /// `graph id` of the launch or its kernels, where recorded.
    pub graph_id: Option<i64>,
    /// Distinct `graph node id`s among its kernels (0 when not recorded).
    pub nodes: u64,
    /// Streams the replay ran on.
    pub streams: u64,
}

/// All replays of a trace.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct Graphs {
    pub launches: Vec<GraphLaunch>,
    pub kernels: u64,
    pub gpu_ns: Ns,
    pub idle_ns: Ns,
}

pub fn graphs(t: &Trace) -> Graphs {
    graphs_masked(t, Mask::ALL)
}

/// [`graphs`] over the replays whose kernels `keep` passes (a scope: by the launch's start).
pub fn graphs_masked(t: &Trace, keep: Mask<'_>) -> Graphs {
    let s = &t.slices;
    let g = &t.gpu;
    let mut out = Graphs::default();
    let mut memo: Vec<Option<bool>> = vec![None; t.strings.len()];
    let mut is_graph = |i: usize| -> bool {
        let id = s.name[i].0 as usize;
        match memo.get_mut(id) {
            Some(Some(v)) => *v,
            Some(slot) => *slot.insert(is_graph_launch(t.str(s.name[i]))),
            None => false,
        }
    };
    // GPU rows per graph launch, in launch order.
    let mut rows: Vec<(u32, usize)> = (0..g.slice.len())
        .filter(|&r| {
            let l = g.launch[r];
            l != NONE
                && keep.has(g.slice[r] as usize)
                && s.kind[l as usize].is_launch()
                && is_graph(l as usize)
        })
        .map(|r| (g.launch[r], r))
        .collect();
    rows.sort_unstable();
    let mut k = 0;
    while k < rows.len() {
        let l = rows[k].0;
        let mut e = k;
        while e < rows.len() && rows[e].0 == l {
            e += 1;
        }
        let mine: Vec<usize> = rows[k..e].iter().map(|x| x.1).collect();
        let iv: Vec<(Ns, Ns)> = mine
            .iter()
            .map(|&r| {
                let i = g.slice[r] as usize;
                (s.start[i], s.end(i))
            })
            .collect();
        let gpu_ns: Ns = mine.iter().map(|&r| s.dur[g.slice[r] as usize]).sum();
        let start = iv.iter().map(|x| x.0).min().unwrap_or(0);
        let end = iv.iter().map(|x| x.1).max().unwrap_or(0);
        let busy = total(&union(iv));
        let mut streams: Vec<i32> = mine.iter().map(|&r| g.stream[r]).collect();
        streams.sort_unstable();
        streams.dedup();
        let mut node_ids: Vec<i64> = mine
            .iter()
            .filter_map(|&r| t.slice_arg_int(g.slice[r] as usize, GRAPH_NODE_ID))
            .collect();
        node_ids.sort_unstable();
        node_ids.dedup();
        let graph_id = t.slice_arg_int(l as usize, GRAPH_ID).or_else(|| {
            mine.iter()
                .find_map(|&r| t.slice_arg_int(g.slice[r] as usize, GRAPH_ID))
        });
        let mut p = s.parent[l as usize];
        while p != NONE && s.kind[p as usize] != SliceKind::CpuOp {
            p = s.parent[p as usize];
        }
        let launch = GraphLaunch {
            launch: l,
            op: (p != NONE).then(|| t.str(s.name[p as usize]).to_owned()),
            start_ns: s.start[l as usize],
            kernels: mine.len() as u64,
            gpu_ns,
            span_ns: end - start,
            busy_ns: busy,
            idle_ns: (end - start - busy).max(0),
            graph_id,
            nodes: node_ids.len() as u64,
            streams: streams.len() as u64,
        };
        out.kernels += launch.kernels;
        out.gpu_ns += launch.gpu_ns;
        out.idle_ns += launch.idle_ns;
        out.launches.push(launch);
        k = e;
    }
    crate::sort::by_key(&mut out.launches, |x| (x.start_ns, x.launch));
    out
}

/// How much of the GPU time the op-level tables attribute, and the rest by reason.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct GpuHealth {
    /// Kernels, memcpy and memset, summed durations.
    pub gpu_ns: Ns,
    /// Launched by a call inside an op: the op tables and module view count it.
    pub in_op_ns: Ns,
    /// Replayed by a graph launch: attributed to the launch and the ops around it, not to the
    /// ops that were captured.
    pub graph_ns: Ns,
    /// Launched by a call outside any op (no `record_function` around it).
    pub outside_op_ns: Ns,
    /// No launching call found (no `correlation`, or its call fell outside the trace window,
    /// or the flow was lost).
    pub no_launch_ns: Ns,
    /// Overlapping slices on one stream (programmatic dependent launch, or clock skew): kept
    /// and counted, never dropped.
    pub overlapping_on_stream: u64,
    /// The reader's warnings, one line each: dropped or repaired events and what they mean.
    pub reader: Vec<String>,
}

pub fn gpu_health(t: &Trace) -> GpuHealth {
    gpu_health_masked(t, Mask::ALL)
}

/// [`gpu_health`] over the GPU work `keep` passes (a scope).
pub fn gpu_health_masked(t: &Trace, keep: Mask<'_>) -> GpuHealth {
    let s = &t.slices;
    let g = &t.gpu;
    let mut h = GpuHealth::default();
    for r in 0..g.slice.len() {
        let i = g.slice[r] as usize;
        if !s.kind[i].is_gpu_work() || !keep.has(i) {
            continue;
        }
        let d = s.dur[i];
        h.gpu_ns += d;
        let l = g.launch[r];
        if l == NONE {
            h.no_launch_ns += d;
            continue;
        }
        if is_graph_launch(t.str(s.name[l as usize])) {
            h.graph_ns += d;
            continue;
        }
        let mut p = s.parent[l as usize];
        while p != NONE && s.kind[p as usize] != SliceKind::CpuOp {
            p = s.parent[p as usize];
        }
        if p == NONE {
            h.outside_op_ns += d;
        } else {
            h.in_op_ns += d;
        }
    }
    // Overlaps per stream: a slice that starts before the previous one on its track ended.
    for tr in &t.tracks {
        if tr.kind != crate::model::TrackKind::Gpu {
            continue;
        }
        let mut end = Ns::MIN;
        for i in tr.first as usize..(tr.first + tr.count) as usize {
            if !s.kind[i].is_gpu_work() || !keep.has(i) {
                continue;
            }
            if s.start[i] < end {
                h.overlapping_on_stream += 1;
            }
            end = end.max(s.end(i));
        }
    }
    h.reader = t.warnings.lines_of(crate::warnings::Severity::Warning);
    h
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::view::testutil::trace_json;

    #[test]
    fn a_replay_is_one_row_with_its_kernels_span_and_idle() {
        let t = trace_json(concat!(
            r#"{"ph":"X","cat":"cpu_op","name":"CUDAGraphs","pid":1,"tid":1,"ts":0,"dur":50},"#,
            r#"{"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":10,"dur":20,"args":{"correlation":5,"graph id":3}},"#,
            r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":60,"dur":5,"args":{"correlation":6}},"#,
            r#"{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":100,"dur":10,"args":{"device":0,"stream":7,"correlation":5,"graph node id":1}},"#,
            r#"{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":115,"dur":10,"args":{"device":0,"stream":7,"correlation":5,"graph node id":2}},"#,
            r#"{"ph":"X","cat":"kernel","name":"c","pid":0,"tid":8,"ts":105,"dur":30,"args":{"device":0,"stream":8,"correlation":5,"graph node id":3}},"#,
            r#"{"ph":"X","cat":"kernel","name":"d","pid":0,"tid":7,"ts":200,"dur":4,"args":{"device":0,"stream":7,"correlation":6}},"#,
            r#"{"ph":"X","cat":"kernel","name":"e","pid":0,"tid":7,"ts":210,"dur":6,"args":{"device":0,"stream":7}}"#
        ));
        let gr = graphs(&t);
        assert_eq!(gr.launches.len(), 1);
        let l = &gr.launches[0];
        assert_eq!((l.kernels, l.gpu_ns, l.streams, l.nodes), (3, 50_000, 2, 3));
        // Span 100..135; busy = [100,135) covered by c and a: 35 us, no idle.
        assert_eq!((l.span_ns, l.busy_ns, l.idle_ns), (35_000, 35_000, 0));
        assert_eq!(l.graph_id, Some(3));
        assert_eq!(l.op.as_deref(), Some("CUDAGraphs"));
        let h = gpu_health(&t);
        assert_eq!(h.gpu_ns, 60_000);
        assert_eq!(h.graph_ns, 50_000);
        assert_eq!(h.outside_op_ns, 4_000);
        assert_eq!(h.no_launch_ns, 6_000);
        assert_eq!(h.in_op_ns, 0);
        // Kernel c starts inside a on another stream: no overlap; none on stream 7 either.
        assert_eq!(h.overlapping_on_stream, 0);
    }
}
