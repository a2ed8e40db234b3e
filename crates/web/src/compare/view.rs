//! The compare overview: A and B named, the verdict, step time with its spread, the headline
//! figures, the step breakdown and kernel categories side by side with deltas; the diff tables
//! below ([`super::tables`]).

use super::memory::{CategoryOverlays, MemoryOverlayChart};
use super::tables::DiffTables;
use super::timelines::PairedTimelines;
use crate::session::pair::{PairReveal, PairedFn};
use crate::session::Content;
use crate::session::SessionRef;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::ingest::memory_timeline::MemoryTimeline;
use tracelight_core::model::Trace;
use tracelight_core::report::diff::memory::category_overlays;
use tracelight_core::report::diff::{fmt_delta_ns, fmt_ns, side::Side, Diff, Line};
use tracelight_core::report::json::Analysis;

/// A session's traces as one side (its ranks, in rank order); ops keyed by name, or by name and
/// input shapes.
pub fn side_of(s: &SessionRef, by_shapes: bool) -> Option<Side> {
    let idx = s.trace_indices();
    let first = s.files.get(*idx.first()?)?.name.clone();
    let pairs: Vec<(&Trace, &Analysis)> = idx
        .iter()
        .filter_map(|&i| s.trace(i))
        .map(|tf| (&tf.trace, tf.analysis()))
        .collect();
    let label = if idx.len() > 1 {
        format!("{first} … ({} ranks)", idx.len())
    } else {
        first
    };
    Some(Side::of(&label, &pairs, by_shapes))
}

fn pct(a: f64, b: f64) -> String {
    if a == 0.0 {
        String::new()
    } else {
        format!("{:+.1}%", 100.0 * (b - a) / a)
    }
}

/// Rows of per-step times on both sides with a pair of bars (A above B) and the change.
#[component]
fn TimeTable(
    title: &'static str,
    testid: &'static str,
    lines: Vec<Line>,
    step_delta: f64,
) -> impl IntoView {
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
                format!("{:.0}%", 100.0 * d / step_delta)
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
        </section>
    }
}

/// The headline figures (utilization, communication, memory, TFLOPS, MFU) as text rows.
fn figure_rows(d: &Diff) -> impl IntoView {
    d.figures
        .clone()
        .into_iter()
        .filter(|l| l.a.is_some() || l.b.is_some())
        .map(|l| {
            let f = |v: Option<f64>| -> String {
                let Some(v) = v else { return "—".into() };
                match l.name.as_str() {
                    "gpu_utilization" | "mfu" => format!("{:.1}%", 100.0 * v),
                    "tflops" => format!("{v:.2}"),
                    "comm_ns" | "exposed_comm_ns" => fmt_ns(v),
                    _ => tracelight_core::report::memory::signed_bytes(v as i64),
                }
            };
            let label = match l.name.as_str() {
                "gpu_utilization" => "GPU utilization",
                "comm_ns" => "communication / step",
                "exposed_comm_ns" => "exposed communication / step",
                "peak_allocated_bytes" => "peak allocated",
                "peak_reserved_bytes" => "peak reserved",
                "tflops" => "achieved TFLOPS (window)",
                "mfu" => "MFU",
                n => n,
            }
            .to_owned();
            let delta = match (l.a, l.b, l.name.as_str()) {
                (Some(a), Some(b), "gpu_utilization" | "mfu") => format!("{:+.1} pt", 100.0 * (b - a)),
                (Some(a), Some(b), _) => pct(a, b),
                _ => String::new(),
            };
            view! {
                <tr data-key=l.name.clone() data-a=l.a.map(|v| v.to_string()).unwrap_or_default() data-b=l.b.map(|v| v.to_string()).unwrap_or_default()>
                    <td>{label}</td><td class="num">{f(l.a)}</td><td class="num">{f(l.b)}</td><td class="num">{delta}</td>
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
                <input type="file" style="display:none" data-testid="compare-input" multiple accept=".json,.gz" on:change=on_change />
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
    // The diff keyed by name + input shapes, computed on first use.
    let by_shapes = RwSignal::new(false);
    let shaped = {
        let (sa, sb) = (session.clone(), b.clone());
        let cell: StoredValue<Option<Arc<Diff>>, LocalStorage> = StoredValue::new_local(None);
        let d0 = d.clone();
        move || {
            if let Some(x) = cell.get_value() {
                return x;
            }
            let x = side_of(&sa, true)
                .zip(side_of(&sb, true))
                .map_or_else(|| d0.clone(), |(a, b)| Arc::new(Diff::of(a, b)));
            cell.set_value(Some(x.clone()));
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
                            <tr><td>"min – max"</td><td class="num">{format!("{} – {}", fmt_ns(sa.min), fmt_ns(sa.max))}</td><td class="num">{format!("{} – {}", fmt_ns(sb.min), fmt_ns(sb.max))}</td><td></td></tr>
                            <tr><td>"σ (step to step)"</td><td class="num">{fmt_ns(sa.stdev)}</td><td class="num">{fmt_ns(sb.stdev)}</td><td></td></tr>
                        </tbody>
                    </table>
                    <table class="cmp" data-testid="compare-figures">
                        <thead><tr><th></th><th>"A"</th><th>"B"</th><th>"Δ"</th></tr></thead>
                        <tbody>{figure_rows(&d)}</tbody>
                    </table>
                </section>
                <TimeTable title="Step breakdown (per step)" testid="compare-breakdown" lines=d.breakdown.clone() step_delta=d.step_delta_ns />
                <TimeTable title="Kernel categories, fine (GPU time per step)" testid="compare-fine" lines=d.fine_categories.clone() step_delta=d.step_delta_ns />
                <TimeTable title="Kernel categories, seed (GPU time per step)" testid="compare-seed" lines=d.seed_categories.clone() step_delta=d.step_delta_ns />
            </div>
            {overlay.map(|o| view! { <MemoryOverlayChart overlay=Arc::new(o) /> })}
            {(!categories.is_empty()).then(|| view! { <CategoryOverlays overlays=categories /> })}
            <PairedTimelines a=session.clone() b=b.clone() reveal_a=reveals.0 reveal_b=reveals.1 paired=paired />
            <label class="muted" style="display:block;margin-top:12px">
                <input type="checkbox" data-testid="compare-by-shapes" prop:checked=move || by_shapes.get()
                    on:change=move |ev| by_shapes.set(event_target_checked(&ev)) />
                " Group ops by input shapes (as " <code>"tracelight diff --group-by-input-shape"</code> ")"
            </label>
            {move || {
                let diff = if by_shapes.get() { shaped() } else { d.clone() };
                view! { <DiffTables diff=diff session=session.clone() b=b.clone() reveals=reveals /> }
            }}
        </section>
    }
    .into_any()
}
