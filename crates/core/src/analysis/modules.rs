//! The module view: the `nn.Module` tree with host and GPU time, forward and backward.
//!
//! With `with_stack=True` torch writes a `python_function` frame `nn.Module: Class_N` around each
//! module call (N numbers the instances of a class in order of first call, so it is the same
//! module in every step). A module's *path* is the chain of module frames from the outermost
//! (`TinyNet_0/Block_1/Attention_1/Linear_7`); every call of a path, in every step, merges into
//! one row — the TensorBoard plugin's module view (`module_op.py`: rows per module, occurrences,
//! host and device duration, self and total), then past it:
//!
//! - **host** = the module frames' durations; **host self** = minus its child modules' frames.
//! - **GPU** (forward) = kernels, memcpy and memset whose launching call lies under the module's
//!   frames (*self*: not under a child module; *total*: its subtree).
//! - **backward**: through sequence numbers ([`super::autograd`]) each backward node belongs to the
//!   module of the forward op it differentiates; its `evaluate_function` host time and the GPU
//!   time of what it launched count as that module's backward (self and total as above).
//! - **occupancy**: the duration-weighted mean of `est. achieved occupancy %` over the module's
//!   kernels that carry it (the plugin's kernel-view weighting), forward and backward together.
//!
//! Checked against the module structure and the autograd graph built by construction in
//! `scripts/gen_modules.py` (torch 2.15, CPU) and against the kernels of the H100 recording
//! `torch-2.11-cuda13-h100/gpu_mlp` (`tests/modules.rs`).

use super::autograd::Autograd;
use super::scope::Mask;
use super::source::MODULE_PREFIX;
use crate::model::{Ns, SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// One module path, merged over all its calls.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModuleRow {
    /// `TinyNet_0/Block_1/Linear_7`.
    pub path: String,
    /// `Linear_7`.
    pub name: String,
    /// `Linear`.
    pub class: String,
    /// Row of the enclosing module, or none for a root.
    pub parent: Option<u32>,
    pub depth: u16,
    pub calls: u64,
    pub host_ns: Ns,
    pub host_self_ns: Ns,
    /// Top-level ops run directly in the module (not in a child module).
    pub ops: u64,
    pub gpu_ns: Ns,
    pub gpu_self_ns: Ns,
    pub backward_host_ns: Ns,
    pub backward_host_self_ns: Ns,
    pub backward_gpu_ns: Ns,
    pub backward_gpu_self_ns: Ns,
    /// Kernels, memcpy and memset of the subtree, forward and backward.
    pub kernels: u64,
    /// Duration-weighted mean `est. achieved occupancy %` of the subtree's kernels that have one.
    pub occupancy_pct: Option<f64>,
    /// The module's call frames (slice indices), for "show in timeline".
    #[serde(skip)]
    pub frames: Vec<u32>,
}

/// The tree, rows in depth-first order (children in order of first call).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct ModuleTable {
    pub rows: Vec<ModuleRow>,
    /// GPU time launched outside any module frame (optimizer, loss, …), forward and backward.
    pub outside_gpu_ns: Ns,
    /// GPU time of all device work, for the share column.
    pub total_gpu_ns: Ns,
}

struct Acc {
    occ_weighted: f64,
    occ_dur: f64,
}

/// Which module path each slice runs in.
#[derive(Debug, Clone, Default)]
pub struct ModuleIndex {
    /// Per slice: the path id of the innermost module frame enclosing it (itself included),
    /// [`NONE`] outside any module.
    pub module_of: Vec<u32>,
    /// Per path id: the enclosing path, [`NONE`] for a root.
    pub parent: Vec<u32>,
    /// Per path id: its leaf frame's name (`nn.Module: Linear_3`).
    pub name: Vec<StrId>,
}

impl ModuleIndex {
    /// `TinyNet_0/Block_1/Linear_7`.
    pub fn path(&self, t: &Trace, k: u32) -> String {
        let mut parts: Vec<&str> = Vec::new();
        let mut x = k;
        while x != NONE && (x as usize) < self.parent.len() && parts.len() < 10_000 {
            parts.push(
                t.str(self.name[x as usize])
                    .trim_start_matches(MODULE_PREFIX),
            );
            x = self.parent[x as usize];
        }
        parts.reverse();
        parts.join("/")
    }

    /// The module a slice's work belongs to: the forward op's for anything in backward (and
    /// for a kernel, its launch's), else the slice's own.
    pub fn owner(&self, t: &Trace, ag: &Autograd, i: usize) -> u32 {
        let host = t.gpu.row(i as u32).map_or(i as u32, |r| t.gpu.launch[r]);
        if host == NONE {
            return NONE;
        }
        let a = ag.anchor.get(host as usize);
        let at = if a != NONE { a } else { host };
        self.module_of.get(at as usize).copied().unwrap_or(NONE)
    }
}

/// Path ids in order of first call, O(n) plus a hash per module frame.
pub fn module_index(t: &Trace) -> ModuleIndex {
    let s = &t.slices;
    let n = s.len();
    let mut ids: FxHashMap<(u32, StrId), u32> = FxHashMap::default();
    let mut idx = ModuleIndex {
        module_of: vec![NONE; n],
        ..Default::default()
    };
    let mut is_module: FxHashMap<StrId, bool> = FxHashMap::default();
    for i in 0..n {
        let p = s.parent[i];
        let up = if p == NONE {
            NONE
        } else {
            idx.module_of[p as usize]
        };
        let name = s.name[i];
        let frame = s.kind[i] == SliceKind::PythonFunction
            && *is_module
                .entry(name)
                .or_insert_with(|| t.str(name).starts_with(MODULE_PREFIX));
        idx.module_of[i] = if frame {
            let next = idx.parent.len() as u32;
            *ids.entry((up, name)).or_insert_with(|| {
                idx.parent.push(up);
                idx.name.push(name);
                next
            })
        } else {
            up
        };
    }
    idx
}

/// Builds the table. O(n) over slices.
pub fn module_table(t: &Trace, ag: &Autograd) -> ModuleTable {
    module_table_masked(t, ag, Mask::ALL)
}

/// [`module_table`] over the slices `keep` passes (a scope, [`super::scope`]): module frames and
/// backward nodes by their start, GPU work by its launch; the module paths are the trace's, and
/// rows with nothing in the scope are dropped ([`ModuleTable::pruned`]).
pub fn module_table_masked(t: &Trace, ag: &Autograd, keep: Mask<'_>) -> ModuleTable {
    let s = &t.slices;
    let n = s.len();
    let mut table = ModuleTable::default();
    let ModuleIndex {
        module_of,
        parent: parent_of,
        name: name_of,
    } = module_index(t);
    let m = parent_of.len();
    if m == 0 {
        table.total_gpu_ns = (0..t.gpu.slice.len())
            .filter(|&r| keep.has(t.gpu.slice[r] as usize))
            .map(|r| s.dur[t.gpu.slice[r] as usize])
            .sum();
        table.outside_gpu_ns = table.total_gpu_ns;
        return table;
    }
    let mut rows: Vec<ModuleRow> = (0..m)
        .map(|k| {
            let leaf = t.str(name_of[k]).trim_start_matches(MODULE_PREFIX);
            ModuleRow {
                path: String::new(),
                name: leaf.to_owned(),
                class: leaf
                    .rsplit_once('_')
                    .filter(|(_, n)| n.bytes().all(|b| b.is_ascii_digit()))
                    .map_or(leaf, |(c, _)| c)
                    .to_owned(),
                parent: None,
                depth: 0,
                calls: 0,
                host_ns: 0,
                host_self_ns: 0,
                ops: 0,
                gpu_ns: 0,
                gpu_self_ns: 0,
                backward_host_ns: 0,
                backward_host_self_ns: 0,
                backward_gpu_ns: 0,
                backward_gpu_self_ns: 0,
                kernels: 0,
                occupancy_pct: None,
                frames: Vec::new(),
            }
        })
        .collect();
    let mut acc: Vec<Acc> = (0..m)
        .map(|_| Acc {
            occ_weighted: 0.0,
            occ_dur: 0.0,
        })
        .collect();
    let ancestors = |k: u32| {
        std::iter::successors(Some(k), |&x| {
            let p = parent_of[x as usize];
            (p != NONE).then_some(p)
        })
    };
    let op_above = |i: usize| {
        let mut p = s.parent[i];
        while p != NONE {
            if s.kind[p as usize] == SliceKind::CpuOp {
                return true;
            }
            p = s.parent[p as usize];
        }
        false
    };
    for i in 0..n {
        if !keep.has(i) {
            continue;
        }
        let k = module_of[i];
        match s.kind[i] {
            SliceKind::PythonFunction if k != NONE && s.name[i] == name_of[k as usize] => {
                // A module frame (the path's own leaf name, so not a frame inside it).
                let parent_frame = s.parent[i];
                let own = parent_frame == NONE || module_of[parent_frame as usize] != k;
                if !own {
                    continue;
                }
                let r = &mut rows[k as usize];
                r.calls += 1;
                r.host_ns += s.dur[i];
                r.host_self_ns += s.dur[i];
                r.frames.push(i as u32);
                let up = parent_of[k as usize];
                if up != NONE {
                    rows[up as usize].host_self_ns -= s.dur[i];
                }
            }
            SliceKind::CpuOp if !op_above(i) => {
                let fwd = ag.anchor.get(i);
                if fwd == NONE {
                    if k != NONE {
                        rows[k as usize].ops += 1;
                    }
                    continue;
                }
                let owner = module_of[fwd as usize];
                if owner == NONE {
                    continue;
                }
                rows[owner as usize].backward_host_self_ns += s.dur[i];
                for a in ancestors(owner) {
                    rows[a as usize].backward_host_ns += s.dur[i];
                }
            }
            _ => {}
        }
    }
    let g = &t.gpu;
    for r in 0..g.slice.len() {
        let i = g.slice[r] as usize;
        if !keep.has(i) {
            continue;
        }
        let d = s.dur[i];
        table.total_gpu_ns += d;
        let l = g.launch[r];
        if l == NONE {
            table.outside_gpu_ns += d;
            continue;
        }
        let fwd = ag.anchor.get(l as usize);
        let backward = fwd != NONE;
        let owner = if backward {
            module_of[fwd as usize]
        } else {
            module_of[l as usize]
        };
        if owner == NONE {
            table.outside_gpu_ns += d;
            continue;
        }
        if backward {
            rows[owner as usize].backward_gpu_self_ns += d;
        } else {
            rows[owner as usize].gpu_self_ns += d;
        }
        let occ = g.occupancy_pct[r];
        for a in ancestors(owner) {
            let row = &mut rows[a as usize];
            row.kernels += 1;
            if backward {
                row.backward_gpu_ns += d;
            } else {
                row.gpu_ns += d;
            }
            if s.kind[i] == SliceKind::Kernel && occ.is_finite() && occ >= 0.0 {
                acc[a as usize].occ_weighted += occ as f64 * d as f64;
                acc[a as usize].occ_dur += d as f64;
            }
        }
    }
    for (row, a) in rows.iter_mut().zip(&acc) {
        if a.occ_dur > 0.0 {
            row.occupancy_pct = Some(a.occ_weighted / a.occ_dur);
        }
    }
    // Depth-first order, children by first call (path ids are in first-call order).
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); m];
    let mut roots = Vec::new();
    for k in 0..m as u32 {
        match parent_of[k as usize] {
            NONE => roots.push(k),
            p => children[p as usize].push(k),
        }
    }
    let mut order: Vec<(u32, u16)> = Vec::with_capacity(m);
    let mut stack: Vec<(u32, u16)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((k, d)) = stack.pop() {
        order.push((k, d));
        stack.extend(children[k as usize].iter().rev().map(|&c| (c, d + 1)));
    }
    let mut pos = vec![NONE; m];
    for (p, &(k, _)) in order.iter().enumerate() {
        pos[k as usize] = p as u32;
    }
    let mut paths: Vec<String> = vec![String::new(); m];
    let mut slots: Vec<Option<ModuleRow>> = rows.into_iter().map(Some).collect();
    for &(k, d) in &order {
        let Some(mut row) = slots[k as usize].take() else {
            continue;
        };
        let up = parent_of[k as usize];
        row.path = if up == NONE {
            row.name.clone()
        } else {
            format!("{}/{}", paths[up as usize], row.name)
        };
        paths[k as usize] = row.path.clone();
        row.parent = (up != NONE).then(|| pos[up as usize]);
        row.depth = d;
        table.rows.push(row);
    }
    if keep.0.is_some() {
        table = table.pruned();
    }
    table
}

impl ModuleTable {
    /// Without the rows that have nothing (no call, no backward, no GPU work) and no descendant
    /// that has something: a scope's tree shows the modules that ran in it.
    pub fn pruned(mut self) -> ModuleTable {
        let n = self.rows.len();
        let mut keep = vec![false; n];
        // Rows are in depth-first order: a row's descendants come after it.
        for k in (0..n).rev() {
            let r = &self.rows[k];
            if r.calls > 0 || r.backward_host_ns > 0 || r.kernels > 0 {
                keep[k] = true;
            }
            if keep[k] {
                if let Some(p) = r.parent {
                    keep[p as usize] = true;
                }
            }
        }
        let mut pos = vec![NONE; n];
        let mut next = 0u32;
        for k in 0..n {
            if keep[k] {
                pos[k] = next;
                next += 1;
            }
        }
        let rows = std::mem::take(&mut self.rows);
        self.rows = rows
            .into_iter()
            .enumerate()
            .filter(|(k, _)| keep[*k])
            .map(|(_, mut r)| {
                r.parent = r.parent.map(|p| pos[p as usize]);
                r
            })
            .collect();
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::analysis::autograd::autograd;
    use crate::view::testutil::trace_json;

    /// Two steps of Net_0 { Linear_0, Block_0 { Linear_1 } }: a forward kernel per Linear, a
    /// backward kernel for Linear_1's op, one optimizer kernel outside any module.
    #[test]
    fn modules_merge_across_steps_with_forward_and_backward_time() {
        let mut ev = Vec::new();
        for (step, base) in [(0, 0), (1, 10_000)] {
            let c = step * 10;
            let seq = 100 + step * 10;
            ev.push(format!(r#"{{"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":{},"dur":1000}}"#, base));
            ev.push(format!(r#"{{"ph":"X","cat":"python_function","name":"nn.Module: Linear_0","pid":1,"tid":1,"ts":{},"dur":200}}"#, base + 10));
            ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":{},"dur":100,"args":{{"Sequence number":{seq},"Fwd thread id":0}}}}"#, base + 20));
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{}}}}}"#, base + 30, c + 1));
            ev.push(format!(r#"{{"ph":"X","cat":"python_function","name":"nn.Module: Block_0","pid":1,"tid":1,"ts":{},"dur":500}}"#, base + 300));
            ev.push(format!(r#"{{"ph":"X","cat":"python_function","name":"nn.Module: Linear_1","pid":1,"tid":1,"ts":{},"dur":300}}"#, base + 310));
            ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":{},"dur":100,"args":{{"Sequence number":{},"Fwd thread id":0}}}}"#, base + 320, seq + 1));
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{}}}}}"#, base + 330, c + 2));
            ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddmmBackward0","pid":1,"tid":1,"ts":{},"dur":400,"args":{{"Sequence number":{},"Fwd thread id":1}}}}"#, base + 2000, seq + 1));
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{}}}}}"#, base + 2010, c + 3));
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{}}}}}"#, base + 3000, c + 4));
            for (k, (ts, dur, occ)) in [
                (100, 40, 50),
                (400, 60, 100),
                (2100, 80, 25),
                (3100, 10, 10),
            ]
            .iter()
            .enumerate()
            {
                ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"k{k}","pid":0,"tid":7,"ts":{},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{},"est. achieved occupancy %":{occ}}}}}"#, base + ts, c + k as i64 + 1));
            }
        }
        let t = trace_json(&ev.join(","));
        let tab = module_table(&t, &autograd(&t));
        let paths: Vec<&str> = tab.rows.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "Net_0",
                "Net_0/Linear_0",
                "Net_0/Block_0",
                "Net_0/Block_0/Linear_1"
            ]
        );
        let row = |p: &str| tab.rows.iter().find(|r| r.path == p).unwrap();
        let net = row("Net_0");
        assert_eq!(
            (net.calls, net.host_ns, net.host_self_ns),
            (2, 2_000_000, 600_000)
        );
        assert_eq!((net.gpu_ns, net.gpu_self_ns), (200_000, 0));
        assert_eq!(
            (net.backward_gpu_ns, net.backward_host_ns),
            (160_000, 800_000)
        );
        assert_eq!(net.kernels, 6);
        let l1 = row("Net_0/Block_0/Linear_1");
        assert_eq!(
            (l1.gpu_self_ns, l1.backward_gpu_self_ns, l1.ops),
            (120_000, 160_000, 2)
        );
        assert_eq!(l1.class, "Linear");
        assert_eq!(l1.parent, Some(2));
        assert_eq!(l1.depth, 2);
        assert_eq!(l1.frames.len(), 2);
        // (60*100 + 80*25) / 140 per step.
        let occ = l1.occupancy_pct.unwrap();
        assert!((occ - 8000.0 / 140.0).abs() < 1e-9, "{occ}");
        let b = row("Net_0/Block_0");
        assert_eq!((b.host_ns, b.host_self_ns, b.ops), (1_000_000, 400_000, 0));
        assert_eq!(tab.outside_gpu_ns, 20_000);
        assert_eq!(tab.total_gpu_ns, 2 * 190_000);
    }
}
