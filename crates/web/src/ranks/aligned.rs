//! The aligned timelines of the Ranks tab: every rank's timeline in one canvas on one clock (each
//! rank moved by core's alignment offset, `RunFigures::alignment`), one collapsible group per
//! rank (collapsed: its GPU streams and memory curve, core's `view::aligned::rows`), one
//! viewport for all (wheel zooms, drag pans, all ranks together), and the selected collective's
//! kernels joined across the ranks by a flow line. The heatmap's cells, the buttons and a click on
//! a collective's kernel here pick the collective.

use super::aligned_data::{
    collective_of, flow_parts, focus_label, method_text, rows_json, with_ranks,
};
use super::aligned_paint::{paint, AScene, RULER_PX};
use super::memory::{lanes_json, shared_y_max};
use super::run::memory_text;
use super::run::RunModel;
use crate::platform::canvas::dpr;
use crate::platform::clock::{now_ms, wasm_memory_bytes};
use crate::platform::frame::Frames;
use crate::session::{FineRules, SessionRef};
use crate::widgets::geometry::GUTTER_PX;
use crate::widgets::spans::Frame;
use crate::widgets::text::TextCache;
use crate::widgets::theme::Theme;
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::view::aligned::{bounds, hit_slice, rows};
use tracelight_core::view::layout::RowKind;
use tracelight_core::view::viewport::Viewport;

/// Tallest the canvas grows before its rows scroll.
const MAX_HEIGHT_PX: f64 = 560.0;

#[component]
pub fn AlignedTimelines(
    m: Arc<RunModel>,
    session: SessionRef,
    /// The collective whose kernels the flow joins (index into `figures.collectives`).
    focus: RwSignal<Option<usize>>,
) -> impl IntoView {
    let n = m.figures.ranks.len();
    let Some(full) = with_ranks(&session, &m, bounds) else {
        return ().into_any();
    };
    let expanded = RwSignal::new(vec![false; n]);
    let vp = RwSignal::new(Viewport::new(full.0, full.1.max(full.0 + 1), 1000.0));
    let size = RwSignal::new((0.0f64, 0.0f64));
    let scroll = RwSignal::new(0.0f64);
    let theme = RwSignal::new(Theme::default());
    let rows = {
        let (session, m) = (session.clone(), m.clone());
        Memo::new(move |_| {
            let e = expanded.get();
            Arc::new(with_ranks(&session, &m, |r| rows(r, &e)))
        })
    };
    let rules = FineRules::current().0;
    let colors = {
        let (session, m) = (session.clone(), m.clone());
        Memo::new(move |_| {
            let r = rules.get();
            Arc::new(
                m.files
                    .iter()
                    .map(|&k| crate::session::colors::slice_colors(&session, k, &r))
                    .collect::<Vec<_>>(),
            )
        })
    };
    // The focused collective's kernels, rank by rank in the view's order.
    let flow = {
        let (session, m) = (session.clone(), m.clone());
        Memo::new(move |_| Arc::new(flow_parts(&session, &m, focus.get())))
    };
    let canvas = NodeRef::<html::Canvas>::new();
    let wrap = NodeRef::<html::Div>::new();
    let frames = Frames::new();
    let cache = StoredValue::new_local(TextCache::default());
    let height = move || {
        let total = rows.with(|r| r.last().map_or(0.0, |x| x.row.y + x.row.h));
        // + the wrap's two 1 px borders (border-box), so rows that fit are not cut by 2 px.
        (total + RULER_PX + 2.0).min(MAX_HEIGHT_PX)
    };
    let measure = move || {
        if let Some(w) = wrap.get_untracked() {
            let cw = f64::from(w.client_width()).max(300.0);
            let ch = f64::from(w.client_height()).max(100.0);
            if size.get_untracked() != (cw, ch) {
                size.set((cw, ch));
                vp.update(|v| *v = Viewport::new(v.start_ns, v.end_ns, cw - GUTTER_PX));
            }
        }
    };
    crate::platform::resize::follow(wrap, measure);
    Effect::new(move |_| {
        if wrap.get().is_some() {
            theme.set(Theme::from_css());
        }
    });

    let lane_y_max = shared_y_max(&m.lanes);
    let lanes_attr = lanes_json(&m.lanes);
    let painter = {
        let (session, m) = (session.clone(), m.clone());
        move || {
            let Some(c) = canvas.get_untracked() else {
                return;
            };
            let t0 = now_ms();
            let (w, h) = size.get_untracked();
            let Some(ctx) = crate::platform::canvas::prepare(&c, w, h) else {
                return;
            };
            let (rows, colors, flow) = (
                rows.get_untracked(),
                colors.get_untracked(),
                flow.get_untracked(),
            );
            let (th, e, v) = (
                theme.get_untracked(),
                expanded.get_untracked(),
                vp.get_untracked(),
            );
            let frame = Frame {
                vp: v,
                left: GUTTER_PX,
                width: w,
                top: RULER_PX,
                height: h,
                dpr: dpr(),
            };
            let flow_at = with_ranks(&session, &m, |ranks| {
                let sc = AScene {
                    ranks,
                    colors: &colors,
                    rows: &rows,
                    expanded: &e,
                    frame,
                    scroll: scroll.get_untracked(),
                    origin: full.0,
                    theme: &th,
                    flow: &flow,
                    lanes: &m.lanes,
                    lane_y_max,
                };
                let (drawn, polygons) = cache
                    .try_update_value(|tc| paint(&ctx, &sc, tc))
                    .unwrap_or_default();
                let _ = c.set_attribute("data-rects", &drawn.rects.to_string());
                let _ = c.set_attribute("data-mem-polygons", &polygons.to_string());
                // Where each flow kernel is drawn (rank index, canvas x of its middle, y), for tests.
                let xy: Vec<String> = flow
                    .iter()
                    .filter_map(|p| {
                        let (x0, x1, y) = sc.part_at(p)?;
                        Some(format!("[{},{:.1},{:.1}]", p.rank, (x0 + x1) / 2.0, y))
                    })
                    .collect();
                let _ = c.set_attribute("data-flow-xy", &format!("[{}]", xy.join(",")));
                // Each flow part's kernel start on the shown clock (what `analyze DIR --json`
                // calls a rank's `start_us` of that collective).
                flow.iter()
                    .filter_map(|p| {
                        let r = ranks.get(p.rank)?;
                        let s = *r.t.slices.start.get(p.slice as usize)?;
                        Some(format!("[{},{}]", p.rank, s - r.offset_ns))
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            });
            let _ = c.set_attribute("data-flow", &format!("[{flow_at}]"));
            let _ = c.set_attribute("data-window", &format!("{},{}", v.start_ns, v.end_ns));
            let _ = c.set_attribute("data-scroll", &scroll.get_untracked().to_string());
            let _ = c.set_attribute("data-paint-ms", &format!("{:.2}", now_ms() - t0));
            // Linear memory (only grows): `tests/e2e/bench_ranks.mjs` reads it.
            let _ = c.set_attribute("data-wasm-bytes", &wasm_memory_bytes().to_string());
        }
    };
    Effect::new(move |_| {
        vp.track();
        scroll.track();
        size.track();
        theme.track();
        rows.track();
        colors.track();
        flow.track();
        frames.request(painter.clone());
    });
    Effect::new(move |_| {
        let r = rows.get();
        if let Some(c) = canvas.get() {
            let _ = c.set_attribute("data-rows", &rows_json(&r));
            let _ = c.set_attribute("data-mem-lanes", &lanes_attr);
            let _ = c.set_attribute("data-ruler-px", &RULER_PX.to_string());
        }
    });
    // A picked collective: zoom to its kernels with room either side. (Not the one picked when
    // the view opens: it opens on the whole run, the flow already drawn; nor one picked by a
    // click on its kernel, already in view.)
    let keep_window = StoredValue::new(false);
    {
        let m = m.clone();
        Effect::new(move |prev: Option<()>| {
            let c = focus.get().and_then(|c| m.figures.collectives.get(c));
            let keep = keep_window
                .try_update_value(std::mem::take)
                .unwrap_or(false);
            let Some(c) = c.filter(|_| prev.is_some() && !keep) else {
                return;
            };
            let a = c.parts.iter().map(|p| p.start_ns).min().unwrap_or(0);
            let b = c.parts.iter().map(|p| p.end_ns).max().unwrap_or(a);
            let span = (b - a).max(1000);
            vp.update(|v| *v = Viewport::new(a - span / 2, b + span / 2, v.width_px));
            // The rank the others waited for, scrolled into view (with its kernel's row).
            let Some(k) = m.figures.ranks.iter().position(|r| r.rank == c.latest_rank) else {
                return;
            };
            let (y0, y1) = rows.with_untracked(|r| {
                let mine: Vec<_> = r.iter().filter(|x| x.rank == k).collect();
                (
                    mine.first().map_or(0.0, |x| x.row.y),
                    mine.last().map_or(0.0, |x| x.row.y + x.row.h),
                )
            });
            let visible = (size.get_untracked().1 - RULER_PX).max(1.0);
            let s = scroll.get_untracked();
            if y0 < s || y1 > s + visible {
                let to = if y1 - y0 > visible { y0 } else { y1 - visible };
                let to = to.max(0.0);
                scroll.set(to);
                if let Some(w) = wrap.get_untracked() {
                    w.set_scroll_top(to.round() as i32);
                }
            }
        });
    }

    let drag = StoredValue::new(None::<(f64, f64, bool)>);
    let view_x = |ev: &web_sys::MouseEvent| f64::from(ev.offset_x()) - GUTTER_PX;
    let on_wheel = move |ev: web_sys::WheelEvent| {
        if ev.shift_key() {
            return; // the rows scroll
        }
        ev.prevent_default();
        let f = (ev.delta_y() * 0.002).exp();
        let x = view_x(&ev).max(0.0);
        vp.update(|v| *v = v.zoom(f, x, full));
    };
    let on_down = move |ev: web_sys::MouseEvent| {
        drag.set_value(Some((
            f64::from(ev.offset_x()),
            f64::from(ev.offset_y()),
            false,
        )));
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((x0, y0, _)) = drag.get_value() else {
            return;
        };
        let x = f64::from(ev.offset_x());
        if (x - x0).abs() >= 3.0 || drag.get_value().is_some_and(|d| d.2) {
            vp.update(|v| *v = v.pan(x0 - x));
            drag.set_value(Some((x, y0, true)));
        }
    };
    // A click (no drag) on a rank's header opens or closes it.
    let (session_up, m_up) = (session.clone(), m.clone());
    let on_up = move |ev: web_sys::MouseEvent| {
        let d = drag.get_value();
        drag.set_value(None);
        if d.is_some_and(|d| d.2) {
            return;
        }
        let y = f64::from(ev.offset_y()) - RULER_PX + scroll.get_untracked();
        let hit = rows.with_untracked(|r| {
            r.iter()
                .find(|x| x.row.y <= y && y < x.row.y + x.row.h)
                .and_then(|x| match x.row.kind {
                    RowKind::Group(k) => Some(k),
                    _ => None,
                })
        });
        if let Some(k) = hit {
            expanded.update(|e| {
                if let Some(v) = e.get_mut(k) {
                    *v = !*v;
                }
            });
            return;
        }
        // A click on a collective's kernel picks that collective.
        let x = f64::from(ev.offset_x()) - GUTTER_PX;
        let v = vp.get_untracked();
        let picked = rows.with_untracked(|r| {
            with_ranks(&session_up, &m_up, |ranks| hit_slice(ranks, r, &v, x, y))
        });
        if let Some((k, slice)) = picked {
            if let Some(c) = collective_of(&session_up, &m_up, k, slice) {
                // The kernel clicked is in view: keep the window.
                keep_window.set_value(true);
                focus.set(Some(c));
            }
        }
    };
    let on_scroll = move |_| {
        if let Some(w) = wrap.get_untracked() {
            scroll.set(f64::from(w.scroll_top()));
        }
    };
    let spacer = move || {
        let total = rows.with(|r| r.last().map_or(0.0, |x| x.row.y + x.row.h)) + RULER_PX;
        format!("height:{}px", (total - size.get().1).max(0.0))
    };
    let all = move |open: bool| move |_| expanded.set(vec![open; n]);
    let reset = move |_| vp.update(|v| *v = Viewport::new(full.0, full.1, v.width_px));
    // The focus picker: in time order (as the heatmap), previous / next / the largest skew.
    let f = &m.figures;
    let mut order: Vec<usize> = (0..f.collectives.len()).collect();
    tracelight_core::sort::by_key(&mut order, |&c| {
        let first = f.collectives[c].parts.iter().map(|p| p.start_ns).min();
        (first.unwrap_or(0), c)
    });
    let order = Arc::new(order);
    let step = {
        let order = order.clone();
        move |d: isize| {
            let order = order.clone();
            move |_| {
                let at = focus
                    .get_untracked()
                    .and_then(|c| order.iter().position(|&x| x == c));
                let next = match at {
                    Some(i) => i
                        .saturating_add_signed(d)
                        .min(order.len().saturating_sub(1)),
                    None => 0,
                };
                if let Some(&c) = order.get(next) {
                    focus.set(Some(c));
                }
            }
        }
    };
    let worst = {
        let m = m.clone();
        move |_| {
            let c = (0..m.figures.collectives.len())
                .max_by_key(|&c| (m.figures.collectives[c].skew_ns, std::cmp::Reverse(c)));
            focus.set(c);
        }
    };
    let label = {
        let m = m.clone();
        move || focus_label(&m, focus.get())
    };
    let method = method_text(&f.alignment);
    let memory = memory_text(&m);
    let has_coll = !f.collectives.is_empty();
    let (s1, s2) = (step.clone()(-1), step(1));
    view! {
        <section class="card aligned" data-testid="aligned">
            <h2>"Aligned timelines"</h2>
            <p class="hint">{format!("{n} rank(s), {method}. Wheel: zoom all ranks · drag: pan · shift+wheel: scroll · click a rank's header: open or close it (closed, a rank shows its streams that carry collectives) · picking a collective scrolls to the rank that arrived last · click a collective's kernel: join it across ranks.")}</p>
            <p class="hint" data-testid="aligned-memory">{memory}</p>
            <div class="aligned-bar">
                <button class="button" data-testid="aligned-expand" on:click=all(true)>"Open all"</button>
                <button class="button" data-testid="aligned-collapse" on:click=all(false)>"Close all"</button>
                <button class="button" data-testid="aligned-reset" on:click=reset>"Reset zoom"</button>
                {has_coll.then(|| view! {
                    <button class="button" data-testid="flow-prev" on:click=s1>"◀"</button>
                    <button class="button" data-testid="flow-next" on:click=s2>"▶"</button>
                    <button class="button" data-testid="flow-worst" on:click=worst>"Largest skew"</button>
                })}
                <span class="flow-label" data-testid="flow-label">{label}</span>
            </div>
            <div class="al-wrap" node_ref=wrap on:scroll=on_scroll style=move || format!("height:{}px", height())>
                <canvas
                    node_ref=canvas
                    data-testid="aligned-canvas"
                    class="tl-canvas"
                    style=move || format!("height:{}px", size.get().1)
                    on:wheel=on_wheel
                    on:mousedown=on_down
                    on:mousemove=on_move
                    on:mouseup=on_up
                    on:mouseleave=move |_| drag.set_value(None)
                />
                <div style=spacer></div>
            </div>
        </section>
    }
    .into_any()
}
