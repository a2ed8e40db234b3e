//! `cargo run --release -p tracelight-core --example worker_peak -- FILE [K]`
//!
//! What the page's reader workers hold, phase by phase, measured natively: the live heap bytes
//! and their peak (a counting allocator) while worker 0 reads its shard, merges the K-1 others
//! from their sections, finishes the model and hands it out section by section, and while worker
//! k > 0 reads and encodes its shard; then the page's side: the model decoded from those sections,
//! the timeline's index and each counter track's working memory. A wasm instance's memory never shrinks, so its size is at
//! least the peak printed here (plus the allocator's fragmentation); BENCHMARKS.md compares both.
//! `MERGER=1`: every worker, worker 0 too, hands its shard to one that parses nothing and merges
//! them all (the page's way from 2 GB); `SECTIONS=1`: the live and peak bytes after each section
//! merged.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use tracelight_core::ingest::kineto::cut::find_cut_forward;
use tracelight_core::ingest::kineto::{first_byte, IncomingShard, KinetoReader};
use tracelight_core::model::wire::{self, Wire};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the counters are
// only bookkeeping and never affect the pointers returned.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on as is.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: `p` came from `System.alloc` with this layout (every allocation goes through here).
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > l.size() {
            let now = LIVE.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
            // A realloc that moves holds both blocks for a moment.
            PEAK.fetch_max(now + l.size(), Ordering::Relaxed);
        } else {
            LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
        }
        // SAFETY: as `dealloc`; `new` is the caller's.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

const PIECE: usize = 4 << 20;

fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

fn read(r: &mut KinetoReader, bytes: &[u8]) {
    for piece in bytes.chunks(PIECE) {
        if let Err(e) = r.push(piece) {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: worker_peak FILE [K]");
        std::process::exit(2);
    };
    let k: usize = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(2).max(1);
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let n = bytes.len();
    // The file stands for the `File` the workers read by slices: not counted.
    LIVE.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    let bare = first_byte(&bytes) == Some(b'[');
    let cut = |from: usize| -> usize {
        if from == 0 || from >= n {
            return from.min(n);
        }
        find_cut_forward(&bytes[from..], 0).map_or(n, |c| from + c)
    };
    let cuts: Vec<usize> = (0..=k)
        .map(|i| if i == k { n } else { cut(n * i / k) })
        .collect();

    // `MERGER=1`: as the page does for a big file, every worker (worker 0 too) hands its shard
    // to a worker that read nothing, which merges them all into one block per staged column.
    let merger = std::env::var_os("MERGER").is_some();
    // Workers k > 0 (and 0 for MERGER), one after the other (each its own instance: its peak
    // printed alone).
    let mut shards = Vec::new();
    let mut slices = 0;
    for i in usize::from(!merger)..k {
        reset_peak();
        let at = LIVE.load(Ordering::Relaxed);
        let mut r = if i == 0 {
            KinetoReader::new()
        } else {
            KinetoReader::shard(cuts[i] as u64, bare)
        };
        // As the page's workers read: the args stay in the file.
        r.leave_args_in_file();
        read(&mut r, &bytes[cuts[i]..cuts[i + 1]]);
        slices += r.slices();
        // The status section first (no error), then the reader's, as `tl_shard_sections` makes them.
        let mut status = Vec::new();
        None::<tracelight_core::Error>.put(&mut status);
        let mut sections = vec![status];
        // One at a time, each transferred out of the instance as soon as it is made.
        for k in 0..r.section_count().unwrap_or(0) {
            let v = r.section(k).unwrap_or_default();
            LIVE.fetch_sub(v.len(), Ordering::Relaxed);
            sections.push(v);
        }
        drop(r);
        let own = PEAK.load(Ordering::Relaxed) - at;
        LIVE.fetch_add(
            sections.iter().skip(1).map(Vec::len).sum(),
            Ordering::Relaxed,
        );
        println!(
            "worker {i}: read + encode its shard               peak {:>8.1} MB ({:.2}x file); sections {:.1} MB",
            own as f64 / 1e6,
            own as f64 / n as f64,
            sections.iter().map(Vec::len).sum::<usize>() as f64 / 1e6
        );
        shards.push((cuts[i] as u64, sections));
    }
    // Worker 0 from here. The other shards' sections arrive as transferred buffers, outside its
    // instance until copied in: count them out.
    for (_, sections) in &shards {
        LIVE.fetch_sub(sections.iter().map(Vec::len).sum(), Ordering::Relaxed);
    }
    let offset = LIVE.load(Ordering::Relaxed);
    let mut top = 0;
    let mut phase = |what: &str| {
        let (live, peak) = (LIVE.load(Ordering::Relaxed), PEAK.load(Ordering::Relaxed));
        top = top.max(peak - offset);
        let x = |b: usize| format!("{:>7.1} MB ({:.2}x)", b as f64 / 1e6, b as f64 / n as f64);
        println!(
            "worker 0: {what:<26} live {}   phase peak {}   peak {}",
            x(live - offset),
            x(peak - offset),
            x(top)
        );
        reset_peak();
    };
    reset_peak();
    let fail = |e: tracelight_core::Error| -> ! {
        eprintln!("merge: {e}");
        std::process::exit(1)
    };
    let mut shards = shards.into_iter();
    let mut r = if merger {
        let Some((_, sections)) = shards.next() else {
            fail(tracelight_core::Error::new(
                tracelight_core::ErrorKind::Syntax("no shard".into()),
                0,
            ))
        };
        let mut inc = IncomingShard::first(sections.len(), slices).unwrap_or_else(|e| fail(e));
        for section in sections {
            let copy = section.clone();
            LIVE.fetch_add(section.len(), Ordering::Relaxed);
            drop(section);
            inc.push(&copy).unwrap_or_else(|e| fail(e));
        }
        let r = inc.into_reader().unwrap_or_else(|e| fail(e));
        phase("took the first shard");
        r
    } else {
        let mut r = KinetoReader::new();
        r.leave_args_in_file();
        read(&mut r, &bytes[..cuts[1]]);
        phase("its own shard read");
        r
    };
    for (start, sections) in shards {
        // As the worker does: each section copied into its instance, read, and let go.
        let mut inc = match r.incoming(start, bare, sections.len()) {
            Ok(Some(inc)) => inc,
            Ok(None) => fail(tracelight_core::Error::new(
                tracelight_core::ErrorKind::Syntax("a cut inside an event".into()),
                start,
            )),
            Err(e) => fail(e),
        };
        for section in sections {
            let copy = section.clone();
            LIVE.fetch_add(section.len(), Ordering::Relaxed);
            drop(section);
            let began = std::time::Instant::now();
            r.absorb_section(&mut inc, &copy)
                .unwrap_or_else(|e| fail(e));
            let took = began.elapsed().as_secs_f64() * 1e3;
            if std::env::var_os("SECTIONS").is_some() {
                eprintln!(
                    "  section {:>9} B in {took:6.1} ms: live {:.1} MB, peak {:.1} MB",
                    copy.len(),
                    LIVE.load(Ordering::Relaxed) as f64 / 1e6,
                    PEAK.load(Ordering::Relaxed) as f64 / 1e6
                );
            }
        }
        r.merge_incoming(inc).unwrap_or_else(|e| fail(e));
        phase("merged a shard");
    }
    let t = match r.finish() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    phase("finished (the model)");
    let mut total = 0;
    for s in 0.. {
        let Some(v) = wire::section(&t, s) else { break };
        total += v.len();
    }
    phase("handed out every section");
    if std::env::var_os("PARTS").is_some() {
        parts(&t, n);
        reset_peak();
    }
    let a = tracelight_core::report::analysis::Analysis::of(path, &t);
    phase("analysed");
    drop(a);
    page(&t, n);
    println!(
        "model heap {:.1} MB ({:.2}x file); wire {:.1} MB; {n} bytes; {} slices",
        t.heap_bytes() as f64 / 1e6,
        t.heap_bytes() as f64 / n as f64,
        total as f64 / 1e6,
        t.slices.len()
    );
}

/// The page: the model decoded from worker 0's sections (each copied in, read and let go), then
/// the timeline's index built over it.
fn page(t: &tracelight_core::model::Trace, n: usize) {
    let at = LIVE.load(Ordering::Relaxed);
    reset_peak();
    let x = |b: usize| format!("{:>7.1} MB ({:.2}x)", b as f64 / 1e6, b as f64 / n as f64);
    let mut d = wire::Decoder::default();
    for s in 0.. {
        let Some(v) = wire::section(t, s) else { break };
        // One section at a time, as the page takes them (made here, each counts as the page's copy).
        if let Err(e) = d.push(&v) {
            eprintln!("page decode: {e}");
            std::process::exit(1);
        }
    }
    let m = match d.finish() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("page decode: {e}");
            std::process::exit(1);
        }
    };
    let (live, peak) = (LIVE.load(Ordering::Relaxed), PEAK.load(Ordering::Relaxed));
    println!(
        "page: model decoded           live {}   peak {}",
        x(live - at),
        x(peak - at)
    );
    reset_peak();
    let lod = tracelight_core::view::lod::LodIndex::build(&m);
    let (live2, peak2) = (LIVE.load(Ordering::Relaxed), PEAK.load(Ordering::Relaxed));
    println!(
        "page: timeline index built    live {}   phase peak {}",
        x(live2 - at),
        x(peak2 - at)
    );
    let step = |what: &str, f: &dyn Fn()| {
        let before = LIVE.load(Ordering::Relaxed);
        reset_peak();
        f();
        println!(
            "page:   {what:<22} transient {}",
            x(PEAK.load(Ordering::Relaxed) - before)
        );
    };
    use tracelight_core::view::counters::*;
    step("memory_tracks", &|| drop(memory_tracks(&m)));
    step("utilization_tracks", &|| drop(utilization_tracks(&m)));
    step("plain_counters", &|| drop(plain_counters(&m)));
    step("step_marks", &|| {
        drop(tracelight_core::view::steps::step_marks(&m))
    });
    step("annotation_names", &|| {
        drop(tracelight_core::analysis::scope::annotation_names(&m))
    });
    drop(lod);
}

/// `PARTS=1`: each analysis's own peak above the model, and what it keeps.
fn parts(t: &tracelight_core::model::Trace, n: usize) {
    use tracelight_core::analysis::*;
    fn one<R>(what: &str, n: usize, f: impl FnOnce() -> R) -> R {
        let at = LIVE.load(Ordering::Relaxed);
        reset_peak();
        let r = f();
        let (live, peak) = (LIVE.load(Ordering::Relaxed), PEAK.load(Ordering::Relaxed));
        println!(
            "  {what:<22} transient {:>7.1} MB ({:.3}x file)  kept {:>6.1} MB",
            (peak - at) as f64 / 1e6,
            (peak - at) as f64 / n as f64,
            live.saturating_sub(at) as f64 / 1e6
        );
        r
    }
    let (_ops, tree, _) = one("op_table_indexed", n, || {
        ops::op_table_indexed(t, ops::OpOptions::default())
    });
    let tree = ops::LaunchTree::from(tree);
    one("call_costs", n, || roofline::call_costs(t, &tree));
    let st = one("steps", n, || steps::steps(t));
    one("idle_causes", n, || idle::idle_causes(t, &st));
    one("per_step", n, || per_step::per_step(t));
    one("temporal_hta_compat", n, || gpu::temporal_hta_compat(t));
    one("gpu_health", n, || graphs::gpu_health(t));
    one("graphs", n, || graphs::graphs(t));
    one("kernel_table", n, || kernels::kernel_table(t));
    let ag = one("autograd", n, || autograd::autograd(t));
    one("gpu_summary", n, || gpu::gpu_summary(t));
    one("memory_summary", n, || memory::memory_summary(t));
    one("launch_stats", n, || launch::launch_stats(t));
    one("sync_points", n, || launch::sync_points(t));
    one("module_table", n, || modules::module_table(t, &ag));
    one("source_table", n, || source::source_table(t, &ag));
    one("backward_table", n, || autograd::backward_table(t, &ag));
    one("op_memory_table", n, || memory_ops::op_memory_table(t));
    one("calls", n, || comm_calls::calls(t));
}
