//! Per-operator allocation table from `[memory]` events: the TensorBoard plugin's memory view
//! ("Memory Statistics" per operator: calls, allocation count and size, size increase, each total
//! and self). An event belongs to the innermost cpu_op / user_annotation around it on its thread
//! (its *self* op) and to every op enclosing that one (*total*). Per op name and device:
//! allocations and frees (counts), bytes allocated and freed, the net change (size increase), the
//! self versions, and the **peak contribution**: bytes this op allocated itself that are still
//! live at the device's peak (`Total Allocated` at its largest), matched by address — the answer
//! to "who holds the memory at the peak". `ProfilerStep#N` rows merge into `ProfilerStep*`, as
//! torch's `key_averages()` does; the net columns then equal its `cpu_memory_usage` /
//! `self_cpu_memory_usage` (checked on the generated `lstm_mem` trace).

use super::memory::{memory_summary, op_at};
use crate::model::{Trace, NONE};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, serde::Deserialize, Default, PartialEq, Eq)]
pub struct OpMemoryRow {
    pub name: String,
    /// Kineto device type (0 = CPU, 1 = CUDA) and id of the events counted in this row.
    pub device_type: i16,
    pub device_id: i16,
    /// Calls of the op that saw at least one event of this device, self or below.
    pub calls: u64,
    pub allocations: u64,
    pub frees: u64,
    pub allocated_bytes: i64,
    pub freed_bytes: i64,
    /// Allocated − freed (the plugin's "Size Increase").
    pub net_bytes: i64,
    pub self_allocations: u64,
    pub self_frees: u64,
    pub self_allocated_bytes: i64,
    pub self_freed_bytes: i64,
    pub self_net_bytes: i64,
    /// Bytes allocated by this op itself and still live at the device's peak.
    pub peak_bytes: i64,
    /// One call of this op that allocated live-at-peak bytes, for "show in timeline".
    pub peak_slice: Option<u32>,
}

/// The table, sorted by peak contribution, then allocated bytes, descending, then name.
pub fn op_memory_table(t: &Trace) -> Vec<OpMemoryRow> {
    let m = &t.memory;
    let s = &t.slices;
    let peaks: FxHashMap<(i16, i16), i64> = memory_summary(t)
        .iter()
        .map(|d| ((d.device_type, d.device_id), d.peak_ts_ns))
        .collect();
    // Allocations live at their device's peak: addresses allocated at or before it, not freed
    // by then. Events are in time order.
    let mut live: FxHashMap<(i16, i16, u64), usize> = FxHashMap::default();
    for k in 0..m.ts.len() {
        let dev = (m.device_type[k], m.device_id[k]);
        let Some(&peak) = peaks.get(&dev) else {
            continue;
        };
        if m.ts[k] > peak || m.addr[k] == 0 {
            continue;
        }
        let key = (dev.0, dev.1, m.addr[k]);
        if m.bytes[k] > 0 {
            live.insert(key, k);
        } else {
            live.remove(&key);
        }
    }
    let live: FxHashSet<usize> = live.into_values().collect();
    let mut rows: FxHashMap<(u32, i16, i16), OpMemoryRow> = FxHashMap::default();
    let mut seen_calls: FxHashSet<(u32, i16, i16)> = FxHashSet::default();
    for k in 0..m.ts.len() {
        let own = op_at(t, m.track[k], m.ts[k]);
        let (dt, di, b) = (m.device_type[k], m.device_id[k], m.bytes[k]);
        let mut op = own;
        while op != NONE {
            let name = s.name[op as usize];
            let step = crate::model::steps::torch_merges(t.str(name));
            let key = if step { u32::MAX } else { name.0 };
            let r = rows.entry((key, dt, di)).or_insert_with(|| OpMemoryRow {
                name: if step {
                    "ProfilerStep*".to_owned()
                } else {
                    t.str(name).to_owned()
                },
                device_type: dt,
                device_id: di,
                ..Default::default()
            });
            if seen_calls.insert((op, dt, di)) {
                r.calls += 1;
            }
            let is_self = op == own;
            if b > 0 {
                r.allocations += 1;
                r.allocated_bytes += b;
                if is_self {
                    r.self_allocations += 1;
                    r.self_allocated_bytes += b;
                    if live.contains(&k) {
                        r.peak_bytes += b;
                        r.peak_slice.get_or_insert(op);
                    }
                }
            } else if b < 0 {
                r.frees += 1;
                r.freed_bytes -= b;
                if is_self {
                    r.self_frees += 1;
                    r.self_freed_bytes -= b;
                }
            }
            op = super::kernels::enclosing_op(t, op);
        }
    }
    let mut v: Vec<OpMemoryRow> = rows
        .into_values()
        .map(|mut r| {
            r.net_bytes = r.allocated_bytes - r.freed_bytes;
            r.self_net_bytes = r.self_allocated_bytes - r.self_freed_bytes;
            r
        })
        .collect();
    crate::sort::by(&mut v, |a, b| {
        b.peak_bytes
            .cmp(&a.peak_bytes)
            .then(b.allocated_bytes.cmp(&a.allocated_bytes))
            .then_with(|| a.name.cmp(&b.name))
            .then((a.device_type, a.device_id).cmp(&(b.device_type, b.device_id)))
    });
    v
}
