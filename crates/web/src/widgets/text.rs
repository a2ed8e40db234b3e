//! Text fitting with a per-string width cache: `measureText` is the slowest call in a frame, and
//! the same few thousand names repeat, so each is measured once.

use std::collections::HashMap;
use web_sys::CanvasRenderingContext2d;

pub const FONT: &str = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";

#[derive(Default)]
pub struct TextCache {
    width: HashMap<String, f64>,
}

impl TextCache {
    pub fn width(&mut self, ctx: &CanvasRenderingContext2d, s: &str) -> f64 {
        if let Some(&w) = self.width.get(s) {
            return w;
        }
        let w = ctx.measure_text(s).map(|m| m.width()).unwrap_or(0.0);
        if self.width.len() > 50_000 {
            self.width.clear();
        }
        self.width.insert(s.to_owned(), w);
        w
    }

    /// `s`, or its longest prefix plus "…" that fits in `max_w` px ("" when not even one char does).
    pub fn fit(&mut self, ctx: &CanvasRenderingContext2d, s: &str, max_w: f64) -> Option<String> {
        let w = self.width(ctx, s);
        if w <= max_w {
            return Some(s.to_owned());
        }
        let n = s.chars().count().max(1);
        // Proportional estimate from the string's own average glyph width.
        let keep = (((max_w - 8.0) / (w / n as f64)).floor() as usize).min(n.saturating_sub(1));
        if keep < 2 {
            return None;
        }
        let mut out: String = s.chars().take(keep).collect();
        out.push('…');
        Some(out)
    }
}
