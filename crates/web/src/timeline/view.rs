//! The timeline component: owns the canvas, maps wheel/drag to the viewport, repaints in an effect.

use super::layout::{self, GUTTER_PX};
use super::paint::paint;
use super::viewport::Viewport;
use crate::state::SessionRef;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::CanvasRenderingContext2d;

fn context(canvas: &web_sys::HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok().flatten()?.dyn_into().ok()
}

#[component]
pub fn Timeline(session: SessionRef, file: usize) -> impl IntoView {
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let canvas = NodeRef::<html::Canvas>::new();
    let bounds = tf.trace.time_bounds().unwrap_or((0, 1));
    let rows = layout::rows(&tf.trace);
    let css_height = layout::total_height(&rows).min(4000.0);
    let viewport = RwSignal::new(Viewport::new(bounds.0, bounds.1, 1000.0));
    let size = RwSignal::new((0.0f64, 0.0f64));
    let drag = StoredValue::new(None::<f64>);

    let measure = move || {
        if let Some(c) = canvas.get_untracked() {
            let w = f64::from(c.client_width()).max(300.0);
            size.set((w, css_height));
            viewport.update(|v| v.width_px = (w - GUTTER_PX).max(1.0));
        }
    };
    let resize = window_event_listener(leptos::ev::resize, move |_| measure());
    on_cleanup(move || resize.remove());
    Effect::new(move |_| {
        if canvas.get().is_some() {
            measure();
        }
    });

    let painted = session.clone();
    Effect::new(move |_| {
        let vp = viewport.get();
        let (w, h) = size.get();
        let Some(c) = canvas.get() else { return };
        if w <= 0.0 {
            return;
        }
        let dpr = web_sys::window()
            .map_or(1.0, |w| w.device_pixel_ratio())
            .max(1.0);
        c.set_width((w * dpr) as u32);
        c.set_height((h * dpr) as u32);
        let Some(ctx) = context(&c) else { return };
        let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
        let Some(tf) = painted.trace(file) else {
            return;
        };
        let stats = paint(&ctx, &tf.trace, &rows, &vp, bounds.0, w, h);
        let _ = c.set_attribute("data-rects", &stats.rects.to_string());
    });

    let on_wheel = move |ev: web_sys::WheelEvent| {
        ev.prevent_default();
        let x = f64::from(ev.offset_x()) - GUTTER_PX;
        if ev.ctrl_key() || ev.delta_y().abs() >= ev.delta_x().abs() {
            let factor = (ev.delta_y() * 0.002).exp();
            viewport.update(|v| *v = v.zoom(factor, x.max(0.0), bounds));
        } else {
            viewport.update(|v| *v = v.pan(ev.delta_x()));
        }
    };
    let on_down = move |ev: web_sys::MouseEvent| drag.set_value(Some(f64::from(ev.client_x())));
    let on_move = move |ev: web_sys::MouseEvent| {
        if let Some(x0) = drag.get_value() {
            let x = f64::from(ev.client_x());
            viewport.update(|v| *v = v.pan(x0 - x));
            drag.set_value(Some(x));
        }
    };
    let on_up = move |_| drag.set_value(None);
    let reset = move |_| viewport.update(|v| *v = Viewport::new(bounds.0, bounds.1, v.width_px));

    view! {
        <section class="timeline">
            <div class="timeline-bar">
                <h2>"Timeline"</h2>
                <span class="hint">"wheel: zoom · shift+wheel / drag: pan"</span>
                <button on:click=reset>"Reset zoom"</button>
            </div>
            <canvas
                node_ref=canvas
                data-testid="timeline"
                style=format!("width:100%;height:{css_height}px;display:block;cursor:grab")
                on:wheel=on_wheel
                on:mousedown=on_down
                on:mousemove=on_move
                on:mouseup=on_up
                on:mouseleave=on_up
            />
        </section>
    }
    .into_any()
}
