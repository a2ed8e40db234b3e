//! The tools of `tracelight mcp`, short of the protocol: their names, descriptions and input
//! schemas, and what a call answers, as JSON. Every figure is `analyze --json`'s (or `diff
//! --json`'s) under the same key, cut down to what the question needs: the same functions
//! compute it ([`crate::analyze::summary_or_analyze`], [`crate::diff::diff_code`]), so an agent
//! and the page never disagree. `slices` reads the trace's slices in a window, bounded.
//!
//! The protocol adapter (`mcp.rs`) turns an `Err` into an MCP error whose message names the file.

use crate::mcp_args::{limit, string, strings, ToolError};
use serde_json::{json, Map, Value};
use std::sync::Mutex;
use std::time::SystemTime;
use tracelight_core::view::link::{DeepLink, Named};

/// One tool: its name, what it answers (the description an agent reads), its input schema.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: Value,
}

const DEFS: &str = "Times are µs of the trace's own clock (keys ending _us), sizes bytes, \
shares fractions of 1 (keys share_*, *_pct are percent). Every key is defined in the project's \
docs/definitions.md. Each `link` is a hash (#tab=…) to append to the page URL that `tracelight \
view PATHS` prints; it opens that view.";

fn paths_schema() -> Value {
    json!({
        "type": "array", "items": {"type": "string"}, "minItems": 1,
        "description": "Trace files (.json, .json.gz), snapshots (.pickle), Flight Recorder dumps, digests, or one run folder; several files are read as the ranks of one run"
    })
}

fn scope_schema() -> Value {
    json!({"type": "string", "description": "Optional part of the trace the tables cover: step:N (ProfilerStep#N), annotation:NAME[:K] (record_function regions), window:START_NS-END_NS (trace ns). Ops count when they start inside; kernels when their launching call does"})
}

fn limit_schema(default: u64, max: u64) -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": max, "default": default, "description": format!("At most this many rows (default {default}, at most {max})")})
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

/// The tools, in the order `tools/list` gives them.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "summary",
            description: "Overview of a trace or run: files read; steps (dur_us per ProfilerStep and its breakdown: kernel_us, communication_us, memcpy_us, cpu_exec_us = host-only time, dataloader_us …); gpu (utilization = busy fraction of the step window, idle_us, comm_us, exposed_comm_us = communication not overlapped by compute, overlap_pct); categories (GPU µs by kernel category); flops (mfu = achieved / peak dense FLOPS of the device); memory peaks; launch (late launches, their idle); idle (why the GPU is idle: µs and share_of_window per cause: host_ops, launch, data loading, collective_wait, device_sync …); straggler / no_straggler (run folders); flight_recorder verdict (dumps); recommendations; warnings.",
            schema: object(json!({"paths": paths_schema(), "scope": scope_schema()}), &["paths"]),
        },
        ToolSpec {
            name: "top_ops",
            description: "The CPU operators table (torch's key_averages): per op name calls, self_cpu_us (host time in the op itself), cpu_total_us (with children), self_device_us / device_total_us (GPU time of the kernels it launched, self / with children), memory bytes, flops, pct_of_roof (attained share of the roofline). Sorted by sort_by (default: analyze's order, self device time then self CPU time). Each row's link reveals its first occurrence on the timeline.",
            schema: object(json!({"paths": paths_schema(), "scope": scope_schema(), "limit": limit_schema(15, 500), "sort_by": {"type": "string", "description": "A numeric key of the rows to sort by, largest first (e.g. self_cpu_us, device_total_us, calls)"}}), &["paths"]),
        },
        ToolSpec {
            name: "top_kernels",
            description: "The GPU kernels table: per kernel name calls, total_us / avg_us / min_us / max_us (device time), category and fine_category (matmul, comm, elementwise …), launching_op (the CPU op that launched most of it), tensor_cores, pct_of_roof. Sorted by total_us unless sort_by says otherwise. Each row's link reveals its first occurrence on the timeline.",
            schema: object(json!({"paths": paths_schema(), "scope": scope_schema(), "limit": limit_schema(15, 500), "sort_by": {"type": "string", "description": "A numeric key of the rows to sort by, largest first"}}), &["paths"]),
        },
        ToolSpec {
            name: "steps",
            description: "Step breakdown, one row per ProfilerStep: dur_us (wall time of the step), kernel_us, communication_us, memcpy_us, memset_us, runtime_us (CUDA runtime calls), dataloader_us, cpu_exec_us (host work with no GPU work under it), other_us; they partition dur_us. Each row's link opens the timeline on that step.",
            schema: object(json!({"paths": paths_schema()}), &["paths"]),
        },
        ToolSpec {
            name: "compare",
            description: "A/B comparison of two traces or run folders (`tracelight diff A B --json`): verdict (one sentence: faster/slower per step, whether beyond the step-to-step spread), step (per-step time distributions of A and B), figures (each comparable figure: a, b, delta, delta_pct, unit, what), breakdown, gpu, memory, flops, and the ops and kernels whose time changed most (a_us, b_us, delta_us per step).",
            schema: object(json!({"a": {"type": "string", "description": "Baseline trace or run folder"}, "b": {"type": "string", "description": "Candidate trace or run folder"}, "limit": limit_schema(15, 500)}), &["a", "b"]),
        },
        ToolSpec {
            name: "ranks",
            description: "Ranks of a run (several trace files or a run folder): per rank step time, compute_us, comm_us, exposed_comm_us, idle_us, arrived_last (how often it reached a collective last) and arrived_last_pct; straggler (the rank that makes the others wait, with structured reasons and excess_us) or no_straggler (why none stands out, with noise_us); alignment (clock offsets_us between ranks and how they were found); run layout and skipped files.",
            schema: object(json!({"paths": paths_schema()}), &["paths"]),
        },
        ToolSpec {
            name: "collectives",
            description: "Collectives matched across ranks, one row per call: name, group_size, bytes, dtype, latency_us (first arrival to last end), earliest_rank / latest_rank, algbw_gbs / busbw_gbs (nccl-tests' algorithm and bus bandwidth), per-rank start_us/end_us/wait_us (time spent waiting for the last rank), mismatches. Longest latency first.",
            schema: object(json!({"paths": paths_schema(), "limit": limit_schema(20, 1000)}), &["paths"]),
        },
        ToolSpec {
            name: "memory",
            description: "Memory peak and what was live at it. For an allocator snapshot (.pickle): per device reserved_bytes, peak_active_bytes, segments, actions, and by_stack (the allocation sites by live_at_peak_bytes: bytes still allocated at the peak, and total_bytes allocated). For a trace with profile_memory: peak_allocated_bytes, peak_reserved_bytes and the ops that allocated most. For a memory timeline: the peak per category.",
            schema: object(json!({"paths": paths_schema(), "limit": limit_schema(15, 500)}), &["paths"]),
        },
        ToolSpec {
            name: "hang",
            description: "Hang verdict from Flight Recorder dumps (one per rank, or their folder): verdict (one sentence naming the culprit ranks and the collective), hang (kind: missing_ranks, mismatch …; the collective's op, seq, group, members, missing, culprits, input sizes and dtypes), disagreements between ranks, missing_dumps, world, and per rank the last enqueued/started/completed sequence numbers.",
            schema: object(json!({"paths": paths_schema()}), &["paths"]),
        },
        ToolSpec {
            name: "slices",
            description: "The slices (CPU ops, kernels, runtime calls, annotations) of one trace that overlap a time window, bounded: name, kind, track (as the timeline labels it), start_ns and dur_ns in the trace's clock (ns; the same clock as the page's visStart/visEnd and --scope window:), depth (nesting on its track). total counts every match; truncated says whether rows were left out. Each row's link selects that slice on the timeline.",
            schema: object(json!({
                "path": {"type": "string", "description": "One trace file"},
                "start_ns": {"type": "integer", "description": "Window start, trace ns"},
                "end_ns": {"type": "integer", "description": "Window end, trace ns"},
                "name": {"type": "string", "description": "Keep slices whose name contains this"},
                "order": {"type": "string", "enum": ["time", "duration"], "description": "time (default): by start; duration: longest first"},
                "limit": limit_schema(100, 2000)
            }), &["path", "start_ns", "end_ns"]),
        },
    ]
}

/// The tools' long help for the server's `instructions`.
pub fn instructions() -> String {
    format!("Tracelight: PyTorch profiler traces, allocator snapshots and Flight Recorder dumps, read with the same functions as `tracelight analyze --json` and the page. {DEFS}")
}

/// `analyze --json` answers kept for files unchanged since (an agent asks several questions of
/// one run; a GB trace is not read again for each).
#[derive(Default)]
pub struct Cache {
    entries: Mutex<Vec<Cached>>,
}

/// The arguments of one `analyze` (paths, then the scope), each path's modification time and
/// size then, and the answer.
type Stamp = Vec<Option<(SystemTime, u64)>>;
type Cached = (Vec<String>, Stamp, Value);

const CACHED: usize = 4;

impl Cache {
    fn analyze(&self, paths: &[String], scope: Option<&str>) -> Result<Value, ToolError> {
        let mut key: Vec<String> = paths.to_vec();
        if let Some(s) = scope {
            key.push(format!("--scope={s}"));
        }
        let stamp: Vec<_> = paths
            .iter()
            .map(|p| {
                std::fs::metadata(p)
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())))
            })
            .collect();
        if let Ok(e) = self.entries.lock() {
            if let Some((_, _, v)) = e.iter().find(|(k, s, _)| *k == key && *s == stamp) {
                return Ok(v.clone());
            }
        }
        let mut args: Vec<String> = paths.to_vec();
        args.push("--json".into());
        if let Some(s) = scope {
            args.push("--scope".into());
            args.push(s.into());
        }
        let text = crate::analyze::summary_or_analyze("analyze", &args)?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| ToolError::Input(format!("analyze --json: {e}")))?;
        if let Ok(mut e) = self.entries.lock() {
            if e.len() >= CACHED {
                e.remove(0);
            }
            e.push((key, stamp, v.clone()));
        }
        Ok(v)
    }
}

/// The keys of `v` named, where present.
fn pick(v: &Value, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| v.get(*k).map(|x| ((*k).to_owned(), x.clone())))
        .collect()
}

fn link(tab: &str) -> String {
    DeepLink {
        tab: Some(tab.into()),
        ..DeepLink::default()
    }
    .encode()
}

/// The first `n` rows of `rows`, sorted by `sort_by` (largest first) when given, each with the
/// link revealing its first occurrence; `total` says how many there were.
fn top(
    rows: Option<&Value>,
    n: usize,
    sort_by: Option<&str>,
    named: Named,
    scope: Option<&str>,
) -> Result<Value, ToolError> {
    let mut rows: Vec<Value> = rows.and_then(Value::as_array).cloned().unwrap_or_default();
    if let Some(key) = sort_by {
        if rows
            .iter()
            .any(|r| r.get(key).is_some_and(|v| !v.is_number()))
            || rows.first().is_some_and(|r| r.get(key).is_none())
        {
            return Err(ToolError::Params(format!(
                "sort_by: {key:?} is not a numeric key of the rows"
            )));
        }
        let num = |r: &Value| {
            r.get(key)
                .and_then(Value::as_f64)
                .unwrap_or(f64::NEG_INFINITY)
        };
        // Stable: ties keep analyze's order.
        rows.sort_by(|a, b| num(b).total_cmp(&num(a)));
    }
    let total = rows.len();
    rows.truncate(n);
    for r in &mut rows {
        if let (Some(name), Value::Object(o)) = (
            r.get("name").and_then(Value::as_str).map(str::to_owned),
            &mut *r,
        ) {
            let l = DeepLink {
                tab: Some("timeline".into()),
                reveal: Some((named, name, 1)),
                scope: scope.map(str::to_owned),
                ..DeepLink::default()
            };
            o.insert("link".into(), Value::String(l.encode()));
        }
    }
    Ok(json!({"rows": rows, "total": total}))
}

/// Answers `tools/call` of `name` with `args`.
pub fn call(cache: &Cache, name: &str, args: &Map<String, Value>) -> Result<Value, ToolError> {
    let scope = args.get("scope").and_then(Value::as_str);
    match name {
        "summary" => {
            let paths = strings(args, "paths")?;
            let a = cache.analyze(&paths, scope)?;
            let mut out = pick(
                &a,
                &[
                    "files",
                    "run",
                    "steps",
                    "gpu",
                    "categories",
                    "flops",
                    "launch",
                    "straggler",
                    "no_straggler",
                    "warnings",
                    "info",
                    "scope",
                ],
            );
            if let Some(m) = a.get("memory") {
                out.insert(
                    "memory".into(),
                    Value::Object(pick(
                        m,
                        &[
                            "peak_allocated_bytes",
                            "peak_reserved_bytes",
                            "reserved_recorded",
                        ],
                    )),
                );
            }
            if let Some(ic) = a.get("idle_causes") {
                let mut idle = pick(ic, &["idle_us", "window_us", "window_from_steps"]);
                let causes: Vec<Value> = ic
                    .get("causes")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .map(|c| {
                                Value::Object(pick(
                                    c,
                                    &["cause", "us", "share_of_window", "intervals"],
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                idle.insert("causes".into(), Value::Array(causes));
                out.insert("idle_causes".into(), Value::Object(idle));
            }
            if let Some(fr) = a.get("flight_recorder") {
                out.insert(
                    "flight_recorder".into(),
                    Value::Object(pick(fr, &["verdict", "world", "missing_dumps"])),
                );
            }
            if let Some(Value::Array(recs)) = a.get("recommendations") {
                let recs: Vec<Value> = recs
                    .iter()
                    .map(|r| Value::Object(pick(r, &["rule", "title", "detail"])))
                    .collect();
                out.insert("recommendations".into(), Value::Array(recs));
            }
            if let Some(s) = a.get("snapshot") {
                out.insert("snapshot".into(), s.clone());
            }
            out.insert("link".into(), Value::String(link("overview")));
            Ok(Value::Object(out))
        }
        "top_ops" | "top_kernels" => {
            let paths = strings(args, "paths")?;
            let n = limit(args, 15, 500)?;
            let a = cache.analyze(&paths, scope)?;
            let (key, named, tab) = if name == "top_ops" {
                ("ops", Named::Op, "operators")
            } else {
                ("kernels", Named::Kernel, "kernels")
            };
            let sort_by = args.get("sort_by").and_then(Value::as_str);
            let mut out = top(a.get(key), n, sort_by, named, scope)?;
            if let Value::Object(o) = &mut out {
                o.insert("link".into(), Value::String(link(tab)));
                if let Some(s) = a.get("scope") {
                    o.insert("scope".into(), s.clone());
                }
            }
            Ok(out)
        }
        "steps" => {
            let paths = strings(args, "paths")?;
            let a = cache.analyze(&paths, None)?;
            let mut steps: Vec<Value> = a
                .get("steps")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for s in &mut steps {
                if let (Some(name), Value::Object(o)) = (
                    s.get("name").and_then(Value::as_str).map(str::to_owned),
                    &mut *s,
                ) {
                    let l = DeepLink {
                        tab: Some("timeline".into()),
                        step: Some(name),
                        ..DeepLink::default()
                    };
                    o.insert("link".into(), Value::String(l.encode()));
                }
            }
            Ok(json!({"steps": steps, "link": link("overview")}))
        }
        "compare" => {
            let (a, b) = (string(args, "a")?, string(args, "b")?);
            let n = limit(args, 15, 500)?;
            let (text, _) = crate::diff::diff_code(&[a, b, "--json".into()])?;
            let d: Value = serde_json::from_str(&text)
                .map_err(|e| ToolError::Input(format!("diff --json: {e}")))?;
            let mut out = pick(
                &d,
                &[
                    "a",
                    "b",
                    "verdict",
                    "step",
                    "figures",
                    "breakdown",
                    "gpu",
                    "memory",
                    "flops",
                    "categories",
                    "measure",
                    "setup_notes",
                ],
            );
            for key in ["ops", "kernels"] {
                let mut rows: Vec<Value> = d
                    .get(key)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let total = rows.len();
                rows.truncate(n);
                out.insert(key.into(), json!({"rows": rows, "total": total}));
            }
            out.insert("link".into(), Value::String(link("compare")));
            Ok(Value::Object(out))
        }
        "ranks" => {
            let paths = strings(args, "paths")?;
            let a = cache.analyze(&paths, None)?;
            let mut out = pick(
                &a,
                &[
                    "ranks",
                    "straggler",
                    "no_straggler",
                    "alignment",
                    "run",
                    "unmatched_collective_calls",
                ],
            );
            out.insert("link".into(), Value::String(link("ranks")));
            Ok(Value::Object(out))
        }
        "collectives" => {
            let paths = strings(args, "paths")?;
            let n = limit(args, 20, 1000)?;
            let a = cache.analyze(&paths, None)?;
            let mut rows: Vec<Value> = a
                .get("collectives")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let lat = |r: &Value| {
                r.get("latency_us")
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::NEG_INFINITY)
            };
            rows.sort_by(|x, y| lat(y).total_cmp(&lat(x)));
            let total = rows.len();
            rows.truncate(n);
            Ok(
                json!({"rows": rows, "total": total, "unmatched_collective_calls": a.get("unmatched_collective_calls"), "link": link("ranks")}),
            )
        }
        "memory" => {
            let paths = strings(args, "paths")?;
            let n = limit(args, 15, 500)?;
            let a = cache.analyze(&paths, None)?;
            let mut out = Map::new();
            if let Some(m) = a.get("memory") {
                let mut m = m.clone();
                if let Some(Value::Array(ops)) = m.get_mut("ops") {
                    out.insert("memory_ops_total".into(), json!(ops.len()));
                    ops.truncate(n);
                }
                out.insert("memory".into(), m);
            }
            if let Some(s) = a.get("snapshot") {
                let mut s = s.clone();
                if let Some(Value::Array(devs)) = s.get_mut("devices") {
                    for d in devs {
                        if let Some(Value::Array(st)) = d.get_mut("by_stack") {
                            st.truncate(n);
                        }
                    }
                }
                out.insert("snapshot".into(), s);
            }
            for k in ["memory_timeline", "memory_timelines"] {
                if let Some(v) = a.get(k) {
                    out.insert(k.into(), v.clone());
                }
            }
            out.insert(
                "files".into(),
                a.get("files").cloned().unwrap_or(Value::Null),
            );
            out.insert("link".into(), Value::String(link("memory")));
            Ok(Value::Object(out))
        }
        "hang" => {
            let paths = strings(args, "paths")?;
            let a = cache.analyze(&paths, None)?;
            let Some(fr) = a.get("flight_recorder") else {
                return Err(ToolError::Input(format!(
                    "{}: no Flight Recorder dumps among these files (torch writes them as rank_N, or <prefix>N, per rank)",
                    paths.join(", ")
                )));
            };
            let mut out = pick(
                fr,
                &[
                    "verdict",
                    "hang",
                    "disagreements",
                    "missing_dumps",
                    "world",
                    "also",
                    "inferred",
                ],
            );
            if let Some(Value::Array(ranks)) = fr.get("ranks") {
                let r: Vec<Value> = ranks
                    .iter()
                    .map(|r| {
                        Value::Object(pick(r, &["rank", "file", "backend", "entries", "status"]))
                    })
                    .collect();
                out.insert("ranks".into(), Value::Array(r));
            }
            out.insert("link".into(), Value::String(link("ranks")));
            Ok(Value::Object(out))
        }
        "slices" => crate::mcp_slices::slices(args),
        other => Err(ToolError::Params(format!("unknown tool {other:?}"))),
    }
}
