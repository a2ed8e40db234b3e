//! Pixels of a memory chart: a time's x in a view (the timeline's own mapping, so a chart and the
//! timeline above it agree), brush and wheel zoom, and the per-pixel columns a painter fills for a
//! band or a line. Kept apart from the chart's building ([`super`]); the page's painters use both.

use super::{Band, Line};
use crate::view::viewport::Viewport;

/// Whether `[a0, a1)` and `[b0, b1)` overlap.
pub fn overlaps(a: (i64, i64), b: (i64, i64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// x of `t` in a view `[v0, v1)` drawn `width` px wide: the timeline's mapping
/// ([`Viewport::x`]), so a chart and the timeline above it put a time at the same pixel.
pub fn x_px(t: i64, view: (i64, i64), width: f64) -> f64 {
    Viewport::new(view.0, view.1, width).x(t)
}

/// The time at pixel `px` of the view ([`Viewport::ns_at`]).
pub fn px_time(px: f64, view: (i64, i64), width: f64) -> i64 {
    Viewport::new(view.0, view.1, width).ns_at(px)
}

/// A brush from `px0` to `px1` (either order) → the zoomed view, or `None` for a click (< 3 px).
/// The result is clamped to `bounds` and at least 2 units wide.
pub fn brush_window(
    view: (i64, i64),
    width: f64,
    px0: f64,
    px1: f64,
    bounds: (i64, i64),
) -> Option<(i64, i64)> {
    let (a, b) = if px0 <= px1 { (px0, px1) } else { (px1, px0) };
    if b - a < 3.0 {
        return None;
    }
    let t0 = px_time(a.max(0.0), view, width).max(bounds.0);
    let t1 = px_time(b.min(width), view, width).min(bounds.1);
    (t1 > t0 + 1).then_some((t0, t1))
}

/// Zooms `view` by `factor` (< 1 zooms in) around pixel `px`, clamped to `bounds`.
pub fn zoom_window(
    view: (i64, i64),
    width: f64,
    px: f64,
    factor: f64,
    bounds: (i64, i64),
) -> (i64, i64) {
    let at = px_time(px, view, width) as f64;
    let span = ((view.1 - view.0) as f64 * factor).max(2.0);
    let full = (bounds.1 - bounds.0).max(2) as f64;
    let span = span.min(full);
    let frac = (px / width.max(1.0)).clamp(0.0, 1.0);
    let mut s = at - span * frac;
    s = s.clamp(bounds.0 as f64, bounds.1 as f64 - span);
    (s as i64, (s + span) as i64)
}

/// One pixel column of a band or line: from `px` (to the next column) the envelope `lo..hi`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    pub px: f64,
    pub lo: u64,
    pub hi: u64,
}

/// The part of a step series inside `view`, merged to one [`Column`] per pixel (envelope of
/// everything in that pixel); returns the columns and the px where the series ends. `x` is sorted
/// (a series' times), so each pixel's points are one run: a run longer than a few points is found
/// by galloping and its envelope taken in one pass over `lo` and `hi`, instead of mapping every
/// point to its pixel (a 1 GB snapshot's bands hold millions of points for ~1,300 pixels).
pub fn step_columns(
    x: &[i64],
    lo: &[u64],
    hi: &[u64],
    end: i64,
    view: (i64, i64),
    width: f64,
) -> (Vec<Column>, f64) {
    let mut out: Vec<Column> = Vec::new();
    if x.is_empty() || end <= view.0 || x[0] >= view.1 {
        return (out, 0.0);
    }
    let n = x.len().min(lo.len()).min(hi.len());
    let vp = Viewport::new(view.0, view.1, width);
    let px_of = |k: usize| vp.x(x[k].max(view.0));
    let k0 = x.partition_point(|&v| v <= view.0).saturating_sub(1);
    let stop = (k0
        + x.get(k0..n)
            .map_or(0, |t| t.partition_point(|&v| v < view.1)))
    .min(n);
    let mut last_col = i64::MIN;
    let mut k = k0;
    while k < stop {
        let px = px_of(k);
        let col = px.floor() as i64;
        let differs = |i: usize| px_of(i).floor() as i64 != col;
        let j = run_end(k, stop, differs);
        if let Some(prev) = out.last() {
            // The value carried into this column from the last point of the previous one.
            let (pl, ph) = (lo[k - 1], hi[k - 1]);
            if (prev.lo, prev.hi) != (pl, ph) && col > last_col + 1 {
                out.push(Column {
                    px: (last_col + 1) as f64,
                    lo: pl,
                    hi: ph,
                });
            }
        }
        // The envelope keeps spikes visible; the column's last value continues right.
        let l = lo[k..j].iter().copied().min().unwrap_or(lo[k]);
        let h = hi[k..j].iter().copied().max().unwrap_or(hi[k]);
        out.push(Column { px, lo: l, hi: h });
        last_col = col;
        k = j;
    }
    let end_px = x_px(end.min(view.1), view, width);
    (out, end_px)
}

/// The first index after `k` (and at most `stop`) where `differs` holds, given that it holds
/// from some index on and not at `k`: a few steps one by one, then doubling and bisecting.
fn run_end(k: usize, stop: usize, differs: impl Fn(usize) -> bool) -> usize {
    const LINEAR: usize = 8;
    let mut j = k + 1;
    while j < stop && j <= k + LINEAR {
        if differs(j) {
            return j;
        }
        j += 1;
    }
    if j >= stop {
        return stop;
    }
    // `same` does not differ; the answer is in (same, hi].
    let (mut same, mut step) = (j - 1, LINEAR);
    let mut hi = loop {
        let probe = same.saturating_add(step);
        if probe >= stop {
            break stop;
        }
        if differs(probe) {
            break probe;
        }
        same = probe;
        step = step.saturating_mul(2);
    };
    while hi - same > 1 {
        let mid = same + (hi - same) / 2;
        if differs(mid) {
            hi = mid;
        } else {
            same = mid;
        }
    }
    hi
}

/// [`step_columns`] of a band.
pub fn band_columns(b: &Band, view: (i64, i64), width: f64) -> (Vec<Column>, f64) {
    step_columns(&b.x, &b.lo, &b.hi, b.end, view, width)
}

/// [`step_columns`] of a line (`lo..hi` is the value range inside each pixel).
pub fn line_columns(l: &Line, view: (i64, i64), width: f64) -> (Vec<Column>, f64) {
    step_columns(&l.x, &l.y, &l.y, l.end, view, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns mapped point by point, as before the runs: what [`step_columns`] must equal.
    fn one_by_one(
        x: &[i64],
        lo: &[u64],
        hi: &[u64],
        end: i64,
        view: (i64, i64),
        width: f64,
    ) -> (Vec<Column>, f64) {
        let mut out: Vec<Column> = Vec::new();
        if x.is_empty() || end <= view.0 || x[0] >= view.1 {
            return (out, 0.0);
        }
        let k0 = x.partition_point(|&v| v <= view.0).saturating_sub(1);
        let mut last_col = i64::MIN;
        for k in k0..x.len() {
            if x[k] >= view.1 {
                break;
            }
            let px = x_px(x[k].max(view.0), view, width);
            let col = px.floor() as i64;
            if col == last_col {
                if let Some(c) = out.last_mut() {
                    c.lo = c.lo.min(lo[k]);
                    c.hi = c.hi.max(hi[k]);
                }
                continue;
            }
            if let Some(prev) = out.last() {
                let (pl, ph) = (lo[k - 1], hi[k - 1]);
                if (prev.lo, prev.hi) != (pl, ph) && col > last_col + 1 {
                    out.push(Column {
                        px: (last_col + 1) as f64,
                        lo: pl,
                        hi: ph,
                    });
                }
            }
            out.push(Column {
                px,
                lo: lo[k],
                hi: hi[k],
            });
            last_col = col;
        }
        (out, x_px(end.min(view.1), view, width))
    }

    #[test]
    fn runs_give_the_columns_of_mapping_every_point() {
        // A small xorshift: dense stretches (thousands of points a pixel), sparse ones, repeats.
        let mut next = tracelight_testkit::xorshift(0x9e37_79b9_7f4a_7c15);
        for case in 0..40 {
            let n = 1 + (next() % 50_000) as usize;
            let mut t = (next() % 1000) as i64;
            let (mut x, mut lo, mut hi) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..n {
                t += match next() % 10 {
                    0 => (next() % 1_000_000) as i64,
                    1 | 2 => 0,
                    _ => (next() % 20) as i64,
                };
                let a = next() % 1000;
                x.push(t);
                lo.push(a);
                hi.push(a + next() % 50);
            }
            let end = t + (next() % 100) as i64;
            let span = end - x[0] + 1;
            let views = [
                (x[0], end),
                (x[0] + span / 3, x[0] + span / 2),
                (x[0] - 10, x[0] + span / 1000 + 2),
                (x[n / 2], x[n / 2] + 1 + (next() % 5000) as i64),
            ];
            for (i, &view) in views.iter().enumerate() {
                for width in [37.0, 1317.5, 4000.0] {
                    assert_eq!(
                        step_columns(&x, &lo, &hi, end, view, width),
                        one_by_one(&x, &lo, &hi, end, view, width),
                        "case {case}, view {i}, width {width}"
                    );
                }
            }
        }
    }
}
