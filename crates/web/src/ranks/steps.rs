//! Step × rank: every rank's duration of each `ProfilerStep#N` (core's `RankFigures::steps_ns`,
//! matched by name by core's [`steps_across`]), the slowest rank of each step marked, and a last
//! row naming it against the step's median.

use super::run::RunModel;
use crate::widgets::fmt;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::report::run_steps::steps_across;

/// Widest table drawn (a long run's later steps are left out and said so).
const MAX_STEPS: usize = 64;

#[component]
pub fn StepTable(m: Arc<RunModel>) -> impl IntoView {
    let f = &m.figures;
    let all = steps_across(&f.ranks);
    if all.is_empty() {
        return ().into_any();
    }
    let cut = all.len().saturating_sub(MAX_STEPS);
    let steps = &all[..all.len() - cut];
    let mut ranks: Vec<usize> = (0..f.ranks.len()).collect();
    tracelight_core::sort::by_key(&mut ranks, |&k| f.ranks[k].rank);
    let heads = steps
        .iter()
        .map(|s| {
            let short = s.name.strip_prefix("ProfilerStep").unwrap_or(&s.name);
            view! { <th class="num" title=s.name.clone()>{short.to_owned()}</th> }
        })
        .collect::<Vec<_>>();
    let rows = ranks
        .iter()
        .map(|&k| {
            let r = &f.ranks[k];
            let cells = steps
                .iter()
                .map(|s| {
                    let d = r
                        .step_names
                        .iter()
                        .position(|n| *n == s.name)
                        .and_then(|i| r.steps_ns.get(i).copied());
                    match d {
                        Some(d) => {
                            let slow = s.slowest_rank == r.rank;
                            view! { <td class="num" class:slowest=slow data-ns=d.to_string()>{fmt::dur(d)}</td> }.into_any()
                        }
                        None => view! { <td class="num muted">"–"</td> }.into_any(),
                    }
                })
                .collect::<Vec<_>>();
            view! { <tr data-rank=r.rank.to_string()><td class="num">{r.rank}</td>{cells}</tr> }
        })
        .collect::<Vec<_>>();
    let slowest = steps
        .iter()
        .map(|s| {
            let tip = format!(
                "{}: rank {} took {}, median {}",
                s.name,
                s.slowest_rank,
                fmt::dur(s.slowest_ns),
                fmt::dur(s.median_ns as i64)
            );
            view! { <td class="num" title=tip data-slowest=s.slowest_rank.to_string()>{format!("rank {}", s.slowest_rank)}</td> }
        })
        .collect::<Vec<_>>();
    let note = (cut > 0).then(|| format!("The first {MAX_STEPS} steps are shown; {cut} more."));
    view! {
        <section class="card">
            <h2>"Steps per rank"</h2>
            <div class="run-grid">
                <table class="plain step-grid" data-testid="rank-steps" data-steps=steps.len().to_string()>
                    <thead><tr><th>"rank"</th>{heads}</tr></thead>
                    <tbody>{rows}</tbody>
                    <tfoot><tr><th>"slowest"</th>{slowest}</tr></tfoot>
                </table>
            </div>
            <p class="hint">"Each rank's ProfilerStep durations, matched by step name; bold: the step's slowest rank."</p>
            {note.map(|n| view! { <p class="hint">{n}</p> })}
        </section>
    }
    .into_any()
}
