//! The differential flame graph of the Compare tab: B's op tree merged as the Flame tab merges it,
//! each frame as wide as B's time per step and coloured by its change against A on a diverging
//! scale (red grew, blue shrank, grey unchanged, deepest red new in B); frames only A has are
//! listed under it. Hover gives A, B, Δ and Δ% per step; a click zooms into a frame and shows the
//! slices of its name (and, in A, of the names renamed to it) in both paired timelines; the
//! breadcrumb zooms back out. Built by core (`report::diff::flame::DiffFlame`), the same tree
//! `tracelight diff A B --folded` writes.

use super::tables::{side_slices, Reveals};
use crate::platform::canvas::{dpr, prepare};
use crate::platform::frame::Frames;
use crate::session::SessionRef;
use crate::widgets::text::{TextCache, FONT};
use crate::widgets::theme::Theme;
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::model::Trace;
use tracelight_core::report::diff::flame::{renames, DiffFlame, FlameSide};
use tracelight_core::report::diff::{fmt_delta_ns, fmt_ns, Diff, Measure};
use tracelight_core::report::num;
use tracelight_core::view::flame::Weight;
use tracelight_core::view::palette::{diff_heat, DIFF_NEW, DIFF_SAME};
use tracelight_core::view::steps::step_marks;

const ROW_PX: f64 = 18.0;
/// Rows drawn at most (zoom reaches deeper ones).
const MAX_ROWS: usize = 120;
const LABEL_PX: f64 = 22.0;

fn traces(s: &SessionRef) -> Vec<&Trace> {
    s.trace_indices()
        .iter()
        .filter_map(|&i| s.trace(i))
        .map(|tf| &tf.trace)
        .collect()
}

/// A side's steps for the picker: the labels (`#N`) of the first trace that has each step index
/// (0-based, in time order), as many as its longest rank has: the CLI's `--step-a/--step-b`.
fn step_labels(s: &SessionRef) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in traces(s) {
        let marks = step_marks(t);
        if marks.len() > out.len() {
            out.extend(marks[out.len()..].iter().map(|m| m.label.clone()));
        }
    }
    out
}

/// One side's step `<select>`: "every step (per step)" or step `k`, as `--step-a/--step-b k`.
fn step_pick(
    side: &'static str,
    labels: Vec<String>,
    pick: RwSignal<Option<usize>>,
) -> impl IntoView {
    let n = labels.len();
    let options = labels
        .into_iter()
        .enumerate()
        .map(|(k, l)| {
            let text = format!("step {k} ({l})");
            view! { <option value=k.to_string()>{text}</option> }
        })
        .collect_view();
    let on_pick = move |ev: leptos::ev::Event| {
        pick.set(
            event_target_value(&ev)
                .parse::<usize>()
                .ok()
                .filter(|&k| k < n),
        );
    };
    view! {
        <label class="muted" title=format!("{side}'s weights: every step averaged per step, or one step (tracelight diff --folded --step-{} K)", side.to_lowercase())>
            {format!(" {side}: ")}
            <select data-testid=format!("diff-flame-step-{}", side.to_lowercase()) disabled=n == 0 on:change=on_pick>
                <option value="all" selected=true>"every step (per step)"</option>
                {options}
            </select>
        </label>
    }
}

fn build(
    a: &SessionRef,
    b: &SessionRef,
    d: &Diff,
    weight: Weight,
    (step_a, step_b): (Option<usize>, Option<usize>),
) -> DiffFlame {
    let rename = if d.renames {
        renames(d)
    } else {
        Default::default()
    };
    let sa = FlameSide {
        traces: traces(a),
        rank_steps: d.a.rank_steps,
        step: step_a,
    };
    let sb = FlameSide {
        traces: traces(b),
        rank_steps: d.b.rank_steps,
        step: step_b,
    };
    DiffFlame::build(&sa, &sb, weight, &rename)
}

/// Left edge and width of `node`, CSS px, when `root` spans `width`.
fn span(f: &DiffFlame, root: usize, node: usize, width: f64) -> (f64, f64) {
    let w = f.b_total[root].max(1.0);
    (
        (f.x[node] - f.x[root]) / w * width,
        f.b_total[node] / w * width,
    )
}

/// Paints the subtree of `root`; returns the drawn frames as JSON rows for tests
/// (`stack`, `x`, `y`, `w` in CSS px, self and total weights per step, colour).
fn paint(
    ctx: &web_sys::CanvasRenderingContext2d,
    f: &DiffFlame,
    root: usize,
    (width, height): (f64, f64),
    hover: Option<usize>,
    theme: &Theme,
    cache: &mut TextCache,
) -> Vec<serde_json::Value> {
    ctx.set_fill_style_str(&theme.bg);
    ctx.fill_rect(0.0, 0.0, width, height);
    let mut out = Vec::new();
    if root >= f.len() {
        return out;
    }
    let snap = |v: f64| (v * dpr()).round() / dpr();
    let base = f.depth[root];
    ctx.set_font(FONT);
    ctx.set_text_baseline("middle");
    let mut n = root;
    let end = f.end[root] as usize;
    while n < end {
        let (x, w) = span(f, root, n, width);
        let y = f64::from(f.depth[n] - base) * ROW_PX;
        if w < 0.5 || y + ROW_PX > height + 0.5 {
            n = f.end[n] as usize;
            continue;
        }
        let color = f.color(n);
        let (x0, x1) = (snap(x), snap(x + w));
        let wd = if x1 - x0 >= 3.0 {
            x1 - x0 - 1.0 / dpr()
        } else {
            (x1 - x0).max(1.0 / dpr())
        };
        ctx.set_fill_style_str(&color);
        ctx.fill_rect(x0, y, wd, ROW_PX - 1.0);
        if wd >= LABEL_PX {
            ctx.set_fill_style_str(if dark(&color) { "#ffffff" } else { &theme.fg });
            if let Some(t) = cache.fit(ctx, &f.label[n], wd - 6.0) {
                let _ = ctx.fill_text(&t, x0 + 3.0, y + ROW_PX / 2.0);
            }
        }
        if out.len() < 4000 {
            out.push(serde_json::json!({
                "node": n, "stack": f.stack(n), "x": x0, "y": y, "w": wd,
                "a_self": f.a_self[n], "b_self": f.b_self[n], "a": f.a_total[n], "b": f.b_total[n],
                "color": color,
            }));
        }
        n += 1;
    }
    if let Some(h) = hover.filter(|&h| h >= root && h < end) {
        let (x, w) = span(f, root, h, width);
        let y = f64::from(f.depth[h] - base) * ROW_PX;
        ctx.set_stroke_style_str(&theme.fg);
        ctx.set_line_width(1.0);
        ctx.stroke_rect(x + 0.5, y + 0.5, (w - 1.0).max(1.0), ROW_PX - 2.0);
    }
    out
}

/// Whether a `#rrggbb` fill needs white text (relative luminance below about 0.4).
fn dark(hex: &str) -> bool {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    let [r, g, b] = [(v >> 16) & 255, (v >> 8) & 255, v & 255].map(f64::from);
    0.2126 * r + 0.7152 * g + 0.0722 * b < 110.0
}

/// A, B, Δ, Δ% of a frame, per step: (key, text, raw ns).
fn figures(f: &DiffFlame, n: usize) -> Vec<(&'static str, String, f64)> {
    let (a, b) = (f.a_total[n], f.b_total[n]);
    vec![
        ("A", fmt_ns(a), a),
        ("B", fmt_ns(b), b),
        ("Δ", fmt_delta_ns(b - a), b - a),
        ("Δ%", num::change(a, b), f.rel(n).unwrap_or(f64::NAN)),
    ]
}

#[component]
pub fn DiffFlameCard(
    a: SessionRef,
    b: SessionRef,
    diff: Arc<Diff>,
    /// A's and B's paired timelines: a click shows the frame's slices there.
    reveals: Reveals,
) -> impl IntoView {
    let sessions = StoredValue::new((a.clone(), b.clone(), diff.clone()));
    let has_gpu = diff.a.has_gpu && diff.b.has_gpu;
    let device = RwSignal::new(diff.measure == Measure::Device);
    let (labels_a, labels_b) = (step_labels(&a), step_labels(&b));
    let (step_a, step_b) = (RwSignal::new(None::<usize>), RwSignal::new(None::<usize>));
    let graph = {
        let (a, b, d) = (a.clone(), b.clone(), diff.clone());
        Memo::new(move |_| {
            let w = if device.get() {
                Weight::Device
            } else {
                Weight::Cpu
            };
            Arc::new(build(&a, &b, &d, w, (step_a.get(), step_b.get())))
        })
    };
    let zoom = RwSignal::new(0usize);
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    Effect::new(move |_| {
        graph.track();
        zoom.set(0);
        hover.set(None);
    });
    let root = move || {
        let z = zoom.get();
        if z < graph.with(|g| g.len()) {
            z
        } else {
            0
        }
    };
    let rows = move || {
        let r = root();
        graph.with(|g| {
            let end = g.end.get(r).map_or(r + 1, |&e| e as usize);
            (r..end)
                .filter(|&n| g.b_total[n] > 0.0)
                .map(|n| usize::from(g.depth[n] - g.depth[r]) + 1)
                .max()
                .unwrap_or(1)
                .min(MAX_ROWS)
        })
    };
    let height = move || rows() as f64 * ROW_PX;
    let canvas = NodeRef::<html::Canvas>::new();
    let wrap = NodeRef::<html::Div>::new();
    let width = RwSignal::new(0.0f64);
    crate::platform::resize::follow(wrap, move || {
        if let Some(w) = wrap.get_untracked() {
            let cw = f64::from(w.client_width()).max(300.0);
            if (width.get_untracked() - cw).abs() >= 0.5 {
                width.set(cw);
            }
        }
    });
    let theme = RwSignal::new(Theme::default());
    Effect::new(move |_| {
        if wrap.get().is_some() {
            theme.set(Theme::from_css());
        }
    });
    let frames = Frames::new();
    let cache = StoredValue::new_local(TextCache::default());
    let painter = move || {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let (w, h) = (width.get_untracked(), untrack(height));
        if w <= 0.0 {
            return;
        }
        let Some(ctx) = prepare(&c, w, h) else {
            return;
        };
        let g = graph.get_untracked();
        let r = untrack(root);
        let th = theme.get_untracked();
        let hv = hover.get_untracked().map(|x| x.0);
        let drawn = cache
            .try_update_value(|tc| paint(&ctx, &g, r, (w, h), hv, &th, tc))
            .unwrap_or_default();
        let _ = c.set_attribute("data-drawn", &drawn.len().to_string());
        let _ = c.set_attribute("data-layout", &serde_json::Value::from(drawn).to_string());
        let _ = c.set_attribute("data-root", &r.to_string());
        let _ = c.set_attribute("data-width", &format!("{w:.1}"));
    };
    Effect::new(move |_| {
        graph.track();
        zoom.track();
        width.track();
        theme.track();
        hover.track();
        frames.request(painter);
    });
    let node_at = move |ev: &web_sys::MouseEvent| -> Option<usize> {
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let w = width.get_untracked();
        if w <= 0.0 || y < 0.0 {
            return None;
        }
        let row = (y / ROW_PX).floor() as u16;
        graph
            .with_untracked(|g| g.hit(untrack(root) as u32, x / w, row))
            .map(|n| n as usize)
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let h = node_at(&ev).map(|n| (n, f64::from(ev.client_x()), f64::from(ev.client_y())));
        if h != hover.get_untracked() {
            hover.set(h);
        }
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        let Some(n) = node_at(&ev) else {
            return;
        };
        zoom.set(n);
        let name = graph.with_untracked(|g| g.label.get(n).cloned());
        let Some(name) = name.filter(|_| n > 0) else {
            return;
        };
        sessions.with_value(|(sa, sb, d)| {
            // A's names that the diff renamed to this one, and the name itself.
            let mut a_names: Vec<String> = renames(d)
                .into_iter()
                .filter(|(_, to)| *to == name)
                .map(|(from, _)| from)
                .collect();
            a_names.push(name.clone());
            let b_names = vec![name.clone()];
            let slices = |s: &SessionRef, names: &[String]| {
                let mut v = side_slices(s, names, false);
                v.extend(side_slices(s, names, true));
                v.sort_unstable();
                v.dedup();
                Arc::new(v)
            };
            reveals
                .0
                .set(Some((slices(sa, &a_names), format!("A: {name}"))));
            reveals
                .1
                .set(Some((slices(sb, &b_names), format!("B: {name}"))));
        });
    };
    let tip = move || {
        let (n, x, y) = hover.get()?;
        let g = graph.get();
        if n >= g.len() {
            return None;
        }
        let rows = figures(&g, n)
            .into_iter()
            .map(|(k, v, raw)| view! { <div data-key=k data-value=raw.to_string()><span class="muted-inv">{k}": "</span>{v}</div> })
            .collect_view();
        let place = format!("left:{}px;top:{}px", (x + 14.0).max(0.0), y + 16.0);
        let per = match (step_a.get(), step_b.get()) {
            (None, None) => "per step".to_owned(),
            (a, b) => {
                let one =
                    |k: Option<usize>| k.map_or("per step".to_owned(), |k| format!("step {k}"));
                format!("A: {}, B: {}", one(a), one(b))
            }
        };
        Some(view! {
            <div class="mem-tip flame-tip" data-testid="diff-flame-tip" data-node=n.to_string() data-stack=g.stack(n) style=place>
                <b>{g.label[n].clone()}</b>
                <div class="hint-inv">{per}</div>
                {rows}
            </div>
        })
    };
    let crumbs = move || {
        let g = graph.get();
        let mut path = Vec::new();
        let mut k = root();
        while k < g.len() {
            path.push(k);
            k = g.parent[k] as usize;
        }
        path.reverse();
        path.into_iter()
            .map(|k| {
                let label = g.label[k].clone();
                view! { <button class="link flame-crumb" data-testid="diff-flame-crumb" data-node=k.to_string() on:click=move |_| zoom.set(k)>{label}</button>" › " }
            })
            .collect_view()
    };
    let gone = move || {
        let g = graph.get();
        let v = g.gone();
        (!v.is_empty()).then(|| {
            let n = v.len();
            let items = v
                .into_iter()
                .take(10)
                .map(|k| view! { <li data-stack=g.stack(k) data-a-ns=g.a_total[k].to_string()><code>{g.stack(k)}</code>" — "{fmt_ns(g.a_total[k])}" per step in A"</li> })
                .collect_view();
            view! {
                <div class="hint" data-testid="diff-flame-gone" data-count=n.to_string()>
                    {format!("Gone from B ({n} frame{}; no width in B's graph):", if n == 1 { "" } else { "s" })}
                    <ul>{items}</ul>
                </div>
            }
        })
    };
    let swatch = |c: String, label: &'static str| view! { <span class="diff-swatch"><i style=format!("background:{c}")></i>{label}</span> };
    view! {
        <section class="card diff-flame" data-testid="diff-flame">
            <div class="toolbar">
                <h2>{move || match (step_a.get(), step_b.get()) {
                    (None, None) => "Differential flame graph (B's op tree, per step)".to_owned(),
                    (a, b) => {
                        let one = |k: Option<usize>| k.map_or("every step, per step".to_owned(), |k| format!("step {k}"));
                        format!("Differential flame graph (A: {}, B: {})", one(a), one(b))
                    }
                }}</h2>
                <label class="muted" title="Width: B's time per step; colour: its change against A">
                    <input type="checkbox" data-testid="diff-flame-device" disabled=!has_gpu prop:checked=move || device.get()
                        on:change=move |ev| device.set(event_target_checked(&ev)) />
                    " GPU time launched (off: CPU time)"
                </label>
                <span class="diff-steps" data-testid="diff-flame-steps">
                    "Steps"{step_pick("A", labels_a, step_a)}{step_pick("B", labels_b, step_b)}
                </span>
                <span class="diff-legend" data-testid="diff-flame-legend">
                    {swatch(DIFF_NEW.to_owned(), "new in B")}
                    {swatch(diff_heat(1.0), "grew +100% or more")}
                    {swatch(diff_heat(0.25), "grew +25%")}
                    {swatch(DIFF_SAME.to_owned(), "same (±1%)")}
                    {swatch(diff_heat(-0.25), "shrank −25%")}
                    {swatch(diff_heat(-1.0), "shrank −100%")}
                </span>
                <span class="hint">"width: B · colour: change vs A · hover: A, B, Δ · click: zoom · "<code>"tracelight diff A B --folded"</code>" writes the same stacks"</span>
            </div>
            <div class="flame-path">{crumbs}</div>
            <div class="flame-wrap" node_ref=wrap>
                <canvas node_ref=canvas data-testid="diff-flame-canvas" class="flame-canvas"
                    data-weight=move || if device.get() { "device" } else { "cpu" }
                    style=move || format!("height:{}px", height())
                    on:mousemove=on_move on:mouseleave=move |_| hover.set(None) on:click=on_click />
                {tip}
            </div>
            {gone}
        </section>
    }
}
