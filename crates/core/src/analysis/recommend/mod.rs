//! Recommendations: rules over the other analyses, each fired with the numbers that fired it and
//! the slice ids (or, for idle time, the intervals) to look at. Thresholds are the usual rules of
//! thumb (TensorBoard plugin's "Performance Recommendation", HTA's docs) and are constants here so
//! they are easy to find. The rules on idle causes are in [`idle`].

mod idle;

use super::gpu::GpuSummary;
use super::idle::{Cause, IdleCauses};
use super::kernels::KernelTable;
use super::launch::{LaunchStats, SyncGroup};
use super::memory::DeviceMemory;
use super::steps::Step;
use super::tensor_cores::is_fp32_simt_gemm;
use crate::model::{SliceKind, Trace};
use crate::report::num;
use serde::Serialize;

/// DataLoader share of step time that fires [`RuleId::DataLoader`] (TensorBoard uses 5 %; we
/// are a little less eager).
pub const DATALOADER_SHARE: f64 = 0.10;
/// GPU utilization below which [`RuleId::GpuIdle`] fires.
pub const GPU_IDLE_UTIL: f64 = 0.5;
/// Sync time share of the window that fires [`RuleId::SyncPoints`].
pub const SYNC_SHARE: f64 = 0.01;
/// Share of kernels shorter than their launch call that fires [`RuleId::LaunchBound`].
pub const SHORT_KERNEL_SHARE: f64 = 0.5;
/// Share of GPU time in fp32 SIMT GEMMs that fires [`RuleId::NoTensorCores`].
pub const FP32_GEMM_SHARE: f64 = 0.05;
/// Exposed communication share of the kernel span that fires [`RuleId::ExposedComm`].
pub const EXPOSED_COMM_SHARE: f64 = 0.10;
/// Peak reserved share of device memory that fires [`RuleId::MemoryNearCapacity`].
pub const MEMORY_SHARE: f64 = 0.90;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleId {
    DataLoader,
    GpuIdle,
    SyncPoints,
    LaunchBound,
    NoTensorCores,
    ExposedComm,
    MemoryNearCapacity,
    /// The GPU waits for host-to-device copies.
    H2dCopy,
    /// The GPU waits for the optimizer on the host.
    OptimizerHost,
    /// The GPU waits for CPU ops and Python between launches.
    HostBound,
    /// The GPU waits while the host sits in a blocking collective.
    CollectiveWait,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Recommendation {
    pub rule: RuleId,
    pub title: String,
    pub detail: String,
    /// The figures that fired the rule, by name.
    pub numbers: Vec<(String, f64)>,
    /// Slices to look at (at most 20).
    pub slices: Vec<u32>,
    /// Idle intervals to look at (`[start, end)` ns; the longest of their cause), for rules on
    /// idle time.
    #[serde(default)]
    pub ranges: Vec<(i64, i64)>,
}

/// What the rules read: the other analyses of one trace.
pub struct Inputs<'a> {
    pub t: &'a Trace,
    pub gpu: &'a GpuSummary,
    pub steps: &'a [Step],
    pub memory: &'a [DeviceMemory],
    pub launch: &'a LaunchStats,
    pub sync: &'a [SyncGroup],
    pub kernels: &'a KernelTable,
    pub idle: &'a IdleCauses,
}

/// Fires every rule that applies, in [`RuleId`] order.
pub fn recommend(i: &Inputs) -> Vec<Recommendation> {
    let Inputs {
        t,
        gpu,
        steps,
        memory,
        launch,
        sync,
        kernels,
        idle: idle_causes,
    } = *i;
    let mut out = Vec::new();
    let step_total: i64 = steps.iter().map(|s| s.dur_ns).sum();
    let dl: i64 = steps.iter().map(|s| s.parts_ns[5]).sum();
    let waits = |c: Cause| idle::share(idle_causes, c);
    let dl_wait = waits(Cause::DataLoading);
    let dl_share = if step_total > 0 {
        dl as f64 / step_total as f64
    } else {
        0.0
    };
    if dl_share > DATALOADER_SHARE || dl_wait >= idle::WAIT_SHARE {
        let mut numbers = vec![
            ("dataloader_share".into(), dl_share),
            ("dataloader_us".into(), dl as f64 / 1e3),
        ];
        let detail = if dl_wait >= idle::WAIT_SHARE {
            numbers.push(("gpu_waits_share".into(), dl_wait));
            format!(
                "{} of {} the GPU waits for the data loader ({}); raise num_workers, use pin_memory=True, persistent_workers and prefetch_factor, move decoding and augmentation off the main process.",
                num::share(dl_wait),
                idle::of_what(idle_causes),
                idle::evidence(idle_causes, Cause::DataLoading)
            )
        } else {
            format!(
                "DataLoader time is {:.1}% of step time; raise num_workers, use pin_memory and prefetching.",
                100.0 * dl_share
            )
        };
        out.push(Recommendation {
            rule: RuleId::DataLoader,
            title: "Input pipeline takes a large share of the step".into(),
            detail,
            numbers,
            slices: slices_named(t, |n| n.contains("DataLoader")),
            ranges: idle_causes.ranges(Cause::DataLoading),
        });
    }
    if let Some(u) = gpu.utilization {
        if u < GPU_IDLE_UTIL {
            let why = idle_causes
                .headline()
                .map(|h| format!(" {h}."))
                .unwrap_or_default();
            out.push(Recommendation {
                rule: RuleId::GpuIdle,
                title: "GPU is idle much of the time".into(),
                detail: format!(
                    "GPU utilization is {:.1}% of the {} window; the GPU waits on the host.{why} The rules below say what to change for each cause.",
                    100.0 * u,
                    if gpu.window_from_steps { "ProfilerStep" } else { "trace" }
                ),
                numbers: vec![
                    ("utilization".into(), u),
                    ("idle_us".into(), gpu.idle_ns as f64 / 1e3),
                    ("window_us".into(), gpu.window_ns as f64 / 1e3),
                ],
                slices: Vec::new(),
                ranges: Vec::new(),
            });
        }
    }
    let sync_ns: i64 = sync.iter().map(|g| g.total_ns).sum();
    let sync_wait = waits(Cause::DeviceSync);
    if gpu.window_ns > 0
        && !sync.is_empty()
        && (sync_ns as f64 / gpu.window_ns as f64 > SYNC_SHARE
            || sync_wait >= idle::SYNC_WAIT_SHARE)
    {
        let top = &sync[0];
        out.push(Recommendation {
            rule: RuleId::SyncPoints,
            title: "Host-device synchronization stalls the CPU".into(),
            detail: format!(
                "{} sync calls take {:.1}% of the window; the largest is {}{} ({} call{}).{} Avoid .item()/.cpu()/print of CUDA tensors in the loop; log every N steps, keep metrics on the GPU.",
                sync.iter().map(|g| g.count).sum::<u64>(),
                100.0 * sync_ns as f64 / gpu.window_ns as f64,
                top.name,
                // A runtime call no op encloses was made from Python (or C++) directly.
                top.op
                    .as_deref()
                    .map_or(", called outside any op".to_owned(), |op| format!(" from {op}")),
                top.count,
                if top.count == 1 { "" } else { "s" },
                if sync_wait > 0.0 {
                    format!(
                        " After they return the GPU sits idle until the host queues work again: {} of {}.",
                        num::share(sync_wait),
                        idle::of_what(idle_causes)
                    )
                } else {
                    String::new()
                }
            ),
            numbers: vec![
                ("sync_us".into(), sync_ns as f64 / 1e3),
                ("sync_calls".into(), sync.iter().map(|g| g.count).sum::<u64>() as f64),
                ("gpu_waits_share".into(), sync_wait),
            ],
            slices: sync.iter().flat_map(|g| g.slices.iter().copied()).take(20).collect(),
            ranges: idle_causes.ranges(Cause::DeviceSync),
        });
    }
    let kernel_count: u64 = kernels
        .rows
        .iter()
        .filter(|k| k.kind == SliceKind::Kernel)
        .map(|k| k.calls)
        .sum();
    let lb_wait = waits(Cause::LaunchBound);
    if kernel_count >= 10
        && (launch.short_kernels as f64 / kernel_count as f64 > SHORT_KERNEL_SHARE
            || lb_wait >= idle::LAUNCH_WAIT_SHARE)
    {
        let share = launch.short_kernels as f64 / kernel_count as f64;
        out.push(Recommendation {
            rule: RuleId::LaunchBound,
            title: "Many small kernels: launch bound".into(),
            detail: format!(
                "{:.0}% of kernels run shorter than the CPU call that launched them; {} of {} the GPU waits on launches. Fuse ops (torch.compile), use CUDA graphs or larger batches.",
                100.0 * share,
                num::share(lb_wait),
                idle::of_what(idle_causes)
            ),
            numbers: vec![
                ("short_kernel_share".into(), share),
                ("short_kernels".into(), launch.short_kernels as f64),
                ("gpu_waits_share".into(), lb_wait),
            ],
            slices: launch.short_kernel_slices.clone(),
            ranges: idle_causes.ranges(Cause::LaunchBound),
        });
    }
    let fp32: i64 = kernels
        .rows
        .iter()
        .filter(|k| is_fp32_simt_gemm(&k.name))
        .map(|k| k.total_ns)
        .sum();
    if kernels.total_ns > 0 && fp32 as f64 / kernels.total_ns as f64 > FP32_GEMM_SHARE {
        let share = fp32 as f64 / kernels.total_ns as f64;
        out.push(Recommendation {
            rule: RuleId::NoTensorCores,
            title: "Matrix multiplies do not use tensor cores".into(),
            detail: format!(
                "{:.1}% of GPU time is fp32 SIMT GEMM (sgemm); use bf16/fp16 autocast or allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True).",
                100.0 * share
            ),
            numbers: vec![("fp32_gemm_share".into(), share), ("fp32_gemm_us".into(), fp32 as f64 / 1e3)],
            slices: slices_named(t, is_fp32_simt_gemm),
            ranges: Vec::new(),
        });
    }
    let span = gpu.temporal.kernel_span_ns;
    if span > 0 && gpu.overlap.exposed_comm_ns as f64 / span as f64 > EXPOSED_COMM_SHARE {
        let share = gpu.overlap.exposed_comm_ns as f64 / span as f64;
        out.push(Recommendation {
            rule: RuleId::ExposedComm,
            title: "Communication is not hidden behind compute".into(),
            detail: format!(
                "Exposed communication is {:.1}% of the kernel span (overlap {:.0}%); bucket gradients, overlap with backward, or check for stragglers.",
                100.0 * share,
                gpu.overlap.overlap_pct.unwrap_or(0.0)
            ),
            numbers: vec![("exposed_comm_share".into(), share), ("exposed_comm_us".into(), gpu.overlap.exposed_comm_ns as f64 / 1e3)],
            slices: slices_named(t, |n| n.starts_with("nccl")),
            ranges: Vec::new(),
        });
    }
    for m in memory {
        let Some(cap) = m.capacity_bytes else {
            continue;
        };
        let share = m.peak_reserved_bytes as f64 / cap as f64;
        if share > MEMORY_SHARE {
            out.push(Recommendation {
                rule: RuleId::MemoryNearCapacity,
                title: format!("Device {} memory is nearly full", m.device_id),
                detail: format!(
                    "Peak reserved memory is {:.1}% of the device's {} bytes (peak allocated reached in {}); expect OOMs or allocator retries. Use activation checkpointing or a smaller batch.",
                    100.0 * share,
                    cap,
                    m.peak_op.as_deref().unwrap_or("no op")
                ),
                numbers: vec![("reserved_share".into(), share), ("peak_reserved_bytes".into(), m.peak_reserved_bytes as f64)],
                slices: m.peak_op_slice.into_iter().collect(),
                ranges: Vec::new(),
            });
        }
    }
    idle::rules(idle_causes, &mut out);
    out
}

fn slices_named(t: &Trace, f: impl Fn(&str) -> bool) -> Vec<u32> {
    t.slice_name_test(f)
        .iter()
        .enumerate()
        .filter(|x| *x.1)
        .take(20)
        .map(|x| x.0 as u32)
        .collect()
}
