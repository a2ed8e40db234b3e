//! Args left in the file (`KinetoReader::leave_args_in_file`, what the page's reader workers do):
//! each slice's record says where its whole args object lies, and the bytes there are the args
//! the full reader keeps; the keys kept are enough for every analysis, which gives the same
//! answer as on the full model; the sharded reader leaves the same args at the same offsets
//! wherever the cuts fall. The full reader is the reference (its own tests check it against
//! python's json module, torch and HTA).

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kineto_corpus as corpus;

use serde_json::{Map, Value};
use tracelight_core::ingest::kineto::{read_in_shards_with, read_kineto, KinetoReader};
use tracelight_core::model::arg_keys;
use tracelight_core::model::Trace;
use tracelight_core::report::analysis::Analysis;

/// Slices whose args mix kept keys (a sequence number, a stream, `CallFrom`), columns
/// (ids, shapes, a kernel's grid) and display-only keys (a call stack with escapes and
/// brackets); a collective, whose args are kept whole; an instant, whose args are always kept.
const HAND: &str = r#"{"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
   "args": {"External id": 3, "Input Dims": [[2, 3], [3, 4]], "Sequence number": 17, "Fwd thread id": 0,
            "Call stack": "model.py(12): forward\ntrain.py(3): \"main\" {x: [1]}", "Python id": 4}},
  {"ph": "X", "cat": "python_function", "name": "model.py(12): forward", "pid": 1, "tid": 1, "ts": 9, "dur": 8,
   "args": {"Python parent id": 1, "Python id": 2, "CallFrom": "train.py:3", "Python module": "torch.nn.modules.linear.Linear_0"}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 11, "dur": 1,
   "args": {"Sequence number": 18}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 1,
   "args": {"correlation": 8, "cbid": 211, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 14, "dur": 2,
   "args": {"device": 0, "stream": 7, "correlation": 8, "grid": [1, 2, 1], "block": [32, 1, 1], "queued": 0}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0, "tid": 7, "ts": 17, "dur": 2,
   "args": {"device": 0, "stream": 7, "Collective name": "allreduce", "Process Group Name": "0", "Seq": 4, "dtype": "Float"}},
  {"ph": "i", "name": "mark", "s": "t", "pid": 1, "tid": 1, "ts": 13, "args": {"note": "kept", "Ev Idx": 3}}
]}"#;

fn lean(bytes: &[u8]) -> Trace {
    let mut r = KinetoReader::new();
    r.leave_args_in_file();
    r.push(bytes).unwrap();
    r.finish().unwrap()
}

fn object(text: &str, what: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => m,
        other => panic!("{what}: not an object: {other:?} from {text:?}"),
    }
}

/// Checks `lean` against `full` (both read from `bytes`); returns how many slices left args in
/// the file.
fn check(bytes: &[u8], full: &Trace, lean: &Trace, what: &str) -> usize {
    assert_eq!(lean.slices.len(), full.slices.len(), "{what}");
    assert!(lean.slices.start == full.slices.start && lean.slices.name == full.slices.name);
    let mut left = 0;
    for i in 0..full.slices.len() {
        let stored_full = full.slice_args_stored(i);
        let stored_lean = lean.slice_args_stored(i);
        let Some((off, len)) = lean.slice_args_in_file(i) else {
            assert_eq!(
                stored_lean, stored_full,
                "{what}: slice {i} keeps every arg"
            );
            assert_eq!(full.slice_args_in_file(i), None);
            continue;
        };
        left += 1;
        let (off, len) = (off as usize, len as usize);
        let text = std::str::from_utf8(&bytes[off..off + len]).expect("args are text");
        let in_file = object(text, what);
        let full_rest = object(&stored_full, what);
        // The file's object has every arg the full model stored, as written...
        for (k, v) in &full_rest {
            assert_eq!(in_file.get(k), Some(v), "{what}: slice {i} key {k}");
        }
        // ...and the rest are the ones the model keeps in columns.
        for k in in_file.keys() {
            assert!(
                full_rest.contains_key(k) || arg_keys::ALL.contains(&k.as_str()),
                "{what}: slice {i}: {k} neither stored nor a column"
            );
        }
        // What the lean model kept is a part of it, and something was left out.
        let kept = object(&stored_lean, what);
        for (k, v) in &kept {
            assert_eq!(full_rest.get(k), Some(v), "{what}: slice {i} kept {k}");
        }
        assert!(
            kept.len() < full_rest.len(),
            "{what}: slice {i} left nothing"
        );
    }
    // Never more memory than keeping them all.
    assert!(lean.args.len() <= full.args.len(), "{what}: args text grew");
    let (a, b) = (
        format!("{:?}", Analysis::of(what, lean)),
        format!("{:?}", Analysis::of(what, full)),
    );
    if let Some(k) = a.bytes().zip(b.bytes()).position(|(x, y)| x != y) {
        let from = k.saturating_sub(300);
        panic!(
            "{what}: analyses differ at {k}:\n lean …{}…\n full …{}…",
            &a[from..(k + 200).min(a.len())],
            &b[from..(k + 200).min(b.len())]
        );
    }
    assert_eq!(a.len(), b.len(), "{what}: analyses");
    left
}

#[test]
fn hand_built_args_left_in_the_file_are_found_there_and_analyses_agree() {
    let bytes = HAND.as_bytes();
    let full = read_kineto(bytes).unwrap();
    let lean = lean(bytes);
    // aten::mm (a call stack, a Python id) and the python function (a module name, two Python
    // ids); not the launch (`cbid`) nor the kernel (`queued`), whose few bytes are worth less than
    // saying where they are.
    assert_eq!(check(bytes, &full, &lean, "hand"), 2);
    let find = |t: &Trace, name: &str| {
        (0..t.slices.len())
            .find(|&i| t.str(t.slices.name[i]) == name)
            .unwrap()
    };
    let mm = find(&lean, "aten::mm");
    assert_eq!(lean.slice_arg_int(mm, "Sequence number"), Some(17));
    assert_eq!(lean.slice_arg_int(mm, "Python id"), None);
    assert_eq!(full.slice_arg_int(mm, "Python id"), Some(4));
    let (off, len) = lean.slice_args_in_file(mm).unwrap();
    let at = HAND.find("{\"External id\": 3").unwrap();
    assert_eq!(
        (off as usize, len as usize),
        (at, HAND[at..].find("}},").unwrap() + 1)
    );
    let py = find(&lean, "model.py(12): forward");
    assert_eq!(lean.slice_arg_str(py, "CallFrom"), Some("train.py:3"));
    // Kept whole: only a kept key (add), a few bytes (the launch, the kernel), a collective.
    for name in [
        "aten::add",
        "cudaLaunchKernel",
        "gemm",
        "ncclKernel_AllReduce_RING_LL_Sum_float",
    ] {
        assert_eq!(lean.slice_args_in_file(find(&lean, name)), None, "{name}");
    }
    assert!(
        full.slice_args(mm).contains("Call stack") && !lean.slice_args(mm).contains("Call stack")
    );
    // Instants keep theirs.
    let texts = |t: &Trace| -> Vec<String> {
        t.instants
            .args
            .iter()
            .map(|&r| t.args_text(r).into_owned())
            .collect()
    };
    assert_eq!(texts(&lean), texts(&full));
    assert_eq!(texts(&lean), [r#"{"note":"kept","Ev Idx":3}"#]);
}

#[test]
fn every_corpus_trace_leaves_its_args_where_they_are_and_analyses_agree() {
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    let (mut traces, mut left) = (0, 0);
    let mut call_stacks = None;
    for (rel, bytes) in corpus() {
        let Ok(full) = read_kineto(&bytes) else {
            continue;
        };
        let lean = lean(&bytes);
        traces += 1;
        left += check(&bytes, &full, &lean, &rel);
        if rel.contains("resnet50_v100_2021-06_num_workers_0") {
            call_stacks = Some((full.args.len(), lean.args.len()));
        }
    }
    assert!(traces >= 30, "{traces} traces");
    assert!(left > 10_000, "{left} slices left args in their file");
    // The 2021 ResNet trace's Python call stacks (~12 MB of its 35 MB) stay in the file.
    let (full, lean) = call_stacks.expect("the 2021 ResNet trace is in the corpus");
    assert!(lean * 4 < full, "args text {full} -> {lean}");
}

#[test]
fn shards_leave_the_same_args_at_the_same_offsets() {
    let bytes = HAND.as_bytes();
    let one = lean(bytes);
    for c in 1..bytes.len() {
        let (t, _) = read_in_shards_with(bytes, &[c], true);
        common::assert_same_model(&t.unwrap(), &one, &format!("cut at {c}"));
    }
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    for (rel, bytes) in corpus()
        .into_iter()
        .filter(|(r, _)| r.contains("resnet50_v100"))
    {
        let one = lean(&bytes);
        let cuts: Vec<usize> = (1..8).map(|k| bytes.len() * k / 8).collect();
        let (t, _) = read_in_shards_with(&bytes, &cuts, true);
        common::assert_same_model(&t.unwrap(), &one, &rel);
    }
}
