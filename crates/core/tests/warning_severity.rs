//! Warnings sorted into what the user must know and what is expected of Kineto (issue 18: "28471 ×
//! flow events without a partner" greeted every real trace as if data were lost).

#![allow(clippy::unwrap_used)]

use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::report::json::Analysis;
use tracelight_core::warnings::{Severity, WarningKind};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn real() -> String {
    tracelight_testkit::root()
        .join("real")
        .to_string_lossy()
        .into_owned()
}

/// A hand-built trace cut mid-event, with one flow start whose end is missing: the cut is a
/// warning, the lone flow is info.
#[test]
fn truncation_is_a_warning_and_an_unpaired_flow_is_info() {
    let text = r#"{"traceEvents":[
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":7}},
 {"ph":"s","cat":"ac2g","name":"ac2g","id":7,"pid":1,"tid":1,"ts":10},
 {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":20,"dur":5},
 {"ph":"X","cat":"cpu_op","name":"aten::mu"#;
    let Ok(Loaded::Trace(t)) = load_bytes("cut.json", text.as_bytes()) else {
        panic!("a truncated trace keeps what parsed")
    };
    assert_eq!(t.warnings.count(WarningKind::UnpairedFlow), 1);
    assert!(t.warnings.count(WarningKind::Truncated) >= 1);
    let a = Analysis::of("cut.json", &t);
    assert!(
        a.warnings.iter().any(|w| w.contains("truncated")),
        "{:?}",
        a.warnings
    );
    assert!(
        a.warnings.iter().all(|w| !w.contains("flow")),
        "{:?}",
        a.warnings
    );
    assert!(a
        .info
        .iter()
        .any(|w| w.starts_with("1 × flow events without a partner")));
    assert_eq!(WarningKind::Truncated.severity(), Severity::Warning);
    assert_eq!(WarningKind::MalformedEvent.severity(), Severity::Warning);
}

/// The A100 rank-0-of-16 trace is whole and loses nothing: nothing for the user to worry about,
/// and the unpaired flow ends (25,773 of them on `cudaEventQuery` calls, which launch nothing —
/// counted with Python over the file) are info.
#[test]
fn a100_rank0_has_no_warnings_only_info() {
    let path = format!("{}/hta/a100_80gb_rank0of16.json.gz", real());
    let Some(bytes) = tracelight_testkit::read(&path) else {
        return;
    };
    let Ok(Loaded::Trace(t)) = load_bytes(&path, &bytes) else {
        panic!("{path} must load")
    };
    let a = Analysis::of(&path, &t);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert!(t.warnings.count(WarningKind::UnpairedFlow) > 25_773);
    assert!(a
        .info
        .iter()
        .any(|w| w.contains("flow events without a partner")));
}
