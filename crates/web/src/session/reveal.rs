//! Which slices a table row stands for, so a row click can show its occurrences in the timeline
//! (`Nav::reveal`). Computed on click, one pass over the slices.

use super::TraceFile;
use tracelight_core::analysis::flops::torch_shape_text;
use tracelight_core::analysis::ops::OpRow;
use tracelight_core::model::{SliceKind, Trace, NONE};
use tracelight_core::view::link::Named;

fn is_cpu_event(k: SliceKind) -> bool {
    matches!(
        k,
        SliceKind::CpuOp | SliceKind::UserAnnotation | SliceKind::Runtime | SliceKind::Driver
    )
}

/// The slices counted in an operator-table row: CPU events of that name (every `ProfilerStep#N`
/// for `ProfilerStep*`, as the table merges them: core's `model::steps::torch_merges`; with input shapes, those shapes), minus the same-name children torch
/// merges into their parent; device rows are the GPU slices of that name.
pub fn op_slices(t: &Trace, row: &OpRow) -> Vec<u32> {
    let s = &t.slices;
    let step = row.name == "ProfilerStep*";
    let name_id = t.strings.get(&row.name);
    let mut out = Vec::new();
    for i in 0..s.len() {
        let k = s.kind[i];
        let name_ok = if step {
            tracelight_core::model::steps::torch_merges(t.str(s.name[i]))
        } else {
            Some(s.name[i]) == name_id
        };
        if !name_ok {
            continue;
        }
        if row.on_device {
            if k.is_gpu_work() {
                out.push(i as u32);
            }
            continue;
        }
        if !is_cpu_event(k) || (k == SliceKind::UserAnnotation) != row.is_user_annotation {
            continue;
        }
        let p = s.parent[i];
        if !step && p != NONE && s.name[p as usize] == s.name[i] {
            continue;
        }
        if let Some(shapes) = &row.input_shapes {
            let d = t.str(s.input_dims[i]);
            let text = if d.is_empty() {
                "[]".to_owned()
            } else {
                torch_shape_text(d)
            };
            if &text != shapes {
                continue;
            }
        }
        out.push(i as u32);
    }
    out
}

/// The GPU slices (kernels, memcpy, memset) named `name`.
pub fn gpu_slices(t: &Trace, name: &str) -> Vec<u32> {
    let Some(id) = t.strings.get(name) else {
        return Vec::new();
    };
    let s = &t.slices;
    t.gpu
        .slice
        .iter()
        .copied()
        .filter(|&i| s.name[i as usize] == id && s.kind[i as usize].is_gpu_work())
        .collect()
}

/// The slices of op or kernel `name`, in time order (a deep link's or a host's `reveal`): an op is
/// its Operators-table row (by name, not grouped by shapes), a kernel its GPU slices.
pub fn named_slices(tf: &TraceFile, kind: Named, name: &str) -> Vec<u32> {
    let t = &tf.trace;
    let mut v = match kind {
        Named::Op => tf
            .analysis()
            .ops
            .rows
            .iter()
            .find(|r| r.name == name && !r.on_device && r.input_shapes.is_none())
            .map(|r| op_slices(t, r))
            .unwrap_or_default(),
        Named::Kernel => gpu_slices(t, name),
    };
    tracelight_core::sort::by_key(&mut v, |&i| (t.slices.start[i as usize], i));
    v
}

/// What a revealed set is, when it is all of one op's or kernel's occurrences (named by its
/// first slice): for the deep link.
pub fn named_of(t: &Trace, label: &str, slices: &[u32]) -> Option<Named> {
    let &first = slices.first()?;
    let i = first as usize;
    if i >= t.slices.len() || t.str(t.slices.name[i]) != label {
        return None;
    }
    Some(if t.slices.kind[i].is_gpu_work() {
        Named::Kernel
    } else {
        Named::Op
    })
}
