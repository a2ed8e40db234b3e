//! Reading bytes into the core `Loader` in fixed slices: from a `File` (picked or dropped) or from a
//! `fetch` of `?url=`. Between slices the task yields to the event loop so the page stays responsive,
//! progress is published in bytes with MB/s, and a cancel flag is honoured.

use crate::state::{Content, LoadedFile, Progress, TraceFile};
use js_sys::{Reflect, Uint8Array};
use leptos::prelude::*;
use tracelight_core::ingest::{Loaded, Loader};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Raw bytes per slice: small enough that parsing one (gzip included) stays well under 50 ms.
pub const SLICE_BYTES: u64 = 1 << 20;

/// Bytes read from a `File` per `arrayBuffer()` call (each read is an async round trip).
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
    total: Option<u64>,
    ctx: LoadCtx,
}

impl Feed {
    fn new(name: &str, total: Option<u64>, ctx: LoadCtx) -> Self {
        ctx.cancel.set(false);
        ctx.progress.set(Some(Progress {
            name: name.to_owned(),
            done: 0,
            total,
            mb_per_s: 0.0,
            phase: "reading",
        }));
        let now = now_ms();
        let mut loader = Loader::new(name);
        if let Some(t) = total {
            loader.size_hint(t);
        }
        Feed {
            loader,
            started: now,
            last_yield: now,
            total,
            ctx,
        }
    }

    /// Parses `bytes` in [`SLICE_BYTES`] pieces, yielding to the browser whenever the budget is
    /// spent; progress and the cancel flag are checked at each yield.
    async fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        for piece in bytes.chunks(SLICE_BYTES as usize) {
            if self.ctx.cancel.get_untracked() {
                return Err(format!("{}: load cancelled", self.loader.name()));
            }
            self.loader.push(piece).map_err(|e| e.to_string())?;
            let now = now_ms();
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
        let content = match self.loader.finish().map_err(|e| e.to_string())? {
            Loaded::Trace(t) => Content::Trace(Box::new(TraceFile::new(&name, *t))),
            Loaded::Snapshot(s) => Content::Snapshot(s),
            Loaded::MemoryTimeline(m) => Content::MemoryTimeline(m),
        };
        let load_ms = now_ms() - self.started;
        Ok(LoadedFile {
            name,
            bytes,
            decoded_bytes,
            load_ms,
            content,
        })
    }
}

/// Reads a `File` slice by slice.
pub async fn load_file(file: web_sys::File, ctx: LoadCtx) -> Result<LoadedFile, String> {
    let name = file.name();
    let size = file.size() as u64;
    let mut feed = Feed::new(&name, Some(size), ctx);
    let mut off = 0u64;
    let mut buf: Vec<u8> = Vec::new();
    while off < size {
        let end = (off + READ_BYTES).min(size);
        let blob = file
            .slice_with_f64_and_f64(off as f64, end as f64)
            .map_err(|e| format!("{name}: {}", js_err(e)))?;
        let ab = JsFuture::from(blob.array_buffer())
            .await
            .map_err(|e| format!("{name}: {}", js_err(e)))?;
        let arr = Uint8Array::new(&ab);
        buf.resize(arr.length() as usize, 0);
        arr.copy_to(&mut buf);
        feed.push(&buf).await?;
        off = end;
    }
    feed.finish().await
}

/// Fetches `url` (same origin or CORS) and streams the body into the loader.
pub async fn load_url(url: &str, ctx: LoadCtx) -> Result<LoadedFile, String> {
    let name = url
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(url)
        .to_owned();
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: {}", js_err(e)))?;
    let resp: web_sys::Response = resp
        .dyn_into()
        .map_err(|_| format!("{url}: not a response"))?;
    if !resp.ok() {
        return Err(format!(
            "{url}: HTTP {} {}",
            resp.status(),
            resp.status_text()
        ));
    }
    let total = resp
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|s| s.parse().ok());
    let mut feed = Feed::new(&name, total, ctx);
    let body = resp.body().ok_or_else(|| format!("{url}: empty body"))?;
    let reader: web_sys::ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| format!("{url}: unreadable body"))?;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let r = JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("{url}: {}", js_err(e)))?;
        let done = Reflect::get(&r, &JsValue::from_str("done"))
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            break;
        }
        let value = Reflect::get(&r, &JsValue::from_str("value"))
            .map_err(|e| format!("{url}: {}", js_err(e)))?;
        let arr: Uint8Array = value
            .dyn_into()
            .map_err(|_| format!("{url}: body chunk is not bytes"))?;
        buf.resize(arr.length() as usize, 0);
        arr.copy_to(&mut buf);
        feed.push(&buf).await?;
    }
    feed.finish().await
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
