//! A digest back into what the run figures and the Ranks tab read: an [`Analysis`] (tables from
//! Parquet, figures from the header) and a skeleton [`Trace`] holding the timeline's rows.
//!
//! The skeleton is written as a small Kineto trace and read by the Kineto reader, so tracks,
//! depths, GPU streams and the timeline's index come out exactly as for a real trace (no second
//! model builder to keep in step). A merged row keeps its longest member's name and says how
//! many slices it stands for in its args (`digest merged slices`). The collective calls and
//! steps are then pointed at their slices in the skeleton (by start, end and name).

use super::tables::{read_calls, read_kernels, read_ops, read_steps, seed_name};
use super::Digest;
use crate::analysis::kernels::{Categories, KernelTable};
use crate::analysis::ops::OpTable;
use crate::ingest::{load_bytes, Loaded};
use crate::model::Trace;
use crate::report::analysis::Analysis;
use crate::{Error, ErrorKind};
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// What a digest gives back.
pub struct Rebuilt {
    pub analysis: Analysis,
    pub trace: Trace,
}

fn us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// A `pid`/`tid` as JSON: an integer when it is one, else a string.
fn id_json(s: &str) -> String {
    match s.parse::<i64>() {
        Ok(v) => v.to_string(),
        Err(_) => serde_json::Value::String(s.to_owned()).to_string(),
    }
}

fn skeleton_json(d: &Digest) -> Result<String, String> {
    let t = d.tables.get(4).ok_or("no timeline table")?;
    let (track, start, dur) = (t.i32s("track")?, t.i64s("start_ns")?, t.i64s("dur_ns")?);
    let (name, cat, count) = (t.strs("name")?, t.strs("cat")?, t.i32s("count")?);
    let tracks = &d.header.tracks;
    let q = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
    let mut out = String::from("{\"traceEvents\":[");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
    };
    let mut named_pids: Vec<&str> = Vec::new();
    for tr in tracks {
        let (pid, tid) = (id_json(&tr.pid), id_json(&tr.tid));
        if !named_pids.contains(&tr.pid.as_str()) {
            named_pids.push(&tr.pid);
            sep(&mut out);
            let _ = write!(
                out,
                r#"{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":{}}}}}"#,
                q(&tr.process)
            );
        }
        sep(&mut out);
        let _ = write!(
            out,
            r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":{}}}}}"#,
            q(&tr.name)
        );
        if let Some(si) = tr.sort_index {
            sep(&mut out);
            let _ = write!(
                out,
                r#"{{"ph":"M","name":"thread_sort_index","pid":{pid},"tid":{tid},"args":{{"sort_index":{si}}}}}"#
            );
        }
    }
    for k in 0..t.rows {
        let tr = tracks
            .get(usize::try_from(track[k]).map_err(|_| "negative track")?)
            .ok_or("track index past the header's tracks")?;
        sep(&mut out);
        let _ = write!(
            out,
            r#"{{"ph":"X","cat":{},"name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"#,
            q(cat.get(k)),
            q(name.get(k)),
            id_json(&tr.pid),
            id_json(&tr.tid),
            us(start[k]),
            us(dur[k].max(0))
        );
        let mut args = Vec::new();
        if tr.gpu {
            if let Some(dv) = tr.device {
                args.push(format!(r#""device":{dv}"#));
            }
            if let Some(st) = tr.stream {
                args.push(format!(r#""stream":{st}"#));
            }
        }
        if count[k] > 1 {
            args.push(format!(r#""digest merged slices":{}"#, count[k]));
        }
        out += &args.join(",");
        out += "}}";
    }
    out += "]";
    if let Some(r) = d.header.rank {
        let _ = write!(out, r#","distributedInfo":{{"rank":{r}}}"#);
    }
    out += "}";
    Ok(out)
}

pub fn rebuild(d: &Digest, name: &str) -> crate::Result<Rebuilt> {
    fn bad<'a>(name: &'a str, table: &'a str) -> impl Fn(String) -> Error + 'a {
        move |e| {
            Error::new(ErrorKind::Syntax(format!("digest table {table}: {e}")), 0).in_file(name)
        }
    }
    let table = |k: usize| {
        d.tables.get(k).ok_or_else(|| {
            Error::new(ErrorKind::Syntax(format!("digest without table {k}")), 0).in_file(name)
        })
    };
    let f = &d.header.figures;
    let ops = read_ops(table(0)?, false).map_err(bad(name, "ops"))?;
    let kernels = read_kernels(table(1)?).map_err(bad(name, "kernels"))?;
    let mut steps = read_steps(table(2)?).map_err(bad(name, "steps"))?;
    let mut collectives = read_calls(table(3)?).map_err(bad(name, "collectives"))?;
    let json = skeleton_json(d).map_err(bad(name, "timeline"))?;
    let trace = match load_bytes(name, json.as_bytes()) {
        Ok(Loaded::Trace(t)) => *t,
        Ok(_) => return Err(bad(name, "timeline")("not a trace".into())),
        Err(e) => return Err(e),
    };
    // Point calls and steps at their slices in the skeleton.
    let s = &trace.slices;
    let mut at: FxHashMap<(i64, i64, &str), u32> = FxHashMap::default();
    for i in 0..s.len() {
        at.entry((s.start[i], s.end(i), trace.str(s.name[i])))
            .or_insert(i as u32);
    }
    for c in &mut collectives {
        if let Some(&i) = at.get(&(c.start_ns, c.end_ns, c.slice_name.as_str())) {
            c.slice = i;
        }
    }
    for st in &mut steps {
        if let Some(&i) = at.get(&(st.start_ns, st.start_ns + st.dur_ns, st.name.as_str())) {
            st.slice = i;
        }
    }
    let statics = |v: &[(String, i64)]| v.iter().map(|(k, n)| (seed_name(k), *n)).collect();
    let analysis = Analysis {
        path: name.to_owned(),
        events: d.header.events,
        ops: OpTable {
            rows: ops,
            self_cpu_total_ns: f.self_cpu_total_ns,
            self_device_total_ns: f.self_device_total_ns,
            grouped_by_input_shape: false,
        },
        kernels: KernelTable {
            rows: kernels,
            total_ns: f.kernels_total_ns,
        },
        categories: Categories {
            seed: statics(&f.categories),
            seed_literal: statics(&f.categories_literal),
            fine: f.fine_categories.clone(),
        },
        gpu: f.gpu.clone(),
        temporal_hta: f.temporal_hta,
        steps,
        memory: f.memory.clone(),
        memory_ops: f.memory_ops.clone(),
        launch: f.launch.clone(),
        sync: f.sync.clone(),
        flops: f.flops.clone(),
        roofline: f.roofline.clone(),
        idle: f.idle.clone(),
        recommendations: f.recommendations.clone(),
        rank: d.header.rank,
        collectives,
        // A digest keeps the tables, not the Python frames or args they came from: the pairs
        // themselves are not rebuilt (the details panel has no trace to show them in).
        autograd: crate::analysis::autograd::Autograd {
            unmatched: f.backward_unmatched,
            ..Default::default()
        },
        modules: f.modules.clone(),
        sources: f.sources.clone(),
        backward: f.backward.clone(),
        graphs: f.graphs.clone(),
        health: f.health.clone(),
        // Not kept in a digest: a row per op and kernel per step would be most of its size.
        per_step: Default::default(),
        warnings: d.header.warnings.clone(),
        info: d.header.info.clone(),
    };
    Ok(Rebuilt { analysis, trace })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 200 back-to-back 1 µs kernels (below the resolution of a 100 ms span), a 100 ms kernel
    /// that sets the span, and an all_reduce: the tiny ones become one row standing for 200, the
    /// collective stays exact and the rebuilt analysis points at its slice in the skeleton.
    #[test]
    fn tiny_kernels_merge_and_collectives_stay_exact() {
        let mut ev = vec![
            r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100000}"#.to_owned(),
            r#"{"ph":"X","cat":"kernel","name":"big","pid":0,"tid":7,"ts":0,"dur":100000,"args":{"device":0,"stream":7}}"#.to_owned(),
            r#"{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":8,"ts":500,"dur":3,"args":{"device":0,"stream":8,"Collective name":"allreduce","Process Group Name":"0","Seq":4}}"#.to_owned(),
        ];
        for k in 0..200 {
            ev.push(format!(
                r#"{{"ph":"X","cat":"kernel","name":"tiny{}","pid":0,"tid":9,"ts":{},"dur":1,"args":{{"device":0,"stream":9}}}}"#,
                k % 3,
                1000 + k
            ));
        }
        let json = format!(
            r#"{{"distributedInfo":{{"rank":3}},"traceEvents":[{}]}}"#,
            ev.join(",")
        );
        let Ok(Loaded::Trace(t)) = load_bytes("r3.json", json.as_bytes()) else {
            panic!("the hand-built trace did not load");
        };
        let a = Analysis::of("r3.json", &t);
        let src = super::super::Source {
            name: "r3.json".into(),
            size: json.len() as u64,
            crc32: super::super::crc32(json.as_bytes()),
        };
        let d = Digest::of(&t, &a, src, "r3");
        assert_eq!(
            d.header.lod.resolution_ns,
            100_000_000 / super::super::lod::BUCKETS
        );
        let tl = &d.tables[4];
        let counts = tl.i32s("count").unwrap_or_default();
        let names = tl.strs("name").ok().cloned().unwrap_or_default();
        // step, big, the collective, one merged row.
        assert_eq!(tl.rows, 4);
        let merged = (0..tl.rows)
            .find(|&k| counts[k] == 200)
            .map(|k| names.get(k).to_owned());
        assert!(merged.is_some_and(|n| n.starts_with("tiny")));
        let r = d
            .rebuild("r3.digest.json")
            .unwrap_or_else(|e| panic!("{e}"));
        let c = &r.analysis.collectives[0];
        assert_eq!((c.seq, c.start_ns, c.end_ns), (Some(4), 500_000, 503_000));
        let s = c.slice as usize;
        assert_eq!(r.trace.str(r.trace.slices.name[s]), c.slice_name);
        assert_eq!(r.trace.slices.start[s], 500_000);
        assert_eq!(r.analysis.rank, Some(3));
        assert_eq!(
            r.trace.meta.distributed.as_ref().and_then(|x| x.rank),
            Some(3)
        );
        let st = r.analysis.steps[0].slice as usize;
        assert_eq!(r.trace.str(r.trace.slices.name[st]), "ProfilerStep#1");
        assert_eq!(r.analysis.gpu.temporal, a.gpu.temporal);
    }
}
