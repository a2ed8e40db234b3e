//! A profiling run: several files of several ranks opened as one session.
//!
//! [`layout`] places the files (ranks × artifacts, cycles, stages, what is missing, what was
//! skipped) from names and the first bytes of each; [`crate::analysis::collectives`] matches the
//! ranks' collectives; [`crate::report::run`] lays the run out for `analyze --json` and `summary`.
//! Reading files is the caller's (the CLI walks a folder, the page takes a dropped one).

pub mod layout;

use crate::ingest::gzip::Gunzip;
use crate::ingest::sniff::{is_gzip, sniff, SNIFF_BYTES};
use layout::{head_rank, Entry};

/// Enough compressed bytes for [`entry_from_head`] to see [`SNIFF_BYTES`] decoded ones.
pub const HEAD_BYTES: usize = 256 * 1024;

/// Sniffs a file from its first raw bytes (gzip inflated as far as they go): its format, or why
/// it is none of ours, and the rank its `distributedInfo` names.
pub fn entry_from_head(path: &str, raw: &[u8]) -> Entry {
    let mut decoded: Vec<u8> = Vec::new();
    let head: &[u8] = if is_gzip(raw) {
        let mut gz = Gunzip::default();
        let mut sink = |d: &[u8]| {
            let room = SNIFF_BYTES.saturating_sub(decoded.len());
            decoded.extend_from_slice(&d[..d.len().min(room)]);
            Ok(())
        };
        // A head cut mid-stream ends in an error or nothing more: what came out is enough.
        let _ = gz.push(raw, &mut sink);
        let _ = gz.finish(&mut sink);
        &decoded
    } else {
        &raw[..raw.len().min(SNIFF_BYTES)]
    };
    let format = if head.is_empty() && !raw.is_empty() {
        Err("a gzip stream that does not inflate".to_owned())
    } else {
        sniff(head)
    };
    Entry {
        path: path.to_owned(),
        head_rank: head_rank(head),
        format,
    }
}
