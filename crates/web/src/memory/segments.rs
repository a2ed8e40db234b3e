//! The segment map with memory_viz's allocator-state scrubber: each allocator segment a bar
//! (width ∝ size), its allocated ranges coloured, the rest cached (free), packed into rows as
//! memory_viz does (core `analysis::snapshot_state`). The slider picks any trace entry: the state
//! after it, rebuilt by the core; at the right end the dump itself. A byte axis under the rows
//! gives the offset within a row; bars wide enough carry their size.

use super::chart::{prepare, Scrub};
use crate::session::{Content, SessionRef};
use leptos::html;
use leptos::prelude::*;
use std::sync::{Arc, OnceLock};
use tracelight_core::analysis::memory_chart::{MemoryChart, XUnit};
use tracelight_core::analysis::snapshot_state::{
    pack, state_after_in, state_at_dump, AllocatorState, RangeState, Replays,
};
use tracelight_core::model::time::format_duration;
use tracelight_core::report::memory::format_bytes;
use tracelight_core::view::byte_axis::{byte_ticks, tick_label};

const LEFT: f64 = 4.0;
const AXIS_H: f64 = 18.0;

fn range_color(s: RangeState) -> &'static str {
    match s {
        RangeState::Allocated => "#4e79a7",
        RangeState::AwaitingFree => "#e15759",
    }
}

/// The outline of a private pool's segments (the palette's purple, #b07aa1).
const POOL_COLOR: &str = "#b07aa1";

/// Paints `st` packed into rows (at most 18 px high, filling `height`), with the byte axis below,
/// in steps of ~20 ms between which the page runs (15 k segments took ~100 ms of canvas calls in
/// one task); stops when `wanted` says a newer paint was asked for.
async fn paint(
    c: &web_sys::HtmlCanvasElement,
    st: &AllocatorState,
    w: f64,
    height: f64,
    wanted: impl Fn() -> bool,
) {
    use crate::platform::clock::{now_ms, yield_now};
    const SLICE_MS: f64 = 20.0;
    // The slice counts from here: sizing the canvas and packing the rows take ~20 ms of the
    // first one on 15 k segments.
    let mut t0 = now_ms();
    let Some(ctx) = prepare(c, w, height) else {
        return;
    };
    let (placed, rows, max) = pack(st);
    let row_h = row_height(height, rows);
    let scale = (w - 2.0 * LEFT) / max as f64;
    let bh = if row_h >= 4.0 { row_h * 0.8 } else { row_h };
    ctx.set_font("10px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    for (k, (seg, &(row, offset))) in st.segments.iter().zip(&placed).enumerate() {
        // Every 8 segments: 64 of those with many ranges overran the slice by ~15 ms.
        if k % 8 == 7 && now_ms() - t0 > SLICE_MS {
            yield_now().await;
            if !wanted() {
                return;
            }
            t0 = now_ms();
        }
        let x = LEFT + offset as f64 * scale;
        let y = 4.0 + row as f64 * row_h;
        let sw = (seg.size as f64 * scale).max(1.0);
        ctx.set_fill_style_str("#f6f8fa");
        ctx.fill_rect(x, y, sw, bh);
        // Merge sub-pixel ranges of the same state into one rect.
        let mut run: Option<(f64, f64, RangeState)> = None;
        for &(off, size, state) in &seg.ranges {
            let bx = x + off as f64 * scale;
            let bw = size as f64 * scale;
            match &mut run {
                Some((_, x1, s)) if *s == state && bx <= *x1 + 0.5 => *x1 = bx + bw,
                r => {
                    if let Some((x0, x1, s)) = r.take() {
                        ctx.set_fill_style_str(range_color(s));
                        ctx.fill_rect(x0, y, (x1 - x0).max(0.5), bh);
                    }
                    *r = Some((bx, bx + bw, state));
                }
            }
        }
        if let Some((x0, x1, s)) = run {
            ctx.set_fill_style_str(range_color(s));
            ctx.fill_rect(x0, y, (x1 - x0).max(0.5), bh);
        }
        // A private pool's segments (on rows of their own): outlined and named.
        let private = seg.pool != (0, 0);
        if sw >= 3.0 || private {
            ctx.set_stroke_style_str(if private { POOL_COLOR } else { "#8c959f" });
            ctx.set_line_width(if private { 1.5 } else { 0.5 });
            ctx.stroke_rect(x, y, sw, bh);
        }
        if sw >= 56.0 && bh >= 11.0 {
            ctx.set_fill_style_str("#1f2328");
            ctx.set_text_align("left");
            let label = if private {
                format!(
                    "{} · {}",
                    tracelight_core::analysis::snapshot_dump::pool_name(seg.pool),
                    tick_label(seg.size)
                )
            } else {
                tick_label(seg.size)
            };
            let _ = ctx.fill_text(&label, x + 3.0, y + bh / 2.0);
        }
    }
    // Byte axis: offset within a row.
    let base = 4.0 + rows as f64 * row_h + 2.0;
    ctx.set_fill_style_str("#d0d7de");
    ctx.fill_rect(LEFT, base, w - 2.0 * LEFT, 1.0);
    ctx.set_text_baseline("top");
    let n = ((w / 110.0) as u64).clamp(2, 10);
    for v in byte_ticks(max, n) {
        let x = LEFT + v as f64 * scale;
        ctx.set_fill_style_str("#d0d7de");
        ctx.fill_rect(x, base, 1.0, 4.0);
        ctx.set_fill_style_str("#57606a");
        ctx.set_text_align(if v == 0 { "left" } else { "center" });
        let _ = ctx.fill_text(&tick_label(v), x, base + 5.0);
    }
}

/// The height of one row of segments when `rows` of them share the canvas.
fn row_height(height: f64, rows: usize) -> f64 {
    ((height - 8.0 - AXIS_H) / rows.max(1) as f64).clamp(1.0, 18.0)
}

/// Fills `into` with the replays of `device` in steps of at most ~20 ms, yielding between them;
/// stops early when a scrub filled it first.
fn build_replays(session: SessionRef, file: usize, device: i64, into: Arc<OnceLock<Replays>>) {
    use crate::platform::clock::{now_ms, yield_now};
    use tracelight_core::analysis::snapshot::{Replay, ReplayBuild};
    const SLICE_MS: f64 = 20.0;
    const STEP: usize = 16_384;
    leptos::task::spawn_local(async move {
        yield_now().await;
        let Some(Content::Snapshot(s)) = session.files.get(file).map(|f| &f.content) else {
            return;
        };
        let mut done: Vec<Replay> = Vec::new();
        for segments in [true, false] {
            let mut b = ReplayBuild::new(s, device, segments);
            let mut t0 = now_ms();
            let r = loop {
                if into.get().is_some() {
                    return;
                }
                if let Some(r) = b.step(STEP) {
                    break r;
                }
                if now_ms() - t0 > SLICE_MS {
                    yield_now().await;
                    t0 = now_ms();
                }
            };
            done.push(r);
        }
        if let (Some(allocs), Some(segs)) = (done.pop(), done.pop()) {
            let _ = into.set(Replays::from_parts(segs, allocs));
        }
    });
}

#[component]
pub fn SegmentView(
    session: SessionRef,
    file: usize,
    device: i64,
    /// The scrubber, shared with the chart above and the "Largest at peak" rows.
    scrub: Scrub,
    /// The chart above: its clock (x of each entry, origin) labels the scrubber's position.
    chart: Arc<MemoryChart>,
) -> impl IntoView {
    let Some(Content::Snapshot(s)) = session.files.get(file).map(|f| &f.content) else {
        return ().into_any();
    };
    let dump = Arc::new(state_at_dump(s, device));
    if dump.segments.is_empty() && s.trace(device).is_none_or(|t| t.is_empty()) {
        return view! { <p class="hint">"No segments on this device at dump time."</p> }.into_any();
    }
    let entries = scrub.entries;
    // `entries` = the dump; below it, the state after that entry.
    let at = scrub.at;
    let sess = session.clone();
    let d2 = dump.clone();
    // The device's two replays, kept for every scrubber position: built in steps between frames
    // from the first render (~180 ms in one task on a 5.6 M-entry snapshot), or at once by a
    // scrub that comes before they are done.
    let replays: Arc<OnceLock<Replays>> = Arc::default();
    build_replays(session.clone(), file, device, replays.clone());
    let state = Memo::new(move |_| {
        let i = at.get();
        match sess.files.get(file).map(|f| &f.content) {
            Some(Content::Snapshot(s)) if i < entries => {
                let r = replays.get_or_init(|| Replays::of(s, device));
                Arc::new(state_after_in(s, device, i, r))
            }
            _ => d2.clone(),
        }
    });
    // Rows fixed by the dump's packing (the most segments usually), so the map does not jump.
    let rows = pack(&dump).1.max(1);
    let row_h = (360.0 / rows as f64).clamp(1.0, 18.0);
    let height = (rows as f64 * row_h + 8.0).max(40.0) + AXIS_H;
    let canvas = NodeRef::<html::Canvas>::new();
    let width = RwSignal::new(0.0f64);
    let info = RwSignal::new(String::new());
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
    // The latest paint asked for: a paint still waiting when a newer one is asked is skipped.
    let asked = StoredValue::new(0u64);
    Effect::new(move |_| {
        let w = width.get();
        let st = state.get();
        let Some(c) = canvas.get() else { return };
        if w <= 0.0 {
            return;
        }
        // The drawing (~45 ms of canvas calls for 15 k segments) in a task of its own, not in
        // the task that builds the Memory tab and paints its chart; the figures below at once.
        let n = asked.get_value() + 1;
        asked.set_value(n);
        let (c2, st2) = (c.clone(), st.clone());
        leptos::task::spawn_local(async move {
            crate::platform::clock::yield_now().await;
            if asked.try_get_value() != Some(n) {
                return;
            }
            paint(&c2, &st2, w, height, || asked.try_get_value() == Some(n)).await;
        });
        let _ = c.set_attribute("data-segments", &st.segments.len().to_string());
        let _ = c.set_attribute("data-allocated", &st.allocated_bytes.to_string());
        let _ = c.set_attribute("data-reserved", &st.reserved_bytes.to_string());
        let _ = c.set_attribute("data-unplaced", &st.unplaced_bytes.to_string());
        let pools: std::collections::BTreeSet<(i64, i64)> =
            st.segments.iter().map(|s| s.pool).collect();
        let _ = c.set_attribute("data-pools", &pools.len().to_string());
    });
    let on_move = move |ev: web_sys::MouseEvent| {
        let st = state.get_untracked();
        let (placed, rows, max) = pack(&st);
        let rh = row_height(height, rows);
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let scale = (width.get_untracked() - 2.0 * LEFT) / max as f64;
        let row = ((y - 4.0) / rh).floor();
        if row < 0.0 {
            return;
        }
        let byte = ((x - LEFT) / scale).max(0.0) as u64;
        let hit =
            st.segments.iter().zip(&placed).find(|(s, p)| {
                p.0 == row as usize && byte >= p.1 && byte < p.1.saturating_add(s.size)
            });
        let text = hit.map(|(seg, p)| {
            let off = byte - p.1;
            let used: u64 = seg.ranges.iter().map(|r| r.1).sum();
            let head = format!(
                "segment 0x{:x} ({}): {} ({} in use)",
                seg.address,
                tracelight_core::analysis::snapshot_dump::pool_name(seg.pool),
                format_bytes(seg.size),
                format_bytes(used)
            );
            match seg.ranges.iter().find(|r| off >= r.0 && off < r.0 + r.1) {
                Some(r) => format!(
                    "{head} — 0x{:x} {} {}",
                    seg.address + r.0,
                    format_bytes(r.1),
                    match r.2 {
                        RangeState::Allocated => "allocated",
                        RangeState::AwaitingFree => "freed, awaiting its stream",
                    }
                ),
                None => format!("{head} — offset {}: cached, free", format_bytes(off)),
            }
        });
        info.set(text.unwrap_or_default());
    };
    // The position on the chart's own axis (time since the first entry), not a raw epoch.
    let origin = chart.x_range.0;
    let timed = chart.unit == XUnit::Ns;
    let when = move || {
        let i = at.get();
        if i >= entries {
            return "at the dump".to_owned();
        }
        match chart.entry_x.get(i).filter(|_| timed) {
            Some(&x) => format!(
                "after entry #{i} · {} since the first entry",
                format_duration(x - origin)
            ),
            None => format!("after entry #{i}"),
        }
    };
    let peak = scrub.peak.filter(|&p| p < entries);
    let at_peak = move || peak.is_some_and(|p| at.get() == p);
    let figures = move || {
        let st = state.get();
        format!(
            "{} segments · {} reserved · {} allocated{}",
            st.segments.len(),
            format_bytes(st.reserved_bytes),
            format_bytes(st.allocated_bytes),
            if st.unplaced_bytes > 0 {
                format!(
                    " ({} in segments not recorded then)",
                    format_bytes(st.unplaced_bytes)
                )
            } else {
                String::new()
            }
        )
    };
    view! {
        <section class="mem-segments">
            <h3>"Allocator state"</h3>
            {(entries > 0).then(|| view! {
                <div class="mem-scrub">
                    <input type="range" style="width:min(640px,60%)" data-testid="mem-scrubber" min="0" max=entries.to_string()
                        prop:value=move || at.get().to_string()
                        on:input=move |ev| { if let Ok(i) = event_target_value(&ev).parse::<usize>() { at.set(i) } } />
                    <span class="mono" data-testid="mem-scrub-at">{when}</span>
                    {peak.map(|p| view! {
                        <button class="button" data-testid="mem-go-peak" disabled=at_peak on:click=move |_| at.set(p)>"Go to peak"</button>
                    })}
                    <button class="button" data-testid="mem-go-dump" disabled=move || { at.get() >= entries } on:click=move |_| at.set(entries)>"At the dump"</button>
                    <span class="hint" data-testid="mem-at-peak">{move || if at_peak() { "the peak of active memory" } else { "" }}</span>
                </div>
            })}
            <div class="hint" data-testid="mem-state-figures">{figures}</div>
            <div class="legend">
                <span class="legend-item"><i style="background:#4e79a7"></i>"allocated"</span>
                <span class="legend-item"><i style="background:#e15759"></i>"freed, awaiting stream (dump only)"</span>
                <span class="legend-item"><i style="background:#f6f8fa;border:1px solid #8c959f"></i>"cached, free"</span>
                <span class="hint">"x: byte offset within a row; rows packed as memory_viz does"</span>
            </div>
            <canvas node_ref=canvas data-testid="mem-segment-view" style=format!("width:100%;height:{height}px;display:block") on:mousemove=on_move />
            <div class="hint mono seg-info">{move || info.get()}</div>
        </section>
    }
    .into_any()
}
