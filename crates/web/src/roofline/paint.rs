//! Draws the roofline chart synchronously from core's layout (`view::roofline::Chart`): grid and
//! decade labels, the memory roof and each compute roof with its label, then the dots (largest
//! first), the hovered and selected dots outlined.

use crate::widgets::palette::color_of;
use crate::widgets::text::FONT;
use crate::widgets::theme::Theme;
use tracelight_core::view::roofline::{decade_label, to_px, Chart, MARGIN};
use web_sys::CanvasRenderingContext2d;

pub struct RoofScene<'a> {
    pub chart: &'a Chart,
    pub theme: &'a Theme,
    pub hover: Option<usize>,
    pub selected: Option<usize>,
}

fn line(ctx: &CanvasRenderingContext2d, a: (f64, f64), b: (f64, f64)) {
    ctx.begin_path();
    ctx.move_to(a.0, a.1);
    ctx.line_to(b.0, b.1);
    ctx.stroke();
}

pub fn paint(ctx: &CanvasRenderingContext2d, sc: &RoofScene) {
    let c = sc.chart;
    let th = sc.theme;
    let (l, r, t, b) = MARGIN;
    ctx.set_fill_style_str(&th.bg);
    ctx.fill_rect(0.0, 0.0, c.w, c.h);
    ctx.set_font(FONT);
    // Grid and decade labels.
    let (xt, yt) = c.ticks();
    ctx.set_line_width(1.0);
    ctx.set_stroke_style_str(&th.grid);
    ctx.set_fill_style_str(&th.muted);
    ctx.set_text_baseline("top");
    ctx.set_text_align("center");
    for k in xt {
        let (x, _) = to_px(&c.axes, c.w, c.h, 10f64.powi(k), 1.0);
        line(ctx, (x.round() + 0.5, t), (x.round() + 0.5, c.h - b));
        let _ = ctx.fill_text(&decade_label(k), x, c.h - b + 4.0);
    }
    ctx.set_text_baseline("middle");
    ctx.set_text_align("right");
    for k in yt {
        let (_, y) = to_px(&c.axes, c.w, c.h, 1.0, 10f64.powi(k));
        line(ctx, (l, y.round() + 0.5), (c.w - r, y.round() + 0.5));
        let _ = ctx.fill_text(&decade_label(k), l - 6.0, y);
    }
    ctx.set_text_align("center");
    ctx.set_text_baseline("bottom");
    let _ = ctx.fill_text(
        "arithmetic intensity (FLOP / byte)",
        l + (c.w - l - r) / 2.0,
        c.h - 2.0,
    );
    ctx.save();
    let _ = ctx.translate(12.0, t + (c.h - t - b) / 2.0);
    let _ = ctx.rotate(-std::f64::consts::FRAC_PI_2);
    ctx.set_text_baseline("middle");
    let _ = ctx.fill_text("achieved TFLOPS", 0.0, 0.0);
    ctx.restore();
    // Clip to the plot for roofs and dots.
    ctx.save();
    ctx.begin_path();
    ctx.rect(l, t, c.w - l - r, c.h - t - b);
    ctx.clip();
    ctx.set_stroke_style_str(&th.fg);
    ctx.set_line_width(2.0);
    if let Some((a, z)) = c.memory_roof() {
        line(ctx, a, z);
    }
    ctx.set_text_align("right");
    ctx.set_text_baseline("bottom");
    for k in 0..c.roofs.len() {
        let Some((a, z)) = c.compute_roof(k) else {
            continue;
        };
        ctx.set_stroke_style_str(&th.fg);
        if k > 0 {
            let _ = ctx.set_line_dash(&js_sys::Array::of2(&6.0.into(), &4.0.into()));
        }
        line(ctx, a, z);
        let _ = ctx.set_line_dash(&js_sys::Array::new());
        ctx.set_fill_style_str(&th.muted);
        let _ = ctx.fill_text(&c.roofs[k].label, z.0 - 4.0, z.1 - 3.0);
    }
    // Dots, largest first; translucent so overlaps show.
    ctx.set_line_width(1.0);
    for d in &c.dots {
        ctx.set_global_alpha(0.78);
        ctx.set_fill_style_str(color_of(d.color_key));
        ctx.begin_path();
        let _ = ctx.arc(d.x, d.y, d.r, 0.0, std::f64::consts::TAU);
        ctx.fill();
        ctx.set_global_alpha(1.0);
        ctx.set_stroke_style_str(&th.bg);
        ctx.stroke();
    }
    for (op, color, lw) in [(sc.hover, &th.fg, 1.5), (sc.selected, &th.select, 2.5)] {
        let Some(d) = op.and_then(|o| c.dots.iter().find(|d| d.op == o)) else {
            continue;
        };
        ctx.set_stroke_style_str(color);
        ctx.set_line_width(lw);
        ctx.begin_path();
        let _ = ctx.arc(d.x, d.y, d.r + lw, 0.0, std::f64::consts::TAU);
        ctx.stroke();
    }
    ctx.restore();
}
