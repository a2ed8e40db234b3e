//! What a reader worker's instance runs for a memory snapshot (`js/shards.js`'s `runSnapshot`):
//! the pickle read whole in this worker, its first views, then its model a section at a time, the
//! peak's flame graphs and the whole summary. Number-only exports, as [`super::worker`]'s.

use super::worker::{hand_out, with};
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::snapshot;
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::report::snapshot_flame_wire::flame_sections;
use tracelight_core::report::snapshot_wire::{self, SnapshotViews};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen::prelude::*;

/// Starts reading a memory snapshot of `size` bytes (the whole file, in pieces, in this worker).
#[wasm_bindgen]
pub fn tl_snap_begin(size: f64) {
    with(|s| {
        let mut l = Loader::new("snapshot");
        l.size_hint(size as u64);
        s.snap_loader = Some(l);
        s.snapshot = None;
        s.error = None;
    });
}

/// Reads the first `len` input bytes into the snapshot; 0 when that failed (the error is kept).
#[wasm_bindgen]
pub fn tl_snap_push(len: u32) -> u32 {
    with(|s| {
        let Some(l) = s.snap_loader.as_mut() else {
            return 0;
        };
        match l.push(s.input.get(..len as usize).unwrap_or_default()) {
            Ok(()) => 1,
            Err(e) => {
                s.error = Some(e);
                s.snap_loader = None;
                0
            }
        }
    })
}

/// Ends the file and builds the snapshot: 0, or -1 with the error kept (also when the file
/// turned out to hold something else: the page sniffed it as a snapshot).
#[wasm_bindgen]
pub fn tl_snap_finish() -> i32 {
    with(|s| {
        let Some(l) = s.snap_loader.take() else {
            return -1;
        };
        match l.finish() {
            Ok(Loaded::Snapshot(snap)) => {
                s.snapshot = Some(snap);
                s.next_snap_section = 0;
                0
            }
            Ok(_) => {
                s.error = Some(Error::new(
                    ErrorKind::Incompatible("not a memory snapshot".into()),
                    0,
                ));
                -1
            }
            Err(e) => {
                s.error = Some(e);
                -1
            }
        }
    })
}

/// Makes the output the snapshot's next section; its length, or -1 after the last.
#[wasm_bindgen]
pub fn tl_snap_next_section() -> i32 {
    with(|s| {
        let Some(snap) = &s.snapshot else { return -1 };
        match snapshot::wire::section(snap, s.next_snap_section) {
            Some(v) => {
                s.next_snap_section += 1;
                let n = v.len() as i32;
                s.out = vec![v];
                n
            }
            None => -1,
        }
    })
}

/// After the snapshot is built, before its sections: builds its first views (each device's
/// figures and chart, `SnapshotViews::first`: what the page would otherwise compute on its own
/// thread for seconds), which the page draws while the model's sections follow.
/// Returns how many sections they take (handed out by [`tl_next_analysis_section`]), or -1 (no
/// snapshot, or they could not be encoded: the page computes them itself).
#[wasm_bindgen]
pub fn tl_snap_views() -> i32 {
    with(|s| {
        let views = match &s.snapshot {
            Some(snap) => SnapshotViews::first(snap),
            None => return -1,
        };
        s.charted = views.charts.iter().map(|(d, _)| *d).collect();
        let sections = snapshot_wire::sections(&views);
        hand_out(s, sections)
    })
}

/// After the model's last section, before the whole summary: the peak flame graph of each device
/// the first views charted (the Memory tab shows them once the model is in). Returns how many
/// sections they take (handed out by [`tl_next_analysis_section`]), or -1 (no snapshot: the page
/// computes a device's graph when it shows it).
#[wasm_bindgen]
pub fn tl_snap_flames() -> i32 {
    with(|s| {
        let Some(snap) = &s.snapshot else { return -1 };
        let flames = snapshot_wire::peak_flames(snap, &s.charted);
        hand_out(s, Ok(flame_sections(&flames)))
    })
}

/// After the model's last section: the whole summary (the first views' figures with the peak's
/// tables and the state at the dump) as the output, and the model dropped. Its length, or -1
/// (the page then computes it itself).
#[wasm_bindgen]
pub fn tl_snap_summary() -> i32 {
    with(|s| {
        let Some(snap) = s.snapshot.take() else {
            return -1;
        };
        let sum = summarize(&snap);
        drop(snap);
        match snapshot_wire::summary_section(&sum) {
            Ok(v) => {
                let n = v.len() as i32;
                s.out = vec![v];
                n
            }
            Err(_) => -1,
        }
    })
}
