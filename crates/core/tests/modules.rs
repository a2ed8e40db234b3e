//! Modules, forward ↔ backward and Python stacks against torch's own answers and the autograd
//! graph, on `tests/fixtures/torch-2.15-cpu/modules.pt.trace.json.gz` (made by
//! `scripts/gen_modules.py`: a model with nested modules, its reference beside it):
//!
//! - every op's Python stack equals torch's `FunctionEvent.stack` (verbose), backward ops
//!   included (torch gives them their forward op's stack);
//! - `key_averages(group_by_stack_n=5)`: per (name, top 5 frames), count and CPU total;
//! - each backward node's module (through our forward pairing) equals the module whose forward
//!   created that autograd node, read from the autograd graph in forward hooks;
//! - the module tree and its call counts equal the hooks' record; the `fwdbwd` flows Kineto drew
//!   agree with our pairs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use tracelight_core::analysis::autograd::{autograd, backward_of, backward_table, is_wrapper};
use tracelight_core::analysis::modules::{module_index, module_table};
use tracelight_core::analysis::ops::op_tree;
use tracelight_core::analysis::source::torch_stack;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::{SliceKind, Trace, NONE};
use tracelight_core::view::flame::{Flame, Options, Scope, Weight};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/torch-2.15-cpu");

fn load() -> (Trace, serde_json::Value) {
    let bytes = std::fs::read(format!("{DIR}/modules.pt.trace.json.gz")).unwrap();
    let Ok(Loaded::Trace(t)) = load_bytes("modules.pt.trace.json.gz", &bytes) else {
        panic!("the fixture did not load as a trace");
    };
    let gz = std::fs::read(format!("{DIR}/modules.reference.json.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    (*t, serde_json::from_str(&text).unwrap())
}

/// torch's row name for an event (`ProfilerStep#3` rows are `ProfilerStep*`).
fn torch_name(n: &str) -> String {
    if n.starts_with("ProfilerStep#") {
        "ProfilerStep*".into()
    } else {
        n.to_owned()
    }
}

fn is_op(k: SliceKind) -> bool {
    matches!(k, SliceKind::CpuOp | SliceKind::UserAnnotation)
}

#[test]
fn every_ops_python_stack_equals_torchs_backward_included() {
    let (t, r) = load();
    let ag = autograd(&t);
    let stacks: Vec<Vec<String>> = serde_json::from_value(r["stacks"].clone()).unwrap();
    let mut want: BTreeMap<(String, Vec<String>), u64> = BTreeMap::new();
    let mut names = BTreeSet::new();
    for e in r["events"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap().to_owned();
        names.insert(name.clone());
        let st = stacks[e["stack"].as_u64().unwrap() as usize].clone();
        *want.entry((name, st)).or_default() += 1;
    }
    // torch's events are its tree's (an op's duplicate only child dropped, as in ops.rs).
    let tree = op_tree(&t);
    let mut got: BTreeMap<(String, Vec<String>), u64> = BTreeMap::new();
    let s = &t.slices;
    for &i in &tree.slice {
        let i = i as usize;
        let name = torch_name(t.str(s.name[i]));
        if !is_op(s.kind[i]) || !names.contains(&name) {
            continue;
        }
        *got.entry((name, torch_stack(&t, &ag, i))).or_default() += 1;
    }
    let backward_keys = want
        .keys()
        .filter(|(_, st)| st.iter().any(|f| f.starts_with("nn.Module: ")))
        .count();
    assert!(want.len() > 100, "{} distinct (op, stack)", want.len());
    assert!(backward_keys > 50);
    let diff: Vec<String> = want
        .iter()
        .filter(|(k, v)| got.get(*k) != Some(v))
        .map(|((n, st), v)| {
            format!(
                "{n} x{v} (ours {:?}): {st:?}",
                got.get(&(n.clone(), st.clone()))
            )
        })
        .chain(
            got.iter()
                .filter(|(k, _)| !want.contains_key(*k))
                .map(|((n, st), v)| format!("ours only: {n} x{v}: {st:?}")),
        )
        .take(12)
        .collect();
    assert!(
        diff.is_empty(),
        "{} differences:\n{}",
        diff.len(),
        diff.join("\n")
    );
}

#[test]
fn group_by_stack_5_matches_key_averages() {
    let (t, r) = load();
    let ag = autograd(&t);
    let tree = op_tree(&t);
    let s = &t.slices;
    // (name, top 5 frames) -> (count, cpu total ns), over the events torch's tree keeps.
    let mut got: BTreeMap<(String, Vec<String>), (u64, i64)> = BTreeMap::new();
    for &i in &tree.slice {
        let i = i as usize;
        if !is_op(s.kind[i]) {
            continue;
        }
        let mut st = torch_stack(&t, &ag, i);
        st.truncate(5);
        let e = got.entry((torch_name(t.str(s.name[i])), st)).or_default();
        e.0 += 1;
        e.1 += s.dur[i];
    }
    let rows = r["rows_by_stack_5"].as_array().unwrap();
    assert!(rows.len() > 100);
    let mut bad = Vec::new();
    for row in rows {
        let name = row["name"].as_str().unwrap().to_owned();
        let st: Vec<String> = serde_json::from_value(row["stack"].clone()).unwrap();
        let count = row["count"].as_u64().unwrap();
        let total_us = row["cpu_time_total"].as_f64().unwrap();
        match got.get(&(name.clone(), st.clone())) {
            Some(&(c, ns)) => {
                let ours = ns as f64 / 1e3;
                if c != count || (ours - total_us).abs() > 0.01 * total_us + 0.01 {
                    bad.push(format!(
                        "{name} {st:?}: torch {count} / {total_us} us, ours {c} / {ours} us"
                    ));
                }
            }
            None => bad.push(format!("{name} {st:?}: missing")),
        }
    }
    assert_eq!(got.len(), rows.len(), "group count");
    assert!(
        bad.is_empty(),
        "{} of {} rows differ:\n{}",
        bad.len(),
        rows.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

#[test]
fn each_backward_node_belongs_to_the_module_whose_forward_created_it() {
    let (t, r) = load();
    let ag = autograd(&t);
    let idx = module_index(&t);
    // (node name, sequence nr) -> the deepest module path whose forward created it.
    let mut owner: BTreeMap<(String, i64), String> = BTreeMap::new();
    for m in r["modules"].as_array().unwrap() {
        let path = m["path"].as_str().unwrap();
        for n in m["autograd_nodes"].as_array().unwrap() {
            let key = (
                n["name"].as_str().unwrap().to_owned(),
                n["sequence_nr"].as_i64().unwrap(),
            );
            let e = owner.entry(key).or_insert_with(|| path.to_owned());
            if path.len() > e.len() {
                *e = path.to_owned();
            }
        }
    }
    let s = &t.slices;
    let (mut checked, mut outside) = (0, 0);
    for (k, &b) in ag.bwd.iter().enumerate() {
        let name = t.str(s.name[b as usize]);
        if is_wrapper(name) {
            continue;
        }
        let seq = t.slice_arg_int(b as usize, "Sequence number").unwrap();
        let f = ag.fwd[k];
        let ours = idx.module_of[f as usize];
        match owner.get(&(name.to_owned(), seq)) {
            Some(path) => {
                assert_ne!(ours, NONE, "{name} #{seq} has no module; torch says {path}");
                assert_eq!(&idx.path(&t, ours), path, "{name} #{seq}");
                checked += 1;
            }
            None => {
                // Created outside every module (the loss): no module on our side either.
                assert_eq!(ours, NONE, "{name} #{seq} -> {}", idx.path(&t, ours));
                outside += 1;
            }
        }
    }
    assert!(checked > 150, "{checked} backward nodes checked");
    assert!(outside > 0);
    // Every node the hooks saw is in the trace's two active steps.
    let seen: BTreeSet<(String, i64)> = ag
        .bwd
        .iter()
        .map(|&b| {
            (
                t.str(s.name[b as usize]).to_owned(),
                t.slice_arg_int(b as usize, "Sequence number").unwrap(),
            )
        })
        .collect();
    assert!(
        owner.keys().all(|k| seen.contains(k)),
        "a hooked node has no backward in the trace"
    );
    assert_eq!(ag.unmatched, 0);
}

#[test]
fn module_tree_and_calls_equal_the_hooks_record() {
    let (t, r) = load();
    let tab = module_table(&t, &autograd(&t));
    let want: BTreeMap<String, u64> = r["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_owned(),
                m["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    // The window holds the profiler's steps only; modules run in the two active steps.
    let got: BTreeMap<String, u64> = tab.rows.iter().map(|r| (r.path.clone(), r.calls)).collect();
    assert_eq!(got, want);
    // Depth-first order: each row's parent is above it, and the paths agree with it.
    for (k, row) in tab.rows.iter().enumerate() {
        if let Some(p) = row.parent {
            assert!((p as usize) < k);
            assert_eq!(
                format!("{}/{}", tab.rows[p as usize].path, row.name),
                row.path
            );
        }
        assert!(
            row.host_self_ns <= row.host_ns && row.host_self_ns >= 0,
            "{}",
            row.path
        );
    }
    // Linear layers ran their forward ops themselves (aten::linear), containers none directly
    // except the root (h.mean) and Attention (matmuls, softmax).
    let row = |p: &str| tab.rows.iter().find(|r| r.path == p).unwrap();
    assert!(row("TinyNet_0/Block_0/Attention_0/Linear_1").ops >= 2);
    assert_eq!(
        row("TinyNet_0/Block_0").ops,
        4,
        "two residual adds per call, two calls"
    );
    // Backward host time reached every Linear through its autograd nodes.
    assert!(tab
        .rows
        .iter()
        .filter(|r| r.class == "Linear")
        .all(|r| r.backward_host_ns > 0));
}

#[test]
fn kinetos_fwdbwd_flows_agree_with_our_pairs() {
    let (t, _) = load();
    let ag = autograd(&t);
    let cat = t.strings.get("fwdbwd").unwrap();
    let mut n = 0;
    for k in 0..t.flows.from.len() {
        if t.flows.cat[k] != cat {
            continue;
        }
        let (f, b) = (t.flows.from[k], t.flows.to[k]);
        assert_eq!(
            ag.forward_of(b),
            Some(f),
            "flow {} -> {}",
            t.str(t.slices.name[f as usize]),
            t.str(t.slices.name[b as usize])
        );
        n += 1;
    }
    assert!(n > 200, "{n} flows");
}

const H100: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/torch-2.11-cuda13-h100"
);

fn json_file(p: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The H100 recording of an MLP (3 x [Linear, GELU] + head Linear, 3 profiled steps): the
/// module view against the TensorBoard plugin's (calls, host time) and its GPU columns against
/// torch's own device time of the ops each module runs (`key_averages`, by External id).
#[test]
fn gpu_mlp_modules_match_the_tb_plugin_and_torchs_device_time() {
    let bytes = std::fs::read(format!("{H100}/gpu_mlp.pt.trace.json.gz")).unwrap();
    let Ok(Loaded::Trace(t)) = load_bytes("gpu_mlp.pt.trace.json.gz", &bytes) else {
        panic!("gpu_mlp did not load");
    };
    let tab = module_table(&t, &autograd(&t));
    let tb = json_file(&format!("{H100}/gpu_mlp.tb_modules.reference.json"));
    let tb_rows = tb["rows"].as_array().unwrap();
    assert_eq!(tab.rows.len(), tb_rows.len());
    for (ours, theirs) in tab.rows.iter().zip(tb_rows) {
        assert_eq!(ours.path, theirs["path"].as_str().unwrap(), "tree order");
        assert_eq!(
            ours.calls,
            theirs["occurences"].as_u64().unwrap(),
            "{}",
            ours.path
        );
        let host = theirs["host_duration_us"].as_f64().unwrap();
        assert!(
            (ours.host_ns as f64 / 1e3 - host).abs() < 1e-3 * host,
            "{}: {} vs {host}",
            ours.path,
            ours.host_ns
        );
        // The plugin shows no device time for eager modules (kineto#915); we do.
        assert_eq!(theirs["device_duration_us"].as_f64(), Some(0.0));
    }
    let torch = json_file(&format!("{H100}/gpu_mlp.reference.json"));
    let dev = |name: &str| -> f64 {
        torch["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .and_then(|r| r["device_time_total"].as_f64())
            .unwrap_or(0.0)
    };
    let sum =
        |class: &str, f: &dyn Fn(&tracelight_core::analysis::modules::ModuleRow) -> i64| -> f64 {
            tab.rows
                .iter()
                .filter(|r| r.class == class)
                .map(|r| f(r) as f64 / 1e3)
                .sum()
        };
    let close = |a: f64, b: f64, what: &str| {
        assert!(
            (a - b).abs() < 0.01 + 1e-4 * b,
            "{what}: ours {a}, torch {b}"
        )
    };
    // Forward: a Linear runs aten::linear, a GELU aten::gelu.
    close(
        sum("Linear", &|r| r.gpu_self_ns),
        dev("aten::linear"),
        "Linear forward",
    );
    close(
        sum("GELU", &|r| r.gpu_self_ns),
        dev("aten::gelu"),
        "GELU forward",
    );
    assert!(dev("aten::linear") > 100.0);
    // Backward, through sequence numbers: AddmmBackward0 (and TBackward0, no kernel) is a
    // Linear's, GeluBackward0 a GELU's; the loss's nodes belong to no module.
    close(
        sum("Linear", &|r| r.backward_gpu_self_ns),
        dev("autograd::engine::evaluate_function: AddmmBackward0")
            + dev("autograd::engine::evaluate_function: TBackward0"),
        "Linear backward",
    );
    close(
        sum("GELU", &|r| r.backward_gpu_self_ns),
        dev("autograd::engine::evaluate_function: GeluBackward0"),
        "GELU backward",
    );
    let root = &tab.rows[0];
    assert_eq!(root.path, "MLP_0");
    close(
        root.gpu_ns as f64 / 1e3,
        dev("aten::linear") + dev("aten::gelu"),
        "MLP_0 forward total",
    );
    // The loss (outside the model), the optimizer and memsets stay outside; nothing is lost.
    let inside = (root.gpu_ns + root.backward_gpu_ns) as f64;
    assert!((inside + tab.outside_gpu_ns as f64 - tab.total_gpu_ns as f64).abs() < 1.0);
    assert!(root.occupancy_pct.is_some_and(|o| o > 0.0 && o <= 100.0));
}

/// Per step: on the H100 MLP (3 profiled steps, every op of the window inside one), each op's
/// time summed over the steps is torch's `cpu_time_total` and each kernel's its device total.
#[test]
fn per_step_times_sum_to_torchs_totals() {
    use tracelight_core::analysis::per_step::per_step;
    let bytes = std::fs::read(format!("{H100}/gpu_mlp.pt.trace.json.gz")).unwrap();
    let Ok(Loaded::Trace(t)) = load_bytes("gpu_mlp.pt.trace.json.gz", &bytes) else {
        panic!("gpu_mlp did not load");
    };
    let p = per_step(&t);
    assert_eq!(p.steps.len(), 3);
    let torch = json_file(&format!("{H100}/gpu_mlp.reference.json"));
    let mut checked = 0;
    for r in torch["rows"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let d = if name.starts_with("aten::") {
            p.op(name)
                .map(|d| (d, r["cpu_time_total"].as_f64().unwrap()))
        } else {
            None
        };
        let Some((d, want)) = d else { continue };
        let got = d.per_step_ns.iter().sum::<i64>() as f64 / 1e3;
        assert!(
            (got - want).abs() <= 0.01 * want + 0.01,
            "{name}: {got} vs torch {want}"
        );
        assert!(d.min_ns <= d.median_ns && d.median_ns <= d.max_ns);
        checked += 1;
    }
    assert!(checked > 20, "{checked} ops");
    // Each kernel's time over the steps: torch's device row of that kernel.
    let mut kernels = 0;
    for r in torch["rows"].as_array().unwrap() {
        if r["device_type"] != "DeviceType.CUDA" {
            continue;
        }
        let Some(d) = p.kernel(r["name"].as_str().unwrap()) else {
            continue;
        };
        let got = d.per_step_ns.iter().sum::<i64>() as f64 / 1e3;
        let want = r["self_device_time_total"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 0.01 * want + 0.01,
            "{}: {got} vs torch {want}",
            d.name
        );
        kernels += 1;
    }
    assert!(kernels > 5, "{kernels} kernels");
}

/// The details panel's provenance on the torch fixture: a backward wrapper names its forward op
/// and that op's module; the forward op lists the wrapper; the stack text has call lines.
#[test]
fn provenance_links_backward_and_forward_both_ways() {
    use tracelight_core::view::details::provenance;
    let (t, r) = load();
    let ag = autograd(&t);
    let s = &t.slices;
    let w = (0..s.len())
        .find(|&i| t.str(s.name[i]) == "autograd::engine::evaluate_function: AddmmBackward0")
        .unwrap();
    let p = provenance(&t, &ag, w);
    let f = p.forward_op.unwrap();
    assert_eq!(t.str(s.name[f as usize]), "aten::addmm");
    let module = p.module.unwrap();
    assert!(
        r["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["path"] == module.as_str() && m["class"] == "Linear"),
        "{module}"
    );
    let fp = provenance(&t, &ag, f as usize);
    assert!(fp.backward_nodes.contains(&(w as u32)));
    assert!(
        fp.stack_text.contains("(called from gen_modules.py:"),
        "{}",
        fp.stack_text
    );
    assert_eq!(fp.module.as_deref(), Some(module.as_str()));
}

/// A module row opens its flame frame: the `nn.Module: X` frame (Python frames kept) holding most
/// of the module's calls, whose breadcrumb's module frames spell the module's path, and which
/// merges only that module's calls. And an Operators row of a backward node names the forward
/// ops it was paired with.
#[test]
fn a_module_row_opens_its_flame_frame_and_backward_rows_name_their_forward_op() {
    let (t, _) = load();
    let ag = autograd(&t);
    let tab = module_table(&t, &ag);
    let g = Flame::build(
        &t,
        &Scope::default(),
        Options {
            weight: Weight::Cpu,
            python: true,
        },
    );
    assert!(!tab.rows.is_empty());
    for m in &tab.rows {
        let n = g
            .frame_of(&m.frames)
            .unwrap_or_else(|| panic!("{}: no frame", m.path));
        assert_eq!(
            g.label(&t, n),
            format!("nn.Module: {}", m.name),
            "{}",
            m.path
        );
        assert!(
            g.occurrences(n).iter().all(|s| m.frames.contains(s)),
            "{}",
            m.path
        );
        let modules: Vec<&str> = g
            .path(n)
            .into_iter()
            .filter_map(|k| g.label(&t, k).strip_prefix("nn.Module: "))
            .collect();
        assert_eq!(modules.join("/"), m.path);
    }
    // No frame holds slices that are not in the graph.
    assert_eq!(g.frame_of(&[]), None);

    let bw = backward_table(&t, &ag);
    let addmm = bw
        .iter()
        .find(|r| r.backward == "AddmmBackward0")
        .expect("AddmmBackward0 in the fixture");
    let want = vec![addmm.forward.as_str()];
    assert_eq!(backward_of(&bw, "AddmmBackward0"), want);
    assert_eq!(
        backward_of(&bw, "autograd::engine::evaluate_function: AddmmBackward0"),
        want
    );
    assert!(backward_of(&bw, "aten::addmm").is_empty());
}
