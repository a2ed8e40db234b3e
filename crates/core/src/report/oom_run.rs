//! The Markdown of a folder of OOM dumps read as a run ([`crate::analysis::snapshot_ranks`]):
//! which ranks differ and why first, the failed allocations, then each rank's state and largest
//! live blocks.

use super::memory::{format_bytes, plus_bytes};
use crate::analysis::snapshot_ranks::OomRun;
use std::fmt::Write;

/// Largest blocks shown per rank.
const SHOWN: usize = 5;

pub fn markdown(r: &OomRun) -> String {
    let mut o = format!(
        "## Memory dumps ({} snapshots)\n\n- median allocated {}, median reserved {}\n",
        r.dumps.len(),
        format_bytes(r.median_allocated_bytes),
        format_bytes(r.median_reserved_bytes)
    );
    if r.differs.is_empty() {
        o += "- no rank differs from the others (allocated and reserved within 5% of the median)\n";
    }
    for d in &r.differs {
        let mut why = Vec::new();
        if d.allocated_delta_bytes != 0 {
            why.push(format!(
                "allocated {} vs the median",
                plus_bytes(d.allocated_delta_bytes)
            ));
        }
        if d.reserved_delta_bytes != 0 {
            why.push(format!("reserved {}", plus_bytes(d.reserved_delta_bytes)));
        }
        if d.recorded_oom {
            why.push("recorded an OOM".into());
        }
        let _ = writeln!(o, "- **rank {} differs**: {}", d.rank, why.join(", "));
        for e in &d.excess {
            let _ = writeln!(
                o,
                "  - `{}`: {} (median {}, {})",
                e.frame,
                format_bytes(e.bytes),
                format_bytes(e.median_bytes),
                plus_bytes(e.delta_bytes)
            );
        }
    }
    let failed: Vec<_> = r
        .dumps
        .iter()
        .flat_map(|d| d.ooms.iter().map(move |f| (d.rank, f)))
        .collect();
    if !failed.is_empty() {
        o += "\n### Failed allocations (`oom` trace entries)\n\n| rank | device | requested | CUDA free | at | user_metadata |\n|---:|---:|---:|---:|---|---|\n";
        for (rank, f) in failed {
            let _ = writeln!(
                o,
                "| {rank} | {} | {} | {} | `{}` | {} |",
                f.device,
                format_bytes(f.requested_bytes),
                format_bytes(f.device_free_bytes),
                f.frame,
                f.user_metadata
            );
        }
    }
    o += "\n### Ranks at the dump\n\n| rank | reserved | allocated | fragmentation | live blocks | OOMs | largest block | at |\n|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for d in &r.dumps {
        let (big, at) = d
            .largest_blocks
            .first()
            .map_or(("—".to_owned(), String::new()), |b| {
                (format_bytes(b.size), format!("`{}`", b.frame))
            });
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            d.rank,
            format_bytes(d.reserved_bytes),
            format_bytes(d.allocated_bytes),
            format_bytes(d.fragmentation_bytes),
            d.live_blocks,
            d.ooms.len(),
            big,
            at
        );
    }
    for d in &r.dumps {
        if d.largest_blocks.is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "\n#### Rank {}: largest live blocks ({})\n",
            d.rank, d.path
        );
        o += "| size | pool | frame | user_metadata |\n|---:|---|---|---|\n";
        for b in d.largest_blocks.iter().take(SHOWN) {
            let _ = writeln!(
                o,
                "| {} | {} | `{}` | {} |",
                format_bytes(b.size),
                b.pool,
                b.frame,
                b.user_metadata
            );
        }
    }
    o
}
