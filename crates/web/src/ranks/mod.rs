//! The Ranks tab (issue 13): a profiling run opened as one session — the run bar (ranks ×
//! artifacts found and missing, files skipped and why), the per-rank table, the straggler and the
//! rank the others waited for with the ops that explain them, the matched collectives and the
//! per-rank wait heatmap, each rank's steps, and the aligned timelines of all ranks. Every figure is core's ([`run::RunModel`]: `run::layout` and
//! `report::run`, what `tracelight analyze DIR --json` prints); this folder only lays them out.
//! It uses `session`, `widgets` and `platform` only; `app.rs` adds its tab.

mod aligned;
mod aligned_data;
mod aligned_paint;
mod collectives;
mod evidence;
mod flight;
mod flight_detail;
mod flight_grid;
mod heatmap;
mod memory;
mod oom;
pub mod run;
mod steps;
mod table;

use crate::session::SessionRef;
use leptos::prelude::*;
use run::RunModel;
use std::sync::Arc;
use tracelight_core::run::layout::{Artifact, LayoutKind};

#[component]
pub fn RanksView(session: SessionRef, skipped: Vec<(String, String)>) -> impl IntoView {
    // A `tensorboard_trace_handler` run with `repeat > 1` (or nanochat's stages): one cycle at a
    // time, never mixed.
    let cycle = RwSignal::new(0u32);
    let body = move || {
        let m = Arc::new(RunModel::of(&session, &skipped, cycle.get()));
        // The collective the aligned timelines join by a flow: the largest skew until a heatmap
        // cell picks another.
        let c = &m.figures.collectives;
        let focus =
            RwSignal::new((0..c.len()).max_by_key(|&k| (c[k].skew_ns, std::cmp::Reverse(k))));
        // A run of dumps alone (the job hung, nothing was profiled) has no per-rank figures.
        let traces = (!m.figures.ranks.is_empty()).then(|| {
            view! {
                <table::RankTable m=m.clone() />
                <steps::StepTable m=m.clone() />
                <evidence::Evidence m=m.clone() />
                <aligned::AlignedTimelines m=m.clone() session=session.clone() focus=focus />
                <collectives::CollectiveTable m=m.clone() session=session.clone() />
                <heatmap::WaitHeatmap m=m.clone() focus=focus />
            }
        });
        // A folder of allocator snapshots (OOM dumps): which ranks differ, what failed.
        let oom = crate::session::run::oom_dumps(&session, &m.layout, cycle.get())
            .map(|r| view! { <oom::OomDumps run=r /> });
        view! {
            {oom}
            <flight::FlightRecorder m=m.clone() session=session.clone() />
            <RunBar m=m.clone() cycle=cycle />
            {traces}
        }
    };
    view! { <section class="view ranks" data-testid="ranks-view">{body}</section> }
}

/// Ranks × artifacts: what each rank has, what it lacks, and the files left out.
#[component]
fn RunBar(m: Arc<RunModel>, cycle: RwSignal<u32>) -> impl IntoView {
    let lay = &m.layout;
    // (label, the name `analyze DIR --json` gives it).
    let (kind, slug) = match lay.kind {
        LayoutKind::Nemo => ("NeMo", "nemo"),
        LayoutKind::TraceHandler => ("tensorboard_trace_handler", "trace_handler"),
        LayoutKind::Nanochat => ("nanochat stages", "nanochat"),
        LayoutKind::LooseRanks => ("loose rank files", "loose_ranks"),
        LayoutKind::Single => ("a single file", "single"),
    };
    let ranks = lay.ranks().len();
    let cycles = lay.cycles();
    let cycle_pick = (cycles > 1).then(|| {
        let options = (0..cycles)
            .map(|c| {
                let stage = lay
                    .units
                    .iter()
                    .find(|u| u.cycle == c)
                    .and_then(|u| u.stage.clone())
                    .map_or_else(String::new, |s| format!(" · {s}"));
                view! { <option value=c.to_string() selected=c == m.cycle>{format!("cycle {c}{stage}")}</option> }
            })
            .collect::<Vec<_>>();
        let on_change = move |ev: web_sys::Event| {
            if let Ok(c) = event_target_value(&ev).parse::<u32>() {
                cycle.set(c);
            }
        };
        view! {
            " Figures below: "
            <select data-testid="cycle-select" on:change=on_change>{options}</select>
            " (the profiler wrote each cycle as its own files; they are never mixed)."
        }
    });
    let head = Artifact::ALL
        .iter()
        .filter(|a| lay.expected.contains(a) || lay.units.iter().any(|u| u.file(**a).is_some()))
        .copied()
        .collect::<Vec<_>>();
    let rows = lay
        .units
        .iter()
        .map(|u| {
            let missing = lay.missing(u);
            let cells = head
                .iter()
                .map(|&a| match u.file(a) {
                    Some(p) => view! { <td class="found" data-artifact=a.label() title=p.to_owned()>"✓ " {p.to_owned()}</td> }.into_any(),
                    None if missing.contains(&a) => view! { <td class="missing" data-artifact=a.label()>"missing"</td> }.into_any(),
                    None => view! { <td class="muted" data-artifact=a.label()>"–"</td> }.into_any(),
                })
                .collect::<Vec<_>>();
            let stage = u.stage.clone().unwrap_or_default();
            view! {
                <tr data-testid="run-unit" data-rank=u.rank.to_string() data-cycle=u.cycle.to_string() data-missing=missing.len().to_string()>
                    <td class="num">{u.rank}</td>
                    <td class="num">{u.cycle}</td>
                    <td>{stage}</td>
                    {cells}
                </tr>
            }
        })
        .collect::<Vec<_>>();
    let heads = head
        .iter()
        .map(|a| view! { <th>{a.label()}</th> })
        .collect::<Vec<_>>();
    let skipped = (!lay.skipped.is_empty()).then(|| {
        let items = lay
            .skipped
            .iter()
            .map(|s| view! { <li data-testid="run-skipped" data-path=s.path.clone()><code>{s.path.clone()}</code>": " {s.reason.clone()}</li> })
            .collect::<Vec<_>>();
        view! {
            <details class="run-skipped">
                <summary>{format!("{} file(s) skipped", lay.skipped.len())}</summary>
                <ul>{items}</ul>
            </details>
        }
    });
    let missing: usize = lay.units.iter().map(|u| lay.missing(u).len()).sum();
    view! {
        <section class="card run-bar" data-testid="run-bar" data-layout=slug data-ranks=ranks.to_string() data-cycles=cycles.to_string() data-cycle=m.cycle.to_string() data-skipped=lay.skipped.len().to_string()>
            <h2>"Run"</h2>
            <p>
                "Layout: " <b>{kind}</b>
                {format!(", {ranks} rank(s), {cycles} cycle(s), {} artifact(s) missing.", missing)}
                {cycle_pick}
            </p>
            <div class="run-grid">
                <table class="plain">
                    <thead><tr><th>"rank"</th><th>"cycle"</th><th>"stage"</th>{heads}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {skipped}
        </section>
    }
}
