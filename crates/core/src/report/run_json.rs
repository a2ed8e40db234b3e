//! A run's multi-rank figures ([`super::run`]) as the `analyze --json` fields `ranks`,
//! `straggler`, `collectives`, `alignment` (DESIGN §5: times µs as floats, sizes bytes as
//! integers; the fields that existed before runs keep their names and meaning), and as the
//! Markdown a team pastes into an issue.

use super::run::{AlignMethod, OpDelta, RunFigures};
use serde_json::{json, Map, Value};

fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

/// How many collectives the Markdown lists (worst skew first); the JSON lists all.
pub const WORST_COLLECTIVES: usize = 10;

pub struct RunJson {
    pub ranks: Value,
    pub straggler: Value,
    pub waited_for: Value,
    pub collectives: Value,
    pub alignment: Value,
    pub unmatched_calls: u64,
}

impl RunJson {
    pub fn insert_into(self, o: &mut Map<String, Value>) {
        o.insert("ranks".into(), self.ranks);
        o.insert("straggler".into(), self.straggler);
        o.insert("waited_for".into(), self.waited_for);
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
    let straggler = match &f.straggler {
        Some(s) => json!({
            "rank": s.rank,
            "vs_median": s.vs_median,
            "step_time_us": us(s.step_time_ns),
            "median_step_time_us": s.median_step_time_ns / 1e3,
            "delta_us": (s.step_time_ns as f64 - s.median_step_time_ns) / 1e3,
            "ops": ops_json(&s.ops),
        }),
        None => Value::Null,
    };
    let waited_for = match &f.waited_for {
        Some(w) => json!({
            "rank": w.rank,
            "arrived_last": w.arrived_last,
            "arrived_last_pct": w.arrived_last_pct,
            "median_lateness_us": us(w.median_lateness_ns),
            "others_wait_us": us(w.others_wait_ns),
            "ops": ops_json(&w.ops),
        }),
        None => Value::Null,
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
        waited_for,
        collectives: Value::Array(collectives),
        alignment: json!({
            "method": f.alignment.method,
            "step": f.alignment.step,
            "offsets_us": offsets,
        }),
        unmatched_calls: f.unmatched_calls,
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
    let slow = f.straggler.as_ref().map(|x| x.rank);
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
    if let Some(w) = &f.waited_for {
        s += &format!(
            "\n### Waited for: rank {}\n\nArrived last at {} of its collectives ({:.0}%), a median {:.1} µs after the collective's median rank; the other ranks waited {} ms in all at those collectives.\n",
            w.rank,
            w.arrived_last,
            w.arrived_last_pct,
            us(w.median_lateness_ns),
            ms(w.others_wait_ns as f64),
        );
        if let Some(r) = f.ranks.iter().find(|r| r.rank == w.rank) {
            if let Some(st) = r.first_step_start_ns.filter(|&x| x > 0) {
                s += &format!(
                    "It entered its first step {} ms after the earliest rank (aligned clocks): delay that began before the profiled window.\n",
                    ms(st as f64)
                );
            }
        }
        s += &ops_markdown(&w.ops);
    }
    if let Some(st) = &f.straggler {
        s += &format!(
            "\n### Slowest step: rank {}\n\nMean step {} ms, {:.3}× the median {} ms (+{} ms).",
            st.rank,
            ms(st.step_time_ns as f64),
            st.vs_median,
            ms(st.median_step_time_ns),
            ms(st.step_time_ns as f64 - st.median_step_time_ns),
        );
        if f.waited_for.as_ref().is_some_and(|w| w.rank != st.rank) {
            s += " Its step is long because it waited, not because it was slow: see *Waited for*.";
        }
        s += "\n";
        s += &ops_markdown(&st.ops);
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
