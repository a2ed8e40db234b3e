//! The per-rank table of the Ranks tab: core's [`RankFigures`] per rank, sortable; a row click
//! opens that rank's trace on the Overview.

use super::run::RunModel;
use crate::session::{Nav, Tab};
use crate::widgets::fmt;
use crate::widgets::table::{columns, next_sort, Col, Sort, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::report::run::RankFigures;

columns! {
    /// One row per rank.
    enum RCol {
        Rank = "rank", File = "file", Step = "step", Compute = "compute", Comm = "comm",
        Exposed = "exposed", Idle = "idle", Alloc = "alloc", Reserved = "reserved",
        FilePeak = "file_peak", FileReserved = "file_reserved", Wait = "wait", Last = "last",
        Flag = "flag",
    }
}

/// A byte figure, `–` where the run holds none (0 = no `[memory]` events in the trace).
fn mem(b: Option<i64>) -> String {
    b.filter(|&b| b > 0).map_or("–".into(), fmt::bytes)
}

/// The rank's allocator-snapshot peak (active bytes), else its memory timeline's peak.
fn file_peak(r: &RankFigures) -> Option<i64> {
    r.snapshot_peak.map(|p| p.0 as i64).or(r.timeline_peak)
}

fn sort_value(r: &RankFigures, c: RCol) -> Option<f64> {
    Some(match c {
        RCol::Rank => r.rank as f64,
        RCol::Step => r.step_time_ns as f64,
        RCol::Compute => r.compute_ns as f64,
        RCol::Comm => r.comm_ns as f64,
        RCol::Exposed => r.exposed_comm_ns as f64,
        RCol::Idle => r.idle_ns as f64,
        RCol::Alloc => r.peak_allocated_bytes as f64,
        RCol::Reserved => r.peak_reserved_bytes as f64,
        RCol::FilePeak => file_peak(r).map_or(-1.0, |p| p as f64),
        RCol::FileReserved => r.snapshot_peak.map_or(-1.0, |p| p.1 as f64),
        RCol::Wait => r.wait.wait_ns as f64,
        RCol::Last => r.wait.arrived_last_pct,
        RCol::File | RCol::Flag => return None,
    })
}

/// What a cell shows.
fn text(r: &RankFigures, c: RCol, slow: Option<i64>) -> String {
    match c {
        RCol::Rank => r.rank.to_string(),
        RCol::File => r.file.clone(),
        RCol::Step => fmt::dur(r.step_time_ns),
        RCol::Compute => fmt::dur(r.compute_ns),
        RCol::Comm => fmt::dur(r.comm_ns),
        RCol::Exposed => fmt::dur(r.exposed_comm_ns),
        RCol::Idle => fmt::dur(r.idle_ns),
        RCol::Alloc => mem(Some(r.peak_allocated_bytes)),
        RCol::Reserved => mem(Some(r.peak_reserved_bytes)),
        RCol::FilePeak => mem(file_peak(r)),
        RCol::FileReserved => mem(r.snapshot_peak.map(|p| p.1 as i64)),
        RCol::Wait => fmt::dur(r.wait.wait_ns),
        RCol::Last => format!(
            "{}/{} ({:.1}%)",
            r.wait.arrived_last, r.wait.collectives, r.wait.arrived_last_pct
        ),
        RCol::Flag => {
            if Some(r.rank) == slow {
                "straggler".to_owned()
            } else {
                String::new()
            }
        }
    }
}

#[component]
pub fn RankTable(m: Arc<RunModel>) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let f = &m.figures;
    let slow = f.straggler.straggler().map(|s| s.rank);
    let sort = RwSignal::new(Some((RCol::Rank, false)) as Sort<RCol>);
    let m1 = m.clone();
    let order = Memo::new(move |_| {
        let rows = &m1.figures.ranks;
        let mut v: Vec<usize> = (0..rows.len()).collect();
        if let Some((c, desc)) = sort.get() {
            tracelight_core::sort::by(&mut v, |&a, &b| {
                let o = match (sort_value(&rows[a], c), sort_value(&rows[b], c)) {
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    _ => rows[a].file.cmp(&rows[b].file),
                };
                (if desc { o.reverse() } else { o }).then(rows[a].rank.cmp(&rows[b].rank))
            });
        }
        v
    });
    // Memory columns only where some rank has that figure (a run without `[memory]` events or
    // snapshots would show four columns of '–').
    let ranks = &f.ranks;
    let has = |c: RCol| match c {
        RCol::Alloc => ranks.iter().any(|r| r.peak_allocated_bytes > 0),
        RCol::Reserved => ranks.iter().any(|r| r.peak_reserved_bytes > 0),
        RCol::FilePeak => ranks.iter().any(|r| file_peak(r).is_some_and(|p| p > 0)),
        RCol::FileReserved => ranks
            .iter()
            .any(|r| r.snapshot_peak.is_some_and(|p| p.1 > 0)),
        _ => true,
    };
    let all = vec![
        Col::num(RCol::Rank, "Rank", 60),
        Col::name(RCol::File, "File", 124),
        Col::num(RCol::Step, "Step (mean)", 92).tip("mean ProfilerStep duration, else the window"),
        Col::num(RCol::Compute, "Compute", 84).tip("Temporal breakdown over all GPU work: compute kernels (neither communication nor memory, HTA's types)"),
        Col::num(RCol::Comm, "Comm", 76).tip("union of NCCL kernels"),
        Col::num(RCol::Exposed, "Exposed comm", 116)
            .tip("communication overlapped by no compute kernel"),
        Col::num(RCol::Idle, "Idle", 84).tip("Temporal breakdown over all GPU work: kernel span with no kernel, memcpy or memset running"),
        Col::num(RCol::Alloc, "Peak alloc", 88)
            .tip("peak allocated, from the trace's [memory] events"),
        Col::num(RCol::Reserved, "Peak reserved", 104)
            .tip("peak reserved, from the trace's [memory] events"),
        Col::num(RCol::FilePeak, "File peak", 84).tip(
            "peak active bytes of the rank's allocator snapshot, else its memory timeline's peak",
        ),
        Col::num(RCol::FileReserved, "Snap. reserved", 112)
            .tip("peak reserved bytes (segments) of the rank's allocator snapshot"),
        Col::num(RCol::Wait, "Coll. wait", 84)
            .tip("summed over matched collectives: latest arrival - this rank's arrival"),
        Col::num(RCol::Last, "Arrived last", 96).tip("share of its collectives it arrived last at"),
        Col::text(RCol::Flag, "", 150),
    ];
    // Each column as wide as its widest text (header or cell) so no figure is cut; the file
    // column takes what is left, and at least its longest name up to 360 px.
    let cols: Vec<Col<RCol>> = all
        .into_iter()
        .filter(|c| has(c.id))
        .map(|mut c| {
            let widest = ranks
                .iter()
                .map(|r| text(r, c.id, slow).chars().count())
                .max()
                .unwrap_or(0);
            let cell = (widest as f64 * 7.4 + 18.0).ceil() as u32;
            let head = (c.title.chars().count() as f64 * 7.2 + 30.0).ceil() as u32;
            c.px = match c.id {
                RCol::File => cell.clamp(124, 360),
                RCol::Flag => cell.max(16),
                _ => cell.max(head),
            };
            c
        })
        .collect();
    let m2 = m.clone();
    let cell = Callback::new(move |(row, c): (usize, RCol)| {
        order
            .with_untracked(|o| o.get(row).copied())
            .and_then(|k| m2.figures.ranks.get(k))
            .map_or(String::new(), |r| text(r, c, slow))
    });
    let m3 = m.clone();
    let on_activate = Callback::new(move |row: usize| {
        let rank = order
            .with_untracked(|o| o.get(row).copied())
            .and_then(|k| m3.figures.ranks.get(k))
            .map(|r| r.rank);
        if let Some(file) = rank.and_then(|r| m3.file_of(r)) {
            if nav.file.get_untracked() != file {
                nav.file.set(file);
            }
            nav.tab.set(Tab::Overview);
        }
    });
    // Through the order, so the rows redraw when the sort changes.
    let len = Signal::derive(move || order.with(Vec::len));
    let on_sort = Callback::new(move |c: RCol| {
        sort.update(|s| *s = next_sort(*s, c, !matches!(c, RCol::File | RCol::Flag)))
    });
    view! {
        <section class="card">
            <h2>"Ranks"</h2>
            <VTable cols=cols len=len cell=cell on_activate=on_activate on_sort=on_sort sort=sort testid="ranks-table" visible_rows=16 label="Ranks" />
            <p class="hint">"Click a rank to open its trace. Step = mean ProfilerStep (else the whole window); compute / idle are the temporal breakdown over all GPU work (HTA's definition; the GPU tab says where HTA's own selection differs); comm = union of NCCL kernels; exposed = comm no compute kernel overlaps. Coll. wait and arrived last are over the collectives matched across ranks."</p>
        </section>
    }
}
