//! A counter row of the timeline: the shared counter painter ([`crate::widgets::spans::counter`]).

use super::Scene;
use crate::timeline::layout::Row;
use crate::widgets::spans::counter;
use web_sys::CanvasRenderingContext2d;

pub fn row(ctx: &CanvasRenderingContext2d, sc: &Scene, row: &Row, c: usize) {
    if let Some(ct) = sc.d.counters.get(c) {
        let top = sc.y(row.y) + 4.0;
        counter(ctx, &sc.frame(), ct, top, row.h - 8.0, 0, &sc.theme.counter);
    }
}
