//! A 2-D canvas drawn in CSS pixels on a backing store of device pixels: the one place the
//! device-pixel ratio is read and the backing store sized, so every canvas is sharp the same way.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Device pixels per CSS pixel (at least 1), for sizing and for snapping edges to device pixels.
pub fn dpr() -> f64 {
    web_sys::window()
        .map_or(1.0, |w| w.device_pixel_ratio())
        .max(1.0)
}

/// The canvas's 2-D context.
pub fn context2d(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok().flatten()?.dyn_into().ok()
}

/// Sizes `c`'s backing store for a `w` x `h` CSS px box at the device pixel ratio (only when it
/// changed: resizing clears the canvas) and returns its context scaled to CSS px.
pub fn prepare(c: &HtmlCanvasElement, w: f64, h: f64) -> Option<CanvasRenderingContext2d> {
    let dpr = dpr();
    let (bw, bh) = ((w * dpr).round() as u32, (h * dpr).round() as u32);
    if c.width() != bw || c.height() != bh {
        c.set_width(bw);
        c.set_height(bh);
    }
    let ctx = context2d(c)?;
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    Some(ctx)
}
