//! The sticky left gutter (track names, counter scales) and group headers, drawn after the slices
//! so nothing covers them; the header of the group scrolled past stays pinned under the ruler.

use super::text::TextCache;
use super::Scene;
use crate::timeline::layout::{Row, RowKind, GROUP_PX, GUTTER_PX, RULER_PX};
use std::ops::Range;
use tracelight_core::view::counters::Unit;
use web_sys::CanvasRenderingContext2d;

pub fn paint(
    ctx: &CanvasRenderingContext2d,
    sc: &Scene,
    range: Range<usize>,
    cache: &mut TextCache,
) {
    let th = sc.theme;
    ctx.set_fill_style_str(&th.gutter);
    ctx.fill_rect(0.0, RULER_PX, GUTTER_PX, sc.height - RULER_PX);
    ctx.set_fill_style_str(&th.grid);
    ctx.fill_rect(GUTTER_PX - 1.0, RULER_PX, 1.0, sc.height - RULER_PX);
    let first = range.start;
    for row in &sc.rows[range] {
        let y = sc.y(row.y);
        match row.kind {
            RowKind::Group(g) => header(ctx, sc, row, g, y, cache),
            RowKind::Idle(_) | RowKind::Memory(_) => {
                ctx.set_fill_style_str(&th.muted);
                if let Some(t) = cache.fit(ctx, &row.label, GUTTER_PX - 24.0) {
                    let _ = ctx.fill_text(&t, 16.0, y + 12.0);
                }
            }
            RowKind::Slices { .. } => {
                ctx.set_fill_style_str(&th.fg);
                if let Some(t) = cache.fit(ctx, &row.label, GUTTER_PX - 24.0) {
                    let _ = ctx.fill_text(&t, 16.0, y + 12.0);
                }
            }
            RowKind::Counter(c) => {
                ctx.set_fill_style_str(&th.fg);
                if let Some(t) = cache.fit(ctx, &row.label, GUTTER_PX - 24.0) {
                    let _ = ctx.fill_text(&t, 16.0, y + 12.0);
                }
                if let Some(ct) = sc.d.counters.get(c) {
                    ctx.set_fill_style_str(&th.muted);
                    let _ = ctx.fill_text(
                        &format!("max {}", value_text(ct.max, ct.unit)),
                        16.0,
                        y + 27.0,
                    );
                }
            }
        }
    }
    // Sticky: the group the top row belongs to keeps its header in view.
    if let Some(top) = sc.rows.get(first) {
        if !matches!(top.kind, RowKind::Group(_)) || sc.y(top.y) < RULER_PX {
            if let Some(h) = sc.rows.iter().find(|r| r.kind == RowKind::Group(top.group)) {
                let g = top.group;
                let next = sc.rows[first..]
                    .iter()
                    .find(|r| matches!(r.kind, RowKind::Group(x) if x != g))
                    .map_or(f64::INFINITY, |r| sc.y(r.y));
                let y = RULER_PX.min(next - GROUP_PX);
                header(ctx, sc, h, g, y, cache);
            }
        }
    }
}

fn header(
    ctx: &CanvasRenderingContext2d,
    sc: &Scene,
    row: &Row,
    g: usize,
    y: f64,
    cache: &mut TextCache,
) {
    let th = sc.theme;
    ctx.set_fill_style_str(&th.group);
    ctx.fill_rect(0.0, y, sc.width, GROUP_PX);
    ctx.set_fill_style_str(&th.fg);
    let collapsed = sc.collapsed.get(g).copied().unwrap_or(false);
    let _ = ctx.fill_text(if collapsed { "▸" } else { "▾" }, 4.0, y + GROUP_PX / 2.0);
    ctx.set_font(&format!("600 {}", super::text::FONT));
    if let Some(t) = cache.fit(ctx, &row.label, sc.width - 30.0) {
        let _ = ctx.fill_text(&t, 16.0, y + GROUP_PX / 2.0);
    }
    ctx.set_font(super::text::FONT);
}

pub fn value_text(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes => {
            let a = v.abs();
            if a >= 1024.0 * 1024.0 * 1024.0 {
                format!("{:.2} GiB", v / (1024.0 * 1024.0 * 1024.0))
            } else if a >= 1024.0 * 1024.0 {
                format!("{:.1} MiB", v / (1024.0 * 1024.0))
            } else if a >= 1024.0 {
                format!("{:.1} KiB", v / 1024.0)
            } else {
                format!("{v:.0} B")
            }
        }
        Unit::Fraction => format!("{:.0}%", v * 100.0),
        Unit::Plain => format!("{v}"),
    }
}
