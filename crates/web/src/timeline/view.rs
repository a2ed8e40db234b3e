//! The timeline component: wiring only. Builds the state, reads the deep link, connects input to
//! state and state to the one animation-frame painter through effects (STYLE 10), and lays out the
//! toolbar, canvas and memory lane, with the details / area panel at the side.

use super::input::{self, Drag};
use super::layout::{self, total_height, GUTTER_PX, RULER_PX};
use super::link;
use super::paint::{paint, text::TextCache, Scene};
use super::reveal::{self, RevealBanner};
use super::search::SearchBox;
use super::side::SidePanel;
use super::theme::{self, SliceCat, Theme};
use super::tlstate::{track_rows, Ctx, Tl};
use super::viewport::Viewport;
use crate::platform::canvas::dpr;
use crate::platform::clock::now_ms;
use crate::platform::frame::Frames;
use crate::session::derived::cached;
use crate::session::{Nav, SessionRef, TimeWindow};
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::view::details::details;
use tracelight_core::view::palette::slot_color;

/// Rows as JSON for tests (`data-rows` on the canvas): label, track, y and height in content px.
fn rows_json(rows: &[layout::Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            let (kind, track, depths) = match r.kind {
                layout::RowKind::Group(g) => ("group", g as i64, 0),
                layout::RowKind::Slices { track, depths } => ("slices", track as i64, depths),
                layout::RowKind::Counter(c) => ("counter", c as i64, 0),
                layout::RowKind::Idle(g) => ("idle", g as i64, 0),
                layout::RowKind::Memory(g) => ("memory", g as i64, 0),
            };
            format!(
                r#"{{"kind":"{kind}","index":{track},"depths":{depths},"group":{},"y":{},"h":{},"label":{:?}}}"#,
                r.group, r.y, r.h, r.label
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// A lane drawn under the timeline on its time axis: given the session, the trace file and the
/// shown window `[start_ns, end_ns)` in trace ns. `App` passes the memory lane; the timeline knows
/// no other feature.
pub type LaneFn = fn(SessionRef, usize, RwSignal<(i64, i64)>) -> AnyView;

#[component]
pub fn Timeline(
    session: SessionRef,
    file: usize,
    #[prop(optional)] lane: Option<LaneFn>,
    /// Shown beside another timeline (Compare): window shared relative to `pair.origin_ns`.
    #[prop(optional)]
    pair: Option<crate::session::pair::Pair>,
) -> impl IntoView {
    let Some(data) = cached(&session, file) else {
        return ().into_any();
    };
    if session.trace(file).is_none() {
        return ().into_any();
    }
    let bounds = data.bounds;
    let start = pair.map_or(bounds, |p| p.window());
    let tl = Tl::new(Viewport::new(start.0, start.1, 1000.0), data.groups.len());
    let rows = {
        let (session, data) = (session.clone(), data.clone());
        Memo::new(move |_| {
            let collapsed = tl.collapsed.get();
            let idle_open = tl.idle_open.get();
            // Lanes follow the window: a track is as deep as what it shows.
            let vp = tl.vp.get();
            let rows = session.trace(file).map_or_else(Vec::new, |f| {
                layout::rows(
                    &f.trace,
                    &data.lod,
                    &data.counters,
                    &data.groups,
                    layout::RowsOf {
                        collapsed: &collapsed,
                        idle_open: &idle_open,
                        window: Some((vp.start_ns, vp.end_ns)),
                    },
                )
            });
            Arc::new(rows)
        })
    };
    // Kernels take their category's colour under the session's rules: an edit on the Kernels tab
    // recolours the timeline.
    let colors = crate::session::colors::slice_colors_memo(&session, file);
    let ctx = Ctx {
        tl,
        session: session.clone(),
        file,
        data: data.clone(),
        rows,
    };
    let canvas = NodeRef::<html::Canvas>::new();
    let wrap = NodeRef::<html::Div>::new();
    let frames = Frames::new();
    let cache = StoredValue::new_local(TextCache::default());
    let drag = StoredValue::new(None::<Drag>);

    // Size follows the scroll container's box (window resizes, a page scrollbar, the side panel);
    // the viewport's width is the track area's.
    let measure = move || {
        if let Some(w) = wrap.get_untracked() {
            let cw = f64::from(w.client_width()).max(300.0);
            let ch = f64::from(w.client_height()).max(200.0);
            if tl.size.get_untracked() != (cw, ch) {
                tl.size.set((cw, ch));
                tl.vp
                    .update(|v| *v = Viewport::new(v.start_ns, v.end_ns, cw - GUTTER_PX));
            }
        }
    };
    crate::platform::resize::follow(wrap, measure);
    Effect::new(move |_| {
        if wrap.get().is_some() {
            tl.theme.set(Theme::from_css());
        }
    });

    // Links of the selection (launch ↔ kernels, flows), for the arrows.
    let links = {
        let c = ctx.clone();
        Memo::new(move |_| {
            let sel = tl.selected.get();
            let v: Vec<u32> = sel
                .and_then(|i| c.trace().and_then(|t| details(t, i as usize)))
                .map(|d| {
                    let mut v: Vec<u32> = d
                        .launch
                        .into_iter()
                        .chain(d.kernels)
                        .chain(d.flows)
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .unwrap_or_default();
            Arc::new(v)
        })
    };

    // The one painter: every state change requests a frame; the frame reads everything untracked.
    let painter = {
        let (session, data) = (session.clone(), data.clone());
        move || {
            let (Some(c), Some(f)) = (canvas.get_untracked(), session.trace(file)) else {
                return;
            };
            let t0 = now_ms();
            let (w, h) = tl.size.get_untracked();
            if w <= 0.0 {
                return;
            }
            let Some(ctx2d) = crate::platform::canvas::prepare(&c, w, h) else {
                return;
            };
            let rows = rows.get_untracked();
            let track_row = track_rows(&rows, f.trace.tracks.len());
            let theme = tl.theme.get_untracked();
            let matches = tl.matches.get_untracked();
            let revealed = tl.revealed.get_untracked();
            let links = links.get_untracked();
            let collapsed = tl.collapsed.get_untracked();
            let vp = tl.vp.get_untracked();
            let colors = colors.get_untracked();
            let scene = Scene {
                t: &f.trace,
                d: &data,
                colors: &colors,
                rows: &rows,
                track_row: &track_row,
                vp,
                scroll: tl.scroll.get_untracked(),
                width: w,
                height: h,
                dpr: dpr(),
                theme: &theme,
                selected: tl.selected.get_untracked(),
                links: &links,
                matches: &matches,
                revealed: revealed.as_ref().map_or(&[][..], |r| &r.slices[..]),
                band: revealed.as_ref().and_then(|r| r.band()),
                area: tl.area.get_untracked(),
                collapsed: &collapsed,
                origin_ns: pair.map_or(bounds.0, |p| p.origin_ns),
            };
            let stats = cache
                .try_update_value(|tc| paint(&ctx2d, &scene, tc))
                .unwrap_or_default();
            let ms = now_ms() - t0;
            let _ = c.set_attribute("data-rects", &stats.rects.to_string());
            let _ = c.set_attribute("data-labels", &stats.labels.to_string());
            let _ = c.set_attribute("data-spans", &stats.spans.to_string());
            let _ = c.set_attribute("data-paint-ms", &format!("{ms:.2}"));
            let _ = c.set_attribute("data-window", &format!("{},{}", vp.start_ns, vp.end_ns));
            let _ = c.set_attribute("data-scroll", &tl.scroll.get_untracked().to_string());
            // The selected slice's start and its lane's content y (empty when not shown), so
            // tests can tell whether it is in the window and on screen.
            let sel = tl.selected.get_untracked().map(|i| i as usize);
            let sel_at = sel
                .and_then(|i| f.trace.slices.start.get(i).copied())
                .map_or(String::new(), |s| s.to_string());
            let sel_y = sel
                .and_then(|i| {
                    let track = *f.trace.slices.track.get(i)? as usize;
                    let r = &rows[(*track_row.get(track)?)?];
                    Some(r.lane_y(usize::from(f.trace.slices.depth[i])))
                })
                .map_or(String::new(), |y| y.to_string());
            let _ = c.set_attribute("data-selected-ns", &sel_at);
            let _ = c.set_attribute("data-selected-y", &sel_y);
        }
    };
    Effect::new(move |_| {
        tl.vp.track();
        tl.scroll.track();
        tl.size.track();
        tl.selected.track();
        tl.area.track();
        tl.matches.track();
        tl.revealed.track();
        tl.theme.track();
        rows.track();
        links.track();
        colors.track();
        frames.request(painter.clone());
    });
    // Layout attributes for tests; the scroll container follows programmatic scrolls.
    Effect::new(move |_| {
        let r = rows.get();
        if let Some(c) = canvas.get() {
            let _ = c.set_attribute("data-rows", &rows_json(&r));
            let _ = c.set_attribute("data-ruler-px", &RULER_PX.to_string());
            let _ = c.set_attribute("data-gutter-px", &GUTTER_PX.to_string());
        }
    });
    Effect::new(move |_| {
        let s = tl.scroll.get();
        if let Some(w) = wrap.get() {
            if (f64::from(w.scroll_top()) - s).abs() >= 1.0 {
                w.set_scroll_top(s.round() as i32);
            }
        }
    });

    // Other views follow the visible window; the URL hash keeps window and selection.
    let window = use_context::<TimeWindow>()
        .map(|w| w.0)
        .filter(|_| pair.is_none());
    if let Some(win) = window {
        Effect::new(move |_| {
            let vp = tl.vp.get();
            let next = (vp.start_ns, vp.end_ns);
            if win.get_untracked() != next {
                win.set(next);
            }
        });
    }
    if let Some(p) = pair {
        super::pair::follow(&ctx, p);
    } else {
        reveal::follow(&ctx);
        // The deep link: restored once, then kept in step.
        link::restore(&ctx);
        link::follow(&ctx);
    }
    // A window asked for from outside (a host page's timeStart/timeEnd), and the selection
    // published for it.
    if let Some(nav) = use_context::<Nav>().filter(|_| pair.is_none()) {
        Effect::new(move |_| {
            if let Some((a, b)) = nav.goto.get() {
                nav.goto.set(None);
                tl.vp
                    .update(|v| *v = Viewport::new(a, b.max(a + 1), v.width_px));
            }
        });
        Effect::new(move |_| {
            let sel = tl.selected.get().map(|i| (file, i));
            if nav.selected.get_untracked() != sel {
                nav.selected.set(sel);
            }
        });
    }

    if pair.is_none() {
        let keys = {
            let c = ctx.clone();
            window_event_listener(leptos::ev::keydown, move |ev| input::on_key(&c, &ev))
        };
        on_cleanup(move || keys.remove());
    }

    let (c1, c2, c3, c4, c5) = (
        ctx.clone(),
        ctx.clone(),
        ctx.clone(),
        ctx.clone(),
        ctx.clone(),
    );
    let on_scroll = move |_| {
        if let Some(w) = wrap.get_untracked() {
            let s = f64::from(w.scroll_top());
            if (tl.scroll.get_untracked() - s).abs() >= 1.0 {
                tl.scroll.set(s);
            }
        }
    };
    // Paired: back to the step both sides started on.
    let home = start;
    let reset = move |_| {
        tl.vp
            .update(|v| *v = Viewport::new(home.0, home.1, v.width_px))
    };
    let dark = RwSignal::new(false);
    let toggle_theme = move |_| {
        let d = !dark.get_untracked();
        dark.set(d);
        theme::set_dark(d);
        tl.theme.set(Theme::from_css());
    };
    let spacer = move || {
        let total = total_height(&rows.get()) + RULER_PX;
        let (_, h) = tl.size.get();
        format!("height:{}px", (total - h).max(0.0))
    };
    // The legend: every kind but kernels, then the kernel categories this trace has.
    let legend = move || {
        let kinds = SliceCat::ALL
            .iter()
            .filter(|c| !matches!(c, SliceCat::Kernel | SliceCat::Comm))
            .map(|c| (c.color(), c.label().to_owned()));
        let kernels = colors.with(|c| {
            // One entry per colour: categories that share one (gemm and unnamed kernels) join.
            let mut v: Vec<(usize, String)> = Vec::new();
            for (k, name) in c.kernel_categories() {
                match v.last_mut() {
                    Some((last, label)) if last == k => {
                        label.push_str(", ");
                        label.push_str(name);
                    }
                    _ => v.push((*k, format!("kernel: {name}"))),
                }
            }
            v.into_iter()
                .map(|(k, label)| (slot_color(k), label))
                .collect::<Vec<_>>()
        });
        kinds
            .chain(kernels)
            .map(|(color, label)| {
                view! { <span class="legend-item"><i style=format!("background:{color}")></i>{label}</span> }
            })
            .collect_view()
    };
    let window_signal = window.unwrap_or_else(|| RwSignal::new((bounds.0, bounds.1)));

    view! {
        <section class="timeline" data-testid="timeline-view" data-side=pair.map(|p| p.side)>
            <div class="timeline-bar">
                <h2>"Timeline"</h2>
                <SearchBox ctx=c1 />
                <button class="button" data-testid="reset-zoom" on:click=reset>"Reset zoom"</button>
                <button class="button" data-testid="theme-toggle" on:click=toggle_theme>
                    {move || if dark.get() { "Light theme" } else { "Dark theme" }}
                </button>
                <span class="hint">"wheel/W S: zoom · A D/drag slice: pan · shift+wheel: scroll · drag empty: area · dbl-click/F: zoom to slice"</span>
            </div>
            <div class="legend tl-legend" data-testid="legend">{legend}</div>
            <RevealBanner ctx=c2 />
            <div class="tl-body">
            <div class="tl-main">
            <div class="tl-wrap" node_ref=wrap on:scroll=on_scroll>
                <canvas
                    node_ref=canvas
                    data-testid="timeline"
                    class="tl-canvas"
                    style=move || format!("height:{}px", tl.size.get().1)
                    on:wheel=move |ev| input::on_wheel(&c3, &ev)
                    on:mousedown=move |ev| input::on_down(&c4, drag, &ev)
                    on:mousemove=move |ev| input::on_move(&c5, drag, &ev)
                    on:mouseup={
                        let c = ctx.clone();
                        move |ev| input::on_up(&c, drag, &ev)
                    }
                    on:mouseleave=move |_| { drag.set_value(None); tl.pointer_x.set(None); }
                    on:dblclick={
                        let c = ctx.clone();
                        move |ev| input::on_dblclick(&c, &ev)
                    }
                />
                <div style=spacer></div>
            </div>
            {lane.map(|f| f(session.clone(), file, window_signal))}
            </div>
            <SidePanel ctx=ctx.clone() />
            </div>
        </section>
    }
    .into_any()
}
