//! `cargo run --release -p tracelight-core --example memory_bench -- SNAPSHOT.pickle [--streamed]`
//!
//! Times the stages the Memory tab runs on a snapshot: decode (pickle → model), `summarize` (figures,
//! peaks, largest at peak, by stack) and `snapshot_chart` for the busiest device. By default the
//! whole-file decoder (the file in memory, then its pickle arena); `--streamed` reads the file in
//! 4 MiB pieces into the streaming reader (what the page's worker and the loader run), never holding
//! the file, and prints the reader's largest working memory and the process's peak RSS.

use std::time::Instant;
use tracelight_core::analysis::memory_chart::{snapshot_chart, MAX_BANDS};
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::snapshot::parse;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: memory_bench SNAPSHOT.pickle");
        std::process::exit(64);
    };
    if std::env::args().nth(2).as_deref() == Some("--streamed") {
        streamed(&path);
        return;
    }
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

/// Peak resident memory of this process (Linux `VmHWM`), in bytes.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            t.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse::<u64>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}

fn streamed(path: &str) {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else {
        eprintln!("cannot read {path}");
        std::process::exit(2);
    };
    let t = Instant::now();
    let mut r = tracelight_core::ingest::snapshot::SnapshotStream::new();
    let mut buf = vec![0u8; 4 << 20];
    let (mut total, mut working) = (0u64, 0usize);
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        };
        total += n as u64;
        if let Err(e) = r.push(&buf[..n]) {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
        working = working.max(r.working_bytes());
    }
    let s = match r.finish() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let t_decode = t.elapsed();
    let entries: usize = s.device_traces.iter().map(|t| t.len()).sum();
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
    println!(
        "{:.1} MB streamed: decode {:?}, summarize {:?}, chart {:?} ({} bands); {entries} entries, {} frames, {} stacks; reader working memory at most {:.1} MB; peak RSS {:.1} MB ({:.2}x the file)",
        total as f64 / 1e6,
        t_decode,
        t_sum,
        t_chart,
        c.bands.len(),
        s.frames.filename.len(),
        s.stacks.len(),
        working as f64 / 1e6,
        peak_rss() as f64 / 1e6,
        peak_rss() as f64 / total.max(1) as f64
    );
    model_sections(&s);
    views_sections(&s);
}

/// The model as the snapshot worker hands it to the page (`ingest::snapshot::wire`), made one
/// section at a time and decoded again: the worker makes them between the decode and the views.
fn model_sections(s: &tracelight_core::ingest::snapshot::Snapshot) {
    use tracelight_core::ingest::snapshot::wire::{section, Decoder};
    let t = Instant::now();
    let mut secs = Vec::new();
    while let Some(sec) = section(s, secs.len()) {
        secs.push(sec);
    }
    let t_enc = t.elapsed();
    let t = Instant::now();
    let mut d = Decoder::default();
    for (k, sec) in secs.iter().enumerate() {
        if let Err(e) = d.push(sec) {
            eprintln!("model section {k}: {e}");
            return;
        }
    }
    let t_push = t.elapsed();
    let t = Instant::now();
    if let Err(e) = d.finish() {
        eprintln!("model sections: {e}");
        return;
    }
    println!(
        "model sections: made in {t_enc:?}, {} sections, {:.1} MB; decoded in {t_push:?}, checked in {:?}",
        secs.len(),
        secs.iter().map(Vec::len).sum::<usize>() as f64 / 1e6,
        t.elapsed()
    );
}

/// The Memory tab's views as the snapshot worker hands them to the page
/// (`report::snapshot_wire`): the largest sections and the longest one to decode, since the page
/// decodes one section per task.
fn views_sections(s: &tracelight_core::ingest::snapshot::Snapshot) {
    use tracelight_core::report::snapshot_flame_wire::{flame_sections, FlameDecoder};
    use tracelight_core::report::snapshot_wire::{sections, Decoder, SnapshotViews};
    let t = Instant::now();
    let v = SnapshotViews::of(s);
    let t_views = t.elapsed();
    let Ok(mut secs) = sections(&v) else {
        eprintln!("views could not be encoded");
        return;
    };
    // The flame graphs' sections follow the charts' (they travel after the model).
    let charts = secs.len();
    secs.extend(flame_sections(&v.flames));
    let (mut d, mut fd) = (Decoder::default(), FlameDecoder::default());
    let (mut worst, mut worst_at, mut biggest) = (std::time::Duration::ZERO, 0, 0);
    for (k, sec) in secs.iter().enumerate() {
        let t = Instant::now();
        let pushed = if k < charts {
            d.push(sec)
        } else {
            fd.push(sec)
        };
        if let Err(e) = pushed {
            eprintln!("section {k}: {e}");
            return;
        }
        if t.elapsed() > worst {
            (worst, worst_at) = (t.elapsed(), k);
        }
        biggest = biggest.max(sec.len());
        if sec.len() > 4 << 20 || t.elapsed().as_millis() > 10 {
            println!(
                "  section {k}: {:.1} MB, decoded in {:?}",
                sec.len() as f64 / 1e6,
                t.elapsed()
            );
        }
    }
    println!(
        "views {t_views:?}: {} sections, {:.1} MB, largest {:.1} MB; longest decode {worst:?} (section {worst_at}, {:.1} MB)",
        secs.len(),
        secs.iter().map(Vec::len).sum::<usize>() as f64 / 1e6,
        biggest as f64 / 1e6,
        secs[worst_at].len() as f64 / 1e6
    );
}
