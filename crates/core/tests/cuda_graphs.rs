//! CUDA graph replays on the corpus's two real traces with `cudaGraphLaunch`
//! (`real/hta/a100_80gb_rank0of16`: torch.compile graphs on an A100; `real/hta/trace_diff/
//! test_v100_rank1of2`), against the raw JSON read here independently of our reader: the
//! kernels, memcpy and memset whose `correlation` is a graph launch's are attributed to that
//! launch (count and GPU time), the replay's idle is its span minus its busy union, GPU
//! utilization counts replayed kernels (busy time drops without them), and the GPU health
//! line puts their time under "graph replay".

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use tracelight_core::analysis::gpu::gpu_summary;
use tracelight_core::analysis::graphs::{gpu_health, graphs};
use tracelight_core::ingest::{load_bytes, Loaded};

/// The corpus folder of HTA's traces (`tracelight_testkit`, overridable by `TRACELIGHT_CORPUS`).
fn corpus() -> String {
    tracelight_testkit::root()
        .join("real/hta")
        .to_string_lossy()
        .into_owned()
}

/// A launch's replayed work: count, summed duration (ns), intervals (µs).
type Replay = (u64, f64, Vec<(f64, f64)>);

struct Raw {
    /// Graph launch correlation -> (its kernels, summed dur ns, [(start, end)]).
    per_launch: BTreeMap<i64, Replay>,
    /// Every kernel interval (µs) per device, and which are replayed.
    kernels: Vec<(i64, f64, f64, bool)>,
    steps: Vec<(f64, f64)>,
}

/// Only the fields this test reads (a typed read: a `Value` tree of these files is slow in a
/// debug build).
#[derive(serde::Deserialize)]
struct Ev {
    name: Option<String>,
    cat: Option<String>,
    ts: Option<f64>,
    dur: Option<f64>,
    args: Option<Args>,
}

#[derive(serde::Deserialize)]
struct Args {
    correlation: Option<i64>,
    device: Option<i64>,
}

#[derive(serde::Deserialize)]
struct File {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Ev>,
}

fn raw(path: &str) -> Option<Raw> {
    let gz = std::fs::read(path).ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    let ev = serde_json::from_str::<File>(&text).unwrap().trace_events;
    let corr = |e: &Ev| e.args.as_ref().and_then(|a| a.correlation);
    let launches: BTreeSet<i64> = ev
        .iter()
        .filter(|e| e.name.as_deref().is_some_and(|n| n.contains("GraphLaunch")))
        .filter_map(corr)
        .collect();
    let mut r = Raw {
        per_launch: BTreeMap::new(),
        kernels: Vec::new(),
        steps: Vec::new(),
    };
    for e in &ev {
        let cat = e.cat.as_deref().unwrap_or("");
        let (ts, dur) = (e.ts.unwrap_or(0.0), e.dur.unwrap_or(0.0));
        if e.name
            .as_deref()
            .is_some_and(|n| n.starts_with("ProfilerStep#"))
            && cat != "gpu_user_annotation"
        {
            r.steps.push((ts, ts + dur));
        }
        if !matches!(cat, "kernel" | "Kernel" | "gpu_memcpy" | "gpu_memset") {
            continue;
        }
        let replayed = corr(e).is_some_and(|c| launches.contains(&c));
        if cat.eq_ignore_ascii_case("kernel") {
            let device = e.args.as_ref().and_then(|a| a.device).unwrap_or(0);
            r.kernels.push((device, ts, ts + dur, replayed));
        }
        if replayed {
            let x = r.per_launch.entry(corr(e).unwrap_or(0)).or_default();
            x.0 += 1;
            x.1 += dur * 1e3;
            x.2.push((ts, ts + dur));
        }
    }
    Some(r)
}

fn union_us(mut v: Vec<(f64, f64)>, lo: f64, hi: f64) -> f64 {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut tot, mut cur) = (0.0, None::<(f64, f64)>);
    for (a, b) in v {
        let (a, b) = (a.max(lo), b.min(hi));
        if b <= a {
            continue;
        }
        cur = match cur {
            Some((x, y)) if a <= y => Some((x, y.max(b))),
            Some((x, y)) => {
                tot += y - x;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    tot + cur.map_or(0.0, |(x, y)| y - x)
}

fn check(file: &str, want_launches: usize, want_kernels: u64) {
    let path = format!("{}/{file}", corpus());
    if tracelight_testkit::existing(std::path::Path::new(&path)).is_none() {
        return;
    }
    let Some(r) = raw(&path) else {
        panic!("{path}: unreadable");
    };
    let bytes = std::fs::read(&path).unwrap();
    let Ok(Loaded::Trace(t)) = load_bytes(file, &bytes) else {
        panic!("{file} did not load");
    };
    let g = graphs(&t);
    assert_eq!(
        g.launches.len(),
        r.per_launch.len(),
        "{file}: launches with work"
    );
    assert_eq!(g.launches.len(), want_launches, "{file}");
    let kernels: u64 = r.per_launch.values().map(|x| x.0).sum();
    assert_eq!(g.kernels, kernels, "{file}: replayed GPU work");
    assert_eq!(g.kernels, want_kernels, "{file}");
    let gpu: f64 = r.per_launch.values().map(|x| x.1).sum();
    assert!(
        (g.gpu_ns as f64 - gpu).abs() < 1.0 + 1e-9 * gpu,
        "{file}: {} vs {gpu}",
        g.gpu_ns
    );
    // Per launch, in time order: kernels, GPU time, idle = span - busy.
    let mut want: Vec<(u64, f64, f64)> = r
        .per_launch
        .values()
        .map(|(n, d, iv)| {
            let lo = iv.iter().map(|x| x.0).fold(f64::MAX, f64::min);
            let hi = iv.iter().map(|x| x.1).fold(f64::MIN, f64::max);
            (*n, *d, (hi - lo) - union_us(iv.clone(), lo, hi))
        })
        .collect();
    let mut got: Vec<(u64, f64, f64)> = g
        .launches
        .iter()
        .map(|l| (l.kernels, l.gpu_ns as f64, l.idle_ns as f64 / 1e3))
        .collect();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    got.sort_by(|a, b| a.partial_cmp(b).unwrap());
    for (w, o) in want.iter().zip(&got) {
        assert_eq!(w.0, o.0);
        assert!((w.1 - o.1).abs() < 1.0, "{file}: gpu {w:?} vs {o:?}");
        assert!((w.2 - o.2).abs() < 0.01, "{file}: idle {w:?} vs {o:?}");
    }
    // Utilization counts replayed kernels: our busy time is the union of all kernels in the
    // step window, and more than without the replayed ones.
    let s = gpu_summary(&t);
    let (lo, hi) = if r.steps.is_empty() {
        (f64::MIN, f64::MAX)
    } else {
        (
            r.steps.iter().map(|x| x.0).fold(f64::MAX, f64::min),
            r.steps.iter().map(|x| x.1).fold(f64::MIN, f64::max),
        )
    };
    let devices: BTreeSet<i64> = r.kernels.iter().map(|k| k.0).collect();
    let busy = |with_graphs: bool| -> f64 {
        devices
            .iter()
            .map(|d| {
                union_us(
                    r.kernels
                        .iter()
                        .filter(|k| k.0 == *d && (with_graphs || !k.3))
                        .map(|k| (k.1, k.2))
                        .collect(),
                    lo,
                    hi,
                )
            })
            .sum::<f64>()
            / devices.len() as f64
    };
    let (all, without) = (busy(true), busy(false));
    assert!(
        (s.busy_ns as f64 / 1e3 - all).abs() < 0.01 * all.max(1.0),
        "{file}: busy {} vs {all}",
        s.busy_ns
    );
    assert!(
        all > without,
        "{file}: replayed kernels add busy time ({all} vs {without})"
    );
    let h = gpu_health(&t);
    assert!((h.graph_ns as f64 - gpu).abs() < 1.0 + 1e-9 * gpu);
    assert_eq!(
        h.in_op_ns + h.graph_ns + h.outside_op_ns + h.no_launch_ns,
        h.gpu_ns
    );
    println!(
        "{file}: {} replays, {} kernels, {:.1} us GPU, {:.1} us idle inside; busy {all:.1} us with them, {without:.1} without",
        g.launches.len(),
        g.kernels,
        g.gpu_ns as f64 / 1e3,
        g.idle_ns as f64 / 1e3
    );
}

#[test]
fn a100_torch_compile_graph_replays_are_attributed_and_counted() {
    check("a100_80gb_rank0of16.json.gz", 70, 345);
}

#[test]
fn v100_graph_replays_are_attributed_and_counted() {
    check("trace_diff/test_v100_rank1of2.json.gz", 12, 5046);
}
