//! The figures and tables of one snapshot device, and the headline figures of the other sources.
//! Every number carries its exact bytes in `data-bytes` so tests compare it with the CLI.

use leptos::prelude::*;
use tracelight_core::analysis::memory::DeviceMemory as TraceDeviceMemory;
use tracelight_core::analysis::snapshot::DeviceMemory;
use tracelight_core::ingest::memory_timeline::TimelinePeak;
use tracelight_core::model::time::format_duration;
use tracelight_core::report::memory::format_bytes;

fn fig(label: &'static str, id: &'static str, bytes: u64, note: Option<String>) -> impl IntoView {
    view! {
        <div>
            <dt>{label}</dt>
            <dd data-testid=id data-bytes=bytes.to_string() title=format!("{bytes} bytes")>{format_bytes(bytes)}</dd>
            {note.map(|n| view! { <span class="hint">{n}</span> })}
        </div>
    }
}

/// Headline figures of a snapshot device.
#[component]
pub fn SnapshotFigures(d: DeviceMemory) -> impl IntoView {
    let frag_pct = if d.reserved_bytes > 0 {
        format!(
            "{} of reserved",
            tracelight_core::report::num::share_of(
                d.fragmentation_bytes as f64,
                d.reserved_bytes as f64
            )
        )
    } else {
        String::new()
    };
    let ooms = d.ooms.len();
    let ooms_class = if ooms > 0 { "bad" } else { "" };
    view! {
        <dl class="mem-figures" data-testid="mem-figures">
            {fig("Peak active", "mem-peak-active", d.peak_active_bytes, d.peak_active_time_us.map(|_| "replayed from the trace".to_owned()))}
            {fig("Peak reserved", "mem-peak-reserved", d.peak_reserved_bytes, None)}
            {fig("Reserved at dump", "mem-reserved", d.reserved_bytes, None)}
            {fig("Allocated at dump", "mem-allocated", d.allocated_bytes, None)}
            {fig("Cached, unused", "mem-fragmentation", d.fragmentation_bytes, Some(frag_pct))}
            {fig("Largest free block", "mem-largest-free", d.largest_free_block_bytes, None)}
            <div><dt>"Segments"</dt><dd data-testid="mem-segments">{d.segments.to_string()}</dd></div>
            <div><dt>"Trace entries"</dt><dd data-testid="mem-entries">{d.trace_entries.to_string()}</dd></div>
            <div><dt>"OOMs"</dt><dd data-testid="mem-ooms" class=ooms_class>{ooms.to_string()}</dd></div>
        </dl>
    }
}

/// Blocks live at the peak, largest first.
#[component]
pub fn PeakTable(
    d: DeviceMemory,
    /// A row click moves the allocator-state scrubber to the peak (the state these blocks
    /// are live in).
    #[prop(default = None)]
    scrub: Option<super::chart::Scrub>,
) -> impl IntoView {
    let peak = d.peak_active_index;
    let go = move || {
        if let (Some(s), Some(p)) = (scrub, peak) {
            s.at.set(p);
        }
    };
    let total = d.peak_blocks_count;
    let rows = d
        .peak_blocks
        .iter()
        .take(50)
        .enumerate()
        .map(|(i, b)| {
            let frames = b.top_frames.clone();
            // The core's attribution frame: it sees the whole stack, where `top_frames` holds only
            // the first few (often all allocator C++ on real dumps).
            let top = if b.frame == "<no stack>" { "(no stack)".to_owned() } else { b.frame.clone() };
            view! {
                <tr data-testid=format!("peak-row-{i}") class:clickable=scrub.is_some() title=scrub.map(|_| "Click: the allocator state at the peak, below") on:click=move |_| go()>
                    <td class="num" data-testid=format!("peak-size-{i}") data-bytes=b.size.to_string()>{format_bytes(b.size)}</td>
                    <td class="num mono">{format!("0x{:x}", b.addr)}</td>
                    <td class="num">{b.alloc_index.map_or("before trace".into(), |i| format!("#{i}"))}</td>
                    <td class="mono frame-cell" title=frames.join("\n")><bdi>{top}</bdi></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="mem-table">
            <h3>{format!("Largest at peak ({total} blocks live)")}</h3>
            <table data-testid="peak-table">
                <thead><tr><th class="num">"Size"</th><th class="num">"Address"</th><th class="num">"Allocated"</th><th>"Top frame"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// Allocations grouped by their top user frame.
#[component]
pub fn StackTable(d: DeviceMemory) -> impl IntoView {
    let rows = d
        .by_stack
        .iter()
        .map(|g| {
            view! {
                <tr>
                    <td class="num" data-bytes=g.live_at_peak_bytes.to_string()>{format_bytes(g.live_at_peak_bytes)}</td>
                    <td class="num">{format_bytes(g.total_bytes)}</td>
                    <td class="num">{g.allocs.to_string()}</td>
                    <td class="mono frame-cell" title=g.frame.clone()><bdi>{g.frame.clone()}</bdi></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="mem-table">
            <h3>"Allocations by top user frame"</h3>
            <table data-testid="stack-table">
                <thead><tr><th class="num">"Live at peak"</th><th class="num">"Allocated in all"</th><th class="num">"Allocs"</th><th>"Frame"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// OOMs recorded in the trace.
#[component]
pub fn OomTable(d: DeviceMemory) -> impl IntoView {
    if d.ooms.is_empty() {
        return ().into_any();
    }
    let rows = d
        .ooms
        .iter()
        .map(|o| {
            view! {
                <tr>
                    <td class="num">{format!("#{}", o.index)}</td>
                    <td class="num">{format_bytes(o.requested_bytes)}</td>
                    <td class="num">{format_bytes(o.device_free_bytes)}</td>
                    <td class="num">{o.stream.to_string()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="mem-table oom">
            <h3>"Out of memory"</h3>
            <table data-testid="oom-table">
                <thead><tr><th class="num">"Entry"</th><th class="num">"Requested"</th><th class="num">"Free on device"</th><th class="num">"Stream"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
    .into_any()
}

/// Figures of a trace's `[memory]` device. Reserved only where the trace recorded it (CPU events
/// never do: "Peak reserved 0.0B" would read as data). `reveal`, when given, shows the op at the
/// peak in the timeline.
#[component]
pub fn TraceFigures(
    d: TraceDeviceMemory,
    origin_ns: i64,
    #[prop(optional)] reveal: Option<Callback<()>>,
) -> impl IntoView {
    let cap = d.capacity_bytes.map(|c| {
        format!(
            "{} of {}",
            tracelight_core::report::num::share_of(d.peak_allocated_bytes as f64, c.max(1) as f64),
            format_bytes(c)
        )
    });
    let op = d.peak_op.clone().unwrap_or_else(|| "(no op)".into());
    let op_view = match (reveal, d.peak_op_slice) {
        (Some(cb), Some(_)) => view! {
            <button class="link mono" data-testid="mem-peak-op" title="show this call in the timeline"
                on:click=move |_| cb.run(())>{op}</button>
        }
        .into_any(),
        _ => view! { <span data-testid="mem-peak-op" class="mono">{op}</span> }.into_any(),
    };
    view! {
        <dl class="mem-figures" data-testid="mem-figures">
            {fig("Peak allocated", "mem-peak-allocated", d.peak_allocated_bytes.max(0) as u64, cap)}
            {d.reserved_recorded.then(|| fig("Peak reserved", "mem-peak-reserved", d.peak_reserved_bytes.max(0) as u64, None))}
            <div><dt>"Op at peak"</dt><dd>{op_view}</dd></div>
            <div><dt>"At"</dt><dd>{format!("+{}", format_duration(d.peak_ts_ns - origin_ns))}</dd></div>
            <div><dt>"Events"</dt><dd>{d.events.to_string()}</dd></div>
        </dl>
    }
}

/// Figures of a memory timeline.
#[component]
pub fn TimelineFigures(p: TimelinePeak) -> impl IntoView {
    let parts = p
        .at_peak
        .iter()
        .filter(|(_, b)| *b > 0)
        .map(|(n, b)| format!("{n} {}", format_bytes(*b as u64)))
        .collect::<Vec<_>>()
        .join(" · ");
    view! {
        <dl class="mem-figures" data-testid="mem-figures">
            {fig("Peak total", "mem-peak-total", p.peak_total_bytes.max(0) as u64, None)}
            <div><dt>"At peak"</dt><dd class="small">{parts}</dd></div>
            <div><dt>"Samples"</dt><dd>{p.samples.to_string()}</dd></div>
            <div><dt>"Span"</dt><dd>{format_duration((p.end_us - p.start_us).saturating_mul(1000))}</dd></div>
        </dl>
    }
}
