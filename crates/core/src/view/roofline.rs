//! The roofline chart's geometry, without a canvas: log-log axes fitted to the ops and roofs,
//! each op's dot (position from its intensity and achieved TFLOPS, radius from its device time,
//! colour from its family), the roofs of the units its ops ran on, and hit testing. The page's
//! painter only draws what this returns (STYLE 1), and the tests check it natively.

use crate::analysis::devices::{device_named, Device};
use crate::analysis::math_unit::{peak, Math};
use crate::analysis::roofline::{RoofOp, Roofline};

/// Plot margins, CSS px: left (y labels), right, top, bottom (x labels).
pub const MARGIN: (f64, f64, f64, f64) = (64.0, 16.0, 14.0, 40.0);
/// Decades an axis spans at most.
pub const MAX_DECADES: f64 = 6.0;
/// Dot radius bounds, CSS px.
pub const R_MIN: f64 = 3.0;
pub const R_MAX: f64 = 22.0;

/// Decades shown: `[x_lo, x_hi]` of log10(FLOP/byte), `[y_lo, y_hi]` of log10(TFLOPS).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axes {
    pub x_lo: f64,
    pub x_hi: f64,
    pub y_lo: f64,
    pub y_hi: f64,
}

/// One dot: an op (index into [`Roofline::ops`]) at its place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dot {
    pub op: usize,
    pub x: f64,
    pub y: f64,
    pub r: f64,
    /// Palette name of its family.
    pub color_key: &'static str,
}

/// A compute roof: a math's peak and where it meets the memory roof.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub label: String,
    pub tflops: f64,
    /// Intensity (FLOP/byte) of the ridge point.
    pub ridge: f64,
}

/// The chart, laid out for a `w` × `h` px plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub axes: Axes,
    pub w: f64,
    pub h: f64,
    pub dots: Vec<Dot>,
    pub roofs: Vec<Roof>,
    /// Memory bandwidth (GB/s) of the diagonal roof, `None` on an unknown device.
    pub bandwidth_gbs: Option<f64>,
    /// Ops with FLOPs and device time but no dot (none: every such op is drawn), and ops
    /// without FLOPs (copies, gathers), which a FLOP/s axis cannot show.
    pub without_flops: usize,
}

/// The palette name a family is coloured by (one concept, one colour: a GEMM dot is the gemm
/// kernels' green).
pub fn family_color_key(family: &str) -> &'static str {
    match family {
        "gemm" => "gemm",
        "conv" => "convolution",
        "attention" => "attention",
        "elementwise" => "elementwise",
        "reduction" | "norm" => "reduction/norm/softmax",
        "copy" => "memcpy",
        "optimizer" => "optimizer",
        _ => "other",
    }
}

fn math_of(o: &RoofOp) -> Option<Math> {
    crate::analysis::roofline::math_of(&o.dtype, &o.unit)
}

/// The compute roofs of the maths the ops ran on, highest first, one per distinct peak.
pub fn roofs(r: &Roofline, dev: &Device) -> Vec<Roof> {
    let mut out: Vec<Roof> = Vec::new();
    for o in &r.ops {
        let Some(m) = math_of(o) else { continue };
        let (p, held) = peak(dev, m);
        if out.iter().any(|x| (x.tflops - p).abs() < 1e-9) {
            continue;
        }
        out.push(Roof {
            label: format!("{} {}", held.label(), crate::report::num::tflops(p)),
            tflops: p,
            ridge: p * 1e3 / dev.bandwidth_gbs(),
        });
    }
    crate::sort::by(&mut out, |a, b| b.tflops.total_cmp(&a.tflops));
    out
}

/// Lays the chart out. Ops need FLOPs, bytes and device time to be a dot.
pub fn chart(r: &Roofline, w: f64, h: f64) -> Chart {
    let dev = r.device.as_ref().and_then(|d| device_named(&d.table_name));
    let roofs = dev.map(|d| roofs(r, d)).unwrap_or_default();
    let drawn: Vec<(usize, f64, f64)> = r
        .ops
        .iter()
        .enumerate()
        .filter_map(|(k, o)| {
            let ai = o.intensity?;
            (ai > 0.0 && o.achieved_tflops > 0.0 && o.device_ns > 0).then_some((
                k,
                ai,
                o.achieved_tflops,
            ))
        })
        .collect();
    let without_flops = r
        .ops
        .iter()
        .filter(|o| o.flops <= 0.0 && o.device_ns > 0)
        .count();
    // Axes: the dots and the ridges, rounded out to whole decades, with headroom above the
    // highest roof for its label, and at most [`MAX_DECADES`] (outliers sit on the edge).
    let mut xs: Vec<f64> = drawn.iter().map(|d| d.1).collect();
    let mut ys: Vec<f64> = drawn.iter().map(|d| d.2).collect();
    xs.extend(roofs.iter().map(|x| x.ridge));
    ys.extend(roofs.iter().map(|x| x.tflops));
    let lo_hi = |v: &[f64], lo_d: f64, hi_d: f64| -> (f64, f64) {
        let (lo, hi) = v
            .iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        if lo > hi {
            return (lo_d, hi_d);
        }
        let b = (hi * 2.0).log10().ceil();
        let a = lo.log10().floor().max(b - MAX_DECADES);
        (a, if b <= a { a + 1.0 } else { b })
    };
    let (x_lo, x_hi) = lo_hi(&xs, -2.0, 3.0);
    let (y_lo, y_hi) = lo_hi(&ys, -3.0, 3.0);
    let axes = Axes {
        x_lo,
        x_hi: x_hi.max(x_lo + 1.0),
        y_lo,
        y_hi: y_hi.max(y_lo + 1.0),
    };
    let total_ns: i64 = drawn.iter().map(|d| r.ops[d.0].device_ns).sum();
    let mut dots: Vec<Dot> = drawn
        .iter()
        .map(|&(k, ai, tf)| {
            let (x, y) = to_px_clamped(&axes, w, h, ai, tf);
            let share = r.ops[k].device_ns as f64 / total_ns.max(1) as f64;
            Dot {
                op: k,
                x,
                y,
                r: (R_MIN + (R_MAX - R_MIN) * share.sqrt()).clamp(R_MIN, R_MAX),
                color_key: family_color_key(&r.ops[k].family),
            }
        })
        .collect();
    // Big dots first, so small ones stay visible on top.
    crate::sort::by(&mut dots, |a, b| b.r.total_cmp(&a.r).then(a.op.cmp(&b.op)));
    Chart {
        axes,
        w,
        h,
        dots,
        roofs,
        bandwidth_gbs: r.device.as_ref().map(|d| d.bandwidth_gbs),
        without_flops,
    }
}

/// Canvas position of (intensity, TFLOPS) in a `w` × `h` chart.
pub fn to_px(a: &Axes, w: f64, h: f64, ai: f64, tflops: f64) -> (f64, f64) {
    let (l, r, t, b) = MARGIN;
    let pw = (w - l - r).max(1.0);
    let ph = (h - t - b).max(1.0);
    let fx = (ai.max(1e-12).log10() - a.x_lo) / (a.x_hi - a.x_lo);
    let fy = (tflops.max(1e-12).log10() - a.y_lo) / (a.y_hi - a.y_lo);
    (l + fx * pw, t + (1.0 - fy) * ph)
}

/// [`to_px`] kept inside the plot: a dot past an axis's end sits on its edge.
fn to_px_clamped(a: &Axes, w: f64, h: f64, ai: f64, tflops: f64) -> (f64, f64) {
    let (l, r, t, b) = MARGIN;
    let (x, y) = to_px(a, w, h, ai, tflops);
    (x.clamp(l, w - r), y.clamp(t, h - b))
}

impl Chart {
    /// The memory roof's ends inside the plot: from the left edge to where it meets the highest
    /// compute roof (`None` without a bandwidth).
    pub fn memory_roof(&self) -> Option<((f64, f64), (f64, f64))> {
        let bw = self.bandwidth_gbs?;
        let a = &self.axes;
        let top = self.roofs.first().map_or(10f64.powf(a.y_hi), |r| r.tflops);
        let x0 = 10f64.powf(a.x_lo);
        let x1 = (top * 1e3 / bw).min(10f64.powf(a.x_hi));
        Some((
            to_px(a, self.w, self.h, x0, x0 * bw / 1e3),
            to_px(a, self.w, self.h, x1, x1 * bw / 1e3),
        ))
    }

    /// A compute roof's ends: from its ridge to the right edge.
    pub fn compute_roof(&self, k: usize) -> Option<((f64, f64), (f64, f64))> {
        let r = self.roofs.get(k)?;
        let a = &self.axes;
        Some((
            to_px(a, self.w, self.h, r.ridge, r.tflops),
            to_px(a, self.w, self.h, 10f64.powf(a.x_hi), r.tflops),
        ))
    }

    /// The op whose dot is under (x, y): the smallest dot containing the point (small dots are
    /// drawn on top), else the nearest within 4 px of its edge.
    pub fn hit(&self, x: f64, y: f64) -> Option<usize> {
        let d2 = |d: &Dot| (d.x - x).powi(2) + (d.y - y).powi(2);
        self.dots
            .iter()
            .filter(|d| d2(d) <= (d.r + 4.0).powi(2))
            .min_by(|a, b| {
                let inside = |d: &Dot| d2(d) <= d.r.powi(2);
                inside(b)
                    .cmp(&inside(a))
                    .then(a.r.total_cmp(&b.r))
                    .then(d2(a).total_cmp(&d2(b)))
            })
            .map(|d| d.op)
    }

    /// Tick decades of the x and y axes.
    pub fn ticks(&self) -> (Vec<i32>, Vec<i32>) {
        let a = &self.axes;
        (
            (a.x_lo as i32..=a.x_hi as i32).collect(),
            (a.y_lo as i32..=a.y_hi as i32).collect(),
        )
    }
}

/// `10^k` as a short label: `0.01`, `1`, `1k`.
pub fn decade_label(k: i32) -> String {
    match k {
        k if k < 0 => format!("{}", 10f64.powi(k)),
        0..=2 => format!("{}", 10i64.pow(k as u32)),
        3..=5 => format!("{}k", 10i64.pow(k as u32 - 3)),
        _ => format!("{}M", 10i64.pow((k - 6).max(0) as u32)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::analysis::roofline::{DeviceInfo, Rating};

    fn op(family: &str, ai: f64, tflops: f64, ns: i64, dtype: &str, unit: &str) -> RoofOp {
        RoofOp {
            name: format!("{family}-op"),
            shapes: String::new(),
            family: family.to_owned(),
            calls: 1,
            flops: tflops * 1e12 * ns as f64 * 1e-9,
            bytes: tflops * 1e12 * ns as f64 * 1e-9 / ai,
            device_ns: ns,
            dtype: dtype.to_owned(),
            unit: unit.to_owned(),
            ran_on: String::new(),
            intensity: Some(ai),
            achieved_tflops: tflops,
            achieved_gbs: 0.0,
            rating: Rating::default(),
        }
    }

    fn roofline() -> Roofline {
        Roofline {
            device: Some(DeviceInfo {
                trace_name: "NVIDIA A100-SXM4-80GB".into(),
                table_name: "A100 SXM4 80GB".into(),
                source: String::new(),
                bandwidth_gbs: 2039.0,
            }),
            ops: vec![
                op("gemm", 300.0, 120.0, 900_000, "tf32", "tensor_core"),
                op("elementwise", 0.1, 0.15, 100_000, "fp32", "simt"),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn dots_sit_on_log_axes_sized_by_time() {
        let c = chart(&roofline(), 600.0, 400.0);
        // Decades: x 0.1 … 1000 (the TF32 ridge 76.5 and fp32's 9.6 inside), y 0.1 … 1000.
        assert_eq!(
            c.axes,
            Axes {
                x_lo: -1.0,
                x_hi: 3.0,
                y_lo: -1.0,
                y_hi: 3.0
            }
        );
        let (l, r, t, b) = MARGIN;
        let g = c.dots.iter().find(|d| d.op == 0).unwrap();
        // log10(300) = 2.477 of 4 decades from -1; log10(120) = 2.079 of 4 decades.
        assert!((g.x - (l + (300f64.log10() + 1.0) / 4.0 * (600.0 - l - r))).abs() < 1e-9);
        assert!((g.y - (t + (1.0 - (120f64.log10() + 1.0) / 4.0) * (400.0 - t - b))).abs() < 1e-9);
        assert_eq!(g.color_key, "gemm");
        // 90% of the time: radius R_MIN + (R_MAX − R_MIN)·√0.9.
        assert!((g.r - (R_MIN + (R_MAX - R_MIN) * 0.9f64.sqrt())).abs() < 1e-9);
        // Roofs of the two maths: TF32 156 and SIMT fp32 19.5, ridges at peak / bandwidth.
        let peaks: Vec<f64> = c.roofs.iter().map(|x| x.tflops).collect();
        assert_eq!(peaks, vec![156.0, 19.5]);
        assert!((c.roofs[0].ridge - 156e3 / 2039.0).abs() < 1e-9);
        // Hit: the gemm dot's centre names it; far away, nothing.
        assert_eq!(c.hit(g.x, g.y), Some(0));
        assert_eq!(c.hit(1.0, 1.0), None);
        // An outlier nine decades down: the axis keeps 6 decades, the dot sits on its edge.
        let mut rl = roofline();
        rl.ops
            .push(op("elementwise", 0.1, 1e-9, 1_000, "fp32", "simt"));
        let c = chart(&rl, 600.0, 400.0);
        assert_eq!((c.axes.y_lo, c.axes.y_hi), (-3.0, 3.0));
        let d = c.dots.iter().find(|d| d.op == 2).unwrap();
        assert_eq!(d.y, 400.0 - MARGIN.3);
        assert_eq!(decade_label(-2), "0.01");
        assert_eq!(decade_label(3), "1k");
    }
}
