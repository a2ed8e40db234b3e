//! The Flight Recorder verdict ([`crate::analysis::flight_recorder`]) in words, as Markdown (what
//! a team pastes into the incident) and as the `flight_recorder` block of `analyze DIR --json`.
//! The sentences are built here once; each output passes its own duration format.

use crate::analysis::flight_recorder::{CellState, FrReport, Hang, HangKind, StackGroup};
use serde_json::{json, Value};

fn list(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(i64::to_string).collect();
    s.join(", ")
}

fn group_name(pg: &str, desc: &str) -> String {
    if desc.is_empty() || desc == "undefined" {
        format!("group {pg}")
    } else {
        format!("group {pg} ({desc})")
    }
}

fn ranks_word(v: &[i64]) -> String {
    match v.len() {
        1 => format!("rank {}", v[0]),
        _ => format!("ranks {}", list(v)),
    }
}

fn verb(v: &[i64], one: &str, many: &str) -> String {
    if v.len() == 1 {
        one.to_owned()
    } else {
        many.to_owned()
    }
}

/// `input sizes [[2, 2]] where the others have [[4]]`.
fn mismatch_words(h: &Hang) -> String {
    let parts: Vec<String> = h
        .mismatches
        .iter()
        .map(|m| match m.field {
            "op" => format!(
                "rank {} issued `{}` where the others issued `{}`",
                m.rank, m.found, m.expected
            ),
            f => format!(
                "rank {} has {} {} where the others have {}",
                m.rank,
                f.replace('_', " "),
                m.found,
                m.expected
            ),
        })
        .collect();
    parts.join("; ")
}

/// What a collective is: `collective #8 `all_reduce` of group 0 (default_pg)`.
fn what(h: &Hang) -> String {
    match h.p2p {
        Some((s, d)) => format!(
            "`{}` #{} from rank {s} to rank {d} in {}",
            h.op,
            h.seq,
            group_name(&h.pg, &h.pg_desc)
        ),
        None => format!(
            "collective #{} `{}` of {}",
            h.seq,
            h.op,
            group_name(&h.pg, &h.pg_desc)
        ),
    }
}

/// One divergence in words; `dur` formats a duration in ns.
pub fn hang_sentence(h: &Hang, t0_ns: i64, dur: &dyn Fn(f64) -> String) -> String {
    let since = h
        .since_ns
        .filter(|&t| t > 0 && t0_ns > 0)
        .map(|t| format!(" (issued at +{})", dur((t - t0_ns) as f64)))
        .unwrap_or_default();
    let waiting = if h.waiting.is_empty() {
        String::new()
    } else {
        format!(
            "; {} {} at it{since}",
            ranks_word(&h.waiting),
            verb(&h.waiting, "waits", "wait")
        )
    };
    let mut s = match h.kind {
        HangKind::MissingRanks => format!(
            "{} never issued {}{waiting}.",
            capital(&ranks_word(&h.missing)),
            what(h)
        ),
        HangKind::Mismatch => format!(
            "The ranks disagree on {}: {}{waiting}.",
            what(h),
            mismatch_words(h)
        ),
        HangKind::UnmatchedP2p => format!(
            "{}: nothing matches it on rank {}{waiting}.",
            capital(&what(h)),
            h.missing.first().copied().unwrap_or(-1)
        ),
        HangKind::NotCompleted => {
            let mut s = format!(
                "Every member of {} issued collective #{} `{}`; {} never finished it{since}",
                group_name(&h.pg, &h.pg_desc),
                h.seq,
                h.op,
                ranks_word(&h.waiting)
            );
            if !h.culprits.is_empty() {
                s += &format!(
                    " ({} did not get as far as the others)",
                    ranks_word(&h.culprits)
                );
            }
            s + "."
        }
        HangKind::Unknown => format!(
            "{} cannot be accounted for on {} (no dump, or it fell out of the ring buffer){waiting}.",
            capital(&what(h)),
            ranks_word(&h.unknown)
        ),
        HangKind::CompletedMismatch => format!(
            "{} completed although the ranks disagree: {}.",
            capital(&what(h)),
            mismatch_words(h)
        ),
    };
    for b in &h.blocked {
        s += &format!(
            " Rank {} waits at collective #{} `{}` of group {}.",
            b.rank, b.seq, b.op, b.pg
        );
    }
    s
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The verdict's first line.
pub fn headline(r: &FrReport, dur: &dyn Fn(f64) -> String) -> String {
    match &r.hang {
        Some(h) => {
            let who = if h.culprits.is_empty() {
                "no single rank to blame".to_owned()
            } else {
                format!("culprit {}", ranks_word(&h.culprits))
            };
            format!("Hang ({who}): {}", hang_sentence(h, r.t0_ns, dur))
        }
        None if r.ranks.iter().all(|x| x.entries == 0) => {
            "The dumps hold no entries: nothing was recorded (was TORCH_FR_BUFFER_SIZE / TORCH_NCCL_TRACE_BUFFER_SIZE set?)."
                .to_owned()
        }
        None => "No hang in the dumps: every recorded collective completed on every rank.".to_owned(),
    }
}

fn ms(ns: f64) -> String {
    crate::report::run_json::text_dur(ns)
}

fn stack_md(s: &StackGroup) -> String {
    let mut out = format!(
        "**{}: {}** — group {} #{} `{}` ({})\n\n",
        capital(&ranks_word(&s.ranks)),
        s.role,
        s.pg,
        s.seq,
        s.op,
        s.state.label()
    );
    if s.frames.is_empty() {
        out += "(no stack in the dump)\n\n";
    } else {
        out += "```\n";
        for (n, f, l) in &s.frames {
            out += &format!("{n} at {f}:{l}\n");
        }
        out += "```\n\n";
    }
    out
}

/// `summary DIR`'s Markdown for a folder of dumps.
pub fn markdown(r: &FrReport) -> String {
    let mut s = String::from("## Flight Recorder\n\n");
    s += &format!("**{}**\n\n", headline(r, &ms));
    if let Some(h) = &r.hang {
        s += &format!(
            "- op `{}`, input sizes {} ({}), output sizes {} ({})\n",
            h.op, h.input_sizes, h.input_dtypes, h.output_sizes, h.output_dtypes
        );
        s += &format!("- members: {}\n", list(&h.members));
        for m in &h.mismatches {
            s += &format!(
                "- rank {}: {} expected {}, found {}\n",
                m.rank, m.field, m.expected, m.found
            );
        }
        s += "\n";
    }
    if !r.also.is_empty() {
        s += "Also stuck:\n\n";
        for h in &r.also {
            s += &format!("- {}\n", hang_sentence(h, r.t0_ns, &ms));
        }
        s += "\n";
    }
    if !r.disagreements.is_empty() {
        s += "Completed although the ranks disagreed:\n\n";
        for h in &r.disagreements {
            s += &format!("- {}\n", hang_sentence(h, r.t0_ns, &ms));
        }
        s += "\n";
    }
    s += "### Ranks\n\n| rank | file | version | backend | entries | records | wrapped | stacks |\n|---:|---|---|---|---:|---|---|---|\n";
    for x in &r.ranks {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            x.rank,
            x.file,
            x.version,
            x.backend,
            x.entries,
            match (x.first_record, x.last_record) {
                (Some(a), Some(b)) => format!("{a}–{b}"),
                _ => "—".into(),
            },
            if x.wrapped { "yes" } else { "no" },
            if x.stacks { "yes" } else { "no" },
        );
    }
    for &m in &r.missing_dumps {
        s += &format!("| {m} | (no dump) | | | | | | |\n");
    }
    s += "\n### Last sequence ids per group (pg_status)\n\n| rank | group | last enqueued | last started | last completed | from |\n|---:|---|---:|---:|---:|---|\n";
    let o = |v: Option<i64>| v.map_or("—".to_owned(), |v| v.to_string());
    for x in &r.ranks {
        for g in &x.status {
            s += &format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                x.rank,
                group_name(&g.pg, &g.desc),
                o(g.last_enqueued),
                o(g.last_started),
                o(g.last_completed),
                g.source
            );
        }
    }
    if !r.stacks.is_empty() {
        s += "\n### Stacks\n\n";
        for st in &r.stacks {
            s += &stack_md(st);
        }
    }
    if !r.inferred.is_empty() {
        s += "\n### Inferred, not read\n\n";
        for i in &r.inferred {
            s += &format!("- {i}\n");
        }
    }
    s
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

fn hang_json(h: &Hang, t0: i64) -> Value {
    json!({
        "kind": h.kind,
        "pg": h.pg,
        "pg_desc": h.pg_desc,
        "seq": h.seq,
        "p2p": h.p2p.map(|(s, d)| json!({"src": s, "dst": d})),
        "op": h.op,
        "input_sizes": h.input_sizes,
        "output_sizes": h.output_sizes,
        "input_dtypes": h.input_dtypes,
        "output_dtypes": h.output_dtypes,
        "members": h.members,
        "waiting": h.waiting,
        "completed": h.completed,
        "missing": h.missing,
        "unknown": h.unknown,
        "mismatches": h.mismatches,
        "blocked": h.blocked,
        "culprits": h.culprits,
        "since_us": h.since_ns.filter(|&t| t > 0 && t0 > 0).map(|t| us(t - t0)),
        "text": hang_sentence(h, t0, &ms),
    })
}

/// The `flight_recorder` block of `analyze DIR --json`.
pub fn json(r: &FrReport) -> Value {
    let t0 = r.t0_ns;
    let groups: Vec<Value> = r
        .groups
        .iter()
        .map(|g| {
            json!({
                "pg": g.name,
                "desc": g.desc,
                "members": g.members,
                "membership": g.membership,
                "window_start_seq": g.window_start,
                "first_divergence_seq": g.first_divergence.and_then(|k| g.columns.get(k)).map(|c| c.seq),
                "collectives": g.columns.iter().map(|c| json!({
                    "seq": c.seq,
                    "op": c.op,
                    "status": c.status,
                    "input_sizes": c.input_sizes,
                    "input_dtypes": c.input_dtypes,
                    "states": c.cells.iter().map(|x| x.state.label()).collect::<Vec<_>>(),
                    "inferred": c.cells.iter().map(|x| x.inferred).collect::<Vec<_>>(),
                    "mismatches": c.mismatches,
                })).collect::<Vec<_>>(),
                "p2p": g.p2p.iter().map(|p| json!({
                    "src": p.src,
                    "dst": p.dst,
                    "status": p.status,
                    "send_state": p.send.as_ref().map(|x| x.state.label()),
                    "recv_state": p.recv.as_ref().map(|x| x.state.label()),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let stacks: Vec<Value> = r
        .stacks
        .iter()
        .map(|s| {
            json!({
                "role": s.role,
                "ranks": s.ranks,
                "pg": s.pg,
                "seq": s.seq,
                "op": s.op,
                "state": s.state,
                "frames": s.frames.iter().map(|(n, f, l)| json!({"name": n, "filename": f, "line": l})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "verdict": headline(r, &ms),
        "hang": r.hang.as_ref().map(|h| hang_json(h, t0)),
        "also": r.also.iter().map(|h| hang_json(h, t0)).collect::<Vec<_>>(),
        "disagreements": r.disagreements.iter().map(|h| hang_json(h, t0)).collect::<Vec<_>>(),
        "ranks": r.ranks,
        "world": r.world,
        "missing_dumps": r.missing_dumps,
        "groups": groups,
        "stacks": stacks,
        "inferred": r.inferred,
        "t0_ns": t0,
    })
}

/// A cell's label for tables: `completed`, `completed*` when inferred.
pub fn cell_label(state: CellState, inferred: bool) -> String {
    if inferred {
        format!("{}*", state.label())
    } else {
        state.label().to_owned()
    }
}

/// One row per entry of one rank's dump, every field as the dump holds it (the Python package's
/// `flight_recorder_entries()` table): sizes as Python prints them, times in ns (null where not
/// discovered), the stack as `name at file:line` lines, innermost first.
pub fn entry_rows(rank: i64, file: &str, d: &crate::ingest::flight_recorder::FrDump) -> Vec<Value> {
    d.entries
        .iter()
        .map(|e| {
            let s = |id| d.str(id);
            let frames: Vec<String> = d
                .stack(e.stack)
                .iter()
                .map(|(n, f, l)| format!("{n} at {f}:{l}"))
                .collect();
            json!({
                "rank": rank,
                "file": file,
                "record_id": e.record_id,
                "pg": s(e.pg_name),
                "pg_desc": s(e.pg_desc),
                "pg_id": e.pg_id,
                "collective_seq_id": e.collective_seq_id,
                "p2p_seq_id": e.p2p_seq_id,
                "op_id": e.op_id,
                "profiling_name": s(e.profiling_name),
                "op": s(e.op),
                "backend": s(e.backend),
                "is_p2p": e.is_p2p,
                "input_sizes": s(e.input_sizes),
                "output_sizes": s(e.output_sizes),
                "input_dtypes": s(e.input_dtypes),
                "output_dtypes": s(e.output_dtypes),
                "input_numel": e.input_numel,
                "output_numel": e.output_numel,
                "state": e.state.label(),
                "retired": e.retired,
                "time_created_ns": e.time_created_ns,
                "time_started_ns": e.time_started_ns,
                "time_completed_ns": e.time_completed_ns,
                "duration_ms": e.duration_ms,
                "timeout_ms": e.timeout_ms,
                "thread_id": s(e.thread_id),
                "thread_name": s(e.thread_name),
                "frames": frames.join("\n"),
            })
        })
        .collect()
}
