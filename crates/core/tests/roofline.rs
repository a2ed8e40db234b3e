//! FLOPs and bytes per op family (`analysis::op_cost`, through the roofline's call costs) against
//! torch's own answers for the same calls: `tests/fixtures/torch-2.15-cpu/roofline_ops.*` is one
//! CPU trace of 27 cases (each in `record_function("case:NAME")`) and, from the same torch
//! 2.15, `torch.utils.flop_counter.FlopCounterMode`'s total per case and the `nbytes` of the
//! tensors each forward case reads and writes (`scripts/gen_roofline.py` says how).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use tracelight_core::analysis::op_cost::Family;
use tracelight_core::analysis::ops::op_tree;
use tracelight_core::analysis::roofline::{call_costs, CallCost};
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::{SliceKind, Trace};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/torch-2.15-cpu");

fn load() -> (Box<Trace>, serde_json::Value) {
    let path = format!("{DIR}/roofline_ops.pt.trace.json.gz");
    let bytes = std::fs::read(&path).unwrap();
    let Ok(Loaded::Trace(t)) = load_bytes(&path, &bytes) else {
        panic!("{path} must load")
    };
    let r = std::fs::read_to_string(format!("{DIR}/roofline_ops.reference.json")).unwrap();
    (t, serde_json::from_str(&r).unwrap())
}

/// The call costs inside each `case:NAME` annotation, by case name.
fn by_case(t: &Trace) -> BTreeMap<String, Vec<CallCost>> {
    let tree = op_tree(t).into();
    let calls = call_costs(t, &tree);
    let s = &t.slices;
    let mut out: BTreeMap<String, Vec<CallCost>> = BTreeMap::new();
    for i in 0..s.len() {
        let name = t.str(s.name[i]);
        let Some(case) = name.strip_prefix("case:") else {
            continue;
        };
        if s.kind[i] != SliceKind::UserAnnotation {
            continue;
        }
        let inside: Vec<CallCost> = calls
            .iter()
            .filter(|c| {
                let k = c.slice as usize;
                s.track[k] == s.track[i] && s.start[k] >= s.start[i] && s.end(k) <= s.end(i)
            })
            .cloned()
            .collect();
        out.insert(case.to_owned(), inside);
    }
    out
}

/// GEMM, convolution and attention FLOPs per case, forward and backward, equal
/// FlopCounterMode's total for the same calls exactly; cases FlopCounterMode gives 0 have no
/// matrix-family FLOPs here either.
#[test]
fn matrix_flops_equal_flop_counter_mode() {
    let (t, r) = load();
    let cases = by_case(&t);
    let refs = r["cases"].as_object().unwrap();
    assert_eq!(cases.len(), refs.len(), "every case recorded");
    for (name, want) in refs {
        let want = want["flops"].as_f64().unwrap();
        let got: f64 = cases[name]
            .iter()
            .filter(|c| c.family.is_matrix())
            .map(|c| c.flops)
            .sum();
        assert_eq!(got, want, "{name}: FLOPs {got} vs FlopCounterMode {want}");
    }
    // The backward cases are counted at the ops torch's autograd ran: two `aten::mm` for
    // addmm's backward, `aten::convolution_backward`, the flash-attention backward.
    let fams = |c: &str| -> Vec<Family> { cases[c].iter().map(|x| x.family).collect() };
    assert_eq!(
        fams("linear_bwd")
            .iter()
            .filter(|f| **f == Family::Gemm)
            .count(),
        3
    );
    assert!(fams("sdpa_bwd").contains(&Family::Attention));
}

/// The bytes each forward case must read and write equal the `nbytes` of its tensors, inputs
/// and outputs, as torch reports them.
#[test]
fn bytes_equal_the_tensors_nbytes() {
    let (t, r) = load();
    let cases = by_case(&t);
    let mut checked = 0;
    for (name, want) in r["cases"].as_object().unwrap() {
        let Some(want) = want.get("bytes").and_then(|b| b.as_f64()) else {
            continue;
        };
        let got: f64 = cases[name]
            .iter()
            .map(|c| c.bytes.unwrap_or(f64::NAN))
            .sum();
        assert_eq!(got, want, "{name}: bytes {got} vs torch {want}");
        checked += 1;
    }
    assert_eq!(checked, 22);
}

/// The families no FlopCounterMode formula covers, against formulas by hand on the fixture's
/// shapes: one FLOP per output element (elementwise) or per input element (reductions, norms),
/// none for copies.
#[test]
fn other_families_follow_their_formulas() {
    let (t, _) = load();
    let cases = by_case(&t);
    let one = |case: &str| -> (Family, f64) {
        let v = &cases[case];
        assert_eq!(v.len(), 1, "{case}: one outermost op");
        (v[0].family, v[0].flops)
    };
    assert_eq!(one("add"), (Family::Elementwise, 64.0 * 1024.0));
    assert_eq!(one("relu"), (Family::Elementwise, 32.0 * 256.0));
    assert_eq!(one("sum_dim"), (Family::Reduction, 64.0 * 1024.0));
    assert_eq!(one("softmax"), (Family::Reduction, 32.0 * 256.0));
    assert_eq!(one("layer_norm"), (Family::Norm, 32.0 * 256.0));
    assert_eq!(one("clone"), (Family::Copy, 0.0));
    assert_eq!(one("to_bf16"), (Family::Copy, 0.0));
    // embedding(weight [1000, 64], idx [32, 16]): 512 rows of 64 fp32 read and written, 512
    // int64 indices read.
    let e = &cases["embedding"][0];
    assert_eq!(e.family, Family::Embedding);
    assert_eq!(e.bytes, Some(2.0 * 512.0 * 64.0 * 4.0 + 512.0 * 8.0));
    // cat([h, h*1]) of two [32, 256] fp32: both read, [64, 256] written.
    let cat = cases["cat"]
        .iter()
        .find(|c| c.family == Family::Copy)
        .unwrap();
    assert_eq!(cat.bytes, Some(2.0 * 2.0 * 32.0 * 256.0 * 4.0));
}
