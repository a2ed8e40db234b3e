//! What a reader worker computes after a trace's model and hands to the page a section per
//! credit (the timeline's parts beside its index, then the analyses), decoded here one section per
//! task, so no pass over a big model runs on the page's thread; and the pace at which the page
//! takes the workers' messages (its wait for a word, its work between yields).

use super::LoadCtx;
use crate::platform::clock::{now_ms, yield_now};
use crate::session::derived::TimelineData;
use crate::session::TraceFile;
use js_sys::{Reflect, Uint8Array};
use leptos::prelude::GetUntracked;
use tracelight_core::model::Trace;
use tracelight_core::report::analysis::Analysis;
use tracelight_core::report::analysis_wire;
use tracelight_core::view::parts::{self, TimelineParts};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Work on the page's thread between yields.
pub(super) const BUDGET_MS: f64 = 30.0;

/// How long the page waits for a worker's word before it looks at Cancel again (worker 0 merges,
/// finishes and analyses for seconds without one).
pub(super) const TICK_MS: f64 = 100.0;

/// Sections a worker may send ahead of the page's decode after the model: with one, the worker's
/// copy-out and the page's decode of each of a 1 GB trace's ~100 such sections waited for each
/// other.
const AHEAD: i32 = 4;

/// Field `k` of a worker's message.
pub(super) fn get(m: &JsValue, k: &str) -> JsValue {
    Reflect::get(m, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

/// The trace's timeline and analyses once its model is in: the LOD index built here, a step per
/// task, while the merging worker computes the timeline's other parts; those parts received, then
/// the worker's analyses. Parts that do not come, do not decode or do not fit the model are
/// computed here (a pass per task), and the analyses then too, on first use: the worker's later
/// sections may not line up. A preview's worker sends no parts (`parts_here`: the page makes
/// them, while the worker analyses the head). `Err` only for what ends the load (Cancel, a worker
/// out of memory).
pub(super) async fn timeline_and_analysis(
    tf: &TraceFile,
    next: impl Fn(f64) -> js_sys::Promise,
    credit: impl Fn(),
    ctx: &LoadCtx,
    phase: impl Fn(&'static str),
    parts_here: bool,
) -> Result<(), Error> {
    phase("indexing timeline");
    let lod = TimelineData::lod_yielding(&tf.trace).await;
    if parts_here {
        let p = TimelineData::parts_yielding(&tf.trace).await;
        tf.set_timeline(TimelineData::from_parts(lod, p));
        return analysis(tf, &next, &credit, ctx).await;
    }
    let got = match receive_after::<parts::Decoder>(&next, &credit, ctx).await {
        Ok(p) if p.fits(&tf.trace) => Some(p),
        Ok(_) => {
            warn(
                "the reader worker's timeline",
                "tracks or slices the model lacks",
            );
            None
        }
        Err(Some(e)) => return Err(e),
        Err(None) => None,
    };
    let Some(p) = got else {
        let p = TimelineData::parts_yielding(&tf.trace).await;
        tf.set_timeline(TimelineData::from_parts(lod, p));
        return Ok(());
    };
    tf.set_timeline_from_worker(TimelineData::from_parts(lod, p));
    phase("analysing");
    analysis(tf, &next, &credit, ctx).await
}

/// The worker's analyses, when they come and decode (else the page computes them on first use).
async fn analysis(
    tf: &TraceFile,
    next: &impl Fn(f64) -> js_sys::Promise,
    credit: &impl Fn(),
    ctx: &LoadCtx,
) -> Result<(), Error> {
    match receive_after::<analysis_wire::Decoder>(next, credit, ctx).await {
        Ok(a) => tf.set_analysis(a),
        Err(Some(e)) => return Err(e),
        Err(None) => {}
    }
    Ok(())
}

/// [`Trace::time_bounds`], [`BOUNDS_ROWS`] slices per step, yielding between steps once
/// [`BUDGET_MS`] of work has run (one pass: ~60 ms of one task for a 10 GB trace's 20 M slices).
pub(super) async fn bounds_yielding(t: &Trace) -> Option<(i64, i64)> {
    yield_now().await;
    let mut b = t.point_bounds();
    let mut last = now_ms();
    for at in (0..t.slices.len()).step_by(BOUNDS_ROWS) {
        b = Trace::bounds_with(b, t.slice_bounds(at..at + BOUNDS_ROWS));
        if now_ms() - last >= BUDGET_MS {
            yield_now().await;
            last = now_ms();
        }
    }
    b
}

/// Slices per step of [`bounds_yielding`].
const BOUNDS_ROWS: usize = 1 << 20;

fn warn(what: &str, why: &str) {
    web_sys::console::warn_1(&JsValue::from_str(&format!(
        "{what}: {why}; computing it on the page"
    )));
}

/// What a worker computes after the model and hands over a section per credit (a trace's
/// analysis, a snapshot's views), decoded on the page one section per task.
pub(super) trait AfterModel: Default {
    type Out;
    /// How the console names it when it cannot be used.
    const WHAT: &'static str;
    fn push(&mut self, section: &[u8]) -> Result<(), Error>;
    fn finish(self) -> Result<Self::Out, Error>;
}

impl AfterModel for parts::Decoder {
    type Out = TimelineParts;
    const WHAT: &'static str = "the reader worker's timeline";
    fn push(&mut self, section: &[u8]) -> Result<(), Error> {
        parts::Decoder::push(self, section)
    }
    fn finish(self) -> Result<TimelineParts, Error> {
        parts::Decoder::finish(self)
    }
}

impl AfterModel for analysis_wire::Decoder {
    type Out = Analysis;
    const WHAT: &'static str = "the reader worker's analysis";
    fn push(&mut self, section: &[u8]) -> Result<(), Error> {
        analysis_wire::Decoder::push(self, section)
    }
    fn finish(self) -> Result<Analysis, Error> {
        analysis_wire::Decoder::finish(self)
    }
}

/// The messages `next` gives after the model: `{kind: 'analysis', sections: n}` then n
/// `{kind: 'asection', bytes}`, each asked for with `credit`, up to [`AHEAD`] ahead. `Err(None)` when the worker has
/// none to give (it failed, or its sections do not decode): the page then computes it itself,
/// on first use, as before; `Err(Some(_))` on Cancel.
pub(super) async fn receive_after<D: AfterModel>(
    next: &impl Fn(f64) -> js_sys::Promise,
    credit: &impl Fn(),
    ctx: &LoadCtx,
) -> Result<D::Out, Option<Error>> {
    let mut decoder = D::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut expected: Option<i32> = None;
    let mut got = 0;
    // Credits given so far: n in all, never more (the worker's next wait is for the next stage).
    let mut given = 0;
    let mut last_yield = now_ms();
    let warn = |why: &str| {
        warn(D::WHAT, why);
        None
    };
    loop {
        let m = JsFuture::from(next(TICK_MS))
            .await
            .map_err(|e| warn(&super::reader::js_err(e)))?;
        if ctx.cancel.get_untracked() {
            return Err(Some(Error::new(ErrorKind::Cancelled, 0)));
        }
        match get(&m, "kind").as_string().as_deref() {
            Some("analysis") => {
                let n = get(&m, "sections").as_f64().unwrap_or(-1.0) as i32;
                if n <= 0 {
                    return Err(warn("none"));
                }
                expected = Some(n);
                for _ in 0..n.min(AHEAD) {
                    credit();
                }
                given = n.min(AHEAD);
            }
            Some("asection") => {
                let arr: Uint8Array = get(&m, "bytes")
                    .dyn_into()
                    .map_err(|_| warn("a section that is not bytes"))?;
                buf.resize(arr.length() as usize, 0);
                arr.copy_to(&mut buf);
                decoder.push(&buf).map_err(|e| warn(&e.to_string()))?;
                got += 1;
                if Some(got) == expected {
                    return decoder.finish().map_err(|e| warn(&e.to_string()));
                }
                if now_ms() - last_yield >= BUDGET_MS {
                    yield_now().await;
                    last_yield = now_ms();
                }
                if Some(given) < expected {
                    credit();
                    given += 1;
                }
            }
            Some("error") => {
                let msg = get(&m, "message").as_string().unwrap_or_default();
                // Out of memory in the worker: the page, which holds the model too, would run
                // out computing it (and take the session with it), so this ends the load.
                if get(&m, "oom").is_truthy() {
                    return Err(Some(Error::whole_file(ErrorKind::Limit(msg))));
                }
                return Err(warn(&msg));
            }
            _ => {}
        }
    }
}
