//! The op and kernel diff tables: one row per matched op or kernel (or one-sided: added /
//! removed), with calls, per-step time in A and B, the change and its share of the step-time
//! change; sorted by impact (|Δ per step|), sortable by any column, filtered by name (either
//! side's). A row click shows its occurrences in A's and B's timelines, side by side above.

use crate::session::pair::PairReveal;
use crate::session::{reveal, SessionRef};
use crate::widgets::table::{columns, next_sort, Col, Sort, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::report::diff::rows::{DiffRow, MatchedBy, Status};
use tracelight_core::report::diff::{fmt_delta_ns, fmt_ns, Diff, Measure};
use tracelight_core::report::num;

fn status_text(r: &DiffRow) -> String {
    let s = match (r.status, r.matched_by) {
        (Status::Added, _) => "added",
        (Status::Removed, _) => "removed",
        (_, Some(MatchedBy::Parent)) if !r.a_members.is_empty() || !r.b_members.is_empty() => {
            "merged"
        }
        (_, Some(MatchedBy::Parent | MatchedBy::Sizes)) => "renamed",
        (Status::Same, _) => "same",
        (Status::Changed, _) => "changed",
    };
    let more = |m: &[String]| {
        if m.len() > 1 {
            format!(" (+{} more)", m.len() - 1)
        } else {
            String::new()
        }
    };
    match &r.b_name {
        Some(b) => format!("{s} → {b}{}", more(&r.b_members)),
        None => s.to_owned(),
    }
}

columns! {
    /// The op and kernel diff tables' columns.
    enum DiffCol {
        Name = "name",
        Status = "status",
        Via = "via",
        ACalls = "a_calls",
        BCalls = "b_calls",
        AStep = "a_step",
        BStep = "b_step",
        Delta = "delta",
        Share = "share",
    }
}

/// The number a column sorts by; `None` for the text columns.
fn num(r: &DiffRow, col: DiffCol) -> Option<f64> {
    Some(match col {
        DiffCol::ACalls => r.a_calls as f64,
        DiffCol::BCalls => r.b_calls as f64,
        DiffCol::AStep => r.a_step_ns,
        DiffCol::BStep => r.b_step_ns,
        DiffCol::Delta => r.delta_step_ns,
        DiffCol::Share => r.share.unwrap_or(0.0),
        DiffCol::Name | DiffCol::Status | DiffCol::Via => return None,
    })
}

fn cell(r: &DiffRow, col: DiffCol) -> String {
    match col {
        DiffCol::Name => r.name.clone(),
        DiffCol::Status => status_text(r),
        DiffCol::Via => r.how(),
        DiffCol::ACalls => r.a_calls.to_string(),
        DiffCol::BCalls => r.b_calls.to_string(),
        DiffCol::AStep => fmt_ns(r.a_step_ns),
        DiffCol::BStep => fmt_ns(r.b_step_ns),
        DiffCol::Delta => fmt_delta_ns(r.delta_step_ns),
        DiffCol::Share => r.share.map(num::share).unwrap_or_default(),
    }
}

/// Where a row click shows its occurrences: A's and B's timelines side by side.
pub type Reveals = (RwSignal<PairReveal>, RwSignal<PairReveal>);

/// The slices of `names` in a side's first trace (op or kernel names).
pub fn side_slices(s: &SessionRef, names: &[String], kernels: bool) -> Vec<u32> {
    let Some(tf) = s.trace_indices().first().and_then(|&f| s.trace(f)) else {
        return Vec::new();
    };
    let mut slices = Vec::new();
    for n in names {
        if kernels {
            slices.extend(reveal::gpu_slices(&tf.trace, n));
        } else if let Some(op) = tf
            .analysis()
            .ops
            .rows
            .iter()
            .find(|o| &o.name == n && !o.on_device)
        {
            slices.extend(reveal::op_slices(&tf.trace, op));
        }
    }
    slices.sort_unstable();
    slices.dedup();
    slices
}

#[component]
fn DiffTable(
    rows: Arc<Vec<DiffRow>>,
    filter: RwSignal<String>,
    kernels: bool,
    session: SessionRef,
    b: SessionRef,
    reveals: Reveals,
    testid: &'static str,
    title: String,
) -> impl IntoView {
    // Default order: the core's, by impact.
    let sort = RwSignal::new(None as Sort<DiffCol>);
    let rows2 = rows.clone();
    let order = Memo::new(move |_| {
        let needle = filter.get().to_lowercase();
        let mut v: Vec<usize> = (0..rows2.len())
            .filter(|&i| {
                let r = &rows2[i];
                needle.is_empty()
                    || r.name.to_lowercase().contains(&needle)
                    || r.b_name
                        .as_ref()
                        .is_some_and(|b| b.to_lowercase().contains(&needle))
            })
            .collect();
        if let Some((k, desc)) = sort.get() {
            tracelight_core::sort::by(&mut v, |&a, &b| {
                let (x, y) = (&rows2[a], &rows2[b]);
                let o = match (num(x, k), num(y, k)) {
                    (Some(p), Some(q)) => p.total_cmp(&q),
                    _ => cell(x, k).cmp(&cell(y, k)),
                };
                (if desc { o.reverse() } else { o }).then(a.cmp(&b))
            });
        }
        Arc::new(v)
    });
    let cols = vec![
        Col::name(
            DiffCol::Name,
            if kernels { "Kernel (A)" } else { "Op (A)" },
            320,
        ),
        Col::text(DiffCol::Status, "Status / B", 220).tip(
            "same, changed, added, removed; renamed or merged → B's name when it was matched under another name",
        ),
        Col::text(DiffCol::Via, "How matched", 240).tip(
            "same name; or renamed within one family (gemm with gemm…) under the nearest op both sides have, with how sure: medium = the only one of its family there, low = by order among several, a merged group or a compiled region",
        ),
        Col::num(DiffCol::ACalls, "A calls", 70),
        Col::num(DiffCol::BCalls, "B calls", 70),
        Col::num(DiffCol::AStep, "A / step", 90),
        Col::num(DiffCol::BStep, "B / step", 90),
        Col::num(DiffCol::Delta, "Δ / step", 96),
        Col::num(DiffCol::Share, "of Δ step", 80).tip("this row's change ÷ the step-time change"),
    ];
    let rows3 = rows.clone();
    let cell_cb = Callback::new(move |(r, key): (usize, DiffCol)| {
        order
            .get_untracked()
            .get(r)
            .and_then(|&i| rows3.get(i))
            .map(|row| cell(row, key))
            .unwrap_or_default()
    });
    let rows4 = rows.clone();
    let store = StoredValue::new((session, b));
    let on_activate = Callback::new(move |r: usize| {
        let Some(row) = order
            .get_untracked()
            .get(r)
            .and_then(|&i| rows4.get(i))
            .cloned()
        else {
            return;
        };
        let names = |members: &[String], name: Option<&String>| -> Vec<String> {
            if members.is_empty() {
                name.cloned().into_iter().collect()
            } else {
                members.to_vec()
            }
        };
        let a_names = match row.status {
            Status::Added => Vec::new(),
            _ => names(&row.a_members, Some(&row.name)),
        };
        let b_names = match row.status {
            Status::Removed => Vec::new(),
            _ => names(&row.b_members, row.b_name.as_ref().or(Some(&row.name))),
        };
        store.with_value(|(a, b)| {
            let label = |side: &str| format!("{side}: {}", row.name);
            reveals.0.set(Some((
                Arc::new(side_slices(a, &a_names, kernels)),
                label("A"),
            )));
            reveals.1.set(Some((
                Arc::new(side_slices(b, &b_names, kernels)),
                label("B"),
            )));
        });
        if let Some(el) = document()
            .query_selector("[data-testid=compare-timelines]")
            .ok()
            .flatten()
        {
            el.scroll_into_view();
        }
    });
    let on_sort = Callback::new(move |k: DiffCol| {
        let numeric = !matches!(k, DiffCol::Name | DiffCol::Status | DiffCol::Via);
        sort.update(|s| *s = next_sort(*s, k, numeric))
    });
    let len = Signal::derive(move || order.get().len());
    view! {
        <section class="card">
            <h2>{title}</h2>
            <VTable cols=cols len=len cell=cell_cb on_activate=on_activate on_sort=on_sort sort=sort testid=testid visible_rows=14 label="Diff" />
        </section>
    }
}

#[component]
pub fn DiffTables(
    diff: Arc<Diff>,
    session: SessionRef,
    b: SessionRef,
    reveals: Reveals,
) -> impl IntoView {
    let filter = RwSignal::new(String::new());
    let what = match diff.measure {
        Measure::Device => "device time",
        Measure::Cpu => "CPU time",
    };
    view! {
        <div class="toolbar">
            <input class="search" type="search" placeholder="Filter ops and kernels by name (A or B)…" data-testid="compare-filter"
                prop:value=move || filter.get() on:input=move |ev| filter.set(event_target_value(&ev)) />
            <span class="muted">"Sorted by impact (|Δ per step|); click a header to sort, a row to see its occurrences in both timelines."</span>
        </div>
        <DiffTable rows=Arc::new(diff.ops.clone()) filter=filter kernels=false session=session.clone() b=b.clone() reveals=reveals
            testid="compare-ops" title=format!("Ops ({what} per step)") />
        <DiffTable rows=Arc::new(diff.kernels.clone()) filter=filter kernels=true session=session b=b reveals=reveals
            testid="compare-kernels" title="Kernels, copies, memsets (GPU time per step)".to_owned() />
    }
}
