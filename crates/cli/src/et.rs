//! Execution traces in `summary` / `analyze`: alone they report node counts, op mix and
//! collectives; given with their Kineto trace (same `pid`, or the only trace and the only ET) they
//! also report the link figures, under `"et"` in the JSON.

use serde_json::{json, Value};
use tracelight_core::analysis::et::summary;
use tracelight_core::analysis::et_link::{link, same_process, LinkReport};
use tracelight_core::model::exec_trace::ExecTrace;
use tracelight_core::model::Trace;
use tracelight_core::report::et::et_markdown;

/// The execution traces given, and the traces they may link to, borrowed from the loaded files.
#[derive(Default)]
pub struct EtFiles<'a> {
    ets: Vec<(String, &'a ExecTrace)>,
    traces: Vec<(String, &'a Trace)>,
}

impl<'a> EtFiles<'a> {
    pub fn add(&mut self, path: &str, et: &'a ExecTrace) {
        self.ets.push((path.to_owned(), et));
    }

    /// Keeps a trace for linking (only when several files are given: one trace alone has no ET).
    pub fn keep_trace(&mut self, path: &str, t: &'a Trace) {
        self.traces.push((path.to_owned(), t));
    }

    pub fn is_empty(&self) -> bool {
        self.ets.is_empty()
    }

    /// Each ET with its trace and link figures.
    fn links(&self) -> Vec<Option<(&str, LinkReport)>> {
        self.ets
            .iter()
            .map(|(_, et)| {
                let t = self.traces.iter().find(|(_, t)| same_process(t, et)).or(
                    match (self.ets.len(), self.traces.as_slice()) {
                        (1, [only]) => Some(only),
                        _ => None,
                    },
                )?;
                Some((t.0.as_str(), link(t.1, et).report))
            })
            .collect()
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for ((path, et), l) in self.ets.iter().zip(self.links()) {
            out += &et_markdown(path, &summary(et), l.as_ref().map(|(t, r)| (*t, r)));
            out.push('\n');
        }
        out
    }

    /// Adds the ET files to `files` and `warnings`, and `"et": [{"path", summary…, "trace", "link":
    /// {figures…}}]`, one entry per ET (`trace`/`link` null when no trace of its process was given).
    pub fn extend_json(&self, v: &mut Value) {
        let links = self.links();
        let mut out = Vec::new();
        for ((path, et), l) in self.ets.iter().zip(&links) {
            let s = summary(et);
            if let Some(Value::Array(f)) = v.get_mut("files") {
                f.push(json!({"path": path, "format": "chakra_et", "events": s.nodes}));
            }
            if let Some(Value::Array(w)) = v.get_mut("warnings") {
                w.extend(s.warnings.iter().map(|x| json!(format!("{path}: {x}"))));
            }
            let mut f = json!(s);
            f["path"] = json!(path);
            f["trace"] = json!(l.as_ref().map(|(t, _)| t));
            f["link"] = json!(l.as_ref().map(|(_, r)| r));
            out.push(f);
        }
        v["et"] = Value::Array(out);
    }
}
