//! The matched collectives (core's [`Collective`]s, in core's order), sortable; a row click shows
//! that collective's kernel in the timeline of the rank that arrived last (the one the others
//! waited for at it).

use super::run::RunModel;
use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use crate::widgets::table::{columns, next_sort, Col, Sort, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::collectives::Collective;

columns! {
    /// One row per collective matched across ranks.
    enum CCol {
        Seq = "seq", Name = "name", Pg = "pg", Bytes = "bytes", Skew = "skew", Latency = "latency",
        Earliest = "earliest", Latest = "latest", Busbw = "busbw", Mismatch = "mismatch",
    }
}

fn sort_value(c: &Collective, col: CCol) -> Option<f64> {
    Some(match col {
        CCol::Seq => c.seq as f64,
        CCol::Bytes => c.bytes.map_or(-1.0, |b| b as f64),
        CCol::Skew => c.skew_ns as f64,
        CCol::Latency => c.latency_ns as f64,
        CCol::Earliest => c.earliest_rank as f64,
        CCol::Latest => c.latest_rank as f64,
        CCol::Busbw => c.busbw_gbs.unwrap_or(-1.0),
        CCol::Mismatch => c.mismatches.len() as f64,
        CCol::Name | CCol::Pg => return None,
    })
}

fn cell_text(c: &Collective, col: CCol) -> String {
    match col {
        CCol::Seq => c.seq.to_string(),
        CCol::Name => c.name.clone(),
        CCol::Pg => c.pg.clone().unwrap_or_else(|| "–".into()),
        CCol::Bytes => c.bytes.map_or("–".into(), |b| fmt::bytes(b as i64)),
        CCol::Skew => fmt::dur(c.skew_ns),
        CCol::Latency => fmt::dur(c.latency_ns),
        CCol::Earliest => c.earliest_rank.to_string(),
        CCol::Latest => c.latest_rank.to_string(),
        CCol::Busbw => c.busbw_gbs.map_or("–".into(), |b| format!("{b:.1} GB/s")),
        CCol::Mismatch => c.mismatches.join("; "),
    }
}

#[component]
pub fn CollectiveTable(m: Arc<RunModel>, session: SessionRef) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let f = &m.figures;
    let n = f.collectives.len();
    let sort = RwSignal::new(None as Sort<CCol>);
    let m1 = m.clone();
    let order = Memo::new(move |_| {
        let cs = &m1.figures.collectives;
        let mut v: Vec<usize> = (0..cs.len()).collect();
        if let Some((col, desc)) = sort.get() {
            tracelight_core::sort::by(&mut v, |&a, &b| {
                let o = match (sort_value(&cs[a], col), sort_value(&cs[b], col)) {
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    _ => cell_text(&cs[a], col).cmp(&cell_text(&cs[b], col)),
                };
                (if desc { o.reverse() } else { o }).then(a.cmp(&b))
            });
        }
        v
    });
    let cols = vec![
        Col::num(CCol::Seq, "Seq", 56)
            .tip("Seq from the args, else the order within its process group"),
        Col::name(CCol::Name, "Collective", 120),
        Col::text(CCol::Pg, "PG", 70).tip("Process Group Name"),
        Col::num(CCol::Bytes, "Bytes", 96),
        Col::num(CCol::Skew, "Skew", 90).tip("latest arrival - earliest arrival"),
        Col::num(CCol::Latency, "Latency", 90).tip("the shortest rank's duration"),
        Col::num(CCol::Earliest, "First", 56).tip("rank that arrived first"),
        Col::num(CCol::Latest, "Last", 56).tip("rank that arrived last (click: its kernel)"),
        Col::num(CCol::Busbw, "Bus bw", 96)
            .tip("NCCL's bus bandwidth: bytes / latency × its factor"),
        Col::text(CCol::Mismatch, "Disagreements", 200)
            .tip("where the ranks' name, size, dtype or group size differ"),
    ];
    let m2 = m.clone();
    let cell = Callback::new(move |(r, col): (usize, CCol)| {
        order
            .with_untracked(|o| o.get(r).copied())
            .and_then(|k| m2.figures.collectives.get(k))
            .map_or_else(String::new, |c| cell_text(c, col))
    });
    let m3 = m.clone();
    let on_activate = Callback::new(move |r: usize| {
        let Some(c) = order
            .with_untracked(|o| o.get(r).copied())
            .and_then(|k| m3.figures.collectives.get(k))
        else {
            return;
        };
        m3.reveal_call(&session, &nav, c, c.latest_rank, |part| {
            format!(
                "{} #{} on rank {} (arrived last; skew {})",
                c.name,
                c.seq,
                part.rank,
                fmt::dur(c.skew_ns)
            )
        });
    });
    // Through the order, so the rows redraw when the sort changes.
    let len = Signal::derive(move || order.with(Vec::len));
    let on_sort = Callback::new(move |c: CCol| {
        sort.update(|s| *s = next_sort(*s, c, !matches!(c, CCol::Name | CCol::Pg)))
    });
    let unmatched = f.unmatched_calls;
    view! {
        <section class="card" data-testid="collectives" data-count=n.to_string() data-unmatched=unmatched.to_string()>
            <h2>{format!("Collectives: {n} matched, {unmatched} calls unmatched")}</h2>
            <VTable cols=cols len=len cell=cell on_activate=on_activate on_sort=on_sort sort=sort testid="collective-table" visible_rows=14 label="Collectives" />
            <p class="hint">"Matched by (Process Group Name, Seq) where the args hold them, else by order within the process group on each rank. Click a collective to show its kernel on the rank that arrived last."</p>
        </section>
    }
}
