//! The flame graph of the op tree: every call stack of the host threads merged by name, the way
//! speedscope's "left heavy" view and Brendan Gregg's flame graphs aggregate — a frame's children
//! are merged by name and sorted by total time, heaviest left, and a frame is as wide as its
//! inclusive time.
//!
//! Stacks are the model's own nesting per thread (`Slices::parent`, what the timeline draws), over
//! the host-side events: `cpu_op`, `user_annotation`, the runtime/driver calls (`cudaLaunchKernel`
//! under the op that made it) and, when asked, `python_function` frames (`with_stack=True`); a
//! frame left out passes its children up to its nearest kept ancestor. `ProfilerStep#N` frames
//! merge into one `ProfilerStep*` frame, as torch's `key_averages` merges their rows, so the whole
//! trace reads as one step's shape.
//!
//! Two weights:
//! - [`Weight::Cpu`]: a frame's width is the wall time its slices spent on their threads, clipped
//!   to the scope's time range (a slice half inside a step counts its half). Self time is a
//!   frame's total minus its children's. Over a whole trace, the self times summed by name are
//!   torch's Self CPU (checked against `key_averages` in `tests/flame.rs`).
//! - [`Weight::Device`]: a frame's width is the device time (kernels, memcpy, memset) its ops
//!   launched: every GPU slice inside the scope (its own time, clipped to the range) hangs, as a
//!   leaf frame of its own name, under the stack of the runtime call that launched it
//!   (`GpuDetails::launch`, from CUPTI's correlation id). GPU work whose launch was not recorded
//!   sits under a `[launch not recorded]` frame. This is the view an ML engineer reads to see
//!   which module's ops the GPU time went to.
//!
//! The result is columnar, nodes in pre-order (a frame's subtree is `node..end[node]`), with each
//! frame's offset in the left-heavy layout, so a painter walks it once and a hit test descends it.

mod build;

use crate::model::{Ns, SliceKind, StrId, Trace};
use crate::view::search::Matcher;

/// Height of a frame row at the least, CSS px: room for an 11 px label.
pub const MIN_ROW_PX: f64 = 18.0;
/// At the most: a shallow graph fills the window with taller rows, up to where a row stops
/// reading as one bar.
pub const MAX_ROW_PX: f64 = 40.0;

/// The height of one row (CSS px) when `rows` rows are shown in `avail_px` of window height:
/// the rows share the height the window has below the graph's top, between [`MIN_ROW_PX`] and
/// [`MAX_ROW_PX`] (a deep graph scrolls at the least). The painter draws row `d` at
/// `d × row_px` and the hit test reads row `floor(y ÷ row_px)`: both use this one value.
pub fn row_px(rows: usize, avail_px: f64) -> f64 {
    if rows == 0 || avail_px.is_nan() {
        return MIN_ROW_PX;
    }
    (avail_px / rows as f64)
        .floor()
        .clamp(MIN_ROW_PX, MAX_ROW_PX)
}

/// The row (depth below the shown root) at `y` px from the graph's top, rows `row_px` high;
/// `None` above the graph.
pub fn row_at(y: f64, row_px: f64) -> Option<u16> {
    (y >= 0.0 && row_px > 0.0).then(|| (y / row_px).floor().min(f64::from(u16::MAX)) as u16)
}

/// What a frame's width measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Weight {
    /// Host wall time of the frame's slices.
    #[default]
    Cpu,
    /// Device time of the GPU work the frame's ops launched.
    Device,
}

/// What to merge: a time range and a set of tracks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    /// `[start_ns, end_ns)` in trace ns; `None` for the whole trace.
    pub range: Option<(Ns, Ns)>,
    /// Track indices; `None` for every track. With [`Weight::Cpu`] the host tracks among them
    /// give the stacks; with [`Weight::Device`] the GPU tracks among them give the work (all
    /// GPU tracks when none is listed), attributed to its launching stack wherever that ran.
    pub tracks: Option<Vec<usize>>,
}

/// How to build the graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub weight: Weight,
    /// Keep `python_function` frames.
    pub python: bool,
}

/// What a frame's label is, when it is not simply its slices' name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Special {
    /// Named by its slices (`name`).
    No,
    /// The root: the whole scope.
    Root,
    /// `ProfilerStep#N` frames, merged.
    Steps,
    /// GPU work whose launching call is not in the trace.
    NoLaunch,
}

/// The merged tree. Node 0 is the root; nodes are in pre-order and each node's children are
/// sorted by total, heaviest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flame {
    pub weight: Weight,
    /// Name of the node's slices (its first slice's, for merged steps).
    pub name: Vec<StrId>,
    pub special: Vec<Special>,
    /// Kind of the node's first slice (for colour).
    pub kind: Vec<SliceKind>,
    /// First slice merged into the node ([`crate::model::NONE`] for the root and `[launch not recorded]`).
    pub rep: Vec<u32>,
    pub parent: Vec<u32>,
    pub depth: Vec<u16>,
    /// Inclusive weight, ns.
    pub total: Vec<Ns>,
    /// Total minus the children's totals, ns (never below 0: siblings that overlap on a thread
    /// would otherwise make it so).
    pub self_ns: Vec<Ns>,
    /// Slices merged into the node.
    pub calls: Vec<u32>,
    /// Left edge in the left-heavy layout, ns from the root's left edge.
    pub x: Vec<Ns>,
    /// One past the last node of this node's subtree.
    pub end: Vec<u32>,
    pub max_depth: u16,
    occ_off: Vec<u32>,
    occ: Vec<u32>,
}

impl Flame {
    /// Merges the stacks of `scope` under `opts`. O(slices) plus a hash lookup per kept slice.
    pub fn build(t: &Trace, scope: &Scope, opts: Options) -> Flame {
        build::build(t, scope, opts)
    }

    pub fn len(&self) -> usize {
        self.name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.name.len() <= 1
    }

    /// The frame's label: its slices' name, the steps merged (`ProfilerStep*`, `train_step*`:
    /// `model::steps`), `all` for the root.
    pub fn label<'a>(&self, t: &'a Trace, node: u32) -> &'a str {
        let n = node as usize;
        match self.special.get(n) {
            Some(Special::No) => t.str(self.name[n]),
            Some(Special::Root) => "all",
            Some(Special::Steps) => t.step_rule().merged(),
            Some(Special::NoLaunch) => "[launch not recorded]",
            None => "",
        }
    }

    /// The slices merged into `node`, in slice order.
    pub fn occurrences(&self, node: u32) -> &[u32] {
        let n = node as usize;
        match (self.occ_off.get(n), self.occ_off.get(n + 1)) {
            (Some(&a), Some(&b)) => &self.occ[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The frame that holds most of `slices` (a module's call frames, an op's calls), the
    /// heavier on a tie: where "open in the flame graph" lands. A module called from two places
    /// is two frames; the one with most of its calls is the one shown. `None` when no frame
    /// holds any of them (Python frames left out, or none in this graph's scope).
    pub fn frame_of(&self, slices: &[u32]) -> Option<u32> {
        let mut want = slices.to_vec();
        want.sort_unstable();
        let mut best: Option<(usize, Ns, u32)> = None;
        for n in 1..self.len() as u32 {
            let hits = self
                .occurrences(n)
                .iter()
                .filter(|s| want.binary_search(s).is_ok())
                .count();
            let w = self.total[n as usize];
            if hits > 0 && best.is_none_or(|(h, bw, _)| (hits, w) > (h, bw)) {
                best = Some((hits, w, n));
            }
        }
        best.map(|(_, _, n)| n)
    }

    /// `node` and its ancestors, root first (the breadcrumb).
    pub fn path(&self, node: u32) -> Vec<u32> {
        let mut v = Vec::new();
        let mut n = node;
        while (n as usize) < self.len() {
            v.push(n);
            n = self.parent[n as usize];
        }
        v.reverse();
        v
    }

    /// The frame under `frac` (0..1 across the shown root `root`) at `depth` rows below it.
    pub fn hit(&self, root: u32, frac: f64, depth: u16) -> Option<u32> {
        let r = root as usize;
        let (x0, w) = (*self.x.get(r)?, *self.total.get(r)?);
        if !(0.0..=1.0).contains(&frac) || w <= 0 {
            return None;
        }
        let at = x0 as f64 + frac * w as f64;
        let mut n = r;
        for _ in 0..depth {
            // Children follow their parent in pre-order; step over each child's subtree.
            let mut c = n + 1;
            let end = self.end[n] as usize;
            let mut found = None;
            while c < end {
                if at >= self.x[c] as f64 && at < (self.x[c] + self.total[c]) as f64 {
                    found = Some(c);
                    break;
                }
                c = self.end[c] as usize;
            }
            n = found?;
        }
        Some(n as u32)
    }

    /// Which frames' labels `m` matches, and the weight they cover: the totals of the matching
    /// frames with no matching ancestor (nothing counted twice).
    pub fn matches(&self, t: &Trace, m: &Matcher) -> (Vec<bool>, Ns) {
        let mut hit = vec![false; self.len()];
        let mut covered = vec![false; self.len()];
        let mut sum = 0;
        for n in 1..self.len() {
            let p = self.parent[n] as usize;
            hit[n] = m.is_match(self.label(t, n as u32));
            covered[n] = covered[p] || hit[p];
            if hit[n] && !covered[n] {
                sum += self.total[n];
            }
        }
        (hit, sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_share_the_window_height_within_bounds_and_the_hit_test_reads_the_painted_row() {
        // 10 rows in 600 px: 40 px each (the cap); 20 rows: 30 px; 100 rows: the floor, 18 px.
        assert_eq!(row_px(10, 600.0), 40.0);
        assert_eq!(row_px(20, 600.0), 30.0);
        assert_eq!(row_px(100, 600.0), MIN_ROW_PX);
        assert_eq!(row_px(0, 600.0), MIN_ROW_PX);
        for rows in [1usize, 7, 20, 33, 240] {
            let r = row_px(rows, 700.0);
            for d in 0..rows as u16 {
                // The middle and both inner edges of painted row d hit row d.
                let top = f64::from(d) * r;
                for y in [top, top + r / 2.0, top + r - 0.01] {
                    assert_eq!(row_at(y, r), Some(d), "rows {rows} row px {r} y {y}");
                }
            }
        }
        assert_eq!(row_at(-1.0, 20.0), None);
    }
}
