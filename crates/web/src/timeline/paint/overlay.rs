//! What is drawn over the slices: search / reveal highlights, the selection outline, flow arrows
//! between linked slices, and the area selection.

use super::Scene;
use crate::timeline::layout::{GUTTER_PX, LANE_PX, RULER_PX};
use web_sys::CanvasRenderingContext2d;

/// Outlines `set` (sorted by start) where it meets the window, at most one mark per pixel per row.
pub fn highlights(ctx: &CanvasRenderingContext2d, sc: &Scene, set: &[u32], color: &str) {
    if set.is_empty() {
        return;
    }
    let s = &sc.t.slices;
    let end = set.partition_point(|&i| s.start.get(i as usize).is_some_and(|&a| a < sc.vp.end_ns));
    ctx.set_stroke_style_str(color);
    ctx.set_line_width(2.0);
    ctx.begin_path();
    let mut last: Option<(i64, i64)> = None;
    for &i in &set[..end] {
        let iu = i as usize;
        if s.end(iu) < sc.vp.start_ns {
            continue;
        }
        let Some(yc) = sc.slice_y(i) else { continue };
        let x0 = sc.x(s.start[iu]).max(GUTTER_PX - 2.0);
        let x1 = sc.x(s.end(iu)).min(sc.width + 2.0);
        let key = (x0 as i64, yc as i64);
        if last == Some(key) {
            continue;
        }
        last = Some(key);
        ctx.rect(
            x0 - 1.0,
            yc - LANE_PX / 2.0 - 1.0,
            (x1 - x0).max(1.0) + 2.0,
            LANE_PX + 1.0,
        );
    }
    ctx.stroke();
}

pub fn selection(ctx: &CanvasRenderingContext2d, sc: &Scene) {
    let Some(i) = sc.selected else { return };
    let s = &sc.t.slices;
    let iu = i as usize;
    let Some(yc) = sc.slice_y(i) else { return };
    let x0 = sc.x(s.start[iu]);
    let x1 = sc.x(s.end(iu));
    ctx.set_stroke_style_str(&sc.theme.select);
    ctx.set_line_width(2.5);
    ctx.stroke_rect(
        x0 - 1.5,
        yc - LANE_PX / 2.0 - 1.5,
        (x1 - x0).max(1.0) + 3.0,
        LANE_PX + 2.0,
    );
}

/// Arrows from the selection to each linked slice (launch → kernel goes left to right in time).
pub fn flows(ctx: &CanvasRenderingContext2d, sc: &Scene) {
    let Some(sel) = sc.selected else { return };
    let s = &sc.t.slices;
    let Some(ys) = sc.slice_y(sel) else { return };
    ctx.set_stroke_style_str(&sc.theme.flow);
    ctx.set_fill_style_str(&sc.theme.flow);
    ctx.set_line_width(1.5);
    for &other in sc.links {
        let Some(yo) = sc.slice_y(other) else {
            continue;
        };
        let (a, b) = if s.start[other as usize] >= s.start[sel as usize] {
            (
                (sc.x(s.start[sel as usize]), ys),
                (sc.x(s.start[other as usize]), yo),
            )
        } else {
            (
                (sc.x(s.start[other as usize]), yo),
                (sc.x(s.start[sel as usize]), ys),
            )
        };
        arrow(ctx, a, b);
    }
}

fn arrow(ctx: &CanvasRenderingContext2d, (x0, y0): (f64, f64), (x1, y1): (f64, f64)) {
    let dx = ((x1 - x0).abs() / 2.0).max(20.0);
    ctx.begin_path();
    ctx.move_to(x0, y0);
    ctx.bezier_curve_to(x0 + dx, y0, x1 - dx, y1, x1, y1);
    ctx.stroke();
    ctx.begin_path();
    ctx.move_to(x1, y1);
    ctx.line_to(x1 - 8.0, y1 - 4.0);
    ctx.line_to(x1 - 8.0, y1 + 4.0);
    ctx.close_path();
    ctx.fill();
}

/// The revealed interval: shaded over every row, its edges in the reveal colour.
pub fn band(ctx: &CanvasRenderingContext2d, sc: &Scene) {
    let Some((a, b)) = sc.band else { return };
    let (x0, x1) = (sc.x(a), sc.x(b));
    ctx.set_fill_style_str(&sc.theme.area);
    ctx.fill_rect(x0, RULER_PX, (x1 - x0).max(1.0), sc.height);
    ctx.set_fill_style_str(&sc.theme.reveal);
    ctx.fill_rect(x0, RULER_PX, 1.5, sc.height);
    ctx.fill_rect(x1 - 1.5, RULER_PX, 1.5, sc.height);
}

pub fn area(ctx: &CanvasRenderingContext2d, sc: &Scene) {
    let Some(a) = sc.area else { return };
    let x0 = sc.x(a.t0);
    let x1 = sc.x(a.t1);
    let y0 = sc.y(a.y0).max(RULER_PX);
    let y1 = sc.y(a.y1);
    ctx.set_fill_style_str(&sc.theme.area);
    ctx.fill_rect(x0, y0, x1 - x0, (y1 - y0).max(0.0));
    ctx.set_fill_style_str(&sc.theme.select);
    ctx.fill_rect(x0, RULER_PX, 1.0, sc.height);
    ctx.fill_rect(x1, RULER_PX, 1.0, sc.height);
}
