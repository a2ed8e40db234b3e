//! A first look at a big trace while the rest loads: one more worker reads the file's head (up to
//! an event boundary) as a trace of its own, with its analysis, and the page shows it until the
//! whole model is ready. On a 1 GB trace the whole load takes seconds on any machine; the head's
//! model is on screen in about one, so the user sees what the trace holds (its first steps, its
//! kernels and lanes) at once. The whole load replaces it, and a failed or cancelled load puts
//! back what was on screen before.

use super::after_model::{get, BUDGET_MS, TICK_MS};
use super::pool::{Held, Pool, ShardPool};
use super::LoadCtx;
use crate::platform::clock::{now_ms, yield_now};
use crate::platform::url::query_param;
use crate::session::{Content, LoadedFile, Session, SessionRef, TraceFile};
use js_sys::Uint8Array;
use leptos::prelude::*;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use tracelight_core::model::wire;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// A file this big or bigger gets a preview: smaller ones load whole in about a second.
const MIN_FILE_BYTES: u64 = 128_000_000;

/// The head read for the preview: ~0.2 s of one core, a few of a 1 GB trace's steps.
const HEAD_BYTES: u64 = 32 << 20;

/// What a preview is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PreviewOf {
    /// A big trace's head, read while the whole trace loads: a banner says the figures are the
    /// head's.
    TraceHead,
    /// A memory snapshot's views (summary, charts, flame graphs), sent by its worker ahead of the
    /// model: every figure is the whole snapshot's; the Memory tab says what waits for the model.
    SnapshotViews,
}

/// What a preview shows, and of what.
#[derive(Clone)]
pub struct Preview {
    /// A session of one trace file: the head's model.
    pub session: SessionRef,
    /// Bytes of the file the head holds (to an event boundary), and the whole file's size.
    pub bytes: u64,
    pub total: u64,
    pub events: u64,
    /// From the pick to the head's model being handed over, ms.
    pub ready_ms: f64,
    pub of: PreviewOf,
}

/// Where a load puts its preview, with the number of the load (a preview of an older load that
/// arrives late is not shown).
pub type PreviewSink = (RwSignal<Option<(u64, Preview)>>, u64);

/// Raises its flag when dropped.
struct Over(Rc<Cell<bool>>);

impl Drop for Over {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// Lets the whole load's workers go on, however the preview ends.
struct Go(Held);

impl Drop for Go {
    fn drop(&mut self) {
        self.0.go();
    }
}

/// The head to read for a preview of a `total`-byte file, or `None` for no preview;
/// `?preview=MB` sets it (tests, benchmarks; 0: none).
fn preview_bytes(total: u64) -> Option<u64> {
    let asked = query_param("preview").and_then(|v| v.parse::<f64>().ok());
    let head = match asked {
        Some(mb) if mb <= 0.0 => return None,
        Some(mb) => (mb * 1e6) as u64,
        None if total < MIN_FILE_BYTES => return None,
        None => HEAD_BYTES,
    };
    // A head of half the file or more is no quicker than the whole load.
    (head.saturating_mul(2) <= total).then_some(head)
}

/// Starts the preview of a `total`-byte `blob` when the load asks for one and the file is big
/// enough; returns the flag raised when it is over (already raised for none). It stops when
/// `alive` falls (the whole load ended).
pub(super) fn start(
    blob: &web_sys::Blob,
    name: &str,
    total: u64,
    started: f64,
    ctx: LoadCtx,
    alive: Rc<Cell<bool>>,
    held: Held,
) -> Rc<Cell<bool>> {
    let over = Rc::new(Cell::new(true));
    if let (Some(sink), Some(head)) = (ctx.preview, preview_bytes(total)) {
        over.set(false);
        leptos::task::spawn_local(preview(
            blob.clone(),
            name.to_owned(),
            head,
            started,
            ctx,
            sink,
            alive,
            over.clone(),
            held,
        ));
    }
    over
}

/// Reads the head of `blob` (to the first event boundary at or after byte `head`) in one worker,
/// with its analysis, and hands it to `sink` while `alive` holds. Whatever fails here only means
/// no preview: the whole load reports the file's own errors.
#[allow(clippy::too_many_arguments)]
async fn preview(
    blob: web_sys::Blob,
    name: String,
    head: u64,
    started: f64,
    ctx: LoadCtx,
    sink: PreviewSink,
    alive: Rc<Cell<bool>>,
    over: Rc<Cell<bool>>,
    held: Held,
) {
    // Raised on every way out, so the whole load can wait for this one's outcome.
    let _over = Over(over);
    // The whole load's workers, held from the head's model to its first render (see `Held`).
    let go = Go(held);
    let Ok(pool) = ShardPool::new(
        &wasm_bindgen::module(),
        &blob,
        1,
        &name,
        &JsValue::UNDEFINED,
        head as f64,
        // The head (32 MiB) in 4 MiB reads, as the whole load's workers read while it is on its way.
        true,
        false,
        false,
    ) else {
        return;
    };
    let pool = Pool(pool);
    let mut decoder = wire::Decoder::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut last_yield = now_ms();
    let mut bytes = 0u64;
    let trace = loop {
        let Ok(m) = JsFuture::from(pool.0.next_within(TICK_MS)).await else {
            return;
        };
        if !alive.get() || ctx.cancel.get_untracked() {
            return;
        }
        match get(&m, "kind").as_string().as_deref() {
            Some("parsed") => bytes = get(&m, "end").as_f64().unwrap_or(0.0) as u64,
            Some("model") => {
                go.0.hold();
                pool.0.credit();
            }
            Some("section") => {
                let Ok(arr) = get(&m, "bytes").dyn_into::<Uint8Array>() else {
                    return;
                };
                buf.resize(arr.length() as usize, 0);
                arr.copy_to(&mut buf);
                if decoder.push(&buf).is_err() {
                    return;
                }
                if now_ms() - last_yield >= BUDGET_MS {
                    yield_now().await;
                    last_yield = now_ms();
                }
                pool.0.credit();
            }
            Some("done") => match decoder.finish() {
                Ok(t) => break t,
                Err(_) => return,
            },
            Some("error") => return,
            _ => {}
        }
    };
    let events = trace.event_count;
    let bounds = super::after_model::bounds_yielding(&trace).await;
    let tf = TraceFile::with_bounds(&name, trace, bounds).with_source(&blob);
    let done = super::after_model::timeline_and_analysis(
        &tf,
        |ms| pool.0.next_within(ms),
        || pool.0.credit(),
        &ctx,
        |_| {},
        true,
    )
    .await;
    if !alive.get() || done.is_err() {
        return;
    }
    super::pool::stop_when_idle(pool);
    // The first render of the preview in a task of its own, not after the last section's decode.
    yield_now().await;
    if !alive.get() {
        return;
    }
    let ready_ms = now_ms() - started;
    let file = LoadedFile {
        name,
        bytes,
        decoded_bytes: bytes,
        load_ms: ready_ms,
        parse_ms: 0.0,
        first_bytes_ms: 0.0,
        model_ms: ready_ms,
        workers: 1,
        preview: true,
        content: Content::Trace(Box::new(tf)),
    };
    let (signal, generation) = sink;
    signal.set(Some((
        generation,
        Preview {
            session: Arc::new(Session { files: vec![file] }),
            bytes,
            total: blob.size() as u64,
            events,
            ready_ms,
            of: PreviewOf::TraceHead,
        },
    )));
    // The whole load goes on once the page has drawn the preview (idle), 0.5 s at most.
    crate::platform::clock::when_idle(500).await;
    drop(go);
}
