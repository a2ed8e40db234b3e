//! The recommendations with the numbers that fired them, each linked to its events in the timeline.

use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use leptos::prelude::*;

/// A fired rule's figure, formatted by its name's suffix (`_share` %, `_us` time, `_bytes` size).
fn number(name: &str, v: f64) -> (String, String) {
    let words = |n: &str| n.replace('_', " ");
    if let Some(n) = name.strip_suffix("_share") {
        (format!("{} share", words(n)), fmt::frac(v))
    } else if name == "utilization" {
        (words(name), fmt::frac(v))
    } else if let Some(n) = name.strip_suffix("_us") {
        (words(n), fmt::dur((v * 1e3).round() as i64))
    } else if let Some(n) = name.strip_suffix("_bytes") {
        (words(n), fmt::bytes(v as i64))
    } else {
        (words(name), format!("{}", v.round() as i64))
    }
}

#[component]
pub fn Recommendations(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let recs = tf.analysis().recommendations.clone();
    if recs.is_empty() {
        return view! { <p class="muted" data-testid="recommendations">"No rule fired: nothing obvious stands out."</p> }.into_any();
    }
    let items = recs
        .into_iter()
        .map(|r| {
            let rule = serde_rule(&r.rule);
            let nums = r
                .numbers
                .iter()
                .map(|(n, v)| {
                    let (l, t) = number(n, *v);
                    view! { <span class="rec-num" data-name=n.clone() data-value=v.to_string()><span class="muted">{l}</span>" "<b>{t}</b></span> }
                })
                .collect_view();
            let n = r.slices.len();
            let (slices, title) = (r.slices.clone(), r.title.clone());
            view! {
                <li class="rec" data-testid="recommendation" data-rule=rule>
                    <div class="rec-title">{r.title.clone()}</div>
                    <div class="rec-detail">{r.detail.clone()}</div>
                    <div class="rec-nums">
                        {nums}
                        {(n > 0).then(|| view! {
                            <button class="button small" data-testid="rec-reveal"
                                on:click=move |_| nav.reveal(file, slices.clone(), title.clone())>
                                {format!("Show {n} in timeline →")}
                            </button>
                        })}
                    </div>
                </li>
            }
        })
        .collect_view();
    view! { <ul class="recs" data-testid="recommendations">{items}</ul> }.into_any()
}

fn serde_rule(r: &tracelight_core::analysis::recommend::RuleId) -> String {
    format!("{r:?}")
}
