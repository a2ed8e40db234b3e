//! The table built from the tree: one row per name (torch's `key_averages()` rows), its totals,
//! its sort keys. The tree and the rules that shape it are in the parent module.

use super::{op_tree, OpTree};
use crate::analysis::flops::{slice_flops, torch_shape_text, FlopsSource};
use crate::analysis::scope::Mask;
use crate::model::{Ns, SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// One row of the table. Times in ns, memory in bytes.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct OpRow {
    pub name: String,
    /// `Input Dims` in torch's text form, when grouping by input shape.
    pub input_shapes: Option<String>,
    /// Kernel/memcpy/memset rows (0 CPU time) vs CPU-side rows.
    pub on_device: bool,
    pub is_user_annotation: bool,
    pub calls: u64,
    pub self_cpu_ns: Ns,
    pub cpu_total_ns: Ns,
    pub self_device_ns: Ns,
    pub device_total_ns: Ns,
    pub self_cpu_mem_bytes: i64,
    pub cpu_mem_bytes: i64,
    pub self_device_mem_bytes: i64,
    pub device_mem_bytes: i64,
    pub flops: f64,
    pub flops_source: FlopsSource,
    /// How close its calls came to the roofline ([`super::roofline`]), filled in by the analysis
    /// that has the roofline; `None` without a known family, device time or device.
    pub pct_of_roof: Option<f64>,
}

impl OpRow {
    pub fn cpu_avg_ns(&self) -> f64 {
        self.cpu_total_ns as f64 / self.calls.max(1) as f64
    }
    pub fn device_avg_ns(&self) -> f64 {
        self.device_total_ns as f64 / self.calls.max(1) as f64
    }
}

/// The whole table plus the totals the % columns divide by.
#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct OpTable {
    pub rows: Vec<OpRow>,
    /// Sum of Self CPU over all rows (the table's "Self CPU time total").
    pub self_cpu_total_ns: Ns,
    /// Sum of Self device over the device rows, GPU annotations left out (torch's footer).
    pub self_device_total_ns: Ns,
    pub grouped_by_input_shape: bool,
}

/// Columns the table can be sorted by (torch's `sort_by` keys plus ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    SelfCpu,
    CpuTotal,
    CpuAvg,
    SelfDevice,
    DeviceTotal,
    DeviceAvg,
    SelfCpuMem,
    CpuMem,
    SelfDeviceMem,
    DeviceMem,
    Calls,
    Flops,
    Name,
}

impl SortKey {
    /// Accepts torch's names (`self_cpu_time_total`, `cuda_time_total`, `count`…) and ours.
    pub fn parse(s: &str) -> Option<SortKey> {
        Some(match s {
            "self_cpu" | "self_cpu_time_total" | "self_cpu_us" => SortKey::SelfCpu,
            "cpu_total" | "cpu_time_total" | "cpu_total_us" => SortKey::CpuTotal,
            "cpu_avg" | "cpu_time" => SortKey::CpuAvg,
            "self_device"
            | "self_cuda_time_total"
            | "self_device_time_total"
            | "self_device_us" => SortKey::SelfDevice,
            "device_total" | "cuda_time_total" | "device_time_total" | "device_total_us" => {
                SortKey::DeviceTotal
            }
            "device_avg" | "cuda_time" | "device_time" => SortKey::DeviceAvg,
            "self_cpu_memory_usage" | "self_cpu_mem" => SortKey::SelfCpuMem,
            "cpu_memory_usage" | "cpu_mem" => SortKey::CpuMem,
            "self_cuda_memory_usage" | "self_device_memory_usage" | "self_device_mem" => {
                SortKey::SelfDeviceMem
            }
            "cuda_memory_usage" | "device_memory_usage" | "device_mem" => SortKey::DeviceMem,
            "count" | "calls" => SortKey::Calls,
            "flops" => SortKey::Flops,
            "name" => SortKey::Name,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct OpOptions {
    pub group_by_input_shape: bool,
}

/// Builds the table, sorted by Self CPU descending (then device total, then name).
pub fn op_table(t: &Trace, opts: OpOptions) -> OpTable {
    op_table_indexed(t, opts).0
}

/// The table, the tree it was built from, and each tree entry's row in the table ([`NONE`] for
/// entries that form no row: `python_function` frames). The A/B diff walks the tree to match ops
/// renamed between two traces through their parents (`report::diff`).
pub fn op_table_indexed(t: &Trace, opts: OpOptions) -> (OpTable, OpTree, Vec<u32>) {
    op_table_masked(t, opts, Mask::ALL, &|_| true)
}

/// [`op_table_indexed`] over the slices `keep` passes and the `[memory]` events whose time
/// `mem_in` passes (a scope, [`super::scope`]): each kept event with its own figures, as in the
/// whole table (self time net of all its children, the device time of all it launched).
pub fn op_table_masked(
    t: &Trace,
    opts: OpOptions,
    keep: Mask<'_>,
    mem_in: &dyn Fn(Ns) -> bool,
) -> (OpTable, OpTree, Vec<u32>) {
    let tree = op_tree(t);
    let mut row_of_entry = vec![NONE; tree.slice.len()];
    let s = &t.slices;
    // Key: (name id or step marker, input dims, on_device, user annotation).
    let mut index: FxHashMap<(StrId, bool, u32, bool, bool), usize> = FxHashMap::default();
    // Input Dims text -> torch's shape text, deduplicated (TensorLists collapse to `[]`).
    let mut shape_of: FxHashMap<StrId, u32> = FxHashMap::default();
    let mut shape_ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut shape_texts: Vec<String> = Vec::new();
    let mut rows: Vec<OpRow> = Vec::new();
    let name_key = |id: StrId| -> (StrId, bool) {
        let n = t.str(id);
        if n.starts_with("ProfilerStep#") {
            (StrId::EMPTY, true)
        } else {
            (id, false)
        }
    };
    let mut flops_cache: FxHashMap<(StrId, StrId), (f64, FlopsSource)> = FxHashMap::default();
    for (e, row_of) in row_of_entry.iter_mut().enumerate() {
        let i = tree.slice[e] as usize;
        if s.kind[i] == SliceKind::PythonFunction || !keep.has(i) {
            continue;
        }
        let (nid, step) = name_key(s.name[i]);
        let dims = if opts.group_by_input_shape {
            *shape_of.entry(s.input_dims[i]).or_insert_with(|| {
                let d = t.str(s.input_dims[i]);
                let text = if d.is_empty() {
                    "[]".to_owned()
                } else {
                    torch_shape_text(d)
                };
                let next = shape_texts.len() as u32;
                *shape_ids.entry(text.clone()).or_insert_with(|| {
                    shape_texts.push(text);
                    next
                })
            })
        } else {
            u32::MAX
        };
        let ua = s.kind[i] == SliceKind::UserAnnotation;
        let key = (nid, step, dims, false, ua);
        let flops = if t.str(s.name[i]) == "aten::conv2d" || !t.flops.slice.is_empty() {
            slice_flops(t, i)
        } else {
            *flops_cache
                .entry((s.name[i], s.input_dims[i]))
                .or_insert_with(|| slice_flops(t, i))
        };
        let r = *index.entry(key).or_insert_with(|| {
            let mut row = new_row(t, i, step, false, ua);
            if opts.group_by_input_shape {
                row.input_shapes = shape_texts.get(dims as usize).cloned();
            }
            rows.push(row);
            rows.len() - 1
        });
        *row_of = r as u32;
        let row = &mut rows[r];
        row.calls += 1;
        row.self_cpu_ns += tree.self_cpu[e];
        row.cpu_total_ns += s.dur[i];
        row.self_device_ns += tree.self_device[e];
        row.device_total_ns += tree.device_total[e];
        let (cpu_mem, device_mem, self_cpu_mem, self_device_mem) = tree.memory(e);
        row.cpu_mem_bytes += cpu_mem;
        row.device_mem_bytes += device_mem;
        row.self_cpu_mem_bytes += self_cpu_mem;
        row.self_device_mem_bytes += self_device_mem;
        if flops.1 != FlopsSource::None {
            row.flops += flops.0;
            row.flops_source = row.flops_source.max(flops.1);
        }
    }
    let (n_loose, cpu_b, dev_b) = if keep.0.is_none() {
        tree.loose_memory
    } else {
        let m = &t.memory;
        let mut l = (0u64, 0i64, 0i64);
        for &j in &tree.loose_events {
            let j = j as usize;
            if mem_in(m.ts[j]) {
                l.0 += 1;
                if m.device_type[j] == 0 {
                    l.1 += m.bytes[j];
                } else {
                    l.2 += m.bytes[j];
                }
            }
        }
        l
    };
    if n_loose > 0 {
        let row = OpRow {
            name: "[memory]".to_owned(),
            input_shapes: opts.group_by_input_shape.then(|| "[]".to_owned()),
            on_device: false,
            is_user_annotation: false,
            calls: n_loose,
            self_cpu_ns: 0,
            cpu_total_ns: 0,
            self_device_ns: 0,
            device_total_ns: 0,
            self_cpu_mem_bytes: cpu_b,
            cpu_mem_bytes: cpu_b,
            self_device_mem_bytes: dev_b,
            device_mem_bytes: dev_b,
            flops: 0.0,
            flops_source: FlopsSource::None,
            pct_of_roof: None,
        };
        rows.push(row);
    }
    // Device rows: kernels, memcpy and memset, and the GPU side of user annotations
    // (`gpu_user_annotation`, a record_function's device span), as in key_averages; on the
    // device, `ProfilerStep#N` merges too.
    for i in 0..s.len() {
        let ua = s.kind[i] == SliceKind::GpuAnnotation;
        if !(ua || s.kind[i].is_gpu_work()) || !keep.has(i) {
            continue;
        }
        let (nid, step) = if ua {
            name_key(s.name[i])
        } else {
            (s.name[i], false)
        };
        let r = *index
            .entry((nid, step, u32::MAX, true, ua))
            .or_insert_with(|| {
                let mut row = new_row(t, i, step, true, ua);
                if ua && opts.group_by_input_shape {
                    row.input_shapes = Some("[]".to_owned());
                }
                rows.push(row);
                rows.len() - 1
            });
        let row = &mut rows[r];
        row.calls += 1;
        row.self_device_ns += s.dur[i];
        row.device_total_ns += s.dur[i];
    }
    let mut table = OpTable {
        self_cpu_total_ns: rows.iter().map(|r| r.self_cpu_ns).sum(),
        // torch's "Self CUDA time total": device rows only (CPU rows repeat their kernels'
        // time) and not the GPU annotations, which span the kernels they enclose.
        self_device_total_ns: rows
            .iter()
            .filter(|r| r.on_device && !r.is_user_annotation)
            .map(|r| r.self_device_ns)
            .sum(),
        rows,
        grouped_by_input_shape: opts.group_by_input_shape,
    };
    // Sorted through an index so the entries' rows can follow.
    let mut idx: Vec<usize> = (0..table.rows.len()).collect();
    crate::sort::by(&mut idx, |&x, &y| {
        row_order(SortKey::SelfCpu, &table.rows[x], &table.rows[y])
    });
    let mut new_pos = vec![NONE; idx.len()];
    for (p, &o) in idx.iter().enumerate() {
        new_pos[o] = p as u32;
    }
    let mut old: Vec<Option<OpRow>> = std::mem::take(&mut table.rows)
        .into_iter()
        .map(Some)
        .collect();
    table.rows = idx.iter().filter_map(|&o| old[o].take()).collect();
    for r in row_of_entry.iter_mut().filter(|r| **r != NONE) {
        *r = new_pos[*r as usize];
    }
    (table, tree, row_of_entry)
}

fn new_row(t: &Trace, i: usize, step: bool, dev: bool, ua: bool) -> OpRow {
    let s = &t.slices;
    OpRow {
        name: if step {
            "ProfilerStep*".to_owned()
        } else {
            t.str(s.name[i]).to_owned()
        },
        input_shapes: None,
        on_device: dev,
        is_user_annotation: ua,
        calls: 0,
        self_cpu_ns: 0,
        cpu_total_ns: 0,
        self_device_ns: 0,
        device_total_ns: 0,
        self_cpu_mem_bytes: 0,
        cpu_mem_bytes: 0,
        self_device_mem_bytes: 0,
        device_mem_bytes: 0,
        flops: 0.0,
        flops_source: FlopsSource::None,
        pct_of_roof: None,
    }
}

/// Sorts descending by `key` (ascending for [`SortKey::Name`]); ties by name, then shapes, so the
/// output is deterministic.
pub fn sort_rows(rows: &mut [OpRow], key: SortKey) {
    crate::sort::by(rows, |a, b| row_order(key, a, b));
}

fn row_order(key: SortKey, a: &OpRow, b: &OpRow) -> std::cmp::Ordering {
    let v = |r: &OpRow| -> f64 {
        match key {
            SortKey::SelfCpu => r.self_cpu_ns as f64,
            SortKey::CpuTotal => r.cpu_total_ns as f64,
            SortKey::CpuAvg => r.cpu_avg_ns(),
            SortKey::SelfDevice => r.self_device_ns as f64,
            SortKey::DeviceTotal => r.device_total_ns as f64,
            SortKey::DeviceAvg => r.device_avg_ns(),
            SortKey::SelfCpuMem => r.self_cpu_mem_bytes as f64,
            SortKey::CpuMem => r.cpu_mem_bytes as f64,
            SortKey::SelfDeviceMem => r.self_device_mem_bytes as f64,
            SortKey::DeviceMem => r.device_mem_bytes as f64,
            SortKey::Calls => r.calls as f64,
            SortKey::Flops => r.flops,
            SortKey::Name => 0.0,
        }
    };
    v(b).total_cmp(&v(a))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| a.input_shapes.cmp(&b.input_shapes))
        .then_with(|| a.on_device.cmp(&b.on_device))
}
