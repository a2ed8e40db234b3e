//! With several rank files in the session: per rank step time, compute, communication, idle and
//! exposed communication (`tracelight analyze`'s `ranks`), with the straggler marked.

use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use crate::widgets::table::{columns, Col, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::report::json::Analysis;
use tracelight_core::report::ranks::ranks;

columns! {
    /// One row per rank.
    enum RankCol { Rank = "rank", File = "file", Step = "step", Compute = "compute", Comm = "comm", Idle = "idle", Exposed = "exposed", Flag = "flag" }
}

#[component]
pub fn RankTable(session: SessionRef) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let idx = session.trace_indices();
    let all: Vec<&Analysis> = idx
        .iter()
        .filter_map(|&i| session.trace(i).map(|t| t.analysis()))
        .collect();
    let (rows, straggler) = ranks(&all);
    // File index of each row, by path (the session's files, in rank order).
    let files: Vec<Option<usize>> = rows
        .iter()
        .map(|r| {
            idx.iter()
                .copied()
                .find(|&i| session.trace(i).is_some_and(|t| t.facts.file == r.file))
        })
        .collect();
    let slow = straggler.as_ref().map(|s| s.rank);
    let rows = Arc::new(rows);
    let cols = vec![
        Col::num(RankCol::Rank, "Rank", 60),
        Col::name(RankCol::File, "File", 220),
        Col::num(RankCol::Step, "Step time", 100),
        Col::num(RankCol::Compute, "Compute", 100),
        Col::num(RankCol::Comm, "Comm", 100),
        Col::num(RankCol::Idle, "Idle", 100),
        Col::num(RankCol::Exposed, "Exposed comm", 110),
        Col::text(RankCol::Flag, "", 110),
    ];
    let n = rows.len();
    let r1 = rows.clone();
    let cell = Callback::new(move |(r, key): (usize, RankCol)| {
        let Some(x) = r1.get(r) else {
            return String::new();
        };
        match key {
            RankCol::Rank => x.rank.to_string(),
            RankCol::File => x.file.clone(),
            RankCol::Step => fmt::dur(x.step_time_ns),
            RankCol::Compute => fmt::dur(x.compute_ns),
            RankCol::Comm => fmt::dur(x.comm_ns),
            RankCol::Idle => fmt::dur(x.idle_ns),
            RankCol::Exposed => fmt::dur(x.exposed_comm_ns),
            RankCol::Flag => {
                if Some(x.rank) == slow {
                    "◀ straggler".into()
                } else {
                    String::new()
                }
            }
        }
    });
    let on_activate = Callback::new(move |r: usize| {
        if let Some(Some(f)) = files.get(r) {
            nav.file.set(*f);
        }
    });
    let summary = straggler.map(|s| {
        view! {
            <p data-testid="straggler" data-rank=s.rank.to_string() data-vs-median=s.vs_median.to_string()>
                "Straggler: " <b>{format!("rank {}", s.rank)}</b>
                {format!(" — step time {:.2}× the median of {} ranks.", s.vs_median, n)}
            </p>
        }
    });
    view! {
        <section class="card">
            <h2>"Ranks"</h2>
            {summary}
            <VTable cols=cols len=n cell=cell on_activate=on_activate sort=Signal::stored(None) testid="rank-table" visible_rows=16 label="Ranks" />
            <p class="hint">"Click a rank to show its file in every view. Step time = mean ProfilerStep (else the whole window); compute / idle are HTA's temporal breakdown; comm = union of NCCL kernels."</p>
        </section>
    }
}
