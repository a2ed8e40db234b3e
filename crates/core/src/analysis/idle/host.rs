//! What the host was doing: the interval sets the idle causes are read from, built once per
//! trace (one pass over the slices, one sort per set), and the per-thread lookups.

use super::Cause;
use crate::analysis::intervals::{intersect, push_merged, subtract, union};
use crate::model::{Ns, SliceKind, StrId, Trace, TrackKind, NONE};
use rustc_hash::{FxHashMap, FxHashSet};

/// Host calls that wait for the device: the runtime's synchronize calls and the ops that make
/// them (`.item()`, `.cpu()`, `nonzero`), plus blocking DtoH copies (found by their launch link).
const SYNC_CALLS: &[&str] = &[
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "cudaEventSynchronize",
    "hipStreamSynchronize",
    "hipDeviceSynchronize",
    "hipEventSynchronize",
];
const SYNC_OPS: &[&str] = &["aten::item", "aten::_local_scalar_dense", "aten::nonzero"];
/// Runtime calls that launch device work.
const LAUNCHES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cudaLaunchCooperativeKernel",
    "cudaGraphLaunch",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "hipLaunchKernel",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel",
    "hipGraphLaunch",
    "hipMemcpyAsync",
    "hipMemsetAsync",
];

/// Whether a CPU slice marks data loading: torch's `enumerate(DataLoader)#…__next__`, a Python
/// frame in `torch/utils/data/dataloader.py`, or a user annotation whose words include `data`,
/// `dataloader`, `loader`, `dataset` or `prefetch` (`record_function("## data ##")`). An op's
/// name (`aten::_log_softmax_backward_data`) says nothing of the sort.
pub fn is_data_loading(name: &str, kind: SliceKind) -> bool {
    if name.contains("DataLoader") || name.contains("dataloader.py") {
        return true;
    }
    kind == SliceKind::UserAnnotation
        && name.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
            let w = w.to_ascii_lowercase();
            matches!(
                w.as_str(),
                "data" | "dataloader" | "loader" | "dataset" | "prefetch"
            )
        })
}

/// Whether a CPU slice is a blocking collective or barrier the host sits in.
fn is_collective(name: &str) -> bool {
    ["nccl:", "gloo:", "c10d::", "mpi:", "ucc:", "xccl:"]
        .iter()
        .any(|p| name.starts_with(p))
        || name == "record_param_comms"
        || name.contains("barrier")
}

/// Whether a CPU slice is the optimizer: torch's `Optimizer.step#…` / `Optimizer.zero_grad#…`,
/// an annotation naming it, or a fused / foreach optimizer op.
fn is_optimizer(name: &str) -> bool {
    name.starts_with("Optimizer.")
        || name.to_ascii_lowercase().contains("optimizer")
        || name.starts_with("aten::_fused_adam")
        || name.starts_with("aten::_fused_sgd")
}

/// Interval sets per host thread (indexed by track) and over all threads.
pub struct Host {
    pub data: Vec<(Ns, Ns)>,
    pub collective: Vec<(Ns, Ns)>,
    /// Sync calls and ops, each with its slice (sorted by start, not merged: the evidence).
    pub syncs: Vec<(Ns, Ns, u32)>,
    pub sync_union: Vec<(Ns, Ns)>,
    pub h2d: Vec<(Ns, Ns)>,
    /// Launch calls, optimizer, CPU ops, any event: per track and over all host threads.
    pub launch: ByTrack,
    pub optimizer: ByTrack,
    pub ops: ByTrack,
    pub any: ByTrack,
    /// Per track: its CPU slices' indices in start order (for "what was there").
    pub track_slices: Vec<Vec<u32>>,
}

/// Merged intervals of one kind per host track, and their union over all host threads (for gaps
/// whose launching thread is unknown). Most traces launch from one thread: there the union is
/// that thread's list, read in place rather than copied (the unions were 8.6 of the host's 20 MB
/// on the synthetic 304 MB trace, which launches from two threads and so keeps them).
#[derive(Debug, Clone, Default)]
pub struct ByTrack {
    pub tracks: Vec<Vec<(Ns, Ns)>>,
    /// The union where two or more tracks have intervals, else empty.
    union: Vec<(Ns, Ns)>,
}

impl ByTrack {
    fn new(n_tracks: usize) -> ByTrack {
        ByTrack {
            tracks: vec![Vec::new(); n_tracks],
            union: Vec::new(),
        }
    }

    /// Merges each track's list (cut to size) and makes the union where it is not one track's.
    fn finish(&mut self) {
        for v in &mut self.tracks {
            *v = union(std::mem::take(v));
            v.shrink_to_fit();
        }
        let mut with = self.tracks.iter().filter(|v| !v.is_empty());
        if with.next().is_some() && with.next().is_some() {
            self.union = union(self.tracks.iter().flatten().copied().collect());
        }
    }

    /// Every host thread's intervals, merged.
    pub fn all(&self) -> &[(Ns, Ns)] {
        if !self.union.is_empty() {
            return &self.union;
        }
        self.tracks
            .iter()
            .find(|v| !v.is_empty())
            .map_or(&[][..], |v| &v[..])
    }
}

/// Launch calls that started a DtoH or HtoD copy, from the GPU side's launch links.
fn copy_launches(t: &Trace, dir: &str) -> FxHashSet<u32> {
    let s = &t.slices;
    let g = &t.gpu;
    (0..g.slice.len())
        .filter(|&r| {
            let i = g.slice[r] as usize;
            g.launch[r] != NONE && s.kind[i] == SliceKind::Memcpy && t.str(s.name[i]).contains(dir)
        })
        .map(|r| g.launch[r])
        .collect()
}

impl Host {
    pub fn of(t: &Trace) -> Host {
        let s = &t.slices;
        let n_tracks = t.tracks.len();
        let mut h = Host {
            data: Vec::new(),
            collective: Vec::new(),
            syncs: Vec::new(),
            sync_union: Vec::new(),
            h2d: Vec::new(),
            launch: ByTrack::new(n_tracks),
            optimizer: ByTrack::new(n_tracks),
            ops: ByTrack::new(n_tracks),
            any: ByTrack::new(n_tracks),
            track_slices: vec![Vec::new(); n_tracks],
        };
        let dtoh = copy_launches(t, "DtoH");
        let htod = copy_launches(t, "HtoD");
        // Name tests once per distinct name.
        let mut memo: FxHashMap<(StrId, SliceKind), u8> = FxHashMap::default();
        const DATA: u8 = 1;
        const COLL: u8 = 2;
        const SYNC: u8 = 4;
        const LAUNCH: u8 = 8;
        const OPT: u8 = 16;
        const SYNC_CANDIDATE: u8 = 32;
        // A track's slices are in start order, so each interval list below is merged as it grows
        // (`push_merged`): nested calls add nothing, and the lists stay near the number of
        // top-level calls instead of one entry per CPU slice.
        for (k, tr) in t.tracks.iter().enumerate() {
            if tr.kind != TrackKind::Cpu {
                continue;
            }
            let loader_thread = {
                let n = t.str(tr.name);
                n.contains("pin_memory") || n.contains("DataLoader")
            };
            for i in tr.first as usize..(tr.first + tr.count) as usize {
                let kind = s.kind[i];
                if !matches!(
                    kind,
                    SliceKind::CpuOp
                        | SliceKind::UserAnnotation
                        | SliceKind::PythonFunction
                        | SliceKind::Runtime
                        | SliceKind::Driver
                ) {
                    continue;
                }
                let (a, b) = (s.start[i], s.end(i));
                if t.is_step(s.name[i]) {
                    continue;
                }
                let name = t.str(s.name[i]);
                let f = *memo.entry((s.name[i], kind)).or_insert_with(|| {
                    let mut f = 0;
                    if is_data_loading(name, kind) {
                        f |= DATA;
                    }
                    if is_collective(name) {
                        f |= COLL;
                    }
                    if SYNC_CALLS.contains(&name) || SYNC_OPS.contains(&name) {
                        f |= SYNC;
                    }
                    if name.starts_with("cudaMemcpy") || name.starts_with("hipMemcpy") {
                        f |= SYNC_CANDIDATE;
                    }
                    if LAUNCHES.contains(&name) {
                        f |= LAUNCH;
                    }
                    if is_optimizer(name) {
                        f |= OPT;
                    }
                    f
                });
                h.track_slices[k].push(i as u32);
                push_merged(&mut h.any.tracks[k], a, b);
                if f & DATA != 0 || loader_thread {
                    push_merged(&mut h.data, a, b);
                }
                if f & COLL != 0 {
                    push_merged(&mut h.collective, a, b);
                }
                let blocking_dtoh = f & SYNC_CANDIDATE != 0
                    && !name.contains("Async")
                    && dtoh.contains(&(i as u32));
                if f & SYNC != 0 || blocking_dtoh {
                    h.syncs.push((a, b, i as u32));
                }
                if kind.is_launch() && htod.contains(&(i as u32)) {
                    push_merged(&mut h.h2d, a, b);
                }
                if f & LAUNCH != 0 {
                    push_merged(&mut h.launch.tracks[k], a, b);
                }
                if f & OPT != 0 {
                    push_merged(&mut h.optimizer.tracks[k], a, b);
                }
                if kind == SliceKind::CpuOp {
                    push_merged(&mut h.ops.tracks[k], a, b);
                }
            }
        }
        let merge = |v: &mut Vec<(Ns, Ns)>| *v = union(std::mem::take(v));
        merge(&mut h.data);
        merge(&mut h.collective);
        merge(&mut h.h2d);
        h.syncs.sort_unstable();
        h.sync_union = union(h.syncs.iter().map(|x| (x.0, x.1)).collect());
        for sets in [&mut h.launch, &mut h.optimizer, &mut h.ops, &mut h.any] {
            sets.finish();
        }
        h.track_slices.iter_mut().for_each(Vec::shrink_to_fit);
        h
    }

    /// The sync the host sat in when the device drained at `a`: one that started by `a` and
    /// returned no earlier than `a − slack` (the sync returns a few µs after the work it waited
    /// for; CUPTI's GPU and host clocks agree to about that).
    pub fn sync_at(&self, a: Ns, slack: Ns) -> Option<u32> {
        let k = self.syncs.partition_point(|x| x.0 <= a);
        self.syncs[..k]
            .iter()
            .rev()
            .take(64)
            .find(|x| x.1 >= a - slack)
            .map(|x| x.2)
    }

    /// The innermost CPU slice on `track` covering `x` whose kind passes `keep` ([`NONE`] when
    /// none): the last slice started by `x`, then up its parents.
    pub fn covering(
        &self,
        t: &Trace,
        track: usize,
        x: Ns,
        keep: impl Fn(SliceKind) -> bool,
    ) -> u32 {
        let s = &t.slices;
        let v = &self.track_slices[track];
        let k = v.partition_point(|&i| s.start[i as usize] <= x);
        let Some(&last) = k.checked_sub(1).and_then(|k| v.get(k)) else {
            return NONE;
        };
        let mut i = last;
        while i != NONE {
            let iu = i as usize;
            if s.start[iu] <= x && s.end(iu) > x && keep(s.kind[iu]) {
                return i;
            }
            i = s.parent[iu];
        }
        NONE
    }
}

/// The part of a merged list inside `[lo, hi)`, by binary search.
pub fn window(u: &[(Ns, Ns)], lo: Ns, hi: Ns) -> Vec<(Ns, Ns)> {
    let a = u.partition_point(|x| x.1 <= lo);
    let b = u.partition_point(|x| x.0 < hi);
    crate::analysis::intervals::clip(&u[a..b.max(a)], lo, hi)
}

/// Splits `piece` (merged, disjoint) among causes by priority: each `(cause, set)` takes the
/// part of what is left that its set covers; returns the parts and what nobody took.
pub fn claim(
    piece: Vec<(Ns, Ns)>,
    rules: &[(Cause, &[(Ns, Ns)])],
    out: &mut Vec<(Ns, Ns, Cause)>,
) -> Vec<(Ns, Ns)> {
    let mut left = piece;
    for (cause, set) in rules {
        if left.is_empty() {
            break;
        }
        let (Some(lo), Some(hi)) = (left.first().map(|x| x.0), left.last().map(|x| x.1)) else {
            break;
        };
        let w = window(set, lo, hi);
        if w.is_empty() {
            continue;
        }
        let got = intersect(&left, &w);
        if got.is_empty() {
            continue;
        }
        out.extend(got.iter().map(|&(a, b)| (a, b, *cause)));
        left = subtract(&left, &got);
    }
    left
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    /// `all` is the union of every track's intervals, whether one track has some (read in
    /// place) or several (merged), on random nested and overlapping lists.
    #[test]
    fn all_is_the_union_of_the_tracks() {
        let mut next = tracelight_testkit::xorshift(0x9e37_79b9_7f4a_7c15);
        for (n_tracks, busy) in [(0, 0), (1, 1), (3, 1), (3, 2), (4, 4)] {
            let mut b = ByTrack::new(n_tracks);
            let mut every: Vec<(Ns, Ns)> = Vec::new();
            for k in 0..busy {
                let mut at = 0;
                for _ in 0..200 {
                    at += (next() % 50) as Ns;
                    let end = at + 1 + (next() % 80) as Ns;
                    push_merged(&mut b.tracks[k], at, end);
                    every.push((at, end));
                }
            }
            b.finish();
            every.sort_unstable();
            assert_eq!(b.all(), union(every), "{n_tracks} tracks, {busy} busy");
        }
    }
}
