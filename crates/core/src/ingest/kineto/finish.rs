//! After the last byte: order tracks for display, sort slices, compute depth and parents, and link
//! every kernel/memcpy/memset to the runtime call that launched it.

use super::build::{Builder, FlowEnd};
use super::flows;
use crate::model::*;
use crate::par;
use crate::warnings::WarningKind;
use rustc_hash::FxHashMap;

fn gather<T: Copy>(v: &mut Vec<T>, order: &[u32]) {
    let out: Vec<T> = order.iter().map(|&i| v[i as usize]).collect();
    *v = out;
}

/// The GPU detail rows in their slices' display order, given the slice each row belongs to,
/// `order` (display position → slice) and its inverse `new_of`. One walk over `order` through a
/// slice → row table: sorting the rows by their slices' new positions took 18 ms of a 1 GB
/// trace's finish natively, this 8 ms. A slice with two rows (never made by this reader, but a
/// shard's sections are only checked, not trusted) falls back to that sort.
fn display_rows(slice_of: &[u32], order: &[u32], new_of: &[u32]) -> Vec<u32> {
    let mut row_of = vec![NONE; order.len()];
    let mut twice = false;
    for (r, &s) in slice_of.iter().enumerate() {
        match row_of.get_mut(s as usize) {
            Some(x) if *x == NONE => *x = r as u32,
            _ => twice = true,
        }
    }
    if !twice {
        let rows: Vec<u32> = order
            .iter()
            .map(|&s| row_of[s as usize])
            .filter(|&r| r != NONE)
            .collect();
        if rows.len() == slice_of.len() {
            return rows;
        }
    }
    let mut rows: Vec<u32> = (0..slice_of.len() as u32).collect();
    rows.sort_by_key(|&r| {
        new_of
            .get(slice_of[r as usize] as usize)
            .copied()
            .unwrap_or(NONE)
    });
    rows
}

impl Builder {
    pub fn finish(mut self) -> Trace {
        self.close_open_slices();
        self.apply_metadata();
        self.classify_tracks();
        self.renumber_tracks();
        let ends = std::mem::take(&mut self.flow_ends);
        let (_, idx) = par::join(|| self.sort_slices(), || flows::pairing_order(&ends));
        self.nest();
        self.link_launches();
        self.resolve_flows(&ends, &idx);
        self.sort_point_events();
        self.trace
    }

    fn close_open_slices(&mut self) {
        let open: Vec<u32> = self.open.drain().flat_map(|(_, v)| v).collect();
        for i in open {
            self.staged.dur.set(i as usize, 0);
            self.trace.warnings.add(WarningKind::UnmatchedEnd, || {
                "a B event with no E (kept as 0 ns)".into()
            });
        }
    }

    fn apply_metadata(&mut self) {
        let mut pids: Vec<IdVal> = self.trace.tracks.iter().map(|t| t.pid).collect();
        pids.extend(self.process_names.keys().copied());
        pids.sort();
        pids.dedup();
        self.trace.processes = pids
            .into_iter()
            .map(|pid| {
                let m = self.process_names.get(&pid).copied().unwrap_or_default();
                Process {
                    pid,
                    name: m.name.unwrap_or_default(),
                    labels: m.labels.unwrap_or_default(),
                    sort_index: m.sort_index.flatten(),
                }
            })
            .collect();
        for t in 0..self.trace.tracks.len() {
            let (pid, tid) = (self.trace.tracks[t].pid, self.trace.tracks[t].tid);
            if let Some(m) = self.thread_names.get(&(pid, tid)) {
                self.trace.tracks[t].name = m.name.unwrap_or_default();
                self.trace.tracks[t].sort_index = m.sort_index.flatten();
            }
        }
    }

    fn classify_tracks(&mut self) {
        let n = self.trace.tracks.len();
        let mut gpu = vec![false; n];
        let s = &self.staged;
        for i in 0..s.len() {
            let k = s.kind.get(i);
            if k.is_gpu_work() || k == SliceKind::GpuAnnotation {
                gpu[s.track.get(i) as usize] = true;
            }
        }
        let g = &self.trace.gpu;
        let mut dev_stream: Vec<Option<(i32, i32)>> = vec![None; n];
        for r in 0..g.slice.len() {
            let t = s.track.get(g.slice[r] as usize) as usize;
            if dev_stream[t].is_none() {
                dev_stream[t] = Some((g.device[r], g.stream[r]));
            }
        }
        for (t, tr) in self.trace.tracks.iter_mut().enumerate() {
            let stream_tid = matches!(tr.tid, IdVal::Str(id) if self.trace.strings.resolve(id).starts_with("stream"));
            if gpu[t] || stream_tid {
                tr.kind = TrackKind::Gpu;
                let (d, st) = dev_stream[t].unwrap_or((-1, -1));
                tr.device = if d >= 0 {
                    Some(i64::from(d))
                } else if let IdVal::Int(p) = tr.pid {
                    Some(p)
                } else {
                    None
                };
                tr.stream = if st >= 0 {
                    Some(i64::from(st))
                } else {
                    match tr.tid {
                        IdVal::Int(v) => Some(v),
                        IdVal::Str(id) => self
                            .trace
                            .strings
                            .resolve(id)
                            .trim_start_matches("stream")
                            .trim()
                            .parse()
                            .ok(),
                    }
                };
            }
            if tr.name == StrId::EMPTY {
                let label = match (tr.kind, tr.stream, tr.tid) {
                    (TrackKind::Gpu, Some(st), _) => format!("stream {st}"),
                    (_, _, IdVal::Int(v)) => format!("thread {v}"),
                    (_, _, IdVal::Str(id)) => self.trace.strings.resolve(id).to_owned(),
                };
                tr.name = self.trace.strings.intern(&label);
            }
        }
    }

    /// Display order: processes by sort index then pid, CPU threads before GPU streams, then by
    /// thread sort index and id. Slices are then sorted by this order so each track is contiguous.
    fn renumber_tracks(&mut self) {
        let psort: FxHashMap<IdVal, i64> = self
            .trace
            .processes
            .iter()
            .filter_map(|p| p.sort_index.map(|s| (p.pid, s)))
            .collect();
        let tracks = &self.trace.tracks;
        let mut order: Vec<u32> = (0..tracks.len() as u32).collect();
        order.sort_by_key(|&t| {
            let tr = &tracks[t as usize];
            (
                tr.kind == TrackKind::Gpu,
                psort.get(&tr.pid).copied().unwrap_or(i64::MAX),
                tr.pid,
                tr.sort_index.unwrap_or(i64::MAX),
                tr.stream.unwrap_or(i64::MAX),
                tr.tid,
            )
        });
        let mut new_of = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let old_tracks = std::mem::take(&mut self.trace.tracks);
        self.trace.tracks = order
            .iter()
            .map(|&o| old_tracks[o as usize].clone())
            .collect();
        let remap = |v: &mut Vec<u32>| v.iter_mut().for_each(|t| *t = new_of[*t as usize]);
        self.staged
            .track
            .iter_mut()
            .for_each(|t| *t = new_of[*t as usize]);
        remap(&mut self.trace.instants.track);
        remap(&mut self.trace.memory.track);
        for f in &mut self.flow_ends {
            f.track = new_of[f.track as usize];
        }
        for v in self.track_of.values_mut() {
            *v = new_of[*v as usize];
        }
        self.last_track = None;
    }

    /// Every column in display order. The columns are gathered apart, on every core
    /// (`par::all`; one after the other in wasm, in this order, each one's chunks freed before
    /// the next is gathered): natively on one core the gathers were ~140 ms of a 1 GB trace's
    /// ~480 ms finish.
    fn sort_slices(&mut self) {
        let st = &mut self.staged;
        let n = st.len();
        let order = st.display_order(self.trace.tracks.len());
        let mut new_of = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let (o, nw) = (&order[..], &new_of[..]);
        let s = &mut self.trace.slices;
        macro_rules! columns {
            ($($c:ident: $how:ident($by:ident)),*) => {
                vec![$({
                    let (from, to) = (&mut st.$c, &mut s.$c);
                    Box::new(move || *to = from.$how($by)) as par::Job<'_>
                }),*]
            };
        }
        par::all_over(
            n,
            columns!(
                start: scatter(nw),
                dur: scatter(nw),
                track: scatter(nw),
                name: scatter(nw),
                cat: scatter(nw),
                kind: scatter(nw),
                external_id: gather_ids(o),
                correlation: gather_ids(o),
                rf_id: gather_ids(o),
                input_dims: scatter(nw),
                input_types: scatter(nw),
                args: scatter(nw)
            ),
        );
        if order.iter().enumerate().all(|(i, &o)| i as u32 == o) {
            return;
        }
        let g = &mut self.trace.gpu;
        let rows = display_rows(&g.slice, &order, &new_of);
        drop(order);
        let (r, nw) = (&rows[..], &new_of[..]);
        let mut jobs: Vec<par::Job<'_>> = Vec::new();
        let slice = &mut g.slice;
        jobs.push(Box::new(move || {
            slice.iter_mut().for_each(|v| *v = nw[*v as usize]);
            gather(slice, r);
        }));
        macro_rules! rows {
            ($($c:ident),*) => {
                $(
                    let v = &mut g.$c;
                    jobs.push(Box::new(move || gather(v, r)));
                )*
            };
        }
        rows!(
            device,
            stream,
            grid,
            block,
            registers,
            shared_memory,
            blocks_per_sm,
            warps_per_sm,
            occupancy_pct,
            bytes,
            bandwidth_gbs,
            launch
        );
        let f = &mut self.trace.flops;
        jobs.push(Box::new(move || {
            let mut pairs: Vec<(u32, f64)> = f
                .slice
                .iter()
                .zip(&f.flops)
                .map(|(&s, &x)| (nw[s as usize], x))
                .collect();
            pairs.sort_by_key(|p| p.0);
            f.slice = pairs.iter().map(|p| p.0).collect();
            f.flops = pairs.iter().map(|p| p.1).collect();
        }));
        par::all_over(n, jobs);
    }

    /// Depth and parent by time nesting per track. A slice that starts inside another but ends after
    /// it is kept (Perfetto drops it) and drawn one level deeper; its parent is the nearest slice
    /// that really contains it.
    fn nest(&mut self) {
        let s = &mut self.trace.slices;
        let n = s.len();
        s.depth = vec![0; n];
        s.parent = vec![NONE; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut i = 0;
        let mut overlaps = 0u64;
        let mut example = None;
        while i < n {
            let t = s.track[i] as usize;
            let first = i;
            stack.clear();
            let mut max_depth = 0u16;
            while i < n && s.track[i] as usize == t {
                let start = s.start[i];
                let end = s.end(i);
                while let Some(&top) = stack.last() {
                    if s.end(top as usize) <= start
                        && !(s.dur[top as usize] == 0
                            && s.start[top as usize] == start
                            && s.dur[i] == 0)
                    {
                        stack.pop();
                    } else {
                        break;
                    }
                }
                if let Some(&top) = stack.last() {
                    if s.end(top as usize) < end {
                        overlaps += 1;
                        if example.is_none() {
                            example = Some(i);
                        }
                    }
                }
                let parent = stack
                    .iter()
                    .rev()
                    .find(|&&p| s.end(p as usize) >= end)
                    .copied()
                    .unwrap_or(NONE);
                let depth = stack.len().min(u16::MAX as usize) as u16;
                s.depth[i] = depth;
                s.parent[i] = parent;
                max_depth = max_depth.max(depth);
                stack.push(i as u32);
                i += 1;
            }
            let tr = &mut self.trace.tracks[t];
            tr.first = first as u32;
            tr.count = (i - first) as u32;
            tr.max_depth = max_depth;
        }
        if overlaps > 0 {
            let ex = example
                .map(|i| {
                    self.trace
                        .strings
                        .resolve(self.trace.slices.name[i])
                        .to_owned()
                })
                .unwrap_or_default();
            for k in 0..overlaps {
                self.trace.warnings.add(WarningKind::OverlappingSlices, || {
                    if k == 0 {
                        ex.clone()
                    } else {
                        String::new()
                    }
                });
            }
        }
    }

    /// GPU work → launching runtime call, by `correlation` (CUPTI's id, written on both sides).
    fn link_launches(&mut self) {
        let s = &self.trace.slices;
        let launch_of = s.correlation.first_rows(|i| s.kind[i].is_launch());
        let g = &mut self.trace.gpu;
        for r in 0..g.slice.len() {
            if let Some(l) = launch_of.get(s.correlation.get(g.slice[r] as usize)) {
                g.launch[r] = l;
            }
        }
    }

    fn resolve_flows(&mut self, ends: &[FlowEnd], idx: &[u32]) {
        let (flows, unpaired) = flows::pair(ends, idx, &self.trace.tracks, &self.trace.slices);
        let f = &mut self.trace.flows;
        if f.from.is_empty() {
            *f = flows;
        } else {
            f.cat.extend(flows.cat);
            f.from.extend(flows.from);
            f.to.extend(flows.to);
        }
        for _ in 0..unpaired {
            self.trace
                .warnings
                .add(WarningKind::UnpairedFlow, String::new);
        }
        // Flows fill launch links that correlation did not give (old traces without it). Where
        // correlation linked every row there is nothing to fill: the walk below (a binary search
        // of the rows per flow) was ~20 ms of a 1 GB trace's finish in V8 that changed nothing.
        let s = &self.trace.slices;
        let g = &mut self.trace.gpu;
        if !g.launch.contains(&NONE) {
            return;
        }
        for k in 0..self.trace.flows.from.len() {
            let (f, t) = (self.trace.flows.from[k], self.trace.flows.to[k]);
            if s.kind[f as usize].is_launch() && s.kind[t as usize].is_gpu_work() {
                if let Some(r) = g.row(t) {
                    if g.launch[r] == NONE {
                        g.launch[r] = f;
                    }
                }
            }
        }
    }

    fn sort_point_events(&mut self) {
        let m = &mut self.trace.memory;
        if m.ts.windows(2).any(|w| w[0] > w[1]) {
            let mut order: Vec<u32> = (0..m.ts.len() as u32).collect();
            order.sort_by_key(|&i| m.ts[i as usize]);
            gather(&mut m.ts, &order);
            gather(&mut m.track, &order);
            gather(&mut m.device_type, &order);
            gather(&mut m.device_id, &order);
            gather(&mut m.addr, &order);
            gather(&mut m.bytes, &order);
            gather(&mut m.total_allocated, &order);
            gather(&mut m.total_reserved, &order);
        }
        let it = &mut self.trace.instants;
        if it.ts.windows(2).any(|w| w[0] > w[1]) {
            let mut order: Vec<u32> = (0..it.ts.len() as u32).collect();
            order.sort_by_key(|&i| it.ts[i as usize]);
            gather(&mut it.ts, &order);
            gather(&mut it.track, &order);
            gather(&mut it.name, &order);
            gather(&mut it.cat, &order);
            gather(&mut it.args, &order);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng;
    use super::*;

    /// The rows come out in their slices' display order, as sorting them by it gives; a slice
    /// with two rows takes that sort.
    #[test]
    fn display_rows_follow_the_slices_order() {
        let mut rnd = rng(0x9e37_79b9_7f4a_7c15);
        for (n, twice) in [
            (0, false),
            (1, false),
            (40, false),
            (5000, false),
            (300, true),
        ] {
            let (order, new_of) = super::super::shuffled(n, &mut rnd);
            let mut slice_of: Vec<u32> = (0..n as u32).filter(|_| rnd(3) == 0).collect();
            if twice {
                slice_of.push(slice_of[0]);
            }
            let mut want: Vec<u32> = (0..slice_of.len() as u32).collect();
            want.sort_by_key(|&r| new_of[slice_of[r as usize] as usize]);
            assert_eq!(display_rows(&slice_of, &order, &new_of), want, "{n} slices");
        }
    }
}
