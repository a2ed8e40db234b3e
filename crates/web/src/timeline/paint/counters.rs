//! A counter row: one min/max (or busy fraction) per pixel column, filled as an area.

use super::Scene;
use crate::timeline::layout::{Row, GUTTER_PX};
use tracelight_core::view::counters::SeriesData;
use web_sys::CanvasRenderingContext2d;

pub fn row(ctx: &CanvasRenderingContext2d, sc: &Scene, row: &Row, c: usize) {
    let Some(ct) = sc.d.counters.get(c) else {
        return;
    };
    let top = sc.y(row.y) + 4.0;
    let h = row.h - 8.0;
    let base = top + h;
    let max = if ct.max > 0.0 { ct.max } else { 1.0 };
    let cols = (sc.width - GUTTER_PX).max(0.0).ceil() as usize;
    ctx.set_fill_style_str(&sc.theme.counter);
    ctx.set_global_alpha(0.55);
    ctx.begin_path();
    ctx.move_to(GUTTER_PX, base);
    let mut started = false;
    for col in 0..cols {
        let a = sc.vp.ns_at(col as f64);
        let b = sc.vp.ns_at(col as f64 + 1.0).max(a + 1);
        let v = match &ct.data {
            SeriesData::Step(s) => s.range(a, b).map(|(_, hi)| hi),
            SeriesData::Busy(bs) => Some(bs.fraction(a, b)),
        };
        let x = GUTTER_PX + col as f64;
        match v {
            Some(v) => {
                let y = base - (v / max).clamp(0.0, 1.0) * h;
                if !started {
                    ctx.line_to(x, base);
                    started = true;
                }
                ctx.line_to(x, y);
                ctx.line_to(x + 1.0, y);
            }
            None if started => {
                ctx.line_to(x, base);
                started = false;
            }
            None => ctx.move_to(x + 1.0, base),
        }
    }
    ctx.line_to(sc.width, base);
    ctx.close_path();
    ctx.fill();
    ctx.set_global_alpha(1.0);
}
