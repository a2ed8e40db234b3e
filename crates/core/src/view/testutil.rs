//! Tiny traces for the view tests, built through the real Kineto reader.

use crate::ingest::{load_bytes, Loaded};
use crate::model::Trace;

/// `(name, cat, tid, ts_us, dur_us)` complete events on pid 1 (kernels on pid 0, stream `tid`).
pub fn trace_of(ev: &[(&str, &str, i64, f64, f64)]) -> Trace {
    let mut parts = Vec::new();
    for (name, cat, tid, ts, dur) in ev {
        let gpu = *cat == "kernel";
        let pid = if gpu { 0 } else { 1 };
        let args = if gpu {
            format!(r#","args":{{"device":0,"stream":{tid}}}"#)
        } else {
            String::new()
        };
        parts.push(format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur}{args}}}"#
        ));
    }
    trace_json(&parts.join(","))
}

/// A trace from the text of its `traceEvents` entries.
pub fn trace_json(events: &str) -> Trace {
    let json = format!(r#"{{"traceEvents":[{events}]}}"#);
    match load_bytes("t.json", json.as_bytes()) {
        Ok(Loaded::Trace(t)) => *t,
        _ => Trace::default(),
    }
}
