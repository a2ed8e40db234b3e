//! Two panels of core's `analysis::graphs`: the GPU health line under the Overview's headline
//! figures (how much GPU time the op tables attribute, graph replays, work outside any op or
//! without a launch, the reader's repairs), and the GPU tab's CUDA graph replays (per launch:
//! kernels, GPU time, span, idle inside; a row shows the replay's kernels in the timeline).

use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use crate::widgets::table::{columns, Col, VTable};
use leptos::prelude::*;

#[component]
pub fn GpuHealthLine(session: SessionRef, file: usize) -> impl IntoView {
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    // Under the Overview: the scope picker's scope, as the cards beside it.
    let scope = use_context::<Nav>().unwrap_or_default().scope;
    let h = tf.analysis_at(scope).health.clone();
    if h.gpu_ns == 0 && h.reader.is_empty() {
        return ().into_any();
    }
    let part = |label: &'static str, key: &'static str, ns: i64| {
        (ns > 0).then(|| {
            view! {
                <span class="health-part" data-key=key data-ns=ns.to_string()>
                    {format!("{} {label} ({})", fmt::pct(ns, h.gpu_ns), fmt::dur(ns))}
                </span>
            }
        })
    };
    let attributed = h.in_op_ns + h.graph_ns;
    let meaning = if h.gpu_ns == 0 {
        String::new()
    } else if attributed == h.gpu_ns {
        "every kernel is reached from an op: the op, module and source-line tables cover all GPU time.".into()
    } else {
        format!(
            "the op, module and source-line tables cover {} of the GPU time; utilization and the breakdowns count all of it.",
            fmt::pct(attributed, h.gpu_ns)
        )
    };
    let reader = h.reader.clone();
    view! {
        <p class="health" data-testid="gpu-health" data-gpu-ns=h.gpu_ns.to_string()>
            <b>"GPU time attribution: "</b>
            {part("inside ops", "in_op", h.in_op_ns)}
            {part("CUDA graph replays (attributed to the launch)", "graph", h.graph_ns)}
            {part("launched outside any op", "outside", h.outside_op_ns)}
            {part("without a launching call", "no_launch", h.no_launch_ns)}
            {(h.overlapping_on_stream > 0).then(|| view! {
                <span class="health-part" data-key="overlap">{format!("{} overlapping kernels on one stream (kept and counted)", h.overlapping_on_stream)}</span>
            })}
            " — " {meaning}
            {(!reader.is_empty()).then(|| view! {
                <span class="health-reader" data-testid="gpu-health-reader">
                    {format!(" Reader: {}.", reader.join("; "))}
                </span>
            })}
        </p>
    }
    .into_any()
}

columns! {
    enum GraphCol { Op = "op", At = "at", Kernels = "kernels", Gpu = "gpu", Span = "span", Idle = "idle", Graph = "graph" }
}

#[component]
pub fn GraphReplays(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let g = tf.analysis().graphs.clone();
    if g.launches.is_empty() {
        return ().into_any();
    }
    let origin = tf.trace.time_bounds().map_or(0, |b| b.0);
    let n = g.launches.len();
    let total_gpu = tf.analysis().health.gpu_ns;
    let rows = StoredValue::new(g.launches.clone());
    let cols = Signal::derive(|| {
        vec![
            Col::name(GraphCol::Op, "Op around the launch", 220),
            Col::num(GraphCol::At, "At", 120),
            Col::num(GraphCol::Kernels, "Kernels", 70),
            Col::num(GraphCol::Gpu, "GPU time", 90),
            Col::num(GraphCol::Span, "Replay span", 96),
            Col::num(GraphCol::Idle, "Idle inside", 90)
                .tip("span minus the union of its kernels: gaps between graph nodes"),
            Col::num(GraphCol::Graph, "Graph id", 80),
        ]
    });
    let cell = Callback::new(move |(r, c): (usize, GraphCol)| {
        rows.with_value(|v| {
            let Some(l) = v.get(r) else {
                return String::new();
            };
            match c {
                GraphCol::Op => l.op.clone().unwrap_or_else(|| "(no op)".into()),
                GraphCol::At => format!("+{}", fmt::dur(l.start_ns - origin)),
                GraphCol::Kernels => l.kernels.to_string(),
                GraphCol::Gpu => fmt::dur(l.gpu_ns),
                GraphCol::Span => fmt::dur(l.span_ns),
                GraphCol::Idle => fmt::dur(l.idle_ns),
                GraphCol::Graph => l.graph_id.map_or("–".into(), |x| x.to_string()),
            }
        })
    });
    let s2 = session.clone();
    let on_activate = Callback::new(move |r: usize| {
        let Some(l) = rows.with_value(|v| v.get(r).map(|l| l.launch)) else {
            return;
        };
        let Some(tf) = s2.trace(file) else { return };
        let gd = &tf.trace.gpu;
        let slices: Vec<u32> = (0..gd.slice.len())
            .filter(|&k| gd.launch[k] == l)
            .map(|k| gd.slice[k])
            .collect();
        nav.reveal(file, slices, format!("CUDA graph replay {}", r + 1));
    });
    let sort = RwSignal::new(None::<(GraphCol, bool)>);
    view! {
        <section class="card" data-testid="graph-replays">
            <h2>"CUDA graph replays"</h2>
            <p data-testid="graph-summary" data-kernels=g.kernels.to_string() data-gpu-ns=g.gpu_ns.to_string()>
                {format!("{n} replays ran {} kernels, memcpy and memset: {} of GPU time ({} of all), {} idle inside the replays. \
                    Their work is attributed to the graph launch and the ops around it: no op ran per kernel. \
                    Utilization and the breakdowns count it like any other GPU work.",
                    g.kernels, fmt::dur(g.gpu_ns), fmt::pct(g.gpu_ns, total_gpu), fmt::dur(g.idle_ns))}
            </p>
            <VTable cols=cols len=Signal::derive(move || n) cell=cell on_activate=on_activate sort=sort testid="graph-table" visible_rows=8 label="CUDA graph replays" />
        </section>
    }
    .into_any()
}
