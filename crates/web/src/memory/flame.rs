//! Live bytes by stack at the peak, as an icicle graph (core `analysis::snapshot_flame`): width =
//! bytes live at the peak, outermost frame on top, largest first. Hover names a frame; click
//! selects it and lists its blocks (largest first); click again or elsewhere to clear.

use super::chart::prepare;
use crate::session::{Content, SessionRef};
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::snapshot_flame::{peak_flame, PeakFlame};
use tracelight_core::report::memory::format_bytes;
use tracelight_core::view::palette;

const ROW_H: f64 = 17.0;
/// Blocks listed for a selected frame.
const LIST: usize = 20;

fn color(label: &str) -> &'static str {
    if label.starts_with('<') {
        return palette::SUMMARIZED;
    }
    let h = label
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    palette::ALLOCATIONS[h as usize % palette::ALLOCATIONS.len()]
}

fn paint(c: &web_sys::HtmlCanvasElement, f: &PeakFlame, w: f64, h: f64, sel: Option<u32>) {
    let Some(ctx) = prepare(c, w, h) else {
        return;
    };
    let scale = w / f.total_bytes.max(1) as f64;
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    for (i, n) in f.nodes.iter().enumerate() {
        let bw = n.bytes as f64 * scale;
        if bw < 0.5 {
            continue;
        }
        let (x, y) = (n.offset as f64 * scale, f64::from(n.depth) * ROW_H);
        ctx.set_fill_style_str(color(&n.label));
        ctx.fill_rect(x, y, (bw - 0.5).max(0.5), ROW_H - 1.0);
        if sel == Some(i as u32) {
            ctx.set_stroke_style_str("#cf222e");
            ctx.set_line_width(2.0);
            ctx.stroke_rect(x + 1.0, y + 1.0, (bw - 2.0).max(1.0), ROW_H - 3.0);
        }
        if bw > 40.0 {
            let chars = ((bw - 6.0) / 6.2) as usize;
            // The tail of a long frame: the function name and line are at its end.
            let text: String = if n.label.chars().count() > chars {
                let skip = n.label.chars().count() - chars.saturating_sub(1);
                format!("…{}", n.label.chars().skip(skip).collect::<String>())
            } else {
                n.label.clone()
            };
            ctx.set_fill_style_str(if n.label.starts_with('<') {
                "#1f2328"
            } else {
                "#ffffff"
            });
            let _ = ctx.fill_text(&text, x + 3.0, y + ROW_H / 2.0);
        }
    }
}

#[component]
pub fn PeakFlameView(session: SessionRef, file: usize, device: i64) -> impl IntoView {
    let Some(Content::Snapshot(s)) = session.files.get(file).map(|f| &f.content) else {
        return ().into_any();
    };
    // The snapshot worker's graph of this device, else built here (`data-flame-in` says which).
    let (flame, made_in) = match s.flames.iter().find(|(d, _)| *d == device) {
        Some((_, f)) => (f.clone(), "worker"),
        None => (Arc::new(peak_flame(s, device)), "page"),
    };
    if flame.nodes.is_empty() {
        return ().into_any();
    }
    let height = f64::from(flame.depth.min(60)) * ROW_H + 2.0;
    let canvas = NodeRef::<html::Canvas>::new();
    let width = RwSignal::new(0.0f64);
    let hover = RwSignal::new(None::<u32>);
    let selected = RwSignal::new(None::<u32>);
    let measure = move || {
        if let Some(c) = canvas.get_untracked() {
            // The observer's first report repeats the size measured at mount: setting it again
            // would paint the canvas a second time in the frame after its first paint.
            let w = f64::from(c.client_width()).max(200.0);
            if width.get_untracked() != w {
                width.set(w);
            }
        }
    };
    crate::platform::resize::follow(canvas, measure);
    let f1 = flame.clone();
    Effect::new(move |_| {
        let (w, sel) = (width.get(), selected.get());
        let Some(c) = canvas.get() else { return };
        if w > 0.0 {
            paint(&c, &f1, w, height, sel);
            let _ = c.set_attribute("data-nodes", &f1.nodes.len().to_string());
            let _ = c.set_attribute("data-bytes", &f1.total_bytes.to_string());
        }
    });
    let f2 = flame.clone();
    let node_at = move |ev: &web_sys::MouseEvent| -> Option<u32> {
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let scale = width.get_untracked() / f2.total_bytes.max(1) as f64;
        let depth = (y / ROW_H).floor();
        if depth < 0.0 || scale <= 0.0 {
            return None;
        }
        f2.hit(depth as u32, (x / scale).max(0.0) as u64)
    };
    let nm = node_at.clone();
    let on_move = move |ev: web_sys::MouseEvent| hover.set(nm(&ev));
    let on_click = move |ev: web_sys::MouseEvent| {
        let n = node_at(&ev);
        selected.update(|s| *s = if *s == n { None } else { n });
    };
    let f3 = flame.clone();
    let line = move || {
        let n = hover.get().or(selected.get())?;
        let node = f3.nodes.get(n as usize)?;
        Some(format!(
            "{} — {} live at the peak ({})",
            node.label,
            format_bytes(node.bytes),
            tracelight_core::report::num::share_of(node.bytes as f64, f3.total_bytes.max(1) as f64)
        ))
    };
    let f4 = flame.clone();
    let list = move || {
        let n = selected.get()?;
        let node = f4.nodes.get(n as usize)?.clone();
        let blocks = f4.blocks_under(n);
        let more = blocks.len().saturating_sub(LIST);
        let rows = blocks
            .iter()
            .take(LIST)
            .map(|&(addr, size)| {
                view! {
                    <tr>
                        <td class="num" data-bytes=size.to_string()>{format_bytes(size)}</td>
                        <td class="num mono">{format!("0x{addr:x}")}</td>
                    </tr>
                }
            })
            .collect_view();
        Some(view! {
            <section class="mem-table" data-testid="mem-flame-blocks" data-count=blocks.len().to_string() data-bytes=node.bytes.to_string()>
                <h3 class="mono">{format!("{} blocks under {}", blocks.len(), node.label)}</h3>
                <table>
                    <thead><tr><th class="num">"Size"</th><th class="num">"Address"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                {(more > 0).then(|| view! { <p class="hint">{format!("and {more} smaller")}</p> })}
            </section>
        })
    };
    view! {
        <section class="mem-flame">
            <h3>{format!("Live at the peak by allocation stack ({})", format_bytes(flame.total_bytes))}</h3>
            <p class="hint">"Width: bytes live at the peak; outermost frame on top, largest first. Click a frame to list its blocks."</p>
            <canvas node_ref=canvas data-testid="mem-flame" data-flame-in=made_in style=format!("width:100%;height:{height}px;display:block;cursor:pointer")
                on:mousemove=on_move on:mouseleave=move |_| hover.set(None) on:click=on_click />
            <div class="hint mono seg-info" data-testid="mem-flame-info">{line}</div>
            {list}
        </section>
    }
    .into_any()
}
