//! Modules: from a kernel back to the code. Three tables of core's analyses, one tab:
//! - the nn.Module tree (`analysis::modules`): calls, host total/self, forward and backward GPU
//!   time (self and subtree), backward host time, kernels, occupancy; in tree order with the
//!   names indented, or flat by full path when sorted by a figure;
//! - GPU and host time by line of user code (`analysis::source`);
//! - forward op ↔ backward node (`analysis::autograd`).
//!
//! A row opens its occurrences in the timeline: a module's call frames, a line's top-level ops,
//! a pair's backward nodes; a module's "flame ›" cell opens the flame graph at its frame.

use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use crate::widgets::table::{columns, next_sort, Col, Sort, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::autograd::EVALUATE_PREFIX;
use tracelight_core::analysis::source::source_slices;
use tracelight_core::report::analysis::Analysis;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Modules,
    Lines,
    Backward,
}

columns! {
    enum Mc {
        Name = "name",
        Calls = "calls",
        Host = "host",
        HostSelf = "host_self",
        Gpu = "gpu",
        GpuSelf = "gpu_self",
        Bwd = "bwd_gpu",
        BwdSelf = "bwd_gpu_self",
        BwdHost = "bwd_host",
        Kernels = "kernels",
        Occ = "occupancy",
        Share = "share",
        Flame = "flame",
    }
}

columns! {
    enum Lc {
        Line = "line",
        Ops = "ops",
        Host = "host",
        BwdHost = "bwd_host",
        Kernels = "kernels",
        Gpu = "gpu",
        Bwd = "bwd_gpu",
        Share = "share",
    }
}

columns! {
    enum Bc {
        Fwd = "forward",
        Bwd = "backward",
        Pairs = "pairs",
        FwdHost = "fwd_host",
        FwdGpu = "fwd_gpu",
        BwdHost = "bwd_host",
        BwdGpu = "bwd_gpu",
        Ratio = "ratio",
    }
}

fn module_cols() -> Vec<Col<Mc>> {
    vec![
        Col::name(Mc::Name, "Module", 280),
        Col::num(Mc::Calls, "Calls", 60),
        Col::num(Mc::Host, "Host total", 92).tip("the module's call frames, summed over calls"),
        Col::num(Mc::HostSelf, "Host self", 92).tip("host total minus its child modules' frames"),
        Col::num(Mc::Gpu, "GPU fwd", 92)
            .tip("kernels, memcpy and memset launched under the module's frames (subtree)"),
        Col::num(Mc::GpuSelf, "GPU fwd self", 100)
            .tip("launched by the module itself, not a child module"),
        Col::num(Mc::Bwd, "GPU bwd", 92)
            .tip("launched by the backward nodes of the module's forward ops (by sequence number)"),
        Col::num(Mc::BwdSelf, "GPU bwd self", 100),
        Col::num(Mc::BwdHost, "Host bwd", 92).tip("host time of those backward nodes"),
        Col::num(Mc::Kernels, "Kernels", 70),
        Col::num(Mc::Occ, "Occupancy", 84)
            .tip("est. achieved occupancy, weighted by kernel time (kernels that report it)"),
        Col::num(Mc::Share, "GPU %", 64).tip("forward + backward GPU time, of all GPU time"),
        Col::text(Mc::Flame, "Flame", 64).tip(
            "open the module's frame in the flame graph (its calls merged, Python frames shown)",
        ),
    ]
}

fn line_cols() -> Vec<Col<Lc>> {
    vec![
        Col::name(Lc::Line, "Source line", 300),
        Col::num(Lc::Ops, "Ops", 60).tip("top-level ops run from this line in forward"),
        Col::num(Lc::Host, "Host", 92),
        Col::num(Lc::BwdHost, "Host bwd", 92).tip("the backward nodes of those ops"),
        Col::num(Lc::Kernels, "Kernels", 70),
        Col::num(Lc::Gpu, "GPU fwd", 92),
        Col::num(Lc::Bwd, "GPU bwd", 92),
        Col::num(Lc::Share, "GPU %", 64),
    ]
}

fn backward_cols() -> Vec<Col<Bc>> {
    vec![
        Col::name(Bc::Fwd, "Forward op", 200),
        Col::text(Bc::Bwd, "Backward node", 200),
        Col::num(Bc::Pairs, "Pairs", 60),
        Col::num(Bc::FwdHost, "Host fwd", 92),
        Col::num(Bc::FwdGpu, "GPU fwd", 92),
        Col::num(Bc::BwdHost, "Host bwd", 92),
        Col::num(Bc::BwdGpu, "GPU bwd", 92),
        Col::num(Bc::Ratio, "bwd / fwd GPU", 100),
    ]
}

fn m_value(a: &Analysis, i: usize, c: Mc) -> Option<f64> {
    let r = a.modules.rows.get(i)?;
    Some(match c {
        Mc::Name | Mc::Flame => return None,
        Mc::Calls => r.calls as f64,
        Mc::Host => r.host_ns as f64,
        Mc::HostSelf => r.host_self_ns as f64,
        Mc::Gpu => r.gpu_ns as f64,
        Mc::GpuSelf => r.gpu_self_ns as f64,
        Mc::Bwd => r.backward_gpu_ns as f64,
        Mc::BwdSelf => r.backward_gpu_self_ns as f64,
        Mc::BwdHost => r.backward_host_ns as f64,
        Mc::Kernels => r.kernels as f64,
        Mc::Occ => r.occupancy_pct.unwrap_or(-1.0),
        Mc::Share => (r.gpu_ns + r.backward_gpu_ns) as f64,
    })
}

fn m_cell(a: &Analysis, i: usize, c: Mc, flat: bool) -> String {
    // While the mode switches, a cell of the old table may be asked for a row of the new one.
    let Some(r) = a.modules.rows.get(i) else {
        return String::new();
    };
    let total = a.modules.total_gpu_ns;
    match c {
        Mc::Name if flat => r.path.clone(),
        Mc::Name => format!("{}{}", "\u{2003}".repeat(r.depth as usize), r.name),
        Mc::Calls => r.calls.to_string(),
        Mc::Host => fmt::dur(r.host_ns),
        Mc::HostSelf => fmt::dur(r.host_self_ns),
        Mc::Gpu => fmt::dur(r.gpu_ns),
        Mc::GpuSelf => fmt::dur(r.gpu_self_ns),
        Mc::Bwd => fmt::dur(r.backward_gpu_ns),
        Mc::BwdSelf => fmt::dur(r.backward_gpu_self_ns),
        Mc::BwdHost => fmt::dur(r.backward_host_ns),
        Mc::Kernels => r.kernels.to_string(),
        Mc::Occ => r.occupancy_pct.map_or("–".into(), |o| format!("{o:.1}%")),
        Mc::Share => fmt::pct(r.gpu_ns + r.backward_gpu_ns, total),
        Mc::Flame => "flame ›".into(),
    }
}

fn l_value(a: &Analysis, i: usize, c: Lc) -> Option<f64> {
    let r = a.sources.rows.get(i)?;
    Some(match c {
        Lc::Line => return None,
        Lc::Ops => r.ops as f64,
        Lc::Host => r.host_ns as f64,
        Lc::BwdHost => r.backward_host_ns as f64,
        Lc::Kernels => r.kernels as f64,
        Lc::Gpu => r.gpu_ns as f64,
        Lc::Bwd => r.backward_gpu_ns as f64,
        Lc::Share => (r.gpu_ns + r.backward_gpu_ns) as f64,
    })
}

fn l_cell(a: &Analysis, i: usize, c: Lc) -> String {
    let Some(r) = a.sources.rows.get(i) else {
        return String::new();
    };
    match c {
        Lc::Line => r.source.label(),
        Lc::Ops => r.ops.to_string(),
        Lc::Host => fmt::dur(r.host_ns),
        Lc::BwdHost => fmt::dur(r.backward_host_ns),
        Lc::Kernels => r.kernels.to_string(),
        Lc::Gpu => fmt::dur(r.gpu_ns),
        Lc::Bwd => fmt::dur(r.backward_gpu_ns),
        Lc::Share => fmt::pct(r.gpu_ns + r.backward_gpu_ns, a.modules.total_gpu_ns),
    }
}

fn b_value(a: &Analysis, i: usize, c: Bc) -> Option<f64> {
    let r = a.backward.get(i)?;
    Some(match c {
        Bc::Fwd | Bc::Bwd => return None,
        Bc::Pairs => r.pairs as f64,
        Bc::FwdHost => r.forward_host_ns as f64,
        Bc::FwdGpu => r.forward_gpu_ns as f64,
        Bc::BwdHost => r.backward_host_ns as f64,
        Bc::BwdGpu => r.backward_gpu_ns as f64,
        Bc::Ratio => ratio(r.backward_gpu_ns, r.forward_gpu_ns).unwrap_or(-1.0),
    })
}

fn ratio(b: i64, f: i64) -> Option<f64> {
    (f > 0).then(|| b as f64 / f as f64)
}

fn b_cell(a: &Analysis, i: usize, c: Bc) -> String {
    let Some(r) = a.backward.get(i) else {
        return String::new();
    };
    match c {
        Bc::Fwd => r.forward.clone(),
        Bc::Bwd => r.backward.clone(),
        Bc::Pairs => r.pairs.to_string(),
        Bc::FwdHost => fmt::dur(r.forward_host_ns),
        Bc::FwdGpu => fmt::dur(r.forward_gpu_ns),
        Bc::BwdHost => fmt::dur(r.backward_host_ns),
        Bc::BwdGpu => fmt::dur(r.backward_gpu_ns),
        Bc::Ratio => {
            ratio(r.backward_gpu_ns, r.forward_gpu_ns).map_or("–".into(), |x| format!("{x:.2}×"))
        }
    }
}

/// A row's sort value by index (`None`: sort by its text), and descending.
type SortBy<'a> = Option<(&'a dyn Fn(usize) -> Option<f64>, bool)>;

/// Row order: filtered by `needle`, sorted by `sort` (text columns by name), else as given.
fn order_of(n: usize, needle: &str, text: &dyn Fn(usize) -> String, key: SortBy<'_>) -> Vec<usize> {
    let needle = needle.to_lowercase();
    let mut v: Vec<usize> = (0..n)
        .filter(|&i| needle.is_empty() || text(i).to_lowercase().contains(&needle))
        .collect();
    if let Some((val, desc)) = key {
        tracelight_core::sort::by(&mut v, |&a, &b| {
            let o = match (val(a), val(b)) {
                (Some(p), Some(q)) => p.total_cmp(&q),
                _ => text(a).cmp(&text(b)),
            };
            if desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    v
}

#[component]
pub fn ModulesView(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return view! { <p class="muted">"Not a trace."</p> }.into_any();
    };
    let a = tf.analysis_at(nav.scope);
    let (n_mod, n_line, n_bwd) = (a.modules.rows.len(), a.sources.rows.len(), a.backward.len());
    let first = if n_mod > 0 {
        Mode::Modules
    } else if n_line > 0 {
        Mode::Lines
    } else {
        Mode::Backward
    };
    let mode = RwSignal::new(first);
    let filter = RwSignal::new(String::new());
    let msort = RwSignal::new(None as Sort<Mc>);
    let lsort = RwSignal::new(None as Sort<Lc>);
    let bsort = RwSignal::new(None as Sort<Bc>);
    let store = StoredValue::new(session.clone());
    let with_a = move |f: &mut dyn FnMut(&Analysis)| {
        store.with_value(|s| {
            if let Some(tf) = s.trace(file) {
                f(tf.analysis_at(nav.scope))
            }
        })
    };
    let order = Memo::new(move |_| {
        let needle = filter.get();
        let mut v = Vec::new();
        with_a(&mut |a: &Analysis| {
            v = match mode.get() {
                Mode::Modules => {
                    let s = msort.get();
                    let val = move |i: usize| s.and_then(|(c, _)| m_value(a, i, c));
                    order_of(
                        a.modules.rows.len(),
                        &needle,
                        &|i| {
                            a.modules
                                .rows
                                .get(i)
                                .map_or(String::new(), |r| r.path.clone())
                        },
                        s.map(|(_, d)| (&val as &dyn Fn(usize) -> Option<f64>, d)),
                    )
                }
                Mode::Lines => {
                    let s = lsort.get();
                    let val = move |i: usize| s.and_then(|(c, _)| l_value(a, i, c));
                    order_of(
                        a.sources.rows.len(),
                        &needle,
                        &|i| {
                            a.sources
                                .rows
                                .get(i)
                                .map_or(String::new(), |r| r.source.label())
                        },
                        s.map(|(_, d)| (&val as &dyn Fn(usize) -> Option<f64>, d)),
                    )
                }
                Mode::Backward => {
                    let s = bsort.get();
                    let val = move |i: usize| s.and_then(|(c, _)| b_value(a, i, c));
                    order_of(
                        a.backward.len(),
                        &needle,
                        &|i| format!("{} {}", a.backward[i].forward, a.backward[i].backward),
                        s.map(|(_, d)| (&val as &dyn Fn(usize) -> Option<f64>, d)),
                    )
                }
            };
        });
        Arc::new(v)
    });
    let len = Signal::derive(move || order.get().len());
    let row_at = move |r: usize| order.get_untracked().get(r).copied();
    let flat = move || msort.get_untracked().is_some() || !filter.get_untracked().is_empty();
    let mcell = Callback::new(move |(r, c): (usize, Mc)| {
        let mut out = String::new();
        if let Some(i) = row_at(r) {
            with_a(&mut |a: &Analysis| out = m_cell(a, i, c, flat()));
        }
        out
    });
    let lcell = Callback::new(move |(r, c): (usize, Lc)| {
        let mut out = String::new();
        if let Some(i) = row_at(r) {
            with_a(&mut |a: &Analysis| out = l_cell(a, i, c));
        }
        out
    });
    let bcell = Callback::new(move |(r, c): (usize, Bc)| {
        let mut out = String::new();
        if let Some(i) = row_at(r) {
            with_a(&mut |a: &Analysis| out = b_cell(a, i, c));
        }
        out
    });
    // Row → its occurrences in the timeline.
    let on_activate = Callback::new(move |r: usize| {
        let Some(i) = row_at(r) else { return };
        let mut target: Option<(Vec<u32>, String)> = None;
        store.with_value(|s| {
            let Some(tf) = s.trace(file) else { return };
            let a = tf.analysis_at(nav.scope);
            let t = &tf.trace;
            target = match mode.get_untracked() {
                Mode::Modules => a
                    .modules
                    .rows
                    .get(i)
                    .map(|m| (m.frames.clone(), m.path.clone())),
                Mode::Lines => a
                    .sources
                    .rows
                    .get(i)
                    .map(|l| (source_slices(t, &a.autograd, &l.source), l.source.label())),
                Mode::Backward => a.backward.get(i).map(|b| {
                    let nodes: Vec<u32> = a
                        .autograd
                        .bwd
                        .iter()
                        .zip(&a.autograd.fwd)
                        .filter(|(&bw, &fw)| {
                            let n = t.str(t.slices.name[bw as usize]);
                            n.strip_prefix(EVALUATE_PREFIX) == Some(b.backward.as_str())
                                && t.str(t.slices.name[fw as usize]) == b.forward
                        })
                        .map(|(&bw, _)| bw)
                        .collect();
                    (nodes, format!("{} ← {}", b.backward, b.forward))
                }),
            };
        });
        if let Some((slices, label)) = target {
            nav.reveal(file, slices, label);
        }
    });
    // A module's "flame ›" cell: the flame graph at the frame holding most of its calls.
    let m_flame = Callback::new(move |(r, c): (usize, Mc)| {
        if c != Mc::Flame {
            return false;
        }
        let mut frames = None;
        if let Some(i) = row_at(r) {
            with_a(&mut |a: &Analysis| frames = a.modules.rows.get(i).map(|m| m.frames.clone()));
        }
        if let Some(f) = frames {
            nav.flame_of_slices(file, f);
        }
        true
    });
    let m_sort = Callback::new(move |k: Mc| msort.update(|s| *s = next_sort(*s, k, k != Mc::Name)));
    let l_sort = Callback::new(move |k: Lc| lsort.update(|s| *s = next_sort(*s, k, k != Lc::Line)));
    let b_sort = Callback::new(move |k: Bc| {
        bsort.update(|s| *s = next_sort(*s, k, !matches!(k, Bc::Fwd | Bc::Bwd)))
    });
    let outside = a.modules.outside_gpu_ns;
    let total = a.modules.total_gpu_ns;
    let unattributed = a.sources.unattributed_gpu_ns + a.sources.unlaunched_gpu_ns;
    let unmatched = a.autograd.unmatched;
    let tab = move |m: Mode, label: &'static str, n: usize, id: &'static str| {
        view! {
            <button class="tab" data-testid=id class:active=move || mode.get() == m
                on:click=move |_| { mode.set(m); filter.set(String::new()); }>
                {format!("{label} ({n})")}
            </button>
        }
    };
    let table = move || {
        match mode.get() {
        Mode::Modules => view! {
            <VTable cols=Signal::derive(module_cols) len=len cell=mcell on_activate=on_activate on_cell=m_flame on_sort=m_sort sort=msort testid="module-table" visible_rows=22 label="Modules" />
            <p class="hint" data-testid="module-health">{format!(
                "GPU time outside any module (loss, optimizer, data movement): {} of {} ({}). Sorted by a figure or filtered, rows show full paths; unsorted, the tree.",
                fmt::dur(outside), fmt::dur(total), fmt::pct(outside, total))}</p>
        }.into_any(),
        Mode::Lines => view! {
            <VTable cols=Signal::derive(line_cols) len=len cell=lcell on_activate=on_activate on_sort=l_sort sort=lsort testid="line-table" visible_rows=22 label="Source lines" />
            <p class="hint" data-testid="line-health">{format!(
                "The innermost frame of your code (not torch's, not a builtin) at the line of its call; backward work counts at its forward op's line, as torch's stacks say. GPU time reached from no user frame: {}.",
                fmt::dur(unattributed))}</p>
        }.into_any(),
        Mode::Backward => view! {
            <VTable cols=Signal::derive(backward_cols) len=len cell=bcell on_activate=on_activate on_sort=b_sort sort=bsort testid="backward-table" visible_rows=22 label="Forward and backward" />
            <p class="hint" data-testid="backward-health">{format!(
                "Paired by Sequence number (torch's rule; Kineto's fwdbwd arrows agree). Backward nodes whose forward op is not in the trace: {unmatched}.")}</p>
        }.into_any(),
    }
    };
    let empty = n_mod == 0 && n_line == 0 && n_bwd == 0;
    view! {
        <section class="view" data-testid="modules-view">
            <div class="toolbar">
                <span class="segs">
                    {tab(Mode::Modules, "Modules", n_mod, "modules-mode-modules")}
                    {tab(Mode::Lines, "Source lines", n_line, "modules-mode-lines")}
                    {tab(Mode::Backward, "Forward ↔ backward", n_bwd, "modules-mode-backward")}
                </span>
                <input class="search" type="search" placeholder="Filter…" data-testid="module-filter"
                    prop:value=move || filter.get() on:input=move |ev| filter.set(event_target_value(&ev)) />
                <span class="muted" data-testid="module-count">{move || format!("{} rows", len.get())}</span>
            </div>
            {empty.then(|| view! {
                <p class="muted" data-testid="modules-empty">"No nn.Module frames, Python stacks or sequence numbers in this trace: record it with "
                    <code>"torch.profiler.profile(with_stack=True)"</code>" (and a backward pass for forward ↔ backward)."</p>
            })}
            {table}
            <p class="hint">"Click a row (or Enter) to see its occurrences in the timeline, a module's “flame ›” to open its frame in the flame graph; a slice's details show its module, source line, stack and backward."</p>
        </section>
    }
    .into_any()
}
