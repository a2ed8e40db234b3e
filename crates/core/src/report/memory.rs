//! Markdown summaries of memory snapshots and memory timelines (`tracelight summary`).

use crate::analysis::snapshot::SnapshotSummary;
use crate::ingest::memory_timeline::TimelinePeak;
use crate::model::time::format_duration;
use std::fmt::Write;

/// Bytes in binary units with one decimal, as memory_viz prints them (`20.0MiB`).
pub fn format_bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    for u in units {
        if v < 1024.0 {
            return format!("{v:.1}{u}");
        }
        v /= 1024.0;
    }
    format!("{v:.1}EiB")
}

/// [`format_bytes`] of a signed count (a net allocation can be negative).
pub fn signed_bytes(n: i64) -> String {
    if n < 0 {
        format!("-{}", format_bytes(n.unsigned_abs()))
    } else {
        format_bytes(n as u64)
    }
}

/// [`signed_bytes`] with a `+` on growth (`+2.0MiB`, `-1.0MiB`, `0.0B`): a change.
pub fn plus_bytes(d: i64) -> String {
    if d > 0 {
        format!("+{}", signed_bytes(d))
    } else {
        signed_bytes(d)
    }
}

/// A few lines per device: state at dump time, replayed peaks, OOMs, what was live at the peak.
pub fn snapshot_markdown(file: &str, s: &SnapshotSummary, warnings: &[String]) -> String {
    let mut o = format!(
        "# {file}\n\n- format: CUDA memory snapshot ({:?})\n",
        s.kind
    );
    let _ = writeln!(o, "- devices: {}\n", s.devices.len());
    o += "| device | segments | reserved | allocated | active | largest free block | trace entries | peak active | peak reserved |\n";
    o += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for d in &s.devices {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            d.device,
            d.segments,
            format_bytes(d.reserved_bytes),
            format_bytes(d.allocated_bytes),
            format_bytes(d.active_bytes),
            format_bytes(d.largest_free_block_bytes),
            d.trace_entries,
            format_bytes(d.peak_active_bytes),
            format_bytes(d.peak_reserved_bytes),
        );
    }
    for d in &s.devices {
        if d.segments == 0 && d.trace_entries == 0 {
            continue;
        }
        let _ = writeln!(o, "\n## Device {}\n", d.device);
        let _ = writeln!(
            o,
            "- fragmentation (reserved − allocated): {}",
            format_bytes(d.fragmentation_bytes)
        );
        let blocks: Vec<String> = d.blocks.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if !blocks.is_empty() {
            let _ = writeln!(o, "- blocks: {}", blocks.join(", "));
        }
        let actions: Vec<String> = d.actions.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if !actions.is_empty() {
            let _ = writeln!(o, "- actions: {}", actions.join(", "));
        }
        if d.preexisting_bytes > 0 {
            let _ = writeln!(
                o,
                "- live before the trace began: {}",
                format_bytes(d.preexisting_bytes)
            );
        }
        if !d.dump.has_trace {
            o += "- no trace entries (history not recorded): the state at the dump only, no timeline\n";
        }
        if d.dump.pools.len() > 1 {
            o += "\n| pool | id | segments | reserved | allocated | live blocks |\n|---|---|---:|---:|---:|---:|\n";
            for p in &d.dump.pools {
                let _ = writeln!(
                    o,
                    "| {} | {:?} | {} | {} | {} | {} |",
                    p.name,
                    p.pool_id,
                    p.segments,
                    format_bytes(p.reserved_bytes),
                    format_bytes(p.allocated_bytes),
                    p.live_blocks
                );
            }
            o.push('\n');
        }
        if d.dump
            .by_metadata
            .iter()
            .any(|g| !g.user_metadata.is_empty())
        {
            o += "\n| user_metadata | live blocks | live bytes |\n|---|---:|---:|\n";
            for g in &d.dump.by_metadata {
                let m = if g.user_metadata.is_empty() {
                    "(none)"
                } else {
                    &g.user_metadata
                };
                let _ = writeln!(o, "| `{m}` | {} | {} |", g.blocks, format_bytes(g.bytes));
            }
            o.push('\n');
        }
        for oom in &d.ooms {
            let _ = writeln!(
                o,
                "- **OOM** at entry {}: requested {}, CUDA had {} free",
                oom.index,
                format_bytes(oom.requested_bytes),
                format_bytes(oom.device_free_bytes)
            );
        }
        if !d.by_stack.is_empty() {
            let _ = writeln!(
                o,
                "\n| top user frame | allocs | total | live at peak |\n|---|---:|---:|---:|"
            );
            for g in d.by_stack.iter().take(10) {
                let _ = writeln!(
                    o,
                    "| `{}` | {} | {} | {} |",
                    g.frame,
                    g.allocs,
                    format_bytes(g.total_bytes),
                    format_bytes(g.live_at_peak_bytes)
                );
            }
        }
    }
    if !warnings.is_empty() {
        o += "\n## Warnings\n\n";
        for w in warnings {
            let _ = writeln!(o, "- {w}");
        }
    }
    o
}

/// Peak and breakdown of a memory timeline.
pub fn timeline_markdown(file: &str, p: &TimelinePeak) -> String {
    let mut o = format!("# {file}\n\n- format: memory timeline\n");
    let _ = writeln!(o, "- samples: {}", p.samples);
    let _ = writeln!(
        o,
        "- time span: {}",
        format_duration((p.end_us - p.start_us).saturating_mul(1000))
    );
    let _ = writeln!(
        o,
        "- peak: {} at sample {} (+{})\n",
        signed_bytes(p.peak_total_bytes),
        p.peak_index,
        format_duration((p.peak_time_us - p.start_us).saturating_mul(1000))
    );
    o += "| category | bytes at peak |\n|---|---:|\n";
    for (c, b) in &p.at_peak {
        let _ = writeln!(o, "| {c} | {} |", signed_bytes(*b));
    }
    o
}
