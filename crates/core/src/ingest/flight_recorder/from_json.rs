//! The JSON form (`_dump_fr_trace_json`, the `dump_nccl_trace_json` control-plane handler):
//! the same fields as the pickle without `frames`, keys sorted, times not yet discovered written
//! as 0, `pg_status` numbers written as strings (`"7"`), and no `entries` key at all when the
//! recorder is empty. A dump holds at most a few thousand entries and is read whole, so it is
//! decoded into a `serde_json::Value` and walked (the parser the Kineto reader already links;
//! a typed `Deserialize` would add its own code to the page for no gain).

use super::{parse_ranks, Builder, DumpForm, FrDump, PgConfig, PgStatus, RawEntry};
use crate::error::{Error, ErrorKind, Result};
use serde_json::Value;

/// A string as it is, or a number as its text (`thread_id`, `pg_config` names, versions).
fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An int, or a string holding one (`pg_status` writes `"7"`).
fn int(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn sizes(v: Option<&Value>) -> Option<Vec<Vec<i64>>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_array()?.iter().map(Value::as_i64).collect())
        .collect()
}

fn strs(v: Option<&Value>) -> Option<Vec<&str>> {
    v?.as_array()?.iter().map(Value::as_str).collect()
}

fn entry(e: &Value) -> RawEntry<'_> {
    let g = |k: &str| e.get(k);
    let pg = g("process_group").and_then(Value::as_array);
    let pg_str = |i: usize| pg.and_then(|p| p.get(i)).and_then(Value::as_str);
    RawEntry {
        record_id: int(g("record_id")),
        pg_id: int(g("pg_id")),
        pg_name: pg_str(0),
        pg_desc: pg_str(1),
        collective_seq_id: int(g("collective_seq_id")).or_else(|| int(g("seq_id"))),
        p2p_seq_id: int(g("p2p_seq_id")),
        op_id: int(g("op_id")),
        profiling_name: g("profiling_name").and_then(Value::as_str),
        is_p2p: g("is_p2p").and_then(Value::as_bool),
        input_sizes: sizes(g("input_sizes")),
        output_sizes: sizes(g("output_sizes")),
        input_dtypes: strs(g("input_dtypes")),
        output_dtypes: strs(g("output_dtypes")),
        state: g("state").and_then(Value::as_str),
        retired: g("retired").and_then(Value::as_bool),
        time_created_ns: int(g("time_created_ns")),
        time_started_ns: int(g("time_discovered_started_ns")),
        time_completed_ns: int(g("time_discovered_completed_ns")),
        duration_ms: g("duration_ms").and_then(Value::as_f64),
        timeout_ms: int(g("timeout_ms")),
        thread_id: g("thread_id").and_then(text),
        thread_name: g("thread_name").and_then(Value::as_str),
        frames: g("frames")
            .and_then(Value::as_array)
            .map(|fs| {
                fs.iter()
                    .map(|f| {
                        let s = |k| f.get(k).and_then(Value::as_str).unwrap_or("");
                        (s("name"), s("filename"), int(f.get("line")).unwrap_or(0))
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

pub(super) fn parse(bytes: &[u8]) -> Result<FrDump> {
    let d: Value = serde_json::from_slice(bytes).map_err(|e| {
        let kind = if e.is_eof() {
            ErrorKind::Truncated
        } else {
            ErrorKind::Syntax(format!("Flight Recorder JSON: {e}"))
        };
        Error::new(kind, 0)
    })?;
    let field = |k: &str| d.get(k);
    if !d.is_object()
        || (field("entries").is_none()
            && field("pg_config").is_none()
            && field("pg_status").is_none())
    {
        return Err(Error::new(
            ErrorKind::Incompatible(
                "a JSON object without `entries`, `pg_config` or `pg_status`".into(),
            ),
            0,
        ));
    }
    let bad = |what: &str| {
        Error::new(
            ErrorKind::Syntax(format!(
                "Flight Recorder JSON: `{what}` is not what torch writes"
            )),
            0,
        )
    };
    let mut b = Builder::new(DumpForm::Json);
    b.dump.version = field("version").and_then(text).unwrap_or_default();
    b.dump.comm_lib_version = field("comm_lib_version")
        .or_else(|| field("nccl_version"))
        .and_then(text)
        .unwrap_or_default();
    if let Some(cfg) = field("pg_config") {
        let cfg = cfg.as_object().ok_or_else(|| bad("pg_config"))?;
        for (key, c) in cfg {
            let s = |k| c.get(k).and_then(text).unwrap_or_default();
            b.dump.pg_config.push(PgConfig {
                key: key.clone(),
                name: s("name"),
                desc: s("desc"),
                ranks: match c.get("ranks") {
                    Some(Value::String(t)) => parse_ranks(t),
                    Some(Value::Array(v)) => v.iter().map(Value::as_i64).collect(),
                    _ => None,
                },
            });
        }
    }
    if let Some(st) = field("pg_status") {
        let st = st.as_object().ok_or_else(|| bad("pg_status"))?;
        for (key, s) in st {
            let get = |k| int(s.get(k)).filter(|&x| x >= 0);
            b.dump.pg_status.push(PgStatus {
                key: key.clone(),
                last_enqueued: get("last_enqueued_collective"),
                last_started: get("last_started_collective"),
                last_completed: get("last_completed_collective"),
            });
        }
    }
    if let Some(entries) = field("entries") {
        for e in entries.as_array().ok_or_else(|| bad("entries"))? {
            if e.is_object() {
                b.entry(entry(e))?;
            }
        }
    }
    Ok(b.finish())
}
