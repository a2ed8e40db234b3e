//! Reading a trace file on every core, off the page's thread: `js/shards.js` runs K workers, each
//! with its own instance of this module ([`super::worker`] is what they run); this side chooses
//! K, shows progress, honours Cancel and decodes the finished model one section per task
//! (`tracelight_core::model::wire`), so no task on the page's thread is long while a big trace
//! loads.

use super::LoadCtx;
use crate::platform::clock::{now_ms, wasm_memory_bytes, yield_now};
use crate::platform::url::query_param;
use crate::session::derived::TimelineData;
use crate::session::{Content, LoadedFile, Progress, TraceFile};
use js_sys::{Reflect, Uint8Array};
use leptos::prelude::*;
use tracelight_core::ingest::budget::check_fits;
use tracelight_core::ingest::sniff::{self, Format};
use tracelight_core::model::wire::{self, Wire};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/js/shards.js")]
extern "C" {
    type ShardPool;
    #[wasm_bindgen(constructor, catch)]
    fn new(module: &JsValue, file: &web_sys::File, k: u32) -> Result<ShardPool, JsValue>;
    #[wasm_bindgen(method)]
    fn next(this: &ShardPool) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn credit(this: &ShardPool);
    #[wasm_bindgen(method)]
    fn close(this: &ShardPool);
    fn cores() -> u32;
}

/// Smaller files are read on the page's thread: they parse within a few 30 ms slices, and a
/// worker's start (~20 ms) and the model's transfer would only add to that.
const MIN_BYTES: f64 = 16e6;

/// Bytes of file per worker at least: a shard's merge costs a few thousand string lookups.
const MIN_SHARD_BYTES: f64 = 8e6;

/// Work on the page's thread between yields.
const BUDGET_MS: f64 = 30.0;

/// How many workers read `size` bytes: one per core the browser reports, fewer for a small
/// file; `?workers=N` sets it (tests, benchmarks; 0 reads on the page's thread).
fn workers_for(size: f64) -> u32 {
    if let Some(n) = query_param("workers").and_then(|v| v.parse::<u32>().ok()) {
        return n;
    }
    if size < MIN_BYTES {
        return 0;
    }
    let by_size = (size / MIN_SHARD_BYTES).floor().max(1.0) as u32;
    cores().clamp(1, 16).min(by_size)
}

/// The number of workers for `file` when it should be read in workers: a plain (not gzip)
/// Kineto trace of at least [`MIN_BYTES`]; `None` otherwise (the page's thread reads it).
pub(super) async fn workers_for_file(file: &web_sys::File) -> Option<u32> {
    let size = file.size();
    let k = workers_for(size);
    if k == 0 {
        return None;
    }
    let head = file
        .slice_with_f64_and_f64(0.0, size.min(sniff::SNIFF_BYTES as f64))
        .ok()?;
    let buf = JsFuture::from(head.array_buffer()).await.ok()?;
    let bytes = Uint8Array::new(&buf).to_vec();
    (!sniff::is_gzip(&bytes) && sniff::sniff(&bytes).ok() == Some(Format::Kineto)).then_some(k)
}

/// Owns the workers: dropping it (a cancel, an error) stops them.
struct Pool(ShardPool);

impl Drop for Pool {
    fn drop(&mut self) {
        self.0.close();
    }
}

fn get(m: &JsValue, k: &str) -> JsValue {
    Reflect::get(m, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

/// What [`load_in_workers`] came to when it did not fail on the trace itself.
pub(super) enum Outcome {
    Loaded(LoadedFile),
    /// The workers could not run here (no `Worker`, a policy that blocks them or their wasm, a
    /// worker that died before the model was read): the page's own reader reads the file instead.
    Unavailable(String),
}

/// Reads `file` on `k` workers; see the module docs. A failure of the workers themselves, before
/// the model is complete, is [`Outcome::Unavailable`]; an error in the trace is an `Err`, as the
/// page's own reader reports it.
pub(super) async fn load_in_workers(
    file: web_sys::File,
    k: u32,
    ctx: LoadCtx,
) -> Result<Outcome, Error> {
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
    check_fits(wasm_memory_bytes(), 0, Some(total), 0).map_err(|e| e.in_file(&name))?;
    let pool = match ShardPool::new(&wasm_bindgen::module(), &file, k) {
        Ok(p) => Pool(p),
        Err(e) => return Ok(Outcome::Unavailable(super::reader::js_err(e))),
    };
    let mut first_bytes = 0.0;
    let mut decoder = wire::Decoder::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut last_yield = now_ms();
    let mut busy_ms = 0.0;
    let trace = loop {
        let m = match JsFuture::from(pool.0.next()).await {
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
            Some("done") => break decoder.finish().map_err(|e| e.in_file(&name))?,
            Some("error") => {
                // The trace's own error, encoded by worker 0; absent when a worker itself failed.
                let first = get(&m, "sections")
                    .dyn_ref::<js_sys::Array>()
                    .map(|a| a.get(0));
                if let Some(first) = first.as_ref().and_then(|f| f.dyn_ref::<Uint8Array>()) {
                    let bytes = first.to_vec();
                    let e = Option::<Error>::get(&mut wire::Get::new(&bytes))
                        .ok()
                        .flatten()
                        .unwrap_or_else(|| io("a reader worker failed".into()));
                    return Err(e.in_file(&name));
                }
                // A worker itself failed (not the trace): the page's own reader takes over.
                let msg = get(&m, "message").as_string();
                return Ok(Outcome::Unavailable(
                    msg.unwrap_or_else(|| "a reader worker failed".into()),
                ));
            }
            _ => {}
        }
    };
    drop(pool);
    let model = now_ms();
    // A plain file: every byte of it was decoded (the reader stops at the final `}`, before a
    // trailing newline, as the page's own reader counts too).
    let decoded_bytes = total;
    let tf = TraceFile::new(&name, trace);
    ctx.progress.update(|p| {
        if let Some(p) = p {
            p.phase = "indexing timeline";
        }
    });
    let data = TimelineData::build_yielding(&tf.trace).await;
    tf.set_timeline(data);
    let end = now_ms();
    Ok(Outcome::Loaded(LoadedFile {
        name,
        bytes: total,
        decoded_bytes,
        load_ms: end - started,
        parse_ms: busy_ms,
        first_bytes_ms: first_bytes.max(started) - started,
        model_ms: model - started,
        workers: k,
        content: Content::Trace(Box::new(tf)),
    }))
}
