//! The differential flame graph: B's op tree, merged as the Flame tab merges it
//! ([`crate::view::flame`]), with A's weight beside B's on every frame, per step — so a reader sees
//! *where in the call tree* time moved, as Brendan Gregg's red/blue differential flame graphs and
//! speedscope's diff do for CPU profiles.
//!
//! - Frames are matched by their **name path** from the root (`ProfilerStep*;forward;aten::mm`),
//!   after A's names are put through the renames the op and kernel diff found
//!   ([`renames`]: `aten::cudnn_convolution` → `aten::miopen_convolution`, eager
//!   `gelu` + `mul` kernels → one `triton_poi_fused_gelu_mul`), so a backend change reads as a
//!   frame that changed, not one gone and one new.
//! - Weights are **per step**: each side's merged total ÷ its rank-steps (`Side::rank_steps`), so
//!   runs of 10 and of 50 steps, or of 1 and of 8 ranks, compare.
//! - Width is B's (a frame B no longer has is kept with width 0, and is listed by the page and
//!   written by `--folded` with B's weight 0); the colour is the change against A
//!   ([`Change`]).
//!
//! [`DiffFlame::folded`] writes every stack with its two self weights, `frame;frame;leaf A B`, one
//! line each: the format Brendan Gregg's `difffolded.pl` writes and `flamegraph.pl` reads to draw a
//! differential flame graph (A is "before", B "after"); weights are integer ns per step.

use super::Diff;
use crate::model::Trace;
use crate::view::flame::{Flame, Options, Scope, Weight};
use rustc_hash::FxHashMap;

/// How a frame changed from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Only in B.
    New,
    /// Only in A.
    Gone,
    Grew,
    Shrank,
    /// Within [`SAME_WITHIN`] of A's total.
    Same,
}

/// A relative change at most this large (either way) counts as the same: the palette's middle.
pub const SAME_WITHIN: f64 = 0.01;

/// The merged tree of both sides. Node 0 is the root (`all`); nodes are in pre-order, each
/// node's children sorted by B's total, heaviest first (then A's), so B's flame graph is the
/// left-heavy one the Flame tab draws.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiffFlame {
    pub weight: Weight,
    pub label: Vec<String>,
    pub parent: Vec<u32>,
    pub depth: Vec<u16>,
    /// Inclusive weight per step, ns.
    pub a_total: Vec<f64>,
    pub b_total: Vec<f64>,
    /// Self weight per step, ns.
    pub a_self: Vec<f64>,
    pub b_self: Vec<f64>,
    /// Left edge in B's left-heavy layout, ns per step from the root's left edge.
    pub x: Vec<f64>,
    /// One past the last node of the node's subtree.
    pub end: Vec<u32>,
    pub max_depth: u16,
}

/// A's op and kernel names mapped to B's, from the diff's matched rows: one-to-one renames, and
/// many-to-one merges (every A member to B's one name). A row whose B side is several names keeps
/// A's names (no single frame to map them to).
pub fn renames(d: &Diff) -> FxHashMap<String, String> {
    let mut m = FxHashMap::default();
    for r in d.ops.iter().chain(&d.kernels) {
        let Some(bn) = &r.b_name else { continue };
        if r.b_members.len() > 1 {
            continue;
        }
        let to = r.b_members.first().unwrap_or(bn);
        if r.a_members.is_empty() {
            m.insert(r.name.clone(), to.clone());
        } else {
            for a in &r.a_members {
                m.insert(a.clone(), to.clone());
            }
        }
    }
    m
}

/// One side: its traces (one per rank) and the rank-steps its weights divide by.
pub struct FlameSide<'a> {
    pub traces: Vec<&'a Trace>,
    pub rank_steps: f64,
    /// One step only: the `k`-th step (0-based, in time order: `view::steps::step_marks`) of each
    /// rank, its window the scope, weights per rank that has it. `None`: every step, per step.
    pub step: Option<usize>,
}

/// The window of step `k` of `t` (the `k`-th step slice in time order), if it has one.
pub fn step_window(t: &Trace, k: usize) -> Option<(i64, i64)> {
    crate::view::steps::step_marks(t)
        .get(k)
        .map(|m| (m.start, m.end))
}

#[derive(Default)]
struct Trie {
    label: Vec<String>,
    parent: Vec<u32>,
    self_ns: [Vec<f64>; 2],
    child: FxHashMap<(u32, String), u32>,
}

impl Trie {
    fn node(&mut self, parent: u32, label: &str) -> u32 {
        if let Some(&n) = self.child.get(&(parent, label.to_owned())) {
            return n;
        }
        let n = self.label.len() as u32;
        self.label.push(label.to_owned());
        self.parent.push(parent);
        self.self_ns[0].push(0.0);
        self.self_ns[1].push(0.0);
        self.child.insert((parent, label.to_owned()), n);
        n
    }

    /// Adds one trace's merged flame to side `s`, A's names through `rename`.
    fn add(
        &mut self,
        s: usize,
        t: &Trace,
        f: &Flame,
        per: f64,
        rename: &FxHashMap<String, String>,
    ) {
        let mut map = vec![0u32; f.len()];
        if let Some(r) = f.self_ns.first() {
            self.self_ns[s][0] += *r as f64 / per;
        }
        for n in 1..f.len() {
            let raw = f.label(t, n as u32);
            let label = if s == 0 {
                rename.get(raw).map_or(raw, String::as_str)
            } else {
                raw
            };
            let p = map[f.parent[n] as usize];
            let k = self.node(p, label);
            map[n] = k;
            self.self_ns[s][k as usize] += f.self_ns[n] as f64 / per;
        }
    }
}

impl DiffFlame {
    /// Merges both sides' op trees under `weight` (host wall time, or the device time each
    /// stack launched), A's names put through `rename` (see [`renames`]).
    pub fn build(
        a: &FlameSide,
        b: &FlameSide,
        weight: Weight,
        rename: &FxHashMap<String, String>,
    ) -> DiffFlame {
        let mut trie = Trie::default();
        trie.node(u32::MAX, "all");
        let opts = Options {
            weight,
            python: false,
        };
        for (s, side) in [a, b].into_iter().enumerate() {
            match side.step {
                None => {
                    let per = side.rank_steps.max(1.0);
                    for t in &side.traces {
                        let f = Flame::build(t, &Scope::default(), opts);
                        trie.add(s, t, &f, per, rename);
                    }
                }
                // One step of each rank: its window, weights per rank that has it.
                Some(k) => {
                    let ranges: Vec<(&Trace, (i64, i64))> = side
                        .traces
                        .iter()
                        .filter_map(|t| Some((*t, step_window(t, k)?)))
                        .collect();
                    let per = ranges.len().max(1) as f64;
                    for (t, r) in ranges {
                        let scope = Scope {
                            range: Some(r),
                            tracks: None,
                        };
                        let f = Flame::build(t, &scope, opts);
                        trie.add(s, t, &f, per, rename);
                    }
                }
            }
        }
        let n = trie.label.len();
        let mut total = [trie.self_ns[0].clone(), trie.self_ns[1].clone()];
        // Children are created after their parent: one pass from the end sums the subtrees.
        for k in (1..n).rev() {
            let p = trie.parent[k] as usize;
            for t in total.iter_mut() {
                t[p] += t[k];
            }
        }
        let mut kids: Vec<Vec<u32>> = vec![Vec::new(); n];
        for k in 1..n {
            kids[trie.parent[k] as usize].push(k as u32);
        }
        for c in kids.iter_mut() {
            crate::sort::by(c, |&x, &y| {
                let (x, y) = (x as usize, y as usize);
                total[1][y]
                    .total_cmp(&total[1][x])
                    .then(total[0][y].total_cmp(&total[0][x]))
                    .then(trie.label[x].cmp(&trie.label[y]))
            });
        }
        let mut out = DiffFlame {
            weight,
            ..DiffFlame::default()
        };
        // Pre-order walk: (trie node, new parent, depth, x).
        let mut stack: Vec<(u32, u32, u16, f64)> = vec![(0, u32::MAX, 0, 0.0)];
        let mut order: Vec<u32> = Vec::with_capacity(n);
        while let Some((k, parent, depth, x)) = stack.pop() {
            let me = out.label.len() as u32;
            let ku = k as usize;
            order.push(k);
            out.label.push(trie.label[ku].clone());
            out.parent.push(parent);
            out.depth.push(depth);
            out.a_total.push(total[0][ku]);
            out.b_total.push(total[1][ku]);
            out.a_self.push(trie.self_ns[0][ku]);
            out.b_self.push(trie.self_ns[1][ku]);
            out.x.push(x);
            out.end.push(0);
            out.max_depth = out.max_depth.max(depth);
            let mut cx = x;
            let mut pushes = Vec::with_capacity(kids[ku].len());
            for &c in &kids[ku] {
                pushes.push((c, me, depth.saturating_add(1), cx));
                cx += total[1][c as usize];
            }
            stack.extend(pushes.into_iter().rev());
        }
        // Subtree ends: a node's subtree runs until the next node at its depth or above.
        let len = out.label.len();
        let mut open: Vec<usize> = Vec::new();
        for k in 0..len {
            while let Some(&top) = open.last() {
                if out.depth[top] >= out.depth[k] {
                    out.end[top] = k as u32;
                    open.pop();
                } else {
                    break;
                }
            }
            open.push(k);
        }
        for top in open {
            out.end[top] = len as u32;
        }
        out
    }

    pub fn len(&self) -> usize {
        self.label.len()
    }

    pub fn is_empty(&self) -> bool {
        self.label.len() <= 1
    }

    /// How `node` changed, by its inclusive weight.
    pub fn change(&self, node: usize) -> Change {
        let (a, b) = (self.a_total[node], self.b_total[node]);
        if a <= 0.0 && b > 0.0 {
            Change::New
        } else if b <= 0.0 && a > 0.0 {
            Change::Gone
        } else if a <= 0.0 || ((b - a) / a).abs() <= SAME_WITHIN {
            Change::Same
        } else if b > a {
            Change::Grew
        } else {
            Change::Shrank
        }
    }

    /// The relative change of `node`'s inclusive weight, (B − A) ÷ A; `None` when A has none.
    pub fn rel(&self, node: usize) -> Option<f64> {
        let a = self.a_total[node];
        (a > 0.0).then(|| (self.b_total[node] - a) / a)
    }

    /// The frame's colour on the diverging scale ([`crate::view::palette::diff_heat`]): by
    /// its relative change, [`crate::view::palette::DIFF_NEW`] when only B has it, grey when it
    /// is within [`SAME_WITHIN`].
    pub fn color(&self, node: usize) -> String {
        use crate::view::palette::{diff_heat, DIFF_NEW, DIFF_SAME};
        match self.change(node) {
            Change::New => DIFF_NEW.to_owned(),
            Change::Same => DIFF_SAME.to_owned(),
            _ => diff_heat(self.rel(node).unwrap_or(0.0)),
        }
    }

    /// The frame under `frac` (0..1 across the shown root `root`, by B's widths) at `depth` rows
    /// below it.
    pub fn hit(&self, root: u32, frac: f64, depth: u16) -> Option<u32> {
        let r = root as usize;
        let (x0, w) = (*self.x.get(r)?, *self.b_total.get(r)?);
        if !(0.0..=1.0).contains(&frac) || w <= 0.0 {
            return None;
        }
        let at = x0 + frac * w;
        let mut n = r;
        for _ in 0..depth {
            let mut c = n + 1;
            let end = self.end[n] as usize;
            let mut found = None;
            while c < end {
                if at >= self.x[c] && at < self.x[c] + self.b_total[c] {
                    found = Some(c);
                    break;
                }
                c = self.end[c] as usize;
            }
            n = found?;
        }
        Some(n as u32)
    }

    /// Frames only A has, heaviest first (width 0 in B's graph, so the page lists them).
    pub fn gone(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (1..self.len())
            .filter(|&k| {
                self.change(k) == Change::Gone
                    && self.change(self.parent[k] as usize) != Change::Gone
            })
            .collect();
        crate::sort::by(&mut v, |&x, &y| self.a_total[y].total_cmp(&self.a_total[x]));
        v
    }

    /// The frame names from below the root down to `node`, `;`-joined (a `;` inside a name
    /// becomes `:`, so the line splits back into the same frames).
    pub fn stack(&self, node: usize) -> String {
        let mut names = Vec::new();
        let mut k = node;
        while k != 0 && k < self.len() {
            names.push(self.label[k].replace(';', ":").replace(['\n', '\r'], " "));
            k = self.parent[k] as usize;
        }
        names.reverse();
        names.join(";")
    }

    /// Every frame with self weight on either side, `stack A B` with integer ns per step, in
    /// pre-order (the format `difffolded.pl` writes and `flamegraph.pl` draws).
    pub fn folded(&self) -> String {
        let mut s = String::new();
        for k in 1..self.len() {
            let (a, b) = (self.a_self[k].round(), self.b_self[k].round());
            if a <= 0.0 && b <= 0.0 {
                continue;
            }
            s += &format!("{} {} {}\n", self.stack(k), a as i64, b as i64);
        }
        s
    }
}
