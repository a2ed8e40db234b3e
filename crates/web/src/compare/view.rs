//! The compare overview: A and B named, the verdict, step time with its spread, the headline
//! figures, the step breakdown and kernel categories side by side with deltas; the diff tables
//! below ([`super::tables`]).

use super::flame::DiffFlameCard;
use super::memory::{CategoryOverlays, MemoryOverlayChart};
use super::snapshot::SnapshotDiffView;
use super::tables::DiffTables;
use super::timelines::PairedTimelines;
use crate::session::pair::{PairReveal, PairedFn};
use crate::session::series::side_of;
use crate::session::Content;
use crate::session::SessionRef;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::ingest::memory_timeline::MemoryTimeline;
use tracelight_core::report::diff::markdown::{figure_delta, figure_label, figure_value};
use tracelight_core::report::diff::memory::category_overlays;
use tracelight_core::report::diff::rows::MatchOptions;
use tracelight_core::report::diff::{
    fmt_delta_ns, fmt_ns, is_rate, share_note, side::Side, Diff, Line,
};
use tracelight_core::report::num;

/// The snapshot diff of A's and B's first snapshots, when neither side holds a trace.
fn snapshot_pair(a: &SessionRef, b: &SessionRef) -> Option<AnyView> {
    fn first(s: &SessionRef) -> Option<(String, &tracelight_core::ingest::snapshot::Snapshot)> {
        if !s.trace_indices().is_empty() {
            return None;
        }
        s.files.iter().find_map(|f| match &f.content {
            Content::Snapshot(x) => Some((f.name.clone(), &x.snap)),
            _ => None,
        })
    }
    let ((an, sa), (bn, sb)) = (first(a)?, first(b)?);
    let diff = tracelight_core::analysis::snapshot_diff::diff(sa, sb);
    Some(view! { <SnapshotDiffView a_label=an b_label=bn diff=diff /> }.into_any())
}

fn pct(a: f64, b: f64) -> String {
    num::change(a, b)
}

/// Rows of per-step times on both sides with a pair of bars (A above B) and the change.
#[component]
fn TimeTable(
    title: &'static str,
    testid: &'static str,
    lines: Vec<Line>,
    step_delta: f64,
) -> impl IntoView {
    let note = share_note(&lines, step_delta);
    let max = lines
        .iter()
        .map(|l| l.a.unwrap_or(0.0).max(l.b.unwrap_or(0.0)))
        .fold(0.0, f64::max)
        .max(1.0);
    let rows = lines
        .into_iter()
        .filter(|l| l.a.unwrap_or(0.0) != 0.0 || l.b.unwrap_or(0.0) != 0.0)
        .map(|l| {
            let (a, b) = (l.a.unwrap_or(0.0), l.b.unwrap_or(0.0));
            let d = b - a;
            let share = if step_delta == 0.0 {
                String::new()
            } else {
                num::share(d / step_delta)
            };
            let cls = if d > 0.0 { "num worse" } else if d < 0.0 { "num better" } else { "num" };
            view! {
                <tr data-key=l.name.clone() data-a-ns=a.to_string() data-b-ns=b.to_string() data-delta-ns=d.to_string()>
                    <td>{l.name.replace('_', " ")}</td>
                    <td class="cmp-bars">
                        <span class="cmp-bar a" style=format!("width:{:.1}%", 100.0 * a / max)></span>
                        <span class="cmp-bar b" style=format!("width:{:.1}%", 100.0 * b / max)></span>
                    </td>
                    <td class="num">{fmt_ns(a)}</td>
                    <td class="num">{fmt_ns(b)}</td>
                    <td class=cls>{fmt_delta_ns(d)}</td>
                    <td class="num">{pct(a, b)}</td>
                    <td class="num">{share}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2>{title}</h2>
            <table class="cmp" data-testid=testid>
                <thead><tr><th></th><th>"A / B"</th><th>"A"</th><th>"B"</th><th>"Δ"</th><th>"Δ %"</th><th title="share of the step-time change">"of Δ step"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            {note.map(|n| view! { <p class="hint" data-testid=format!("{testid}-note")>{n}</p> })}
        </section>
    }
}

/// The headline figures (utilization, communication, memory, FLOP coverage, rates, MFU) as text
/// rows, in core's words and formats (`tracelight diff` prints the same). Rates whose FLOP
/// coverage differs are greyed, their Δ replaced by "not comparable", the reason on hover and
/// under the table.
fn figure_rows(d: &Diff) -> impl IntoView {
    let comparable = d.rates.comparable;
    let why = d.rates.reasons.join("; ");
    d.figures
        .clone()
        .into_iter()
        .filter(|l| l.a.is_some() || l.b.is_some())
        .filter(|l| !(l.name == "flops_per_step" && l.a == Some(0.0) && l.b == Some(0.0)))
        .map(|l| {
            let f = |v: Option<f64>| v.map_or("—".to_owned(), |v| figure_value(&l.name, v));
            let greyed = is_rate(&l.name) && !comparable;
            let delta = match (l.a, l.b) {
                (Some(_), Some(_)) if greyed => "not comparable".to_owned(),
                (Some(a), Some(b)) => figure_delta(&l.name, a, b),
                _ => String::new(),
            };
            let title = if greyed { why.clone() } else { String::new() };
            view! {
                <tr data-key=l.name.clone() class:cmp-na=greyed title=title
                    data-a=l.a.map(|v| v.to_string()).unwrap_or_default() data-b=l.b.map(|v| v.to_string()).unwrap_or_default()>
                    <td>{figure_label(&l.name).to_owned()}</td><td class="num">{f(l.a)}</td><td class="num">{f(l.b)}</td><td class="num">{delta}</td>
                </tr>
            }
        })
        .collect_view()
}

#[component]
pub fn CompareView(
    session: SessionRef,
    compare: Option<SessionRef>,
    /// Opens B (a trace, or a run folder's files).
    on_pick: Callback<web_sys::FileList>,
    /// Opens B from a drop on this view's target (files or a run folder).
    on_drop: Callback<web_sys::DragEvent>,
    /// Draws one side's timeline (`app.rs` passes the timeline feature).
    paired: PairedFn,
) -> impl IntoView {
    let on_change = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            on_pick.run(files);
        }
        input.set_value("");
    };
    let picker = move |label: &'static str| {
        view! {
            <label class="button primary">{label}
                <input type="file" style="display:none" data-testid="compare-input" multiple accept=".json,.gz,.pickle,.pkl" on:change=on_change />
            </label>
        }
    };
    let target = move |text: &'static str| {
        view! {
            <div class="cmp-drop" data-testid="compare-drop"
                on:dragover=move |ev: web_sys::DragEvent| { ev.prevent_default(); ev.stop_propagation(); }
                on:drop=move |ev| on_drop.run(ev)>{text}</div>
        }
    };
    // Two allocator snapshots: the snapshot diff (`tracelight diff A.pickle B.pickle`).
    if let Some(v) = compare.as_ref().and_then(|b| snapshot_pair(&session, b)) {
        return v;
    }
    let (Some(b), Some(a_side)) = (compare, side_of(&session, false)) else {
        return view! {
            <section class="view" data-testid="compare-empty">
                <p>"Compare this trace (A) with another (B): a run before and after a change, another GPU, another torch version. Figures are per step, so different step counts compare fairly; ops renamed by a backend change are matched through their parent op."</p>
                <p>{picker("Pick trace B…")}</p>
                {target("Drop trace B (or B's run folder) here")}
                <p class="muted">"Or open " <code>"?url=A&compare=B"</code> "."</p>
            </section>
        }
        .into_any();
    };
    let Some(b_side) = side_of(&b, false) else {
        return view! { <p class="muted" data-testid="compare-empty">"B holds no Kineto trace."</p> }.into_any();
    };
    let d = Arc::new(Diff::of(a_side, b_side));
    let (sa, sb) = (d.a.step_ns, d.b.step_ns);
    let side_text = |s: &Side| {
        format!(
            "{} · {} {}{}",
            s.label,
            s.step_ns.n,
            if s.has_steps { "steps" } else { "window" },
            s.device
                .as_ref()
                .map(|d| format!(" · {d}"))
                .unwrap_or_default()
        )
    };
    // The diff keyed by name (+ input shapes), renames matched or not: computed on first use.
    let by_shapes = RwSignal::new(false);
    let renames = RwSignal::new(true);
    let variant = {
        let (sa, sb) = (session.clone(), b.clone());
        type Cache = Vec<((bool, bool), Arc<Diff>)>;
        let cell: StoredValue<Cache, LocalStorage> =
            StoredValue::new_local(vec![((false, true), d.clone())]);
        let d0 = d.clone();
        move |shapes: bool, ren: bool| {
            if let Some(x) = cell.with_value(|c| {
                c.iter()
                    .find(|(k, _)| *k == (shapes, ren))
                    .map(|(_, x)| x.clone())
            }) {
                return x;
            }
            let x = side_of(&sa, shapes).zip(side_of(&sb, shapes)).map_or_else(
                || d0.clone(),
                |(a, b)| Arc::new(Diff::with(a, b, MatchOptions { renames: ren })),
            );
            cell.update_value(|c| c.push(((shapes, ren), x.clone())));
            x
        }
    };
    let reveals = (
        RwSignal::new(None as PairReveal),
        RwSignal::new(None as PairReveal),
    );
    // Memory of both sides' first traces, when both recorded it.
    fn first(s: &SessionRef) -> Option<&crate::session::TraceFile> {
        s.trace_indices().first().and_then(|&i| s.trace(i))
    }
    let overlay = first(&session).zip(first(&b)).and_then(|(x, y)| {
        tracelight_core::report::diff::memory::memory_overlay(&x.trace, &y.trace)
    });
    fn timeline(s: &SessionRef) -> Option<&MemoryTimeline> {
        s.files.iter().find_map(|f| match &f.content {
            Content::MemoryTimeline(m) => Some(&**m),
            _ => None,
        })
    }
    let categories = timeline(&session)
        .zip(timeline(&b))
        .map(|(x, y)| category_overlays(x, y))
        .unwrap_or_default();
    let noise = if d.within_noise { " cmp-noise" } else { "" };
    view! {
        <section class="view" data-testid="compare-view">
            <div class="toolbar">
                <span><b>"A "</b>{side_text(&d.a)}</span>
                <span><b>"B "</b>{side_text(&d.b)}</span>
                {picker("Replace B…")}
                {target("or drop a new B here")}
            </div>
            <p class=format!("cmp-verdict{noise}") data-testid="compare-verdict">{d.verdict.clone()}</p>
            {(!d.setup_notes.is_empty()).then(|| view! {
                <div class="error warning" role="note" data-testid="compare-setup">
                    <span><b>"Not like for like: "</b>{d.setup_notes.join("; ")}
                    ". Figures per step still compare; read rates and per-op changes with this in mind."</span>
                </div>
            })}
            <div class="grid2">
                <section class="card">
                    <h2>"Step time"</h2>
                    <table class="cmp">
                        <thead><tr><th></th><th>"A"</th><th>"B"</th><th>"Δ"</th></tr></thead>
                        <tbody>
                            <tr data-testid="compare-step" data-a-ns=sa.mean.to_string() data-b-ns=sb.mean.to_string()
                                data-delta-ns=d.step_delta_ns.to_string() data-a-stdev-ns=sa.stdev.to_string() data-b-stdev-ns=sb.stdev.to_string()>
                                <td>"mean"</td><td class="num">{fmt_ns(sa.mean)}</td><td class="num">{fmt_ns(sb.mean)}</td>
                                <td class="num">{format!("{} ({})", fmt_delta_ns(d.step_delta_ns), pct(sa.mean, sb.mean))}</td>
                            </tr>
                            <tr data-testid="compare-step-median" data-a-ns=sa.median.to_string() data-b-ns=sb.median.to_string()>
                                <td title="the middle step: unlike the mean, not pulled by a slow warm-up step">"median"</td><td class="num">{fmt_ns(sa.median)}</td><td class="num">{fmt_ns(sb.median)}</td>
                                <td class="num">{format!("{} ({})", fmt_delta_ns(sb.median - sa.median), pct(sa.median, sb.median))}</td>
                            </tr>
                            <tr><td>"min – max"</td><td class="num">{format!("{} – {}", fmt_ns(sa.min), fmt_ns(sa.max))}</td><td class="num">{format!("{} – {}", fmt_ns(sb.min), fmt_ns(sb.max))}</td><td></td></tr>
                            <tr><td>"σ (step to step)"</td><td class="num">{fmt_ns(sa.stdev)}</td><td class="num">{fmt_ns(sb.stdev)}</td><td></td></tr>
                        </tbody>
                    </table>
                    <table class="cmp" data-testid="compare-figures">
                        <thead><tr><th></th><th>"A"</th><th>"B"</th><th>"Δ"</th></tr></thead>
                        <tbody>{figure_rows(&d)}</tbody>
                    </table>
                    {(!d.rates.comparable && d.figures.iter().any(|l| is_rate(&l.name) && l.a.is_some() && l.b.is_some())).then(|| view! {
                        <p class="hint" data-testid="compare-rates-note">
                            {format!("FLOP rates not compared: {}. Rates measure only the ops whose FLOPs were counted; compare step time instead.", d.rates.reasons.join("; "))}
                        </p>
                    })}
                </section>
                <TimeTable title="Step breakdown (per step)" testid="compare-breakdown" lines=d.breakdown.clone() step_delta=d.step_delta_ns />
                <TimeTable title="Kernel categories, fine (GPU time per step)" testid="compare-fine" lines=d.fine_categories.clone() step_delta=d.step_delta_ns />
                <TimeTable title="Kernel categories, seed (GPU time per step)" testid="compare-seed" lines=d.seed_categories.clone() step_delta=d.step_delta_ns />
            </div>
            {overlay.map(|o| view! { <MemoryOverlayChart overlay=Arc::new(o) /> })}
            {(!categories.is_empty()).then(|| view! { <CategoryOverlays overlays=categories /> })}
            <PairedTimelines a=session.clone() b=b.clone() reveal_a=reveals.0 reveal_b=reveals.1 paired=paired />
            <div class="cmp-options">
                <label class="muted">
                    <input type="checkbox" data-testid="compare-by-shapes" prop:checked=move || by_shapes.get()
                        on:change=move |ev| by_shapes.set(event_target_checked(&ev)) />
                    " Group ops by input shapes (as " <code>"tracelight diff --group-by-input-shape"</code> ")"
                </label>
                <label class="muted" title="Match an op or kernel renamed by a backend change with its counterpart of the same family (gemm with gemm, elementwise with elementwise) under the nearest op both sides have. Off: only exact names match.">
                    <input type="checkbox" data-testid="compare-renames" prop:checked=move || renames.get()
                        on:change=move |ev| renames.set(event_target_checked(&ev)) />
                    " Match renamed ops and kernels within their family (off: " <code>"tracelight diff --no-renames"</code> ")"
                </label>
            </div>
            {
                let (sa, sb, variant) = (session.clone(), b.clone(), variant.clone());
                move || {
                    let diff = variant(by_shapes.get(), renames.get());
                    view! { <DiffTables diff=diff session=sa.clone() b=sb.clone() reveals=reveals /> }
                }
            }
            {move || {
                // Keyed by name (not shapes): frames match by name path; renames as the tables.
                let diff = variant(false, renames.get());
                view! { <DiffFlameCard a=session.clone() b=b.clone() diff=diff reveals=reveals /> }
            }}
        </section>
    }
    .into_any()
}
