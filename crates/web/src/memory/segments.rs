//! The segment view: each allocator segment a bar (width ∝ size), its blocks coloured by state,
//! packed into rows like memory_viz's allocator-state view (smallest first, rows as wide as the
//! largest segment). Shows the state at dump time; hover names the segment or block.

use super::chart::prepare;
use crate::session::{Content, SessionRef};
use leptos::html;
use leptos::prelude::*;
use tracelight_core::ingest::snapshot::Snapshot;
use tracelight_core::report::memory::format_bytes;

/// A segment placed in the packing: row and byte offset in the row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    pub seg: usize,
    pub row: usize,
    pub offset: u64,
}

/// memory_viz's packing: segments by (size, address) ascending, a new row when the next does not fit
/// in a row `max_size` wide, a small gap between neighbours. Returns the placement, rows and width.
pub fn pack(s: &Snapshot, device: i64) -> (Vec<Placed>, usize, u64) {
    let sg = &s.segments;
    let mut idx: Vec<usize> = (0..sg.len()).filter(|&i| sg.device[i] == device).collect();
    idx.sort_by_key(|&i| (sg.total_size[i], sg.address[i]));
    let max = idx.last().map_or(1, |&i| sg.total_size[i].max(1));
    let gap = max / 400;
    let (mut row, mut used) = (0usize, 0u64);
    let mut out = Vec::with_capacity(idx.len());
    for i in idx {
        let size = sg.total_size[i];
        if used > 0 && used + size > max {
            row += 1;
            used = 0;
        }
        out.push(Placed {
            seg: i,
            row,
            offset: used,
        });
        used += size + gap;
    }
    let rows = if out.is_empty() { 0 } else { row + 1 };
    (out, rows, max)
}

pub fn state_color(state: &str) -> &'static str {
    match state {
        "active_allocated" => "#4e79a7",
        "active_awaiting_free" | "active_pending_free" => "#e15759",
        _ => "#ffffff",
    }
}

#[component]
pub fn SegmentView(session: SessionRef, file: usize, device: i64) -> impl IntoView {
    let Some(Content::Snapshot(s)) = session.files.get(file).map(|f| &f.content) else {
        return ().into_any();
    };
    let (placed, rows, max) = pack(s, device);
    if placed.is_empty() {
        return view! { <p class="hint">"No segments on this device at dump time."</p> }.into_any();
    }
    let row_h = (360.0 / rows as f64).clamp(1.0, 18.0);
    let height = rows as f64 * row_h + 8.0;
    let canvas = NodeRef::<html::Canvas>::new();
    let width = RwSignal::new(0.0f64);
    let info = RwSignal::new(String::new());
    let measure = move || {
        if let Some(c) = canvas.get_untracked() {
            width.set(f64::from(c.client_width()).max(200.0));
        }
    };
    crate::platform::resize::follow(canvas, measure);
    let placed = std::sync::Arc::new(placed);
    let p2 = placed.clone();
    let sess = session.clone();
    Effect::new(move |_| {
        let w = width.get();
        let (Some(c), Some(Content::Snapshot(s))) =
            (canvas.get(), sess.files.get(file).map(|f| &f.content))
        else {
            return;
        };
        if w <= 0.0 {
            return;
        }
        let Some(ctx) = prepare(&c, w, height) else {
            return;
        };
        let scale = (w - 8.0) / max as f64;
        let bh = if row_h >= 4.0 { row_h * 0.8 } else { row_h };
        for p in p2.iter() {
            let sg = &s.segments;
            let x = 4.0 + p.offset as f64 * scale;
            let y = 4.0 + p.row as f64 * row_h;
            let sw = (sg.total_size[p.seg] as f64 * scale).max(1.0);
            ctx.set_fill_style_str("#f6f8fa");
            ctx.fill_rect(x, y, sw, bh);
            let (a, b) = (
                sg.first_block[p.seg] as usize,
                sg.first_block[p.seg + 1] as usize,
            );
            // Merge sub-pixel blocks of the same state into one rect.
            let mut run: Option<(f64, f64, &'static str)> = None;
            for bi in a..b {
                let col = state_color(s.str(s.blocks.state[bi]));
                let bx = x + s.blocks.address[bi].saturating_sub(sg.address[p.seg]) as f64 * scale;
                let bw = s.blocks.size[bi] as f64 * scale;
                match &mut run {
                    Some((_, x1, c)) if *c == col && bx <= *x1 + 0.5 => *x1 = bx + bw,
                    r => {
                        if let Some((x0, x1, c)) = r.take() {
                            ctx.set_fill_style_str(c);
                            ctx.fill_rect(x0, y, (x1 - x0).max(0.5), bh);
                        }
                        *r = Some((bx, bx + bw, col));
                    }
                }
            }
            if let Some((x0, x1, c)) = run {
                ctx.set_fill_style_str(c);
                ctx.fill_rect(x0, y, (x1 - x0).max(0.5), bh);
            }
            if sw >= 3.0 {
                ctx.set_stroke_style_str("#8c959f");
                ctx.set_line_width(0.5);
                ctx.stroke_rect(x, y, sw, bh);
            }
        }
        let _ = c.set_attribute("data-segments", &p2.len().to_string());
    });
    let sess = session.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some(Content::Snapshot(s)) = sess.files.get(file).map(|f| &f.content) else {
            return;
        };
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let scale = (width.get_untracked() - 8.0) / max as f64;
        let row = ((y - 4.0) / row_h).floor();
        if row < 0.0 {
            return;
        }
        let row = row as usize;
        let byte = ((x - 4.0) / scale).max(0.0) as u64;
        let sg = &s.segments;
        let hit = placed
            .iter()
            .find(|p| p.row == row && byte >= p.offset && byte < p.offset + sg.total_size[p.seg]);
        let text = hit.map(|p| {
            let addr = sg.address[p.seg] + (byte - p.offset);
            let (a, b) = (
                sg.first_block[p.seg] as usize,
                sg.first_block[p.seg + 1] as usize,
            );
            let block = (a..b).find(|&bi| {
                addr >= s.blocks.address[bi] && addr < s.blocks.address[bi] + s.blocks.size[bi]
            });
            let seg = format!(
                "segment 0x{:x}: {} ({} allocated, stream {}, {})",
                sg.address[p.seg],
                format_bytes(sg.total_size[p.seg]),
                format_bytes(sg.allocated_size[p.seg]),
                sg.stream[p.seg],
                s.str(sg.segment_type[p.seg]),
            );
            match block {
                Some(bi) => format!(
                    "{seg} — block 0x{:x} {} {}",
                    s.blocks.address[bi],
                    format_bytes(s.blocks.size[bi]),
                    s.str(s.blocks.state[bi])
                ),
                None => seg,
            }
        });
        info.set(text.unwrap_or_default());
    };
    view! {
        <section class="mem-segments">
            <h3>{format!("Segments at dump time ({})", placed_len(&session, file, device))}</h3>
            <div class="legend">
                <span class="legend-item"><i style="background:#4e79a7"></i>"allocated"</span>
                <span class="legend-item"><i style="background:#e15759"></i>"freed, awaiting stream"</span>
                <span class="legend-item"><i style="background:#fff;border:1px solid #8c959f"></i>"free (cached)"</span>
            </div>
            <canvas node_ref=canvas data-testid="mem-segment-view" style=format!("width:100%;height:{height}px;display:block") on:mousemove=on_move />
            <div class="hint mono seg-info">{move || info.get()}</div>
        </section>
    }
    .into_any()
}

fn placed_len(session: &SessionRef, file: usize, device: i64) -> String {
    match session.files.get(file).map(|f| &f.content) {
        Some(Content::Snapshot(s)) => {
            let n = s.segments.device.iter().filter(|&&d| d == device).count();
            format!("{n}")
        }
        _ => String::new(),
    }
}
