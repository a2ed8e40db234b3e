//! A run's multi-rank figures ([`super::run`]) as the `analyze --json` fields `ranks`,
//! `straggler`, `collectives`, `alignment` (docs/definitions.md: times µs as floats, sizes bytes as
//! integers; the fields that existed before runs keep their names and meaning), and as the
//! Markdown a team pastes into an issue.

use super::run::{AlignMethod, OpDelta, RunFigures};
use super::straggler::{NoStraggler, Reason, Straggler, StragglerVerdict};
use serde_json::{json, Map, Value};

fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

/// How many collectives the Markdown lists (worst skew first); the JSON lists all.
pub const WORST_COLLECTIVES: usize = 10;

pub struct RunJson {
    pub ranks: Value,
    pub straggler: Value,
    pub no_straggler: Value,
    pub collectives: Value,
    pub alignment: Value,
    pub unmatched_calls: u64,
}

impl RunJson {
    pub fn insert_into(self, o: &mut Map<String, Value>) {
        o.insert("ranks".into(), self.ranks);
        o.insert("straggler".into(), self.straggler);
        o.insert("no_straggler".into(), self.no_straggler);
        o.insert("collectives".into(), self.collectives);
        o.insert("alignment".into(), self.alignment);
        o.insert(
            "unmatched_collective_calls".into(),
            json!(self.unmatched_calls),
        );
    }
}

pub fn run_json(f: &RunFigures) -> RunJson {
    let mut rows: Vec<&super::run::RankFigures> = f.ranks.iter().collect();
    crate::sort::by_key(&mut rows, |r| r.rank);
    let ranks: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "rank": r.rank,
                "file": r.file,
                "step_time_us": us(r.step_time_ns),
                "compute_us": us(r.compute_ns),
                "comm_us": us(r.comm_ns),
                "idle_us": us(r.idle_ns),
                "exposed_comm_us": us(r.exposed_comm_ns),
                "steps_us": r.steps_ns.iter().map(|&s| us(s)).collect::<Vec<_>>(),
                "collectives": r.wait.collectives,
                "wait_us": us(r.wait.wait_ns),
                "wait_per_step_us": r.wait_per_step_ns.iter().map(|&s| us(s)).collect::<Vec<_>>(),
                "arrived_last": r.wait.arrived_last,
                "arrived_last_pct": r.wait.arrived_last_pct,
                "peak_allocated_bytes": r.peak_allocated_bytes,
                "peak_reserved_bytes": r.peak_reserved_bytes,
                "snapshot_peak_active_bytes": r.snapshot_peak.map(|p| p.0),
                "snapshot_peak_reserved_bytes": r.snapshot_peak.map(|p| p.1),
                "first_step_start_us": r.first_step_start_ns.map(us),
                "memory_timeline_peak_bytes": r.timeline_peak,
            })
        })
        .collect();
    let (straggler, no_straggler) = match &f.straggler {
        StragglerVerdict::Straggler(s) => (straggler_json(s), Value::Null),
        StragglerVerdict::None(n) => (Value::Null, no_straggler_json(n)),
    };
    let collectives: Vec<Value> = f
        .collectives
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "pg": c.pg,
                "seq": c.seq,
                "seq_from_args": c.seq_from_args,
                "bytes": c.bytes,
                "dtype": c.dtype,
                "group_size": c.group_size,
                "latency_us": us(c.latency_ns),
                "skew_us": us(c.skew_ns),
                "earliest_rank": c.earliest_rank,
                "latest_rank": c.latest_rank,
                "algbw_gbs": c.algbw_gbs,
                "busbw_gbs": c.busbw_gbs,
                "mismatches": c.mismatches,
                "ranks": c.parts.iter().map(|p| json!({
                    "rank": p.rank,
                    "start_us": us(p.start_ns),
                    "end_us": us(p.end_ns),
                    "wait_us": us(p.wait_ns),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let offsets: Map<String, Value> = f
        .ranks
        .iter()
        .zip(&f.alignment.offsets_ns)
        .map(|(r, &o)| (r.rank.to_string(), json!(us(o))))
        .collect();
    RunJson {
        ranks: Value::Array(ranks),
        straggler,
        no_straggler,
        collectives: Value::Array(collectives),
        alignment: json!({
            "method": f.alignment.method,
            "step": f.alignment.step,
            "offsets_us": offsets,
        }),
        unmatched_calls: f.unmatched_calls,
    }
}

/// The duration format of the CLI's reports: ms with 3 decimals, µs below 1 ms.
pub fn text_dur(ns: f64) -> String {
    if ns.abs() < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.3} ms", ns / 1e6)
    }
}

/// A reason as JSON: its kind, its sentence (as the Markdown prints it) and its figures in µs.
pub fn reason_json(r: &Reason) -> Value {
    let text = r.sentence(&text_dur);
    let mut v = match r {
        Reason::ArrivedLast {
            arrived_last,
            collectives,
            pct,
            median_lateness_ns,
            others_wait_ns,
            share,
        } => json!({
            "arrived_last": arrived_last,
            "collectives": collectives,
            "arrived_last_pct": pct,
            "median_lateness_us": us(*median_lateness_ns),
            "others_wait_us": us(*others_wait_ns),
            "wait_share": share,
        }),
        Reason::LateStart { after_ns } => json!({ "after_us": us(*after_ns) }),
        Reason::SlowestStep {
            step_time_ns,
            median_step_time_ns,
            vs_median,
        } => json!({
            "step_time_us": us(*step_time_ns),
            "median_step_time_us": median_step_time_ns / 1e3,
            "vs_median": vs_median,
        }),
        Reason::SlowerOps {
            count,
            excess_per_step_ns,
            top,
            top_kind,
            top_delta_ns,
        } => json!({
            "count": count,
            "excess_us_per_step": excess_per_step_ns / 1e3,
            "top": top,
            "top_kind": top_kind,
            "top_delta_us_per_step": top_delta_ns / 1e3,
        }),
        Reason::Unexplained => json!({}),
    };
    if let Value::Object(o) = &mut v {
        let kind = serde_json::to_value(r)
            .ok()
            .and_then(|x| x.get("kind").cloned())
            .unwrap_or(Value::Null);
        o.insert("kind".into(), kind);
        o.insert("text".into(), Value::String(text));
    }
    v
}

fn straggler_json(s: &Straggler) -> Value {
    json!({
        "rank": s.rank,
        "method": s.method,
        "collectives": s.collectives,
        "arrived_last": s.arrived_last,
        "arrived_last_pct": s.arrived_last_pct,
        "median_lateness_us": us(s.median_lateness_ns),
        "others_wait_us": us(s.others_wait_ns),
        "wait_share": s.wait_share,
        "lost_per_step_us": s.lost_per_step_ns / 1e3,
        "noise_us": s.noise_ns / 1e3,
        "vs_median": s.vs_median,
        "step_time_us": us(s.step_time_ns),
        "median_step_time_us": s.median_step_time_ns / 1e3,
        "delta_us": (s.step_time_ns as f64 - s.median_step_time_ns) / 1e3,
        "reasons": s.reasons.iter().map(reason_json).collect::<Vec<_>>(),
        "ops": ops_json(&s.ops),
    })
}

fn no_straggler_json(n: &NoStraggler) -> Value {
    let text = n.sentence(&text_dur);
    match n {
        NoStraggler::NothingToCompare => json!({"kind": "nothing_to_compare", "text": text}),
        NoStraggler::WithinNoise {
            method,
            rank,
            share,
            share_needed,
            excess_ns,
            noise_ns,
        } => json!({
            "kind": "within_noise",
            "method": method,
            "rank": rank,
            "wait_share": share,
            "wait_share_needed": share_needed,
            "excess_us": excess_ns / 1e3,
            "noise_us": noise_ns / 1e3,
            "text": text,
        }),
    }
}

fn ops_json(ops: &[OpDelta]) -> Vec<Value> {
    ops.iter()
        .map(|o| {
            json!({
                "name": o.name,
                "kind": o.kind,
                "category": o.category,
                "rank_us_per_step": o.straggler_ns / 1e3,
                "median_us_per_step": o.median_ns / 1e3,
                "delta_us_per_step": o.delta_ns / 1e3,
            })
        })
        .collect()
}

fn ops_markdown(ops: &[OpDelta]) -> String {
    let mut s = String::from(
        "\n| name | kind | rank ms/step | median of others ms/step | Δ ms/step |\n|---|---|---:|---:|---:|\n",
    );
    for o in ops {
        let mut name = o.name.replace('|', "\\|");
        if name.len() > 120 {
            let cut = (0..=117)
                .rev()
                .find(|&i| name.is_char_boundary(i))
                .unwrap_or(0);
            name.truncate(cut);
            name += "…";
        }
        s += &format!(
            "| `{}` | {} {} | {} | {} | +{} |\n",
            name,
            o.kind,
            o.category,
            ms(o.straggler_ns),
            ms(o.median_ns),
            ms(o.delta_ns)
        );
    }
    s
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The run's Markdown: per-rank table, straggler with its evidence, worst collectives.
pub fn run_markdown(f: &RunFigures) -> String {
    let mut s = String::from("## Ranks\n\n");
    s += match f.alignment.method {
        AlignMethod::Steps => "Ranks aligned on the start of ",
        AlignMethod::Collectives => "Ranks aligned on the ends of matched collectives",
        AlignMethod::None => "No common step and no matched collective: ranks' clocks used as written (not comparable across hosts)",
    };
    if let Some(step) = &f.alignment.step {
        s += &format!("`{step}`");
    }
    s += ".\n\n| rank | step ms (mean) | compute ms | comm ms | exposed comm ms | idle ms | wait ms | arrived last | peak alloc MB | peak reserved MB |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    let mut rows: Vec<_> = f.ranks.iter().collect();
    crate::sort::by_key(&mut rows, |r| r.rank);
    let slow = f.straggler.straggler().map(|x| x.rank);
    for r in rows {
        let (pa, pr) = match r.snapshot_peak {
            Some((a, b)) if r.peak_allocated_bytes == 0 => (a as f64, b as f64),
            _ => (r.peak_allocated_bytes as f64, r.peak_reserved_bytes as f64),
        };
        s += &format!(
            "| {}{} | {} | {} | {} | {} | {} | {} | {} ({:.0}%) | {:.1} | {:.1} |\n",
            r.rank,
            if Some(r.rank) == slow { " ◀" } else { "" },
            ms(r.step_time_ns as f64),
            ms(r.compute_ns as f64),
            ms(r.comm_ns as f64),
            ms(r.exposed_comm_ns as f64),
            ms(r.idle_ns as f64),
            ms(r.wait.wait_ns as f64),
            r.wait.arrived_last,
            r.wait.arrived_last_pct,
            pa / 1e6,
            pr / 1e6,
        );
    }
    match &f.straggler {
        StragglerVerdict::Straggler(st) => {
            s += &format!(
                "\n### Straggler: rank {} (found by {})\n\n",
                st.rank,
                st.method.label()
            );
            for r in &st.reasons {
                s += &format!("- {}\n", r.sentence(&text_dur));
            }
            if !st.ops.is_empty() {
                s += &ops_markdown(&st.ops);
            }
        }
        StragglerVerdict::None(n) => {
            s += &format!("\n### No straggler\n\n{}\n", n.sentence(&text_dur));
        }
    }
    if !f.collectives.is_empty() {
        let mut worst: Vec<_> = f.collectives.iter().collect();
        crate::sort::by(&mut worst, |a, b| {
            b.skew_ns.cmp(&a.skew_ns).then(a.seq.cmp(&b.seq))
        });
        s += &format!(
            "\n### Collectives: {} matched, {} calls unmatched; worst arrival skew first\n\n| collective | pg | seq | bytes | latency µs | skew µs | first → last rank | busbw GB/s | disagreements |\n|---|---|---:|---:|---:|---:|---|---:|---|\n",
            f.collectives.len(),
            f.unmatched_calls
        );
        for c in worst.into_iter().take(WORST_COLLECTIVES) {
            s += &format!(
                "| {} | {} | {} | {} | {:.1} | {:.1} | {} → {} | {} | {} |\n",
                c.name,
                c.pg.as_deref().unwrap_or("—"),
                c.seq,
                c.bytes.map_or("—".into(), |b| b.to_string()),
                us(c.latency_ns),
                us(c.skew_ns),
                c.earliest_rank,
                c.latest_rank,
                c.busbw_gbs.map_or("—".into(), |b| format!("{b:.1}")),
                c.mismatches.join("; ")
            );
        }
    }
    s
}
