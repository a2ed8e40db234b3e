//! Fuzzes the data-only pickle decoder and the snapshot model built on it: any bytes must give a
//! value or an error, never a panic, a hang or unbounded allocation.
//! Run: `cargo +nightly fuzz run pickle -- -max_len=65536` (seed with `../shared/corpus/*/snapshots`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::{pickle, snapshot};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = pickle::decode(data) {
        let _ = p.to_json(p.root, 8);
        if let Ok(s) = snapshot::from_pickle(&p) {
            let _ = summarize(&s);
        }
    }
});
