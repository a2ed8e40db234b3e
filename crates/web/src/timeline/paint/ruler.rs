//! The time ruler: 1-2-5 ticks labelled relative to the trace start with the digits the step needs,
//! vertical grid lines under the tracks, and `ProfilerStep#N` bands.

use super::Scene;
use crate::timeline::layout::{GUTTER_PX, RULER_PX, STEP_BAND_PX};
use crate::timeline::viewport::{tick_label, tick_step_ns};
use tracelight_core::model::time::format_duration;
use web_sys::CanvasRenderingContext2d;

const MIN_TICK_PX: f64 = 90.0;

fn ticks(sc: &Scene) -> (i64, impl Iterator<Item = i64>) {
    let step = tick_step_ns(&sc.vp, MIN_TICK_PX);
    let origin = sc.d.bounds.0;
    let first = origin + (sc.vp.start_ns - origin).div_euclid(step) * step;
    let end = sc.vp.end_ns;
    (
        step,
        std::iter::successors(Some(first), move |&t| t.checked_add(step))
            .take_while(move |&t| t <= end),
    )
}

/// Grid lines, drawn first so everything sits on top of them.
pub fn grid(ctx: &CanvasRenderingContext2d, sc: &Scene) {
    ctx.set_fill_style_str(&sc.theme.grid);
    let (_, it) = ticks(sc);
    for t in it {
        let x = sc.x(t);
        if x >= GUTTER_PX {
            ctx.fill_rect(x.floor(), RULER_PX, 1.0, sc.height - RULER_PX);
        }
    }
}

pub fn paint(ctx: &CanvasRenderingContext2d, sc: &Scene) {
    let th = sc.theme;
    ctx.set_fill_style_str(&th.ruler);
    ctx.fill_rect(0.0, 0.0, sc.width, RULER_PX);
    // Step bands along the bottom of the ruler.
    let band_y = RULER_PX - STEP_BAND_PX;
    let s0 = sc.d.steps.partition_point(|m| m.end < sc.vp.start_ns);
    for (k, m) in sc.d.steps[s0..].iter().enumerate() {
        if m.start > sc.vp.end_ns {
            break;
        }
        let x0 = sc.x(m.start).max(GUTTER_PX);
        let x1 = sc.x(m.end).min(sc.width);
        ctx.set_fill_style_str(if (s0 + k) % 2 == 0 {
            &th.step_a
        } else {
            &th.step_b
        });
        ctx.fill_rect(x0, band_y, (x1 - x0).max(1.0), STEP_BAND_PX - 1.0);
        ctx.set_fill_style_str(&th.muted);
        ctx.fill_rect(sc.x(m.start), band_y, 1.0, STEP_BAND_PX);
        if x1 - x0 > 30.0 {
            ctx.set_fill_style_str(&th.fg);
            let _ = ctx.fill_text(&m.label, x0 + 3.0, band_y + STEP_BAND_PX / 2.0);
        }
    }
    ctx.set_fill_style_str(&th.muted);
    let (step, it) = ticks(sc);
    let origin = sc.d.bounds.0;
    for t in it {
        let x = sc.x(t);
        if x >= GUTTER_PX {
            ctx.fill_rect(x.floor(), band_y - 6.0, 1.0, 6.0);
            let _ = ctx.fill_text(&tick_label(t - origin, step), x + 3.0, 10.0);
        }
    }
    ctx.set_fill_style_str(&th.ruler);
    ctx.fill_rect(0.0, 0.0, GUTTER_PX, RULER_PX);
    ctx.set_fill_style_str(&th.fg);
    let _ = ctx.fill_text(
        &format!("window {}", format_duration(sc.vp.end_ns - sc.vp.start_ns)),
        8.0,
        10.0,
    );
    ctx.set_fill_style_str(&th.muted);
    let _ = ctx.fill_text(
        &format!("at +{}", format_duration(sc.vp.start_ns - origin)),
        8.0,
        band_y + STEP_BAND_PX / 2.0,
    );
    ctx.set_fill_style_str(&th.grid);
    ctx.fill_rect(0.0, RULER_PX - 1.0, sc.width, 1.0);
}
