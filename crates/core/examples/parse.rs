//! `cargo run --release -p tracelight-core --example parse -- FILE [--analyze] [--one-thread] [--threads N]`
//!
//! Parses FILE through the same push loader as the CLI (4 MiB slices, two threads unless
//! `--one-thread`, which is what the browser does) and prints the parse rate in
//! decoded MB/s, the event count and the model's size; BENCHMARKS.md quotes it. With `--analyze`, also
//! times every trace analysis the CLI's `analyze --json` runs.

use std::io::Read;
use std::time::Instant;
use tracelight_core::ingest::{Loaded, Loader};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: parse FILE [--analyze]");
        std::process::exit(64);
    };
    let t0 = Instant::now();
    let Ok(mut f) = std::fs::File::open(path) else {
        eprintln!("cannot open {path}");
        std::process::exit(2);
    };
    let mut loader = Loader::new(path);
    // `--threads N`: the sharded reader on N threads (scaling with K); default every core.
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse::<usize>().ok());
    if let Some(n) = threads {
        loader = loader.threads(n);
    } else if !args.iter().any(|a| a == "--one-thread") {
        loader = loader.threaded();
    }
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        };
        if let Err(e) = loader.push(&buf[..n]) {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
    let t_push = t0.elapsed().as_secs_f64();
    let loaded = match loader.finish() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let secs = t0.elapsed().as_secs_f64();
    let t = match loaded {
        Loaded::Trace(t) => t,
        Loaded::ExecTrace(e) => {
            let mb = e.bytes_read as f64 / 1e6;
            println!(
                "{path}: execution trace, {mb:.1} MB decoded, {} nodes; read {secs:.3} s = {:.0} MB/s",
                e.nodes.len(),
                mb / secs
            );
            return;
        }
        _ => {
            println!("{path}: not a trace");
            return;
        }
    };
    let decoded = t.bytes_read;
    println!(
        "{path}: {:.1} MB decoded, {} events, {} slices; parse {:.3} s (scan {:.3} s + finish {:.3} s) = {:.0} MB/s; model {:.1} MB ({:.2}x file; args text {:.1} MB)",
        decoded as f64 / 1e6,
        t.event_count,
        t.slices.len(),
        secs,
        t_push,
        secs - t_push,
        decoded as f64 / 1e6 / secs,
        t.heap_bytes() as f64 / 1e6,
        t.heap_bytes() as f64 / decoded as f64,
        t.args.len() as f64 / 1e6,
    );
    if args.iter().any(|a| a == "--analyze") {
        let t1 = Instant::now();
        let a = tracelight_core::report::json::Analysis::of(path, &t);
        let s = t1.elapsed().as_secs_f64();
        println!(
            "analyses: {s:.3} s ({:.0}% of parse); {} op rows",
            s / secs * 100.0,
            a.ops.rows.len()
        );
    }
}
