//! Why the GPU is idle (core's `analysis::idle`): the headline sentence, the window split into
//! busy time and each idle cause, and per cause what the host was doing with a button that steps
//! through its intervals in the timeline. Shown on the Overview (beside the step breakdown) and
//! at the top of the GPU tab.

use crate::session::{Nav, SessionRef};
use crate::widgets::bars::{Bar, StackBar};
use crate::widgets::fmt;
use crate::widgets::palette::color_of;
use leptos::prelude::*;
use tracelight_core::analysis::idle::ByCause;
use tracelight_core::model::steps::StepRule;

/// The bar parts of a window: busy, then each cause with time, in cause order.
pub fn parts(busy_ns: i64, by: &ByCause) -> Vec<Bar> {
    let mut v = vec![Bar {
        key: "busy".into(),
        label: "GPU busy".into(),
        value_ns: busy_ns,
        color: color_of("kernel"),
    }];
    v.extend(by.iter().map(|&(c, ns)| Bar {
        key: c.slug().into(),
        label: c.short().into(),
        value_ns: ns,
        color: color_of(c.slug()),
    }));
    v
}

/// The idle causes of trace `file`: headline, stacked bar, and one row per cause.
#[component]
pub fn IdleCauses(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let a = tf.analysis();
    let i = &a.idle;
    let Some(head) = i.headline() else {
        return view! { <p class="muted" data-testid="idle-causes">"No GPU work: nothing to be idle."</p> }.into_any();
    };
    let window = i.window_ns();
    let by: ByCause = i.causes.iter().map(|c| (c.cause, c.ns)).collect();
    let mut ordered = by.clone();
    ordered.sort_unstable();
    let bar = parts(window - i.idle_ns, &ordered);
    let rows = i
        .causes
        .iter()
        .map(|c| {
            let cause = c.cause;
            let ranges = i.ranges(cause);
            let n = ranges.len();
            // The kept intervals are the longest of each cause (a cap), so say so when cut.
            let all = c.intervals;
            let (button, tip) = if (n as u64) < all {
                (
                    format!("Longest {n} of {all} →"),
                    format!("Step through the {n} longest of its {all} intervals in the timeline"),
                )
            } else {
                (
                    format!("Show {n} →"),
                    format!("Step through its {n} intervals in the timeline"),
                )
            };
            let what = c
                .top
                .iter()
                .take(3)
                .map(|(name, ns)| format!("{name} ({})", fmt::dur(*ns)))
                .collect::<Vec<_>>()
                .join(" · ");
            let label = format!("GPU idle: {}", cause.short());
            view! {
                <tr data-testid="idle-cause" data-cause=cause.slug() data-ns=c.ns.to_string() data-share=c.share.to_string()>
                    <td><i class="swatch" style=format!("background:{}", color_of(cause.slug()))></i>{cause.short()}</td>
                    <td class="num">{fmt::dur(c.ns)}</td>
                    <td class="num">{fmt::frac(c.share)}</td>
                    <td class="idle-what" title=what.clone()>{if what.is_empty() { "—".to_owned() } else { what.clone() }}</td>
                    <td>
                        {(n > 0).then(|| {
                            let ranges = ranges.clone();
                            let label = label.clone();
                            view! {
                                <button class="button small" data-testid="idle-reveal"
                                    title=tip.clone()
                                    on:click=move |_| nav.reveal_ranges(file, ranges.clone(), label.clone())>
                                    {button.clone()}
                                </button>
                            }
                        })}
                    </td>
                </tr>
            }
        })
        .collect_view();
    // The window's name under the trace's step rule (a loop's own `train_step_N` is not a
    // ProfilerStep).
    let of = match (i.window_from_steps, tf.trace.step_rule()) {
        (false, _) => "the kernel span".to_owned(),
        (true, StepRule::User(p)) => format!("the {p}_N window"),
        (true, _) => "the ProfilerStep window".to_owned(),
    };
    view! {
        <div class="idle-causes" data-testid="idle-causes" data-idle-ns=i.idle_ns.to_string() data-window-ns=window.to_string()>
            <p class="idle-head" data-testid="idle-headline">{head}"."</p>
            <StackBar parts=bar total_ns=window testid="idle-bar" />
            <table class="small-table idle-table">
                <thead><tr><th>"GPU waits for"</th><th class="num">"time"</th><th class="num">"share"</th><th>"the host meanwhile"</th><th></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <p class="hint">{format!("Each idle instant of {of} has one cause, by priority (data loading > collective wait > device sync > H2D copy > launch-bound > optimizer > host ops > Python > unknown; queued: the work was already launched). Definitions: docs/definitions.md.")}</p>
        </div>
    }
    .into_any()
}

/// One step's idle causes as a thin stacked bar (the step breakdown's second bar).
pub fn step_bar(dur_ns: i64, max_ns: i64, by: &ByCause) -> impl IntoView {
    let segs = by
        .iter()
        .filter(|x| x.1 > 0)
        .map(|&(c, ns)| {
            let w = 100.0 * ns as f64 / max_ns.max(1) as f64;
            let tip = format!(
                "GPU idle, {}: {} ({})",
                c.short(),
                fmt::dur(ns),
                fmt::pct(ns, dur_ns)
            );
            view! { <span class="stack-seg" data-cause=c.slug() title=tip style=format!("width:{w:.3}%;background:{}", color_of(c.slug()))></span> }
        })
        .collect_view();
    view! { <span class="stack-bar tiny" data-testid="step-idle-bar">{segs}</span> }
}
