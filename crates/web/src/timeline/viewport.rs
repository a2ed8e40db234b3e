//! The visible window of trace time and the mapping between `trace_ns` and `view_px`.

/// A window `[start_ns, end_ns)` of trace time drawn across `width_px` CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub start_ns: i64,
    pub end_ns: i64,
    pub width_px: f64,
}

impl Viewport {
    pub fn new(start_ns: i64, end_ns: i64, width_px: f64) -> Self {
        Viewport {
            start_ns,
            end_ns: end_ns.max(start_ns + 1),
            width_px: width_px.max(1.0),
        }
    }

    pub fn span_ns(&self) -> f64 {
        (self.end_ns - self.start_ns) as f64
    }

    pub fn ns_per_px(&self) -> f64 {
        self.span_ns() / self.width_px
    }

    pub fn x(&self, trace_ns: i64) -> f64 {
        (trace_ns - self.start_ns) as f64 / self.ns_per_px()
    }

    pub fn ns_at(&self, view_px: f64) -> i64 {
        self.start_ns + (view_px * self.ns_per_px()).round() as i64
    }

    /// Zooms by `factor` (< 1 zooms in) keeping the time under `view_px` fixed; never below 1 µs wide
    /// in total or beyond `bounds` padded by 10%.
    pub fn zoom(&self, factor: f64, view_px: f64, bounds: (i64, i64)) -> Viewport {
        let anchor = self.ns_at(view_px) as f64;
        let max_span = ((bounds.1 - bounds.0) as f64 * 1.2).max(1000.0);
        let span = (self.span_ns() * factor).clamp(1000.0, max_span);
        let frac = view_px / self.width_px;
        let start = anchor - span * frac;
        Viewport::new(
            start.round() as i64,
            (start + span).round() as i64,
            self.width_px,
        )
    }

    /// Pans by `dx` CSS pixels (positive moves the view to later times).
    pub fn pan(&self, dx: f64) -> Viewport {
        let d = (dx * self.ns_per_px()).round() as i64;
        Viewport::new(self.start_ns + d, self.end_ns + d, self.width_px)
    }
}

/// A ruler step of 1, 2 or 5 × 10^k ns giving ticks at least `min_px` apart.
pub fn tick_step_ns(vp: &Viewport, min_px: f64) -> i64 {
    let min_ns = vp.ns_per_px() * min_px;
    let mut step: i64 = 1;
    loop {
        for m in [1, 2, 5] {
            let s = step.saturating_mul(m);
            if s as f64 >= min_ns {
                return s;
            }
        }
        if step > i64::MAX / 100 {
            return step;
        }
        step *= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_keeps_the_time_under_the_cursor() {
        let vp = Viewport::new(0, 1_000_000, 1000.0);
        let z = vp.zoom(0.5, 250.0, (0, 1_000_000));
        assert_eq!(z.ns_at(250.0), vp.ns_at(250.0));
        assert_eq!(z.end_ns - z.start_ns, 500_000);
    }

    #[test]
    fn ticks_are_one_two_five() {
        let vp = Viewport::new(0, 1_000_000, 1000.0); // 1000 ns per px
        assert_eq!(tick_step_ns(&vp, 80.0), 100_000);
        assert_eq!(tick_step_ns(&vp, 150.0), 200_000);
    }
}
