//! The Trend tab's view: the change points in a sentence (core's words), four small multiples
//! on canvases that share one x axis (step time with its min–max, the step breakdown stacked,
//! the top kernels' GPU time per step, peak memory), the pair under the pointer named above
//! them, and the series as a table whose rows hold the figures (`tracelight trend --json`'s) and
//! open a run against the one before it in Compare.

use super::paint::{paint, Panel, Scene, Series, Style};
use crate::platform::canvas::prepare;
use crate::platform::frame::Frames;
use crate::session::series::SeriesRef;
use crate::widgets::fmt;
use crate::widgets::palette::color_of;
use crate::widgets::text::TextCache;
use crate::widgets::theme::Theme;
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::steps::CATEGORIES;
use tracelight_core::report::diff::{fmt_delta_ns, fmt_ns};
use tracelight_core::report::num;
use tracelight_core::report::trend::Trend;
use tracelight_core::view::palette::SERIES;
use tracelight_core::view::trend::pair_at;

/// Height of one small multiple, CSS px.
const PANEL_H: f64 = 190.0;
/// Kernels drawn in the top-kernels panel.
const KERNEL_LINES: usize = 5;

/// Axis labels: three significant figures (`1.10 ms`, `200 µs`), the diff's formatter, so the
/// labels fit the margin.
fn time_label(ns: f64) -> String {
    fmt_ns(ns)
}

fn bytes_label(b: f64) -> String {
    fmt::bytes(b.round() as i64)
}

/// The four panels of `t`, coloured from the palette (`line`: the step time's colour).
fn panels(t: &Trend, line: &str) -> Vec<Panel> {
    let runs = &t.runs;
    let step = Panel {
        title: "Step time (median; whiskers: min – max)".into(),
        style: Style::Lines,
        series: vec![Series {
            color: line.to_owned(),
            values: runs.iter().map(|r| Some(r.side.step_ns.median)).collect(),
        }],
        whiskers: runs
            .iter()
            .map(|r| Some((r.side.step_ns.min, r.side.step_ns.max)))
            .collect(),
        fmt: time_label,
        empty: "no steps",
        binary: false,
    };
    let breakdown = Panel {
        title: "Step breakdown (per step)".into(),
        style: Style::Stacked,
        series: CATEGORIES
            .iter()
            .enumerate()
            .map(|(k, c)| Series {
                color: color_of(c).to_owned(),
                values: runs.iter().map(|r| Some(r.side.breakdown_ns[k])).collect(),
            })
            .collect(),
        whiskers: Vec::new(),
        fmt: time_label,
        empty: "no steps",
        binary: false,
    };
    let kernels = Panel {
        title: "Top kernels (GPU time per step)".into(),
        style: Style::Lines,
        series: t
            .kernel_series(KERNEL_LINES)
            .into_iter()
            .enumerate()
            .map(|(k, (_, values))| Series {
                color: SERIES[k % SERIES.len()].to_owned(),
                values,
            })
            .collect(),
        whiskers: Vec::new(),
        fmt: time_label,
        empty: "no GPU kernels",
        binary: false,
    };
    let memory = Panel {
        title: "Peak memory (allocated, highest rank)".into(),
        style: Style::Lines,
        series: vec![Series {
            color: color_of("memcpy").to_owned(),
            values: runs
                .iter()
                .map(|r| r.side.peak_allocated_bytes.map(|b| b as f64))
                .collect(),
        }],
        whiskers: Vec::new(),
        fmt: bytes_label,
        empty: "no memory recorded (profile with profile_memory=True)",
        binary: true,
    };
    vec![step, breakdown, kernels, memory]
}

/// The change against the previous run as the CLI's table says it (`▲ +100.0 µs (+9.99%; …)`).
fn vs_text(r: &tracelight_core::report::trend::Run) -> String {
    match &r.vs_prev {
        None => String::new(),
        Some(v) => match v.shift {
            None => "too short to tell".into(),
            Some((e, lo, hi)) => {
                let mark = match (v.change_point, e > 0.0) {
                    (true, true) => "▲ ",
                    (true, false) => "▼ ",
                    _ => "",
                };
                format!(
                    "{mark}{} ({}; {} … {})",
                    fmt_delta_ns(e),
                    v.rel.map_or(String::new(), num::signed_share),
                    fmt_delta_ns(lo),
                    fmt_delta_ns(hi)
                )
            }
        },
    }
}

#[component]
pub fn TrendView(
    series: SeriesRef,
    /// Opens runs (A, B) of the series in Compare.
    on_pair: Callback<(usize, usize)>,
    /// Opens another folder of runs.
    on_pick: Callback<web_sys::FileList>,
) -> impl IntoView {
    let t = &series.trend;
    let n = t.runs.len();
    let names: Arc<Vec<String>> = Arc::new(t.runs.iter().map(|r| r.name.clone()).collect());
    let change: Arc<Vec<i8>> = Arc::new(
        t.runs
            .iter()
            .map(|r| match &r.vs_prev {
                Some(v) if v.change_point => {
                    if v.shift.is_some_and(|s| s.0 > 0.0) {
                        1
                    } else {
                        -1
                    }
                }
                _ => 0,
            })
            .collect(),
    );
    let theme = RwSignal::new(Theme::default());
    let width = RwSignal::new(0.0f64);
    let hover = RwSignal::new(None::<(usize, usize)>);
    let wrap = NodeRef::<html::Div>::new();
    let canvases: [NodeRef<html::Canvas>; 4] = std::array::from_fn(|_| NodeRef::new());
    let measure = move || {
        if let Some(w) = wrap.get_untracked() {
            // Two panels a row: each half the grid less the gap.
            let cw = ((f64::from(w.client_width()) - 12.0) / 2.0).max(240.0);
            if (width.get_untracked() - cw).abs() >= 0.5 {
                width.set(cw);
            }
        }
    };
    crate::platform::resize::follow(wrap, measure);
    Effect::new(move |_| {
        if wrap.get().is_some() {
            theme.set(Theme::from_css());
        }
    });
    let frames = Frames::new();
    let text = StoredValue::new_local(TextCache::default());
    let painter = {
        let (series, names, change) = (series.clone(), names.clone(), change.clone());
        move || {
            let w = width.get_untracked();
            if w <= 0.0 {
                return;
            }
            let th = theme.get_untracked();
            let ps = panels(&series.trend, &th.select);
            let sc = Scene {
                names: &names,
                change: &change,
                hover: hover.get_untracked(),
                theme: &th,
            };
            for (c, p) in canvases.iter().zip(&ps) {
                let Some(el) = c.get_untracked() else {
                    continue;
                };
                let Some(ctx) = prepare(&el, w, PANEL_H) else {
                    continue;
                };
                text.update_value(|tc| paint(&ctx, p, &sc, w, PANEL_H, tc));
                // Each run's x, so a test can point at a run or between two.
                let xs: Vec<String> = (0..n)
                    .map(|i| format!("{:.1}", tracelight_core::view::trend::x_of(i, n, w)))
                    .collect();
                let _ = el.set_attribute("data-xs", &xs.join(","));
            }
        }
    };
    Effect::new(move |_| {
        width.track();
        theme.track();
        hover.track();
        frames.request(painter.clone());
    });
    let at =
        move |ev: &web_sys::MouseEvent| pair_at(f64::from(ev.offset_x()), n, width.get_untracked());
    let on_move = move |ev: web_sys::MouseEvent| {
        let h = at(&ev);
        if h != hover.get_untracked() {
            hover.set(h);
        }
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some(p) = at(&ev) {
            on_pair.run(p);
        }
    };
    // The pair under the pointer, named.
    let pointed = {
        let series = series.clone();
        move || {
            let Some((a, b)) = hover.get() else {
                return "Hover a run: click its point to compare it with the run before, or between two runs to compare those two.".to_owned();
            };
            let (ra, rb) = (&series.trend.runs[a], &series.trend.runs[b]);
            let d = rb.side.step_ns.median - ra.side.step_ns.median;
            format!(
                "Click: compare {} (A) with {} (B) · median step {} → {} ({}, {})",
                ra.name,
                rb.name,
                fmt_ns(ra.side.step_ns.median),
                fmt_ns(rb.side.step_ns.median),
                fmt_delta_ns(d),
                num::change(ra.side.step_ns.median, rb.side.step_ns.median)
            )
        }
    };
    let legend_parts = CATEGORIES
        .iter()
        .enumerate()
        .filter(|(k, _)| t.runs.iter().any(|r| r.side.breakdown_ns[*k] > 0.0))
        .map(|(_, c)| {
            view! { <span class="legend-item"><i style=format!("background:{}", color_of(c))></i>{c.replace('_', " ")}</span> }
        })
        .collect_view();
    let legend_kernels = t
        .kernel_series(KERNEL_LINES)
        .into_iter()
        .enumerate()
        .map(|(k, (name, _))| {
            view! { <span class="legend-item trend-kernel" data-testid="trend-kernel" title=name.clone()><i style=format!("background:{}", SERIES[k % SERIES.len()])></i>{name.clone()}</span> }
        })
        .collect_view();
    let rows = t
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let s = &r.side;
            let cp = r.vs_prev.as_ref().is_some_and(|v| v.change_point);
            let part = |name: &str| {
                CATEGORIES
                    .iter()
                    .position(|c| *c == name)
                    .map_or(0.0, |k| s.breakdown_ns[k])
            };
            let top = r.top_kernels.first().cloned();
            let top_name = top.as_ref().map(|k| k.0.clone()).unwrap_or_default();
            let top_text = top.as_ref().map(|(k, v)| format!("{k} {}", fmt_ns(*v))).unwrap_or_default();
            view! {
                <tr data-testid="trend-row" data-run=r.name.clone() data-change-point=cp.to_string()
                    data-median-ns=s.step_ns.median.to_string() data-steps=s.step_samples.len().to_string()
                    data-kernel-ns=part("kernel").to_string()
                    data-peak=s.peak_allocated_bytes.map(|b| b.to_string()).unwrap_or_default()
                    data-top-kernel-ns=top.as_ref().map(|k| k.1.to_string()).unwrap_or_default()
                    class:trend-cp=cp>
                    <td>{if cp { format!("{} ◆", r.name) } else { r.name.clone() }}</td>
                    <td class="num">{s.step_samples.len()}</td>
                    <td class="num">{fmt_ns(s.step_ns.median)}</td>
                    <td class="num">{vs_text(r)}</td>
                    <td class="num">{fmt_ns(part("kernel"))}</td>
                    <td class="num">{fmt_ns(part("communication"))}</td>
                    <td class="num">{fmt_ns(part("cpu_exec"))}</td>
                    <td class="num">{s.peak_allocated_bytes.map_or("—".into(), fmt::bytes)}</td>
                    <td class="trend-top" title=top_name>{top_text}</td>
                    <td>{(i > 0).then(|| view! {
                        <button class="button small" data-testid="trend-compare" on:click=move |_| on_pair.run((i - 1, i))>"Compare with previous"</button>
                    })}</td>
                </tr>
            }
        })
        .collect_view();
    let on_change = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            on_pick.run(files);
        }
        input.set_value("");
    };
    let folder = NodeRef::<html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = folder.get() {
            let _ = el.set_attribute("webkitdirectory", "");
        }
    });
    let canvas = move |k: usize, testid: &'static str| {
        view! {
            <canvas node_ref=canvases[k] data-testid=testid class="trend-canvas" style=format!("height:{PANEL_H}px")
                on:mousemove=on_move on:mouseleave=move |_| hover.set(None) on:click=on_click />
        }
    };
    let summary = t.summary().replace("**", "");
    view! {
        <section class="view trend" data-testid="trend-view">
            <div class="toolbar">
                <h2>{format!("Trend over {n} runs")}</h2>
                <label class="button">"Open another folder of runs…"
                    <input type="file" style="display:none" data-testid="trend-input-again" node_ref=folder multiple on:change=on_change />
                </label>
                <span class="hint">"Runs in name order (name them by date or zero-padded commit); the same figures as "<code>"tracelight trend DIR --json"</code>"."</span>
            </div>
            <p class=if change.iter().any(|c| *c != 0) { "cmp-verdict" } else { "cmp-verdict cmp-noise" } data-testid="trend-summary">{summary}</p>
            <p class="hint" data-testid="trend-pointed">{pointed}</p>
            <div class="trend-grid" node_ref=wrap>
                <div class="trend-panel">{canvas(0, "trend-step")}</div>
                <div class="trend-panel">{canvas(1, "trend-breakdown")}<div class="legend">{legend_parts}</div></div>
                <div class="trend-panel">{canvas(2, "trend-kernels")}<div class="legend">{legend_kernels}</div></div>
                <div class="trend-panel">{canvas(3, "trend-memory")}</div>
            </div>
            <table class="cmp trend-table" data-testid="trend-table">
                <thead><tr><th>"run"</th><th>"steps"</th><th>"median step"</th><th>"vs previous (95% interval)"</th><th>"kernel"</th><th>"communication"</th><th>"cpu exec"</th><th>"peak memory"</th><th>"top kernel"</th><th></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <p class="hint">"A change point: the run's step times moved against the run before by at least "{num::share(tracelight_core::report::trend::MIN_CHANGE)}", the Hodges–Lehmann shift's 95% interval clear of 0 (docs/compare.md). Shaded red: slower; blue: faster."</p>
        </section>
    }
}
