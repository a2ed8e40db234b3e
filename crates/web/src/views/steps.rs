//! The step breakdown (TensorBoard plugin priorities, docs/definitions.md): all steps together as
//! one stacked bar, then each step as its own bar with its time and, under it, the step's GPU
//! idle time split by cause (`analysis::idle`); a step links to it in the timeline.

use crate::session::{Nav, SessionRef};
use crate::widgets::bars::{Bar, StackBar};
use crate::widgets::fmt;
use crate::widgets::palette::color_of;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::steps::CATEGORIES;

fn label(cat: &str) -> &'static str {
    match cat {
        "kernel" => "Kernel",
        "memcpy" => "Memcpy",
        "memset" => "Memset",
        "communication" => "Communication",
        "runtime" => "Runtime",
        "dataloader" => "DataLoader",
        "cpu_exec" => "CPU Exec",
        _ => "Other",
    }
}

fn parts(p: &[i64; 8]) -> Vec<Bar> {
    CATEGORIES
        .iter()
        .zip(p)
        .map(|(c, v)| Bar {
            key: (*c).to_owned(),
            label: label(c).to_owned(),
            value_ns: *v,
            color: color_of(c),
        })
        .collect()
}

/// Lists of up to this many steps are built whole; longer ones are windowed: only the rows in
/// view (and [`OVERSCAN`] either side) exist, placed at their offset in a box as tall as all of
/// them. A trace of 5,000 steps built 70,000 elements, and every frame that added rows re-laid
/// them all out (tasks of 200-400 ms on the page's thread).
const WHOLE_MAX: usize = 64;
const OVERSCAN: usize = 8;
/// Rows the box shows (its CSS `max-height`, 260 px, over the row height).
const VISIBLE: usize = 12;

/// A windowed row's height in CSS px: the name line, or the two bars with the idle one.
fn row_px(has_idle: bool) -> f64 {
    if has_idle {
        27.0
    } else {
        22.0
    }
}

#[component]
pub fn StepBreakdown(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let a = tf.analysis_at(nav.scope);
    if a.steps.is_empty() {
        return view! {
            <p class="muted" data-testid="no-steps">
                "No step annotations in this trace (ProfilerStep#N, or a loop's own numbered record_function such as train_step_N: docs/definitions.md, Steps), so there is no per-step breakdown. Wrap the training loop with "
                <code>"torch.profiler.profile(...)"</code>" and call "<code>"prof.step()"</code>" each iteration."
            </p>
        }
        .into_any();
    }
    let mut sum = [0i64; 8];
    for s in &a.steps {
        for (k, v) in s.parts_ns.iter().enumerate() {
            sum[k] += v;
        }
    }
    let total: i64 = a.steps.iter().map(|s| s.dur_ns).sum();
    let max = a.steps.iter().map(|s| s.dur_ns).max().unwrap_or(1).max(1);
    // The first step, when it is a warm-up (core's `steps::warmup`), is tagged as one.
    let warm = tracelight_core::analysis::steps::warmup(&a.steps);
    let has_idle = !a.idle.devices.is_empty();
    let steps = Arc::new(a.steps.clone());
    let idle = Arc::new(a.idle.steps.clone());
    let n = steps.len();
    // One row: the step's bar, its idle bar, its time; `top` places it in a windowed list.
    let row = move |k: usize, top: Option<f64>| {
        let s = &steps[k];
        let (slice, name) = (s.slice, s.name.clone());
        let segs = parts(&s.parts_ns)
            .into_iter()
            .filter(|p| p.value_ns > 0)
            .map(|p| {
                let w = 100.0 * p.value_ns as f64 / max as f64;
                let tip = format!("{}: {} ({})", p.label, fmt::dur(p.value_ns), fmt::pct(p.value_ns, s.dur_ns));
                view! { <span class="stack-seg" title=tip style=format!("width:{w:.3}%;background:{}", p.color)></span> }
            })
            .collect_view();
        let (n2, n3) = (name.clone(), name.clone());
        let warmup = (k == 0).then_some(warm).flatten();
        let place = top.map(|y| {
            format!(
                "position:absolute;left:0;right:0;top:{y}px;height:{}px",
                row_px(has_idle)
            )
        });
        view! {
            <button class="step-row" class:step-warmup=warmup.is_some() data-testid="step-row" data-name=n3 data-ns=s.dur_ns.to_string()
                data-index=k.to_string() style=place
                data-warmup=warmup.map(|r| r.to_string())
                title="Show this step in the timeline"
                on:click=move |_| nav.reveal(file, vec![slice], n2.clone())>
                <span class="step-name">{name}
                    {warmup.map(|r| view! {
                        <span class="tag warmup" data-testid="warmup-tag"
                            title=format!("{}× the median of the other steps: allocator growth, autotuning, compilation. The step mean includes it; the median does not move.", tracelight_core::report::num::sig3(r))>
                            "warm-up"
                        </span>
                    })}
                </span>
                <span class="step-bars">
                    <span class="stack-bar small">{segs}</span>
                    {has_idle.then(|| idle.get(k).map(|st| crate::views::idle::step_bar(st.dur_ns, max, &st.by_cause)))}
                </span>
                <span class="num">{fmt::dur(s.dur_ns)}</span>
            </button>
        }
    };
    let list = if n <= WHOLE_MAX {
        view! { <div class="step-list">{(0..n).map(|k| row(k, None)).collect_view()}</div> }
            .into_any()
    } else {
        let h = row_px(has_idle);
        let scroll = RwSignal::new(0.0f64);
        let window = Memo::new(move |_| {
            let first = (scroll.get() / h).floor().max(0.0) as usize;
            (
                first.saturating_sub(OVERSCAN),
                (first + VISIBLE + OVERSCAN).min(n),
            )
        });
        let rows = move || {
            let (lo, hi) = window.get();
            (lo..hi).map(|k| row(k, Some(k as f64 * h))).collect_view()
        };
        view! {
            <div class="step-list windowed" data-testid="step-list" data-steps=n.to_string()
                on:scroll=move |ev| {
                    let top = f64::from(event_target::<web_sys::Element>(&ev).scroll_top());
                    scroll.set(top);
                }>
                <div style=format!("position:relative;height:{}px", n as f64 * h)>{rows}</div>
            </div>
        }
        .into_any()
    };
    view! {
        <p class="muted">{format!("{} steps, {} in all; each part claims only time no higher part claimed (Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec > Other).", a.steps.len(), fmt::dur(total))}</p>
        <StackBar parts=parts(&sum) total_ns=total testid="step-breakdown" />
        {has_idle.then(|| view! { <p class="hint">"Under each step: its GPU idle time by cause (see " <i>"Why the GPU is idle"</i> ")."</p> })}
        {list}
    }
    .into_any()
}
