//! Multi-rank comparison (DESIGN §4 "Multi-rank"): per rank step time (mean ProfilerStep, else the
//! window), HTA compute, communication, idle and exposed communication, and the straggler = the
//! rank with the longest step time, as a ratio to the median step time. `analyze --json` lays
//! these out as `ranks` / `straggler`; the web app's GPU view shows the same rows.

use super::json::Analysis;
use crate::model::Ns;

#[derive(Debug, Clone, PartialEq)]
pub struct RankRow {
    pub rank: i64,
    pub file: String,
    pub step_time_ns: Ns,
    pub compute_ns: Ns,
    pub comm_ns: Ns,
    pub idle_ns: Ns,
    pub exposed_comm_ns: Ns,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Straggler {
    pub rank: i64,
    pub vs_median: f64,
}

/// Rows sorted by rank (a trace without a rank takes its position), and the straggler (none when
/// the median step time is 0).
pub fn ranks(all: &[&Analysis]) -> (Vec<RankRow>, Option<Straggler>) {
    let mut rows: Vec<RankRow> = all
        .iter()
        .enumerate()
        .map(|(k, a)| RankRow {
            rank: a.rank.unwrap_or(k as i64),
            file: a.path.clone(),
            step_time_ns: a.step_time_ns(),
            compute_ns: a.gpu.temporal.compute_ns,
            comm_ns: a.gpu.overlap.comm_ns,
            idle_ns: a.gpu.temporal.idle_ns,
            exposed_comm_ns: a.gpu.overlap.exposed_comm_ns,
        })
        .collect();
    rows.sort_by_key(|r| r.rank);
    let mut times: Vec<Ns> = rows.iter().map(|r| r.step_time_ns).collect();
    times.sort_unstable();
    let median = if times.is_empty() {
        0.0
    } else if times.len() % 2 == 1 {
        times[times.len() / 2] as f64
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) as f64 / 2.0
    };
    let slow = rows.iter().max_by(|a, b| {
        a.step_time_ns
            .cmp(&b.step_time_ns)
            .then(b.rank.cmp(&a.rank))
    });
    let straggler = match slow {
        Some(r) if median > 0.0 => Some(Straggler {
            rank: r.rank,
            vs_median: r.step_time_ns as f64 / median,
        }),
        _ => None,
    };
    (rows, straggler)
}
