//! Kernels: every GPU kernel / memcpy / memset name with its time, the seed and finer categories
//! (docs/definitions.md; the finer rules are listed and editable here), launch geometry, registers,
//! occupancy and a tensor-core hint; a row opens its occurrences in the timeline.

use crate::session::reveal;
use crate::session::{FineRules, Nav, SessionRef};
use crate::widgets::bars::{Bar, Bars};
use crate::widgets::fmt;
use crate::widgets::palette::color_of;
use crate::widgets::table::{columns, next_sort, Col, Sort, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::kernels::{
    default_fine_rules, fine_category_with, FineRule, KernelRow, SEED_RULES,
};

/// When the seed's bare `mm` rule files communication kernels under matmul (`ncclDevComm` in the
/// signature), say how much, so the seed bars are not misread.
pub fn seed_quirk(rows: &[KernelRow]) -> Option<String> {
    let (n, ns) = rows
        .iter()
        .filter(|k| k.category == "matmul" && k.fine_category == "comm")
        .fold((0, 0), |(n, ns), k| (n + 1, ns + k.total_ns));
    (n > 0).then(|| {
        format!(
            "Seed quirk: {} of communication kernels ({n} names) count as matmul, because their names contain \"mm\" (e.g. ncclDevComm) and matmul is checked before comm.",
            fmt::dur(ns)
        )
    })
}

fn rules_text(rules: &[FineRule]) -> String {
    rules
        .iter()
        .map(|r| format!("{}: {}", r.category, r.contains.join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `category: a, b, c` per line; lines without a colon are ignored.
fn parse_rules(text: &str) -> Vec<FineRule> {
    text.lines()
        .filter_map(|l| {
            let (c, subs) = l.split_once(':')?;
            let contains: Vec<String> = subs
                .split(',')
                .map(|s| s.trim().to_ascii_lowercase())
                .filter(|s| !s.is_empty())
                .collect();
            (!c.trim().is_empty() && !contains.is_empty()).then(|| FineRule {
                category: c.trim().to_owned(),
                contains,
            })
        })
        .collect()
}

/// The tensor-core hint's cell (core's [`KernelRow::tensor_cores`]); empty when the name says nothing.
fn tensor_cores(k: &KernelRow) -> &'static str {
    k.tensor_cores.map_or("", |t| t.label())
}

fn dims(d: Option<[u32; 3]>) -> String {
    d.map(|[x, y, z]| format!("{x}×{y}×{z}"))
        .unwrap_or_default()
}

columns! {
    /// The kernel table's columns.
    enum KCol {
        Name = "name",
        Calls = "calls",
        Total = "total",
        Pct = "pct",
        Avg = "avg",
        Min = "min",
        Max = "max",
        Category = "category",
        Fine = "fine",
        TensorCores = "tc",
        Grid = "grid",
        Block = "block",
        Registers = "registers",
        Occupancy = "occupancy",
        LaunchingOp = "launching_op",
        Steps = "steps",
        Roof = "pct_of_roof",
    }
}

/// The number a column sorts by; `None` for text columns. Missing values sort below zero.
fn sort_value(k: &KernelRow, col: KCol) -> Option<f64> {
    Some(match col {
        KCol::Calls => k.calls as f64,
        KCol::Total | KCol::Pct => k.total_ns as f64,
        KCol::Avg => k.avg_ns,
        KCol::Min => k.min_ns as f64,
        KCol::Max => k.max_ns as f64,
        KCol::Registers => k.registers.map_or(-1.0, f64::from),
        KCol::Occupancy => k.occupancy_pct.unwrap_or(-1.0),
        KCol::Roof => k.pct_of_roof.unwrap_or(-1.0),
        KCol::Name
        | KCol::Category
        | KCol::Fine
        | KCol::TensorCores
        | KCol::Grid
        | KCol::Block
        | KCol::LaunchingOp
        | KCol::Steps => return None,
    })
}

/// Numbers sort largest first on the first click, text A→Z.
fn sort_value_is_numeric(col: KCol) -> bool {
    !matches!(
        col,
        KCol::Name | KCol::Category | KCol::Fine | KCol::LaunchingOp | KCol::Steps
    )
}

/// A cell's text; `fine` is the row's category under the session's rules.
fn cell_text(k: &KernelRow, fine: &str, col: KCol) -> String {
    match col {
        KCol::Name => k.name.clone(),
        KCol::Calls => k.calls.to_string(),
        KCol::Total => fmt::dur(k.total_ns),
        KCol::Pct => fmt::frac(k.pct_of_gpu / 100.0),
        KCol::Avg => fmt::dur_f(k.avg_ns),
        KCol::Min => fmt::dur(k.min_ns),
        KCol::Max => fmt::dur(k.max_ns),
        // Filled by the view from the per-step distribution.
        KCol::Steps => String::new(),
        KCol::Category => k.category.to_owned(),
        KCol::Fine => fine.to_owned(),
        KCol::TensorCores => tensor_cores(k).to_owned(),
        KCol::Grid => dims(k.grid),
        KCol::Block => dims(k.block),
        KCol::Registers => k.registers.map(|r| r.to_string()).unwrap_or_default(),
        KCol::Occupancy => k
            .occupancy_pct
            .map(|o| fmt::frac(o / 100.0))
            .unwrap_or_default(),
        KCol::LaunchingOp => k.launching_op.clone().unwrap_or_default(),
        KCol::Roof => k.pct_of_roof.map(fmt::frac).unwrap_or_default(),
    }
}

#[component]
pub fn KernelsView(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return view! { <p class="muted">"Not a trace."</p> }.into_any();
    };
    if tf.analysis_at(nav.scope).kernels.rows.is_empty() {
        return view! { <section class="view" data-testid="kernels-view"><p class="muted">"No GPU kernels, copies or memsets in this trace."</p></section> }.into_any();
    }
    let store = StoredValue::new(session.clone());
    let with_rows = move |f: &mut dyn FnMut(&[KernelRow], i64)| {
        store.with_value(|s| {
            if let Some(tf) = s.trace(file) {
                let k = &tf.analysis_at(nav.scope).kernels;
                f(&k.rows, k.total_ns);
            }
        })
    };
    // The session's rules: an edit outlives a tab switch and reaches the Overview and its export.
    let rules = FineRules::current().0;
    let rules_draft = RwSignal::new(rules_text(&rules.get_untracked()));
    // Fine category per row under the current rules.
    let fine = Memo::new(move |_| {
        let r = rules.get();
        let mut v = Vec::new();
        with_rows(&mut |rows: &[KernelRow], _| {
            v = rows
                .iter()
                .map(|k| fine_category_with(&r, &k.name, k.kind))
                .collect();
        });
        Arc::new(v)
    });
    let filter = RwSignal::new(String::new());
    let cat = RwSignal::new(String::new());
    let sort = RwSignal::new(Some((KCol::Total, true)) as Sort<KCol>);
    let order = Memo::new(move |_| {
        let needle = filter.get().to_lowercase();
        let c = cat.get();
        let f = fine.get();
        let key = sort.get();
        let mut v = Vec::new();
        with_rows(&mut |rows: &[KernelRow], _| {
            v = (0..rows.len())
                .filter(|&i| needle.is_empty() || rows[i].name.to_lowercase().contains(&needle))
                .filter(|&i| {
                    c.is_empty() || rows[i].category == c || f.get(i).is_some_and(|x| *x == c)
                })
                .collect();
            if let Some((k, desc)) = key {
                let fine_of = |i: usize| f.get(i).map_or("", String::as_str);
                tracelight_core::sort::by(&mut v, |&a, &b| {
                    let o = match (sort_value(&rows[a], k), sort_value(&rows[b], k)) {
                        (Some(x), Some(y)) => x.total_cmp(&y),
                        _ => cell_text(&rows[a], fine_of(a), k).cmp(&cell_text(
                            &rows[b],
                            fine_of(b),
                            k,
                        )),
                    };
                    (if desc { o.reverse() } else { o })
                        .then_with(|| rows[a].name.cmp(&rows[b].name))
                });
            }
        });
        Arc::new(v)
    });
    let cols = vec![
        Col::name(KCol::Name, "Kernel", 380),
        Col::num(KCol::Calls, "Calls", 70),
        Col::num(KCol::Total, "Total", 96),
        Col::num(KCol::Pct, "% GPU", 68),
        Col::num(KCol::Avg, "Avg", 90),
        Col::num(KCol::Min, "Min", 90),
        Col::num(KCol::Max, "Max", 90),
        Col::text(KCol::Category, "Seed", 76)
            .tip("seed classification: matmul / comm / memory / other"),
        Col::text(KCol::Fine, "Category", 150).tip("finer classification (rules below)"),
        Col::text(KCol::TensorCores, "Tensor cores", 104).tip(
            "from the kernel name: tensor-core instruction shapes or tags; plain sgemm = fp32 SIMT",
        ),
        Col::text(KCol::Grid, "Grid", 92),
        Col::text(KCol::Block, "Block", 80),
        Col::num(KCol::Registers, "Regs", 60).tip("registers per thread"),
        Col::num(KCol::Occupancy, "Occupancy", 84).tip("mean est. achieved occupancy %"),
        Col::num(KCol::Roof, "% of roof", 84).tip(
            "where its launching op's FLOPs and bytes are known (the op launched this kernel alone): achieved ÷ the roof of its math unit and the memory bandwidth",
        ),
        Col::text(KCol::LaunchingOp, "Launched by", 180),
    ];
    let has_steps = tf.analysis_at(nav.scope).per_step.steps.len() >= 2;
    let mut cols = cols;
    if has_steps {
        cols.insert(
            7,
            Col::text(KCol::Steps, "Per step", 230)
                .tip("time in each ProfilerStep (launch-based): sparkline, median · max"),
        );
    }
    let cell = Callback::new(move |(r, col): (usize, KCol)| {
        let mut out = String::new();
        let Some(&i) = order.get_untracked().get(r) else {
            return out;
        };
        let f = fine.get_untracked();
        if col == KCol::Steps {
            store.with_value(|s| {
                if let Some(tf) = s.trace(file) {
                    let a = tf.analysis_at(nav.scope);
                    if let Some(d) = a
                        .kernels
                        .rows
                        .get(i)
                        .and_then(|k| a.per_step.kernel(&k.name))
                    {
                        out = fmt::per_step(d, &a.per_step.steps);
                    }
                }
            });
            return out;
        }
        with_rows(&mut |rows: &[KernelRow], _| {
            out = cell_text(&rows[i], f.get(i).map_or("", String::as_str), col);
        });
        out
    });
    let on_activate = Callback::new(move |r: usize| {
        let Some(&i) = order.get_untracked().get(r) else {
            return;
        };
        store.with_value(|s| {
            if let Some(tf) = s.trace(file) {
                if let Some(k) = tf.analysis_at(nav.scope).kernels.rows.get(i) {
                    let slices = tf.in_scope(nav.scope, reveal::gpu_slices(&tf.trace, &k.name));
                    nav.reveal(file, slices, k.name.clone());
                }
            }
        });
    });
    let on_sort = Callback::new(move |k: KCol| {
        sort.update(|s| *s = next_sort(*s, k, sort_value_is_numeric(k)))
    });
    let seed_bars = move || {
        let mut out = (Vec::new(), 0);
        store.with_value(|s| {
            if let Some(tf) = s.trace(file) {
                let a = tf.analysis_at(nav.scope);
                out = (
                    a.categories
                        .seed
                        .iter()
                        .map(|(k, v)| Bar {
                            key: (*k).into(),
                            label: (*k).into(),
                            value_ns: *v,
                            color: color_of(k),
                        })
                        .collect(),
                    a.kernels.total_ns,
                );
            }
        });
        out
    };
    let fine_bars = move || {
        let f = fine.get();
        let mut sums: Vec<(String, i64)> = Vec::new();
        let mut total = 0;
        with_rows(&mut |rows: &[KernelRow], t| {
            total = t;
            for (k, c) in rows.iter().zip(f.iter()) {
                match sums.iter_mut().find(|x| &x.0 == c) {
                    Some(x) => x.1 += k.total_ns,
                    None => sums.push((c.clone(), k.total_ns)),
                }
            }
        });
        tracelight_core::sort::by(&mut sums, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let bars: Vec<Bar> = sums
            .into_iter()
            .map(|(k, v)| Bar {
                color: color_of(&k),
                key: k.clone(),
                label: k,
                value_ns: v,
            })
            .collect();
        view! { <Bars bars=bars total_ns=total testid="kernel-fine-chart" /> }
    };
    let (seed, seed_total) = seed_bars();
    let quirk = seed_quirk(&tf.analysis_at(nav.scope).kernels.rows);
    let categories = move || {
        let mut c: Vec<String> = fine.get().iter().cloned().collect();
        c.extend(["matmul", "comm", "memory", "other"].map(String::from));
        c.sort();
        c.dedup();
        c.into_iter()
            .map(|c| view! { <option value=c.clone()>{c.clone()}</option> })
            .collect_view()
    };
    let seed_rules = SEED_RULES
        .iter()
        .map(|(c, subs)| view! { <li><b>{*c}</b>": " {subs.join(", ")}</li> })
        .collect_view();
    let len = Signal::derive(move || order.get().len());
    view! {
        <section class="view" data-testid="kernels-view">
            <div class="grid2">
                <section class="card">
                    <h2>"Seed categories"</h2>
                    <Bars bars=seed total_ns=seed_total testid="kernel-seed-chart" />
                    {quirk.map(|q| view! { <p class="hint" data-testid="seed-quirk">{q}</p> })}
                    <details class="note">
                        <summary>"Seed rules (KempnerForge, checked in order on the lowercased name)"</summary>
                        <ul>{seed_rules}<li><b>"other"</b>": everything else"</li></ul>
                        <p class="muted">"Quirk kept on purpose: the bare " <code>"mm"</code> " also matches names such as " <code>"…_comm_…"</code> " or " <code>"summary"</code> ", so some NCCL kernels land in matmul; flash attention, softmax and elementwise kernels are other."</p>
                    </details>
                </section>
                <section class="card">
                    <h2>"Finer categories"</h2>
                    {fine_bars}
                    <details class="note">
                        <summary data-testid="fine-rules-open">"Rules (first match wins; edit and apply to reclassify here, on the Overview and on the timeline's colours)"</summary>
                        <textarea class="rules" data-testid="fine-rules" rows="8"
                            prop:value=move || rules_draft.get()
                            on:input=move |ev| rules_draft.set(event_target_value(&ev))></textarea>
                        <div class="toolbar">
                            <button class="button" data-testid="fine-rules-apply" on:click=move |_| rules.set(parse_rules(&rules_draft.get_untracked()))>"Apply"</button>
                            <button class="button" on:click=move |_| { rules.set(default_fine_rules()); rules_draft.set(rules_text(&default_fine_rules())); }>"Reset"</button>
                            <span class="muted">"memcpy / memset slices are classified by their kind first."</span>
                        </div>
                    </details>
                </section>
            </div>
            <div class="toolbar">
                <input class="search" type="search" placeholder="Filter by name…" data-testid="kernel-filter"
                    prop:value=move || filter.get() on:input=move |ev| filter.set(event_target_value(&ev)) />
                <select data-testid="kernel-category" on:change=move |ev| cat.set(event_target_value(&ev))>
                    <option value="">"All categories"</option>
                    {categories}
                </select>
                <span class="muted" data-testid="kernel-count">{move || format!("{} kernels", len.get())}</span>
            </div>
            <VTable cols=cols len=len cell=cell on_activate=on_activate on_sort=on_sort sort=sort testid="kernel-table" visible_rows=22 label="Kernels" />
            <p class="hint">"Click a row (or Enter) to see its occurrences in the timeline."</p>
        </section>
    }
    .into_any()
}
