//! Operators: the full operator table with torch `key_averages()` semantics (docs/definitions.md),
//! sortable by any column, filterable by name, optionally grouped by input shape, CPU and/or device
//! columns; a row opens its occurrences in the timeline. Exports: the `key_averages().table()` text
//! to the clipboard, and CSV.

use crate::platform::export;
use crate::session::reveal;
use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use crate::widgets::table::{columns, next_sort, Col, Sort, VTable};
use leptos::prelude::*;
use std::sync::{Arc, OnceLock};
use tracelight_core::analysis::autograd::{backward_of, BackwardRow};
use tracelight_core::analysis::ops::{op_table, OpOptions, OpRow, OpTable};
use tracelight_core::report::table::{render, TableOptions};

/// Which time columns to show.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Both,
    Cpu,
    Device,
}

columns! {
    /// The operator table's columns.
    enum OpCol {
        Name = "name",
        Shapes = "shapes",
        Calls = "calls",
        SelfCpu = "self_cpu",
        SelfCpuPct = "self_cpu_pct",
        CpuTotal = "cpu_total",
        CpuTotalPct = "cpu_total_pct",
        CpuAvg = "cpu_avg",
        CpuMem = "cpu_mem",
        SelfCpuMem = "self_cpu_mem",
        SelfDevice = "self_device",
        SelfDevicePct = "self_device_pct",
        DeviceTotal = "device_total",
        DeviceAvg = "device_avg",
        DeviceMem = "device_mem",
        SelfDeviceMem = "self_device_mem",
        Flops = "flops",
        Steps = "steps",
        BackwardOf = "backward_of",
        Roof = "pct_of_roof",
    }
}

/// Which optional columns the trace has data for.
#[derive(Clone, Copy)]
struct Has {
    cpu_mem: bool,
    dev_mem: bool,
    flops: bool,
    steps: bool,
    backward: bool,
    roof: bool,
}

fn columns(side: Side, shapes: bool, has: Has) -> Vec<Col<OpCol>> {
    let Has {
        cpu_mem,
        dev_mem,
        flops,
        steps,
        backward,
        roof,
    } = has;
    let mut c = vec![Col::name(OpCol::Name, "Name", 260)];
    if shapes {
        c.push(Col::text(OpCol::Shapes, "Input shapes", 200));
    }
    if backward {
        c.push(
            Col::text(OpCol::BackwardOf, "Backward of", 150).tip(
                "for a backward node's row: the forward op it was paired with (sequence number)",
            ),
        );
    }
    c.push(Col::num(OpCol::Calls, "Calls", 70));
    if side != Side::Device {
        c.extend([
            Col::num(OpCol::SelfCpu, "Self CPU", 96)
                .tip("own duration minus direct children on the same thread"),
            Col::num(OpCol::SelfCpuPct, "Self CPU %", 84),
            Col::num(OpCol::CpuTotal, "CPU total", 96),
            Col::num(OpCol::CpuTotalPct, "CPU total %", 88),
            Col::num(OpCol::CpuAvg, "CPU avg", 100),
        ]);
        if cpu_mem {
            c.extend([
                Col::num(OpCol::CpuMem, "CPU Mem", 90),
                Col::num(OpCol::SelfCpuMem, "Self CPU Mem", 100),
            ]);
        }
    }
    if side != Side::Cpu {
        c.extend([
            Col::num(OpCol::SelfDevice, "Self device", 96)
                .tip("kernels launched by the op's own runtime calls"),
            Col::num(OpCol::SelfDevicePct, "Self device %", 108),
            Col::num(OpCol::DeviceTotal, "Device total", 100),
            Col::num(OpCol::DeviceAvg, "Device avg", 100),
        ]);
        if dev_mem {
            c.extend([
                Col::num(OpCol::DeviceMem, "Device Mem", 96),
                Col::num(OpCol::SelfDeviceMem, "Self device Mem", 116),
            ]);
        }
    }
    if flops {
        c.push(Col::num(OpCol::Flops, "FLOPs", 96));
    }
    if steps && !shapes {
        c.insert(
            2,
            Col::text(OpCol::Steps, "Per step", 230)
                .tip("CPU total in each ProfilerStep: sparkline, median · max"),
        );
    }
    if roof && side != Side::Cpu {
        c.push(
            Col::num(OpCol::Roof, "% of roof", 84)
                .tip("achieved FLOP/s ÷ min(peak of its math unit, intensity × memory bandwidth): how close the op's calls came to what the device allows (the Roofline tab)"),
        );
    }
    c
}

/// The number a column sorts by; `None` for the text columns (sorted by name / shapes).
fn sort_value(r: &OpRow, col: OpCol) -> Option<f64> {
    Some(match col {
        OpCol::Name | OpCol::Shapes | OpCol::Steps | OpCol::BackwardOf => return None,
        OpCol::Calls => r.calls as f64,
        OpCol::SelfCpu | OpCol::SelfCpuPct => r.self_cpu_ns as f64,
        OpCol::CpuTotal | OpCol::CpuTotalPct => r.cpu_total_ns as f64,
        OpCol::CpuAvg => r.cpu_avg_ns(),
        OpCol::SelfDevice | OpCol::SelfDevicePct => r.self_device_ns as f64,
        OpCol::DeviceTotal => r.device_total_ns as f64,
        OpCol::DeviceAvg => r.device_avg_ns(),
        OpCol::CpuMem => r.cpu_mem_bytes as f64,
        OpCol::SelfCpuMem => r.self_cpu_mem_bytes as f64,
        OpCol::DeviceMem => r.device_mem_bytes as f64,
        OpCol::SelfDeviceMem => r.self_device_mem_bytes as f64,
        OpCol::Flops => r.flops,
        OpCol::Roof => r.pct_of_roof.unwrap_or(-1.0),
    })
}

fn cell_text(t: &OpTable, r: &OpRow, col: OpCol) -> String {
    match col {
        OpCol::Name => r.name.clone(),
        OpCol::Shapes => r.input_shapes.clone().unwrap_or_default(),
        OpCol::Calls => r.calls.to_string(),
        OpCol::SelfCpu => fmt::dur(r.self_cpu_ns),
        OpCol::SelfCpuPct => fmt::pct(r.self_cpu_ns, t.self_cpu_total_ns),
        OpCol::CpuTotal => fmt::dur(r.cpu_total_ns),
        OpCol::CpuTotalPct => fmt::pct(r.cpu_total_ns, t.self_cpu_total_ns),
        OpCol::CpuAvg => fmt::dur_f(r.cpu_avg_ns()),
        OpCol::SelfDevice => fmt::dur(r.self_device_ns),
        OpCol::SelfDevicePct => fmt::pct(r.self_device_ns, t.self_device_total_ns),
        OpCol::DeviceTotal => fmt::dur(r.device_total_ns),
        OpCol::DeviceAvg => fmt::dur_f(r.device_avg_ns()),
        OpCol::CpuMem => fmt::bytes(r.cpu_mem_bytes),
        OpCol::SelfCpuMem => fmt::bytes(r.self_cpu_mem_bytes),
        OpCol::DeviceMem => fmt::bytes(r.device_mem_bytes),
        OpCol::SelfDeviceMem => fmt::bytes(r.self_device_mem_bytes),
        OpCol::Flops => fmt::flops(r.flops),
        // Filled by the view from the per-step distribution and the forward ↔ backward pairs.
        OpCol::Steps | OpCol::BackwardOf => String::new(),
        OpCol::Roof => r.pct_of_roof.map(fmt::frac).unwrap_or_default(),
    }
}

/// `order` with each forward op's backward rows right under it (`AddmmBackward0` and its
/// `evaluate_function` wrapper under `aten::addmm`), in the order they had; backward rows whose
/// forward op is not shown stay where they were.
fn group_by_forward(t: &OpTable, bw: &[BackwardRow], order: &[usize]) -> Vec<usize> {
    let fwd_of: Vec<Option<&str>> = order
        .iter()
        .map(|&i| backward_of(bw, &t.rows[i].name).first().copied())
        .collect();
    let shown: std::collections::HashSet<&str> =
        order.iter().map(|&i| t.rows[i].name.as_str()).collect();
    let mut under: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (k, f) in fwd_of.iter().enumerate() {
        if let Some(f) = f.filter(|f| shown.contains(f)) {
            under.entry(f).or_default().push(order[k]);
        }
    }
    let mut out = Vec::with_capacity(order.len());
    for (k, &i) in order.iter().enumerate() {
        if fwd_of[k].is_some_and(|f| shown.contains(f)) {
            continue;
        }
        out.push(i);
        if let Some(v) = under.remove(t.rows[i].name.as_str()) {
            out.extend(v);
        }
    }
    out
}

fn csv(t: &OpTable, order: &[usize]) -> String {
    let mut s = String::from("name,input_shapes,on_device,calls,self_cpu_us,cpu_total_us,self_device_us,device_total_us,self_cpu_mem_bytes,cpu_mem_bytes,self_device_mem_bytes,device_mem_bytes,flops\n");
    for &i in order {
        let r = &t.rows[i];
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            export::csv_field(&r.name),
            export::csv_field(r.input_shapes.as_deref().unwrap_or("")),
            r.on_device,
            r.calls,
            fmt::us(r.self_cpu_ns),
            fmt::us(r.cpu_total_ns),
            fmt::us(r.self_device_ns),
            fmt::us(r.device_total_ns),
            r.self_cpu_mem_bytes,
            r.cpu_mem_bytes,
            r.self_device_mem_bytes,
            r.device_mem_bytes,
            r.flops
        );
    }
    s
}

#[component]
pub fn OperatorsView(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return view! { <p class="muted">"Not a trace."</p> }.into_any();
    };
    let mem = &tf.trace.memory;
    let cpu_mem = mem.device_type.contains(&0);
    let dev_mem = mem.device_type.iter().any(|&d| d != 0);
    let has_device = tf
        .analysis_at(nav.scope)
        .ops
        .rows
        .iter()
        .any(|r| r.device_total_ns > 0);
    let has_flops = tf
        .analysis_at(nav.scope)
        .ops
        .rows
        .iter()
        .any(|r| r.flops > 0.0);
    let has_roof = tf
        .analysis_at(nav.scope)
        .ops
        .rows
        .iter()
        .any(|r| r.pct_of_roof.is_some());
    let grouped: Arc<OnceLock<OpTable>> = Arc::new(OnceLock::new());
    let filter = RwSignal::new(String::new());
    let group = RwSignal::new(false);
    // Forward ↔ backward pairs of the scope: the "Backward of" column and the grouping by them.
    let bw: Arc<Vec<BackwardRow>> = Arc::new(tf.analysis_at(nav.scope).backward.clone());
    let has_backward = !bw.is_empty();
    let by_fwd = RwSignal::new(false);
    let side = RwSignal::new(if has_device { Side::Both } else { Side::Cpu });
    let sort = RwSignal::new(Some((OpCol::SelfCpu, true)) as Sort<OpCol>);
    let copied = RwSignal::new(false);
    // The table shown: plain, or grouped by input shape (computed on first use).
    let store = StoredValue::new((session.clone(), grouped));
    let with_table = move |shapes: bool, f: &mut dyn FnMut(&OpTable)| {
        store.with_value(|(s, g)| {
            if let Some(tf) = s.trace(file) {
                if shapes {
                    f(g.get_or_init(|| {
                        let mut t = op_table(
                            &tf.trace,
                            OpOptions {
                                group_by_input_shape: true,
                            },
                        );
                        // Each (name, shapes) row's % of roof is its roofline group's.
                        let roof = &tf.analysis().roofline;
                        for r in &mut t.rows {
                            let shapes = r.input_shapes.as_deref().unwrap_or("");
                            r.pct_of_roof = roof
                                .ops
                                .iter()
                                .find(|o| o.name == r.name && o.shapes == shapes)
                                .and_then(|o| o.rating.pct_of_roof);
                        }
                        t
                    }));
                } else {
                    f(&tf.analysis_at(nav.scope).ops);
                }
            }
        })
    };
    let bw1 = bw.clone();
    let order = Memo::new(move |_| {
        let needle = filter.get().to_lowercase();
        let key = sort.get();
        let mut v: Vec<usize> = Vec::new();
        with_table(group.get(), &mut |t: &OpTable| {
            v = (0..t.rows.len())
                .filter(|&i| needle.is_empty() || t.rows[i].name.to_lowercase().contains(&needle))
                .collect();
            if let Some((k, desc)) = key {
                tracelight_core::sort::by(&mut v, |&a, &b| {
                    let (x, y) = (&t.rows[a], &t.rows[b]);
                    let o = match (sort_value(x, k), sort_value(y, k)) {
                        (Some(p), Some(q)) => p.total_cmp(&q),
                        _ if k == OpCol::Shapes => x.input_shapes.cmp(&y.input_shapes),
                        _ => x.name.cmp(&y.name),
                    };
                    (if desc { o.reverse() } else { o }).then_with(|| x.name.cmp(&y.name))
                });
            }
            if by_fwd.get() {
                v = group_by_forward(t, &bw1, &v);
            }
        });
        Arc::new(v)
    });
    let has_steps = tf.analysis_at(nav.scope).per_step.steps.len() >= 2;
    let cols = Signal::derive(move || {
        columns(
            side.get(),
            group.get(),
            Has {
                cpu_mem,
                dev_mem,
                flops: has_flops,
                steps: has_steps,
                backward: has_backward,
                roof: has_roof,
            },
        )
    });
    let bw2 = bw.clone();
    let cell = Callback::new(move |(r, col): (usize, OpCol)| {
        let mut out = String::new();
        let o = order.get_untracked();
        if let Some(&i) = o.get(r) {
            with_table(group.get_untracked(), &mut |t: &OpTable| {
                let row = &t.rows[i];
                out = match col {
                    OpCol::BackwardOf => backward_of(&bw2, &row.name).join(", "),
                    // Grouped by forward op, a backward row under its forward op is indented.
                    OpCol::Name
                        if by_fwd.get_untracked() && !backward_of(&bw2, &row.name).is_empty() =>
                    {
                        format!("\u{2003}↳ {}", row.name)
                    }
                    _ => cell_text(t, row, col),
                };
            });
            if col == OpCol::Steps {
                store.with_value(|(s, _)| {
                    if let Some(tf) = s.trace(file) {
                        let a = tf.analysis_at(nav.scope);
                        let d = a.ops.rows.get(i).and_then(|row| {
                            if row.on_device {
                                a.per_step.kernel(&row.name)
                            } else {
                                a.per_step.op(&row.name)
                            }
                        });
                        if let Some(d) = d {
                            out = fmt::per_step(d, &a.per_step.steps);
                        }
                    }
                });
            }
        }
        out
    });
    let s2 = session.clone();
    let on_activate = Callback::new(move |r: usize| {
        let Some(&i) = order.get_untracked().get(r) else {
            return;
        };
        let mut target = None;
        with_table(group.get_untracked(), &mut |t: &OpTable| {
            target = Some(t.rows[i].clone())
        });
        if let (Some(row), Some(tf)) = (target, s2.trace(file)) {
            let label = match &row.input_shapes {
                Some(sh) => format!("{} {sh}", row.name),
                None => row.name.clone(),
            };
            let slices = tf.in_scope(nav.scope, reveal::op_slices(&tf.trace, &row));
            nav.reveal(file, slices, label);
        }
    });
    let on_sort = Callback::new(move |k: OpCol| {
        sort.update(|s| *s = next_sort(*s, k, !matches!(k, OpCol::Name | OpCol::Shapes)))
    });
    let shown = move |f: &mut dyn FnMut(&OpTable, &[usize])| {
        let o = order.get_untracked();
        with_table(group.get_untracked(), &mut |t: &OpTable| f(t, &o));
    };
    let on_copy = move |_| {
        shown(&mut |t: &OpTable, o: &[usize]| {
            let view = OpTable {
                rows: o.iter().map(|&i| t.rows[i].clone()).collect(),
                ..t.clone()
            };
            let text = render(
                &view,
                TableOptions {
                    row_limit: None,
                    cpu_memory: cpu_mem,
                    device_memory: dev_mem,
                    flops: false,
                },
            );
            export::copy(&text);
            copied.set(true);
        });
    };
    let name = tf.facts.file.clone();
    let on_csv = move |_| {
        shown(&mut |t: &OpTable, o: &[usize]| {
            let _ = export::download(&format!("{name}.operators.csv"), "text/csv", &csv(t, o));
        });
    };
    let len = Signal::derive(move || order.get().len());
    view! {
        <section class="view" data-testid="operators-view">
            <div class="toolbar">
                <input class="search" type="search" placeholder="Filter by name…" data-testid="op-filter"
                    prop:value=move || filter.get() on:input=move |ev| filter.set(event_target_value(&ev)) />
                <label class="check"><input type="checkbox" data-testid="op-group-shapes"
                    on:change=move |ev| group.set(event_target_checked(&ev)) />" Group by input shape"</label>
                {has_backward.then(|| view! {
                    <label class="check" title="each forward op with its backward nodes right under it"><input type="checkbox" data-testid="op-group-fwd"
                        on:change=move |ev| by_fwd.set(event_target_checked(&ev)) />" Backward under forward op"</label>
                })}
                <select data-testid="op-side" on:change=move |ev| side.set(match event_target_value(&ev).as_str() {
                    "cpu" => Side::Cpu, "device" => Side::Device, _ => Side::Both })>
                    <option value="both" selected=has_device>"CPU + device columns"</option>
                    <option value="cpu" selected=!has_device>"CPU columns"</option>
                    <option value="device">"Device columns"</option>
                </select>
                <span class="muted" data-testid="op-count">{move || format!("{} rows", len.get())}</span>
                <span class="spacer"></span>
                <button class="button" data-testid="op-copy" on:click=on_copy>
                    {move || if copied.get() { "Copied ✓" } else { "Copy as key_averages table" }}
                </button>
                <button class="button" data-testid="op-csv" on:click=on_csv>"Export CSV"</button>
            </div>
            <VTable cols=cols len=len cell=cell on_activate=on_activate on_sort=on_sort sort=sort testid="op-table" visible_rows=22 label="Operators" />
            <p class="hint">"Click a row (or Enter) to see its occurrences in the timeline. Percentages are of the Self CPU / Self device totals, as in torch."</p>
            <details class="note" data-testid="op-notes" open=true>
                <summary>"Where this table differs from the raw events (it follows torch's key_averages)"</summary>
                <ul>
                    <li><b>"ProfilerStep*"</b>": every " <code>"ProfilerStep#N"</code> " slice is merged into one row, as torch does."</li>
                    <li><b>"Same-name child"</b>": an op whose only child has the same name (the redispatched " <code>"aten::mul"</code> " inside " <code>"aten::mul"</code> ") is counted once; its children belong to the parent."</li>
                    <li><b>"Async collectives"</b>": " <code>"nccl:*"</code> ", " <code>"gloo:*"</code> " (and mpi/ucc/xccl) annotations start on one thread and end on another; they have no parent or children and Self CPU 0."</li>
                    <li><b>"with_stack"</b>": " <code>"python_function"</code> " events are not rows. In traces from torch versions that write a " <code>"CallFrom"</code> " arg on them (2.15) they nest like ops, as in that torch's tree: a user annotation's Self CPU excludes the Python frames directly under it, and a frame that outlives the annotation takes the events after it. Older traces (2.11) leave them out, as that torch does."</li>
                    <li><b>"Activity Buffer Request"</b>": CUPTI's buffer request (written under pid -1) counts as a child of the op it interrupted on the main thread and repeats that op's device time, as torch shows it; whole-trace TFLOPS count each kernel once."</li>
                    <li><b>"[memory]"</b>": allocations that fall inside no CPU event form a row of their own. GPU-side user annotations are device rows; they are left out of the Self device total."</li>
                    <li>"Profiler utility events (" <code>"profiler::_record_function_*"</code> ", " <code>"aten::is_leaf"</code> ", " <code>"aten::output_nr"</code> ", " <code>"aten::_version"</code> ") are dropped before the tree is built. Kernels, memcpy and memset appear as device rows with no CPU time."</li>
                </ul>
            </details>
        </section>
    }
    .into_any()
}
