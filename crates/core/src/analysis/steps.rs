//! Step breakdown with the TensorBoard plugin's priorities (docs/definitions.md): within
//! each `ProfilerStep#N`, Kernel > Memcpy > Memset > Communication > Runtime > DataLoader >
//! CPU Exec > Other, each claiming only time no higher category claimed, so the parts sum to the
//! step. Kernel = non-communication kernels; Communication = NCCL kernels (HTA's
//! `^nccl.*Kernel`) and CPU collectives (`gloo:*`, `nccl:*`, `c10d::*`); Runtime = runtime/driver
//! calls; DataLoader = CPU events whose name contains `DataLoader`; CPU Exec = other cpu_op /
//! user_annotation time (the step annotations themselves excluded).

use super::gpu::{hta_kernel_type, HtaKernelType};
use super::intervals::{clip, subtract, total, union};
use crate::model::{Ns, SliceKind, Trace};
use serde::Serialize;

pub const CATEGORIES: [&str; 8] = [
    "kernel",
    "memcpy",
    "memset",
    "communication",
    "runtime",
    "dataloader",
    "cpu_exec",
    "other",
];

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Step {
    pub name: String,
    pub slice: u32,
    pub start_ns: Ns,
    pub dur_ns: Ns,
    /// ns per category, in [`CATEGORIES`] order; sums to `dur_ns`.
    pub parts_ns: [Ns; 8],
}

fn category(t: &Trace, i: usize) -> Option<usize> {
    let s = &t.slices;
    let name = t.str(s.name[i]);
    Some(match s.kind[i] {
        SliceKind::Kernel => {
            if hta_kernel_type(name) == HtaKernelType::Communication {
                3
            } else {
                0
            }
        }
        SliceKind::Memcpy => 1,
        SliceKind::Memset => 2,
        SliceKind::Runtime | SliceKind::Driver => 4,
        SliceKind::CpuOp | SliceKind::UserAnnotation => {
            if t.is_step(s.name[i]) {
                return None;
            } else if name.contains("DataLoader") {
                5
            } else if name.starts_with("gloo:")
                || name.starts_with("nccl:")
                || name.starts_with("c10d::")
            {
                3
            } else {
                6
            }
        }
        _ => return None,
    })
}

/// One entry per step slice (`model::steps`: `ProfilerStep#N`, else e.g. `train_step_N`), in
/// time order.
pub fn steps(t: &Trace) -> Vec<Step> {
    let s = &t.slices;
    let step_ids: Vec<usize> = (0..s.len())
        .filter(|&i| {
            matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation)
                && t.is_step(s.name[i])
        })
        .collect();
    let windows: Vec<(Ns, Ns)> = step_ids.iter().map(|&i| (s.start[i], s.end(i))).collect();
    let mut out: Vec<Step> = step_ids
        .iter()
        .zip(breakdown(t, &windows))
        .map(|(&i, parts)| Step {
            name: t.str(s.name[i]).to_owned(),
            slice: i as u32,
            start_ns: s.start[i],
            dur_ns: s.end(i) - s.start[i],
            parts_ns: parts,
        })
        .collect();
    crate::sort::by_key(&mut out, |x| (x.start_ns, x.slice));
    out
}

/// The breakdown of each window `[lo, hi)`: ns per category in [`CATEGORIES`] order, each
/// category claiming only time no higher one claimed, the rest `other`, so each sums to
/// `hi - lo`. [`steps`] uses the ProfilerStep windows; a test uses the TensorBoard plugin's.
pub fn breakdown(t: &Trace, windows: &[(Ns, Ns)]) -> Vec<[Ns; 8]> {
    breakdown_without(t, windows, &[])
}

/// [`breakdown`] leaving out the slices in `skip` (sorted): a scope's own annotations, which
/// span their windows as the step annotations span theirs (docs/definitions.md, "Scoped tables").
pub fn breakdown_without(t: &Trace, windows: &[(Ns, Ns)], skip: &[u32]) -> Vec<[Ns; 8]> {
    let s = &t.slices;
    let mut per_cat: Vec<Vec<(Ns, Ns)>> = vec![Vec::new(); 7];
    for i in 0..s.len() {
        if skip.binary_search(&(i as u32)).is_ok() {
            continue;
        }
        if let Some(c) = category(t, i) {
            per_cat[c].push((s.start[i], s.end(i)));
        }
    }
    let unions: Vec<Vec<(Ns, Ns)>> = per_cat.into_iter().map(union).collect();
    windows
        .iter()
        .map(|&(lo, hi)| {
            let mut claimed: Vec<(Ns, Ns)> = Vec::new();
            let mut parts = [0; 8];
            for (c, u) in unions.iter().enumerate() {
                let a = window(u, lo, hi);
                let fresh = subtract(&a, &claimed);
                parts[c] = total(&fresh);
                claimed.extend(fresh);
                claimed = union(claimed);
            }
            parts[7] = (hi - lo) - parts[..7].iter().sum::<Ns>();
            parts
        })
        .collect()
}

/// The part of a merged list inside `[lo, hi)`, found by binary search.
fn window(u: &[(Ns, Ns)], lo: Ns, hi: Ns) -> Vec<(Ns, Ns)> {
    let a = u.partition_point(|x| x.1 <= lo);
    let b = u.partition_point(|x| x.0 < hi);
    clip(&u[a..b.max(a)], lo, hi)
}

/// A first step this many times the median of the others, or slower, is a warm-up step
/// (allocator growth, cuDNN autotuning, `torch.compile`, lazy initialisation).
pub const WARMUP_FACTOR: f64 = 2.0;

/// The warm-up step: the first step when it took at least [`WARMUP_FACTOR`] × the median of the
/// steps after it (three steps at least, so the others have a median worth the name). Returns
/// the first step's duration over that median. The Overview marks it beside the step mean, which
/// it pulls up, and the median; docs/definitions.md, Steps.
pub fn warmup(steps: &[Step]) -> Option<f64> {
    let (first, rest) = steps.split_first()?;
    if rest.len() < 2 {
        return None;
    }
    let mut d: Vec<Ns> = rest.iter().map(|s| s.dur_ns).collect();
    d.sort_unstable();
    let m = d.len();
    let median = if m % 2 == 1 {
        d[m / 2] as f64
    } else {
        (d[m / 2 - 1] + d[m / 2]) as f64 / 2.0
    };
    let r = first.dur_ns as f64 / median;
    (median > 0.0 && r >= WARMUP_FACTOR).then_some(r)
}

/// The median step duration (ns); `None` without steps.
pub fn median_ns(steps: &[Step]) -> Option<f64> {
    let mut d: Vec<Ns> = steps.iter().map(|s| s.dur_ns).collect();
    d.sort_unstable();
    let m = d.len();
    match m {
        0 => None,
        _ if m % 2 == 1 => Some(d[m / 2] as f64),
        _ => Some((d[m / 2 - 1] + d[m / 2]) as f64 / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(durs: &[Ns]) -> Vec<Step> {
        durs.iter()
            .map(|&d| Step {
                name: String::new(),
                slice: 0,
                start_ns: 0,
                dur_ns: d,
                parts_ns: [0; 8],
            })
            .collect()
    }

    #[test]
    fn the_first_step_is_a_warm_up_at_twice_the_median_of_the_others() {
        assert_eq!(warmup(&steps(&[400, 100, 100, 100])), Some(4.0));
        assert_eq!(warmup(&steps(&[200, 90, 110, 100])), Some(2.0));
        assert_eq!(warmup(&steps(&[199, 90, 110, 100])), None);
        // A slow step later is no warm-up; two steps are too few to tell.
        assert_eq!(warmup(&steps(&[100, 400, 100, 100])), None);
        assert_eq!(warmup(&steps(&[400, 100])), None);
        assert_eq!(warmup(&steps(&[])), None);
        assert_eq!(median_ns(&steps(&[400, 100, 100, 100])), Some(100.0));
        assert_eq!(median_ns(&steps(&[400, 100, 300])), Some(300.0));
        assert_eq!(median_ns(&steps(&[])), None);
    }
}
