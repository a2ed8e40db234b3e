//! Chakra execution traces: every corpus ET read node for node against serde_json's reading of the
//! same file, links to the paired Kineto traces against counts made independently with serde_json,
//! data dependencies and the time check on hand-built traces whose answers are known by
//! construction, and wrong shapes that must give a named error or warning.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use tracelight_core::analysis::et::{details, summary, Producers};
use tracelight_core::analysis::et_link::link;
use tracelight_core::ingest::{load_bytes, Format, Loaded};
use tracelight_core::model::exec_trace::ExecTrace;
use tracelight_core::model::{Trace, NO_ID};

const ET_FILES: [&str; 14] = [
    "real/hta/simple_add_a100_et.json.gz",
    "real/param/pt2_et.json",
    "real/param/et_pairs/linear_et.json.gz",
    "real/param/et_pairs/resnet_et.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_0.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_1.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_2.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_3.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_4.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_5.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_6.json.gz",
    "real/param/dlrm_8rank/et/dlrm_eg_7.json.gz",
    "generated/mlp_wide_flops_et.et.json",
    // Last: the pair's Kineto side, to prove it is not taken for an ET.
    "generated/mlp_wide_flops_et.json",
];

fn raw(rel: &str) -> Option<Vec<u8>> {
    tracelight_testkit::bytes(rel)
}

fn json(bytes: &[u8]) -> Value {
    let mut text = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut text)
            .unwrap();
    } else {
        text = bytes.to_vec();
    }
    serde_json::from_slice(&text).unwrap()
}

/// Loaded under the name `unknown` through the Loader: the format is decided by content alone.
fn load_et(bytes: &[u8]) -> ExecTrace {
    match load_bytes("unknown", bytes) {
        Ok(Loaded::ExecTrace(e)) => *e,
        Ok(other) => panic!("loaded as {:?}", other.format()),
        Err(e) => panic!("{e}"),
    }
}

fn load_trace(bytes: &[u8]) -> Trace {
    match load_bytes("unknown", bytes) {
        Ok(Loaded::Trace(t)) => *t,
        Ok(other) => panic!("loaded as {:?}", other.format()),
        Err(e) => panic!("{e}"),
    }
}

/// A node field, flat (1.0.1) or in `attrs` (1.1.x).
fn field<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    if let Some(v) = node.get(name) {
        return Some(v);
    }
    node.get("attrs")?
        .as_array()?
        .iter()
        .find(|a| a["name"] == name)
        .map(|a| &a["value"])
}

/// (values, shapes, types, strides) of one side, in either layout.
fn side<'a>(node: &'a Value, io: &str) -> [Vec<&'a Value>; 4] {
    let list = |v: Option<&'a Value>| -> Vec<&'a Value> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    };
    match &node[io] {
        Value::Object(o) => ["values", "shapes", "types", "strides"].map(|k| list(o.get(k))),
        v => [
            list(Some(v)),
            list(node.get(format!("{}_shapes", &io[..io.len() - 1]))),
            list(node.get(format!("{}_types", &io[..io.len() - 1]))),
            list(node.get(format!("{}_strides", &io[..io.len() - 1]))),
        ],
    }
}

/// The reader keeps at most 1024 bytes of a value's text and marks the cut.
fn capped(mut s: String) -> String {
    if s.len() > 1024 {
        s.truncate(1024);
        s.push('…');
    }
    s
}

#[test]
fn every_corpus_et_reads_node_for_node_like_serde_json() {
    let mut checked = 0;
    for rel in ET_FILES {
        let Some(bytes) = raw(rel) else { continue };
        checked += 1;
        if rel.ends_with("mlp_wide_flops_et.json") {
            let Ok(l) = load_bytes("unknown", &bytes) else {
                panic!("{rel}")
            };
            assert_eq!(l.format(), Format::Kineto, "{rel}");
            continue;
        }
        let et = load_et(&bytes);
        let v = json(&bytes);
        assert!(et.warnings.is_empty(), "{rel}: {:?}", et.warnings.lines());
        assert_eq!(et.schema, v["schema"].as_str().unwrap(), "{rel}");
        assert_eq!(et.pid, v["pid"].as_i64().unwrap(), "{rel}");
        assert_eq!(et.start_ts, v["start_ts"].as_i64().unwrap(), "{rel}");
        let nodes = v["nodes"].as_array().unwrap();
        assert_eq!(et.nodes.len(), nodes.len(), "{rel}");
        let n = &et.nodes;
        // Every node of the small files, an even sample of the large ones (CI time).
        let stride = (nodes.len() / 3000).max(1);
        for (i, node) in nodes.iter().enumerate().step_by(stride) {
            let int = |name: &str| field(node, name).and_then(Value::as_i64).unwrap_or(NO_ID);
            let text = |name: &str| field(node, name).and_then(Value::as_str).unwrap_or("");
            assert_eq!(n.id[i], node["id"].as_i64().unwrap(), "{rel} node {i}");
            assert_eq!(et.str(n.name[i]), node["name"].as_str().unwrap());
            let parent = node.get("ctrl_deps").or(node.get("parent"));
            assert_eq!(n.parent[i], parent.and_then(Value::as_i64).unwrap_or(NO_ID));
            assert_eq!(n.rf_id[i], int("rf_id"));
            assert_eq!(n.seq_id[i], int("seq_id"));
            assert_eq!(n.tid[i], int("tid"));
            assert_eq!(et.str(n.op_schema[i]), text("op_schema"));
            for (io, range) in [("inputs", n.inputs[i]), ("outputs", n.outputs[i])] {
                let [vals, shapes, types, strides] = side(node, io);
                let rows = range.0 as usize..range.1 as usize;
                assert_eq!(rows.len(), vals.len().max(types.len()), "{rel} {i} {io}");
                for (k, r) in rows.enumerate() {
                    let ty = types.get(k).and_then(|t| t.as_str()).unwrap_or("");
                    assert_eq!(et.str(et.args.ty[r]), ty);
                    let compact =
                        |x: Option<&&Value>| x.map(|x| capped(x.to_string())).unwrap_or_default();
                    assert_eq!(et.str(et.args.shape[r]), compact(shapes.get(k)));
                    assert_eq!(et.str(et.args.strides[r]), compact(strides.get(k)));
                    let t = et.args.tensor[r];
                    let val = vals.get(k).and_then(|v| v.as_array());
                    if ty.starts_with("Tensor(") && val.is_some_and(|a| a.len() == 6) {
                        let a = val.unwrap();
                        let t = t.unwrap();
                        assert_eq!(
                            [t.tensor_id, t.storage_id, t.offset, t.numel, t.itemsize],
                            [0, 1, 2, 3, 4].map(|j| a[j].as_i64().unwrap())
                        );
                        assert_eq!(et.str(t.device), a[5].as_str().unwrap());
                    } else {
                        assert!(t.is_none(), "{rel} node {i} {io} {k}");
                    }
                }
            }
        }
    }
    tracelight_testkit::checked("ET files", checked, ET_FILES.len());
}

/// The three large ETs (14-24 MB) are read in full by our reader only (serde_json on them costs CI
/// a minute in a debug build): no warning, and the node counts `corpus/real/README.md` lists.
#[test]
fn large_corpus_ets_read_whole_without_warnings() {
    for (rel, nodes) in [
        ("real/param/hf_GPT2_et.json.gz", 27156),
        ("real/param/resnet_1gpu_et_1.1.1-chakra.json.gz", 14392),
        ("real/param/resnet_2gpu_et_1.1.0-chakra.json.gz", 14392),
    ] {
        let Some(bytes) = raw(rel) else { continue };
        let et = load_et(&bytes);
        assert!(et.warnings.is_empty(), "{rel}: {:?}", et.warnings.lines());
        assert_eq!(et.nodes.len(), nodes, "{rel}");
        assert!(et.schema.starts_with("1.1."), "{rel}");
    }
}

/// Kineto ops (`cpu_op`, `user_annotation`, old `Operator`) with their `Record function id`.
fn kineto_ops(v: &Value) -> Vec<(String, Option<i64>)> {
    let evs = match v {
        Value::Array(a) => a,
        v => v["traceEvents"].as_array().unwrap(),
    };
    evs.iter()
        .filter(|e| e["ph"] == "X")
        .filter(|e| {
            let c = e["cat"].as_str().unwrap_or("").to_ascii_lowercase();
            c == "cpu_op" || c == "user_annotation" || c == "operator"
        })
        .map(|e| {
            let rf = e["args"].get("Record function id").and_then(Value::as_i64);
            (e["name"].as_str().unwrap().to_owned(), rf)
        })
        .collect()
}

#[test]
fn pairs_link_every_op_both_files_hold_by_record_function_id() {
    let mut pairs: Vec<(String, String)> = vec![
        (
            "real/hta/simple_add_a100_et.json.gz".into(),
            "real/hta/simple_add_a100_kineto.json.gz".into(),
        ),
        (
            "real/param/et_pairs/linear_et.json.gz".into(),
            "real/param/et_pairs/linear_kineto.json.gz".into(),
        ),
        (
            "real/param/et_pairs/resnet_et.json.gz".into(),
            "real/param/et_pairs/resnet_kineto.json.gz".into(),
        ),
        (
            "generated/mlp_wide_flops_et.et.json".into(),
            "generated/mlp_wide_flops_et.json".into(),
        ),
    ];
    let dir = tracelight_testkit::root().join("real/param/dlrm_8rank/kineto");
    let mut workers: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    workers.sort();
    for w in workers {
        let rank = &w["worker".len()..w.find('_').unwrap()];
        pairs.push((
            format!("real/param/dlrm_8rank/et/dlrm_eg_{rank}.json.gz"),
            format!("real/param/dlrm_8rank/kineto/{w}"),
        ));
    }
    let mut total_linked = 0;
    let mut checked = 0;
    for (e, k) in pairs {
        let (Some(eb), Some(kb)) = (raw(&e), raw(&k)) else {
            continue;
        };
        checked += 1;
        let l = link(&load_trace(&kb), &load_et(&eb));
        // Independently: ET ops by rf_id (the observer's roots excluded), Kineto ops by their arg.
        let ev = json(&eb);
        let et_ops: HashMap<i64, String> = ev["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| {
                !n["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("[pytorch|profiler|execution_")
            })
            .map(|n| {
                (
                    field(n, "rf_id").unwrap().as_i64().unwrap(),
                    n["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let ops = kineto_ops(&json(&kb));
        let missing = ops.iter().filter(|(_, rf)| rf.is_none()).count() as u64;
        let zero = ops.iter().filter(|(_, rf)| *rf == Some(0)).count() as u64;
        let both: HashSet<i64> = ops
            .iter()
            .filter_map(|(name, rf)| rf.filter(|&r| r != 0 && et_ops.get(&r) == Some(name)))
            .collect();
        let r = &l.report;
        println!("{e}: {r:?}");
        assert_eq!(r.kineto_ops, ops.len() as u64, "{k}");
        assert_eq!(r.et_ops, et_ops.len() as u64, "{e}");
        assert_eq!(r.kineto_rf_missing, missing, "{k}");
        assert_eq!(r.kineto_rf_zero, zero, "{k}");
        assert_eq!(r.linked, both.len() as u64, "{e} ↔ {k}");
        assert_eq!(
            r.time_mismatch + r.name_mismatch + r.kineto_rf_duplicate,
            0,
            "{k}"
        );
        assert_eq!(r.et_not_in_kineto, r.et_ops - r.linked);
        total_linked += r.linked;
    }
    // Four named pairs and DLRM's eight ranks.
    tracelight_testkit::checked("ET/Kineto pairs", checked, 12);
    // The generated pair is the one written by a PyTorch that has the key (2.4+): all 750 ops.
    if raw("generated/mlp_wide_flops_et.json").is_some() {
        assert!(total_linked >= 750, "{total_linked}");
    }
}

/// The lookup the details panel uses: every Kineto op of the generated pair finds, through its
/// slice, the ET node with that `rf_id`, whose input types and strides (which Kineto lacks for
/// non-tensor args) are the ET file's own.
#[test]
fn a_kineto_op_finds_its_et_node_with_types_and_strides() {
    let (Some(eb), Some(kb)) = (
        raw("generated/mlp_wide_flops_et.et.json"),
        raw("generated/mlp_wide_flops_et.json"),
    ) else {
        return;
    };
    let (et, t) = (load_et(&eb), load_trace(&kb));
    let l = link(&t, &et);
    let p = Producers::build(&et);
    let ev = json(&eb);
    let by_rf: HashMap<i64, &Value> = ev["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (field(n, "rf_id").unwrap().as_i64().unwrap(), n))
        .collect();
    let mut seen = 0;
    for i in 0..t.slices.len() {
        let rf = t.slices.rf_id.get(i);
        if rf == NO_ID {
            continue;
        }
        let node = l.node_of(i as u32).unwrap() as usize;
        let d = details(&et, &p, node);
        let want = by_rf[&rf];
        assert_eq!(d.id, want["id"].as_i64().unwrap());
        let [_, _, types, strides] = side(want, "inputs");
        let got: Vec<&str> = d.inputs.iter().map(|a| a.ty.as_str()).collect();
        let want_types: Vec<&str> = types.iter().map(|t| t.as_str().unwrap()).collect();
        assert_eq!(got, want_types);
        let got: Vec<String> = d.inputs.iter().map(|a| a.strides.clone()).collect();
        let want_strides: Vec<String> = strides.iter().map(|s| capped(s.to_string())).collect();
        assert_eq!(got, want_strides);
        seen += 1;
    }
    assert_eq!(seen, 750);
    assert_eq!(summary(&et).ops, 750);
}
