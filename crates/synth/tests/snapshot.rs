//! The warm-up snapshot is a snapshot the reader reads as written: its entries, their frames,
//! and the one segment's live blocks, counted here from the generator's own rules.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use tracelight_core::ingest::snapshot;

#[test]
fn the_generated_snapshot_reads_back_as_written() {
    let (entries, depth) = (200u32, 12u32);
    let bytes = tracelight_synth::snapshot::snapshot(entries, depth);
    // Every third entry frees the one before it: two trace entries each.
    let frees = (0..entries).filter(|k| k % 3 == 2).count();
    for s in [
        snapshot::parse(&bytes).unwrap(),
        snapshot::parse_streamed(&bytes, 4093).unwrap(),
    ] {
        assert_eq!(s.device_traces.len(), 1);
        let t = &s.device_traces[0];
        assert_eq!(t.action.len(), entries as usize + 2 * frees);
        for (i, &st) in t.stack.iter().enumerate() {
            assert_eq!(s.stacks.get(st).len(), depth as usize, "entry {i}");
        }
        assert_eq!(s.segments.len(), 1);
        assert_eq!(s.blocks.len(), entries as usize - frees);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }
}
