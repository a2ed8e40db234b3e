//! The run's steps across its ranks: per `ProfilerStep#N`, the slowest rank and the median (the
//! Ranks tab's step × rank table), from [`RankFigures`].

use super::run::{median, RankFigures};
use crate::model::Ns;
use serde::Serialize;

/// One step of the run across its ranks: the `ProfilerStep#N` of that name on every rank that
/// recorded it (never matched by position: a rank may have recorded a step the others did not).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepAcross {
    pub name: String,
    /// The rank whose step took longest (the lowest rank on a tie) and how long.
    pub slowest_rank: i64,
    pub slowest_ns: Ns,
    pub median_ns: f64,
}

/// Per step name (in the order the ranks recorded them), the slowest rank and the median over
/// the ranks that have it (the Ranks tab's step × rank table).
pub fn steps_across(ranks: &[RankFigures]) -> Vec<StepAcross> {
    let mut names: Vec<&str> = Vec::new();
    for r in ranks {
        for n in &r.step_names {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let has: Vec<(i64, Ns)> = ranks
                .iter()
                .filter_map(|r| {
                    let k = r.step_names.iter().position(|n| n == name)?;
                    Some((r.rank, *r.steps_ns.get(k)?))
                })
                .collect();
            let &(slowest_rank, slowest_ns) = has
                .iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?;
            Some(StepAcross {
                name: name.to_owned(),
                slowest_rank,
                slowest_ns,
                median_ns: median(has.iter().map(|x| x.1 as f64).collect()),
            })
        })
        .collect()
}
