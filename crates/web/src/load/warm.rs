//! Readying the reader before the first load: V8 optimizes wasm code only after it has run a
//! while, so the bundled demo is parsed a few times while the user picks a file.

use super::reader::prewarm;
use crate::platform::clock::yield_now;
use std::sync::OnceLock;

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

/// Parses of the small trace first.
const SMALL_PARSES: usize = 6;

/// Parses of the demo before the first load: V8 moves each hot function to its optimizing tier
/// only after it has run for a while, and one parse left part of the reader in the baseline tier
/// (105 MB to model ready: 186-198 MB/s after one parse, 202-228 after eight, same build).
const WARM_UP_PARSES: usize = 16;

thread_local!(static WARM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

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
    for k in 0..SMALL_PARSES + WARM_UP_PARSES {
        let trace = if k < SMALL_PARSES {
            small_warm_up_trace()
        } else {
            warm_up_trace()
        };
        let _ = tracelight_core::ingest::load_bytes("warm-up", trace);
        yield_now().await;
    }
}
