//! The `slices` tool of `tracelight mcp`: the slices of one trace that overlap a time window,
//! bounded, each with the deep link that selects it on the page's timeline.

use crate::mcp_args::{limit, string, ToolError};
use serde_json::{json, Map, Value};
use tracelight_core::ingest::Loaded;
use tracelight_core::view::link::{DeepLink, SliceRef};

/// Answers `slices`: `path`, `start_ns`/`end_ns` (trace ns), optional `name` (substring),
/// `order` (time or duration) and `limit`.
pub fn slices(args: &Map<String, Value>) -> Result<Value, ToolError> {
    let path = string(args, "path")?;
    let int = |k: &str| {
        args.get(k)
            .and_then(Value::as_i64)
            .ok_or_else(|| ToolError::Params(format!("{k} is required (an integer, trace ns)")))
    };
    let (start, end) = (int("start_ns")?, int("end_ns")?);
    if end <= start {
        return Err(ToolError::Params("end_ns must be after start_ns".into()));
    }
    let n = limit(args, 100, 2000)?;
    let by_dur = match args.get("order").and_then(Value::as_str) {
        None | Some("time") => false,
        Some("duration") => true,
        Some(o) => {
            return Err(ToolError::Params(format!(
                "order: time or duration, not {o:?}"
            )))
        }
    };
    let needle = args.get("name").and_then(Value::as_str);
    let t = match crate::input::load(&path).map_err(|e| ToolError::Input(e.to_string()))? {
        Loaded::Trace(t) => t,
        other => {
            return Err(ToolError::Input(format!(
                "{path}: slices need a Kineto trace, not a {}",
                other.format().label()
            )))
        }
    };
    let s = &t.slices;
    let mut hits: Vec<usize> = (0..s.len())
        .filter(|&i| s.start[i] < end && s.end(i) > start)
        .filter(|&i| needle.is_none_or(|n| t.str(s.name[i]).contains(n)))
        .collect();
    if by_dur {
        hits.sort_by_key(|&i| (std::cmp::Reverse(s.dur[i]), s.start[i], i));
    } else {
        hits.sort_by_key(|&i| (s.start[i], i));
    }
    let total = hits.len();
    let rows: Vec<Value> = hits
        .iter()
        .take(n)
        .map(|&i| {
            let r = SliceRef::of(&t, i);
            let l = DeepLink {
                tab: Some("timeline".into()),
                file: Some(0),
                window: Some((s.start[i], s.end(i).max(s.start[i] + 1))),
                slice: Some(r.clone()),
                ..DeepLink::default()
            };
            json!({
                "name": t.str(s.name[i]),
                "kind": s.kind[i].label(),
                "track": r.track,
                "start_ns": s.start[i],
                "dur_ns": r.dur,
                "depth": s.depth[i],
                "link": l.encode(),
            })
        })
        .collect();
    Ok(json!({
        "path": path,
        "start_ns": start,
        "end_ns": end,
        "rows": rows,
        "total": total,
        "truncated": total > n,
        "link": DeepLink { tab: Some("timeline".into()), file: Some(0), window: Some((start, end)), ..DeepLink::default() }.encode(),
    }))
}
