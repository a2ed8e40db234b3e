//! GPU: utilization per device, the HTA temporal breakdown, communication/compute overlap, idle
//! gaps per stream (and the longest ones, each linked to the timeline), launch delays and sync
//! points. With several ranks, a pointer to the Ranks tab, which holds the per-rank figures (by
//! the run layout's rank and cycle, as `analyze DIR` numbers them) and the straggler.

use crate::session::{Nav, SessionRef, Tab};
use crate::widgets::bars::{Bar, StackBar};
use crate::widgets::fmt;
use crate::widgets::palette::color_of;
use crate::widgets::table::{columns, Col, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::gaps::{largest_gaps, Gap};
use tracelight_core::analysis::gpu::{hta_kernel_type, HtaKernelType, Temporal};
use tracelight_core::analysis::idle::Cause;
use tracelight_core::model::NONE;

/// Longest gaps listed.
const GAPS_LISTED: usize = 200;

fn stat(label: &'static str, testid: &'static str, value: String, note: String) -> impl IntoView {
    view! {
        <div class="stat">
            <div class="stat-label">{label}</div>
            <div class="stat-value" data-testid=testid>{value}</div>
            <div class="stat-note">{note}</div>
        </div>
    }
}

#[component]
pub fn GpuView(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return view! { <p class="muted">"Not a trace."</p> }.into_any();
    };
    let a = tf.analysis();
    let n = session.trace_indices().len();
    let ranks = (n > 1).then(|| {
        view! {
            <p class="hint" data-testid="gpu-ranks-pointer">
                {format!("{n} traces are open. Per-rank step time, compute, communication, idle, memory, the straggler and the matched collectives: ")}
                <button class="link" data-testid="gpu-to-ranks" on:click=move |_| nav.tab.set(Tab::Ranks)>"Ranks →"</button>
            </p>
        }
    });
    if a.gpu.utilization.is_none() {
        return view! {
            <section class="view" data-testid="gpu-view">
                {ranks}
                <p class="muted">"No GPU kernels in this trace."</p>
            </section>
        }
        .into_any();
    }
    let g = &a.gpu;
    let tm = g.temporal;
    let ov = &g.overlap;
    let temporal = vec![
        Bar {
            key: "compute".into(),
            label: "compute".into(),
            value_ns: tm.compute_ns,
            color: color_of("compute"),
        },
        Bar {
            key: "non_compute".into(),
            label: "non-compute (comm, copies)".into(),
            value_ns: tm.non_compute_ns,
            color: color_of("non-compute"),
        },
        Bar {
            key: "idle".into(),
            label: "idle".into(),
            value_ns: tm.idle_ns,
            color: color_of("idle"),
        },
    ];
    let devices = g
        .devices
        .iter()
        .map(|d| view! { <tr><td>{format!("GPU {}", d.device)}</td><td class="num">{fmt::dur(d.busy_ns)}</td><td class="num" data-testid="device-util">{fmt::frac(d.utilization)}</td></tr> })
        .collect_view();
    // Communication kernels, for "show me".
    let s = &tf.trace.slices;
    let comm_slices: Vec<u32> = tf
        .trace
        .gpu
        .slice
        .iter()
        .copied()
        .filter(|&i| {
            hta_kernel_type(tf.trace.str(s.name[i as usize])) == HtaKernelType::Communication
        })
        .collect();
    let n_comm = comm_slices.len();
    let l = &a.launch;
    let short = l.short_kernel_slices.clone();
    view! {
        <section class="view" data-testid="gpu-view">
            {ranks}
            <div class="cards">
                {stat("GPU utilization", "gpu-util-gpu", fmt::frac(g.utilization.unwrap_or(0.0)),
                    format!("kernels busy {} of the {} window", fmt::dur(g.busy_ns), fmt::dur(g.window_ns)))}
                {stat("Kernel span (HTA)", "kernel-span", fmt::dur(tm.kernel_span_ns), "first GPU event start → last end".into())}
                {stat("Exposed communication", "exposed-comm", fmt::dur(ov.exposed_comm_ns),
                    if ov.comm_ns > 0 { format!("of {} comm; overlap {}", fmt::dur(ov.comm_ns), ov.overlap_pct.map(|p| fmt::frac(p / 100.0)).unwrap_or_default()) } else { "no communication kernels".into() })}
                {stat("Launch delay (median)", "launch-median", fmt::dur(l.median_delay_ns),
                    format!("p95 {} · max {} · {} launches", fmt::dur(l.p95_delay_ns), fmt::dur(l.max_delay_ns), l.launched))}
            </div>
            <section class="card" data-testid="gpu-idle-card">
                <h2>"Why the GPU is idle"</h2>
                <crate::views::idle::IdleCauses session=session.clone() file=file />
                <h3>"Per stream"</h3>
                <StreamCauses session=session.clone() file=file />
            </section>
            <div class="grid2">
                <section class="card">
                    <h2>"Temporal breakdown " <span class="muted">"(all GPU work over the kernel span)"</span></h2>
                    <StackBar parts=temporal total_ns=tm.kernel_span_ns testid="temporal" />
                    {hta_note(&tm, &a.temporal_hta)}
                    <table class="small-table">
                        <thead><tr><th>"Device"</th><th class="num">"Kernel busy"</th><th class="num">"Utilization"</th></tr></thead>
                        <tbody>{devices}</tbody>
                    </table>
                    <p class="hint">"Utilization (TensorBoard): union of kernel intervals ÷ the ProfilerStep window. Compute = kernels that are neither communication nor memory (HTA's types)."</p>
                </section>
                <section class="card">
                    <h2>"Communication / compute overlap"</h2>
                    {if ov.comm_ns > 0 {
                        let parts = vec![
                            Bar { key: "overlapped".into(), label: "overlapped by compute".into(), value_ns: ov.overlap_ns, color: color_of("compute") },
                            Bar { key: "exposed".into(), label: "exposed".into(), value_ns: ov.exposed_comm_ns, color: color_of("comm") },
                        ];
                        view! {
                            <StackBar parts=parts total_ns=ov.comm_ns testid="overlap" />
                            <p data-testid="overlap-pct">{format!("{} communication, {} overlapped ({}), {} exposed.",
                                fmt::dur(ov.comm_ns), fmt::dur(ov.overlap_ns), ov.overlap_pct.map(|p| fmt::frac(p / 100.0)).unwrap_or_default(), fmt::dur(ov.exposed_comm_ns))}</p>
                            <button class="button small" on:click=move |_| nav.reveal(file, comm_slices.clone(), "communication kernels".into())>
                                {format!("Show {n_comm} communication kernels →")}
                            </button>
                        }.into_any()
                    } else {
                        view! { <p class="muted">"No communication kernels (NCCL) in this trace."</p> }.into_any()
                    }}
                    <h2>"Launches"</h2>
                    <p>{format!("Mean delay {} (GPU start − launch call end). {} kernels ran shorter than their launch call ({} of GPU time): the launch-bound pattern.",
                        fmt::dur_f(l.mean_delay_ns), l.short_kernels, fmt::dur(l.short_kernel_total_ns))}</p>
                    {(!short.is_empty()).then(|| view! {
                        <button class="button small" on:click=move |_| nav.reveal(file, short.clone(), "kernels shorter than their launch".into())>
                            "Show the shortest-vs-launch kernels →"
                        </button>
                    })}
                </section>
            </div>
            <div class="grid2">
                <section class="card">
                    <h2>"Idle time per stream " <span class="muted">"(HTA classes)"</span></h2>
                    <StreamIdle session=session.clone() file=file />
                </section>
                <section class="card">
                    <h2>"Sync points"</h2>
                    <SyncTable session=session.clone() file=file />
                </section>
            </div>
            <crate::views::graphs::GraphReplays session=session.clone() file=file />
            <section class="card">
                <h2>"Longest idle gaps"</h2>
                <GapTable session=session.clone() file=file />
            </section>
        </section>
    }
    .into_any()
}

columns! {
    /// Idle time per stream.
    enum IdleCol { Stream = "stream", Host = "host", Kernel = "kernel", Other = "other", Total = "total" }
}

columns! {
    /// The longest idle gaps.
    enum GapCol { Stream = "stream", At = "at", Dur = "dur", Kind = "kind", Next = "next" }
}

columns! {
    /// Synchronizing calls grouped by call and op.
    enum SyncCol { Call = "call", Op = "op", Count = "count", Total = "total" }
}

/// Idle time of each stream split by cause: where the device is idle, the device's causes;
/// where another stream runs, collective wait (NCCL there) or other stream.
#[component]
fn StreamCauses(session: SessionRef, file: usize) -> impl IntoView {
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let a = tf.analysis();
    let idle = &a.idle;
    let mut causes: Vec<Cause> = idle
        .streams
        .iter()
        .flat_map(|s| s.by_cause.iter().map(|x| x.0))
        .collect();
    causes.sort_unstable();
    causes.dedup();
    let head = causes
        .iter()
        .map(|c| view! { <th class="num"><i class="swatch" style=format!("background:{}", color_of(c.slug()))></i>{c.short()}</th> })
        .collect_view();
    let rows = idle
        .streams
        .iter()
        .map(|s| {
            let cells = causes
                .iter()
                .map(|c| {
                    let ns = s.by_cause.iter().find(|x| x.0 == *c).map_or(0, |x| x.1);
                    view! { <td class="num" data-cause=c.slug() data-ns=ns.to_string()>{if ns > 0 { fmt::dur(ns) } else { String::new() }}</td> }
                })
                .collect_view();
            view! {
                <tr data-testid="stream-causes-row" data-stream=s.stream.to_string()>
                    <td>{format!("GPU {} · stream {}", s.device, s.stream)}</td>
                    <td class="num">{fmt::dur(s.idle_ns)}</td>
                    {cells}
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-scroll">
            <table class="small-table" data-testid="stream-causes">
                <thead><tr><th>"Stream"</th><th class="num">"idle"</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

#[component]
fn StreamIdle(session: SessionRef, file: usize) -> impl IntoView {
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let rows = Arc::new(tf.analysis().gpu.idle_gaps.clone());
    let cols = vec![
        Col::name(IdleCol::Stream, "Stream", 150),
        Col::num(IdleCol::Host, "Host wait", 96)
            .tip("the launch call started after the previous kernel ended"),
        Col::num(IdleCol::Kernel, "Kernel wait", 96)
            .tip("gap under 30 µs with the launch already issued"),
        Col::num(IdleCol::Other, "Other", 96),
        Col::num(IdleCol::Total, "Total idle", 96),
    ];
    let n = rows.len();
    let cell = Callback::new(move |(r, key): (usize, IdleCol)| {
        let Some(x) = rows.get(r) else {
            return String::new();
        };
        match key {
            IdleCol::Stream => format!("GPU {} · stream {}", x.device, x.stream),
            IdleCol::Host => fmt::dur(x.host_wait_ns),
            IdleCol::Kernel => fmt::dur(x.kernel_wait_ns),
            IdleCol::Other => fmt::dur(x.other_ns),
            IdleCol::Total => fmt::dur(x.host_wait_ns + x.kernel_wait_ns + x.other_ns),
        }
    });
    view! { <VTable cols=cols len=n cell=cell sort=Signal::stored(None) testid="stream-idle" visible_rows=8 label="Idle time per stream" /> }.into_any()
}

#[component]
fn GapTable(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let gaps: Arc<Vec<Gap>> = Arc::new(largest_gaps(&tf.trace, GAPS_LISTED));
    let t0 = tf.trace.time_bounds().map_or(0, |b| b.0);
    let names: Arc<Vec<String>> = Arc::new(
        gaps.iter()
            .map(|g| {
                tf.trace
                    .str(tf.trace.slices.name[g.next as usize])
                    .to_owned()
            })
            .collect(),
    );
    let cols = vec![
        Col::text(GapCol::Stream, "Stream", 150),
        Col::num(GapCol::At, "At", 110).tip("time from the trace start"),
        Col::num(GapCol::Dur, "Gap", 104),
        Col::text(GapCol::Kind, "Class", 96),
        Col::name(GapCol::Next, "Before", 260).tip("the GPU work that ended the gap"),
    ];
    let n = gaps.len();
    let (g1, n1) = (gaps.clone(), names.clone());
    let cell = Callback::new(move |(r, key): (usize, GapCol)| {
        let Some(g) = g1.get(r) else {
            return String::new();
        };
        match key {
            GapCol::Stream => format!("GPU {} · stream {}", g.device, g.stream),
            GapCol::At => fmt::dur(g.start_ns - t0),
            GapCol::Dur => fmt::dur(g.dur_ns),
            GapCol::Kind => g.kind.label().to_owned(),
            GapCol::Next => n1.get(r).cloned().unwrap_or_default(),
        }
    });
    let on_activate = Callback::new(move |r: usize| {
        let Some(g) = gaps.get(r) else { return };
        let mut slices = vec![g.next];
        if g.launch != NONE {
            slices.push(g.launch);
        }
        nav.reveal(
            file,
            slices,
            format!(
                "{} idle gap ({}) before {}",
                fmt::dur(g.dur_ns),
                g.kind.label(),
                names.get(r).cloned().unwrap_or_default()
            ),
        );
    });
    view! {
        <VTable cols=cols len=n cell=cell on_activate=on_activate sort=Signal::stored(None) testid="gap-table" visible_rows=10 label="Longest idle gaps" />
        <p class="hint">"Click a gap to see the kernel after it and its launch call in the timeline."</p>
    }
    .into_any()
}

#[component]
fn SyncTable(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let groups = Arc::new(tf.analysis().sync.clone());
    if groups.is_empty() {
        return view! { <p class="muted" data-testid="sync-table">"No synchronizing calls (stream/device/event synchronize, blocking DtoH copies)."</p> }.into_any();
    }
    let cols = vec![
        Col::name(SyncCol::Call, "Call", 180),
        Col::text(SyncCol::Op, "Caused by", 160),
        Col::num(SyncCol::Count, "Count", 64),
        Col::num(SyncCol::Total, "Time", 104),
    ];
    let n = groups.len();
    let g1 = groups.clone();
    let cell = Callback::new(move |(r, key): (usize, SyncCol)| {
        let Some(g) = g1.get(r) else {
            return String::new();
        };
        match key {
            SyncCol::Call => g.name.clone(),
            SyncCol::Op => g.op.clone().unwrap_or_else(|| "no op recorded".to_owned()),
            SyncCol::Count => g.count.to_string(),
            SyncCol::Total => fmt::dur(g.total_ns),
        }
    });
    let on_activate = Callback::new(move |r: usize| {
        if let Some(g) = groups.get(r) {
            let label = match &g.op {
                Some(op) => format!("{} in {op}", g.name),
                None => g.name.clone(),
            };
            nav.reveal(file, g.slices.clone(), label);
        }
    });
    view! {
        <VTable cols=cols len=n cell=cell on_activate=on_activate sort=Signal::stored(None) testid="sync-table" visible_rows=8 label="Sync points" />
        <p class="hint">"Each row: the synchronizing call and the op that issued it (the " <code>".item()"</code> " / " <code>".cpu()"</code> " pattern shows as a blocking DtoH cudaMemcpy)."</p>
    }
    .into_any()
}

/// Where HTA 0.5.0's `get_temporal_breakdown` would select other events than the breakdown shown
/// (it drops GPU work whose launch is missing from a multi-step trace and counts sync events as
/// non-compute), its figures, so a reader comparing with HTA knows which is which.
fn hta_note(shown: &Temporal, hta: &Temporal) -> impl IntoView {
    let text = if shown == hta {
        "Equals HTA's get_temporal_breakdown on this trace.".to_owned()
    } else {
        format!(
            "HTA's get_temporal_breakdown selects other events here (it drops GPU work whose launch is missing from a multi-step trace and counts sync events): span {}, compute {}, non-compute {}, idle {}.",
            fmt::dur(hta.kernel_span_ns),
            fmt::dur(hta.compute_ns),
            fmt::dur(hta.non_compute_ns),
            fmt::dur(hta.idle_ns)
        )
    };
    view! { <p class="hint" data-testid="temporal-hta">{text}</p> }
}
