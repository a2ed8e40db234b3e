//! The analysis a reader worker computes and hands to the page in sections
//! (`report::analysis_wire`) reads back as exactly the analysis the page would compute itself
//! (`Analysis::of` on the same model): every field, per-slice vectors and floats included, on the
//! GPU fixtures and every Kineto trace of the corpus, and whatever order or damage the sections
//! arrive in gives an error, never a panic. The analysis from its two halves, the steps-and-time
//! half read back from another worker's JSON, is that analysis too.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::inflate;
use tracelight_core::ingest::kineto::read_kineto;
use tracelight_core::report::analysis::{Analysis, Paced, Tables};
use tracelight_core::report::analysis_wire::{sections, Decoder};

fn round_trip(a: &Analysis) -> Analysis {
    let mut d = Decoder::default();
    for s in sections(a).unwrap() {
        d.push(&s).unwrap();
    }
    d.finish().unwrap()
}

/// The whole analysis, field by field: `Debug` prints every field (floats exactly).
fn assert_same(a: &Analysis, b: &Analysis, what: &str) {
    let (x, y) = (format!("{a:#?}"), format!("{b:#?}"));
    if x != y {
        let at = x
            .lines()
            .zip(y.lines())
            .position(|(p, q)| p != q)
            .unwrap_or(0);
        panic!(
            "{what}: the analysis read back differs at line {at}: {:?} vs {:?}",
            x.lines().nth(at),
            y.lines().nth(at)
        );
    }
}

/// Kineto traces with the analyses' every part non-empty somewhere: GPU kernels, steps, memory,
/// modules, autograd pairs (the repo's H100 fixtures), and the corpus's traces.
#[test]
fn every_trace_reads_back_the_same_analysis() {
    let (files, fixture_count) = common::fixtures_and_corpus("analysis_wire corpus");
    let (mut traces, mut anchors) = (0, 0);
    for (name, bytes) in files {
        // Kineto traces only (the list holds ET and other files too); debug builds read a prefix.
        let keep = if cfg!(debug_assertions) {
            3 << 20
        } else {
            usize::MAX
        };
        let Ok(t) = read_kineto(&bytes[..bytes.len().min(keep)]) else {
            continue;
        };
        let a = Analysis::of(&name, &t);
        let b = round_trip(&a);
        assert_same(&b, &a, &name);
        // Two workers' halves: the steps-and-time half through its JSON, and cut short, an error.
        let json = Paced::of(&t).to_json();
        assert!(Paced::from_json(&json[..json.len() - 1]).is_err(), "{name}");
        let paced = Paced::from_json(&json).unwrap();
        let c = Analysis::from_parts(&name, &t, paced, Tables::of(&t));
        assert_same(&c, &a, &format!("{name}, from two halves"));
        traces += 1;
        anchors += usize::from(a.autograd.anchor.len() > 1000);
    }
    assert!(traces >= fixture_count + 20, "{traces} traces checked");
    assert!(
        anchors >= 3,
        "{anchors} traces with per-slice autograd columns"
    );
}

/// The sections of a real analysis, each flipped, cut, dropped or swapped: the decoder gives an
/// analysis or an error, never a panic.
#[test]
fn damaged_sections_are_errors_not_panics() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/torch-2.11-cuda13-h100/gpu_mlp.pt.trace.json.gz"
    );
    let t = read_kineto(&inflate(std::fs::read(p).unwrap())).unwrap();
    let good = sections(&Analysis::of("gpu_mlp", &t)).unwrap();
    let mut errors = 0;
    for s in tracelight_testkit::damaged(&good, 600, 7) {
        let mut d = Decoder::default();
        let r = s
            .iter()
            .try_for_each(|x| d.push(x))
            .and_then(|()| d.finish());
        errors += usize::from(r.is_err());
    }
    assert!(errors > 300, "{errors} of 600 damaged analyses were errors");
}

/// A trace of 4,000 steps, each an op launching a kernel: the lists that grow with the steps
/// (the step table, the idle causes' and the per-step tables) go in chunks, several each, and
/// read back whole; a chunk missing is an error.
#[test]
fn lists_that_grow_with_the_steps_read_back_from_their_chunks() {
    let mut ev = Vec::new();
    for i in 0..4000u64 {
        let t = i * 100;
        ev.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{i}","pid":1,"tid":1,"ts":{t},"dur":90}}"#));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":20}}"#,
            t + 5
        ));
        ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{i}}}}}"#, t + 10));
        ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"gemm_{}","pid":0,"tid":7,"ts":{},"dur":30,"args":{{"device":0,"stream":7,"correlation":{i}}}}}"#, i % 3, t + 20));
    }
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let t = read_kineto(json.as_bytes()).unwrap();
    let a = Analysis::of("steps", &t);
    assert_eq!(a.steps.len(), 4000);
    assert_eq!(a.per_step.steps.len(), 4000);
    assert_eq!(a.idle.steps.len(), 4000);
    let s = sections(&a).unwrap();
    let plain = sections(&Analysis::default()).unwrap().len();
    assert!(
        s.len() >= plain + 6,
        "{} sections, {plain} for an empty analysis",
        s.len()
    );
    assert!(
        s.iter().all(|x| x.len() < 1 << 20),
        "a section of a MB or more"
    );
    assert_same(&round_trip(&a), &a, "4,000 steps");
    // Each JSON array dropped in turn (the chunks among them): an error, never a panic or a
    // shorter list taken as whole.
    let arrays: Vec<usize> = (0..s.len())
        .filter(|&k| s[k].first() == Some(&b'['))
        .collect();
    assert!(arrays.len() >= 6);
    for &k in &arrays {
        let mut d = Decoder::default();
        let r = s
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .try_for_each(|(_, x)| d.push(x))
            .and_then(|()| d.finish());
        assert!(r.is_err(), "section {k} dropped");
    }
}
