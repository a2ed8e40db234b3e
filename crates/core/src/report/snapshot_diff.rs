//! `tracelight diff A.pickle B.pickle`'s Markdown: the snapshot diff of
//! [`crate::analysis::snapshot_diff`] in words and tables (the JSON is the struct itself).

use super::memory::{format_bytes, plus_bytes as plus};
use crate::analysis::snapshot_diff::{DiffRow, SnapshotDiff};
use std::fmt::Write;

/// Rows shown per table (the JSON keeps [`crate::analysis::snapshot_diff::MAX_ROWS`]).
const SHOWN: usize = 15;

fn delta(a: u64, b: u64) -> String {
    plus((b as i128 - a as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64)
}

fn table(o: &mut String, title: &str, head: &str, rows: &[DiffRow], total: Option<u64>) {
    let rows: Vec<&DiffRow> = rows
        .iter()
        .filter(|r| r.a_bytes > 0 || r.b_bytes > 0)
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n### {title}\n");
    let _ = writeln!(
        o,
        "| {head} | A | B | Δ | blocks A → B | |\n|---|---:|---:|---:|---:|---|"
    );
    for r in rows.iter().take(SHOWN) {
        let key = if r.key.is_empty() { "(none)" } else { &r.key };
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {} | {} → {} | {} |",
            key.replace('|', "\\|"),
            format_bytes(r.a_bytes),
            format_bytes(r.b_bytes),
            plus(r.delta_bytes),
            r.a_blocks,
            r.b_blocks,
            r.change.label()
        );
    }
    let n = total.unwrap_or(rows.len() as u64);
    if n as usize > SHOWN.min(rows.len()) {
        let _ = writeln!(
            o,
            "\n{} more rows in `--json`.",
            n as usize - SHOWN.min(rows.len())
        );
    }
}

/// The diff of snapshot A (`a_path`) and B (`b_path`) in Markdown.
pub fn markdown(a_path: &str, b_path: &str, d: &SnapshotDiff) -> String {
    let mut o = format!("# Snapshot diff\n\n- A: {a_path}\n- B: {b_path}\n\n");
    o += "| | A | B | Δ |\n|---|---:|---:|---:|\n";
    let line = |o: &mut String, name: &str, a: u64, b: u64| {
        let _ = writeln!(
            o,
            "| {name} | {} | {} | {} |",
            format_bytes(a),
            format_bytes(b),
            delta(a, b)
        );
    };
    line(&mut o, "reserved", d.a.reserved_bytes, d.b.reserved_bytes);
    line(
        &mut o,
        "allocated",
        d.a.allocated_bytes,
        d.b.allocated_bytes,
    );
    line(&mut o, "active", d.a.active_bytes, d.b.active_bytes);
    line(
        &mut o,
        "fragmentation (reserved − allocated)",
        d.a.fragmentation_bytes,
        d.b.fragmentation_bytes,
    );
    line(
        &mut o,
        "largest free block",
        d.a.largest_free_block_bytes,
        d.b.largest_free_block_bytes,
    );
    let _ = writeln!(
        o,
        "| segments | {} | {} | {:+} |\n| live blocks | {} | {} | {:+} |",
        d.a.segments,
        d.b.segments,
        d.b.segments as i64 - d.a.segments as i64,
        d.a.live_blocks,
        d.b.live_blocks,
        d.b.live_blocks as i64 - d.a.live_blocks as i64
    );
    let s = &d.segments;
    let _ = writeln!(
        o,
        "\nSegments (matched by address and size): {} in both, {} only in A ({}), {} only in B ({}).",
        s.both,
        s.only_a.len(),
        format_bytes(s.only_a_bytes),
        s.only_b.len(),
        format_bytes(s.only_b_bytes)
    );
    table(
        &mut o,
        "Live bytes by allocation site",
        "frame",
        &d.by_frame,
        Some(d.by_frame_rows),
    );
    table(
        &mut o,
        "Live bytes by whole stack",
        "stack (innermost first)",
        &d.by_stack,
        Some(d.by_stack_rows),
    );
    if d.by_metadata.iter().any(|r| !r.key.is_empty()) {
        table(
            &mut o,
            "Live bytes by user_metadata",
            "user_metadata",
            &d.by_metadata,
            None,
        );
    }
    if d.by_pool.len() > 1 {
        table(&mut o, "Live bytes by pool", "pool", &d.by_pool, None);
    }
    o
}
