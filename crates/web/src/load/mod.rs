//! Reading bytes into the core `Loader` in fixed slices: from a `File` (picked or dropped) or from a
//! `fetch` of `?url=`, both read ahead by a worker (`js/chunks.js`). Between slices the task yields to the event loop so the page stays responsive,
//! progress is published in bytes with MB/s, and a cancel flag is honoured.

use crate::state::{Content, LoadedFile, Progress, TraceFile};
use crate::timeline::data::TimelineData;
use js_sys::{Reflect, Uint8Array};
use leptos::prelude::*;
use tracelight_core::ingest::{Loaded, Loader};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Raw bytes per slice: small enough that parsing one (gzip included) stays well under 50 ms.
pub const SLICE_BYTES: u64 = 1 << 20;

/// Bytes per chunk the reader worker hands over (each is one message and one copy into wasm).
const READ_BYTES: u64 = 4 << 20;

/// Signals a load reports into.
#[derive(Clone, Copy)]
pub struct LoadCtx {
    pub progress: RwSignal<Option<Progress>>,
    pub cancel: RwSignal<bool>,
}

fn js_err(v: JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{v:?}"))
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Lets the browser paint and handle input. A `MessageChannel` message is a new task, like
/// `setTimeout(0)`, without the 4 ms clamp nested timers get.
pub async fn yield_now() {
    let p = js_sys::Promise::new(&mut |resolve, _| match web_sys::MessageChannel::new() {
        Ok(ch) => {
            ch.port1().set_onmessage(Some(resolve.unchecked_ref()));
            let _ = ch.port2().post_message(&JsValue::NULL);
        }
        Err(_) => {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
            }
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Parse work between yields: keeps every main-thread task well under 50 ms.
const BUDGET_MS: f64 = 30.0;

struct Feed {
    loader: Loader,
    started: f64,
    last_yield: f64,
    /// Time spent inside the reader itself, so a benchmark can tell parse cost from waiting on
    /// the browser (reads, yields).
    busy_ms: f64,
    total: Option<u64>,
    ctx: LoadCtx,
    /// When the first bytes were pushed (ms since page start), 0 before.
    first_bytes: f64,
}

impl Feed {
    /// `started`: when the read was asked for (the load time counts from there).
    fn new(name: &str, total: Option<u64>, ctx: LoadCtx, started: f64) -> Self {
        ctx.cancel.set(false);
        ctx.progress.set(Some(Progress {
            name: name.to_owned(),
            done: 0,
            total,
            mb_per_s: 0.0,
            phase: "reading",
        }));
        let mut loader = Loader::new(name);
        if let Some(t) = total {
            loader.size_hint(t);
        }
        Feed {
            loader,
            started,
            last_yield: now_ms(),
            busy_ms: 0.0,
            total,
            ctx,
            first_bytes: 0.0,
        }
    }

    /// Parses `bytes` in [`SLICE_BYTES`] pieces, yielding to the browser whenever the budget is
    /// spent; progress and the cancel flag are checked at each yield. `inflated` carries the
    /// source bytes read so far when the bytes were already decompressed by the platform.
    async fn push(&mut self, bytes: &[u8], inflated: Option<u64>) -> Result<(), String> {
        for piece in bytes.chunks(SLICE_BYTES as usize) {
            if self.ctx.cancel.get_untracked() {
                return Err(format!("{}: load cancelled", self.loader.name()));
            }
            let t0 = now_ms();
            if self.first_bytes == 0.0 {
                self.first_bytes = t0;
            }
            match inflated {
                Some(raw) => self.loader.push_inflated(piece, raw),
                None => self.loader.push(piece),
            }
            .map_err(|e| e.to_string())?;
            let now = now_ms();
            self.busy_ms += now - t0;
            if now - self.last_yield >= BUDGET_MS {
                let secs = ((now - self.started) / 1000.0).max(1e-6);
                let done = self.loader.raw_bytes();
                self.ctx.progress.set(Some(Progress {
                    name: self.loader.name().to_owned(),
                    done,
                    total: self.total,
                    mb_per_s: done as f64 / 1e6 / secs,
                    phase: "reading",
                }));
                yield_now().await;
                self.last_yield = now_ms();
            }
        }
        if self.ctx.cancel.get_untracked() {
            return Err(format!("{}: load cancelled", self.loader.name()));
        }
        Ok(())
    }

    async fn finish(self) -> Result<LoadedFile, String> {
        let name = self.loader.name().to_owned();
        let bytes = self.loader.raw_bytes();
        let decoded_bytes = self.loader.decoded_bytes();
        self.ctx.progress.update(|p| {
            if let Some(p) = p {
                p.phase = "building model";
            }
        });
        yield_now().await;
        let t0 = now_ms();
        let mut model = 0.0;
        let content = match self.loader.finish().map_err(|e| e.to_string())? {
            Loaded::Trace(t) => {
                let tf = TraceFile::new(&name, *t);
                model = now_ms();
                // The timeline's LOD index, built now (yielding between lanes) rather than on the
                // first view of the timeline: 0.8-1.3 s on the 1 GB trace (BENCHMARKS.md).
                self.ctx.progress.update(|p| {
                    if let Some(p) = p {
                        p.phase = "indexing timeline";
                    }
                });
                let data = TimelineData::build_yielding(&tf.trace).await;
                tf.set_timeline(data);
                Content::Trace(Box::new(tf))
            }
            Loaded::Snapshot(s) => Content::Snapshot(s),
            Loaded::MemoryTimeline(m) => Content::MemoryTimeline(m),
        };
        let end = now_ms();
        let load_ms = end - self.started;
        if model == 0.0 {
            model = end;
        }
        Ok(LoadedFile {
            parse_ms: self.busy_ms + (end - t0),
            first_bytes_ms: self.first_bytes.max(self.started) - self.started,
            model_ms: model - self.started,
            name,
            bytes,
            decoded_bytes,
            load_ms,
            content,
        })
    }
}

#[wasm_bindgen(module = "/js/chunks.js")]
extern "C" {
    /// Reads a `File` or a URL in a worker, a bounded number of chunks ahead (see `js/chunks.js`).
    type ChunkSource;
    #[wasm_bindgen(constructor, catch)]
    fn new(src: &JsValue, chunk: f64, ahead: u32, inflate: bool) -> Result<ChunkSource, JsValue>;
    #[wasm_bindgen(method)]
    fn next(this: &ChunkSource) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn close(this: &ChunkSource);
    /// Starts a reader worker ahead of the next load.
    fn prewarm();
}

/// Chunks the worker may hold ready beyond the one being parsed: enough to ride out a slow read,
/// few enough that the bytes outside wasm memory stay small (16 MiB).
const READ_AHEAD: u32 = 4;

/// What the worker sends, decoded.
enum Chunk {
    /// The source's size when known, and whether the worker inflates it.
    Start(Option<u64>, bool),
    /// Bytes, and how many bytes of the source they account for so far.
    Bytes(Uint8Array, u64),
    /// The platform inflater stopped: cut short (`true`) or corrupt.
    GzipFailed(bool, String),
    Done,
}

/// Owns the worker: dropping it (a cancel, a parse error) stops the reads.
struct Source(ChunkSource, f64);

impl Drop for Source {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The bundled demo, parsed once before the first real load: V8 runs new wasm code unoptimized
/// and optimizes a function only after it has run a while, so a cold first load spent a third of
/// its time in slow code (100 MB: 0.81-0.85 s cold, 0.54-0.60 s after one small parse).
static WARM_UP: &[u8] = include_bytes!("../../../web/demo/demo.pt.trace.json.gz");

/// Parses of the demo before the first load: V8 moves each hot function to its optimizing tier
/// only after it has run for a while, and one parse left part of the reader in the baseline tier
/// (105 MB to model ready: 186-198 MB/s after one parse, 202-228 after eight, same build).
const WARM_UP_PARSES: usize = 16;

thread_local!(static WARM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

/// One warm-up parse, the first time it is called (a few ms), for a load asked for before
/// [`prepare`] ran; later calls do nothing.
pub fn warm_up() {
    if !WARM.with(|d| d.replace(true)) {
        let _ = tracelight_core::ingest::load_bytes("warm-up", WARM_UP);
    }
}

/// Readies the page for a first load while the user picks a file: a reader worker started and
/// the reader warmed up, one parse per task so the page stays responsive.
pub async fn prepare() {
    prewarm();
    WARM.with(|d| d.set(true));
    for _ in 0..WARM_UP_PARSES {
        let _ = tracelight_core::ingest::load_bytes("warm-up", WARM_UP);
        yield_now().await;
    }
}

/// Whether gzip is inflated by the platform's `DecompressionStream` in the reader worker (the
/// default: off the parsing thread, in native code) or by flate2 in the parsing thread. Measured in
/// one build, alternating, on 2 cores: a 100 MB trace (8 MB gz) opened in 0.73-0.86 s the first
/// way and 0.81-0.90 s the second (BENCHMARKS.md). `?inflate=wasm` forces flate2 (tests,
/// benchmarks); the worker falls back to it by itself where `DecompressionStream` is missing.
fn inflate_in_worker() -> bool {
    crate::app::query_param("inflate").as_deref() != Some("wasm")
}

impl Source {
    fn open(src: &JsValue, label: &str) -> Result<Self, String> {
        let asked = now_ms();
        let source = ChunkSource::new(src, READ_BYTES as f64, READ_AHEAD, inflate_in_worker())
            .map(|c| Source(c, asked))
            .map_err(|e| format!("{label}: {}", js_err(e)))?;
        // While the worker starts and the first bytes arrive; counted in the load time.
        warm_up();
        Ok(source)
    }

    async fn next(&self, label: &str) -> Result<Chunk, String> {
        let m = JsFuture::from(self.0.next())
            .await
            .map_err(|e| format!("{label}: {}", js_err(e)))?;
        let get = |k: &str| Reflect::get(&m, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
        match get("kind").as_string().as_deref() {
            Some("start") => Ok(Chunk::Start(
                get("total").as_f64().map(|t| t as u64),
                get("inflated").as_bool().unwrap_or(false),
            )),
            Some("chunk") => get("bytes")
                .dyn_into()
                .map(|b| Chunk::Bytes(b, get("raw").as_f64().unwrap_or(0.0) as u64))
                .map_err(|_| format!("{label}: a chunk that is not bytes")),
            Some("gzip-error") => Ok(Chunk::GzipFailed(
                get("truncated").as_bool().unwrap_or(false),
                get("message").as_string().unwrap_or_default(),
            )),
            Some("done") => Ok(Chunk::Done),
            _ => Err(format!(
                "{label}: {}",
                get("message")
                    .as_string()
                    .unwrap_or_else(|| "the read failed".into())
            )),
        }
    }

    /// Feeds every chunk to a new [`Feed`] named `name` and builds the model.
    async fn load(self, name: &str, label: &str, ctx: LoadCtx) -> Result<LoadedFile, String> {
        let (total, inflated) = match self.next(label).await? {
            Chunk::Start(total, inflated) => (total, inflated),
            _ => return Err(format!("{label}: the reader did not start")),
        };
        let mut feed = Feed::new(name, total, ctx, self.1);
        // One slice at a time from the worker's chunk: a chunk-sized buffer would be wasm
        // memory for good.
        let mut buf: Vec<u8> = Vec::new();
        loop {
            match self.next(label).await? {
                Chunk::Bytes(arr, raw) => {
                    let len = arr.length();
                    let mut at = 0u32;
                    while at < len {
                        let end = len.min(at.saturating_add(SLICE_BYTES as u32));
                        buf.resize((end - at) as usize, 0);
                        arr.subarray(at, end).copy_to(&mut buf);
                        feed.push(&buf, inflated.then_some(raw)).await?;
                        at = end;
                    }
                }
                Chunk::GzipFailed(truncated, message) => {
                    feed.loader
                        .inflate_failed(truncated, &message)
                        .map_err(|e| e.to_string())?;
                    break;
                }
                Chunk::Done => break,
                Chunk::Start(..) => return Err(format!("{label}: the reader started twice")),
            }
        }
        drop(self);
        feed.finish().await
    }
}

/// Reads a `File` (picked or dropped) through the reader worker.
pub async fn load_file(file: web_sys::File, ctx: LoadCtx) -> Result<LoadedFile, String> {
    let name = file.name();
    Source::open(&file, &name)?.load(&name, &name, ctx).await
}

/// Fetches `url` (same origin or CORS) in the reader worker and streams the body into the loader.
pub async fn load_url(url: &str, ctx: LoadCtx) -> Result<LoadedFile, String> {
    let name = url
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(url)
        .to_owned();
    Source::open(&JsValue::from_str(url), url)?
        .load(&name, url, ctx)
        .await
}

/// Opens several files as one session: each is read in turn; the ones that fail are reported by
/// name and the rest stay open. Trace ranks are assigned as [`tracelight_core::ingest::ranks`] says.
pub async fn load_files(files: Vec<web_sys::File>, ctx: LoadCtx) -> (Vec<LoadedFile>, Vec<String>) {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        if ctx.cancel.get_untracked() {
            errors.push(format!("{}: load cancelled", f.name()));
            continue;
        }
        match load_file(f, ctx).await {
            Ok(l) => ok.push(l),
            Err(e) => errors.push(e),
        }
    }
    assign_ranks(&mut ok);
    (ok, errors)
}

pub fn assign_ranks(files: &mut [LoadedFile]) {
    let keys: Vec<(Option<i64>, String)> = files
        .iter()
        .filter_map(|f| match &f.content {
            Content::Trace(t) => Some((
                t.trace.meta.distributed.as_ref().and_then(|d| d.rank),
                f.name.clone(),
            )),
            _ => None,
        })
        .collect();
    let refs: Vec<(Option<i64>, &str)> = keys.iter().map(|(r, n)| (*r, n.as_str())).collect();
    let ranks = tracelight_core::ingest::ranks::assign_ranks(&refs);
    let mut k = 0;
    for f in files.iter_mut() {
        if let Content::Trace(t) = &mut f.content {
            t.rank = ranks[k];
            k += 1;
        }
    }
}

/// Size of the wasm linear memory: it only grows, so after a load it is the load's peak.
pub fn wasm_memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size::<0>() as u64 * 65536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}
