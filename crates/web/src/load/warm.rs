//! Readying the reader before the first load: V8 optimizes wasm code only after it has run a
//! while, so the bundled demo is parsed a few times while the user picks a file.

use super::reader::prewarm;
use crate::platform::clock::{now_ms, yield_now};
use std::sync::OnceLock;
use tracelight_core::ingest::{snapshot, Loaded, Loader};
use tracelight_core::report::snapshot_flame_wire::{flame_sections, FlameDecoder};
use tracelight_core::report::snapshot_wire::{self, SnapshotViews};

/// The demo's trace, parsed a few times before the first real load: V8 runs new wasm code
/// unoptimized and optimizes a function only after it has run a while, so a cold first load spent a
/// third of its time in slow code (100 MB: 0.81-0.85 s cold, 0.54-0.60 s after one small parse).
/// Generated at first use by `tracelight-synth` with the demo's settings (10 steps of 6 layers,
/// 864 KB of JSON) rather than embedded: the demo's 61 KB of gzip were 6 % of the gzipped wasm.
fn warm_up_trace() -> &'static [u8] {
    static TRACE: OnceLock<Vec<u8>> = OnceLock::new();
    TRACE.get_or_init(|| synth(10))
}

/// One step of the same: the first parses, while the reader still runs in V8's baseline tier
/// (the 10-step trace's first parse was one task of 80–100 ms at start-up).
fn small_warm_up_trace() -> &'static [u8] {
    static TRACE: OnceLock<Vec<u8>> = OnceLock::new();
    TRACE.get_or_init(|| synth(1))
}

fn synth(steps: u32) -> Vec<u8> {
    let cfg = tracelight_synth::Config {
        steps,
        layers: 6,
        ..tracelight_synth::Config::default()
    };
    let mut out = Vec::new();
    let _ = tracelight_synth::generate(&cfg, &mut out);
    out
}

/// A small snapshot (3,000 entries of 6 frames), read a few times before the first load the way
/// a dropped snapshot is: streamed through the `Loader` (the reader worker's path), its model and
/// views put into sections and read back (the page's). The worker runs the same module, and V8
/// shares optimized code between a page and its workers: without this, a 50 MB snapshot was
/// decoded in the baseline tier for much of its first half second.
///
/// V8 optimizes a function once it has run a while, whatever its calls did: 300 entries of 20
/// frames (as before) warmed the frames' path but left the per-segment, per-entry and per-view
/// code (`build::segment`, the devices' figures, the views' sections) to be optimized during a
/// real load, ~45 ms of compiles on another thread beside the 50 MB bench snapshot's decode
/// and first chart, on two cores (`--js-flags=--trace-wasm-compilation-times`). 20 frames an
/// entry at 3,000 entries made its generation and its views tasks of 50-76 ms at start-up.
pub fn warm_up_snapshot() -> &'static [u8] {
    static SNAPSHOT: OnceLock<Vec<u8>> = OnceLock::new();
    SNAPSHOT.get_or_init(|| tracelight_synth::snapshot::snapshot(3000, 6))
}

/// 30 entries of the same: the first passes, in the baseline tier (the big one's first pass was
/// one task of 75 ms).
fn small_warm_up_snapshot() -> &'static [u8] {
    static SNAPSHOT: OnceLock<Vec<u8>> = OnceLock::new();
    SNAPSHOT.get_or_init(|| tracelight_synth::snapshot::snapshot(30, 20))
}

/// Passes over the small warm-up snapshot, then over the big one.
const SMALL_SNAPSHOT_PASSES: usize = 4;
const SNAPSHOT_PASSES: usize = 8;

/// The most a warm-up task runs before it yields. The first passes run in V8's baseline tier,
/// where a whole pass of the small trace was one task of 50–82 ms at start-up: the passes are cut
/// into pieces instead, each piece ending the task once this much time is spent.
const TASK_MS: f64 = 12.0;

/// The start of the current task; [`Self::pause`] yields once [`TASK_MS`] are spent, and says
/// whether to go on (false once a load started: [`stop`]).
struct Clock(f64);

impl Clock {
    fn new() -> Self {
        Clock(now_ms())
    }

    async fn pause(&mut self) -> bool {
        if now_ms() - self.0 >= TASK_MS {
            yield_now().await;
            self.0 = now_ms();
        }
        !stopped()
    }
}

/// Pushes `bytes` through a `Loader` in 16 KiB pieces, yielding between them when the task's
/// time is spent; `None` when stopped or the bytes do not load.
async fn load_in_pieces(bytes: &[u8], clock: &mut Clock) -> Option<Loaded> {
    let mut l = Loader::new("warm-up");
    l.size_hint(bytes.len() as u64);
    for piece in bytes.chunks(16 << 10) {
        l.push(piece).ok()?;
        if !clock.pause().await {
            return None;
        }
    }
    l.finish().ok()
}

async fn snapshot_pass(bytes: &[u8], clock: &mut Clock) -> Option<()> {
    let Some(Loaded::Snapshot(snap)) = load_in_pieces(bytes, clock).await else {
        return None;
    };
    let mut model = snapshot::wire::Decoder::default();
    let mut k = 0;
    while let Some(section) = snapshot::wire::section(&snap, k) {
        let _ = model.push(&section);
        k += 1;
        if !clock.pause().await {
            return None;
        }
    }
    let _ = model.finish();
    if !clock.pause().await {
        return None;
    }
    let views = SnapshotViews::of(&snap);
    if !clock.pause().await {
        return None;
    }
    let mut back = snapshot_wire::Decoder::default();
    for section in snapshot_wire::sections(&views).unwrap_or_default() {
        let _ = back.push(&section);
        if !clock.pause().await {
            return None;
        }
    }
    let _ = back.finish();
    let mut flames = FlameDecoder::default();
    for section in flame_sections(&views.flames) {
        let _ = flames.push(&section);
        if !clock.pause().await {
            return None;
        }
    }
    let _ = flames.finish();
    Some(())
}

/// Parses of the small trace first.
const SMALL_PARSES: usize = 6;

/// Parses of the demo before the first load: V8 moves each hot function to its optimizing tier
/// only after it has run for a while, and one parse left part of the reader in the baseline tier
/// (105 MB to model ready: 186-198 MB/s after one parse, 202-228 after eight, same build).
const WARM_UP_PARSES: usize = 16;

thread_local!(static WARM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
thread_local!(static STOPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

/// Ends [`prepare`]'s passes: a load has started, and the passes left would only compete with it
/// (a 1 GB snapshot picked at once saw tasks of 52–67 ms from them, its worker busy on the other
/// core).
pub fn stop() {
    STOPPED.with(|s| s.set(true));
}

/// Whether a load has started since the page opened (what readies the page for a first load
/// then stops).
pub fn stopped() -> bool {
    STOPPED.with(|s| s.get())
}

/// The small warm-up snapshot's bytes (generated once), for the first render rehearsed
/// offscreen: its 30 entries run the same rendering code as a big snapshot's, in a smaller page.
pub fn rehearsal_snapshot() -> &'static [u8] {
    small_warm_up_snapshot()
}

/// The small warm-up trace's bytes (generated once), for the first render of a trace rehearsed
/// offscreen: one step of the demo's model, the Overview's cards and tables filled.
pub fn rehearsal_trace() -> &'static [u8] {
    small_warm_up_trace()
}

/// One warm-up parse, the first time it is called (a few ms), for a load asked for before
/// [`prepare`] ran; later calls do nothing.
pub fn warm_up() {
    if !WARM.with(|d| d.replace(true)) {
        let _ = tracelight_core::ingest::load_bytes("warm-up", small_warm_up_trace());
    }
}

/// Readies the page for a first load while the user picks a file: a reader worker started and
/// the reader warmed up, one parse per task so the page stays responsive.
pub async fn prepare() {
    prewarm();
    WARM.with(|d| d.set(true));
    let mut clock = Clock::new();
    for k in 0..SMALL_PARSES + WARM_UP_PARSES {
        // The first use of each warm-up input generates it: in a task of its own.
        if k == 0 || k == SMALL_PARSES {
            yield_now().await;
            clock = Clock::new();
        }
        let trace = if k < SMALL_PARSES {
            small_warm_up_trace()
        } else {
            warm_up_trace()
        };
        if !clock.pause().await || load_in_pieces(trace, &mut clock).await.is_none() {
            return;
        }
    }
    for k in 0..SMALL_SNAPSHOT_PASSES + SNAPSHOT_PASSES {
        if k == 0 || k == SMALL_SNAPSHOT_PASSES {
            yield_now().await;
            clock = Clock::new();
        }
        let snapshot = if k < SMALL_SNAPSHOT_PASSES {
            small_warm_up_snapshot()
        } else {
            warm_up_snapshot()
        };
        if !clock.pause().await || snapshot_pass(snapshot, &mut clock).await.is_none() {
            return;
        }
    }
    // Then the first worker of a trace's or snapshot's load, its instance made, unless
    // `?workers=0` asks for none. Not at once: started beside the app's own start, it made
    // that a task of 50-56 ms in some page loads (on two cores).
    yield_now().await;
    if !stopped() && crate::platform::url::query_param("workers").as_deref() != Some("0") {
        super::pool::prespawn(&wasm_bindgen::module());
    }
}

/// Passes of [`tl_warm_up`] over the small trace before the demo's.
pub const WORKER_SMALL_PASSES: u32 = 2;

/// One pass of a reader worker's whole path over the demo's trace, run by the spare worker
/// (`js/shards.js`) while the page waits for a file: its second half read as another worker's
/// shard and handed over as sections, merged into the first, the model finished, put into
/// sections and read back as the page does, analysed, its analyses' sections read back, and its
/// timeline indexed. V8 optimizes a function only once it has run a while, and a worker's
/// instance shares its optimized code with the page and every other worker (one module): the
/// page's own warm-up parses ran none of the shards', the analyses' or the timeline's code, which
/// V8 then optimized during the first load, 1.26 s of compiles beside a 1 GB trace's reader
/// workers and preview (its first render one task of 50-95 ms, the main thread starved by the
/// compiles). `pass` < [`WORKER_SMALL_PASSES`] reads one step of the demo (baseline code is slow
/// and a pass is one call). 1 when the pass ran through.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn tl_warm_up(pass: u32) -> u32 {
    let trace = if pass < WORKER_SMALL_PASSES {
        small_warm_up_trace()
    } else {
        warm_up_trace()
    };
    u32::from(worker_pass(trace).is_some())
}

fn worker_pass(b: &[u8]) -> Option<()> {
    use crate::session::derived::TimelineData;
    use tracelight_core::ingest::kineto::cut::find_cut_forward;
    use tracelight_core::ingest::kineto::{first_byte, KinetoReader, Merge};
    use tracelight_core::model::wire::{self, Wire};
    use tracelight_core::report::analysis::{Analysis, Paced, Tables};
    use tracelight_core::report::analysis_wire;

    let cut = find_cut_forward(b, b.len() / 2)?;
    let bare = first_byte(b) == Some(b'[');
    let mut shard = KinetoReader::shard(cut as u64, bare);
    shard.leave_args_in_file();
    for piece in b[cut..].chunks(64 << 10) {
        shard.push(piece).ok()?;
    }
    // A status section (no error) first, as a worker sends its shard.
    let mut status = Vec::new();
    Option::<tracelight_core::Error>::None.put(&mut status);
    let mut sections = vec![status];
    for k in 0..shard.section_count()? {
        sections.push(shard.section(k)?);
    }
    drop(shard);
    let mut r = KinetoReader::new();
    r.leave_args_in_file();
    for piece in b[..cut].chunks(64 << 10) {
        r.push(piece).ok()?;
    }
    let refs: Vec<&[u8]> = sections.iter().map(Vec::as_slice).collect();
    if r.merge_sections(cut as u64, bare, &refs).ok()? != Merge::Merged {
        return None;
    }
    let model = r.finish().ok()?;
    let mut back = wire::Decoder::default();
    let mut k = 0;
    while let Some(s) = wire::section(&model, k) {
        back.push(&s).ok()?;
        k += 1;
    }
    drop(model);
    let mut checked = back.finish_in_steps().ok()?;
    while !checked.step().ok()? {}
    let t = checked.trace().ok()?;
    // In two halves, as the merging worker and the helper compute it, the helper's half through
    // its JSON (`worker_halves`).
    let paced = Paced::from_json(&Paced::of(&t).to_json()).ok()?;
    let a = Analysis::from_parts("warm-up", &t, paced, Tables::of(&t));
    let mut ab = analysis_wire::Decoder::default();
    for s in analysis_wire::sections(&a).ok()? {
        ab.push(&s).ok()?;
    }
    ab.finish().ok()?;
    // The timeline's parts as the merging worker makes them and the page reads them back.
    let p = tracelight_core::view::parts::TimelineParts::of(&t);
    let mut pb = tracelight_core::view::parts::Decoder::default();
    for s in tracelight_core::view::parts::sections(&p) {
        pb.push(&s).ok()?;
    }
    let p = pb.finish().ok()?;
    p.fits(&t).then_some(())?;
    TimelineData::from_parts(tracelight_core::view::lod::LodIndex::build(&t), p);
    Some(())
}
