//! The per-operator allocation table of a trace's `[memory]` device (the TensorBoard plugin's
//! memory view): op, calls, allocations, frees, bytes allocated, self bytes, size increase and
//! the peak contribution (core `analysis::memory_ops`, the rows `analyze --json` prints under
//! `memory.ops`). Sortable, virtual; a row opens the op's calls in the timeline, starting at the
//! call that holds memory at the peak.

use crate::session::reveal;
use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use crate::widgets::table::{columns, next_sort, Col, Sort, VTable};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::memory_ops::OpMemoryRow;
use tracelight_core::view::link::Named;

columns! {
    /// The memory table's columns.
    enum MemCol {
        Name = "name",
        Calls = "calls",
        Allocs = "allocs",
        Frees = "frees",
        Allocated = "allocated",
        SelfAllocated = "self_allocated",
        Net = "net",
        SelfNet = "self_net",
        Peak = "peak",
    }
}

fn columns() -> Vec<Col<MemCol>> {
    vec![
        Col::name(MemCol::Name, "Operator", 240),
        Col::num(MemCol::Calls, "Calls", 64),
        Col::num(MemCol::Allocs, "Allocs", 70).tip("allocation events, self and below"),
        Col::num(MemCol::Frees, "Frees", 70).tip("free events, self and below"),
        Col::num(MemCol::Allocated, "Allocated", 96).tip("bytes allocated, self and below"),
        Col::num(MemCol::SelfAllocated, "Self allocated", 110)
            .tip("bytes the op allocated itself, not in a child op"),
        Col::num(MemCol::Net, "Size increase", 104).tip("allocated − freed, self and below"),
        Col::num(MemCol::SelfNet, "Self increase", 104),
        Col::num(MemCol::Peak, "At peak", 96)
            .tip("bytes this op allocated itself that are still live at the device's peak"),
    ]
}

/// The exact number behind a cell (`None` for the name).
fn value(r: &OpMemoryRow, c: MemCol) -> Option<i64> {
    Some(match c {
        MemCol::Name => return None,
        MemCol::Calls => r.calls as i64,
        MemCol::Allocs => r.allocations as i64,
        MemCol::Frees => r.frees as i64,
        MemCol::Allocated => r.allocated_bytes,
        MemCol::SelfAllocated => r.self_allocated_bytes,
        MemCol::Net => r.net_bytes,
        MemCol::SelfNet => r.self_net_bytes,
        MemCol::Peak => r.peak_bytes,
    })
}

fn is_bytes(c: MemCol) -> bool {
    !matches!(
        c,
        MemCol::Name | MemCol::Calls | MemCol::Allocs | MemCol::Frees
    )
}

#[component]
pub fn OpMemoryTable(
    session: SessionRef,
    file: usize,
    device_type: i16,
    device_id: i16,
) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let rows: Arc<Vec<OpMemoryRow>> = Arc::new(
        tf.analysis()
            .memory_ops
            .iter()
            .filter(|r| r.device_type == device_type && r.device_id == device_id)
            .cloned()
            .collect(),
    );
    if rows.is_empty() {
        return ().into_any();
    }
    let sort = RwSignal::new(None as Sort<MemCol>);
    let r1 = rows.clone();
    // Core's order (peak contribution, then allocated, descending) until a header is clicked.
    let order = Memo::new(move |_| {
        let mut v: Vec<usize> = (0..r1.len()).collect();
        if let Some((k, desc)) = sort.get() {
            tracelight_core::sort::by(&mut v, |&a, &b| {
                let (x, y) = (&r1[a], &r1[b]);
                let o = match (value(x, k), value(y, k)) {
                    (Some(p), Some(q)) => p.cmp(&q),
                    _ => x.name.cmp(&y.name),
                };
                (if desc { o.reverse() } else { o }).then_with(|| x.name.cmp(&y.name))
            });
        }
        Arc::new(v)
    });
    let row_at = {
        let rows = rows.clone();
        move |r: usize| order.with_untracked(|o| o.get(r).map(|&i| rows[i].clone()))
    };
    let rt = row_at.clone();
    let cell = Callback::new(move |(r, c): (usize, MemCol)| {
        let Some(row) = rt(r) else {
            return String::new();
        };
        match (c, value(&row, c)) {
            (MemCol::Name, _) => row.name.clone(),
            (_, Some(v)) if is_bytes(c) => fmt::bytes(v),
            (_, Some(v)) => v.to_string(),
            _ => String::new(),
        }
    });
    let rb = row_at.clone();
    let bytes = Callback::new(move |(r, c): (usize, MemCol)| {
        rb(r).and_then(|row| value(&row, c).filter(|_| c != MemCol::Name))
    });
    let s2 = session.clone();
    let on_activate = Callback::new(move |r: usize| {
        let (Some(row), Some(tf)) = (row_at(r), s2.trace(file)) else {
            return;
        };
        let slices = reveal::named_slices(tf, Named::Op, &row.name);
        // Start at the call holding memory at the peak, when the op has one.
        let first = row
            .peak_slice
            .and_then(|p| slices.iter().position(|&s| s == p))
            .unwrap_or(0);
        nav.reveal_nth(file, slices, row.name.clone(), first);
    });
    let on_sort =
        Callback::new(move |k: MemCol| sort.update(|s| *s = next_sort(*s, k, k != MemCol::Name)));
    let len = Signal::derive(move || order.get().len());
    view! {
        <section class="mem-table mem-ops" data-testid="mem-ops">
            <h3>"Memory by operator"</h3>
            <VTable cols=Signal::derive(columns) len=len cell=cell bytes=bytes on_activate=on_activate on_sort=on_sort sort=sort testid="mem-ops-table" visible_rows=14 label="Memory by operator" />
            <p class="hint">"Self: events inside the op but not in a child op. At peak: its own allocations still live when the device reached its peak. Click a row to see its calls in the timeline (the one holding memory at the peak first)."</p>
        </section>
    }
    .into_any()
}
