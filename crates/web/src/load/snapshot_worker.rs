//! Reading a memory snapshot off the page's thread: one worker of `js/shards.js` (mode
//! `snapshot`, its own instance of this module running the `tl_snap_*` exports of
//! [`super::worker`]) reads the whole file in 4 MiB pieces through core's `Loader` (the streaming
//! snapshot reader, bounded memory) and hands the model over as sections
//! (`tracelight_core::ingest::snapshot::wire`), which the page decodes one per task. The pickle
//! is never decoded on the page's thread, and no task there grows with the file. Before the
//! model come its first views (figures, charts, flame graphs), which the page puts on screen at
//! once ([`show_views`]); after it, the whole summary.

use super::pool::Outcome;
use super::preview::{Preview, PreviewOf};
use super::LoadCtx;
use crate::platform::clock::{now_ms, yield_now};
use crate::platform::url::query_param;
use crate::session::{Content, LoadedFile, Progress, Session, SnapshotFile};
use js_sys::{Reflect, Uint8Array};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::snapshot::SnapshotSummary;
use tracelight_core::ingest::snapshot::wire as snapshot_model_wire;
use tracelight_core::ingest::sniff::{self, Format};
use tracelight_core::model::wire::{self, Wire};
use tracelight_core::report::{snapshot_flame_wire, snapshot_wire};
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

/// Work on the page's thread between yields once the views are on screen: the chart is being
/// looked at (and its first frame shown) while the model's sections are decoded.
const SHOWN_BUDGET_MS: f64 = 8.0;

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
    // The views come before the model's sections: `(expected, got, decoder)` while they arrive,
    // then the file they make, shown while the model arrives.
    let mut views_in: Option<(i32, i32, snapshot_wire::Decoder)> = None;
    let mut views: Option<Box<SnapshotFile>> = None;
    // The flame graphs, after the model's sections (not shown before it is in); `None` once one
    // failed to decode (the Memory tab then makes a device's graph when it shows it).
    let mut flames_in = Some(snapshot_flame_wire::FlameDecoder::default());
    // The whole summary, after the flame graphs (the views' figures lack the peak's tables).
    let mut summary: Option<SnapshotSummary> = None;
    let mut budget = BUDGET_MS;
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
            Some("analysis") => {
                let n = get(&m, "sections").as_f64().unwrap_or(-1.0) as i32;
                if n > 0 {
                    views_in = Some((n, 0, snapshot_wire::Decoder::default()));
                } else {
                    views_off("none");
                }
            }
            Some("asection") => {
                let Some((n, got, dec)) = views_in.as_mut() else {
                    continue;
                };
                let ok = if bytes_of(&m, &mut buf) {
                    dec.push(&buf).map_err(|e| e.to_string())
                } else {
                    Err("a section that is not bytes".into())
                };
                *got += 1;
                if let Err(why) = ok {
                    views_off(&why);
                    views_in = None;
                } else if *got == *n {
                    if let Some((_, _, dec)) = views_in.take() {
                        match dec.finish() {
                            Ok(v) => {
                                let f = SnapshotFile::awaiting_model(v);
                                if show_views(&f, &name, total, started, &ctx) {
                                    budget = SHOWN_BUDGET_MS;
                                }
                                views = Some(f);
                            }
                            Err(e) => views_off(&e.to_string()),
                        }
                    }
                }
            }
            Some("section") => {
                let t0 = now_ms();
                if !bytes_of(&m, &mut buf) {
                    return Err(io("a model section that is not bytes".into()));
                }
                decoder.push(&buf).map_err(|e| e.in_file(&name))?;
                let now = now_ms();
                busy_ms += now - t0;
                if now - last_yield >= budget {
                    yield_now().await;
                    last_yield = now_ms();
                }
                pool.0.credit();
            }
            Some("fsection") => {
                let Some(dec) = flames_in.as_mut() else {
                    continue;
                };
                let t0 = now_ms();
                let ok = if bytes_of(&m, &mut buf) {
                    dec.push(&buf).map_err(|e| e.to_string())
                } else {
                    Err("a flame graph section that is not bytes".into())
                };
                if let Err(why) = ok {
                    views_off(&format!("flame graphs: {why}"));
                    flames_in = None;
                }
                let now = now_ms();
                busy_ms += now - t0;
                if now - last_yield >= budget {
                    yield_now().await;
                    last_yield = now_ms();
                }
            }
            Some("summary") => {
                summary = match get(&m, "bytes").dyn_into::<Uint8Array>() {
                    Ok(arr) => snapshot_wire::summary_of(&arr.to_vec())
                        .map_err(|e| views_off(&e.to_string()))
                        .ok(),
                    Err(_) => None,
                };
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
    super::pool::stop_when_idle(pool);
    // The last section's decode, the file's indexes and the Memory tab's render each in a task of
    // their own: together they were one of 200 ms on a 1 GB snapshot. Without the worker's views
    // (a failure) the Memory tab computes its own.
    crate::platform::clock::yield_now().await;
    let content = Content::Snapshot(match views {
        Some(v) => {
            let mut f = v.with_model(snap);
            // Without the whole summary the Memory tab computes its own (the views' lacks the
            // peak's tables), and without a device's flame graph it makes that one.
            f.summary = summary.map(Arc::new);
            if let Some(flames) = flames_in.and_then(|d| d.finish().ok()) {
                f.flames = f
                    .charts
                    .iter()
                    .map(|(d, _)| *d)
                    .zip(flames.into_iter().map(Arc::new))
                    .collect();
            }
            f
        }
        None => SnapshotFile::new(snap, None),
    });
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

/// Copies message `m`'s `bytes` (a section) into `buf`; false when they are not bytes.
fn bytes_of(m: &JsValue, buf: &mut Vec<u8>) -> bool {
    let Ok(arr) = get(m, "bytes").dyn_into::<Uint8Array>() else {
        return false;
    };
    buf.resize(arr.length() as usize, 0);
    arr.copy_to(buf);
    true
}

/// Why the worker's views will not come: the Memory tab computes its own from the model.
fn views_off(why: &str) {
    web_sys::console::warn_1(&JsValue::from_str(&format!(
        "the snapshot worker's summary and charts: {why}; computing them on the page"
    )));
}

/// Puts the worker's views `f` on screen while the model arrives, where the load may show a
/// preview (the user's own open of one file): the chart, figures and tables are drawn from them;
/// what needs the model waits for the whole file, which replaces this one. Whether it did.
fn show_views(f: &SnapshotFile, name: &str, total: u64, started: f64, ctx: &LoadCtx) -> bool {
    let Some((signal, generation)) = ctx.preview else {
        return false;
    };
    let mut shown = f.with_model(Default::default());
    shown.pending = true;
    let ready_ms = now_ms() - started;
    let file = LoadedFile {
        name: name.to_owned(),
        bytes: total,
        decoded_bytes: total,
        load_ms: ready_ms,
        parse_ms: 0.0,
        first_bytes_ms: 0.0,
        model_ms: ready_ms,
        workers: 1,
        preview: false,
        content: Content::Snapshot(shown),
    };
    signal.set(Some((
        generation,
        Preview {
            session: Arc::new(Session { files: vec![file] }),
            bytes: total,
            total,
            events: 0,
            ready_ms,
            of: PreviewOf::SnapshotViews,
        },
    )));
    true
}
