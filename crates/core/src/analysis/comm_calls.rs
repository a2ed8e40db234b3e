//! Each rank's collective calls, with the args that identify them (see [`super::collectives`]):
//! NCCL kernels (HTA's `^nccl…Kernel` rule), else, in CPU-only runs, `gloo:*` / `nccl:*`
//! annotations; args from the kernel, else from the op that launched it (`record_param_comms`).

use super::gpu::{hta_kernel_type, HtaKernelType};
use super::kernels::enclosing_op;
use crate::model::{Ns, SliceKind, Trace, NONE};
use serde::Serialize;

/// One collective call on one rank.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Call {
    /// `Process Group Name`, if the args hold it.
    pub pg: Option<String>,
    pub seq: Option<i64>,
    /// Normalised collective (`allreduce`, `allgather`, `reducescatter`, `alltoall`, …).
    pub name: String,
    /// The kernel's (or annotation's) own name.
    pub slice_name: String,
    pub slice: u32,
    pub start_ns: Ns,
    pub end_ns: Ns,
    pub in_nelems: Option<u64>,
    pub out_nelems: Option<u64>,
    pub dtype: Option<String>,
    pub group_size: Option<u32>,
}

/// `all_reduce`, `_allgather_base`, `reduce_scatter_tensor_coalesced`, `ncclKernel_AllReduce_RING_LL_Sum_float`,
/// `ncclDevKernel_AllGather_RING_LL`, `gloo:all_reduce` → `allreduce`, `allgather`, `reducescatter`.
pub fn normalise(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let core = if let Some(rest) = lower
        .strip_prefix("nccldevkernel_")
        .or_else(|| lower.strip_prefix("ncclkernel_"))
    {
        rest.split('_').next().unwrap_or(rest).to_owned()
    } else {
        let rest = lower.rsplit(':').next().unwrap_or(&lower);
        let mut s = rest.trim_start_matches('_').to_owned();
        for cut in ["_into_tensor", "_tensor", "_coalesced", "_base", "_single"] {
            s = s.replace(cut, "");
        }
        s
    };
    core.replace('_', "")
}

/// Bytes per element of a `dtype` as the comms args spell it (`Float`, `BFloat16`, `c10::Half`…).
pub fn dtype_size(dtype: &str) -> Option<u64> {
    let d = dtype
        .rsplit(':')
        .next()
        .unwrap_or(dtype)
        .to_ascii_lowercase();
    Some(match d.as_str() {
        "double" | "long" | "complexfloat" | "int64" | "float64" => 8,
        "float" | "int" | "float32" | "int32" | "uint32" => 4,
        "half" | "bfloat16" | "short" | "float16" | "int16" | "uint16" => 2,
        "byte" | "char" | "bool" | "int8" | "uint8" => 1,
        d if d.starts_with("float8") => 1,
        "complexdouble" => 16,
        _ => return None,
    })
}

fn arg_str(m: &serde_json::Map<String, serde_json::Value>, k: &str) -> Option<String> {
    match m.get(k)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn arg_u64(m: &serde_json::Map<String, serde_json::Value>, k: &str) -> Option<u64> {
    let v = m.get(k)?;
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

fn comm_args(t: &Trace, i: usize) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = t.slice_args_stored(i);
    if !text.contains("Collective name") {
        return None;
    }
    serde_json::from_str(&text).ok()
}

/// The collective args of slice `i`: its own, else those of an op enclosing its launch.
fn args_of(t: &Trace, i: usize) -> Option<serde_json::Map<String, serde_json::Value>> {
    if let Some(m) = comm_args(t, i) {
        return Some(m);
    }
    let launch = t.gpu.row(i as u32).map(|r| t.gpu.launch[r]).unwrap_or(NONE);
    let mut p = if launch == NONE {
        NONE
    } else {
        enclosing_op(t, launch)
    };
    for _ in 0..8 {
        if p == NONE {
            break;
        }
        if let Some(m) = comm_args(t, p as usize) {
            return Some(m);
        }
        p = t.slices.parent[p as usize];
    }
    None
}

/// Every collective of one rank, in start order.
pub fn calls(t: &Trace) -> Vec<Call> {
    let s = &t.slices;
    let device = t.slice_name_test(|n| hta_kernel_type(n) == HtaKernelType::Communication);
    let cpu = t.slice_name_test(|n| n.starts_with("gloo:") || n.starts_with("nccl:"));
    let any_device = (0..s.len()).any(|i| s.kind[i] == SliceKind::Kernel && device[i]);
    let mut out = Vec::new();
    for i in 0..s.len() {
        let pick = if any_device {
            s.kind[i] == SliceKind::Kernel && device[i]
        } else {
            matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation) && cpu[i]
        };
        if !pick {
            continue;
        }
        let slice_name = t.str(s.name[i]).to_owned();
        let m = args_of(t, i).unwrap_or_default();
        let name = arg_str(&m, "Collective name").unwrap_or_else(|| slice_name.clone());
        out.push(Call {
            pg: arg_str(&m, "Process Group Name"),
            seq: m.get("Seq").and_then(serde_json::Value::as_i64),
            name: normalise(&name),
            slice_name,
            slice: i as u32,
            start_ns: s.start[i],
            end_ns: s.end(i),
            in_nelems: arg_u64(&m, "In msg nelems"),
            out_nelems: arg_u64(&m, "Out msg nelems"),
            dtype: arg_str(&m, "dtype"),
            group_size: arg_u64(&m, "Group size").map(|g| g as u32),
        });
    }
    crate::sort::by_key(&mut out, |c| (c.start_ns, c.slice));
    out
}
