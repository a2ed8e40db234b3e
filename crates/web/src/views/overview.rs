//! Overview: the first screen after a load, answering "why is my step slow": step time, GPU
//! utilization, the step breakdown, kernel categories, the top ops and kernels, peak memory,
//! achieved TFLOPS / MFU, the recommendations (each linked to its events in the timeline), the
//! Markdown summary download, then the file's facts and tracks.

use crate::platform::export;
use crate::session::reveal;
use crate::session::{Content, FineRules, Nav, SessionRef, Tab};
use crate::views::facts::{FactsPanel, TrackList};
use crate::views::recs::Recommendations;
use crate::views::steps::StepBreakdown;
use crate::widgets::bars::{Bar, Bars};
use crate::widgets::fmt;
use crate::widgets::later::Later;
use crate::widgets::palette::color_of;
use crate::widgets::table::{columns, Col, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::memory::headline_peak;
use tracelight_core::analysis::scope::ScopeSpec;
use tracelight_core::report::num;
use tracelight_core::report::summary::markdown;

/// Whether the session has anything for the Memory tab.
fn has_memory(session: &SessionRef) -> bool {
    session.files.iter().any(|f| match &f.content {
        Content::Trace(t) => !t.trace.memory.ts.is_empty(),
        Content::Snapshot(_) | Content::MemoryTimeline(_) => true,
        Content::ExecTrace(_) | Content::FlightRecorder(_) => false,
    })
}

#[component]
pub fn Overview(session: SessionRef, file: usize) -> impl IntoView {
    let Some(tf) = session.trace(file) else {
        return view! { <FactsPanel session=session.clone() file=file /> }.into_any();
    };
    // Finer categories under the session's rules (edited on the Kernels tab), here and in the export.
    let rules = FineRules::current().0;
    let scope = use_context::<Nav>().unwrap_or_default().scope;
    let a = tf.analysis_with_in(&rules.get_untracked(), &scope.get_untracked());
    let s2 = session.clone();
    let on_summary = move |_| {
        if let Some(tf) = s2.trace(file) {
            let md = markdown(
                &tf.facts,
                &tf.analysis_with_in(&rules.get_untracked(), &scope.get_untracked()),
            );
            let _ = export::download(
                &format!("{}.summary.md", tf.facts.file),
                "text/markdown",
                &md,
            );
        }
    };
    // A big trace's cards come a task each; a small one's at once (its whole render is short).
    let stagger = u32::from(session.files.get(file).is_some_and(|f| f.is_big()));
    let total_gpu = a.kernels.total_ns;
    let seed: Vec<Bar> = a
        .categories
        .seed
        .iter()
        .map(|(k, v)| Bar {
            key: (*k).to_owned(),
            label: (*k).to_owned(),
            value_ns: *v,
            color: color_of(k),
        })
        .collect();
    let fine: Vec<Bar> = a
        .categories
        .fine
        .iter()
        .map(|(k, v)| Bar {
            key: k.clone(),
            label: k.clone(),
            value_ns: *v,
            color: color_of(k),
        })
        .collect();
    view! {
        <div class="overview" data-testid="overview">
            <FactsPanel session=session.clone() file=file />
            <div class="toolbar">
                <button class="button" data-testid="download-summary" on:click=on_summary>"Download summary (Markdown)"</button>
                <span class="hint">"the same text as " <code>"tracelight summary"</code></span>
            </div>
            <Headline session=session.clone() file=file />
            {
                let session = session.clone();
                view! { <Later after=stagger><crate::views::graphs::GpuHealthLine session=session.clone() file=file /></Later> }
            }
            // The cards below the headline, a task each (`Later`): one render of them all took
            // 100–200 ms on a big trace.
            {(total_gpu > 0).then(|| {
                let session = session.clone();
                view! {
                    <Later after=stagger>
                        <section class="card" data-testid="idle-card">
                            <h2>"Why the GPU is idle"</h2>
                            <crate::views::idle::IdleCauses session=session.clone() file=file />
                        </section>
                    </Later>
                }
            })}
            {if total_gpu == 0 {
                // A CPU-only trace: no empty GPU cards; the operators sit beside the breakdown.
                let session = session.clone();
                view! {
                    <Later after=2*stagger>
                        <div class="grid2">
                            <section class="card">
                                <h2>"Step breakdown"</h2>
                                <StepBreakdown session=session.clone() file=file />
                            </section>
                            <section class="card" data-testid="top-ops-card">
                                <h2>"Top operators " <span class="muted">"by self CPU"</span></h2>
                                <TopOps session=session.clone() file=file />
                            </section>
                        </div>
                    </Later>
                }.into_any()
            } else {
                let (s1, s2) = (session.clone(), session.clone());
                let quirk = crate::views::kernels::seed_quirk(&a.kernels.rows);
                view! {
                    <Later after=2*stagger>
                        <div class="grid2">
                            <section class="card">
                                <h2>"Step breakdown"</h2>
                                <StepBreakdown session=s1.clone() file=file />
                            </section>
                            <section class="card">
                                <h2>"Kernel categories"</h2>
                                <h3>"Seed classification (matmul / comm / memory / other)"</h3>
                                <Bars bars=seed.clone() total_ns=total_gpu testid="seed-categories" />
                                {quirk.clone().map(|q| view! { <p class="hint">{q}</p> })}
                                <h3>"Finer classification"</h3>
                                <Bars bars=fine.clone() total_ns=total_gpu testid="fine-categories" />
                            </section>
                        </div>
                    </Later>
                    <Later after=3*stagger>
                        <div class="grid2">
                            <section class="card" data-testid="top-ops-card">
                                <h2>"Top operators " <span class="muted">"by self CPU"</span></h2>
                                <TopOps session=s2.clone() file=file />
                            </section>
                            <section class="card">
                                <h2>"Top kernels " <span class="muted">"by total GPU time"</span></h2>
                                <TopKernels session=s2.clone() file=file />
                            </section>
                        </div>
                    </Later>
                }.into_any()
            }}
            {
                let (s3, s4) = (session.clone(), session);
                view! {
                    <Later after=4*stagger>
                        <section class="card">
                            <h2>"Recommendations"</h2>
                            <Recommendations session=s3.clone() file=file />
                        </section>
                    </Later>
                    <Later after=5*stagger>
                        <TrackList session=s4.clone() file=file />
                    </Later>
                }
            }
        </div>
    }
    .into_any()
}

/// The headline cards: step time, GPU utilization, peak memory, TFLOPS / MFU.
/// The headline cards (step time, GPU utilization, peak memory, TFLOPS / MFU); embed mode shows
/// them above the timeline.
#[component]
pub fn Headline(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let a = tf.analysis_at(nav.scope);
    let step_ns = a.step_time_ns();
    let scoped = nav.scope.with_untracked(|s| *s != ScopeSpec::Whole)
        && tf.scope_error(&nav.scope.get_untracked()).is_none();
    let step_note = if scoped {
        // Under a scope the rows are its windows (one per step or occurrence picked).
        match a.steps.len() {
            1 => "the scope's window".to_owned(),
            n => format!("mean of the scope's {n} windows"),
        }
    } else if a.steps.is_empty() {
        "no step annotation: whole trace".to_owned()
    } else {
        // The median beside the mean, and the warm-up step that pulls the mean up named
        // (core's `steps::warmup`: the first step at 2× the others' median or more).
        let median = tracelight_core::analysis::steps::median_ns(&a.steps)
            .map(|m| format!(" · median {}", fmt::dur_f(m)))
            .unwrap_or_default();
        let warm = tracelight_core::analysis::steps::warmup(&a.steps)
            .map(|r| {
                format!(
                    " · {} is a warm-up ({}× the median)",
                    a.steps[0].name,
                    num::sig3(r)
                )
            })
            .unwrap_or_default();
        format!("mean of {} steps{median}{warm}", a.steps.len())
    };
    let util = a.gpu.utilization;
    let util_note = format!(
        "busy {} of the {} window",
        fmt::dur(a.gpu.busy_ns),
        if scoped {
            "scope's"
        } else if a.gpu.window_from_steps {
            "ProfilerStep"
        } else {
            "trace"
        }
    );
    let (peak_alloc, peak_res) = headline_peak(&a.memory);
    let peak_op = a
        .memory
        .iter()
        .filter(|m| m.device_type != 0)
        .max_by_key(|m| m.peak_allocated_bytes)
        .or_else(|| a.memory.first())
        .and_then(|m| m.peak_op.clone());
    let mem = has_memory(&session);
    let mem_events: u64 = a.memory.iter().map(|m| m.events).sum();
    let f = a.flops.clone();
    let achieved = f.achieved_tflops_window;
    let user_peak = RwSignal::new(None::<f64>);
    let mfu = move || match (achieved, f.mfu, user_peak.get()) {
        (Some(a), _, Some(p)) if p > 0.0 => Some(a / p),
        (_, m, _) => m,
    };
    let peak_known = f.peak_tflops;
    let dtype = f.dominant_dtype.clone().unwrap_or_else(|| "fp32".into());
    let device = f.device.clone().unwrap_or_else(|| "unknown device".into());
    // One dtype: its peak; several: the FLOP-weighted blend of their peaks, each listed.
    let peak_text = peak_known.map(|p| {
        let source = f.peak_source.clone().unwrap_or_else(|| "table".into());
        if f.by_dtype.len() > 1 {
            format!("peak {} (FLOP-weighted blend: {source})", num::tflops(p))
        } else {
            format!("peak {} {dtype} ({source})", num::tflops(p))
        }
    });
    let busy = f.achieved_tflops_device;
    // The title names the unit the value is in (`Achieved GFLOPS`, not TFLOPS over GFLOPS).
    let rate_unit = achieved.map_or("FLOPS", num::tflops_unit);
    let gpu = util.is_some();
    view! {
        <div class="cards">
            <div class="stat">
                <div class="stat-label">"Step time"</div>
                <div class="stat-value" data-testid="step-time" data-ns=step_ns.to_string()>{fmt::dur(step_ns)}</div>
                <div class="stat-note">{step_note}</div>
            </div>
            {gpu.then(|| view! {
            <div class="stat">
                <div class="stat-label">"GPU utilization"</div>
                <div class="stat-value" data-testid="gpu-util" data-value=util.map(|u| u.to_string()).unwrap_or_default()>
                    {util.map_or_else(|| "no kernels".to_owned(), fmt::frac)}
                </div>
                <div class="stat-note">{if util.is_some() { util_note } else { "no GPU kernels in this trace".to_owned() }}</div>
            </div>
            })}
            <div class="stat">
                <div class="stat-label">"Peak memory"</div>
                <div class="stat-value" data-testid="peak-memory" data-bytes=peak_alloc.to_string()>
                    {if peak_alloc > 0 { fmt::bytes(peak_alloc) } else { "–".to_owned() }}
                </div>
                <div class="stat-note">
                    {if peak_res > 0 {
                        format!("reserved {}", fmt::bytes(peak_res))
                    } else if peak_alloc > 0 {
                        format!("allocated, from {mem_events} [memory] events")
                    } else if mem_events > 0 {
                        format!("{mem_events} [memory] events without totals")
                    } else {
                        "no [memory] events".to_owned()
                    }}
                    {peak_op.map(|o| format!(" · at {o}"))}
                    {mem.then(|| view! { " " <button class="link" data-testid="open-memory" on:click=move |_| nav.tab.set(Tab::Memory)>"Memory →"</button> })}
                </div>
            </div>
            <div class="stat">
                <div class="stat-label" data-testid="tflops-title">{if gpu { format!("Achieved {rate_unit} / MFU") } else { format!("Achieved {rate_unit}") }}</div>
                <div class="stat-value" data-testid="tflops" data-tflops=achieved.map(|a| a.to_string()).unwrap_or_default()>
                    {achieved.map_or_else(|| "–".to_owned(), fmt::tflops)}
                    <span class="stat-sub" data-testid="mfu" data-mfu=move || mfu().map(|m| m.to_string()).unwrap_or_default()>{move || mfu().map(|m| format!(" · MFU {}", fmt::frac(m))).unwrap_or_default()}</span>
                </div>
                <div class="stat-note">
                    {if achieved.is_none() {
                        view! { "no FLOPs: no matmul/conv/attention shapes in the trace" }.into_any()
                    } else if !gpu {
                        // MFU is a GPU figure: a CPU trace has no peak worth asking for.
                        view! { <span data-testid="mfu-cpu">{format!("{} on the CPU · MFU is for GPU traces", fmt::flops(f.total_flops))}</span> }.into_any()
                    } else {
                        let known = peak_text.clone().map(|p| format!("{} on {device} · {p} · ", fmt::flops(f.total_flops)));
                        let busy = busy.map(|b| view! {
                            <div data-testid="tflops-busy" title="FLOPs of the ops that launched device work ÷ the device time of those ops: the rate while their kernels run">
                                {format!("{} while their kernels run", fmt::tflops(b))}
                            </div>
                        });
                        view! {
                            {busy}
                            {known}
                            <label>{if peak_known.is_some() { "other peak: ".to_owned() } else { format!("{device}: peak TFLOPS ({dtype}) ") }}
                                <input class="peak-input" type="number" min="0" step="any" data-testid="peak-input"
                                    placeholder=if peak_known.is_some() { "TFLOPS" } else { "enter" }
                                    on:input=move |ev| user_peak.set(event_target_value(&ev).parse::<f64>().ok()) />
                            </label>
                        }.into_any()
                    }}
                </div>
            </div>
        </div>
    }
    .into_any()
}

columns! {
    /// The Overview's top-operator table.
    enum TopOpCol { Name = "name", Calls = "calls", SelfCpu = "self_cpu", SelfCpuPct = "self_cpu_pct", DeviceTotal = "device_total" }
}

columns! {
    /// The Overview's top-kernel table.
    enum TopKCol { Name = "name", Calls = "calls", Total = "total", Pct = "pct", Category = "category" }
}

#[component]
fn TopOps(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let a = tf.analysis_at(nav.scope);
    let rows: Arc<Vec<usize>> = Arc::new(
        (0..a.ops.rows.len())
            .filter(|&i| !a.ops.rows[i].on_device)
            .take(5)
            .collect(),
    );
    let total = a.ops.self_cpu_total_ns;
    let cols = vec![
        Col::name(TopOpCol::Name, "Operator", 200),
        Col::num(TopOpCol::Calls, "Calls", 60),
        Col::num(TopOpCol::SelfCpu, "Self CPU", 96),
        Col::num(TopOpCol::SelfCpuPct, "%", 56),
    ];
    let mut cols = cols;
    if a.ops.self_device_total_ns > 0 {
        cols.push(Col::num(TopOpCol::DeviceTotal, "Device total", 100));
    }
    let (s1, r1) = (session.clone(), rows.clone());
    let cell = Callback::new(move |(r, key): (usize, TopOpCol)| {
        let Some(row) = r1.get(r).and_then(|&i| {
            s1.trace(file)
                .map(|t| &t.analysis_at(nav.scope).ops.rows[i])
        }) else {
            return String::new();
        };
        match key {
            TopOpCol::Name => row.name.clone(),
            TopOpCol::Calls => row.calls.to_string(),
            TopOpCol::SelfCpu => fmt::dur(row.self_cpu_ns),
            TopOpCol::SelfCpuPct => fmt::pct(row.self_cpu_ns, total),
            TopOpCol::DeviceTotal => fmt::dur(row.device_total_ns),
        }
    });
    let (s2, r2) = (session.clone(), rows.clone());
    let on_activate = Callback::new(move |r: usize| {
        let Some(tf) = s2.trace(file) else { return };
        let Some(row) = r2.get(r).map(|&i| &tf.analysis_at(nav.scope).ops.rows[i]) else {
            return;
        };
        let slices = tf.in_scope(nav.scope, reveal::op_slices(&tf.trace, row));
        nav.reveal(file, slices, row.name.clone());
    });
    let n = rows.len();
    view! {
        <VTable cols=cols len=n cell=cell on_activate=on_activate sort=Signal::stored(None) testid="top-ops" visible_rows=5 label="Top operators" />
        <button class="link" on:click=move |_| nav.tab.set(Tab::Operators)>"All operators →"</button>
    }
    .into_any()
}

#[component]
fn TopKernels(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let n = tf.analysis_at(nav.scope).kernels.rows.len().min(5);
    let cols = vec![
        Col::name(TopKCol::Name, "Kernel", 200),
        Col::num(TopKCol::Calls, "Calls", 60),
        Col::num(TopKCol::Total, "Total", 96),
        Col::num(TopKCol::Pct, "% GPU", 64),
        Col::text(TopKCol::Category, "Category", 110),
    ];
    let s1 = session.clone();
    let cell = Callback::new(move |(r, key): (usize, TopKCol)| {
        let Some(k) = s1
            .trace(file)
            .and_then(|t| t.analysis_at(nav.scope).kernels.rows.get(r))
        else {
            return String::new();
        };
        match key {
            TopKCol::Name => k.name.clone(),
            TopKCol::Calls => k.calls.to_string(),
            TopKCol::Total => fmt::dur(k.total_ns),
            TopKCol::Pct => num::share(k.pct_of_gpu / 100.0),
            TopKCol::Category => k.fine_category.clone(),
        }
    });
    let s2 = session.clone();
    let on_activate = Callback::new(move |r: usize| {
        let Some(tf) = s2.trace(file) else { return };
        let Some(k) = tf.analysis_at(nav.scope).kernels.rows.get(r) else {
            return;
        };
        let slices = tf.in_scope(nav.scope, reveal::gpu_slices(&tf.trace, &k.name));
        nav.reveal(file, slices, k.name.clone());
    });
    view! {
        {if n == 0 {
            view! { <p class="muted">"No GPU kernels in this trace."</p> }.into_any()
        } else {
            view! {
                <VTable cols=cols len=n cell=cell on_activate=on_activate sort=Signal::stored(None) testid="top-kernels" visible_rows=5 label="Top kernels" />
                <button class="link" on:click=move |_| nav.tab.set(Tab::Kernels)>"All kernels →"</button>
            }.into_any()
        }}
    }
    .into_any()
}
