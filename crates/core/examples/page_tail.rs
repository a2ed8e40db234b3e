//! `cargo run --release -p tracelight-core --example page_tail -- FILE`
//!
//! What the page runs on its own thread after a trace's model arrives, one piece at a time, timed
//! natively on one thread (the page's wasm is slower): the file's facts, each step of the
//! timeline's index and the passes after it (which the merging worker runs since `view::parts`),
//! the decode of the timeline parts' and the analysis's sections.
//! A piece over ~25 ms here is a task over 50 ms in the page; BENCHMARKS.md quotes it.

use std::io::Read;
use std::time::Instant;
use tracelight_core::analysis::gpu::{kernel_devices, kernel_runs};
use tracelight_core::analysis::scope::annotation_names;
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::report::facts::Facts;
use tracelight_core::report::{analysis::Analysis, analysis_wire};
use tracelight_core::view::counters::{
    memory_tracks, plain_counters, utilization_track, BusySeries,
};
use tracelight_core::view::layout::groups;
use tracelight_core::view::lod::LodSort;
use tracelight_core::view::parts::{self, TimelineParts};
use tracelight_core::view::steps::step_marks;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: page_tail FILE");
        std::process::exit(64);
    };
    let mut f = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let mut loader = Loader::new(&path).threaded();
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
    let t = match loader.finish() {
        Ok(Loaded::Trace(t)) => t,
        Ok(_) => {
            eprintln!("{path}: not a Kineto trace");
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    println!("{path}: {} slices", t.slices.len());
    let piece = |what: &str, ms: f64| {
        if ms >= 5.0 {
            println!("{ms:9.1} ms  {what}");
        }
    };
    let c = Instant::now();
    let _facts = Facts::of(&path, &t);
    piece("facts", ms(c));
    let c = Instant::now();
    let _ = t.time_bounds();
    piece("time bounds", ms(c));
    let (mut sort, mut longest, all) = (LodSort::new(&t), 0.0f64, Instant::now());
    loop {
        let c = Instant::now();
        let more = sort.step(&t, 1 << 18);
        longest = longest.max(ms(c));
        if !more {
            break;
        }
    }
    piece(
        &format!("slices into lanes: {:.0} ms in all, longest step", ms(all)),
        longest,
    );
    let mut b = sort.done();
    let (mut steps, mut longest, all) = (0, 0.0f64, Instant::now());
    loop {
        let c = Instant::now();
        let more = b.step_within(&t, 1 << 18);
        longest = longest.max(ms(c));
        steps += 1;
        if !more {
            break;
        }
    }
    piece(
        &format!("LOD: {steps} steps, {:.0} ms in all, longest", ms(all)),
        longest,
    );
    let c = Instant::now();
    let mut counters = memory_tracks(&t);
    piece("memory_tracks", ms(c));
    for c in &counters {
        if let tracelight_core::view::counters::SeriesData::Step(s) = &c.data {
            println!("             {}: {} values", c.label, s.ts.len());
        }
    }
    for d in kernel_devices(&t) {
        let c = Instant::now();
        let runs = kernel_runs(&t, d);
        let n = BusySeries::union_len(&runs);
        piece(
            &format!("device {d}: kernel runs + union_len ({n} intervals)"),
            ms(c),
        );
        let c = Instant::now();
        counters.push(utilization_track(
            d,
            BusySeries::from_counted_runs(&runs, n),
        ));
        piece(&format!("device {d}: utilization"), ms(c));
    }
    let c = Instant::now();
    counters.extend(plain_counters(&t));
    piece("plain_counters", ms(c));
    let c = Instant::now();
    let _g = groups(&t, &counters);
    piece("groups", ms(c));
    let c = Instant::now();
    let _s = step_marks(&t);
    piece("step_marks", ms(c));
    let c = Instant::now();
    let _a = annotation_names(&t);
    piece("annotation_names", ms(c));
    let c = Instant::now();
    let parts = TimelineParts::of(&t);
    println!("{:9.1} ms  TimelineParts::of (in the worker)", ms(c));
    let mut d = parts::Decoder::default();
    let (mut longest, mut n) = (0.0f64, 0);
    for k in 0..parts::section_count(&parts) {
        let Some(s) = parts::section(&parts, k) else {
            break;
        };
        let c = Instant::now();
        if let Err(e) = d.push(&s) {
            eprintln!("{e}");
            std::process::exit(2);
        }
        longest = longest.max(ms(c));
        n += 1;
    }
    println!("{longest:9.1} ms  the longest of {n} timeline sections' decode");
    let c = Instant::now();
    let a = Analysis::of(&path, &t);
    println!("{:9.1} ms  Analysis::of (in the worker)", ms(c));
    let sections = match analysis_wire::sections(&a) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut d = analysis_wire::Decoder::default();
    let mut longest = 0.0f64;
    for (k, s) in sections.iter().enumerate() {
        let c = Instant::now();
        if let Err(e) = d.push(s) {
            eprintln!("{e}");
            std::process::exit(2);
        }
        longest = longest.max(ms(c));
        piece(&format!("analysis section {k}, {} bytes", s.len()), ms(c));
    }
    println!(
        "{longest:9.1} ms  the longest of {} analysis sections' decode",
        sections.len()
    );
    let c = Instant::now();
    let _ = d.finish();
    piece("analysis decoder finish", ms(c));
}
