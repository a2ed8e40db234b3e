//! The per-operator allocation table from `[memory]` events against torch's own
//! `key_averages()` memory columns (`cpu_memory_usage` = net bytes, `self_cpu_memory_usage` =
//! self net bytes) on the generated CPU trace with memory, and a hand-built trace for the counts
//! and the peak contribution.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use tracelight_core::analysis::memory::memory_summary;
use tracelight_core::analysis::memory_ops::op_memory_table;
use tracelight_core::ingest::{load_bytes, Loaded};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn gen() -> String {
    tracelight_testkit::root()
        .join("generated")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn net_bytes_match_torch_key_averages_on_lstm_mem() {
    let stem = "lstm_mem.1795343595561069429";
    let Some(bytes) = tracelight_testkit::read(format!("{}/{stem}.pt.trace.json", gen())) else {
        return;
    };
    let Ok(Loaded::Trace(t)) = load_bytes(stem, &bytes) else {
        panic!("{stem} must load")
    };
    let r: Value =
        serde_json::from_slice(&std::fs::read(format!("{}/{stem}.reference.json", gen())).unwrap())
            .unwrap();
    let table = op_memory_table(&t);
    let mut checked = 0;
    let mut errors = Vec::new();
    for row in r["rows"].as_array().unwrap() {
        let name = row["name"].as_str().unwrap();
        let Some(ours) = table.iter().find(|x| x.name == name && x.device_type == 0) else {
            if row["cpu_memory_usage"].as_i64().unwrap() != 0 {
                errors.push(format!("{name}: missing"));
            }
            continue;
        };
        checked += 1;
        let (net, own) = (
            row["cpu_memory_usage"].as_i64().unwrap(),
            row["self_cpu_memory_usage"].as_i64().unwrap(),
        );
        if ours.net_bytes != net || ours.self_net_bytes != own {
            errors.push(format!(
                "{name}: net {} self {} vs torch {net} {own}",
                ours.net_bytes, ours.self_net_bytes
            ));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(checked >= 10, "{checked}");
}

/// Hand-built: `outer` calls `inner`, which allocates 100 B at 0xa and 50 B at 0xb; `outer` then
/// frees 0xb itself and allocates 30 B at 0xc; the peak (Total Allocated 150) is right after
/// `inner`'s second allocation, so at the peak `inner` holds 150 B and `outer` none.
#[test]
fn counts_self_and_peak_contribution_by_construction() {
    let text = r#"{"traceEvents":[
 {"ph":"X","cat":"cpu_op","name":"outer","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"inner","pid":1,"tid":1,"ts":10,"dur":20},
 {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":11,"args":{"Device Type":0,"Device Id":-1,"Addr":10,"Bytes":100,"Total Allocated":100,"Total Reserved":0}},
 {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":12,"args":{"Device Type":0,"Device Id":-1,"Addr":11,"Bytes":50,"Total Allocated":150,"Total Reserved":0}},
 {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":40,"args":{"Device Type":0,"Device Id":-1,"Addr":11,"Bytes":-50,"Total Allocated":100,"Total Reserved":0}},
 {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":50,"args":{"Device Type":0,"Device Id":-1,"Addr":12,"Bytes":30,"Total Allocated":130,"Total Reserved":0}}
]}"#;
    let Ok(Loaded::Trace(t)) = load_bytes("hand.json", text.as_bytes()) else {
        panic!("hand-built trace must load")
    };
    let m = memory_summary(&t);
    assert_eq!(m[0].peak_allocated_bytes, 150);
    assert!(!m[0].reserved_recorded);
    let table = op_memory_table(&t);
    let inner = table.iter().find(|r| r.name == "inner").unwrap();
    let outer = table.iter().find(|r| r.name == "outer").unwrap();
    assert_eq!(table[0].name, "inner");
    assert_eq!(
        (
            inner.calls,
            inner.allocations,
            inner.frees,
            inner.allocated_bytes,
            inner.net_bytes
        ),
        (1, 2, 0, 150, 150)
    );
    assert_eq!((inner.self_allocated_bytes, inner.peak_bytes), (150, 150));
    assert_eq!(
        (
            outer.allocations,
            outer.frees,
            outer.allocated_bytes,
            outer.freed_bytes,
            outer.net_bytes
        ),
        (3, 1, 180, 50, 130)
    );
    assert_eq!(
        (
            outer.self_allocations,
            outer.self_frees,
            outer.self_net_bytes,
            outer.peak_bytes
        ),
        (1, 1, -20, 0)
    );
    assert!(inner.peak_slice.is_some());
}
