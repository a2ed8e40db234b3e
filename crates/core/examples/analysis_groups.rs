//! `cargo run --release -p tracelight-core --example analysis_groups -- FILE`
//!
//! `Analysis::of`'s passes on one thread, each timed (natively; the page's workers run them in
//! wasm, slower), to see how they split between workers; then the two halves the page's workers
//! compute at once, and the steps-and-time half's trip through JSON.
//! `taskset -c 0` keeps `Analysis::of`'s own threads to one core.

use std::time::Instant;
use tracelight_core::analysis::{
    autograd::{autograd, backward_table},
    collectives::calls,
    gpu::{gpu_summary, temporal_hta_compat},
    graphs::{gpu_health, graphs},
    idle::idle_causes,
    kernels::{categories, kernel_table},
    launch::{launch_stats, sync_groups, sync_points},
    memory::memory_summary,
    memory_ops::op_memory_table,
    modules::module_table,
    ops::{op_table_indexed, LaunchTree, OpOptions},
    per_step::per_step,
    roofline::{call_costs, roofline},
    source::source_table,
    steps::steps,
};
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::report::analysis::{Analysis, Paced, Tables};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: analysis_groups FILE");
        std::process::exit(64);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let mut loader = Loader::new(&path).threaded();
    let loaded = loader.push(&bytes).and_then(|_| loader.finish());
    let t = match loaded {
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
    drop(bytes);
    let mut total = 0.0;
    let mut time = |what: &str, f: &mut dyn FnMut()| {
        let s = Instant::now();
        f();
        let ms = s.elapsed().as_secs_f64() * 1e3;
        total += ms;
        println!("{what:>24} {ms:8.1} ms");
    };
    let mut st = Vec::new();
    time("steps", &mut || st = steps(&t));
    time("idle_causes", &mut || drop(idle_causes(&t, &st)));
    time("per_step", &mut || drop(per_step(&t)));
    time("temporal_hta_compat", &mut || {
        let _ = temporal_hta_compat(&t);
    });
    time("gpu_health", &mut || drop(gpu_health(&t)));
    time("graphs", &mut || drop(graphs(&t)));
    let mut kt = None;
    time("kernel_table", &mut || kt = Some(kernel_table(&t)));
    time("categories", &mut || drop(kt.as_ref().map(categories)));
    let mut ag = None;
    time("autograd", &mut || ag = Some(autograd(&t)));
    let Some(ag) = ag else { return };
    time("gpu_summary", &mut || drop(gpu_summary(&t)));
    time("memory_summary", &mut || drop(memory_summary(&t)));
    time("launch_stats", &mut || drop(launch_stats(&t)));
    time("sync", &mut || drop(sync_groups(&sync_points(&t))));
    time("module_table", &mut || drop(module_table(&t, &ag)));
    time("source_table", &mut || drop(source_table(&t, &ag)));
    time("backward_table", &mut || drop(backward_table(&t, &ag)));
    time("op_memory_table", &mut || drop(op_memory_table(&t)));
    time("calls", &mut || drop(calls(&t)));
    let mut tree = None;
    time("op_table_indexed", &mut || {
        tree = Some(LaunchTree::from(
            op_table_indexed(&t, OpOptions::default()).1,
        ))
    });
    let Some(tree) = tree else { return };
    let mut costs = None;
    time("call_costs", &mut || costs = Some(call_costs(&t, &tree)));
    let Some(costs) = costs else { return };
    time("roofline", &mut || drop(roofline(&t, &tree, &costs)));
    println!("{:>24} {total:8.1} ms", "sum");
    // The two halves the page's workers 1 and 0 compute at once (`Paced`, `Tables`).
    let s = Instant::now();
    let paced = Paced::of(&t);
    println!(
        "{:>24} {:8.1} ms",
        "Paced::of",
        s.elapsed().as_secs_f64() * 1e3
    );
    let s = Instant::now();
    let json = paced.to_json();
    let back = Paced::from_json(&json);
    println!(
        "{:>24} {:8.1} ms ({} bytes of JSON, read back: {})",
        "Paced JSON and back",
        s.elapsed().as_secs_f64() * 1e3,
        json.len(),
        back.is_ok()
    );
    let s = Instant::now();
    let tables = Tables::of(&t);
    println!(
        "{:>24} {:8.1} ms",
        "Tables::of",
        s.elapsed().as_secs_f64() * 1e3
    );
    let s = Instant::now();
    drop(Analysis::from_parts(&path, &t, paced, tables));
    println!(
        "{:>24} {:8.1} ms",
        "Analysis::from_parts",
        s.elapsed().as_secs_f64() * 1e3
    );
    let s = Instant::now();
    let a = Analysis::of(&path, &t);
    println!(
        "{:>24} {:8.1} ms (threads where there are cores)",
        "Analysis::of",
        s.elapsed().as_secs_f64() * 1e3
    );
    drop(a);
}
