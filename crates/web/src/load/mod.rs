//! Loading files: a `File` (picked or dropped) or a `fetch` of `?url=`, read ahead by a worker
//! ([`reader`]), fed to the core `Loader` in fixed slices between which the page keeps painting
//! ([`feed`]), with progress in bytes and MB/s and a cancel flag. The reader is warmed up before
//! the first pick ([`warm`]).

mod after_model;
mod digest;
mod feed;
mod pool;
mod prefault;
mod preview;
mod reader;
mod snapshot_worker;
mod warm;
pub mod worker;
mod worker_halves;
mod worker_snapshot;

pub use feed::SLICE_BYTES;
pub use preview::{Preview, PreviewOf, PreviewSink};
pub use warm::{prepare, rehearsal_snapshot, rehearsal_trace, stopped, warm_up, warm_up_snapshot};

use crate::platform::clock::now_ms;
use crate::session::{Content, LoadedFile, Progress};
use feed::Feed;
use leptos::prelude::*;
use reader::{read_error, Chunk, Source};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen::{JsCast, JsValue};

/// Signals a load reports into.
#[derive(Clone, Copy)]
pub struct LoadCtx {
    pub progress: RwSignal<Option<Progress>>,
    pub cancel: RwSignal<bool>,
    /// Where a big trace's preview goes ([`preview`]); `None` where the load must not replace
    /// what is on screen before it ends (B of Compare, a trend, several files at once).
    pub preview: Option<PreviewSink>,
}

/// Feeds every chunk to a new [`Feed`] named `name` and builds the model.
async fn read_all(
    source: Source,
    name: &str,
    label: &str,
    ctx: LoadCtx,
) -> Result<LoadedFile, Error> {
    // While the worker starts and the first bytes arrive; counted in the load time.
    warm_up();
    let (total, inflated) = match source.next(label).await? {
        Chunk::Start(total, inflated) => (total, inflated),
        _ => return Err(read_error(label, "the reader did not start".into())),
    };
    let mut feed = Feed::new(name, total, ctx, source.1);
    // One slice at a time from the worker's chunk: a chunk-sized buffer would be wasm
    // memory for good.
    let mut buf: Vec<u8> = Vec::new();
    loop {
        match source.next(label).await? {
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
                    .map_err(|e| e.in_file(name))?;
                break;
            }
            Chunk::Done => break,
            Chunk::Start(..) => return Err(read_error(label, "the reader started twice".into())),
        }
    }
    drop(source);
    feed.finish().await
}

/// `f` boxed behind a pointer the optimizers cannot see through (`black_box`), so its code stays a
/// function of its own. Awaited directly, the digests' reader (and with it much of the way a file
/// is loaded) was inlined into [`load_files`]' future: one function of 66 KB that V8 compiled at
/// every drop (5-6 ms), before a snapshot's worker could start; apart, a drop compiles the way it
/// takes.
fn apart<'a, T>(
    f: impl std::future::Future<Output = T> + 'a,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>> {
    std::hint::black_box(Box::pin(f))
}

/// Reads a `File` (picked or dropped): a big Kineto trace on every core in workers ([`pool`]), a
/// plain memory snapshot of 4 MB or more in one worker ([`snapshot_worker`]), anything else
/// through the reader worker into the page's own parser.
pub async fn load_file(file: web_sys::File, ctx: LoadCtx) -> Result<LoadedFile, Error> {
    pool::stop_idle_waiting();
    warm::stop();
    let name = file.name();
    let started = now_ms();
    if snapshot_worker::wanted(&file).await {
        match apart(snapshot_worker::load(file.clone(), ctx)).await? {
            pool::Outcome::Loaded(f) => return Ok(f),
            pool::Outcome::Unavailable(why) => {
                if ctx.cancel.get_untracked() {
                    return Err(Error::new(ErrorKind::Cancelled, 0).in_file(&name));
                }
                web_sys::console::warn_1(&JsValue::from_str(&format!(
                    "{name}: reader workers unavailable ({why}); reading on the page's thread"
                )));
            }
        }
    }
    if let Some(plan) = pool::plan_for_file(&file, ctx).await {
        if ctx.cancel.get_untracked() {
            return Err(Error::new(ErrorKind::Cancelled, 0).in_file(&name));
        }
        let start_preview: pool::StartPreview = Box::new(|blob, total, alive, held| {
            preview::start(blob, &name, total, started, ctx, alive, held)
        });
        match apart(pool::load_in_workers(
            plan,
            name.clone(),
            started,
            ctx,
            start_preview,
        ))
        .await?
        {
            pool::Outcome::Loaded(f) => return Ok(f),
            pool::Outcome::Unavailable(why) => {
                if ctx.cancel.get_untracked() {
                    return Err(Error::new(ErrorKind::Cancelled, 0).in_file(&name));
                }
                web_sys::console::warn_1(&JsValue::from_str(&format!(
                    "{name}: reader workers unavailable ({why}); reading on the page's thread"
                )));
            }
        }
    }
    apart(read_all(Source::open(&file, &name)?, &name, &name, ctx)).await
}

/// Fetches `url` (same origin or CORS; the page's one request). A body whose size is announced
/// (Content-Length) is kept whole in a `Blob` and read as a picked file is (a big trace on every
/// core, in workers); one of unknown size is streamed into the page's own reader through the reader
/// worker (and kept whole too where the browser cannot move a stream to a worker).
pub async fn load_url(url: &str, ctx: LoadCtx) -> Result<LoadedFile, Error> {
    pool::stop_idle_waiting();
    warm::stop();
    let name = url
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(url)
        .to_owned();
    ctx.cancel.set(false);
    let body = pool::fetch_body(url)
        .await
        .map_err(|e| read_error(url, reader::js_err(e)))?;
    let total = js_sys::Reflect::get(&body, &JsValue::from_str("total"))
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    if total == 0.0 {
        if let Ok(source) = Source::open(&body, url) {
            return read_all(source, &name, url, ctx).await;
        }
    }
    let stream = js_sys::Reflect::get(&body, &JsValue::from_str("stream"))
        .map_err(|e| read_error(url, reader::js_err(e)))?;
    ctx.progress.set(Some(crate::session::Progress {
        name: name.clone(),
        done: 0,
        total: (total > 0.0).then_some(total as u64),
        mb_per_s: 0.0,
        phase: "downloading",
    }));
    let file: web_sys::File = pool::blob_of(&stream, &name)
        .await
        .map_err(|e| read_error(url, reader::js_err(e)))?
        .dyn_into()
        .map_err(|_| read_error(url, "the body is not a file".into()))?;
    load_file(file, ctx).await
}

/// A trace a host page handed over by `postMessage` (`embed`): its bytes already in a `File` made
/// from the posted buffer, or a transferred `ReadableStream` with its announced size.
pub enum Posted {
    Bytes(web_sys::File),
    Stream {
        stream: JsValue,
        total: Option<u64>,
        name: String,
    },
}

impl Posted {
    pub fn name(&self) -> String {
        match self {
            Posted::Bytes(f) => f.name(),
            Posted::Stream { name, .. } => name.clone(),
        }
    }
}

/// Reads a posted trace through the reader worker, like a picked file (a stream is moved to the
/// worker, which reads it as it would a fetch's body).
pub async fn load_posted(p: Posted, ctx: LoadCtx) -> Result<LoadedFile, Error> {
    match p {
        Posted::Bytes(f) => load_file(f, ctx).await,
        Posted::Stream {
            stream,
            total,
            name,
        } => {
            let src = js_sys::Object::new();
            let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&src, &JsValue::from_str(k), v);
            set("stream", &stream)
                .and_then(|_| set("total", &JsValue::from_f64(total.unwrap_or(0) as f64)))
                .map_err(|e| reader::read_error(&name, reader::js_err(e)))?;
            read_all(Source::open(&src, &name)?, &name, &name, ctx).await
        }
    }
}

/// Opens several files as one session: each is read in turn; the ones that fail are reported by
/// name and the rest stay open. Trace ranks are assigned as [`tracelight_core::ingest::ranks`] says.
pub async fn load_files(files: Vec<web_sys::File>, ctx: LoadCtx) -> (Vec<LoadedFile>, Vec<Error>) {
    // A new pick: a Cancel of the load before must not skip this one's first file.
    ctx.cancel.set(false);
    // Before any await: a warm-up pass queued behind this one would run first.
    warm::stop();
    // Digests (a header and its Parquet tables) open as traces of the run.
    let (parts, files): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|f| digest::is_digest_part(&f.name()));
    // Not even polled without digests: its code is compiled on its first call.
    let (mut ok, mut errors) = if parts.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        apart(digest::load_digests(parts)).await
    };
    let ctx = LoadCtx {
        preview: ctx.preview.filter(|_| files.len() == 1),
        ..ctx
    };
    for f in files {
        if ctx.cancel.get_untracked() {
            errors.push(Error::new(ErrorKind::Cancelled, 0).in_file(&f.name()));
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
