//! The flame graph tab: wiring only. The graph is built by core ([`Flame::build`]) for the
//! session's [`FlameState`] (scope, weight, Python frames); hover shows a frame's figures, a click
//! selects it (its occurrences go to the timeline from the info bar), a double click zooms into
//! it and the breadcrumb zooms back out. One painter, on animation frames (STYLE 9-10).

use super::bar::{Breadcrumb, Controls};
use super::info::{Info, Tip};
use super::paint::{paint, rows_of, FlameScene, MAX_ROWS};
use crate::platform::canvas::{dpr, prepare};
use crate::platform::clock::now_ms;
use crate::platform::frame::Frames;
use crate::session::derived::cached;
use crate::session::{FlameScope, FlameState, Nav, SessionRef};
use crate::widgets::text::TextCache;
use crate::widgets::theme::Theme;
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::model::SliceKind;
use tracelight_core::view::flame::{row_at, row_px, Flame, Options, Scope, Weight};
use tracelight_core::view::search::Matcher;

/// What the graph is built from: the part of [`FlameState`] that is not the zoom.
#[derive(Clone, Debug, PartialEq)]
struct Key {
    scope: Scope,
    opts: Options,
}

fn key_of(s: &FlameState, session: &SessionRef, file: usize) -> Key {
    let scope = match (s.scope, &s.area) {
        (FlameScope::Step(i), _) => session
            .trace(file)
            .map(|f| &f.trace.slices)
            .filter(|sl| (i as usize) < sl.len())
            .map(|sl| Scope {
                range: Some((sl.start[i as usize], sl.end(i as usize))),
                tracks: None,
            })
            .unwrap_or_default(),
        (FlameScope::Area, Some(a)) => Scope {
            range: Some((a.t0, a.t1)),
            tracks: Some(a.tracks.to_vec()),
        },
        _ => Scope::default(),
    };
    let weight = if s.device {
        Weight::Device
    } else {
        Weight::Cpu
    };
    Key {
        scope,
        opts: Options {
            weight,
            python: s.python,
        },
    }
}

#[component]
pub fn FlameView(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let (Some(tf), Some(data)) = (session.trace(file), cached(&session, file)) else {
        return view! { <p class="muted">"Not a trace."</p> }.into_any();
    };
    let st = nav.flame;
    if st.with_untracked(|s| s.file != file) {
        st.set(FlameState {
            file,
            ..FlameState::default()
        });
    }
    let t = &tf.trace;
    let has_gpu = t.slices.kind.iter().any(|k| k.is_gpu_work());
    let has_python = t.slices.kind.contains(&SliceKind::PythonFunction);
    if !has_gpu && st.with_untracked(|s| s.device) {
        st.update(|s| s.device = false);
    }
    let steps = Arc::new(data.steps.clone());

    let key = {
        let session = session.clone();
        Memo::new(move |_| st.with(|s| key_of(s, &session, file)))
    };
    // How long the last build took (`data-build-ms`, for BENCHMARKS.md).
    let build_ms = StoredValue::new(0.0f64);
    let graph = {
        let session = session.clone();
        Memo::new(move |_| {
            let k = key.get();
            let t0 = now_ms();
            let g = session
                .trace(file)
                .map(|f| Flame::build(&f.trace, &k.scope, k.opts))
                .unwrap_or_default();
            build_ms.set_value(now_ms() - t0);
            Arc::new(g)
        })
    };
    // The shown root: the zoomed frame while it exists in this graph.
    let root = move || {
        let z = st.with(|s| s.zoom);
        if (z as usize) < graph.with(|g| g.len()) {
            z
        } else {
            0
        }
    };
    let colors = crate::session::colors::slice_colors_memo(&session, file);
    let query = RwSignal::new(String::new());
    let matches = {
        let session = session.clone();
        Memo::new(move |_| {
            let q = query.get();
            let g = graph.get();
            let t = &session.trace(file)?.trace;
            let m = Matcher::parse(&q).ok()??;
            Some(Arc::new(g.matches(t, &m)))
        })
    };
    let hover = RwSignal::new(None::<(u32, f64, f64)>);
    let selected = RwSignal::new(None::<u32>);
    Effect::new(move |_| {
        key.track();
        selected.set(None);
        hover.set(None);
    });
    // A module row's "flame" link: zoom to and select the frame holding most of its calls.
    Effect::new(move |_| {
        let Some(want) = st.with(|s| s.focus.clone()) else {
            return;
        };
        let n = graph.with(|g| g.frame_of(&want));
        st.update(|s| {
            s.focus = None;
            s.zoom = n.unwrap_or(0);
        });
        selected.set(n);
    });

    let canvas = NodeRef::<html::Canvas>::new();
    let wrap = NodeRef::<html::Div>::new();
    let width = RwSignal::new(0.0f64);
    // The window's height below the graph's top (less a margin): the rows share it.
    let avail = RwSignal::new(0.0f64);
    let theme = RwSignal::new(Theme::default());
    let measure = move || {
        if let Some(w) = wrap.get_untracked() {
            let cw = f64::from(w.client_width()).max(300.0);
            if (width.get_untracked() - cw).abs() >= 0.5 {
                width.set(cw);
            }
            let win_h = web_sys::window()
                .and_then(|x| x.inner_height().ok())
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            // In page coordinates, so a scrolled page asks the same height.
            let top = w.get_bounding_client_rect().top()
                + web_sys::window().map_or(0.0, |x| x.scroll_y().unwrap_or(0.0));
            let a = (win_h - top - 16.0).max(0.0);
            if (avail.get_untracked() - a).abs() >= 1.0 {
                avail.set(a);
            }
        }
    };
    crate::platform::resize::follow(wrap, measure);
    let on_resize = window_event_listener(leptos::ev::resize, move |_| measure());
    on_cleanup(move || on_resize.remove());
    Effect::new(move |_| {
        if wrap.get().is_some() {
            theme.set(Theme::from_css());
        }
    });
    let rows = move || {
        let r = root();
        graph.with(|g| rows_of(g, r)).min(MAX_ROWS)
    };
    // One row height for painting and hit testing.
    let row = move || row_px(rows(), avail.get());
    // The canvas takes the window's height below it even when the rows need less, so zooming
    // in and out does not move the page; a deeper graph than fits scrolls.
    let height = move || (rows() as f64 * row()).max(avail.get().floor());
    let hidden = move || {
        let r = root();
        let n = graph.with(|g| rows_of(g, r));
        (n > MAX_ROWS).then(|| {
            format!(
                "{} deeper rows not drawn: double-click a frame to zoom into it.",
                n - MAX_ROWS
            )
        })
    };

    let frames = Frames::new();
    let cache = StoredValue::new_local(TextCache::default());
    let painter = {
        let session = session.clone();
        move || {
            let (Some(c), Some(f)) = (canvas.get_untracked(), session.trace(file)) else {
                return;
            };
            let (w, h, rp) = (width.get_untracked(), untrack(height), untrack(row));
            if w <= 0.0 {
                return;
            }
            let Some(ctx) = prepare(&c, w, h) else {
                return;
            };
            let g = graph.get_untracked();
            let colors = colors.get_untracked();
            let theme = theme.get_untracked();
            let m = matches.get_untracked();
            let r = untrack(root);
            let scene = FlameScene {
                t: &f.trace,
                f: &g,
                colors: &colors,
                root: r,
                width: w,
                height: h,
                row: rp,
                dpr: dpr(),
                theme: &theme,
                matches: m.as_ref().map(|m| &m.0[..]),
                selected: selected.get_untracked(),
                hover: hover.get_untracked().map(|h| h.0),
            };
            let drawn = cache
                .try_update_value(|tc| paint(&ctx, &scene, tc))
                .unwrap_or(0);
            let _ = c.set_attribute("data-frames", &drawn.to_string());
            let _ = c.set_attribute("data-nodes", &g.len().to_string());
            let _ = c.set_attribute("data-root", &r.to_string());
            let _ = c.set_attribute("data-root-ns", &g.total[r as usize].to_string());
            let _ = c.set_attribute("data-all-ns", &g.total[0].to_string());
            let _ = c.set_attribute("data-width", &format!("{w:.1}"));
            let _ = c.set_attribute("data-row-px", &format!("{rp}"));
            let _ = c.set_attribute("data-rows", &untrack(rows).to_string());
            let range = key
                .with_untracked(|k| k.scope.range)
                .map_or(String::new(), |(a, b)| format!("{a},{b}"));
            let _ = c.set_attribute("data-range", &range);
            let _ = c.set_attribute("data-build-ms", &format!("{:.1}", build_ms.get_value()));
        }
    };
    Effect::new(move |_| {
        graph.track();
        st.track();
        width.track();
        avail.track();
        colors.track();
        theme.track();
        matches.track();
        selected.track();
        hover.track();
        frames.request(painter.clone());
    });

    let node_at = move |ev: &web_sys::MouseEvent| -> Option<u32> {
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let w = width.get_untracked();
        if w <= 0.0 {
            return None;
        }
        let row = row_at(y, untrack(row))?;
        graph.with_untracked(|g| g.hit(untrack(root), x / w, row))
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        // The tooltip is placed in the window (`position: fixed`), so it is never clipped.
        let h = node_at(&ev).map(|n| (n, f64::from(ev.client_x()), f64::from(ev.client_y())));
        if h != hover.get_untracked() {
            hover.set(h);
        }
    };
    let on_click = move |ev: web_sys::MouseEvent| selected.set(node_at(&ev));
    let on_dblclick = move |ev: web_sys::MouseEvent| {
        if let Some(n) = node_at(&ev) {
            st.update(|s| s.zoom = n);
        }
    };
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        // Escape zooms out one level (when focus is not in a field).
        let in_field = ev
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok())
            .is_some();
        if ev.key() == "Escape" && !in_field {
            let r = untrack(root);
            let p = graph.with_untracked(|g| g.parent.get(r as usize).copied());
            if let Some(p) = p.filter(|&p| (p as usize) < graph.with_untracked(|g| g.len())) {
                st.update(|s| s.zoom = p);
            }
        }
    });
    on_cleanup(move || keys.remove());

    let empty = move || graph.with(|g| g.is_empty());
    let weight_word = move || {
        if st.with(|s| s.device) {
            "GPU time launched"
        } else {
            "CPU time"
        }
    };
    let s2 = session.clone();
    let s3 = session.clone();
    view! {
        <section class="flame" data-testid="flame-view">
            <div class="flame-bar">
                <h2>"Flame graph"</h2>
                <Controls steps=steps has_gpu=has_gpu has_python=has_python query=query />
                <span class="hint">"hover: figures · click: select · double-click: zoom in · Esc: zoom out"</span>
            </div>
            <Breadcrumb session=session.clone() file=file graph=graph />
            <Info session=s2 file=file graph=graph selected=selected matches=matches />
            <Show when=empty>
                <p class="muted" data-testid="flame-empty">{move || format!("No {} in this scope.", if st.with(|s| s.device) { "GPU work" } else { "host-side ops" })}</p>
            </Show>
            {move || hidden().map(|t| view! { <p class="hint" data-testid="flame-hidden">{t}</p> })}
            <div class="flame-wrap" node_ref=wrap>
                <canvas
                    node_ref=canvas
                    data-testid="flame"
                    class="flame-canvas"
                    data-weight=weight_word
                    style=move || format!("height:{}px", height())
                    on:mousemove=on_move
                    on:mouseleave=move |_| hover.set(None)
                    on:click=on_click
                    on:dblclick=on_dblclick
                />
                <Tip session=s3 file=file graph=graph hover=hover />
            </div>
        </section>
    }
    .into_any()
}
