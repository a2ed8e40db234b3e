//! A run's allocator snapshots compared (a folder of OOM dumps, one per rank or per OOM event):
//! the ranks that differ from the median and the allocation sites that explain it, the
//! allocations that failed (`oom` trace entries), and each rank's reserved vs allocated with its
//! largest live blocks. Core's `analysis::snapshot_ranks`, what `tracelight analyze DIR --json`
//! prints under `oom_dumps`.

use leptos::prelude::*;
use tracelight_core::analysis::snapshot_ranks::OomRun;
use tracelight_core::report::memory::{format_bytes, plus_bytes};

#[component]
pub fn OomDumps(run: OomRun) -> impl IntoView {
    let differs = run
        .differs
        .iter()
        .map(|d| {
            let mut why = Vec::new();
            if d.allocated_delta_bytes != 0 {
                why.push(format!("allocated {} vs the median", plus_bytes(d.allocated_delta_bytes)));
            }
            if d.reserved_delta_bytes != 0 {
                why.push(format!("reserved {}", plus_bytes(d.reserved_delta_bytes)));
            }
            if d.recorded_oom {
                why.push("recorded an OOM".into());
            }
            let excess = d
                .excess
                .iter()
                .map(|e| view! {
                    <li data-frame=e.frame.clone() data-delta-bytes=e.delta_bytes.to_string()>
                        <code>{e.frame.clone()}</code>{format!(": {} (median {}, {})", format_bytes(e.bytes), format_bytes(e.median_bytes), plus_bytes(e.delta_bytes))}
                    </li>
                })
                .collect_view();
            view! {
                <li data-testid="oom-differs" data-rank=d.rank.to_string()>
                    <b>{format!("Rank {} differs", d.rank)}</b>{format!(": {}", why.join(", "))}
                    <ul>{excess}</ul>
                </li>
            }
        })
        .collect_view();
    let failed = run
        .dumps
        .iter()
        .flat_map(|d| d.ooms.iter().map(move |f| (d.rank, f)))
        .map(|(rank, f)| {
            view! {
                <tr data-rank=rank.to_string() data-requested-bytes=f.requested_bytes.to_string()>
                    <td class="num">{rank.to_string()}</td>
                    <td class="num">{f.device.to_string()}</td>
                    <td class="num">{format_bytes(f.requested_bytes)}</td>
                    <td class="num">{format_bytes(f.device_free_bytes)}</td>
                    <td class="mono frame-cell" title=f.top_frames.join("\n")><bdi>{f.frame.clone()}</bdi></td>
                    <td class="mono">{f.user_metadata.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let any_failed = run.dumps.iter().any(|d| !d.ooms.is_empty());
    let differing: Vec<i64> = run.differs.iter().map(|d| d.rank).collect();
    let ranks = run
        .dumps
        .iter()
        .map(|d| {
            let (big, at) = d
                .largest_blocks
                .first()
                .map_or(("—".to_owned(), String::new()), |b| (format_bytes(b.size), b.frame.clone()));
            let blocks = d
                .largest_blocks
                .iter()
                .take(5)
                .map(|b| format!("{} {} {}", format_bytes(b.size), b.frame, b.user_metadata))
                .collect::<Vec<_>>()
                .join("\n");
            view! {
                <tr data-rank=d.rank.to_string() data-allocated-bytes=d.allocated_bytes.to_string()
                    data-reserved-bytes=d.reserved_bytes.to_string() class:bad=differing.contains(&d.rank)>
                    <td class="num">{d.rank.to_string()}</td>
                    <td class="num">{format_bytes(d.reserved_bytes)}</td>
                    <td class="num">{format_bytes(d.allocated_bytes)}</td>
                    <td class="num">{format_bytes(d.fragmentation_bytes)}</td>
                    <td class="num">{d.live_blocks.to_string()}</td>
                    <td class="num">{d.ooms.len().to_string()}</td>
                    <td class="num">{big}</td>
                    <td class="mono frame-cell" title=blocks><bdi>{at}</bdi></td>
                </tr>
            }
        })
        .collect_view();
    let none = run.differs.is_empty().then(|| view! {
        <li>"No rank differs from the others (allocated and reserved within 5% of the median)."</li>
    });
    view! {
        <section class="card" data-testid="oom-dumps">
            <h2>{format!("Memory dumps ({} snapshots)", run.dumps.len())}</h2>
            <p class="hint">{format!("Median allocated {}, median reserved {}.", format_bytes(run.median_allocated_bytes), format_bytes(run.median_reserved_bytes))}</p>
            <ul>{none}{differs}</ul>
            {any_failed.then(|| view! {
                <h3>"Failed allocations (oom trace entries)"</h3>
                <table data-testid="oom-failed">
                    <thead><tr><th class="num">"Rank"</th><th class="num">"Device"</th><th class="num">"Requested"</th><th class="num">"CUDA free"</th><th>"At"</th><th>"user_metadata"</th></tr></thead>
                    <tbody>{failed}</tbody>
                </table>
            })}
            <h3>"Ranks at the dump"</h3>
            <table data-testid="oom-ranks">
                <thead><tr><th class="num">"Rank"</th><th class="num">"Reserved"</th><th class="num">"Allocated"</th><th class="num">"Cached, unused"</th><th class="num">"Live blocks"</th><th class="num">"OOMs"</th><th class="num">"Largest block"</th><th>"At"</th></tr></thead>
                <tbody>{ranks}</tbody>
            </table>
        </section>
    }
}
