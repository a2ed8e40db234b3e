//! Regression (issue 18): "Largest at peak" showed a free stack in its "Top frame" column for
//! blocks allocated before the trace (only their free is in `device_traces`, so the only stack is
//! the freeing one, e.g. `THPVariable_clear`). Such a block is now attributed to
//! `<allocated before the trace>`, its free frame kept apart in `freed_at`, its `top_frames`
//! empty. Blocks live at the dump keep the allocation stack from `segments[].blocks[].frames`.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::{load_bytes, Loaded};

const SNAPS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/corpus/real/snapshots"
);

#[test]
fn largest_at_peak_never_shows_a_free_stack_as_the_top_frame() {
    let Ok(dir) = std::fs::read_dir(SNAPS) else {
        println!("note: {SNAPS} not found; skipping");
        return;
    };
    let mut freed_seen = 0;
    for e in dir {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        let name = p.to_string_lossy().into_owned();
        let Ok(Loaded::Snapshot(s)) = load_bytes(&name, &bytes) else {
            panic!("{name} must load as a snapshot")
        };
        for d in summarize(&s).devices {
            for b in &d.peak_blocks {
                assert!(!b.frame.starts_with("freed at"), "{name}: {}", b.frame);
                if let Some(f) = &b.freed_at {
                    freed_seen += 1;
                    assert!(b.alloc_index.is_none(), "{name}: {f}");
                    assert!(b.top_frames.is_empty(), "{name}: {:?}", b.top_frames);
                    assert_eq!(b.frame, "<allocated before the trace>");
                }
            }
        }
    }
    // cs336_nothanmin: 3.9 GB live at the peak was allocated before its trace began.
    assert!(freed_seen > 0);
}
