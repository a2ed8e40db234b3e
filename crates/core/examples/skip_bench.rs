//! `cargo run --release -p tracelight-core --example skip_bench -- FILE [ROUNDS]`
//!
//! Times the JSON scanner's container skip over FILE's whole `traceEvents` array (as the Kineto
//! reader skips args values and unknown keys), eight bytes at a time (SWAR) and a byte at a time,
//! alternating, in one process: MB/s of each and their ratio (BENCHMARKS.md).

use std::time::Instant;
use tracelight_core::ingest::skip_end;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: skip_bench FILE [ROUNDS]");
        std::process::exit(64);
    };
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(3);
    let Ok(data) = std::fs::read(path) else {
        eprintln!("cannot read {path}");
        std::process::exit(2);
    };
    let Some(start) = data
        .windows(13)
        .position(|w| w == b"\"traceEvents\"")
        .and_then(|k| data[k..].iter().position(|&c| c == b'[').map(|p| k + p))
    else {
        eprintln!("{path}: no traceEvents array");
        std::process::exit(2);
    };
    let mut best = [f64::MAX; 2];
    for _ in 0..rounds {
        for (k, swar) in [(0, true), (1, false)] {
            let t = Instant::now();
            let end = skip_end(&data, start, swar);
            let s = t.elapsed().as_secs_f64();
            assert!(end.is_some(), "{path}: the array does not close");
            best[k] = best[k].min(s);
        }
    }
    let mb = (data.len() - start) as f64 / 1e6;
    println!(
        "{path}: {mb:.0} MB skipped: SWAR {:.0} MB/s, bytewise {:.0} MB/s, ratio {:.2} (best of {rounds})",
        mb / best[0],
        mb / best[1],
        best[1] / best[0]
    );
}
