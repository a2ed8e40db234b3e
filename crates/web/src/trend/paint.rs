//! Draws one small multiple of the trend from its values: y gridlines and labels (the shared
//! formatter), the change points' columns shaded (red where the run got slower, blue faster:
//! the differential flame's scale), stacked bars or lines with dots, min–max whiskers, the
//! hovered pair outlined, and the run names under the axis.

use crate::widgets::text::{TextCache, FONT};
use crate::widgets::theme::Theme;
use tracelight_core::view::palette::{DIFF_GREW, DIFF_SHRANK};
use tracelight_core::view::trend::{
    nice_max, nice_max_bytes, x_of, y_of, MARGIN_B, MARGIN_L, MARGIN_R, MARGIN_T,
};
use web_sys::CanvasRenderingContext2d;

/// One series of a panel: its colour and a value per run (`None`: the run has none).
pub struct Series {
    pub color: String,
    pub values: Vec<Option<f64>>,
}

/// How a panel draws its series.
#[derive(Clone, Copy, PartialEq)]
pub enum Style {
    /// One line per series, a dot per run.
    Lines,
    /// The series stacked into one bar per run.
    Stacked,
}

pub struct Panel {
    pub title: String,
    pub style: Style,
    pub series: Vec<Series>,
    /// Min–max per run, drawn as whiskers (the step time's spread).
    pub whiskers: Vec<Option<(f64, f64)>>,
    /// The axis labels' formatter (times or bytes, the shared one).
    pub fmt: fn(f64) -> String,
    /// What the panel says when no run has a value.
    pub empty: &'static str,
    /// Bytes: the axis top is a power of two.
    pub binary: bool,
}

impl Panel {
    /// The axis maximum: the tallest stack, line point or whisker.
    fn max(&self, n: usize) -> f64 {
        let mut m: f64 = 0.0;
        for i in 0..n {
            let v = |s: &Series| s.values.get(i).copied().flatten().unwrap_or(0.0);
            match self.style {
                Style::Stacked => m = m.max(self.series.iter().map(v).sum()),
                Style::Lines => m = self.series.iter().map(v).fold(m, f64::max),
            }
            if let Some(Some((_, hi))) = self.whiskers.get(i) {
                m = m.max(*hi);
            }
        }
        m
    }

    fn has_values(&self) -> bool {
        self.series
            .iter()
            .any(|s| s.values.iter().any(Option::is_some))
    }
}

/// What every panel shares: run names, change points (+1 slower, −1 faster, 0 none), the pair
/// under the pointer.
pub struct Scene<'a> {
    pub names: &'a [String],
    pub change: &'a [i8],
    pub hover: Option<(usize, usize)>,
    pub theme: &'a Theme,
}

fn alpha(hex: &str, a: f64) -> String {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    format!(
        "rgba({},{},{},{a})",
        (v >> 16) & 255,
        (v >> 8) & 255,
        v & 255
    )
}

pub fn paint(
    ctx: &CanvasRenderingContext2d,
    p: &Panel,
    sc: &Scene,
    w: f64,
    h: f64,
    text: &mut TextCache,
) {
    let th = sc.theme;
    let n = sc.names.len();
    ctx.set_fill_style_str(&th.bg);
    ctx.fill_rect(0.0, 0.0, w, h);
    ctx.set_font(FONT);
    ctx.set_fill_style_str(&th.fg);
    ctx.set_text_align("left");
    ctx.set_text_baseline("top");
    let _ = ctx.fill_text(&p.title, 8.0, 4.0);
    let step = (w - MARGIN_L - MARGIN_R) / n.max(1) as f64;
    // Change points: their column shaded, over the whole plot height.
    for (i, c) in sc.change.iter().enumerate() {
        if *c != 0 {
            let col = if *c > 0 { DIFF_GREW } else { DIFF_SHRANK };
            ctx.set_fill_style_str(&alpha(col, 0.12));
            ctx.fill_rect(
                x_of(i, n, w) - step / 2.0,
                MARGIN_T,
                step,
                h - MARGIN_T - MARGIN_B,
            );
            ctx.set_fill_style_str(col);
            ctx.set_text_align("center");
            let _ = ctx.fill_text(
                if *c > 0 { "▲" } else { "▼" },
                x_of(i, n, w),
                MARGIN_T + 1.0,
            );
        }
    }
    // The hovered pair: both columns outlined.
    if let Some((a, b)) = sc.hover {
        ctx.set_stroke_style_str(&th.select);
        ctx.set_line_width(1.0);
        let (xa, xb) = (x_of(a, n, w), x_of(b, n, w));
        ctx.stroke_rect(
            xa - step * 0.45,
            MARGIN_T,
            xb - xa + step * 0.9,
            h - MARGIN_T - MARGIN_B,
        );
    }
    let max = if p.binary {
        nice_max_bytes(p.max(n))
    } else {
        nice_max(p.max(n))
    };
    // Gridlines at 0, half and the top, labelled.
    ctx.set_line_width(1.0);
    ctx.set_text_align("right");
    ctx.set_text_baseline("middle");
    for k in 0..=2 {
        let v = max * k as f64 / 2.0;
        let y = y_of(v, max, h).round() + 0.5;
        ctx.set_stroke_style_str(&th.grid);
        ctx.begin_path();
        ctx.move_to(MARGIN_L, y);
        ctx.line_to(w - MARGIN_R, y);
        ctx.stroke();
        ctx.set_fill_style_str(&th.muted);
        let _ = ctx.fill_text(&(p.fmt)(v), MARGIN_L - 6.0, y);
    }
    if !p.has_values() {
        ctx.set_text_align("center");
        let _ = ctx.fill_text(p.empty, (MARGIN_L + w - MARGIN_R) / 2.0, h / 2.0);
    }
    match p.style {
        Style::Stacked => {
            let bw = (step * 0.5).clamp(2.0, 40.0);
            for i in 0..n {
                let mut base = 0.0;
                for s in &p.series {
                    let v = s.values.get(i).copied().flatten().unwrap_or(0.0);
                    if v <= 0.0 {
                        continue;
                    }
                    let (y0, y1) = (y_of(base, max, h), y_of(base + v, max, h));
                    ctx.set_fill_style_str(&s.color);
                    ctx.fill_rect(x_of(i, n, w) - bw / 2.0, y1, bw, (y0 - y1).max(0.5));
                    base += v;
                }
            }
        }
        Style::Lines => {
            // Whiskers first, under the line.
            ctx.set_stroke_style_str(&th.muted);
            for (i, wk) in p.whiskers.iter().enumerate() {
                if let Some((lo, hi)) = wk {
                    let x = x_of(i, n, w).round() + 0.5;
                    let (y0, y1) = (y_of(*lo, max, h), y_of(*hi, max, h));
                    ctx.begin_path();
                    ctx.move_to(x, y0);
                    ctx.line_to(x, y1);
                    ctx.move_to(x - 3.0, y0);
                    ctx.line_to(x + 3.0, y0);
                    ctx.move_to(x - 3.0, y1);
                    ctx.line_to(x + 3.0, y1);
                    ctx.stroke();
                }
            }
            for s in &p.series {
                ctx.set_stroke_style_str(&s.color);
                ctx.set_fill_style_str(&s.color);
                ctx.set_line_width(1.5);
                ctx.begin_path();
                let mut pen = false;
                for i in 0..n {
                    match s.values.get(i).copied().flatten() {
                        Some(v) => {
                            let (x, y) = (x_of(i, n, w), y_of(v, max, h));
                            if pen {
                                ctx.line_to(x, y);
                            } else {
                                ctx.move_to(x, y);
                            }
                            pen = true;
                        }
                        None => pen = false,
                    }
                }
                ctx.stroke();
                for i in 0..n {
                    if let Some(v) = s.values.get(i).copied().flatten() {
                        ctx.begin_path();
                        let _ = ctx.arc(
                            x_of(i, n, w),
                            y_of(v, max, h),
                            3.0,
                            0.0,
                            std::f64::consts::TAU,
                        );
                        ctx.fill();
                    }
                }
            }
            ctx.set_line_width(1.0);
        }
    }
    // Run names under the axis, each fitted to its column.
    ctx.set_fill_style_str(&th.muted);
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    for (i, name) in sc.names.iter().enumerate() {
        if let Some(t) = text.fit(ctx, name, step - 4.0) {
            let _ = ctx.fill_text(&t, x_of(i, n, w), h - MARGIN_B + 6.0);
        }
    }
}
