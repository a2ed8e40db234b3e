//! The straggler (slowest mean step) and the rank the others waited for, each with core's
//! evidence: the kernels (device time) and CPU ops (self time) where that rank spends more per
//! step than the median of the others. In a synchronous run the two often differ: waiting
//! lengthens a rank's step, so the slowest step can belong to a rank that waited.

use super::run::RunModel;
use crate::widgets::fmt;
use crate::widgets::table::{columns, Col, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::report::run::OpDelta;

columns! {
    /// One row per op or kernel that explains a rank.
    enum ECol { Name = "name", Kind = "kind", Category = "category", Rank = "rank", Median = "median", Delta = "delta" }
}

fn ops_table(ops: Vec<OpDelta>, testid: &'static str) -> impl IntoView {
    let n = ops.len();
    let cols = vec![
        Col::name(ECol::Name, "Op / kernel", 320),
        Col::text(ECol::Kind, "Kind", 70),
        Col::text(ECol::Category, "Category", 100),
        Col::num(ECol::Rank, "This rank /step", 116),
        Col::num(ECol::Median, "Median of others", 124),
        Col::num(ECol::Delta, "Δ /step", 104),
    ];
    let cell = Callback::new(move |(r, c): (usize, ECol)| {
        let Some(o) = ops.get(r) else {
            return String::new();
        };
        match c {
            ECol::Name => o.name.clone(),
            ECol::Kind => o.kind.replace('_', " "),
            ECol::Category => o.category.clone(),
            ECol::Rank => fmt::dur_f(o.straggler_ns),
            ECol::Median => fmt::dur_f(o.median_ns),
            ECol::Delta => format!("+{}", fmt::dur_f(o.delta_ns)),
        }
    });
    view! { <VTable cols=cols len=n cell=cell sort=Signal::stored(None) testid=testid visible_rows=10 label="Evidence" /> }
}

#[component]
pub fn Evidence(m: Arc<RunModel>) -> impl IntoView {
    let f = &m.figures;
    let n = f.ranks.len();
    let waited_rank = f.waited_for.as_ref().map(|w| w.rank);
    let straggler = f.straggler.clone().map(|s| {
        let because_waited = waited_rank.is_some_and(|w| w != s.rank);
        view! {
            <section class="card" data-testid="run-straggler" data-rank=s.rank.to_string() data-vs-median=s.vs_median.to_string() data-step-ns=s.step_time_ns.to_string()>
                <h2>"Slowest step: rank " {s.rank}</h2>
                <p>
                    {format!(
                        "Mean step {}, {:.3}× the median {} of {n} ranks (+{}).",
                        fmt::dur(s.step_time_ns),
                        s.vs_median,
                        fmt::dur_f(s.median_step_time_ns),
                        fmt::dur_f(s.step_time_ns as f64 - s.median_step_time_ns),
                    )}
                    {because_waited.then_some(" Its step is long because it waited, not because it was slow: see the rank the others waited for.")}
                </p>
                {ops_table(s.ops, "straggler-ops")}
            </section>
        }
    });
    let waited = f.waited_for.clone().map(|w| {
        view! {
            <section class="card" data-testid="run-waited-for" data-rank=w.rank.to_string() data-arrived-last=w.arrived_last.to_string() data-others-wait-ns=w.others_wait_ns.to_string()>
                <h2>"Waited for: rank " {w.rank}</h2>
                <p>{format!(
                    "Arrived last at {} of its collectives ({:.1}%), a median {} after the collective's median rank; the other ranks waited {} in all at those collectives.",
                    w.arrived_last,
                    w.arrived_last_pct,
                    fmt::dur(w.median_lateness_ns),
                    fmt::dur(w.others_wait_ns),
                )}</p>
                {ops_table(w.ops, "waited-ops")}
            </section>
        }
    });
    let none = (f.straggler.is_none() && f.waited_for.is_none()).then(|| {
        view! { <p class="muted">"No straggler: fewer than two ranks with steps, and no collective matched across ranks."</p> }
    });
    view! { {waited}{straggler}{none} }
}
