//! A 2-D canvas drawn in CSS pixels on a backing store of device pixels: the one place the
//! device-pixel ratio is read and the backing store sized, so every canvas is sharp the same way.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

#[wasm_bindgen(module = "/js/canvas.js")]
extern "C" {
    #[wasm_bindgen(js_name = fillPolygons)]
    fn fill_polygons_js(
        ctx: &CanvasRenderingContext2d,
        xy: &[f64],
        counts: &[u32],
        colors: &[u16],
        palette: &js_sys::Array,
    );
}

/// Closed polygons to fill in order, each with a colour of a small palette: drawn by one call
/// into JS ([`Polygons::fill`]) rather than one call per vertex (see `js/canvas.js`).
#[derive(Default)]
pub struct Polygons {
    xy: Vec<f64>,
    counts: Vec<u32>,
    colors: Vec<u16>,
    palette: Vec<&'static str>,
    /// Vertices of the polygon being traced.
    open: u32,
}

impl Polygons {
    /// Adds a vertex to the polygon being traced.
    pub fn vertex(&mut self, x: f64, y: f64) {
        self.xy.push(x);
        self.xy.push(y);
        self.open += 1;
    }

    /// Ends the polygon being traced, to be filled with `color`.
    pub fn close(&mut self, color: &'static str) {
        let i = match self.palette.iter().position(|&c| c == color) {
            Some(i) => i,
            None => {
                self.palette.push(color);
                self.palette.len() - 1
            }
        };
        self.counts.push(std::mem::take(&mut self.open));
        self.colors.push(i as u16);
    }

    /// The polygons closed so far.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The last polygon closed as a path on `ctx` (begun and closed, not filled): for a polygon
    /// that is also stroked.
    pub fn path_last(&self, ctx: &CanvasRenderingContext2d) {
        let Some(&n) = self.counts.last() else { return };
        let from = self.xy.len() - 2 * n as usize;
        ctx.begin_path();
        for (k, p) in self.xy[from..].chunks_exact(2).enumerate() {
            if k == 0 {
                ctx.move_to(p[0], p[1]);
            } else {
                ctx.line_to(p[0], p[1]);
            }
        }
        ctx.close_path();
    }

    /// Fills every polygon closed so far, in order, and forgets them.
    pub fn fill(&mut self, ctx: &CanvasRenderingContext2d) {
        if !self.counts.is_empty() {
            let palette: js_sys::Array =
                self.palette.iter().map(|&c| JsValue::from_str(c)).collect();
            fill_polygons_js(ctx, &self.xy, &self.counts, &self.colors, &palette);
        }
        self.clear();
    }

    /// Forgets every polygon.
    pub fn clear(&mut self) {
        self.xy.clear();
        self.counts.clear();
        self.colors.clear();
        self.open = 0;
    }
}

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
