//! The loaded file's first facts and its tracks.

use crate::session::SessionRef;
use crate::widgets::palette::kind_color;
use leptos::prelude::*;
use tracelight_core::model::{time::format_duration, SliceKind, TrackKind};

#[component]
pub fn FactsPanel(session: SessionRef, file: usize) -> impl IntoView {
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let loaded = &session.files[file];
    let f = &tf.facts;
    let devices = if f.devices.is_empty() {
        "—".to_owned()
    } else {
        f.devices.join(", ")
    };
    let rank = f.rank.map(|r| {
        format!(
            "{r}{}",
            f.world_size.map(|w| format!(" of {w}")).unwrap_or_default()
        )
    });
    let mb = loaded.bytes as f64 / 1e6;
    let decoded_mb = loaded.decoded_bytes as f64 / 1e6;
    let cores = match loaded.workers {
        0 => String::new(),
        1 => " (1 worker)".to_owned(),
        k => format!(" ({k} workers)"),
    };
    let speed = if loaded.load_ms > 0.0 {
        decoded_mb / (loaded.load_ms / 1000.0)
    } else {
        0.0
    };
    let warnings = f.warnings.clone();
    let info = f.info.clone();
    view! {
        <section class="facts" data-testid="facts">
            <h2 data-testid="file-name">{f.file.clone()}</h2>
            <dl>
                <div><dt>"Events"</dt><dd data-testid="event-count">{f.events.to_string()}</dd></div>
                <div><dt>"Slices"</dt><dd data-testid="slice-count">{f.slices.to_string()}</dd></div>
                <div><dt>"Time span"</dt><dd data-testid="time-span">{format_duration(f.span_ns)}</dd></div>
                <div><dt>"Devices"</dt><dd>{devices}</dd></div>
                {rank.map(|r| view! { <div><dt>"Rank"</dt><dd>{r}</dd></div> })}
                <div><dt>"Loaded"</dt><dd data-testid="load-stats" data-load-ms=loaded.load_ms.to_string() data-parse-ms=loaded.parse_ms.to_string() data-model-ms=loaded.model_ms.to_string() data-first-bytes-ms=loaded.first_bytes_ms.to_string() data-decoded-bytes=loaded.decoded_bytes.to_string() data-wasm-bytes=crate::platform::clock::wasm_memory_bytes().to_string() data-workers=loaded.workers.to_string() data-analysed-in=if tf.analysed_in_worker() { "worker" } else { "page" } data-timeline-in=if tf.timeline_in_worker() { "worker" } else { "page" } data-args-bytes=tf.trace.args.len().to_string()>{format!("{mb:.1} MB ({decoded_mb:.1} MB decoded) in {:.0} ms, {speed:.0} MB/s{cores}", loaded.load_ms)}</dd></div>
            </dl>
            {(!warnings.is_empty()).then(|| view! {
                <details class="warnings" data-testid="warnings" open=true>
                    <summary>{format!("{} warning kinds", warnings.len())}</summary>
                    <ul>{warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
                </details>
            })}
            // Expected of the profiler, no figure changes (core `Severity::Info`): collapsed.
            {(!info.is_empty()).then(|| view! {
                <details class="warnings info" data-testid="info">
                    <summary>{format!("{} note{} (expected of the profiler)", info.len(), if info.len() == 1 { "" } else { "s" })}</summary>
                    <ul>{info.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
                </details>
            })}
        </section>
    }
    .into_any()
}

#[component]
pub fn TrackList(session: SessionRef, file: usize) -> impl IntoView {
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let rows = tf
        .facts
        .tracks
        .iter()
        .filter(|t| t.slices > 0)
        .map(|t| {
            let kind = match t.kind {
                TrackKind::Cpu => "CPU thread",
                TrackKind::Gpu => "GPU stream",
            };
            view! {
                <tr>
                    <td>{t.process.clone()}</td>
                    <td>{t.name.clone()}</td>
                    <td>{kind}</td>
                    <td class="num">{t.slices.to_string()}</td>
                    <td class="num">{(u32::from(t.max_depth) + 1).to_string()}</td>
                </tr>
            }
        })
        .collect_view();
    let legend = [
        SliceKind::CpuOp,
        SliceKind::UserAnnotation,
        SliceKind::PythonFunction,
        SliceKind::Runtime,
        SliceKind::Kernel,
        SliceKind::Memcpy,
        SliceKind::Memset,
        SliceKind::GpuAnnotation,
        SliceKind::Other,
    ]
    .into_iter()
    // Only the kinds this trace has: a CPU trace's legend names no GPU colours.
    .filter(|k| tf.trace.slices.kind.contains(k))
    .map(|k| view! { <span class="legend-item"><i style=format!("background:{}", kind_color(k))></i>{k.label()}</span> })
    .collect_view();
    view! {
        <section class="tracks">
            <h2>"Tracks"</h2>
            <div class="legend">{legend}</div>
            <table data-testid="track-list">
                <thead><tr><th>"Process"</th><th>"Track"</th><th>"Kind"</th><th class="num">"Slices"</th><th class="num">"Depth"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
    .into_any()
}
