//! Compare with two allocator snapshots (A the open one, B picked): `tracelight diff A.pickle
//! B.pickle` on the page — each side's totals and fragmentation, the segments only one side has,
//! and live bytes by allocation site, whole stack, `user_metadata` and pool, each row appeared,
//! grew, shrank or freed. Every figure is core's `analysis::snapshot_diff`.

use leptos::prelude::*;
use tracelight_core::analysis::snapshot_diff::{DiffRow, SnapshotDiff};
use tracelight_core::report::memory::{format_bytes, plus_bytes};

fn delta(a: u64, b: u64) -> String {
    plus_bytes((b as i128 - a as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64)
}

/// One grouping's rows (at most 50, as core keeps them).
fn rows_table(
    title: &'static str,
    head: &'static str,
    testid: &'static str,
    rows: &[DiffRow],
) -> impl IntoView {
    let max = rows
        .iter()
        .map(|r| r.a_bytes.max(r.b_bytes))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let body = rows
        .iter()
        .map(|r| {
            let cls = if r.delta_bytes > 0 { "num worse" } else if r.delta_bytes < 0 { "num better" } else { "num" };
            let key = if r.key.is_empty() { "(none)".to_owned() } else { r.key.clone() };
            view! {
                <tr data-key=r.key.clone() data-a-bytes=r.a_bytes.to_string() data-b-bytes=r.b_bytes.to_string()
                    data-delta-bytes=r.delta_bytes.to_string() data-change=r.change.label()>
                    <td class="mono frame-cell" title=key.clone()><bdi>{key.clone()}</bdi></td>
                    <td class="cmp-bars">
                        <span class="cmp-bar a" style=format!("width:{:.1}%", 100.0 * r.a_bytes as f64 / max)></span>
                        <span class="cmp-bar b" style=format!("width:{:.1}%", 100.0 * r.b_bytes as f64 / max)></span>
                    </td>
                    <td class="num">{format_bytes(r.a_bytes)}</td>
                    <td class="num">{format_bytes(r.b_bytes)}</td>
                    <td class=cls>{plus_bytes(r.delta_bytes)}</td>
                    <td class="num">{format!("{} → {}", r.a_blocks, r.b_blocks)}</td>
                    <td>{r.change.label()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2>{title}</h2>
            <table class="cmp" data-testid=testid>
                <thead><tr><th>{head}</th><th>"A / B"</th><th>"A"</th><th>"B"</th><th>"Δ"</th><th>"blocks"</th><th></th></tr></thead>
                <tbody>{body}</tbody>
            </table>
        </section>
    }
}

#[component]
pub fn SnapshotDiffView(a_label: String, b_label: String, diff: SnapshotDiff) -> impl IntoView {
    let d = diff;
    let line = |name: &'static str, key: &'static str, a: u64, b: u64| {
        view! {
            <tr data-key=key data-a-bytes=a.to_string() data-b-bytes=b.to_string()>
                <td>{name}</td><td class="num">{format_bytes(a)}</td><td class="num">{format_bytes(b)}</td><td class="num">{delta(a, b)}</td>
            </tr>
        }
    };
    let s = &d.segments;
    let seg_note = format!(
        "Segments matched by address and size (as torch's _memory_viz.compare): {} in both, {} only in A ({}), {} only in B ({}).",
        s.both,
        s.only_a.len(),
        format_bytes(s.only_a_bytes),
        s.only_b.len(),
        format_bytes(s.only_b_bytes)
    );
    let has_meta = d.by_metadata.iter().any(|r| !r.key.is_empty());
    let pools = d.by_pool.len() > 1;
    view! {
        <section class="view" data-testid="compare-snapshots">
            <div class="toolbar">
                <span><b>"A "</b>{a_label}</span>
                <span><b>"B "</b>{b_label}</span>
            </div>
            <div class="grid2">
                <section class="card">
                    <h2>"At the dump"</h2>
                    <table class="cmp" data-testid="snapdiff-totals">
                        <thead><tr><th></th><th>"A"</th><th>"B"</th><th>"Δ"</th></tr></thead>
                        <tbody>
                            {line("reserved", "reserved_bytes", d.a.reserved_bytes, d.b.reserved_bytes)}
                            {line("allocated", "allocated_bytes", d.a.allocated_bytes, d.b.allocated_bytes)}
                            {line("active", "active_bytes", d.a.active_bytes, d.b.active_bytes)}
                            {line("cached, unused (reserved − allocated)", "fragmentation_bytes", d.a.fragmentation_bytes, d.b.fragmentation_bytes)}
                            {line("largest free block", "largest_free_block_bytes", d.a.largest_free_block_bytes, d.b.largest_free_block_bytes)}
                            <tr data-key="segments"><td>"segments"</td><td class="num">{d.a.segments.to_string()}</td><td class="num">{d.b.segments.to_string()}</td><td class="num">{format!("{:+}", d.b.segments as i64 - d.a.segments as i64)}</td></tr>
                            <tr data-key="live_blocks"><td>"live blocks"</td><td class="num">{d.a.live_blocks.to_string()}</td><td class="num">{d.b.live_blocks.to_string()}</td><td class="num">{format!("{:+}", d.b.live_blocks as i64 - d.a.live_blocks as i64)}</td></tr>
                        </tbody>
                    </table>
                    <p class="hint" data-testid="snapdiff-segments">{seg_note}</p>
                </section>
                {rows_table("Live bytes by allocation site", "frame", "snapdiff-frames", &d.by_frame)}
            </div>
            {rows_table("Live bytes by whole stack (innermost first)", "stack", "snapdiff-stacks", &d.by_stack)}
            {has_meta.then(|| rows_table("Live bytes by user_metadata", "user_metadata", "snapdiff-metadata", &d.by_metadata))}
            {pools.then(|| rows_table("Live bytes by pool", "pool", "snapdiff-pools", &d.by_pool))}
        </section>
    }
}
