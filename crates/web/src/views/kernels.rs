//! Kernels: every GPU kernel / memcpy / memset name with its time, the seed and finer categories
//! (DESIGN §4; the finer rules are listed and editable here), launch geometry, registers,
//! occupancy and a tensor-core hint; a row opens its occurrences in the timeline.

use crate::session::reveal;
use crate::session::{FineRules, Nav, SessionRef};
use crate::widgets::bars::{Bar, Bars};
use crate::widgets::fmt;
use crate::widgets::palette::color_of;
use crate::widgets::table::{Col, Sort, VTable};
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

fn sort_value(k: &KernelRow, key: &str) -> f64 {
    match key {
        "calls" => k.calls as f64,
        "total" | "pct" => k.total_ns as f64,
        "avg" => k.avg_ns,
        "min" => k.min_ns as f64,
        "max" => k.max_ns as f64,
        "registers" => k.registers.map_or(-1.0, f64::from),
        "occupancy" => k.occupancy_pct.unwrap_or(-1.0),
        _ => 0.0,
    }
}

#[component]
pub fn KernelsView(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return view! { <p class="muted">"Not a trace."</p> }.into_any();
    };
    if tf.analysis().kernels.rows.is_empty() {
        return view! { <section class="view" data-testid="kernels-view"><p class="muted">"No GPU kernels, copies or memsets in this trace."</p></section> }.into_any();
    }
    let store = StoredValue::new(session.clone());
    let with_rows = move |f: &mut dyn FnMut(&[KernelRow], i64)| {
        store.with_value(|s| {
            if let Some(tf) = s.trace(file) {
                let k = &tf.analysis().kernels;
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
    let sort = RwSignal::new(Some(("total", true)) as Sort);
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
                let text = |i: usize| -> String {
                    match k {
                        "name" => rows[i].name.clone(),
                        "category" => rows[i].category.to_owned(),
                        "fine" => f.get(i).cloned().unwrap_or_default(),
                        "tc" => tensor_cores(&rows[i]).to_owned(),
                        "launching_op" => rows[i].launching_op.clone().unwrap_or_default(),
                        "grid" => dims(rows[i].grid),
                        "block" => dims(rows[i].block),
                        _ => String::new(),
                    }
                };
                v.sort_by(|&a, &b| {
                    let o = sort_value(&rows[a], k)
                        .total_cmp(&sort_value(&rows[b], k))
                        .then_with(|| text(a).cmp(&text(b)));
                    (if desc { o.reverse() } else { o })
                        .then_with(|| rows[a].name.cmp(&rows[b].name))
                });
            }
        });
        Arc::new(v)
    });
    let cols = vec![
        Col::name("name", "Kernel", 380),
        Col::num("calls", "Calls", 70),
        Col::num("total", "Total", 96),
        Col::num("pct", "% GPU", 68),
        Col::num("avg", "Avg", 90),
        Col::num("min", "Min", 90),
        Col::num("max", "Max", 90),
        Col::text("category", "Seed", 76)
            .tip("seed classification: matmul / comm / memory / other"),
        Col::text("fine", "Category", 150).tip("finer classification (rules below)"),
        Col::text("tc", "Tensor cores", 104).tip(
            "from the kernel name: tensor-core instruction shapes or tags; plain sgemm = fp32 SIMT",
        ),
        Col::text("grid", "Grid", 92),
        Col::text("block", "Block", 80),
        Col::num("registers", "Regs", 60).tip("registers per thread"),
        Col::num("occupancy", "Occupancy", 84).tip("mean est. achieved occupancy %"),
        Col::text("launching_op", "Launched by", 180),
    ];
    let cell = Callback::new(move |(r, key): (usize, &'static str)| {
        let mut out = String::new();
        let Some(&i) = order.get_untracked().get(r) else {
            return out;
        };
        let f = fine.get_untracked();
        with_rows(&mut |rows: &[KernelRow], _| {
            let k = &rows[i];
            out = match key {
                "name" => k.name.clone(),
                "calls" => k.calls.to_string(),
                "total" => fmt::dur(k.total_ns),
                "pct" => format!("{:.1}%", k.pct_of_gpu),
                "avg" => fmt::dur_f(k.avg_ns),
                "min" => fmt::dur(k.min_ns),
                "max" => fmt::dur(k.max_ns),
                "category" => k.category.to_owned(),
                "fine" => f.get(i).cloned().unwrap_or_default(),
                "tc" => tensor_cores(k).to_owned(),
                "grid" => dims(k.grid),
                "block" => dims(k.block),
                "registers" => k.registers.map(|r| r.to_string()).unwrap_or_default(),
                "occupancy" => k
                    .occupancy_pct
                    .map(|o| format!("{o:.1}%"))
                    .unwrap_or_default(),
                "launching_op" => k.launching_op.clone().unwrap_or_default(),
                _ => String::new(),
            };
        });
        out
    });
    let on_activate = Callback::new(move |r: usize| {
        let Some(&i) = order.get_untracked().get(r) else {
            return;
        };
        store.with_value(|s| {
            if let Some(tf) = s.trace(file) {
                if let Some(k) = tf.analysis().kernels.rows.get(i) {
                    nav.reveal(file, reveal::gpu_slices(&tf.trace, &k.name), k.name.clone());
                }
            }
        });
    });
    let on_sort = Callback::new(move |k: &'static str| {
        sort.update(|s| {
            *s = match *s {
                Some((c, d)) if c == k => Some((k, !d)),
                _ => Some((
                    k,
                    !matches!(k, "name" | "category" | "fine" | "launching_op"),
                )),
            }
        })
    });
    let seed_bars = move || {
        let mut out = (Vec::new(), 0);
        store.with_value(|s| {
            if let Some(tf) = s.trace(file) {
                let a = tf.analysis();
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
        sums.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
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
    let quirk = seed_quirk(&tf.analysis().kernels.rows);
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
                        <summary>"Rules (first match wins; edit and apply to reclassify)"</summary>
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
