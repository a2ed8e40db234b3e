//! `cargo run --release -p tracelight-core --example et_parse -- FILE`
//!
//! Reads a Chakra execution trace: inflates it first if gzipped (not timed), then times the
//! streaming reader over 4 MiB slices of the decoded bytes (decoded MB/s, what BENCHMARKS.md
//! quotes), and the data-dependency index and summary the details panel and the CLI build on it.

use std::io::Read;
use std::time::Instant;
use tracelight_core::analysis::et::{summary, Producers};
use tracelight_core::ingest::chakra::ChakraReader;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: et_parse FILE");
        std::process::exit(64);
    };
    let Ok(raw) = std::fs::read(&path) else {
        eprintln!("cannot open {path}");
        std::process::exit(2);
    };
    let mut text = Vec::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        if let Err(e) = flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut text) {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    } else {
        text = raw;
    }
    let t0 = Instant::now();
    let mut r = ChakraReader::new();
    for c in text.chunks(4 << 20) {
        if let Err(e) = r.push(c) {
            eprintln!("{}", e.in_file(&path));
            std::process::exit(2);
        }
    }
    let et = match r.finish() {
        Ok(et) => et,
        Err(e) => {
            eprintln!("{}", e.in_file(&path));
            std::process::exit(2);
        }
    };
    let read = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let p = Producers::build(&et);
    let s = summary(&et);
    let index = t1.elapsed().as_secs_f64();
    let mb = text.len() as f64 / 1e6;
    println!(
        "{path}: {mb:.1} MB decoded, {} nodes, {} args, read {:.1} ms = {:.0} MB/s; producers + summary {:.1} ms ({} ops, {} distinct names, {})",
        et.nodes.len(),
        et.args.len(),
        read * 1e3,
        mb / read,
        index * 1e3,
        s.ops,
        et.strings.len(),
        std::mem::size_of_val(&p),
    );
}
