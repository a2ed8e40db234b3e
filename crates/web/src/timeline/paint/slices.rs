//! One track row of the timeline: the shared lane painter ([`crate::widgets::spans`]) on this
//! trace's own clock.

use super::text::TextCache;
use super::{PaintStats, Scene};
use crate::timeline::layout::Row;
use crate::widgets::spans::{lanes, Drawn, Lanes};
use web_sys::CanvasRenderingContext2d;

pub use crate::widgets::spans::snap;

pub fn row(
    ctx: &CanvasRenderingContext2d,
    sc: &Scene,
    row: &Row,
    track: usize,
    depths: usize,
    cache: &mut TextCache,
    stats: &mut PaintStats,
) {
    let l = Lanes {
        t: sc.t,
        lod: &sc.d.lod,
        colors: sc.colors,
        track,
        depths,
        y0: sc.y(row.lane_y(0)),
        offset_ns: 0,
        text_color: &sc.theme.slice_text,
    };
    let mut d = Drawn::default();
    lanes(ctx, &sc.frame(), &l, cache, &mut d);
    stats.rects += d.rects;
    stats.labels += d.labels;
    stats.spans += d.spans;
}
