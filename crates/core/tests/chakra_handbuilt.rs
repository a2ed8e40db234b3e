//! Hand-built execution traces whose answers are known by construction: data dependencies, every
//! link outcome (linked, time, name, missing, zero, absent, duplicate), and wrong shapes, each of
//! which must give an error or warning naming the file — never a panic.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use tracelight_core::analysis::et::{details, summary, Producers};
use tracelight_core::analysis::et_link::{link, LinkReport};
use tracelight_core::ingest::chakra::read_chakra;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::exec_trace::ExecTrace;
use tracelight_core::model::Trace;
use tracelight_core::warnings::WarningKind;

fn node(id: i64, name: &str, parent: i64, rf: i64, ins: &[i64], outs: &[i64]) -> String {
    let t = |ids: &[i64]| {
        let v: Vec<String> = ids
            .iter()
            .map(|i| format!("[{i},{},0,4,4,\"cuda:0\"]", i + 100))
            .collect();
        let ty = vec!["\"Tensor(float)\""; ids.len()].join(",");
        let sh = vec!["[2,2]"; ids.len()].join(",");
        let st = vec!["[2,1]"; ids.len()].join(",");
        format!(
            "{{\"values\":[{}],\"shapes\":[{sh}],\"types\":[{ty}],\"strides\":[{st}]}}",
            v.join(",")
        )
    };
    format!(
        "{{\"id\":{id},\"name\":\"{name}\",\"ctrl_deps\":{parent},\"inputs\":{},\"outputs\":{},\
         \"attrs\":[{{\"name\":\"rf_id\",\"type\":\"uint64\",\"value\":{rf}}},\
         {{\"name\":\"op_schema\",\"type\":\"string\",\"value\":\"{name}(Tensor self) -> Tensor\"}}]}}",
        t(ins),
        t(outs)
    )
}

/// Tensors are named by their `tensor_id` (storage = id + 100).
fn et() -> String {
    let nodes = [
        node(
            2,
            "[pytorch|profiler|execution_trace|thread]",
            1,
            0,
            &[],
            &[],
        ),
        node(3, "aten::empty", 2, 10, &[], &[100]),
        node(4, "aten::fill_", 2, 11, &[100], &[100]),
        node(5, "aten::add", 2, 12, &[100, 101], &[102]),
        node(7, "aten::relu", 6, 14, &[102], &[103]),
        node(6, "outer", 2, 13, &[], &[103]),
        node(8, "aten::neg", 2, 15, &[103], &[]),
        node(10, "aten::copy_", 9, 17, &[104], &[]),
        node(9, "wrapper", 2, 16, &[], &[104]),
    ];
    format!(
        "{{\"schema\":\"1.1.1-chakra.0.0.4\",\"pid\":1,\"time\":\"t\",\"start_ts\":5,\"nodes\":[{}],\"finish_ts\":9}}",
        nodes.join(",\n")
    )
}

fn load_et(name: &str, text: &str) -> ExecTrace {
    match load_bytes(name, text.as_bytes()) {
        Ok(Loaded::ExecTrace(e)) => *e,
        Ok(o) => panic!("{:?}", o.format()),
        Err(e) => panic!("{e}"),
    }
}

fn row(et: &ExecTrace, name: &str) -> usize {
    (0..et.nodes.len())
        .find(|&i| et.str(et.nodes.name[i]) == name)
        .unwrap()
}

#[test]
fn data_dependencies_name_the_last_writer_that_is_not_an_ancestor() {
    let et = load_et("deps.json", &et());
    let p = Producers::build(&et);
    let producer = |n: &str, k: usize| details(&et, &p, row(&et, n)).inputs[k].producer.clone();
    // fill_ reads what empty made; add reads fill_'s in-place write, not empty's.
    assert_eq!(producer("aten::fill_", 0), Some((3, "aten::empty".into())));
    assert_eq!(producer("aten::add", 0), Some((4, "aten::fill_".into())));
    assert_eq!(
        producer("aten::add", 1),
        None,
        "tensor 101 is never produced"
    );
    assert_eq!(producer("aten::relu", 0), Some((5, "aten::add".into())));
    // Both outer (id 6) and its child relu (7) list tensor 103: the later writer wins.
    assert_eq!(producer("aten::neg", 0), Some((7, "aten::relu".into())));
    // copy_ reads its own parent's output: an ancestor is no producer.
    assert_eq!(producer("aten::copy_", 0), None);
    let d = details(&et, &p, row(&et, "aten::add"));
    assert_eq!(
        d.parent,
        Some((2, "[pytorch|profiler|execution_trace|thread]".into()))
    );
    assert_eq!(d.op_schema, "aten::add(Tensor self) -> Tensor");
    assert_eq!(
        (d.inputs[1].shape.as_str(), d.inputs[1].strides.as_str()),
        ("[2,2]", "[2,1]")
    );
    let t = d.inputs[1].tensor.as_ref().unwrap();
    assert_eq!(
        (t.tensor.tensor_id, t.tensor.storage_id, t.device.as_str()),
        (101, 201, "cuda:0")
    );
    let s = summary(&et);
    assert_eq!((s.nodes, s.ops, s.tensors), (9, 8, 12));
}

fn kineto(ops: &[(&str, i64, i64, Option<i64>)]) -> Trace {
    let evs: Vec<String> = ops
        .iter()
        .map(|(name, ts, dur, rf)| {
            let rf = rf.map_or(String::new(), |r| format!(",\"Record function id\":{r}"));
            format!(
                "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"{name}\",\"pid\":1,\"tid\":1,\"ts\":{ts},\"dur\":{dur},\"args\":{{\"External id\":1{rf}}}}}"
            )
        })
        .collect();
    let text = format!("{{\"traceEvents\":[{}]}}", evs.join(","));
    match load_bytes("k.json", text.as_bytes()) {
        Ok(Loaded::Trace(t)) => *t,
        _ => panic!(),
    }
}

#[test]
fn every_link_outcome_is_counted_once() {
    let et = load_et("deps.json", &et());
    let t = kineto(&[
        ("aten::empty", 10, 5, Some(10)),
        ("aten::add", 20, 5, Some(12)),
        ("outer", 100, 50, Some(13)),
        ("aten::relu", 500, 10, Some(14)), // outside outer, its ET parent: time mismatch
        ("aten::NEG", 40, 1, Some(15)),    // name mismatch
        ("aten::mul", 50, 1, None),        // no Record function id
        ("aten::div", 52, 1, Some(0)),     // id 0
        ("aten::sub", 54, 1, Some(99)),    // absent from the ET
        ("aten::empty", 30, 5, Some(10)),  // a second op with id 10
    ]);
    let l = link(&t, &et);
    let want = LinkReport {
        kineto_ops: 9,
        et_ops: 8,
        linked: 3,
        kineto_rf_missing: 1,
        kineto_rf_zero: 1,
        kineto_not_in_et: 1,
        kineto_rf_duplicate: 1,
        name_mismatch: 1,
        time_mismatch: 1,
        et_not_in_kineto: 5,
    };
    assert_eq!(l.report, want);
    let add = (0..t.slices.len())
        .find(|&i| t.str(t.slices.name[i]) == "aten::add")
        .unwrap();
    let n = l.node_of(add as u32).unwrap() as usize;
    assert_eq!(et.nodes.id[n], 5);
    assert_eq!(l.slice_of(n as u32), Some(add as u32));
}

fn err(name: &str, text: &str) -> String {
    match load_bytes(name, text.as_bytes()) {
        Ok(_) => panic!("{text} loaded"),
        Err(e) => e.to_string(),
    }
}

fn warned(text: &str, want: &str) -> ExecTrace {
    let et = load_et("w.json", text);
    let lines = et.warnings.lines().join("\n");
    assert!(lines.contains(want), "{text}: {lines}");
    et
}

#[test]
fn wrong_shapes_give_a_named_error_or_warning() {
    let e = err(
        "bad_nodes.json",
        r#"{"schema":"1.1.1","pid":1,"nodes":{"id":1}}"#,
    );
    assert!(
        e.contains("bad_nodes.json") && e.contains("`nodes` is not an array"),
        "{e}"
    );
    let e = err("num.json", r#"{"schema":"1.1.1","nodes":5}"#);
    assert!(e.contains("num.json") && e.contains("`nodes`"), "{e}");
    let e = err(
        "none.json",
        r#"{"nodes_x":[], "schema":"1.0.1", "nodes" : "x"}"#,
    );
    assert!(e.contains("none.json"), "{e}");
    let et = warned(
        r#"{"schema":"1.1.1","nodes":[{"name":"a"},{"id":1,"name":"b"}]}"#,
        "without an integer `id`",
    );
    assert_eq!(et.nodes.len(), 1);
    let et = warned(
        r#"{"schema":"1.1.1","nodes":[5,{"id":1,"name":"b"}]}"#,
        "not an object",
    );
    assert_eq!(et.nodes.len(), 1);
    let et = warned(
        r#"{"schema":"1.1.1","nodes":[{"id":1,"name":"b","inputs":"x"}]}"#,
        "neither array nor object",
    );
    assert_eq!(et.nodes.len(), 1);
    warned(
        r#"{"schema":"1.1.1","nodes":[{"id":1,"attrs":{"name":"rf_id"}}]}"#,
        "`attrs` is not an array",
    );
    warned(
        r#"{"schema":"1.1.1","nodes":[{"id":1,"attrs":[{"value":3}]}]}"#,
        "without name or value",
    );
    let et = warned(
        r#"{"schema":"1.1.1","nodes":[{"id":1,"name":},{"id":2}]}"#,
        "node skipped",
    );
    assert_eq!(et.nodes.id, vec![2]);
    // A tensor-typed value of the wrong shape is kept as text, not decoded.
    let et = load_et(
        "t.json",
        r#"{"schema":"1.1.1","nodes":[{"id":1,"inputs":{"values":[[1,2]],"types":["Tensor(float)"]}}]}"#,
    );
    assert_eq!(
        (et.args.tensor[0], et.str(et.args.value[0])),
        (None, "[1,2]")
    );
}

#[test]
fn deep_nesting_and_huge_values_are_bounded() {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let text = format!(
        r#"{{"schema":"1.1.1","nodes":[{{"id":1,"inputs":{{"values":[{deep}],"types":["GenericList"]}}}}]}}"#
    );
    let et = load_et("deep.json", &text);
    assert_eq!(et.nodes.len(), 1);
    assert!(et.str(et.args.value[0]).chars().count() <= 1025);
}

#[test]
fn a_trace_cut_anywhere_keeps_the_nodes_before_the_cut() {
    let full = et();
    let whole = load_et("full.json", &full).nodes.len();
    for pct in 1..100 {
        let cut = &full.as_bytes()[..full.len() * pct / 100];
        match read_chakra(cut) {
            Ok(e) => {
                assert!(e.nodes.len() < whole, "{pct}%");
                assert_eq!(e.warnings.count(WarningKind::Truncated), 1, "{pct}%");
            }
            Err(e) => assert!(e.is_truncated() || pct < 2, "{pct}%: {e}"),
        }
    }
}
