//! The model at STOP: the root dict's segments and device traces (what was not read as it came),
//! the raw JSON parts, the profile_plot warning.

use super::build::{get, items, kind, settle, Build};
use super::{Kind, SnapshotStream, V};
use crate::ingest::snapshot::stream::build::{entry, segment};
use crate::ingest::snapshot::*;

/// Values [`to_json`] writes at most, as the whole-file reader's `Pickle::to_json`.
const MAX_JSON_VALUES: usize = crate::ingest::pickle::MAX_JSON_VALUES;

fn to_json(r: &SnapshotStream, v: V, depth: u32, budget: &mut usize) -> serde_json::Value {
    use serde_json::Value;
    if depth == 0 || *budget == 0 {
        return Value::Null;
    }
    *budget -= 1;
    match settle(r, v) {
        V::None | V::Frame(_) | V::Stack(_) | V::Gone => Value::Null,
        V::Bool(b) => Value::Bool(b),
        V::Int(i) => Value::from(i),
        V::Big(k) => match r
            .big
            .get(k as usize)
            .map(|&x| u64::try_from(x).map_err(|_| x))
        {
            Some(Ok(u)) => Value::from(u),
            Some(Err(x)) => Value::String(x.to_string()),
            None => Value::Null,
        },
        V::Huge => Value::String("<int wider than 128 bits>".into()),
        V::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        V::Str(s) => Value::String(r.b.s.strings.resolve(s).to_owned()),
        V::Bytes(k) => Value::String(
            String::from_utf8_lossy(r.bytes.get(k as usize).map_or(&[][..], |b| &b[..]))
                .into_owned(),
        ),
        v @ V::Cont(c) => {
            if kind(r, v) == Some(Kind::Dict) {
                let mut m = serde_json::Map::new();
                for kv in items(r, c).chunks_exact(2) {
                    let key = match kv[0] {
                        V::Str(s) => r.b.s.strings.resolve(s).to_owned(),
                        other => to_json(r, other, (depth - 1).min(2), budget).to_string(),
                    };
                    m.insert(key, to_json(r, kv[1], depth - 1, budget));
                }
                Value::Object(m)
            } else {
                Value::Array(
                    items(r, c)
                        .iter()
                        .map(|&x| to_json(r, x, depth - 1, budget))
                        .collect(),
                )
            }
        }
    }
}

/// The model, from the root value at STOP.
pub(super) fn finish(r: &mut SnapshotStream, root: V) -> Result<Snapshot> {
    let root = settle(r, root);
    let not_snapshot = |m: &str| Err(Error::new(ErrorKind::Incompatible(m.into()), 0));
    let (segments, traces, is_dict) = match (root, kind(r, root)) {
        (V::Cont(c), Some(Kind::Dict)) => {
            let segs = get(r, c, r.b.k.segments);
            let traces = get(r, c, r.b.k.device_traces);
            if segs.is_none() && traces.is_none() {
                return not_snapshot(
                    "a pickle holding a dict without `segments` or `device_traces`: not a CUDA memory snapshot",
                );
            }
            (segs, traces, true)
        }
        // torch 1.13 `memory_snapshot()` pickled: the bare list of segments.
        (V::Cont(_), Some(Kind::List)) => {
            if let V::Cont(c) = root {
                if let Some(i) = items(r, c)
                    .iter()
                    .position(|&v| kind(r, settle(r, v)) != Some(Kind::Dict))
                {
                    return Err(Error::new(
                        ErrorKind::Incompatible(format!(
                            "a pickled list whose item {i} is not a segment dict: not a CUDA memory snapshot"
                        )),
                        0,
                    ));
                }
            }
            (Some(root), None, false)
        }
        _ => return not_snapshot("a pickle that is not a CUDA memory snapshot"),
    };
    // Segments not read as they came (dicts without `blocks` or `total_size`), and what is no
    // segment at all.
    if let Some(v @ V::Cont(l)) = segments {
        if kind(r, v) != Some(Kind::Dict) {
            let n = items(r, l).len();
            for i in 0..n {
                let Some(x) = r
                    .conts
                    .get(l as usize)
                    .and_then(|y| y.items.get(i).copied())
                else {
                    break;
                };
                match settle(r, x) {
                    d @ V::Cont(s) if kind(r, d) == Some(Kind::Dict) => segment(r, s),
                    _ => r.b.s.warnings.add(WarningKind::MalformedEvent, || {
                        "a segment that is not a dict".into()
                    }),
                }
            }
        }
    }
    if let Some(v @ V::Cont(l)) = traces {
        let lists: Vec<V> = if kind(r, v) == Some(Kind::Dict) {
            Vec::new()
        } else {
            items(r, l).to_vec()
        };
        for d in lists {
            let d = settle(r, d);
            let mut t = DeviceTrace::default();
            if let V::Cont(x) = d {
                if kind(r, d) != Some(Kind::Dict) {
                    if let Some(k) = r.conts.get(x as usize).and_then(|y| y.trace) {
                        if let Some(tr) = r.b.traces.get_mut(k as usize) {
                            t = std::mem::take(tr);
                        }
                    }
                    // Items not read as they came: dicts without `action` before the first
                    // entry, and what is no entry at all.
                    let rest: Vec<V> = items(r, x).to_vec();
                    if !rest.is_empty() {
                        r.b.traces.push(t);
                        let k = (r.b.traces.len() - 1) as u32;
                        for e in rest {
                            match settle(r, e) {
                                e @ V::Cont(y) if kind(r, e) == Some(Kind::Dict) => entry(r, y, k),
                                _ => r.b.s.warnings.add(WarningKind::MalformedEvent, || {
                                    "a trace entry that is not a dict".into()
                                }),
                            }
                        }
                        t = r.b.traces.pop().unwrap_or_default();
                    }
                }
            }
            r.b.s.device_traces.push(t);
        }
    }
    if r.b.s.kind == SnapshotKind::ProfilePlot {
        r.b.s.warnings.add(WarningKind::Other, || {
            "memory_viz profile_plot data (not an allocator snapshot): segment totals recomputed from blocks".into()
        });
    }
    if let (true, V::Cont(c)) = (is_dict, root) {
        let (ks, ka) = (r.b.k.allocator_settings, r.b.k.external_annotations);
        if let Some(v) = get(r, c, ks) {
            let mut budget = MAX_JSON_VALUES;
            r.b.s.allocator_settings = Some(to_json(r, v, 8, &mut budget));
        }
        if let Some(v) = get(r, c, ka) {
            let mut budget = MAX_JSON_VALUES;
            r.b.s.external_annotations = Some(to_json(r, v, 8, &mut budget));
        }
    }
    let empty = Build::new().s;
    Ok(std::mem::replace(&mut r.b.s, empty))
}
