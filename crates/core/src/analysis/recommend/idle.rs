//! Rules on why the GPU is idle ([`crate::analysis::idle`]): each cause that keeps the GPU
//! waiting for a large enough share of the window gets its advice, with the share, the events the
//! host was in, and the intervals to step through in the timeline. Data loading, syncs and
//! launch-bound time join the rules of the same name in the parent module.

use super::{Recommendation, RuleId};
use crate::analysis::idle::{Cause, IdleCauses};
use crate::report::num;

/// Share of the window the GPU waits for one cause that fires its rule.
pub const WAIT_SHARE: f64 = 0.05;
/// Syncs are cheap to remove; they fire earlier.
pub const SYNC_WAIT_SHARE: f64 = 0.02;
/// Launch-bound time fires the launch-bound rule from this share.
pub const LAUNCH_WAIT_SHARE: f64 = 0.10;
/// Host-to-device copies that keep the GPU waiting.
pub const H2D_WAIT_SHARE: f64 = 0.02;
/// CPU ops and Python between launches together.
pub const HOST_WAIT_SHARE: f64 = 0.10;

/// The share of the window the GPU waited for `c`.
pub fn share(i: &IdleCauses, c: Cause) -> f64 {
    i.causes
        .iter()
        .find(|x| x.cause == c)
        .map_or(0.0, |x| x.share)
}

/// "step time" or "the kernel span".
pub fn of_what(i: &IdleCauses) -> &'static str {
    if i.window_from_steps {
        "step time"
    } else {
        "the kernel span"
    }
}

/// The events the host was in for `c`, by time (`a, b and c`), or "no event" when none.
pub fn evidence(i: &IdleCauses, c: Cause) -> String {
    let names: Vec<&str> = i
        .causes
        .iter()
        .find(|x| x.cause == c)
        .map(|x| x.top.iter().take(2).map(|t| t.0.as_str()).collect())
        .unwrap_or_default();
    if names.is_empty() {
        "no event recorded".to_owned()
    } else {
        names.join(", ")
    }
}

fn rec(
    i: &IdleCauses,
    rule: RuleId,
    causes: &[Cause],
    title: &str,
    advice: &str,
) -> Recommendation {
    let s: f64 = causes.iter().map(|&c| share(i, c)).sum();
    let us: f64 = causes.iter().map(|&c| i.ns(c) as f64 / 1e3).sum();
    let what: Vec<String> = causes
        .iter()
        .filter(|&&c| share(i, c) > 0.0)
        .map(|&c| format!("{} ({})", c.short(), evidence(i, c)))
        .collect();
    let mut ranges: Vec<(i64, i64)> = causes.iter().flat_map(|&c| i.ranges(c)).collect();
    ranges.sort_unstable();
    Recommendation {
        rule,
        title: title.to_owned(),
        detail: format!(
            "{} of {} the GPU waits for {}. {advice}",
            num::share(s),
            of_what(i),
            what.join(" and ")
        ),
        numbers: vec![("gpu_waits_share".into(), s), ("gpu_waits_us".into(), us)],
        slices: Vec::new(),
        ranges,
    }
}

/// The idle-cause rules that have no older rule of their own.
pub fn rules(i: &IdleCauses, out: &mut Vec<Recommendation>) {
    if share(i, Cause::H2dCopy) >= H2D_WAIT_SHARE {
        out.push(rec(
            i,
            RuleId::H2dCopy,
            &[Cause::H2dCopy],
            "Host-to-device copies hold the GPU",
            "Pin host memory (DataLoader(pin_memory=True)) and copy with .to(device, non_blocking=True), ahead of use.",
        ));
    }
    if share(i, Cause::Optimizer) >= WAIT_SHARE {
        out.push(rec(
            i,
            RuleId::OptimizerHost,
            &[Cause::Optimizer],
            "The optimizer step runs on the host while the GPU waits",
            "Use the fused or foreach implementation (torch.optim.AdamW(..., fused=True)), or compile the step.",
        ));
    }
    let host = share(i, Cause::HostOps) + share(i, Cause::Python);
    if host >= HOST_WAIT_SHARE {
        out.push(rec(
            i,
            RuleId::HostBound,
            &[Cause::HostOps, Cause::Python],
            "The host cannot keep the GPU fed",
            "The CPU between launches is the bottleneck: torch.compile, CUDA graphs (mode=\"reduce-overhead\"), larger batches, or less Python per step.",
        ));
    }
    if share(i, Cause::CollectiveWait) >= WAIT_SHARE {
        out.push(rec(
            i,
            RuleId::CollectiveWait,
            &[Cause::CollectiveWait],
            "The host blocks in collectives",
            "Use async collectives (async_op=True) and wait late, or move CPU (gloo) collectives off the training loop; check the Ranks tab for a straggler.",
        ));
    }
}
