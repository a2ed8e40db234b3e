//! Reading a memory snapshot off the page's thread: one worker of `js/shards.js` (mode
//! `snapshot`, its own instance of this module running the `tl_snap_*` exports of
//! [`super::worker`]) reads the whole file in 4 MiB pieces through core's `Loader` (the streaming
//! snapshot reader, bounded memory) and hands the model over as sections
//! (`tracelight_core::ingest::snapshot::wire`), which the page decodes one per task. The pickle
//! is never decoded on the page's thread, and no task there grows with the file.

use super::pool::{receive_after, AfterModel, Outcome};
use super::LoadCtx;
use crate::platform::clock::{now_ms, yield_now};
use crate::platform::url::query_param;
use crate::session::{Content, LoadedFile, Progress, SnapshotFile};
use js_sys::{Reflect, Uint8Array};
use leptos::prelude::*;
use tracelight_core::ingest::snapshot::wire as snapshot_model_wire;
use tracelight_core::ingest::sniff::{self, Format};
use tracelight_core::model::wire::{self, Wire};
use tracelight_core::report::snapshot_wire::{self, SnapshotViews};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/js/shards.js")]
extern "C" {
    #[wasm_bindgen(js_name = ShardPool)]
    type SnapshotPool;
    #[wasm_bindgen(constructor, js_class = "ShardPool", catch)]
    fn new(
        module: &JsValue,
        file: &web_sys::Blob,
        k: u32,
        name: &str,
        mode: &str,
    ) -> Result<SnapshotPool, JsValue>;
    #[wasm_bindgen(method, js_class = "ShardPool", js_name = next)]
    fn next_within(this: &SnapshotPool, ms: f64) -> js_sys::Promise;
    #[wasm_bindgen(method, js_class = "ShardPool")]
    fn credit(this: &SnapshotPool);
    #[wasm_bindgen(method, js_class = "ShardPool")]
    fn close(this: &SnapshotPool);
}

/// Smaller snapshots are decoded on the page's thread: a few 30 ms slices, less than a worker's
/// start and the model's transfer.
const MIN_BYTES: f64 = 4e6;

/// Work on the page's thread between yields.
const BUDGET_MS: f64 = 30.0;

/// How long the page waits for the worker's word before it looks at Cancel again.
const TICK_MS: f64 = 100.0;

/// Whether `file` is a plain (not gzip) snapshot to read in a worker: [`MIN_BYTES`] or more, or
/// any size with `?workers=N` (N ≥ 1); none with `?workers=0`.
pub(super) async fn wanted(file: &web_sys::File) -> bool {
    let size = file.size();
    let ok = match query_param("workers").and_then(|v| v.parse::<u32>().ok()) {
        Some(n) => n > 0,
        None => size >= MIN_BYTES,
    };
    if !ok {
        return false;
    }
    let Ok(head) = file.slice_with_f64_and_f64(0.0, size.min(sniff::SNIFF_BYTES as f64)) else {
        return false;
    };
    let Ok(buf) = JsFuture::from(head.array_buffer()).await else {
        return false;
    };
    let bytes = Uint8Array::new(&buf).to_vec();
    !sniff::is_gzip(&bytes) && sniff::sniff(&bytes).ok() == Some(Format::Snapshot)
}

/// Owns the worker: dropping it (a cancel, an error) stops it.
struct Pool(SnapshotPool);

impl Drop for Pool {
    fn drop(&mut self) {
        self.0.close();
    }
}

fn get(m: &JsValue, k: &str) -> JsValue {
    Reflect::get(m, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

/// Reads snapshot `file` in one worker. A failure of the worker itself, before the model is
/// whole, is [`Outcome::Unavailable`] (the page's own reader then reads the file); an error in
/// the file is an `Err`, as the page's own reader reports it.
pub(super) async fn load(file: web_sys::File, ctx: LoadCtx) -> Result<Outcome, Error> {
    let name = file.name();
    let started = now_ms();
    let total = file.size() as u64;
    let io = |m: String| Error::new(ErrorKind::Io(m), 0).in_file(&name);
    ctx.cancel.set(false);
    let progress = |done: u64, phase: &'static str| {
        let secs = ((now_ms() - started) / 1000.0).max(1e-6);
        ctx.progress.set(Some(Progress {
            name: name.clone(),
            done,
            total: Some(total),
            mb_per_s: done as f64 / 1e6 / secs,
            phase,
        }));
    };
    progress(0, "reading");
    let blob: &web_sys::Blob = file.as_ref();
    let pool = match SnapshotPool::new(&wasm_bindgen::module(), blob, 1, &name, "snapshot") {
        Ok(p) => Pool(p),
        Err(e) => return Ok(Outcome::Unavailable(super::reader::js_err(e))),
    };
    let mut decoder = snapshot_model_wire::Decoder::default();
    let mut buf: Vec<u8> = Vec::new();
    let (mut first_bytes, mut busy_ms, mut last_yield) = (0.0, 0.0, now_ms());
    loop {
        let m = match JsFuture::from(pool.0.next_within(TICK_MS)).await {
            Ok(m) => m,
            Err(e) => return Ok(Outcome::Unavailable(super::reader::js_err(e))),
        };
        if ctx.cancel.get_untracked() {
            return Err(Error::new(ErrorKind::Cancelled, 0).in_file(&name));
        }
        match get(&m, "kind").as_string().as_deref() {
            Some("progress") => {
                if first_bytes == 0.0 {
                    first_bytes = now_ms();
                }
                progress(get(&m, "bytes").as_f64().unwrap_or(0.0) as u64, "reading");
            }
            Some("model") => {
                progress(total, "receiving model");
                pool.0.credit();
            }
            Some("section") => {
                let arr: Uint8Array = get(&m, "bytes")
                    .dyn_into()
                    .map_err(|_| io("a model section that is not bytes".into()))?;
                let t0 = now_ms();
                buf.resize(arr.length() as usize, 0);
                arr.copy_to(&mut buf);
                decoder.push(&buf).map_err(|e| e.in_file(&name))?;
                let now = now_ms();
                busy_ms += now - t0;
                if now - last_yield >= BUDGET_MS {
                    yield_now().await;
                    last_yield = now_ms();
                }
                pool.0.credit();
            }
            Some("done") => break,
            Some("error") => {
                // The file's own error, encoded by the worker; absent when the worker itself failed.
                let first = get(&m, "sections")
                    .dyn_ref::<js_sys::Array>()
                    .map(|a| a.get(0));
                if let Some(first) = first.as_ref().and_then(|f| f.dyn_ref::<Uint8Array>()) {
                    let bytes = first.to_vec();
                    let mut e = Option::<Error>::get(&mut wire::Get::new(&bytes))
                        .ok()
                        .flatten()
                        .unwrap_or_else(|| io("the snapshot worker failed".into()));
                    // The worker's loader did not know the file's name.
                    e.file = None;
                    return Err(e.in_file(&name));
                }
                let msg = get(&m, "message").as_string();
                return Ok(Outcome::Unavailable(
                    msg.unwrap_or_else(|| "the snapshot worker failed".into()),
                ));
            }
            _ => {}
        }
    }
    let snap = decoder.finish().map_err(|e| e.in_file(&name))?;
    // Then the views the worker builds meanwhile (summary, charts): the page's thread only
    // decodes them. Without them (an old worker, a failure) the Memory tab computes its own.
    ctx.progress.update(|p| {
        if let Some(p) = p {
            p.phase = "receiving summary and chart";
        }
    });
    let views = receive_after::<snapshot_wire::Decoder>(
        |ms| pool.0.next_within(ms),
        || pool.0.credit(),
        &ctx,
    )
    .await;
    let views = match views {
        Ok(v) => Some(v),
        Err(Some(e)) => return Err(e.in_file(&name)),
        Err(None) => None,
    };
    super::pool::stop_when_idle(pool);
    // The last section's decode, the file's indexes and the Memory tab's first render each in a
    // task of their own: together they were one of 200 ms on a 1 GB snapshot.
    crate::platform::clock::yield_now().await;
    let content = Content::Snapshot(SnapshotFile::new(snap, views));
    let end = now_ms();
    crate::platform::clock::yield_now().await;
    Ok(Outcome::Loaded(LoadedFile {
        name,
        bytes: total,
        decoded_bytes: total,
        load_ms: end - started,
        parse_ms: busy_ms,
        first_bytes_ms: first_bytes.max(started) - started,
        model_ms: end - started,
        workers: 1,
        preview: false,
        content,
    }))
}

impl AfterModel for snapshot_wire::Decoder {
    type Out = SnapshotViews;
    const WHAT: &'static str = "the snapshot worker's summary and charts";
    fn push(&mut self, section: &[u8]) -> Result<(), Error> {
        snapshot_wire::Decoder::push(self, section)
    }
    fn finish(self) -> Result<SnapshotViews, Error> {
        snapshot_wire::Decoder::finish(self)
    }
}
