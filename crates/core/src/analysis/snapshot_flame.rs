//! Live bytes by stack at the peak, as a flame (icicle) graph: the allocations live after the peak
//! action of a snapshot device's replay ([`super::snapshot::replay`], memory_viz's
//! `process_alloc_data`), merged along their allocation stacks, outermost frame at the top. A
//! node's width is the bytes live at the peak under it; children are ordered largest first
//! (speedscope's left-heavy view), so the widest path is the leftmost. Frames are the ones
//! memory_viz shows ([`super::snapshot::frame_shown`]); an allocation without one is under
//! `<no stack>`, and one seen only at its free (allocated before the trace, frees carrying the
//! free stack) under `<allocated before the trace>`, never under the frames that freed it.

use super::snapshot::{frame_text, frees_carry_alloc_stacks, replay, Element, Replay};
use super::snapshot_frames::shown_frames;
use crate::ingest::snapshot::Snapshot;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// One node: a frame at a depth, under its parent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FlameNode {
    pub label: String,
    /// 0 for the outermost frames (the root itself is not a node).
    pub depth: u32,
    /// Offset of the node's left edge, in bytes from the left of the graph.
    pub offset: u64,
    pub bytes: u64,
    /// Index of the parent node; `u32::MAX` at depth 0.
    pub parent: u32,
}

/// The graph: nodes in depth-first order (a node's subtree follows it), and the allocations.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct PeakFlame {
    pub nodes: Vec<FlameNode>,
    pub total_bytes: u64,
    pub depth: u32,
    /// Allocations live at the peak as `(address, size, deepest node)`, largest first.
    pub blocks: Vec<(u64, u64, u32)>,
}

impl PeakFlame {
    /// The allocations under `node` (its own and its descendants'), largest first.
    pub fn blocks_under(&self, node: u32) -> Vec<(u64, u64)> {
        // Depth-first order: the subtree is the run of nodes after `node` that are deeper.
        let Some(n) = self.nodes.get(node as usize) else {
            return Vec::new();
        };
        let end = self.nodes[node as usize + 1..]
            .iter()
            .position(|m| m.depth <= n.depth)
            .map_or(self.nodes.len(), |p| node as usize + 1 + p);
        self.blocks
            .iter()
            .filter(|b| (node..end as u32).contains(&b.2))
            .map(|b| (b.0, b.1))
            .collect()
    }

    /// The deepest node at `depth` covering byte offset `x`.
    pub fn hit(&self, depth: u32, x: u64) -> Option<u32> {
        self.nodes
            .iter()
            .position(|n| n.depth == depth && n.offset <= x && x < n.offset + n.bytes)
            .map(|i| i as u32)
    }
}

/// Trie node while building: label, bytes, children by label key.
struct Tmp {
    key: Key,
    bytes: u64,
    children: FxHashMap<Key, u32>,
    /// Allocations whose path ends here.
    own: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Root,
    Frame(u32),
    NoStack,
    BeforeTrace,
}

/// The flame graph of `device` at its peak of active memory (empty without a peak).
pub fn peak_flame(s: &Snapshot, device: i64) -> PeakFlame {
    peak_flame_in(s, device, &replay(s, device, false))
}

/// [`peak_flame`] from the device's allocation replay (`replay(s, device, false)`) made before.
pub fn peak_flame_in(s: &Snapshot, device: i64, r: &Replay) -> PeakFlame {
    let Some(pos) = r.peak_pos else {
        return PeakFlame::default();
    };
    let idx = r.series[pos].0;
    let trace_empty = s.trace(device).is_none_or(|t| t.is_empty());
    let alloc_stacks = s
        .trace(device)
        .is_some_and(|t| frees_carry_alloc_stacks(t, &r.elements));
    let live: Vec<&Element> = r
        .elements
        .iter()
        .filter(|e| {
            trace_empty || (e.start.is_none_or(|a| a <= idx) && e.end.is_none_or(|b| b > idx))
        })
        .collect();
    let mut tmp = vec![Tmp {
        key: Key::Root,
        bytes: 0,
        children: FxHashMap::default(),
        own: Vec::new(),
    }];
    let shown = shown_frames(s);
    let mut path: Vec<Key> = Vec::new();
    for (k, e) in live.iter().enumerate() {
        path.clear();
        if e.start.is_none() && e.end.is_some() && !alloc_stacks {
            path.push(Key::BeforeTrace);
        } else {
            // Torch records stacks innermost first; the graph reads outermost first.
            path.extend(
                s.stacks
                    .get(e.stack)
                    .iter()
                    .rev()
                    .filter(|&&f| shown.get(f as usize).copied().unwrap_or(false))
                    .map(|&f| Key::Frame(f)),
            );
            if path.is_empty() {
                path.push(Key::NoStack);
            }
        }
        let mut at = 0usize;
        tmp[0].bytes = tmp[0].bytes.saturating_add(e.size);
        for &key in &path {
            let next = match tmp[at].children.get(&key) {
                Some(&c) => c as usize,
                None => {
                    tmp.push(Tmp {
                        key,
                        bytes: 0,
                        children: FxHashMap::default(),
                        own: Vec::new(),
                    });
                    let c = tmp.len() - 1;
                    tmp[at].children.insert(key, c as u32);
                    c
                }
            };
            tmp[next].bytes = tmp[next].bytes.saturating_add(e.size);
            at = next;
        }
        tmp[at].own.push(k);
    }
    // Depth-first, children largest first (ties by label), offsets accumulated left to right.
    let label = |k: Key| match k {
        Key::Frame(f) => frame_text(s, f),
        Key::NoStack => "<no stack>".to_owned(),
        Key::BeforeTrace => "<allocated before the trace>".to_owned(),
        Key::Root => String::new(),
    };
    let mut out = PeakFlame {
        total_bytes: tmp[0].bytes,
        ..PeakFlame::default()
    };
    let order_children = |n: &Tmp| {
        let mut c: Vec<(u64, String, usize)> = n
            .children
            .values()
            .map(|&c| {
                (
                    tmp[c as usize].bytes,
                    label(tmp[c as usize].key),
                    c as usize,
                )
            })
            .collect();
        crate::sort::by(&mut c, |a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        c
    };
    let mut pending: Vec<(usize, String, u32, u64, u32)> = Vec::new();
    let mut x = 0u64;
    for (bytes, l, c) in order_children(&tmp[0]) {
        pending.push((c, l, 0, x, u32::MAX));
        x += bytes;
    }
    pending.reverse();
    let mut leaf_of: Vec<(usize, u32)> = Vec::new();
    while let Some((t, l, depth, offset, parent)) = pending.pop() {
        let id = out.nodes.len() as u32;
        out.nodes.push(FlameNode {
            label: l,
            depth,
            offset,
            bytes: tmp[t].bytes,
            parent,
        });
        out.depth = out.depth.max(depth + 1);
        for &k in &tmp[t].own {
            leaf_of.push((k, id));
        }
        let mut x = offset;
        let mut kids = Vec::new();
        for (bytes, l, c) in order_children(&tmp[t]) {
            kids.push((c, l, depth + 1, x, id));
            x += bytes;
        }
        pending.extend(kids.into_iter().rev());
    }
    out.blocks = leaf_of
        .into_iter()
        .map(|(k, n)| (live[k].addr, live[k].size, n))
        .collect();
    crate::sort::by(&mut out.blocks, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}
