//! A snapshot device at the dump, without its history (core's `analysis::snapshot_dump`): every
//! pool as a row (default, CUDA-graph pools, MemPools) with its totals, the live bytes grouped by
//! the allocation site, `user_metadata` or pool (the user picks), and the largest live blocks with
//! their pool, metadata and annotations. A snapshot without trace entries shows this, and no chart.

use leptos::prelude::*;
use tracelight_core::analysis::snapshot::DeviceMemory;
use tracelight_core::report::memory::format_bytes;

/// The pools' totals: shown when the device has more than the default pool.
fn pools(d: &DeviceMemory) -> impl IntoView {
    let rows = d
        .dump
        .pools
        .iter()
        .map(|p| {
            view! {
                <tr data-kind=format!("{:?}", p.kind) data-pool=format!("{},{}", p.pool_id.0, p.pool_id.1)>
                    <td>{p.name.clone()}</td>
                    <td class="num">{p.segments.to_string()}</td>
                    <td class="num" data-bytes=p.reserved_bytes.to_string()>{format_bytes(p.reserved_bytes)}</td>
                    <td class="num" data-bytes=p.allocated_bytes.to_string()>{format_bytes(p.allocated_bytes)}</td>
                    <td class="num">{p.live_blocks.to_string()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="mem-table">
            <h3>"Pools"</h3>
            <table data-testid="pool-table">
                <thead><tr><th>"Pool"</th><th class="num">"Segments"</th><th class="num">"Reserved"</th><th class="num">"Allocated"</th><th class="num">"Live blocks"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// Live blocks at the dump grouped by one key.
#[derive(Clone, Copy, PartialEq)]
enum GroupBy {
    Metadata,
    Pool,
}

#[component]
pub fn DumpTables(d: DeviceMemory) -> impl IntoView {
    let has_meta = d
        .dump
        .by_metadata
        .iter()
        .any(|g| !g.user_metadata.is_empty());
    let by = RwSignal::new(if has_meta {
        GroupBy::Metadata
    } else {
        GroupBy::Pool
    });
    let d2 = d.clone();
    let groups = move || {
        let rows: Vec<(String, u64, u64)> = match by.get() {
            GroupBy::Metadata => d2
                .dump
                .by_metadata
                .iter()
                .map(|g| (g.user_metadata.clone(), g.blocks, g.bytes))
                .collect(),
            GroupBy::Pool => d2
                .dump
                .pools
                .iter()
                .map(|p| (p.name.clone(), p.live_blocks, p.allocated_bytes))
                .collect(),
        };
        rows.into_iter()
            .map(|(k, n, b)| {
                let shown = if k.is_empty() { "(none recorded)".to_owned() } else { k.clone() };
                view! {
                    <tr data-key=k>
                        <td class="num" data-bytes=b.to_string()>{format_bytes(b)}</td>
                        <td class="num">{n.to_string()}</td>
                        <td class="mono frame-cell" title=shown.clone()><bdi>{shown.clone()}</bdi></td>
                    </tr>
                }
            })
            .collect_view()
    };
    // The user_metadata and annotation columns only where a block has one: empty, they took the
    // width the frames need.
    let meta_col = d
        .dump
        .largest_blocks
        .iter()
        .any(|b| !b.user_metadata.is_empty());
    let ann_col = d
        .dump
        .largest_blocks
        .iter()
        .any(|b| !b.annotations.is_empty());
    let blocks = d
        .dump
        .largest_blocks
        .iter()
        .map(|b| {
            let meta = meta_col.then(|| view! { <td class="mono">{b.user_metadata.clone()}</td> });
            let ann = ann_col.then(|| view! { <td class="mono">{b.annotations.join("; ")}</td> });
            // The frame shown is the one the block is attributed to (user code first), often
            // deeper than the innermost frames: the title gives both.
            let title = if b.top_frames.is_empty() || b.top_frames.contains(&b.frame) {
                b.top_frames.join("\n")
            } else {
                format!(
                    "{}\n\ninnermost frames:\n{}",
                    b.frame,
                    b.top_frames.join("\n")
                )
            };
            view! {
                <tr data-addr=b.addr.to_string()>
                    <td class="num" data-bytes=b.size.to_string()>{format_bytes(b.size)}</td>
                    <td>{b.pool.clone()}</td>
                    {meta}
                    {ann}
                    <td class="mono frame-cell" title=title><bdi>{b.frame.clone()}</bdi></td>
                </tr>
            }
        })
        .collect_view();
    let note = (!d.dump.has_trace).then(|| view! {
        <p class="hint" data-testid="mem-no-trace">
            "No trace entries (history not recorded, or include_traces=False): this is the allocator's state at the dump — segments, totals and live blocks — with no timeline."
        </p>
    });
    let multi_pool = d.dump.pools.len() > 1;
    view! {
        {note}
        <div class="mem-tables" data-testid="mem-dump">
            {multi_pool.then(|| pools(&d))}
            <section class="mem-table">
                <h3>"Live at the dump, by "
                    <select data-testid="dump-group-by" on:change=move |ev| by.set(if event_target_value(&ev) == "pool" { GroupBy::Pool } else { GroupBy::Metadata })>
                        <option value="metadata" selected=has_meta>"user_metadata"</option>
                        <option value="pool" selected=!has_meta>"pool"</option>
                    </select>
                </h3>
                <table data-testid="dump-groups">
                    <thead><tr><th class="num">"Live bytes"</th><th class="num">"Blocks"</th><th>"Group"</th></tr></thead>
                    <tbody>{groups}</tbody>
                </table>
            </section>
            <section class="mem-table">
                <h3>{format!("Largest live blocks at the dump ({} live)", d.dump.live_blocks)}</h3>
                <table data-testid="dump-blocks">
                    <thead><tr><th class="num">"Size"</th><th>"Pool"</th>{meta_col.then(|| view! { <th>"user_metadata"</th> })}{ann_col.then(|| view! { <th>"Annotations"</th> })}<th>"Frame"</th></tr></thead>
                    <tbody>{blocks}</tbody>
                </table>
            </section>
        </div>
    }
}
