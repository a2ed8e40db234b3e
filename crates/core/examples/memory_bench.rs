//! `cargo run --release -p tracelight-core --example memory_bench -- SNAPSHOT.pickle`
//!
//! Times the stages the Memory tab runs on a snapshot: decode (pickle → model), `summarize` (figures,
//! peaks, largest at peak, by stack) and `snapshot_chart` for the busiest device.

use std::time::Instant;
use tracelight_core::analysis::memory_chart::{snapshot_chart, MAX_BANDS};
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::snapshot::parse;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: memory_bench SNAPSHOT.pickle");
        std::process::exit(64);
    };
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!("cannot read {path}");
        std::process::exit(2);
    };
    let t = Instant::now();
    let p = match tracelight_core::ingest::pickle::decode(&bytes) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let t_pickle = t.elapsed();
    let arena = format!(
        "{} values, {} item slots, {} B text",
        p.nodes.len(),
        p.items.len(),
        p.text.len()
    );
    let t = Instant::now();
    let s = match tracelight_core::ingest::snapshot::from_pickle(&p) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let t_model = t.elapsed();
    drop(p);
    let _ = parse;
    let t = Instant::now();
    let sum = summarize(&s);
    let t_sum = t.elapsed();
    let dev = sum
        .devices
        .iter()
        .max_by_key(|d| d.trace_entries)
        .map_or(0, |d| d.device);
    let t = Instant::now();
    let c = snapshot_chart(&s, dev, MAX_BANDS);
    let t_chart = t.elapsed();
    let pts: usize = c.bands.iter().map(|b| b.x.len()).sum();
    println!(
        "{:.1} MB: pickle {:?}, model {:?}, summarize {:?}, chart {:?} ({} bands, {pts} points; {arena})",
        bytes.len() as f64 / 1e6,
        t_pickle,
        t_model,
        t_sum,
        t_chart,
        c.bands.len()
    );
}
