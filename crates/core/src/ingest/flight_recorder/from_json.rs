//! The JSON form (`_dump_fr_trace_json`, the `dump_nccl_trace_json` control-plane handler):
//! the same fields as the pickle without `frames`, keys sorted, times not yet discovered written
//! as 0, and no `entries` key at all when the recorder is empty. Dumps hold at most a few
//! thousand entries, so they are decoded whole into typed structs.

use super::{parse_ranks, Builder, DumpForm, FrDump, PgConfig, PgStatus, RawEntry};
use crate::error::{Error, ErrorKind, Result};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A string, or a number written where torch sometimes writes a string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Text {
    S(String),
    I(i64),
    F(f64),
}

impl Text {
    /// The JSON form writes `pg_status` numbers as strings (`"7"`).
    fn int(self) -> Option<i64> {
        match self {
            Text::S(s) => s.trim().parse().ok(),
            Text::I(i) => Some(i),
            Text::F(_) => None,
        }
        .filter(|&x| x >= 0)
    }

    fn into_string(self) -> String {
        match self {
            Text::S(s) => s,
            Text::I(i) => i.to_string(),
            Text::F(f) => f.to_string(),
        }
    }
}

#[derive(Deserialize, Default)]
struct JsonFrame {
    #[serde(default)]
    name: String,
    #[serde(default)]
    filename: String,
    #[serde(default)]
    line: i64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JsonEntry {
    record_id: Option<i64>,
    pg_id: Option<i64>,
    process_group: Vec<String>,
    collective_seq_id: Option<i64>,
    seq_id: Option<i64>,
    p2p_seq_id: Option<i64>,
    op_id: Option<i64>,
    profiling_name: Option<String>,
    is_p2p: Option<bool>,
    input_sizes: Option<Vec<Vec<i64>>>,
    output_sizes: Option<Vec<Vec<i64>>>,
    input_dtypes: Option<Vec<String>>,
    output_dtypes: Option<Vec<String>>,
    state: Option<String>,
    retired: Option<bool>,
    time_created_ns: Option<i64>,
    time_discovered_started_ns: Option<i64>,
    time_discovered_completed_ns: Option<i64>,
    duration_ms: Option<f64>,
    timeout_ms: Option<i64>,
    thread_id: Option<Text>,
    thread_name: Option<String>,
    frames: Vec<JsonFrame>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JsonPgConfig {
    name: Option<Text>,
    desc: Option<Text>,
    ranks: Option<JsonRanks>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum JsonRanks {
    Text(String),
    List(Vec<i64>),
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JsonPgStatus {
    last_enqueued_collective: Option<Text>,
    last_started_collective: Option<Text>,
    last_completed_collective: Option<Text>,
}

#[derive(Deserialize)]
struct JsonDump {
    version: Option<Text>,
    comm_lib_version: Option<Text>,
    nccl_version: Option<Text>,
    pg_config: Option<BTreeMap<String, JsonPgConfig>>,
    pg_status: Option<BTreeMap<String, JsonPgStatus>>,
    entries: Option<Vec<JsonEntry>>,
}

fn dtypes(v: &Option<Vec<String>>) -> Option<Vec<&str>> {
    v.as_ref().map(|v| v.iter().map(String::as_str).collect())
}

pub(super) fn parse(bytes: &[u8]) -> Result<FrDump> {
    let d: JsonDump = serde_json::from_slice(bytes).map_err(|e| {
        let kind = if e.is_eof() {
            ErrorKind::Truncated
        } else {
            ErrorKind::Syntax(format!("Flight Recorder JSON: {e}"))
        };
        Error::new(kind, 0)
    })?;
    if d.entries.is_none() && d.pg_config.is_none() && d.pg_status.is_none() {
        return Err(Error::new(
            ErrorKind::Incompatible(
                "a JSON object without `entries`, `pg_config` or `pg_status`".into(),
            ),
            0,
        ));
    }
    let mut b = Builder::new(DumpForm::Json);
    b.dump.version = d.version.map(Text::into_string).unwrap_or_default();
    b.dump.comm_lib_version = d
        .comm_lib_version
        .or(d.nccl_version)
        .map(Text::into_string)
        .unwrap_or_default();
    for (key, c) in d.pg_config.unwrap_or_default() {
        b.dump.pg_config.push(PgConfig {
            key,
            name: c.name.map(Text::into_string).unwrap_or_default(),
            desc: c.desc.map(Text::into_string).unwrap_or_default(),
            ranks: match c.ranks {
                Some(JsonRanks::Text(s)) => parse_ranks(&s),
                Some(JsonRanks::List(v)) => Some(v),
                None => None,
            },
        });
    }
    for (key, s) in d.pg_status.unwrap_or_default() {
        b.dump.pg_status.push(PgStatus {
            key,
            last_enqueued: s.last_enqueued_collective.and_then(Text::int),
            last_started: s.last_started_collective.and_then(Text::int),
            last_completed: s.last_completed_collective.and_then(Text::int),
        });
    }
    for e in d.entries.unwrap_or_default() {
        let raw = RawEntry {
            record_id: e.record_id,
            pg_id: e.pg_id,
            pg_name: e.process_group.first().map(String::as_str),
            pg_desc: e.process_group.get(1).map(String::as_str),
            collective_seq_id: e.collective_seq_id.or(e.seq_id),
            p2p_seq_id: e.p2p_seq_id,
            op_id: e.op_id,
            profiling_name: e.profiling_name.as_deref(),
            is_p2p: e.is_p2p,
            input_sizes: e.input_sizes.clone(),
            output_sizes: e.output_sizes.clone(),
            input_dtypes: dtypes(&e.input_dtypes),
            output_dtypes: dtypes(&e.output_dtypes),
            state: e.state.as_deref(),
            retired: e.retired,
            time_created_ns: e.time_created_ns,
            time_started_ns: e.time_discovered_started_ns,
            time_completed_ns: e.time_discovered_completed_ns,
            duration_ms: e.duration_ms,
            timeout_ms: e.timeout_ms,
            thread_id: e.thread_id.map(Text::into_string),
            thread_name: e.thread_name.as_deref(),
            frames: e
                .frames
                .iter()
                .map(|f| (f.name.as_str(), f.filename.as_str(), f.line))
                .collect(),
        };
        b.entry(raw)?;
    }
    Ok(b.finish())
}
