//! The Memory tab: pick a memory file and a device; see its chart, figures and tables.

use super::chart::{ChartCanvas, Scrub};
use super::dump::DumpTables;
use super::flame::PeakFlameView;
use super::ops::OpMemoryTable;
use super::segments::SegmentView;
use super::tables::{
    OomTable, PeakTable, SnapshotFigures, StackTable, TimelineFigures, TraceFigures,
};
use crate::session::memory::{
    chart, memory_files, snapshot_summary, sources_of, Source, SourceKind,
};
use crate::session::{Content, Nav, SessionRef};
use crate::widgets::later::Later;
use crate::widgets::memory_paint::{band_color, category_color};
use leptos::prelude::*;
use tracelight_core::analysis::memory::memory_summary;
use tracelight_core::analysis::memory_chart::{category_name, BandKind, XUnit};
use tracelight_core::ingest::memory_timeline::peak;

#[component]
pub fn MemoryView(session: SessionRef) -> impl IntoView {
    let files = memory_files(&session);
    let Some(&first) = files.first() else {
        return view! { <section class="placeholder" data-testid="memory-view"><p>"No memory data in these files."</p></section> }.into_any();
    };
    let file = RwSignal::new(first);
    let pick = RwSignal::new(0usize);
    let s1 = session.clone();
    let file_options = files
        .iter()
        .map(|&i| {
            let kind = match &s1.files[i].content {
                Content::Snapshot(_) => "snapshot",
                Content::MemoryTimeline(_) => "memory timeline",
                Content::Trace(_) => "trace [memory] events",
                Content::ExecTrace(_) => "execution trace",
                Content::FlightRecorder(_) => "Flight Recorder dump",
            };
            view! { <option value=i.to_string() selected=i == first>{format!("{} — {kind}", s1.files[i].name)}</option> }
        })
        .collect_view();
    let on_file = move |ev: web_sys::Event| {
        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
            file.set(i);
            pick.set(0);
        }
    };
    let s2 = session.clone();
    // Another device's chart waits for the model: a pick made now would be lost when the whole
    // file replaces this view.
    let pending = session.awaiting_model();
    let devices = move || {
        let srcs = sources_of(&s2, file.get());
        (srcs.len() > 1).then(|| {
            // Buttons in device order, the default one first in `srcs`.
            let mut order: Vec<(usize, Source)> = srcs.into_iter().enumerate().collect();
            tracelight_core::sort::by_key(&mut order, |(_, s)| s.device_label());
            order
                .into_iter()
                .map(|(k, s)| {
                    let id = match s.kind {
                        SourceKind::Snapshot { device } => format!("mem-device-{device}"),
                        SourceKind::Trace { device_type, device_id } => format!("mem-device-{device_type}-{device_id}"),
                        SourceKind::Timeline => "mem-device-all".into(),
                    };
                    view! {
                        <button class="tab" data-testid=id class:active=move || pick.get() == k on:click=move |_| pick.set(k) disabled=pending>
                            {s.device_label()}
                        </button>
                    }
                })
                .collect_view()
        })
    };
    let s3 = session.clone();
    let body = move || {
        let srcs = sources_of(&s3, file.get());
        let Some(src) = srcs.get(pick.get()).or(srcs.first()).cloned() else {
            return view! { <p class="hint">"Nothing to chart in this file."</p> }.into_any();
        };
        view! { <SourceView session=s3.clone() source=src /> }.into_any()
    };
    // How the file was read (1: in a worker) and how long it took: the e2e tests and the memory
    // benchmark read them.
    let s4 = session.clone();
    let workers = move || {
        s4.files
            .get(file.get())
            .map_or(0, |f| f.workers)
            .to_string()
    };
    let s5 = session.clone();
    let load_ms = move || {
        s5.files
            .get(file.get())
            .map_or(0.0, |f| f.load_ms)
            .to_string()
    };
    // "pending" while a snapshot's model is still coming from its worker (its views drawn), else
    // "whole".
    let s7 = session.clone();
    let model = move || match s7.files.get(file.get()).is_some_and(|f| f.awaiting_model()) {
        true => "pending",
        false => "whole",
    };
    // Where the summary and charts were built: "worker" when the snapshot's worker sent them.
    let s6 = session.clone();
    let views_in = move || match s6.files.get(file.get()).map(|f| &f.content) {
        Some(Content::Snapshot(s)) if s.summary.is_some() => "worker",
        _ => "page",
    };
    view! {
        <section class="memory" data-testid="memory-view" data-workers=workers data-load-ms=load_ms
            data-views-in=views_in data-model=model
            data-wasm-bytes=move || { file.get(); crate::platform::clock::wasm_memory_bytes().to_string() }>
            <div class="mem-head">
                <select data-testid="mem-file" on:change=on_file disabled=files.len() < 2>{file_options}</select>
                <div class="mem-devices" role="tablist" data-testid="mem-devices">{devices}</div>
            </div>
            {body}
        </section>
    }
    .into_any()
}

fn legend(c: &tracelight_core::analysis::memory_chart::MemoryChart) -> impl IntoView {
    let mut items: Vec<(String, &'static str, bool)> = Vec::new();
    let mut allocs = 0usize;
    for (i, b) in c.bands.iter().enumerate() {
        match &b.kind {
            BandKind::Category(k) => {
                items.push((category_name(*k).to_owned(), category_color(*k), false))
            }
            BandKind::Allocated => items.push(("allocated".into(), band_color(&b.kind, i), false)),
            BandKind::Summarized { count } => items.push((
                format!("{count} smaller allocations"),
                band_color(&b.kind, i),
                false,
            )),
            BandKind::Alloc { .. } => allocs += 1,
        }
    }
    if allocs > 0 {
        items.insert(
            0,
            (
                format!("{allocs} largest allocations, one band each"),
                "#4e79a7",
                false,
            ),
        );
    }
    for l in &c.lines {
        items.push((l.name.to_owned(), "#1f2328", true));
    }
    if c.markers
        .iter()
        .any(|m| m.kind == tracelight_core::analysis::memory_chart::MarkerKind::Oom)
    {
        items.push(("OOM".into(), "#cf222e", false));
    }
    let clock = match (c.unit, c.epoch) {
        (XUnit::Index, _) => "x: trace entry index (this snapshot recorded no time_us)",
        (XUnit::Ns, true) => "x: time since the first entry (time_us)",
        (XUnit::Ns, false) => "x: time since the first [memory] event",
    };
    view! {
        <div class="legend mem-legend">
            {items.into_iter().map(|(n, c, dashed)| view! {
                <span class="legend-item"><i class:dashed=dashed style=format!("background:{c}")></i>{n}</span>
            }).collect_view()}
            <span class="hint">{clock}</span>
        </div>
    }
}

#[component]
fn SourceView(session: SessionRef, source: Source) -> impl IntoView {
    let Some(c) = chart(&session, &source) else {
        return ().into_any();
    };
    let file = source.file;
    let head = match (&session.files[file].content, source.kind) {
        (Content::Snapshot(_), SourceKind::Snapshot { device }) => snapshot_summary(&session, file)
            .and_then(|s| s.devices.iter().find(|d| d.device == device).cloned())
            .map(|d| view! { <SnapshotFigures d=d /> }.into_any()),
        (
            Content::Trace(t),
            SourceKind::Trace {
                device_type,
                device_id,
            },
        ) => memory_summary(&t.trace)
            .into_iter()
            .find(|d| d.device_type == device_type && d.device_id == device_id)
            .map(|d| {
                let nav = use_context::<Nav>().unwrap_or_default();
                let (slice, op) = (d.peak_op_slice, d.peak_op.clone().unwrap_or_default());
                let reveal = Callback::new(move |()| {
                    if let Some(i) = slice {
                        nav.reveal(file, vec![i], op.clone());
                    }
                });
                view! { <TraceFigures d=d origin_ns=c.x_range.0 reveal=reveal /> }.into_any()
            }),
        (Content::MemoryTimeline(m), _) => Some(view! { <TimelineFigures p=peak(m) /> }.into_any()),
        _ => None,
    };
    // A snapshot's allocator-state scrubber, shared by the chart, the peak rows and the map.
    let scrub = match source.kind {
        SourceKind::Snapshot { device } => {
            let peak = snapshot_summary(&session, file).and_then(|s| {
                s.devices
                    .iter()
                    .find(|d| d.device == device)
                    .and_then(|d| d.peak_active_index)
            });
            let entries = c.entry_x.len();
            Some(Scrub {
                at: RwSignal::new(entries),
                entries,
                peak,
            })
        }
        _ => None,
    };
    // Drawn from a snapshot worker's views while its model arrives: the figures and the chart
    // only. The tables, flame graph and segment map come with the whole file, which replaces this
    // one (built here, they would be built again, and a row picked would be lost).
    let pending = session.files[file].awaiting_model();
    let tables = match source.kind {
        SourceKind::Snapshot { .. } if pending => Some(
            view! {
                <p class="hint" data-testid="mem-model-pending">
                    "The tables, the flame graph at the peak and the segment map come with the snapshot's model, still on its way from the worker."
                </p>
            }
            .into_any(),
        ),
        SourceKind::Snapshot { device } => snapshot_summary(&session, file)
            .and_then(|s| s.devices.iter().find(|d| d.device == device).cloned())
            .map(|d| {
                // A snapshot's tables, flame graph and segment map come a task each after the
                // chart (`Later`): built in the chart's task they made one of 160 ms on 1 GB, and
                // the chart waited ~80 ms for them (their layout) on 50 MB.
                let (s1, s2, c1, d1) = (session.clone(), session.clone(), c.clone(), d.clone());
                view! {
                    <Later paint_first=true after=1>
                        <DumpTables d=d1.clone() />
                        <OomTable d=d1.clone() />
                    </Later>
                    <Later paint_first=true after=2>
                        <div class="mem-tables">
                            <PeakTable d=d.clone() scrub=scrub />
                            <StackTable d=d.clone() />
                        </div>
                    </Later>
                    <Later paint_first=true after=3>
                        <PeakFlameView session=s1.clone() file=file device=device />
                    </Later>
                    <Later paint_first=true after=4>
                        {scrub.map(|sc| view! { <SegmentView session=s2.clone() file=file device=device scrub=sc chart=c1.clone() /> })}
                    </Later>
                }
                .into_any()
            }),
        SourceKind::Trace {
            device_type,
            device_id,
        } => Some(
            view! { <OpMemoryTable session=session.clone() file=file device_type=device_type device_id=device_id /> }
                .into_any(),
        ),
        _ => None,
    };
    // A snapshot without trace entries has no history: no timeline is drawn (nor invented).
    let no_history = match (&session.files[file].content, source.kind) {
        (Content::Snapshot(s), SourceKind::Snapshot { device }) if s.pending => {
            snapshot_summary(&session, file).is_none_or(|sum| {
                sum.devices
                    .iter()
                    .find(|d| d.device == device)
                    .is_none_or(|d| d.trace_entries == 0)
            })
        }
        (Content::Snapshot(s), SourceKind::Snapshot { device }) => {
            s.trace(device).is_none_or(|t| t.is_empty())
        }
        _ => false,
    };
    let key = format!("{file}-{:?}", source.kind);
    view! {
        <div class="mem-source" data-source=key>
            {head}
            {(!no_history).then(|| legend(&c))}
            {(!no_history).then(|| view! { <ChartCanvas session=session.clone() source=source chart=c.clone() scrub=scrub /> })}
            {tables}
        </div>
    }
    .into_any()
}
