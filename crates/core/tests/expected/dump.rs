//! One fixture as text: what the loader built (the model) and what the analyses and reports make of
//! it, in a fixed order with no map iteration, paths or timings, so the same bytes always give the
//! same text.

use super::render::{clip, clip_to, first_lines, json};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;
use tracelight_core::analysis::{et, et_link, snapshot};
use tracelight_core::ingest::flight_recorder::FrDump;
use tracelight_core::ingest::memory_timeline::{peak, MemoryTimeline};
use tracelight_core::ingest::snapshot::Snapshot;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::exec_trace::ExecTrace;
use tracelight_core::model::{Trace, NONE};
use tracelight_core::report::facts::Facts;
use tracelight_core::report::json::{analyze_json, Analysis};
use tracelight_core::report::{et::et_markdown, memory, summary};

/// Lines kept of a Markdown report.
const REPORT_LINES: usize = 80;
/// Rows kept of the model's own lists (tracks, names).
const MODEL_ROWS: usize = 40;
/// Most frequent slice names listed.
const TOP_NAMES: usize = 10;
/// Characters kept of an error message or a warning line (they name what went wrong: keep it).
const MESSAGE_CHARS: usize = 400;

/// The dump of fixture `name` (its file name only: it is also what error messages show) holding
/// `bytes`; `sibling` gives the bytes of another fixture in the same folder, for an execution
/// trace's Kineto partner.
pub fn dump(name: &str, bytes: &[u8], sibling: &dyn Fn(&str) -> Option<Vec<u8>>) -> String {
    let mut s = format!(
        "# {name}: regression snapshot of tracelight's own output (tests/expected.rs), not an \
         independent answer\n"
    );
    match load_bytes(name, bytes) {
        Err(e) => {
            let kind = format!("{:?}", e.kind);
            let variant = kind.split('(').next().unwrap_or_default();
            let _ = writeln!(s, "format: none (the load failed)\n\n== error\n");
            let _ = writeln!(s, "kind: {variant}\noffset: {}", e.offset);
            let _ = writeln!(s, "message: {}", clip_to(&e.to_string(), MESSAGE_CHARS));
        }
        Ok(loaded) => {
            let _ = writeln!(s, "format: {}", loaded.format().label());
            match &loaded {
                Loaded::Trace(t) => trace(&mut s, name, t),
                Loaded::Snapshot(snap) => snapshot_dump(&mut s, name, snap),
                Loaded::MemoryTimeline(m) => timeline(&mut s, name, m),
                Loaded::ExecTrace(e) => exec_trace(&mut s, name, e, sibling),
                Loaded::FlightRecorder(d) => flight_recorder(&mut s, name, d),
            }
        }
    }
    s
}

/// `(key, count)` pairs as `key=count` in key order.
fn counts<K: Ord + std::fmt::Display>(it: impl Iterator<Item = K>) -> String {
    let mut m: BTreeMap<K, u64> = BTreeMap::new();
    for k in it {
        *m.entry(k).or_default() += 1;
    }
    let v: Vec<String> = m.iter().map(|(k, n)| format!("{k}={n}")).collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(" ")
    }
}

fn warnings_section(s: &mut String, lines: &[String]) {
    let _ = writeln!(s, "\n== warnings ({})\n", lines.len());
    for l in lines {
        let _ = writeln!(s, "{}", clip_to(l, MESSAGE_CHARS));
    }
}

fn report_section(s: &mut String, title: &str, markdown: &str) {
    let _ = writeln!(s, "\n== {title}\n");
    s.push_str(&first_lines(markdown, REPORT_LINES));
}

fn trace(s: &mut String, name: &str, t: &Trace) {
    let sl = &t.slices;
    let _ = writeln!(s, "\n== model\n");
    let _ = writeln!(s, "events: {}", t.event_count);
    let _ = writeln!(s, "bytes_read: {}", t.bytes_read);
    let meta = serde_json::to_value(&t.meta).unwrap_or_default();
    let _ = writeln!(s, "meta: {}", json(&meta).trim_end());
    match t.time_bounds() {
        Some((lo, hi)) => {
            let _ = writeln!(s, "time_bounds_ns: {lo} .. {hi} (span {})", hi - lo);
        }
        None => {
            let _ = writeln!(s, "time_bounds_ns: none");
        }
    }
    let _ = writeln!(s, "interned_strings: {}", t.strings.len());
    let _ = writeln!(s, "processes: {}", t.processes.len());
    for p in t.processes.iter().take(MODEL_ROWS) {
        let _ = writeln!(
            s,
            "  pid {} name {:?} labels {:?} sort {:?}",
            t.idval_text(p.pid),
            clip(t.str(p.name)),
            clip(t.str(p.labels)),
            p.sort_index
        );
    }
    let _ = writeln!(s, "tracks: {}", t.tracks.len());
    for (k, tr) in t.tracks.iter().enumerate().take(MODEL_ROWS) {
        let _ = writeln!(
            s,
            "  #{k} {:?} pid {} tid {} {:?} device {:?} stream {:?} slices {} max_depth {}",
            tr.kind,
            t.idval_text(tr.pid),
            t.idval_text(tr.tid),
            clip(t.str(tr.name)),
            tr.device,
            tr.stream,
            tr.count,
            tr.max_depth
        );
    }
    if t.tracks.len() > MODEL_ROWS {
        let _ = writeln!(s, "  … {} more tracks", t.tracks.len() - MODEL_ROWS);
    }
    let _ = writeln!(s, "slices: {}", sl.len());
    let _ = writeln!(
        s,
        "  by kind: {}",
        counts(sl.kind.iter().map(|k| k.label()))
    );
    let _ = writeln!(
        s,
        "  max depth: {}",
        sl.depth.iter().max().copied().unwrap_or(0)
    );
    let with_parent = sl.parent.iter().filter(|&&p| p != NONE).count();
    let _ = writeln!(s, "  with a parent: {with_parent}");
    let mut by_name = vec![0u64; t.strings.len()];
    for n in &sl.name {
        by_name[n.index()] += 1;
    }
    let mut names: Vec<(u64, &str)> = by_name
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| {
            (
                c,
                t.strings.resolve(tracelight_core::model::StrId(i as u32)),
            )
        })
        .collect();
    names.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let _ = writeln!(
        s,
        "  distinct names: {}; the {TOP_NAMES} most frequent:",
        names.len()
    );
    for (c, n) in names.iter().take(TOP_NAMES) {
        let _ = writeln!(s, "    {c:>6} {:?}", clip(n));
    }
    let g = &t.gpu;
    let launched = g.launch.iter().filter(|&&l| l != NONE).count();
    let _ = writeln!(
        s,
        "gpu_details: {} (with a launch: {launched}; devices {}; streams {})",
        g.slice.len(),
        counts(g.device.iter()),
        counts(g.stream.iter())
    );
    let _ = writeln!(s, "trace_flops: {}", t.flops.slice.len());
    let _ = writeln!(
        s,
        "instants: {} by cat: {}",
        t.instants.ts.len(),
        counts(t.instants.cat.iter().map(|&c| t.str(c)))
    );
    let m = &t.memory;
    let _ = writeln!(
        s,
        "memory_events: {} (allocs {}, frees {}) by device type:id: {}; max total_allocated {}, \
         max total_reserved {}",
        m.ts.len(),
        m.bytes.iter().filter(|&&b| b > 0).count(),
        m.bytes.iter().filter(|&&b| b < 0).count(),
        counts((0..m.ts.len()).map(|i| format!("{}:{}", m.device_type[i], m.device_id[i]))),
        m.total_allocated.iter().max().copied().unwrap_or(0),
        m.total_reserved.iter().max().copied().unwrap_or(0)
    );
    let c = &t.counters;
    let _ = writeln!(
        s,
        "counters: {} series, {} samples by series: {}",
        c.series_name.len(),
        c.ts.len(),
        counts(c.series.iter().map(|&k| t.str(c.series_name[k as usize])))
    );
    let f = &t.flows;
    let unresolved = (0..f.from.len())
        .filter(|&i| f.from[i] == NONE || f.to[i] == NONE)
        .count();
    let _ = writeln!(
        s,
        "flows: {} (unresolved {unresolved}) by cat: {}",
        f.from.len(),
        counts(f.cat.iter().map(|&c| t.str(c)))
    );
    warnings_section(s, &t.warnings.lines());
    let a = Analysis::of(name, t);
    let _ = writeln!(
        s,
        "\n== analysis (tracelight analyze --json; tables cut to their first rows)\n"
    );
    s.push_str(&json(&analyze_json(std::slice::from_ref(&a))));
    report_section(
        s,
        "report (tracelight summary)",
        &summary::markdown(&Facts::of(name, t), &a),
    );
}

fn snapshot_dump(s: &mut String, name: &str, snap: &Snapshot) {
    let _ = writeln!(s, "\n== model\n");
    let _ = writeln!(s, "kind: {:?}", snap.kind);
    let _ = writeln!(s, "records: {}", snap.records());
    let _ = writeln!(s, "interned_strings: {}", snap.strings.len());
    let _ = writeln!(s, "frames: {}", snap.frames.name.len());
    let _ = writeln!(s, "stacks: {}", snap.stacks.len());
    let sg = &snap.segments;
    let _ = writeln!(
        s,
        "segments: {} by device: {}; by type: {}; expandable: {}",
        sg.len(),
        counts(sg.device.iter()),
        counts(sg.segment_type.iter().map(|&t| snap.str(t))),
        sg.is_expandable.iter().filter(|&&e| e).count()
    );
    let _ = writeln!(
        s,
        "blocks: {} by state: {}",
        snap.blocks.len(),
        counts(snap.blocks.state.iter().map(|&t| snap.str(t)))
    );
    for (d, tr) in snap.device_traces.iter().enumerate() {
        let _ = writeln!(
            s,
            "device_trace {d}: {} entries, with time_us {}; actions: {}",
            tr.len(),
            tr.time_us.iter().filter(|t| t.is_some()).count(),
            counts(tr.action_name.iter().map(|&a| snap.str(a)))
        );
    }
    for (label, v) in [
        ("allocator_settings", &snap.allocator_settings),
        ("external_annotations", &snap.external_annotations),
    ] {
        let text = v.as_ref().map_or("none".into(), |v| clip(&v.to_string()));
        let _ = writeln!(s, "{label}: {text}");
    }
    let warnings = snap.warnings.lines();
    warnings_section(s, &warnings);
    let sum = snapshot::summarize(snap);
    let _ = writeln!(
        s,
        "\n== analysis (analysis::snapshot::summarize; tables cut to their first rows)\n"
    );
    s.push_str(&json(&serde_json::to_value(&sum).unwrap_or_default()));
    report_section(
        s,
        "report (tracelight memory)",
        &memory::snapshot_markdown(name, &sum, &warnings),
    );
}

fn timeline(s: &mut String, name: &str, m: &MemoryTimeline) {
    let _ = writeln!(s, "\n== model\n");
    let _ = writeln!(s, "records: {}", m.records);
    let _ = writeln!(s, "samples: {}", m.len());
    let first_last = json!([m.times_us.first(), m.times_us.last()]);
    let _ = writeln!(s, "first, last time_us: {first_last}");
    let p = peak(m);
    let _ = writeln!(s, "\n== analysis (memory_timeline::peak)\n");
    s.push_str(&json(&serde_json::to_value(&p).unwrap_or_default()));
    report_section(
        s,
        "report (tracelight memory)",
        &memory::timeline_markdown(name, &p),
    );
}

fn flight_recorder(s: &mut String, name: &str, d: &FrDump) {
    use tracelight_core::analysis::flight_recorder::{analyze, RankDump};
    let _ = writeln!(s, "\n== model\n");
    let _ = writeln!(s, "version: {:?}", d.version);
    let _ = writeln!(s, "comm_lib_version: {:?}", d.comm_lib_version);
    let _ = writeln!(s, "form: {:?}", d.form);
    for c in &d.pg_config {
        let _ = writeln!(
            s,
            "pg_config {:?}: name {:?} desc {:?} ranks {:?}",
            c.key, c.name, c.desc, c.ranks
        );
    }
    for st in &d.pg_status {
        let _ = writeln!(
            s,
            "pg_status {:?}: enqueued {:?} started {:?} completed {:?}",
            st.key, st.last_enqueued, st.last_started, st.last_completed
        );
    }
    let _ = writeln!(s, "entries: {}", d.entries.len());
    for e in d.entries.iter().take(MODEL_ROWS) {
        let _ = writeln!(
            s,
            "  #{} pg {:?}/{:?} seq {} p2p {} {:?} in {} {} out {} {} {:?} retired {} frames {}",
            e.record_id,
            d.str(e.pg_name),
            d.str(e.pg_desc),
            e.collective_seq_id,
            e.p2p_seq_id,
            d.str(e.profiling_name),
            d.str(e.input_sizes),
            d.str(e.input_dtypes),
            d.str(e.output_sizes),
            d.str(e.output_dtypes),
            e.state,
            e.retired,
            d.stacks.get(e.stack).len()
        );
    }
    let _ = writeln!(s, "unique frames: {}", d.frames.name.len());
    warnings_section(s, &d.warnings.lines());
    let rank = tracelight_core::ingest::flight_recorder::rank_of_file(name).unwrap_or(0);
    let r = analyze(&[RankDump {
        rank,
        path: name,
        dump: d,
    }]);
    report_section(
        s,
        "report (this dump alone)",
        &tracelight_core::report::flight_recorder::markdown(&r),
    );
}

fn exec_trace(
    s: &mut String,
    name: &str,
    e: &ExecTrace,
    sibling: &dyn Fn(&str) -> Option<Vec<u8>>,
) {
    let _ = writeln!(s, "\n== model\n");
    let _ = writeln!(s, "schema: {}", e.schema);
    let _ = writeln!(s, "pid: {}\ntime: {}", e.pid, e.time);
    let _ = writeln!(s, "start_ts: {}\nfinish_ts: {}", e.start_ts, e.finish_ts);
    let _ = writeln!(s, "bytes_read: {}", e.bytes_read);
    let _ = writeln!(s, "interned_strings: {}", e.strings.len());
    let roots = (0..e.nodes.len()).filter(|&i| e.is_root(i)).count();
    let _ = writeln!(s, "nodes: {} (roots {roots})", e.nodes.len());
    let tensors = e.args.tensor.iter().filter(|t| t.is_some()).count();
    let _ = writeln!(s, "args: {} (tensors {tensors})", e.args.len());
    let _ = writeln!(
        s,
        "attrs: {} by name: {}",
        e.attrs.name.len(),
        counts(e.attrs.name.iter().map(|&n| e.str(n)))
    );
    warnings_section(s, &e.warnings.lines());
    let sum = et::summary(e);
    let mut v: Value = serde_json::to_value(&sum).unwrap_or_default();
    // The Kineto trace of the same run, named as the CLI pairs them: `X.et.json.gz` with
    // `X.pt.trace.json.gz`.
    let partner = name
        .split('.')
        .next()
        .map(|stem| format!("{stem}.pt.trace.json.gz"));
    let linked = partner.as_deref().and_then(|p| {
        let bytes = sibling(p)?;
        match load_bytes(p, &bytes) {
            Ok(Loaded::Trace(t)) => Some((p.to_owned(), et_link::link(&t, e).report)),
            _ => None,
        }
    });
    if let Some((p, r)) = &linked {
        v["link"] = json!({"trace": p, "report": r});
    }
    let _ = writeln!(
        s,
        "\n== analysis (analysis::et::summary, et_link::link; tables cut to their first rows)\n"
    );
    s.push_str(&json(&v));
    let md = et_markdown(name, &sum, linked.as_ref().map(|(p, r)| (p.as_str(), r)));
    report_section(s, "report (tracelight summary)", &md);
}
