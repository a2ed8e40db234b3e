//! Draws the flame graph synchronously: the shown root across the full width at the top, each
//! frame under its parent at its left-heavy offset, frames narrower than half a pixel skipped with
//! their subtrees (they cannot hold a wider child), rects batched into one path per colour and
//! snapped to device pixels like the timeline's, then the names that fit.

use crate::widgets::text::{TextCache, FONT};
use crate::widgets::theme::Theme;
use tracelight_core::model::{Trace, NONE};
use tracelight_core::view::flame::Flame;
use tracelight_core::view::palette::slot_color;
use tracelight_core::view::slice_colors::SliceColors;
use web_sys::CanvasRenderingContext2d;

/// Rows drawn at most: the canvas's backing store is width × height × dpr² × 4 bytes, so a stack
/// thousands of frames deep (hostile or recursive Python) would ask for gigabytes. Deeper rows
/// are reached by zooming into a frame, which makes it row 0.
pub const MAX_ROWS: usize = 240;
/// Frames at least this wide carry a name.
const LABEL_PX: f64 = 22.0;
/// The root and `[launch not recorded]`: no slice, no kind colour.
const NEUTRAL: &str = "#8c959f";
/// Frames a search does not match.
const DIMMED: &str = "#d0d7de";

/// Rects of one colour: x, y, width.
type Rects = Vec<(f64, f64, f64)>;

/// Everything one paint needs.
pub struct FlameScene<'a> {
    pub t: &'a Trace,
    pub f: &'a Flame,
    pub colors: &'a SliceColors,
    /// The frame drawn as root (zoom).
    pub root: u32,
    pub width: f64,
    pub height: f64,
    /// Height of a row, CSS px (`view::flame::row_px`: the hit test reads rows with the same).
    pub row: f64,
    pub dpr: f64,
    pub theme: &'a Theme,
    /// Per node, whether the search matches it (`None`: no search).
    pub matches: Option<&'a [bool]>,
    pub selected: Option<u32>,
    pub hover: Option<u32>,
}

impl FlameScene<'_> {
    /// Left edge and width of `node`, CSS px.
    pub fn span(&self, node: u32) -> (f64, f64) {
        frame_px(self.f, self.root, node, self.width)
    }
    pub fn y(&self, node: u32) -> f64 {
        let d = self.f.depth[node as usize].saturating_sub(self.f.depth[self.root as usize]);
        f64::from(d) * self.row
    }
}

/// Left edge and width of `node` when `root` spans `width` px.
pub fn frame_px(f: &Flame, root: u32, node: u32, width: f64) -> (f64, f64) {
    let (r, n) = (root as usize, node as usize);
    let w = f.total[r].max(1) as f64;
    let x = (f.x[n] - f.x[r]) as f64 / w * width;
    (x, f.total[n] as f64 / w * width)
}

/// Rows the subtree of `root` needs.
pub fn rows_of(f: &Flame, root: u32) -> usize {
    let r = root as usize;
    let Some(&end) = f.end.get(r) else {
        return 1;
    };
    let base = f.depth[r];
    (r..end as usize)
        .map(|n| usize::from(f.depth[n] - base))
        .max()
        .unwrap_or(0)
        + 1
}

/// Paints and returns how many frames were drawn.
pub fn paint(ctx: &CanvasRenderingContext2d, sc: &FlameScene, cache: &mut TextCache) -> u32 {
    let f = sc.f;
    ctx.set_fill_style_str(&sc.theme.bg);
    ctx.fill_rect(0.0, 0.0, sc.width, sc.height);
    let r = sc.root as usize;
    if r >= f.len() {
        return 0;
    }
    let snap = |v: f64| (v * sc.dpr).round() / sc.dpr;
    let mut by_color: Vec<(&str, Rects)> = Vec::new();
    let mut labels: Vec<(f64, f64, f64, u32, bool)> = Vec::new();
    let mut n = r;
    let end = f.end[r] as usize;
    let mut drawn = 0u32;
    while n < end {
        let (x, w) = sc.span(n as u32);
        if w < 0.5 {
            n = f.end[n] as usize;
            continue;
        }
        let y = sc.y(n as u32);
        if y + sc.row > sc.height + 0.5 {
            // Below the canvas, and so is its whole subtree.
            n = f.end[n] as usize;
            continue;
        }
        let rep = f.rep[n];
        let lit = sc
            .matches
            .is_none_or(|m| m.get(n).copied().unwrap_or(false));
        let color = if !lit {
            DIMMED
        } else if rep == NONE {
            NEUTRAL
        } else {
            slot_color(sc.colors.slot(sc.t, rep as usize))
        };
        let (x0, x1) = (snap(x), snap(x + w));
        // A hairline at the right end keeps neighbours of one colour apart.
        let w = if x1 - x0 >= 3.0 {
            x1 - x0 - 1.0 / sc.dpr
        } else {
            (x1 - x0).max(1.0 / sc.dpr)
        };
        match by_color.iter_mut().find(|(c, _)| *c == color) {
            Some((_, v)) => v.push((x0, y, w)),
            None => by_color.push((color, vec![(x0, y, w)])),
        }
        if w >= LABEL_PX {
            labels.push((x0, y, w, n as u32, lit));
        }
        drawn += 1;
        n += 1;
    }
    for (color, rects) in &by_color {
        ctx.set_fill_style_str(color);
        ctx.begin_path();
        for &(x, y, w) in rects {
            ctx.rect(x, y, w, sc.row - 1.0);
        }
        ctx.fill();
    }
    ctx.set_font(FONT);
    ctx.set_text_baseline("middle");
    for (x, y, w, node, lit) in labels {
        let color = if lit {
            &sc.theme.slice_text
        } else {
            &sc.theme.fg
        };
        ctx.set_fill_style_str(color);
        if let Some(text) = cache.fit(ctx, f.label(sc.t, node), w - 6.0) {
            let _ = ctx.fill_text(&text, x + 3.0, y + sc.row / 2.0);
        }
    }
    for (node, color, lw) in [
        (sc.hover, &sc.theme.fg, 1.0),
        (sc.selected, &sc.theme.select, 2.0),
    ] {
        let Some(node) = node.filter(|&n| (n as usize) < f.len()) else {
            continue;
        };
        // Only frames inside the shown subtree.
        if node < sc.root || node as usize >= end {
            continue;
        }
        let (x, w) = sc.span(node);
        ctx.set_stroke_style_str(color);
        ctx.set_line_width(lw);
        ctx.stroke_rect(
            x + lw / 2.0,
            sc.y(node) + lw / 2.0,
            (w - lw).max(1.0),
            sc.row - 1.0 - lw,
        );
    }
    drawn
}
