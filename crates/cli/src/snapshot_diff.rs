//! `tracelight diff A.pickle B.pickle`: when both sides are allocator snapshots (sniffed from
//! their first bytes, whatever their names), the snapshot diff of core's
//! `analysis::snapshot_diff`, as Markdown or `--json` (`{"snapshot": …}`, docs/definitions.md
//! `diff .snapshot`).

use crate::input::{load, CliError};
use std::io::Read;
use tracelight_core::analysis::snapshot_diff::diff;
use tracelight_core::ingest::snapshot::Snapshot;
use tracelight_core::ingest::{Format, Loaded};
use tracelight_core::run::{entry_from_head, HEAD_BYTES};

/// Whether `path` is a file whose content is an allocator snapshot.
pub fn is_snapshot(path: &str) -> bool {
    let mut head = Vec::new();
    let ok = std::fs::File::open(path)
        .and_then(|f| f.take(HEAD_BYTES as u64).read_to_end(&mut head))
        .is_ok();
    ok && matches!(entry_from_head(path, &head).format, Ok(Format::Snapshot))
}

fn snapshot(path: &str) -> Result<Box<Snapshot>, CliError> {
    match load(path).map_err(CliError::Input)? {
        Loaded::Snapshot(s) => Ok(s),
        other => Err(CliError::Input(
            tracelight_core::Error::new(
                tracelight_core::ErrorKind::Incompatible(format!(
                    "a snapshot diff needs two allocator snapshots, not a {}",
                    other.format().label()
                )),
                0,
            )
            .in_file(path),
        )),
    }
}

/// The diff of snapshots `a` and `b`: Markdown, or with `json` the `{"snapshot": …}` object.
pub fn snapshot_diff(a: &str, b: &str, json: bool) -> Result<String, CliError> {
    let (sa, sb) = (snapshot(a)?, snapshot(b)?);
    let d = diff(&sa, &sb);
    if json {
        let v = serde_json::json!({"snapshot": {"a_path": a, "b_path": b, "diff": d}});
        return Ok(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n");
    }
    Ok(tracelight_core::report::snapshot_diff::markdown(a, b, &d))
}
