//! Building the merged tree: the stacks of each weight into a tree in creation order, then sorted
//! heaviest first and laid out in pre-order.

use super::{Flame, Options, Scope, Special, Weight};
use crate::model::{Ns, SliceKind, StrId, Trace, TrackKind, NONE};
use rustc_hash::FxHashMap;

pub(super) fn build(t: &Trace, scope: &Scope, opts: Options) -> Flame {
    let mut b = Builder::new(t);
    match opts.weight {
        Weight::Cpu => cpu_stacks(t, scope, opts.python, &mut b),
        Weight::Device => device_stacks(t, scope, opts.python, &mut b),
    }
    finish(t, b, opts.weight)
}

/// The host-side kinds a stack is made of.
fn is_frame(k: SliceKind, python: bool) -> bool {
    match k {
        SliceKind::CpuOp | SliceKind::UserAnnotation | SliceKind::Runtime | SliceKind::Driver => {
            true
        }
        SliceKind::PythonFunction => python,
        _ => false,
    }
}

/// `[start, end)` of slice `i` clipped to `range`, as a length; `None` when outside it (a
/// zero-length slice counts when it starts inside).
fn clipped(t: &Trace, i: usize, range: Option<(Ns, Ns)>) -> Option<Ns> {
    let (s, e) = (t.slices.start[i], t.slices.end(i));
    let Some((a, b)) = range else {
        return Some(e - s);
    };
    if s == e {
        return (s >= a && s < b).then_some(0);
    }
    let (lo, hi) = (s.max(a), e.min(b));
    (hi > lo).then_some(hi - lo)
}

/// Key of a child under its parent: the name, or one key for every `ProfilerStep#N`.
const STEP_KEY: u32 = u32::MAX;
const NO_LAUNCH_KEY: u32 = u32::MAX - 1;

/// The tree under construction, in creation order.
struct Builder {
    name: Vec<StrId>,
    special: Vec<Special>,
    kind: Vec<SliceKind>,
    rep: Vec<u32>,
    parent: Vec<u32>,
    total: Vec<Ns>,
    calls: Vec<u32>,
    occ: Vec<Vec<u32>>,
    child: FxHashMap<(u32, u32), u32>,
    /// Per interned string: 0 unknown, 1 a step name, 2 not.
    step_name: Vec<u8>,
}

impl Builder {
    fn new(t: &Trace) -> Builder {
        let mut b = Builder {
            name: Vec::new(),
            special: Vec::new(),
            kind: Vec::new(),
            rep: Vec::new(),
            parent: Vec::new(),
            total: Vec::new(),
            calls: Vec::new(),
            occ: Vec::new(),
            child: FxHashMap::default(),
            step_name: vec![0; t.strings.len()],
        };
        b.push(StrId::EMPTY, Special::Root, SliceKind::Other, NONE, NONE);
        b
    }

    fn push(&mut self, name: StrId, sp: Special, kind: SliceKind, rep: u32, parent: u32) -> u32 {
        let n = self.name.len() as u32;
        self.name.push(name);
        self.special.push(sp);
        self.kind.push(kind);
        self.rep.push(rep);
        self.parent.push(parent);
        self.total.push(0);
        self.calls.push(0);
        self.occ.push(Vec::new());
        n
    }

    fn is_step(&mut self, t: &Trace, id: StrId) -> bool {
        let Some(v) = self.step_name.get_mut(id.index()) else {
            return false;
        };
        if *v == 0 {
            *v = if t.is_step(id) { 1 } else { 2 };
        }
        *v == 1
    }

    /// The child of `parent` that slice `i` merges into, made on first use.
    fn child_for(&mut self, t: &Trace, parent: u32, i: usize) -> u32 {
        let id = t.slices.name[i];
        let step = self.is_step(t, id);
        let key = if step { STEP_KEY } else { id.0 };
        if let Some(&n) = self.child.get(&(parent, key)) {
            return n;
        }
        let sp = if step { Special::Steps } else { Special::No };
        let n = self.push(id, sp, t.slices.kind[i], i as u32, parent);
        self.child.insert((parent, key), n);
        n
    }

    fn no_launch(&mut self) -> u32 {
        if let Some(&n) = self.child.get(&(0, NO_LAUNCH_KEY)) {
            return n;
        }
        let n = self.push(StrId::EMPTY, Special::NoLaunch, SliceKind::Other, NONE, 0);
        self.child.insert((0, NO_LAUNCH_KEY), n);
        n
    }
}

/// [`Weight::Cpu`]: every kept host slice of the scope's tracks, merged under its nearest kept
/// ancestor's frame.
fn cpu_stacks(t: &Trace, scope: &Scope, python: bool, b: &mut Builder) {
    let s = &t.slices;
    // Per slice: the frame its descendants hang under (its own, or its nearest kept ancestor's).
    let mut under: Vec<u32> = vec![0; s.len()];
    for (k, tr) in t.tracks.iter().enumerate() {
        if tr.kind != TrackKind::Cpu || scope.tracks.as_ref().is_some_and(|v| !v.contains(&k)) {
            continue;
        }
        let range = tr.first as usize..(tr.first + tr.count) as usize;
        for i in range {
            let p = s.parent[i];
            let up = if p == NONE { 0 } else { under[p as usize] };
            under[i] = up;
            if !is_frame(s.kind[i], python) {
                continue;
            }
            let Some(w) = clipped(t, i, scope.range) else {
                continue;
            };
            let n = b.child_for(t, up, i);
            under[i] = n;
            b.total[n as usize] += w;
            b.calls[n as usize] += 1;
            b.occ[n as usize].push(i as u32);
        }
    }
    b.total[0] = (1..b.name.len())
        .filter(|&n| b.parent[n] == 0)
        .map(|n| b.total[n])
        .sum();
}

/// [`Weight::Device`]: each GPU slice of the scope as a leaf under its launching call's stack.
fn device_stacks(t: &Trace, scope: &Scope, python: bool, b: &mut Builder) {
    let s = &t.slices;
    let g = &t.gpu;
    let listed_gpu = scope.tracks.as_ref().filter(|v| {
        v.iter()
            .any(|&k| t.tracks.get(k).is_some_and(|tr| tr.kind == TrackKind::Gpu))
    });
    // Frame of each host slice already placed (the stacks of many kernels share their ops).
    let mut frame_of: Vec<u32> = vec![NONE; s.len()];
    let mut chain: Vec<u32> = Vec::new();
    for r in 0..g.slice.len() {
        let i = g.slice[r] as usize;
        if i >= s.len() || !s.kind[i].is_gpu_work() {
            continue;
        }
        if listed_gpu.is_some_and(|v| !v.contains(&(s.track[i] as usize))) {
            continue;
        }
        let Some(w) = clipped(t, i, scope.range) else {
            continue;
        };
        let l = g.launch[r];
        let top = if l == NONE || l as usize >= s.len() {
            b.no_launch()
        } else {
            // Up from the launch call to the first placed frame (or the root), then down,
            // placing each kept frame.
            chain.clear();
            let mut p = l;
            let mut at = 0;
            while p != NONE {
                match frame_of.get(p as usize) {
                    Some(&n) if n != NONE => {
                        at = n;
                        break;
                    }
                    Some(_) => {}
                    None => break,
                }
                chain.push(p);
                p = s.parent[p as usize];
            }
            for &c in chain.iter().rev() {
                let cu = c as usize;
                if is_frame(s.kind[cu], python) {
                    at = b.child_for(t, at, cu);
                    b.occ[at as usize].push(c);
                }
                frame_of[cu] = at;
            }
            at
        };
        let n = b.child_for(t, top, i);
        b.total[n as usize] += w;
        b.calls[n as usize] += 1;
        b.occ[n as usize].push(i as u32);
    }
}

/// Sorts children heaviest first, lays the tree out in pre-order and fills totals, self times,
/// calls and offsets.
fn finish(t: &Trace, mut b: Builder, weight: Weight) -> Flame {
    let m = b.name.len();
    // Device weight lives on the leaves: totals are sums of children, bottom-up (children are
    // created after their parents).
    if weight == Weight::Device {
        for n in (1..m).rev() {
            let p = b.parent[n] as usize;
            b.total[p] += b.total[n];
        }
        // An op frame's calls are its distinct slices (many kernels share one launch).
        for n in 1..m {
            let v = &mut b.occ[n];
            v.sort_unstable();
            v.dedup();
            if !v.is_empty() {
                b.calls[n] = v.len() as u32;
            }
        }
    }
    let mut kids: Vec<Vec<u32>> = vec![Vec::new(); m];
    for n in 1..m {
        kids[b.parent[n] as usize].push(n as u32);
    }
    let label = |n: u32| -> &str {
        match b.special[n as usize] {
            Special::No => t.str(b.name[n as usize]),
            Special::Steps => t.step_rule().merged(),
            Special::NoLaunch => "[launch not recorded]",
            Special::Root => "",
        }
    };
    for k in kids.iter_mut() {
        crate::sort::by(k, |&x, &y| {
            b.total[y as usize]
                .cmp(&b.total[x as usize])
                .then_with(|| label(x).cmp(label(y)))
                .then_with(|| x.cmp(&y))
        });
    }
    let mut f = Flame {
        weight,
        ..Default::default()
    };
    let mut child_sum = vec![0 as Ns; m];
    for n in 1..m {
        child_sum[b.parent[n] as usize] += b.total[n];
    }
    // Pre-order walk: (old node, new parent, depth, x).
    let mut stack: Vec<(u32, u32, u16, Ns)> = vec![(0, NONE, 0, 0)];
    let mut new_of = vec![NONE; m];
    while let Some((o, parent, depth, x)) = stack.pop() {
        let ou = o as usize;
        let nn = f.name.len() as u32;
        new_of[ou] = nn;
        f.name.push(b.name[ou]);
        f.special.push(b.special[ou]);
        f.kind.push(b.kind[ou]);
        f.rep.push(b.rep[ou]);
        f.parent.push(parent);
        f.depth.push(depth);
        f.total.push(b.total[ou]);
        f.self_ns.push((b.total[ou] - child_sum[ou]).max(0));
        f.calls.push(b.calls[ou]);
        f.x.push(x);
        f.end.push(0);
        f.max_depth = f.max_depth.max(depth);
        // Push children right to left so the heaviest pops first; offsets left to right.
        let mut offs = Vec::with_capacity(kids[ou].len());
        let mut cx = x;
        for &c in &kids[ou] {
            offs.push(cx);
            cx += b.total[c as usize];
        }
        for (&c, &cx) in kids[ou].iter().zip(&offs).rev() {
            stack.push((c, nn, depth.saturating_add(1), cx));
        }
    }
    // Subtree ends: a node's subtree ends where the next node at its depth or above starts.
    let n = f.name.len();
    let mut open: Vec<usize> = Vec::new();
    for k in 0..n {
        while let Some(&top) = open.last() {
            if f.depth[top] >= f.depth[k] {
                f.end[top] = k as u32;
                open.pop();
            } else {
                break;
            }
        }
        open.push(k);
    }
    for top in open {
        f.end[top] = n as u32;
    }
    let mut old_of = vec![0usize; n];
    for (o, &k) in new_of.iter().enumerate() {
        if let Some(slot) = old_of.get_mut(k as usize) {
            *slot = o;
        }
    }
    f.occ_off.reserve(n + 1);
    f.occ_off.push(0);
    for &o in &old_of {
        f.occ.extend_from_slice(&b.occ[o]);
        f.occ_off.push(f.occ.len() as u32);
    }
    f
}
