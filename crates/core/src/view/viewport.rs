//! The visible window of trace time and the mapping between `trace_ns` and `view_px`.
//!
//! Time stays `i64` nanoseconds (STYLE 7); floats appear only for pixel positions.

/// A window `[start_ns, end_ns)` of trace time drawn across `width_px` CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub start_ns: i64,
    pub end_ns: i64,
    pub width_px: f64,
}

/// The narrowest window one may zoom to: 100 ns across the whole track area.
pub const MIN_SPAN_NS: f64 = 100.0;

impl Viewport {
    pub fn new(start_ns: i64, end_ns: i64, width_px: f64) -> Self {
        Viewport {
            start_ns,
            end_ns: end_ns.max(start_ns.saturating_add(1)),
            width_px: if width_px.is_finite() {
                width_px.max(1.0)
            } else {
                1.0
            },
        }
    }

    pub fn span_ns(&self) -> f64 {
        (self.end_ns - self.start_ns) as f64
    }

    pub fn ns_per_px(&self) -> f64 {
        self.span_ns() / self.width_px
    }

    /// `trace_ns` → `view_px` (0 = left edge of the track area).
    pub fn x(&self, trace_ns: i64) -> f64 {
        (trace_ns - self.start_ns) as f64 / self.ns_per_px()
    }

    /// `view_px` → `trace_ns`.
    pub fn ns_at(&self, view_px: f64) -> i64 {
        self.start_ns + (view_px * self.ns_per_px()).round() as i64
    }

    /// Zooms by `factor` (< 1 zooms in) keeping the time under `view_px` fixed; never narrower than
    /// [`MIN_SPAN_NS`] or wider than `bounds` padded by 20%.
    pub fn zoom(&self, factor: f64, view_px: f64, bounds: (i64, i64)) -> Viewport {
        if !factor.is_finite() || factor <= 0.0 {
            return *self;
        }
        let anchor = self.ns_at(view_px) as f64;
        let max_span = ((bounds.1 - bounds.0) as f64 * 1.2).max(1000.0);
        let span = (self.span_ns() * factor).clamp(MIN_SPAN_NS, max_span);
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
        if !dx.is_finite() {
            return *self;
        }
        let d = (dx * self.ns_per_px()).round() as i64;
        Viewport::new(self.start_ns + d, self.end_ns + d, self.width_px)
    }

    /// A window showing `[a, b)` with 10% margin either side (zoom-to-slice).
    pub fn around(a: i64, b: i64, width_px: f64) -> Viewport {
        let span = (b - a).max(MIN_SPAN_NS as i64);
        let pad = span / 10 + 1;
        let mid = a + (b - a) / 2;
        Viewport::new(mid - span / 2 - pad, mid + span / 2 + pad, width_px)
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

/// A ruler label for a tick `offset_ns` from the origin, with as many decimals as `step_ns` needs:
/// ticks 2 µs apart read "1.002 ms", ticks 200 ms apart read "1.4 s".
pub fn tick_label(offset_ns: i64, step_ns: i64) -> String {
    let a = offset_ns.unsigned_abs() as f64;
    let sign = if offset_ns < 0 { "-" } else { "" };
    let (div, unit) = if a == 0.0 {
        if step_ns < 1_000 {
            (1.0, "ns")
        } else if step_ns < 1_000_000 {
            (1e3, "µs")
        } else if step_ns < 1_000_000_000 {
            (1e6, "ms")
        } else {
            (1e9, "s")
        }
    } else if a < 1e3 {
        (1.0, "ns")
    } else if a < 1e6 {
        (1e3, "µs")
    } else if a < 1e9 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    };
    // Decimals so that one step changes the last digit shown.
    let step_units = step_ns as f64 / div;
    let decimals = if step_units >= 1.0 {
        0
    } else {
        (-step_units.log10()).ceil().clamp(0.0, 9.0) as usize
    };
    format!("{sign}{:.*} {unit}", decimals, a / div)
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
    fn zoom_is_clamped_and_ignores_nonsense() {
        let vp = Viewport::new(0, 1_000, 1000.0);
        assert_eq!(vp.zoom(1e-9, 10.0, (0, 1_000_000)).span_ns(), MIN_SPAN_NS);
        assert_eq!(vp.zoom(f64::NAN, 10.0, (0, 1)), vp);
        assert_eq!(vp.pan(f64::INFINITY), vp);
    }

    #[test]
    fn ticks_are_one_two_five() {
        let vp = Viewport::new(0, 1_000_000, 1000.0); // 1000 ns per px
        assert_eq!(tick_step_ns(&vp, 80.0), 100_000);
        assert_eq!(tick_step_ns(&vp, 150.0), 200_000);
    }

    #[test]
    fn tick_labels_show_the_digits_the_step_needs() {
        assert_eq!(tick_label(1_002_000, 2_000), "1.002 ms");
        assert_eq!(tick_label(1_400_000_000, 200_000_000), "1.4 s");
        assert_eq!(tick_label(40_000_000, 20_000_000), "40 ms");
        assert_eq!(tick_label(0, 20_000_000), "0 ms");
        assert_eq!(tick_label(500, 100), "500 ns");
    }

    #[test]
    fn around_pads_the_slice() {
        let v = Viewport::around(1_000, 2_000, 100.0);
        assert!(v.start_ns < 1_000 && v.end_ns > 2_000);
    }
}
