//! The time ruler: 1-2-5 ticks labelled relative to the trace start with the digits the step needs,
//! vertical grid lines under the tracks, and `ProfilerStep#N` bands.

use super::slices::snap;
use super::Scene;
use crate::timeline::layout::{GUTTER_PX, RULER_PX, STEP_BAND_PX};
use crate::timeline::viewport::{tick_label, tick_step_ns};
use tracelight_core::model::time::format_duration;
use web_sys::CanvasRenderingContext2d;

const MIN_TICK_PX: f64 = 90.0;

fn ticks(sc: &Scene) -> (i64, impl Iterator<Item = i64>) {
    let step = tick_step_ns(&sc.vp, MIN_TICK_PX);
    let origin = sc.origin_ns;
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
    let band_y = RULER_PX - STEP_BAND_PX;
    steps(ctx, sc);
    ctx.set_fill_style_str(&th.muted);
    let (step, it) = ticks(sc);
    let origin = sc.origin_ns;
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

/// Steps narrower than this are not told apart: a run of them is one band, without ticks.
const MIN_STEP_PX: f64 = 3.0;

/// `ProfilerStep#N` bands along the bottom of the ruler, alternating colours, a tick at each start
/// and the name where it fits. Drawn as three paths (one per colour) rather than a fill per step:
/// the 1 GB trace has 17k steps, and zoomed out one call per step cost ~20 ms a frame.
fn steps(ctx: &CanvasRenderingContext2d, sc: &Scene) {
    let th = sc.theme;
    let band_y = RULER_PX - STEP_BAND_PX;
    let s0 = sc.d.steps.partition_point(|m| m.end < sc.vp.start_ns);
    let mut bands: [Vec<(f64, f64)>; 2] = Default::default();
    let mut ticks: Vec<f64> = Vec::new();
    let mut labels: Vec<(f64, &str)> = Vec::new();
    let mut dense: Option<(f64, f64)> = None;
    for (k, m) in sc.d.steps[s0..].iter().enumerate() {
        if m.start > sc.vp.end_ns {
            break;
        }
        let x0 = snap(sc.x(m.start).max(GUTTER_PX), sc.dpr);
        let x1 = snap(sc.x(m.end).min(sc.width), sc.dpr);
        if x1 - x0 < MIN_STEP_PX {
            dense = match dense {
                Some((d0, d1)) if x0 <= d1 + 1.0 => Some((d0, d1.max(x1))),
                done => {
                    bands[0].extend(done);
                    Some((x0, x1))
                }
            };
            continue;
        }
        bands[0].extend(dense.take());
        bands[(s0 + k) % 2].push((x0, x1));
        ticks.push(snap(sc.x(m.start), sc.dpr));
        if x1 - x0 > 30.0 {
            labels.push((x0, &m.label));
        }
    }
    bands[0].extend(dense);
    for (rects, color) in bands.iter().zip([&th.step_a, &th.step_b]) {
        ctx.set_fill_style_str(color);
        ctx.begin_path();
        for &(x0, x1) in rects {
            ctx.rect(x0, band_y, (x1 - x0).max(1.0), STEP_BAND_PX - 1.0);
        }
        ctx.fill();
    }
    ctx.set_fill_style_str(&th.muted);
    ctx.begin_path();
    for &x in &ticks {
        ctx.rect(x, band_y, 1.0, STEP_BAND_PX);
    }
    ctx.fill();
    ctx.set_fill_style_str(&th.fg);
    for (x, label) in labels {
        let _ = ctx.fill_text(label, x + 3.0, band_y + STEP_BAND_PX / 2.0);
    }
}
