//! Memory from `[memory]` events (docs/definitions.md): allocated and reserved curves per device
//! (`Total Allocated` / `Total Reserved` after each event), the peak, and the op that reached it —
//! the innermost cpu_op / user_annotation on the event's thread active at the peak event's time.
//! Per-op self/total allocation is in [`super::ops`] (torch's `cpu_memory_usage` semantics).

use crate::model::{Ns, SliceKind, Trace, NONE};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DeviceMemory {
    /// Kineto device type: 0 = CPU, 1 = CUDA, …
    pub device_type: i16,
    pub device_id: i16,
    pub events: u64,
    pub peak_allocated_bytes: i64,
    pub peak_reserved_bytes: i64,
    /// Whether any event of this device recorded `Total Reserved` (CPU events never do): show
    /// reserved only then, since "Peak reserved 0 B" reads as data.
    pub reserved_recorded: bool,
    pub peak_ts_ns: Ns,
    pub peak_op: Option<String>,
    pub peak_op_slice: Option<u32>,
    /// Device capacity from `deviceProperties` (`totalGlobalMem`), when known.
    pub capacity_bytes: Option<u64>,
}

/// One point of a curve.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct MemPoint {
    pub ts_ns: Ns,
    pub allocated: i64,
    pub reserved: i64,
}

fn devices(t: &Trace) -> Vec<(i16, i16)> {
    let m = &t.memory;
    let mut d: Vec<(i16, i16)> = m
        .device_type
        .iter()
        .copied()
        .zip(m.device_id.iter().copied())
        .collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// The allocated/reserved curve of one device, in time order.
pub fn curve(t: &Trace, device_type: i16, device_id: i16) -> Vec<MemPoint> {
    let m = &t.memory;
    (0..m.ts.len())
        .filter(|&k| m.device_type[k] == device_type && m.device_id[k] == device_id)
        .map(|k| MemPoint {
            ts_ns: m.ts[k],
            allocated: m.total_allocated[k],
            reserved: m.total_reserved[k],
        })
        .collect()
}

/// Innermost cpu_op/user_annotation on `track` containing `ts`.
pub(crate) fn op_at(t: &Trace, track: u32, ts: Ns) -> u32 {
    let Some(tr) = t.tracks.get(track as usize) else {
        return NONE;
    };
    let s = &t.slices;
    let (a, b) = (tr.first as usize, (tr.first + tr.count) as usize);
    let ub = a + s.start[a..b].partition_point(|&x| x <= ts);
    let mut best = NONE;
    // Walk back from the last slice starting before ts through its parents.
    let mut i = if ub > a { (ub - 1) as u32 } else { NONE };
    while i != NONE {
        let k = i as usize;
        if s.start[k] <= ts
            && s.end(k) >= ts
            && matches!(s.kind[k], SliceKind::CpuOp | SliceKind::UserAnnotation)
        {
            best = i;
            break;
        }
        i = s.parent[k];
    }
    best
}

/// Per device peaks, sorted by (device type, id).
pub fn memory_summary(t: &Trace) -> Vec<DeviceMemory> {
    memory_summary_of(t, None)
}

/// [`memory_summary`] over a scope's windows (`merged`: sorted, disjoint): the events inside
/// them, and on each device the level each window opened with (the last event before it: what
/// was allocated then is still allocated at its start). `events` counts the ones inside.
pub fn memory_summary_in(t: &Trace, merged: &[(Ns, Ns)]) -> Vec<DeviceMemory> {
    memory_summary_of(t, Some(merged))
}

fn memory_summary_of(t: &Trace, merged: Option<&[(Ns, Ns)]>) -> Vec<DeviceMemory> {
    let m = &t.memory;
    let mut out = Vec::new();
    let inside = |ts: Ns| {
        merged.is_none_or(|w| {
            let k = w.partition_point(|x| x.0 <= ts);
            k > 0 && ts < w[k - 1].1
        })
    };
    for (dt, di) in devices(t) {
        let mut peak_k = None;
        let mut peak_res = 0i64;
        let mut n = 0;
        let mine: Vec<usize> = (0..m.ts.len())
            .filter(|&k| m.device_type[k] == dt && m.device_id[k] == di)
            .collect();
        // The level each window opens with: the device's last event before it.
        let mut carried: Vec<usize> = Vec::new();
        for w in merged.unwrap_or(&[]) {
            let p = mine.partition_point(|&k| m.ts[k] < w.0);
            if p > 0 {
                carried.push(mine[p - 1]);
            }
        }
        carried.dedup();
        for &k in &mine {
            let counted = inside(m.ts[k]);
            if !counted && carried.binary_search(&k).is_err() {
                continue;
            }
            n += u64::from(counted);
            peak_res = peak_res.max(m.total_reserved[k]);
            if peak_k.is_none_or(|p: usize| m.total_allocated[k] > m.total_allocated[p]) {
                peak_k = Some(k);
            }
        }
        let Some(pk) = peak_k else { continue };
        let op = op_at(t, m.track[pk], m.ts[pk]);
        out.push(DeviceMemory {
            device_type: dt,
            device_id: di,
            events: n,
            peak_allocated_bytes: m.total_allocated[pk],
            peak_reserved_bytes: peak_res,
            reserved_recorded: peak_res > 0,
            peak_ts_ns: m.ts[pk],
            peak_op: (op != NONE).then(|| t.str(t.slices.name[op as usize]).to_owned()),
            peak_op_slice: (op != NONE).then_some(op),
            capacity_bytes: if dt != 0 {
                t.meta
                    .devices
                    .iter()
                    .find(|d| d.id == i64::from(di))
                    .map(|d| d.total_global_mem)
                    .filter(|&c| c > 0)
            } else {
                None
            },
        });
    }
    out
}

/// The headline peak: the largest device (non-CPU) peak if any device memory was recorded, else
/// the CPU peak. `(allocated, reserved)`.
pub fn headline_peak(mem: &[DeviceMemory]) -> (i64, i64) {
    let dev: Vec<&DeviceMemory> = mem.iter().filter(|d| d.device_type != 0).collect();
    let pool: Vec<&DeviceMemory> = if dev.is_empty() {
        mem.iter().collect()
    } else {
        dev
    };
    (
        pool.iter()
            .map(|d| d.peak_allocated_bytes)
            .max()
            .unwrap_or(0),
        pool.iter()
            .map(|d| d.peak_reserved_bytes)
            .max()
            .unwrap_or(0),
    )
}
