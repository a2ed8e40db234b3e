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

/// Step rows built per task (see [`StepBreakdown`]): the first task builds [`FIRST_ROWS`].
const ROWS_PER_FRAME: usize = 16;
const FIRST_ROWS: usize = 32;

/// Shows [`ROWS_PER_FRAME`] more rows on each animation frame until all `n` are; stops when the
/// view is gone (its signal disposed).
fn grow(shown: RwSignal<usize>, n: usize) {
    request_animation_frame(move || {
        let more = shown.try_update(|s| {
            *s = (*s + ROWS_PER_FRAME).min(n);
            *s < n
        });
        if more == Some(true) {
            grow(shown, n);
        }
    });
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
    // The first rows now, the rest a batch per animation frame: a trace of thousands of steps
    // built every row in one task of seconds right after its load.
    let shown = RwSignal::new(FIRST_ROWS.min(n));
    if n > FIRST_ROWS {
        grow(shown, n);
    }
    let rows = (0..n.div_ceil(ROWS_PER_FRAME))
        .map(|c| {
            let (lo, hi) = (c * ROWS_PER_FRAME, ((c + 1) * ROWS_PER_FRAME).min(n));
            let visible = Memo::new(move |_| shown.get() > lo);
            let (steps, idle) = (steps.clone(), idle.clone());
            move || {
                visible.get().then(|| {
                    (lo..hi)
                        .map(|k| {
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
                            view! {
                                <button class="step-row" class:step-warmup=warmup.is_some() data-testid="step-row" data-name=n3 data-ns=s.dur_ns.to_string()
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
                        })
                        .collect_view()
                })
            }
        })
        .collect_view();
    view! {
        <p class="muted">{format!("{} steps, {} in all; each part claims only time no higher part claimed (Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec > Other).", a.steps.len(), fmt::dur(total))}</p>
        <StackBar parts=parts(&sum) total_ns=total testid="step-breakdown" />
        {has_idle.then(|| view! { <p class="hint">"Under each step: its GPU idle time by cause (see " <i>"Why the GPU is idle"</i> ")."</p> })}
        <div class="step-list">{rows}</div>
    }
    .into_any()
}
