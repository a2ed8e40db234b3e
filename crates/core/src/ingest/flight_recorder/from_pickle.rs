//! The pickle form (`_dump_fr_trace`, the dump-on-timeout file), walked from the data-only
//! decoder's arena.

use super::{parse_ranks, Builder, DumpForm, FrDump, PgConfig, PgStatus, RawEntry};
use crate::error::{Error, ErrorKind, Result};
use crate::ingest::pickle::{self, NodeId, Pickle, PickleValue};

/// Entries nest sizes two lists deep; anything deeper is not a size list.
fn sizes(p: &Pickle, id: NodeId) -> Option<Vec<Vec<i64>>> {
    if !matches!(p.get(id), PickleValue::List(_) | PickleValue::Tuple(_)) {
        return None;
    }
    p.items(id)
        .iter()
        .map(|&s| p.items(s).iter().map(|&d| p.as_i64(d)).collect())
        .collect()
}

fn strs(p: &Pickle, id: NodeId) -> Option<Vec<&str>> {
    if !matches!(p.get(id), PickleValue::List(_) | PickleValue::Tuple(_)) {
        return None;
    }
    p.items(id).iter().map(|&s| p.as_str(s)).collect()
}

/// An int where torch writes one, or a string holding one (thread ids are strings).
fn text(p: &Pickle, id: NodeId) -> Option<String> {
    match p.get(id) {
        PickleValue::Str(_) => p.as_str(id).map(str::to_owned),
        PickleValue::Int(_) | PickleValue::BigInt(_) => p.as_i128(id).map(|v| v.to_string()),
        _ => None,
    }
}

fn entry<'a>(p: &'a Pickle, e: NodeId) -> RawEntry<'a> {
    let mut r = RawEntry::default();
    for kv in p.dict_items(e).chunks_exact(2) {
        let (k, v) = (kv[0], kv[1]);
        let Some(key) = p.as_str(k) else {
            continue;
        };
        let int = || p.as_i64(v);
        match key {
            "record_id" => r.record_id = int(),
            "pg_id" => r.pg_id = int(),
            "process_group" => {
                let it = p.items(v);
                r.pg_name = it.first().and_then(|&x| p.as_str(x));
                r.pg_desc = it.get(1).and_then(|&x| p.as_str(x));
            }
            "collective_seq_id" => r.collective_seq_id = int(),
            // Format 1.x.
            "seq_id" if r.collective_seq_id.is_none() => r.collective_seq_id = int(),
            "p2p_seq_id" => r.p2p_seq_id = int(),
            "op_id" => r.op_id = int(),
            "profiling_name" => r.profiling_name = p.as_str(v),
            "is_p2p" => r.is_p2p = p.as_bool(v),
            "input_sizes" => r.input_sizes = sizes(p, v),
            "output_sizes" => r.output_sizes = sizes(p, v),
            "input_dtypes" => r.input_dtypes = strs(p, v),
            "output_dtypes" => r.output_dtypes = strs(p, v),
            "state" => r.state = p.as_str(v),
            "retired" => r.retired = p.as_bool(v),
            "time_created_ns" => r.time_created_ns = int(),
            "time_discovered_started_ns" => r.time_started_ns = int(),
            "time_discovered_completed_ns" => r.time_completed_ns = int(),
            "duration_ms" => r.duration_ms = p.as_f64(v),
            "timeout_ms" => r.timeout_ms = int(),
            "thread_id" => r.thread_id = text(p, v),
            "thread_name" => r.thread_name = p.as_str(v),
            "frames" => {
                r.frames = p
                    .items(v)
                    .iter()
                    .map(|&f| {
                        let s = |key| p.dict_get(f, key).and_then(|x| p.as_str(x)).unwrap_or("");
                        let line = p.dict_get(f, "line").and_then(|x| p.as_i64(x));
                        (s("name"), s("filename"), line.unwrap_or(0))
                    })
                    .collect();
            }
            _ => {}
        }
    }
    r
}

pub(super) fn from_pickle(p: &Pickle) -> Result<FrDump> {
    let root = p.root;
    if !p.is_dict(root) {
        return Err(Error::new(
            ErrorKind::Incompatible("a pickle that is not a Flight Recorder dump (no dict)".into()),
            0,
        ));
    }
    let entries = p.dict_get(root, "entries");
    if entries.is_none() && p.dict_get(root, "pg_config").is_none() {
        return Err(Error::new(
            ErrorKind::Incompatible(
                "a pickle dict without `entries` or `pg_config`: not a Flight Recorder dump".into(),
            ),
            0,
        ));
    }
    let mut b = Builder::new(DumpForm::Pickle);
    let s = |key| p.dict_get(root, key).and_then(|v| text(p, v));
    b.dump.version = s("version").unwrap_or_default();
    b.dump.comm_lib_version = s("comm_lib_version")
        .or_else(|| s("nccl_version"))
        .unwrap_or_default();
    if let Some(cfg) = p.dict_get(root, "pg_config") {
        for kv in p.dict_items(cfg).chunks_exact(2) {
            let get = |key| p.dict_get(kv[1], key).and_then(|x| text(p, x));
            let ranks = p.dict_get(kv[1], "ranks").and_then(|x| match p.get(x) {
                PickleValue::Str(_) => p.as_str(x).and_then(parse_ranks),
                _ => p.items(x).iter().map(|&r| p.as_i64(r)).collect(),
            });
            b.dump.pg_config.push(PgConfig {
                key: text(p, kv[0]).unwrap_or_default(),
                name: get("name").unwrap_or_default(),
                desc: get("desc").unwrap_or_default(),
                ranks,
            });
        }
    }
    if let Some(st) = p.dict_get(root, "pg_status") {
        for kv in p.dict_items(st).chunks_exact(2) {
            let get = |key| {
                let v = p.dict_get(kv[1], key)?;
                p.as_i64(v)
                    .or_else(|| p.as_str(v).and_then(|t| t.trim().parse().ok()))
                    .filter(|&x| x >= 0)
            };
            b.dump.pg_status.push(PgStatus {
                key: text(p, kv[0]).unwrap_or_default(),
                last_enqueued: get("last_enqueued_collective"),
                last_started: get("last_started_collective"),
                last_completed: get("last_completed_collective"),
            });
        }
    }
    if let Some(list) = entries {
        for &e in p.items(list) {
            if p.is_dict(e) {
                b.entry(entry(p, e))?;
            }
        }
    }
    Ok(b.finish())
}

pub(super) fn parse(bytes: &[u8]) -> Result<FrDump> {
    let p = pickle::decode(bytes)?;
    from_pickle(&p)
}
