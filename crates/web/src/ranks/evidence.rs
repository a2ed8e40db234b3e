//! The straggler: the rank the others wait for (core's one verdict, `report::straggler`), with
//! every reason core gives for it, in core's order (the CLI's Markdown and `analyze --json` list
//! the same reasons), and the evidence table: the kernels (device time) and CPU ops (self time)
//! where that rank spends more per step than the median of the others. Or "no straggler" with
//! core's reason.

use super::run::RunModel;
use crate::widgets::fmt;
use crate::widgets::prose::prose;
use crate::widgets::table::{columns, Col, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::report::run::OpDelta;
use tracelight_core::report::straggler::{NoStraggler, Reason, StragglerVerdict};

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

/// A reason's kind, for tests and styling.
fn kind(r: &Reason) -> &'static str {
    match r {
        Reason::ArrivedLast { .. } => "arrived_last",
        Reason::LateStart { .. } => "late_start",
        Reason::SlowestStep { .. } => "slowest_step",
        Reason::SlowerOps { .. } => "slower_ops",
        Reason::Unexplained => "unexplained",
    }
}

fn none_kind(n: &NoStraggler) -> &'static str {
    match n {
        NoStraggler::NothingToCompare => "nothing_to_compare",
        NoStraggler::WithinNoise { .. } => "within_noise",
    }
}

#[component]
pub fn Evidence(m: Arc<RunModel>) -> impl IntoView {
    let f = &m.figures;
    let n = f.ranks.len();
    match &f.straggler {
        StragglerVerdict::Straggler(s) => {
            let reasons = s
                .reasons
                .iter()
                .map(|r| view! { <li data-testid="straggler-reason" data-kind=kind(r)>{prose(&r.sentence(&fmt::dur_f))}</li> })
                .collect::<Vec<_>>();
            let ops = (!s.ops.is_empty()).then(|| ops_table(s.ops.clone(), "straggler-ops"));
            view! {
                <section class="card" data-testid="run-straggler" data-rank=s.rank.to_string() data-method=s.method.label() data-vs-median=s.vs_median.to_string() data-step-ns=s.step_time_ns.to_string() data-others-wait-ns=s.others_wait_ns.to_string() data-arrived-last=s.arrived_last.to_string()>
                    <h2>"Straggler: rank " {s.rank}</h2>
                    <p class="hint">{format!("The rank the others wait for, found by {} over {n} ranks.", s.method.label())}</p>
                    <ul class="reasons">{reasons}</ul>
                    {ops}
                </section>
            }
            .into_any()
        }
        StragglerVerdict::None(none) => view! {
            <section class="card" data-testid="run-no-straggler">
                <h2>"No straggler"</h2>
                <p data-testid="no-straggler-reason" data-kind=none_kind(none)>{none.sentence(&fmt::dur_f)}</p>
            </section>
        }
        .into_any(),
    }
}
