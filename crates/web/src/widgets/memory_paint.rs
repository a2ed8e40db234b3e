//! Draws a [`MemoryChart`] synchronously: bands as step polygons merged per pixel column, lines,
//! markers, axes. Used by the Memory tab, the lane under the timeline and each rank's memory lane in
//! the Ranks tab's aligned timelines (a widget, so features share it without importing each other).

use crate::platform::canvas::{dpr, Polygons};
use tracelight_core::analysis::memory_chart::{
    band_columns, category_name, line_columns, x_px, BandKind, Column, MarkerKind, MemoryChart,
    XUnit,
};
use tracelight_core::model::time::format_duration;
use tracelight_core::view::byte_axis::{byte_ticks, tick_label};
use tracelight_core::view::palette;
use web_sys::CanvasRenderingContext2d;

/// Colour of a memory-timeline category (core's memory palette).
pub fn category_color(c: u8) -> &'static str {
    palette::memory_color(category_name(c))
}

pub fn band_color(k: &BandKind, i: usize) -> &'static str {
    match k {
        BandKind::Alloc { addr, .. } => {
            let n = palette::ALLOCATIONS.len();
            palette::ALLOCATIONS[((addr >> 9) as usize ^ i.wrapping_mul(7)) % n]
        }
        BandKind::Summarized { .. } => palette::SUMMARIZED,
        BandKind::Category(c) => category_color(*c),
        BandKind::Allocated => palette::memory_color("parameter"),
    }
}

/// Where the plot sits inside the canvas (CSS px).
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

impl Frame {
    pub fn y(&self, v: u64, y_max: u64) -> f64 {
        self.top + self.height * (1.0 - v as f64 / y_max.max(1) as f64)
    }

    /// Bytes at canvas y.
    pub fn bytes_at(&self, y: f64, y_max: u64) -> u64 {
        let f = (1.0 - (y - self.top) / self.height.max(1.0)).clamp(0.0, 1.0);
        (f * y_max as f64) as u64
    }
}

/// What to draw besides the data.
pub struct Overlay {
    pub highlight: Option<usize>,
    pub pinned: Option<usize>,
    /// Brush in plot px.
    pub brush: Option<(f64, f64)>,
}

/// Round tick step (1/2/5 × 10^k) so that `span / step` is about `n`.
pub fn nice_step(span: f64, n: f64) -> f64 {
    let raw = (span / n.max(1.0)).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * p
}

/// The outline of a band: along its top edge left to right, back along its bottom edge. Vertical
/// edges sit on device pixels: fractional ones make Chromium's software rasterizer anti-alias each
/// of thousands of slivers (the lane under the 1 GB timeline took ~20 ms a frame to raster).
/// `k`: the device pixel ratio.
fn trace_poly(
    out: &mut Polygons,
    f: &Frame,
    cols: &[Column],
    end: f64,
    y_max: u64,
    k: f64,
    color: &'static str,
) {
    let sx = |px: f64| ((f.left + px) * k).round() / k;
    let next = |i: usize| cols.get(i + 1).map_or(end, |c| c.px).max(cols[i].px + 0.5);
    let mut pen = Pen::start(out, (sx(cols[0].px), f.y(cols[0].hi, y_max)));
    for (i, c) in cols.iter().enumerate() {
        pen.to((sx(c.px), f.y(c.hi, y_max)));
        pen.to((sx(next(i)), f.y(c.hi, y_max)));
    }
    for (i, c) in cols.iter().enumerate().rev() {
        pen.to((sx(next(i)), f.y(c.lo, y_max)));
        pen.to((sx(c.px), f.y(c.lo, y_max)));
    }
    pen.close(color);
}

/// Traces a closed outline vertex by vertex, leaving out a vertex that repeats the one before and
/// the inner vertices of a straight horizontal or vertical run in one direction: the outline is
/// the same with far fewer vertices (a band flat across a hundred pixel columns had four per
/// column), each a `lineTo` when drawn.
struct Pen<'a> {
    out: &'a mut Polygons,
    /// The last vertex drawn to.
    last: (f64, f64),
    /// A vertex not drawn yet: the next one may extend its run.
    held: Option<(f64, f64)>,
}

impl<'a> Pen<'a> {
    fn start(out: &'a mut Polygons, p: (f64, f64)) -> Pen<'a> {
        out.vertex(p.0, p.1);
        Pen {
            out,
            last: p,
            held: None,
        }
    }

    fn to(&mut self, p: (f64, f64)) {
        let Some(h) = self.held else {
            if p != self.last {
                self.held = Some(p);
            }
            return;
        };
        if p == h {
            return;
        }
        let l = self.last;
        let run = (l.1 == h.1 && h.1 == p.1 && (h.0 - l.0) * (p.0 - h.0) > 0.0)
            || (l.0 == h.0 && h.0 == p.0 && (h.1 - l.1) * (p.1 - h.1) > 0.0);
        if !run {
            self.out.vertex(h.0, h.1);
            self.last = h;
        }
        self.held = Some(p);
    }

    /// Ends the outline, to be filled with `color`.
    fn close(self, color: &'static str) {
        if let Some(h) = self.held {
            self.out.vertex(h.0, h.1);
        }
        self.out.close(color);
    }
}

/// A chart's pixel columns for one view and width, band by band: a repaint in the same view (a
/// hover's highlight, the scrubber's line) reuses them. Merging every band's points into columns
/// is the paint's cost on a big snapshot (5.6 M entries: 40–90 ms a paint).
#[derive(Default)]
pub struct ColumnCache {
    key: Option<((i64, i64), u64)>,
    bands: Vec<(Vec<Column>, f64)>,
    /// The dashed lines' columns: a pass over every point too (reserved over 5 M entries).
    lines: Vec<(Vec<Column>, f64)>,
}

impl ColumnCache {
    /// Computes the columns of `chart` at `view` and `width` unless they are already here: the
    /// first paint of a big chart calls it a task before painting (~20 ms on 1 GB).
    pub fn fill(&mut self, chart: &MemoryChart, view: (i64, i64), width: f64) {
        let key = Some((view, width.to_bits()));
        if self.key != key
            || self.bands.len() != chart.bands.len()
            || self.lines.len() != chart.lines.len()
        {
            self.bands = chart
                .bands
                .iter()
                .map(|b| band_columns(b, view, width))
                .collect();
            self.lines = chart
                .lines
                .iter()
                .map(|l| line_columns(l, view, width))
                .collect();
            self.key = key;
        }
    }
}

/// Paints the plot area (not the axes) and returns the number of polygons drawn.
pub fn paint_data(
    ctx: &CanvasRenderingContext2d,
    chart: &MemoryChart,
    view: (i64, i64),
    f: &Frame,
    y_max: u64,
    overlay: &Overlay,
) -> u32 {
    paint_data_cached(
        ctx,
        chart,
        view,
        f,
        y_max,
        overlay,
        &mut ColumnCache::default(),
    )
}

/// [`paint_data`] with the columns of the last paint kept in `cache`, which belongs to this one
/// chart (a chart's owner keeps one; another chart needs its own).
pub fn paint_data_cached(
    ctx: &CanvasRenderingContext2d,
    chart: &MemoryChart,
    view: (i64, i64),
    f: &Frame,
    y_max: u64,
    overlay: &Overlay,
    cache: &mut ColumnCache,
) -> u32 {
    let mut drawn = 0;
    ctx.save();
    ctx.begin_path();
    ctx.rect(f.left, f.top - 1.0, f.width, f.height + 2.0);
    ctx.clip();
    cache.fill(chart, view, f.width);
    let columns = &cache.bands;
    let k = dpr();
    let mut polys = Polygons::default();
    for (i, b) in chart.bands.iter().enumerate() {
        let Some((cols, end)) = columns.get(i) else {
            continue;
        };
        if cols.is_empty() {
            continue;
        }
        trace_poly(&mut polys, f, cols, *end, y_max, k, band_color(&b.kind, i));
    }
    drawn += polys.len() as u32;
    polys.fill(ctx);
    for sel in [overlay.highlight, overlay.pinned].into_iter().flatten() {
        if let Some((cols, end)) = columns.get(sel) {
            if !cols.is_empty() {
                let white = "rgba(255,255,255,0.35)";
                trace_poly(&mut polys, f, cols, *end, y_max, k, white);
                polys.path_last(ctx);
                polys.clear();
                ctx.set_fill_style_str(white);
                ctx.fill();
                ctx.set_stroke_style_str(if Some(sel) == overlay.pinned {
                    "#cf222e"
                } else {
                    "#1f2328"
                });
                ctx.set_line_width(1.5);
                ctx.stroke();
            }
        }
    }
    let sx = |px: f64| ((f.left + px) * k).round() / k;
    for (cols, end) in &cache.lines {
        let (cols, end) = (cols.as_slice(), *end);
        if cols.is_empty() {
            continue;
        }
        ctx.begin_path();
        ctx.move_to(sx(cols[0].px), f.y(cols[0].hi, y_max));
        for (i, c) in cols.iter().enumerate() {
            let next = cols.get(i + 1).map_or(end, |n| n.px);
            ctx.line_to(sx(c.px), f.y(c.lo, y_max));
            ctx.line_to(sx(c.px), f.y(c.hi, y_max));
            ctx.line_to(sx(next), f.y(c.hi, y_max));
        }
        let _ = ctx.set_line_dash(&js_sys::Array::of2(&4.0.into(), &3.0.into()));
        ctx.set_stroke_style_str("#1f2328");
        // One pixel wide: a wider stroke of a jagged line of thousands of vertices goes through
        // Skia's stroker, ~50 ms a frame on the lane under the 1 GB timeline; 1 px stays under 1 ms.
        ctx.set_line_width(1.0);
        ctx.stroke();
        let _ = ctx.set_line_dash(&js_sys::Array::new());
    }
    for m in &chart.markers {
        let x = f.left + x_px(m.x, view, f.width);
        if x < f.left - 1.0 || x > f.left + f.width + 1.0 {
            continue;
        }
        match m.kind {
            MarkerKind::Peak => {
                ctx.set_fill_style_str("#cf222e");
                let y = f.y(m.bytes, y_max);
                ctx.begin_path();
                ctx.move_to(x, y - 1.0);
                ctx.line_to(x - 5.0, y - 9.0);
                ctx.line_to(x + 5.0, y - 9.0);
                ctx.close_path();
                ctx.fill();
            }
            MarkerKind::Oom => {
                ctx.set_fill_style_str("rgba(207,34,46,0.85)");
                ctx.fill_rect(x - 1.0, f.top, 2.0, f.height);
                ctx.set_font("bold 10px system-ui, sans-serif");
                let _ = ctx.fill_text("OOM", x + 3.0, f.top + 10.0);
            }
        }
    }
    if let Some((a, b)) = overlay.brush {
        let (a, b) = (a.min(b), a.max(b));
        ctx.set_fill_style_str("rgba(9,105,218,0.15)");
        ctx.fill_rect(f.left + a, f.top, b - a, f.height);
        ctx.set_fill_style_str("#0969da");
        ctx.fill_rect(f.left + a, f.top, 1.0, f.height);
        ctx.fill_rect(f.left + b, f.top, 1.0, f.height);
    }
    ctx.restore();
    drawn
}

/// A tick label for x (relative to `origin`).
pub fn x_label(unit: XUnit, x: i64, origin: i64) -> String {
    match unit {
        XUnit::Ns => format_duration(x - origin),
        XUnit::Index => format!("#{x}"),
    }
}

/// Grid, y axis in bytes on the left, x axis below.
pub fn paint_axes(
    ctx: &CanvasRenderingContext2d,
    chart: &MemoryChart,
    view: (i64, i64),
    f: &Frame,
    y_max: u64,
    origin: i64,
) {
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    // Round binary ticks (0, 512 MiB, 1 GiB, …), about one per 60 px.
    let n = (f.height / 60.0).clamp(2.0, 6.0) as u64;
    for v in byte_ticks(y_max, n) {
        let y = f.y(v, y_max).round() + 0.5;
        ctx.set_fill_style_str("#eef0f2");
        ctx.fill_rect(f.left, y, f.width, 1.0);
        ctx.set_fill_style_str("#57606a");
        ctx.set_text_align("right");
        let _ = ctx.fill_text(&tick_label(v), f.left - 6.0, y);
    }
    ctx.set_text_align("left");
    let span = (view.1 - view.0) as f64;
    let step = nice_step(span, (f.width / 110.0).max(1.0)).max(1.0) as i64;
    let mut t = origin + (view.0 - origin).div_euclid(step) * step;
    let base = f.top + f.height;
    ctx.set_fill_style_str("#d0d7de");
    ctx.fill_rect(f.left, base, f.width, 1.0);
    while t <= view.1 {
        let x = f.left + x_px(t, view, f.width);
        if x >= f.left && x <= f.left + f.width {
            ctx.set_fill_style_str("#d0d7de");
            ctx.fill_rect(x, base, 1.0, 4.0);
            ctx.set_fill_style_str("#57606a");
            let _ = ctx.fill_text(&x_label(chart.unit, t, origin), x + 3.0, base + 10.0);
        }
        t += step;
    }
}
