//! Reading a trace file on every core, off the page's thread: `js/shards.js` runs K workers, each
//! with its own instance of this module ([`super::worker`] is what they run); this side chooses
//! K, shows progress, honours Cancel and decodes the finished model one section per task
//! (`tracelight_core::model::wire`), so no task on the page's thread is long while a big trace
//! loads.

use super::after_model::{get, BUDGET_MS, TICK_MS};
use super::LoadCtx;
use crate::platform::clock::{now_ms, wasm_memory_bytes, yield_now};
use crate::platform::url::query_param;
use crate::session::{Content, LoadedFile, Progress, TraceFile};
use js_sys::Uint8Array;
use leptos::prelude::*;
use std::cell::Cell;
use std::rc::Rc;
use tracelight_core::ingest::budget::check_fits_in_workers;
use tracelight_core::ingest::sniff::{self, Format};
use tracelight_core::model::wire::{self, Wire};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/js/shards.js")]
extern "C" {
    pub(super) type ShardPool;
    #[wasm_bindgen(constructor, catch)]
    pub(super) fn new(
        module: &JsValue,
        file: &web_sys::Blob,
        k: u32,
        name: &str,
        mode: &JsValue,
        preview_to: f64,
        small_reads: bool,
        merger: bool,
        halves: bool,
    ) -> Result<ShardPool, JsValue>;
    #[wasm_bindgen(method)]
    fn next(this: &ShardPool) -> js_sys::Promise;
    /// [`ShardPool::next`], or `{kind: 'tick'}` after `ms` without a message.
    #[wasm_bindgen(method, js_name = next)]
    pub(super) fn next_within(this: &ShardPool, ms: f64) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    pub(super) fn credit(this: &ShardPool);
    /// [`ShardPool::credit`], giving back the buffer of a section decoded (the worker copies a
    /// later section into it instead of a new buffer).
    #[wasm_bindgen(method, js_name = credit)]
    fn credit_with(this: &ShardPool, buf: &JsValue);
    #[wasm_bindgen(method)]
    fn close(this: &ShardPool);
    #[wasm_bindgen(method)]
    fn hold(this: &ShardPool);
    #[wasm_bindgen(method)]
    fn go(this: &ShardPool);
    fn cores() -> u32;
    /// Starts a reader worker, its instance of `module` made, for the next load to take.
    pub(super) fn prespawn(module: &JsValue);
    #[wasm_bindgen(catch)]
    async fn inflated(blob: &web_sys::Blob) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = inflatedHead, catch)]
    async fn inflated_head(blob: &web_sys::Blob, n: u32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = fetchBody, catch)]
    pub(super) async fn fetch_body(url: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = blobOf, catch)]
    pub(super) async fn blob_of(stream: &JsValue, name: &str) -> Result<JsValue, JsValue>;
}

/// A `.gz` this big or bigger (compressed) is inflated and read in workers when it holds a Kineto
/// trace: traces compress 10-20×, so it is ~16 MB ([`MIN_BYTES`]) or more inflated.
pub(super) const MIN_GZ_BYTES: f64 = 1.5e6;

/// Smaller files are read on the page's thread: they parse within a few 30 ms slices, and a
/// worker's start (~20 ms) and the model's transfer would only add to that.
const MIN_BYTES: f64 = crate::session::BIG_FILE_BYTES as f64;

/// Bytes of file per worker at least: a shard's merge costs a few thousand string lookups.
const MIN_SHARD_BYTES: f64 = 8e6;

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

/// Files this big or bigger are merged by a worker that parses nothing (`js/shards.js`): worker 0
/// holds its own shard's chunks, whose holes none of the model's columns fit, so it peaked at
/// 0.43x a 1 GB file, past wasm32's 4 GiB for a 10 GB one; the merger peaks at 0.39x (its
/// analyses, the model read back into its instance; BENCHMARKS.md). Below this, the first shard's
/// trip through the wire (~0.1 s a GB) costs more than the memory is worth.
const MERGER_BYTES: f64 = tracelight_core::ingest::budget::MERGER_FROM_BYTES as f64;

/// Whether a worker that parses nothing merges the `k` shards of `size` bytes; `?merger=1` (or 0)
/// says (tests, benchmarks).
fn merger_for(size: f64, k: u32) -> bool {
    match query_param("merger").as_deref() {
        Some("1") => k > 0,
        Some("0") => false,
        _ => k > 0 && size >= MERGER_BYTES,
    }
}

/// Files this big or bigger have their analyses computed in two halves at once, by worker 0 and
/// worker 1 (`worker_halves`). On 1 GB and 304 MB synthetic traces the load's end came 610 and
/// 140 ms sooner; on the 87 MB MTIA trace, whose steps-and-time half is small, ~20 ms later, and
/// on a 35 MB A100 trace ~25 ms sooner (BENCHMARKS.md).
const HALVES_BYTES: f64 = 128e6;

/// Whether worker 1 computes half of the analyses of `size` bytes read by `k` workers (not with
/// a merging worker that parses nothing: a big file's workers' memory is spoken for; worker 1
/// holds 0.55x a 1 GB file then, and where it runs out of memory worker 0 computes the half);
/// `?halves=1` (or 0) says (tests, benchmarks).
fn halves_for(size: f64, k: u32, merger: bool) -> bool {
    let can = k >= 2 && !merger;
    match query_param("halves").as_deref() {
        Some("1") => can,
        Some("0") => false,
        _ => can && size >= HALVES_BYTES,
    }
}

/// What the workers read: the file itself, or (a `.gz`) its bytes inflated by the platform.
pub(super) struct Plan {
    pub blob: web_sys::Blob,
    pub k: u32,
    /// The file's own size (compressed, for a `.gz`).
    pub raw_bytes: u64,
}

/// From this size a file's slices per byte are sampled before its load (`budget::slice_density`):
/// below it, even a file of the smallest events fits both the page and the worker that merges.
const SAMPLE_FROM_BYTES: u64 = 1_000_000_000;

/// Model sections the merging worker may send ahead of the page's decode. With two, the worker's
/// copy-out and the page's decode of a 1 GB trace's ~210 sections mostly waited for each other
/// (the hand-off 440-460 ms; eight: 370-390 ms).
const MODEL_CREDITS: usize = 8;

/// Slices per byte in three 256 KiB pieces of `blob` (at a quarter, half and three quarters: the
/// head is mostly metadata); `None` where a read fails.
async fn sampled_density(blob: &web_sys::Blob) -> Option<f64> {
    let size = blob.size();
    let mut pieces = Vec::new();
    for q in [0.25, 0.5, 0.75] {
        let at = (size * q).floor();
        let piece = blob
            .slice_with_f64_and_f64(at, (at + 262_144.0).min(size))
            .ok()?;
        let buf = JsFuture::from(piece.array_buffer()).await.ok()?;
        pieces.push(Uint8Array::new(&buf).to_vec());
    }
    let refs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
    tracelight_core::ingest::budget::slice_density(&refs)
}

async fn head_of(blob: &web_sys::Blob, n: f64) -> Option<Vec<u8>> {
    let head = blob.slice_with_f64_and_f64(0.0, blob.size().min(n)).ok()?;
    let buf = JsFuture::from(head.array_buffer()).await.ok()?;
    Some(Uint8Array::new(&buf).to_vec())
}

/// Whether to read `file` in workers, and how: a Kineto trace of at least [`MIN_BYTES`], plain or
/// gzip (inflated first, whole, by the platform's `DecompressionStream`, while the progress bar
/// says so); `None` otherwise, or where that inflater failed (the page's own reader then reads
/// the file and reports what it finds, as flate2 does).
pub(super) async fn plan_for_file(file: &web_sys::File, ctx: LoadCtx) -> Option<Plan> {
    let size = file.size();
    let head = head_of(file, sniff::SNIFF_BYTES as f64).await?;
    if !sniff::is_gzip(&head) {
        let k = workers_for(size);
        let kineto = sniff::sniff(&head).ok() == Some(Format::Kineto);
        return (k > 0 && kineto).then(|| Plan {
            blob: file.clone().into(),
            k,
            raw_bytes: size as u64,
        });
    }
    // `?inflate=wasm` asks for flate2 (tests, benchmarks); a small `.gz` is read on the page, and
    // any with `?workers=0`.
    let asked = query_param("workers").and_then(|v| v.parse::<u32>().ok());
    let wasm_inflate = query_param("inflate").as_deref() == Some("wasm");
    if wasm_inflate || asked == Some(0) || (size < MIN_GZ_BYTES && asked.is_none()) {
        return None;
    }
    let head: Uint8Array = inflated_head(file, sniff::SNIFF_BYTES as u32)
        .await
        .ok()?
        .dyn_into()
        .ok()?;
    if sniff::sniff(&head.to_vec()).ok() != Some(Format::Kineto) {
        return None;
    }
    let name = file.name();
    ctx.progress.set(Some(Progress {
        name,
        done: 0,
        total: Some(size as u64),
        mb_per_s: 0.0,
        phase: "inflating",
    }));
    let blob: web_sys::Blob = inflated(file).await.ok()?.dyn_into().ok()?;
    let k = workers_for(blob.size());
    (k > 0).then_some(Plan {
        blob,
        k,
        raw_bytes: size as u64,
    })
}

/// Starts a preview of the file being loaded (`super::preview::start`): given the blob, its
/// size, the flag that falls when this load ends and the load's workers, it returns the flag
/// raised when the preview is over, shown or given up (already raised when there is none).
pub(super) type StartPreview<'a> =
    Box<dyn FnOnce(&web_sys::Blob, u64, Rc<Cell<bool>>, Held) -> Rc<Cell<bool>> + 'a>;

/// The whole load's workers, which a preview holds while the page decodes and draws it: on two
/// cores, two parsing workers made each of the page's tasks then take 50–90 ms instead of 20–40.
#[derive(Clone, Default)]
pub(super) struct Held(Rc<std::cell::RefCell<Option<ShardPool>>>);

impl Held {
    fn set(&self, pool: &ShardPool) {
        let js: &JsValue = pool.as_ref();
        *self.0.borrow_mut() = Some(js.clone().unchecked_into());
    }

    /// Their parse waits between pieces until [`Held::go`] (1.5 s at most).
    pub(super) fn hold(&self) {
        if let Some(p) = self.0.borrow().as_ref() {
            p.hold();
        }
    }

    pub(super) fn go(&self) {
        if let Some(p) = self.0.borrow().as_ref() {
            p.go();
        }
    }
}

/// Falls when the load that owns it ends, however it ends.
pub(super) struct Alive(pub Rc<Cell<bool>>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// Owns the workers: dropping it (a cancel, an error) stops them.
pub(super) struct Pool(pub ShardPool);

impl Drop for Pool {
    fn drop(&mut self) {
        self.0.close();
    }
}

thread_local! {
    /// Finished loads' worker pools waiting for the page to be idle ([`stop_when_idle`]).
    static IDLE_STOPS: std::cell::RefCell<Vec<(u64, Box<dyn std::any::Any>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
    static IDLE_NEXT: Cell<u64> = const { Cell::new(0) };
}

/// Drops the workers of a load that is over (a pool whose `Drop` stops them) once the page is
/// idle. Stopping a worker unmaps its wasm memory (~0.7× the file after a 1 GB snapshot); beside
/// the page's first render of the file, that stalled the render by ~40 ms (a task of 60–70 ms),
/// wherever in the render it fell. A new load stops them at once ([`stop_idle_waiting`]).
pub(super) fn stop_when_idle<P: 'static>(pool: P) {
    let id = IDLE_NEXT.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    IDLE_STOPS.with(|s| s.borrow_mut().push((id, Box::new(pool))));
    leptos::task::spawn_local(async move {
        crate::platform::clock::when_idle(5_000).await;
        let pool = IDLE_STOPS.with(|s| {
            let mut s = s.borrow_mut();
            let k = s.iter().position(|(i, _)| *i == id)?;
            Some(s.swap_remove(k))
        });
        // Dropped here, outside the borrow.
        drop(pool);
    });
}

/// Stops the workers still waiting for an idle page: a new load wants their memory and cores.
pub(super) fn stop_idle_waiting() {
    let waiting = IDLE_STOPS.with(|s| std::mem::take(&mut *s.borrow_mut()));
    drop(waiting);
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
    plan: Plan,
    name: String,
    started: f64,
    ctx: LoadCtx,
    start_preview: StartPreview<'_>,
) -> Result<Outcome, Error> {
    let Plan { blob, k, raw_bytes } = plan;
    let total = blob.size() as u64;
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
    let merger = merger_for(total as f64, k);
    let density = if total >= SAMPLE_FROM_BYTES {
        sampled_density(&blob).await
    } else {
        None
    };
    check_fits_in_workers(wasm_memory_bytes(), total, merger, density)
        .map_err(|e| e.in_file(&name))?;
    // The alive flag falls when this load ends, however it ends: a preview still on its way is
    // then dropped. Started before the whole load's workers, so its worker is first to a core.
    let alive = Alive(Rc::new(Cell::new(true)));
    let held = Held::default();
    let preview_over = start_preview(&blob, total, alive.0.clone(), held.clone());
    // While a preview reads the head, this load's reads stay small (see `shards.js`).
    let pool = match ShardPool::new(
        &wasm_bindgen::module(),
        &blob,
        k,
        &name,
        &JsValue::UNDEFINED,
        0.0,
        !preview_over.get(),
        merger,
        halves_for(total as f64, k, merger),
    ) {
        Ok(p) => {
            held.set(&p);
            Pool(p)
        }
        Err(e) => return Ok(Outcome::Unavailable(super::reader::js_err(e))),
    };
    let mut first_bytes = 0.0;
    let mut decoder = wire::Decoder::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut last_yield = now_ms();
    let mut busy_ms = 0.0;
    let mut prefault = super::prefault::Prefault::for_file(total);
    let trace = loop {
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
                let parsed = get(&m, "bytes").as_f64().unwrap_or(0.0) as u64;
                progress(parsed, "reading");
                prefault.step(parsed, total, now_ms);
            }
            Some("model") => {
                prefault = Default::default();
                progress(total, "receiving model");
                // Sections in flight: worker 0 copies the next out while the page decodes this
                // one (with one, each waited for the other).
                for _ in 0..MODEL_CREDITS {
                    pool.0.credit();
                }
            }
            Some("section") => {
                let arr: Uint8Array = get(&m, "bytes")
                    .dyn_into()
                    .map_err(|_| io("a model section that is not bytes".into()))?;
                let t0 = now_ms();
                buf.resize(arr.length() as usize, 0);
                arr.copy_to(&mut buf);
                decoder.push(&buf).map_err(|e| e.in_file(&name))?;
                pool.0.credit_with(&arr.buffer());
                let now = now_ms();
                busy_ms += now - t0;
                if now - last_yield >= BUDGET_MS {
                    yield_now().await;
                    last_yield = now_ms();
                }
            }
            // The model's last pieces put together, in tasks of their own: with the last
            // section's decode and the file's facts it was one of 50-60 ms on 1 GB, and its
            // checks alone one of 50-68 ms, now a column's check a step.
            Some("done") => {
                yield_now().await;
                let mut checked = decoder.finish_in_steps().map_err(|e| e.in_file(&name))?;
                let mut last = now_ms();
                while !checked.step().map_err(|e| e.in_file(&name))? {
                    if now_ms() - last >= BUDGET_MS {
                        yield_now().await;
                        last = now_ms();
                    }
                }
                break checked.trace().map_err(|e| e.in_file(&name))?;
            }
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
                let msg = get(&m, "message").as_string();
                // A worker out of memory: the page's reader would run out too (and take the
                // session with it), so this ends the load.
                if get(&m, "oom").is_truthy() {
                    let msg = msg.unwrap_or_else(|| "a reader worker ran out of memory".into());
                    return Err(Error::whole_file(ErrorKind::Limit(msg)).in_file(&name));
                }
                // A worker itself failed (not the trace): the page's own reader takes over.
                return Ok(Outcome::Unavailable(
                    msg.unwrap_or_else(|| "a reader worker failed".into()),
                ));
            }
            _ => {}
        }
    };
    // The copy of the largest section (a piece of the widest column, up to 3 MB) is not kept
    // through the index and the analysis: the page's wasm memory never shrinks.
    drop(buf);
    let model = now_ms();
    // Every byte of the (inflated) file was decoded (the reader stops at the final `}`, before a
    // trailing newline, as the page's own reader counts too).
    let decoded_bytes = total;
    // The file's facts, their time bounds a part of the slices per task.
    let bounds = super::after_model::bounds_yielding(&trace).await;
    let tf = TraceFile::with_bounds(&name, trace, bounds).with_source(&blob);
    let phase = |phase: &'static str| {
        ctx.progress.update(|p| {
            if let Some(p) = p {
                p.phase = phase;
            }
        })
    };
    // The merging worker computes the timeline's parts and the analyses meanwhile.
    super::after_model::timeline_and_analysis(
        &tf,
        |ms| pool.0.next_within(ms),
        || pool.0.credit(),
        &ctx,
        phase,
        false,
    )
    .await
    .map_err(|e| e.in_file(&name))?;
    stop_when_idle(pool);
    // A preview still on its way goes on screen first, so the whole trace always replaces it and
    // one never replaces the other the wrong way round. It is the head of the file, read by a
    // worker of its own: it is on its way only when this machine was far busier than the load.
    while !preview_over.get() {
        if ctx.cancel.get_untracked() {
            return Err(Error::new(ErrorKind::Cancelled, 0).in_file(&name));
        }
        crate::platform::clock::sleep_ms(20).await;
    }
    if ctx.cancel.get_untracked() {
        return Err(Error::new(ErrorKind::Cancelled, 0).in_file(&name));
    }
    let end = now_ms();
    // The Overview's first render in a task of its own, not after the analysis's last section.
    yield_now().await;
    Ok(Outcome::Loaded(LoadedFile {
        name,
        bytes: raw_bytes,
        decoded_bytes,
        load_ms: end - started,
        parse_ms: busy_ms,
        first_bytes_ms: first_bytes.max(started) - started,
        model_ms: model - started,
        workers: k,
        preview: false,
        content: Content::Trace(Box::new(tf)),
    }))
}
