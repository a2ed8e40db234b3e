//! Small DOM/CSS charts: a horizontal bar list (categories with time and %) and one stacked bar
//! (a step broken into parts). Each bar carries its raw value in `data-ns` for tests.

use leptos::prelude::*;

/// One bar: `value_ns` of `total_ns`.
#[derive(Clone, Debug)]
pub struct Bar {
    pub key: String,
    pub label: String,
    pub value_ns: i64,
    pub color: &'static str,
}

/// Horizontal bars, longest first as given; % of `total_ns` with one decimal.
#[component]
pub fn Bars(bars: Vec<Bar>, total_ns: i64, testid: &'static str) -> impl IntoView {
    let max = bars.iter().map(|b| b.value_ns).max().unwrap_or(0).max(1);
    let rows = bars
        .into_iter()
        .map(|b| {
            let w = 100.0 * b.value_ns as f64 / max as f64;
            view! {
                <div class="bar-row" data-key=b.key.clone() data-ns=b.value_ns.to_string()>
                    <span class="bar-label" title=b.label.clone()>{b.label.clone()}</span>
                    <span class="bar-track"><span class="bar-fill" style=format!("width:{w:.2}%;background:{}", b.color)></span></span>
                    <span class="bar-value num">{super::fmt::dur(b.value_ns)}</span>
                    <span class="bar-pct num">{super::fmt::pct(b.value_ns, total_ns)}</span>
                </div>
            }
        })
        .collect_view();
    view! { <div class="bars" data-testid=testid>{rows}</div> }
}

/// One bar split into parts (they should sum to `total_ns`), with a legend giving each part's %.
#[component]
pub fn StackBar(parts: Vec<Bar>, total_ns: i64, testid: &'static str) -> impl IntoView {
    let segs = parts
        .iter()
        .filter(|p| p.value_ns > 0)
        .map(|p| {
            let w = if total_ns > 0 {
                100.0 * p.value_ns as f64 / total_ns as f64
            } else {
                0.0
            };
            let tip = format!(
                "{}: {} ({})",
                p.label,
                super::fmt::dur(p.value_ns),
                super::fmt::pct(p.value_ns, total_ns)
            );
            view! { <span class="stack-seg" title=tip style=format!("width:{w:.3}%;background:{}", p.color)></span> }
        })
        .collect_view();
    let legend = parts
        .into_iter()
        .map(|p| {
            view! {
                <span class="stack-key" data-key=p.key.clone() data-ns=p.value_ns.to_string()>
                    <i style=format!("background:{}", p.color)></i>
                    {p.label.clone()}" "
                    <b class="num">{super::fmt::pct(p.value_ns, total_ns)}</b>
                </span>
            }
        })
        .collect_view();
    view! {
        <div class="stack" data-testid=testid>
            <div class="stack-bar">{segs}</div>
            <div class="stack-legend">{legend}</div>
        </div>
    }
}
