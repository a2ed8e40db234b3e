//! Per op and per kernel, the time in each `ProfilerStep#N`: so a first-step stall (a cuDNN
//! benchmark, a lazy init) or one slow step shows instead of vanishing into a mean.
//!
//! An op's time in a step = the CPU total of its events (torch's tree, as the operator table
//! counts them: a same-name only child is not counted twice) that start inside the step's
//! window; a kernel's = the durations of its launches (kernels, memcpy, memset of that name) whose
//! launching call starts inside the window (a kernel launched in step 3 that runs during step 4
//! is step 3's work), else by its own start. Min, median (the mean of the two middle steps for an
//! even count) and max over the steps; only traces with two or more steps have a distribution.

use super::ops::tree_slices;
use crate::model::{Ns, SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// One name's time per step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepDist {
    pub name: String,
    /// Per step, in step order.
    pub per_step_ns: Vec<Ns>,
    pub min_ns: Ns,
    pub median_ns: Ns,
    pub max_ns: Ns,
    /// The step with the most time (index into [`PerStep::steps`]).
    pub max_step: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct PerStep {
    pub steps: Vec<String>,
    /// Ops (CPU events) by name, kernels/memcpy/memset by name; sorted by name.
    pub ops: Vec<StepDist>,
    pub kernels: Vec<StepDist>,
}

impl PerStep {
    pub fn op(&self, name: &str) -> Option<&StepDist> {
        self.ops
            .binary_search_by(|d| d.name.as_str().cmp(name))
            .ok()
            .map(|k| &self.ops[k])
    }
    pub fn kernel(&self, name: &str) -> Option<&StepDist> {
        self.kernels
            .binary_search_by(|d| d.name.as_str().cmp(name))
            .ok()
            .map(|k| &self.kernels[k])
    }
}

fn dist(t: &Trace, name: StrId, v: Vec<Ns>) -> StepDist {
    let mut sorted = v.clone();
    sorted.sort_unstable();
    let n = sorted.len();
    let median = if n == 0 {
        0
    } else if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    };
    let max_step = v
        .iter()
        .enumerate()
        .max_by_key(|(k, x)| (**x, std::cmp::Reverse(*k)))
        .map_or(0, |(k, _)| k);
    StepDist {
        name: t.str(name).to_owned(),
        min_ns: sorted.first().copied().unwrap_or(0),
        max_ns: sorted.last().copied().unwrap_or(0),
        median_ns: median,
        max_step,
        per_step_ns: v,
    }
}

pub fn per_step(t: &Trace) -> PerStep {
    let s = &t.slices;
    // Step windows, in time order.
    let mut steps: Vec<(Ns, Ns, String)> = (0..s.len())
        .filter(|&i| {
            matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation)
                && t.is_step(s.name[i])
        })
        .map(|i| (s.start[i], s.end(i), t.str(s.name[i]).to_owned()))
        .collect();
    steps.sort();
    steps.dedup_by(|a, b| a.2 == b.2);
    let mut out = PerStep {
        steps: steps.iter().map(|x| x.2.clone()).collect(),
        ..Default::default()
    };
    let n = steps.len();
    if n < 2 {
        return out;
    }
    let step_of = |ts: Ns| -> Option<usize> {
        let k = steps.partition_point(|x| x.0 <= ts).checked_sub(1)?;
        (ts < steps[k].1).then_some(k)
    };
    let mut ops: FxHashMap<StrId, Vec<Ns>> = FxHashMap::default();
    for i in tree_slices(t) {
        let i = i as usize;
        if s.kind[i] == SliceKind::PythonFunction || t.is_step(s.name[i]) {
            continue;
        }
        if let Some(k) = step_of(s.start[i]) {
            ops.entry(s.name[i]).or_insert_with(|| vec![0; n])[k] += s.dur[i];
        }
    }
    let mut kernels: FxHashMap<StrId, Vec<Ns>> = FxHashMap::default();
    let g = &t.gpu;
    for r in 0..g.slice.len() {
        let i = g.slice[r] as usize;
        if !s.kind[i].is_gpu_work() {
            continue;
        }
        let at = match g.launch[r] {
            NONE => s.start[i],
            l => s.start[l as usize],
        };
        if let Some(k) = step_of(at) {
            kernels.entry(s.name[i]).or_insert_with(|| vec![0; n])[k] += s.dur[i];
        }
    }
    out.ops = ops.into_iter().map(|(k, v)| dist(t, k, v)).collect();
    out.kernels = kernels.into_iter().map(|(k, v)| dist(t, k, v)).collect();
    crate::sort::by(&mut out.ops, |a, b| a.name.cmp(&b.name));
    crate::sort::by(&mut out.kernels, |a, b| a.name.cmp(&b.name));
    out
}

/// A text sparkline of per-step values (`▁▂▃▄▅▆▇█`), scaled to the largest; at most `width`
/// characters (steps merged by their maximum when there are more).
pub fn sparkline(v: &[Ns], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    if v.is_empty() || width == 0 {
        return String::new();
    }
    let per = v.len().div_ceil(width);
    let cols: Vec<Ns> = v
        .chunks(per)
        .map(|c| c.iter().copied().max().unwrap_or(0))
        .collect();
    let max = cols.iter().copied().max().unwrap_or(0).max(1);
    cols.iter()
        .map(|&x| BARS[((x as f64 / max as f64) * 7.0).round() as usize])
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::view::testutil::trace_json;

    #[test]
    fn a_first_step_stall_shows_in_the_distribution() {
        let mut ev = Vec::new();
        // Three steps of 1000 us; aten::conv 400 / 100 / 120 us (the first one benchmarks); a
        // kernel launched at the end of step 2 runs into step 3 and still counts for step 2.
        for (k, (conv, kern)) in [(400, 50), (100, 60), (120, 70)].iter().enumerate() {
            let base = k as i64 * 1000;
            ev.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{base},"dur":1000}}"#, k + 5));
            ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"aten::conv","pid":1,"tid":1,"ts":{},"dur":{conv}}}"#, base + 10));
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{}}}}}"#, base + 990, k + 1));
            ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":{},"dur":{kern},"args":{{"device":0,"stream":7,"correlation":{}}}}}"#, base + 1001, k + 1));
        }
        let t = trace_json(&ev.join(","));
        let p = per_step(&t);
        assert_eq!(
            p.steps,
            ["ProfilerStep#5", "ProfilerStep#6", "ProfilerStep#7"]
        );
        let c = p.op("aten::conv").unwrap();
        assert_eq!(c.per_step_ns, [400_000, 100_000, 120_000]);
        assert_eq!(
            (c.min_ns, c.median_ns, c.max_ns, c.max_step),
            (100_000, 120_000, 400_000, 0)
        );
        let g = p.kernel("gemm").unwrap();
        assert_eq!(g.per_step_ns, [50_000, 60_000, 70_000]);
        assert!(p.op("ProfilerStep#5").is_none());
        assert_eq!(sparkline(&c.per_step_ns, 10), "█▃▃");
        assert_eq!(sparkline(&[1, 2, 3, 4, 5, 6, 7, 8], 4), "▃▅▆█");
    }
}
