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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use crate::commands::run;
    use serde_json::Value;

    const DLRM: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/real/param/dlrm_8rank/"
    );

    /// Two ranks' ETs and traces given out of order: each ET finds its own rank's trace by pid
    /// (rank 0's pid 59811 and rank 1's, read from the files here), and the ET alone still reports
    /// its node count and collectives.
    #[test]
    fn analyze_pairs_each_et_with_the_trace_of_its_process() {
        let et = |r: usize| format!("{DLRM}et/dlrm_eg_{r}.json.gz");
        let Ok(dir) = std::fs::read_dir(format!("{DLRM}kineto")) else {
            println!("note: {DLRM} absent; skipping");
            return;
        };
        let mut k: Vec<String> = dir
            .flatten()
            .map(|e| e.path().to_string_lossy().into_owned())
            .collect();
        k.sort();
        let args: Vec<String> = vec![
            "analyze".into(),
            et(1),
            k[0].clone(),
            et(0),
            k[1].clone(),
            "--json".into(),
        ];
        let Ok(out) = run(&args) else { panic!() };
        let v: Value = serde_json::from_str(&out).unwrap();
        let pid_of_trace = |path: &str| -> i64 {
            let text = std::fs::read(path).unwrap();
            let t: Value = serde_json::from_slice(&text).unwrap();
            t["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["cat"] == "cpu_op")
                .unwrap()["pid"]
                .as_i64()
                .unwrap()
        };
        let ets = v["et"].as_array().unwrap();
        assert_eq!(ets.len(), 2);
        for f in ets {
            assert_eq!(
                f["pid"].as_i64().unwrap(),
                pid_of_trace(f["trace"].as_str().unwrap())
            );
            let l = &f["link"];
            // These traces predate `Record function id`: every op is reported as missing it.
            assert_eq!(l["linked"], 0);
            assert_eq!(l["kineto_rf_missing"], l["kineto_ops"]);
        }
        let files = v["files"].as_array().unwrap();
        assert_eq!(files.len(), 4);
        assert!(files
            .iter()
            .any(|f| f["format"] == "chakra_et" && f["events"] == 1675));
        // Existing fields are still there for the traces.
        assert!(v["ops"].is_array() && v["ranks"].is_array());
        let Ok(md) = run(&["summary".to_owned(), et(0)]) else {
            panic!()
        };
        assert!(
            md.contains("# Execution trace") && md.contains("| allreduce | 3 |"),
            "{md}"
        );
    }
}
