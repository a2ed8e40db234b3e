//! Per-rank wait heatmaps: one row per rank, one cell per matched collective (in time order on
//! the aligned clock) and, when the ranks have several steps, one per step (core's
//! `wait_per_step_ns`). A cell's colour is its wait against the grid's longest, on core's
//! [`wait_heat`] scale; its exact wait is in the tooltip and `data-wait-ns`.

use super::run::RunModel;
use crate::widgets::fmt;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::model::Ns;
use tracelight_core::view::palette::wait_heat;

/// Widest grid drawn as cells (a long run's collectives beyond it are left out and said so).
const MAX_COLUMNS: usize = 400;

struct Grid {
    /// Column titles (tooltips).
    cols: Vec<String>,
    /// (rank, wait per column; `None` where the rank took no part).
    rows: Vec<(i64, Vec<Option<Ns>>)>,
}

/// `on_cell(rank, column)`: what a click on a cell does, if anything.
fn draw(
    g: Grid,
    testid: &'static str,
    what: &'static str,
    on_cell: Option<Callback<(i64, usize)>>,
) -> impl IntoView {
    let max = g
        .rows
        .iter()
        .flat_map(|r| r.1.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1);
    let ncols = g.cols.len();
    let cols = Arc::new(g.cols);
    let rows = g
        .rows
        .into_iter()
        .map(|(rank, waits)| {
            let cells = waits
                .into_iter()
                .enumerate()
                .map(|(k, w)| {
                    let title = cols.get(k).cloned().unwrap_or_default();
                    match w {
                        Some(w) => {
                            let style = format!("background:{}", wait_heat(w as f64 / max as f64));
                            let tip = format!("rank {rank} · {title}: waited {}", fmt::dur(w));
                            let click = move |_| {
                                if let Some(cb) = on_cell {
                                    cb.run((rank, k));
                                }
                            };
                            view! { <span class="hm-cell" class:hm-click=on_cell.is_some() style=style title=tip data-wait-ns=w.to_string() on:click=click></span> }.into_any()
                        }
                        None => view! { <span class="hm-cell hm-none" title=format!("rank {rank} · {title}: not part of it")></span> }.into_any(),
                    }
                })
                .collect::<Vec<_>>();
            view! {
                <div class="hm-row" data-rank=rank.to_string()>
                    <span class="hm-label">{format!("rank {rank}")}</span>
                    {cells}
                </div>
            }
        })
        .collect::<Vec<_>>();
    let legend = format!(
        "{}: white-grey = no wait, brown = the longest wait ({}).",
        what,
        fmt::dur(max)
    );
    view! {
        <div class="heatmap" data-testid=testid data-cols=ncols.to_string() style=format!("--hm-cols:{ncols}")>
            {rows}
            <p class="hint">
                <span class="hm-cell hm-key" style=format!("background:{}", wait_heat(0.0))></span>
                <span class="hm-cell hm-key" style=format!("background:{}", wait_heat(0.5))></span>
                <span class="hm-cell hm-key" style=format!("background:{}", wait_heat(1.0))></span>
                " " {legend}
            </p>
        </div>
    }
}

#[component]
pub fn WaitHeatmap(m: Arc<RunModel>, focus: RwSignal<Option<usize>>) -> impl IntoView {
    let f = &m.figures;
    let mut ranks: Vec<usize> = (0..f.ranks.len()).collect();
    tracelight_core::sort::by_key(&mut ranks, |&k| f.ranks[k].rank);
    // Collectives in time order: by their earliest arrival on the aligned clock.
    let mut order: Vec<usize> = (0..f.collectives.len()).collect();
    tracelight_core::sort::by_key(&mut order, |&c| {
        let first = f.collectives[c].parts.iter().map(|p| p.start_ns).min();
        (first.unwrap_or(0), c)
    });
    let cut = order.len().saturating_sub(MAX_COLUMNS);
    order.truncate(MAX_COLUMNS);
    let by_coll = Grid {
        cols: order
            .iter()
            .map(|&c| {
                let x = &f.collectives[c];
                format!("{} #{} (skew {})", x.name, x.seq, fmt::dur(x.skew_ns))
            })
            .collect(),
        rows: ranks
            .iter()
            .map(|&k| {
                let rank = f.ranks[k].rank;
                let w = order
                    .iter()
                    .map(|&c| {
                        f.collectives[c]
                            .parts
                            .iter()
                            .find(|p| p.rank == rank)
                            .map(|p| p.wait_ns)
                    })
                    .collect();
                (rank, w)
            })
            .collect(),
    };
    let steps = f
        .ranks
        .iter()
        .map(|r| r.wait_per_step_ns.len())
        .max()
        .unwrap_or(0);
    // Per step only when something was waited on (no matched collective: no wait to place).
    let by_step = (steps > 1 && !f.collectives.is_empty()).then(|| {
        let g = Grid {
            cols: (0..steps)
                .map(|s| format!("step {} of the trace", s + 1))
                .collect(),
            rows: ranks
                .iter()
                .map(|&k| {
                    let r = &f.ranks[k];
                    (
                        r.rank,
                        (0..steps)
                            .map(|s| r.wait_per_step_ns.get(s).copied())
                            .collect(),
                    )
                })
                .collect(),
        };
        draw(g, "wait-heatmap-steps", "Wait per rank and step", None)
    });
    let body = if f.collectives.is_empty() {
        view! { <p class="muted">"No collective matched across ranks: nothing waited on."</p> }
            .into_any()
    } else {
        // A cell: that collective in the aligned timelines, its kernels joined across the ranks.
        let cols = order.clone();
        let on_cell = Callback::new(move |(_rank, k): (i64, usize)| {
            if let Some(&c) = cols.get(k) {
                focus.set(Some(c));
                scroll_to_aligned();
            }
        });
        draw(
            by_coll,
            "wait-heatmap",
            "Wait per rank and collective (click a cell: that collective in the aligned timelines)",
            Some(on_cell),
        )
        .into_any()
    };
    let note = (cut > 0).then(|| {
        format!("The first {MAX_COLUMNS} collectives are drawn; {cut} more are in the table.")
    });
    view! {
        <section class="card">
            <h2>"Who waited, where"</h2>
            {body}
            {note.map(|n| view! { <p class="hint">{n}</p> })}
            {by_step}
        </section>
    }
}

/// Brings the aligned timelines into view (a heatmap cell picked their collective).
fn scroll_to_aligned() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("[data-testid=aligned]").ok().flatten())
    {
        el.scroll_into_view();
    }
}
