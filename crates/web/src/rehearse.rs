//! The first render of a loaded snapshot and of a trace, rehearsed offscreen while the user
//! picks a file.
//!
//! V8 compiles a wasm function the first time it is called (lazy compilation, in its baseline
//! tier). The code that shows a loaded file (the session bar, the tabs, the Memory tab's chart,
//! tables and segment map) first runs when the user's own file is ready, so that render used to
//! compile ~700 functions on the page's thread: 22 ms of the 50 MB bench snapshot's drop → chart,
//! where the chart waited on nothing else (devtools trace, `wasm.CompileLazy` events). Rendering a
//! small generated snapshot once, offscreen, compiles them ahead; the load then runs code
//! that is already there.
//!
//! A trace's first screen is the same case: the preview's Overview and then the whole trace's
//! were tasks of 50-58 ms on a 1 GB trace in 2 of 3 loads, with ~45 ms of lazy compilation
//! between the pick and the Overview (the page's decoders of the worker's model and analysis
//! sections, the timeline's index, the Overview's cards).
//!
//! The rehearsal is mounted in a hidden, inert element outside the window and taken down after
//! a few frames, or at the first frame after a load starts.

use crate::memory::chart::ChartCanvas;
use crate::platform::clock::{after_paint, yield_now};
use crate::session::derived::TimelineData;
use crate::session::memory::{chart, sources_of};
use crate::session::{Content, LoadedFile, Session, SnapshotFile};
use crate::session::{SessionRef, TraceFile};
use crate::views::scope::ScopePicker;
use crate::views::session_bar::{SessionBar, TabBar};
use crate::widgets::later::Later;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::wire as trace_wire;
use tracelight_core::report::analysis::Analysis;
use tracelight_core::report::analysis_wire;
use tracelight_core::report::snapshot_wire::SnapshotViews;
use wasm_bindgen::JsCast;

/// Frames the Memory tab stays mounted: its tables, flame graph and segment map come a task each
/// after the chart (`widgets::later`).
const FRAMES: usize = 6;

/// Renders the warm-up snapshot's session bar, tabs and Memory tab offscreen, then removes them.
/// Does nothing once a load has started.
///
/// In pieces, a task each: the first run of this code is slow (compiled then, and run in V8's
/// baseline tier), and the whole Memory tab mounted at once, with its chart's first paint, was
/// one task of 50-70 ms in 3 of 8 page loads. The chart alone first, then the tab around it,
/// left none over 50 ms in 8.
pub async fn memory_tab() {
    if crate::load::stopped() {
        return;
    }
    // One hidden host at a time: the bigger chart's, then the small snapshot's.
    chart_alone_big().await;
    if crate::load::stopped() {
        return;
    }
    let Some(stage) = snapshot_stage(crate::load::rehearsal_snapshot()).await else {
        return;
    };
    let (session, host) = (stage.session.clone(), stage.host.clone());
    chart_alone(&session, &host, 1).await;
    if !crate::load::stopped() {
        let tab = leptos::mount::mount_to(host.clone().unchecked_into(), move || {
            // The app's own tab body (`tab_body`), so the function compiled here is the one a
            // loaded snapshot's first render calls.
            view! { <div class="tab-body">{crate::tab_body::memory(session)}</div> }
        });
        frames(FRAMES).await;
        drop(tab);
    }
    drop(stage);
}

/// Mounts the chart of `session`'s snapshot alone in `host`, `paints` times (a frame each),
/// then unmounts it.
async fn chart_alone(session: &SessionRef, host: &web_sys::Element, paints: usize) {
    let source = sources_of(session, 0).into_iter().next();
    let Some((source, c)) = source.and_then(|src| chart(session, &src).map(|c| (src, c))) else {
        return;
    };
    for _ in 0..paints {
        if crate::load::stopped() {
            return;
        }
        let (s, source, c) = (session.clone(), source.clone(), c.clone());
        let alone = leptos::mount::mount_to(host.clone().unchecked_into(), move || {
            view! { <ChartCanvas session=s source=source chart=c /> }
        });
        after_paint().await;
        drop(alone);
    }
}

/// Paints of the bigger warm-up snapshot's chart. V8 moves a function to its optimizing tier
/// once it has run a while, compiling it on another thread: the 30-entry chart left the chart's
/// geometry and paint (`step_columns`, the paint effect, `trace_poly`) in the baseline tier, and
/// their optimizing compiles (~25 ms) ran beside the 50 MB bench snapshot's first chart, on two
/// cores (`--js-flags=--trace-wasm-compilation-times`).
const BIG_CHART_PAINTS: usize = 3;

/// The chart of the reader's bigger warm-up snapshot (3,000 entries) painted alone, offscreen.
async fn chart_alone_big() {
    if crate::load::stopped() {
        return;
    }
    let Some(stage) = snapshot_stage(crate::load::warm_up_snapshot()).await else {
        return;
    };
    let (session, host) = (stage.session.clone(), stage.host.clone());
    chart_alone(&session, &host, BIG_CHART_PAINTS).await;
}

/// Warm-up snapshot `bytes` read, with its views, as a session of its own (a task for the read,
/// one for the stage); `None` once a load has started.
async fn snapshot_stage(bytes: &'static [u8]) -> Option<Stage> {
    let Ok(Loaded::Snapshot(snap)) = load_bytes("warm-up", bytes) else {
        return None;
    };
    let views = SnapshotViews::of(&snap);
    yield_now().await;
    if crate::load::stopped() {
        return None;
    }
    let content = Content::Snapshot(SnapshotFile::new(*snap, Some(views)));
    let stage = Stage::new(bytes.len(), false, content)?;
    yield_now().await;
    Some(stage)
}

/// Frames a trace's Overview stays mounted: a big trace's cards come a task each, the last
/// five tasks after the first render (`views::overview`), and the rehearsal is such a trace.
const OVERVIEW_FRAMES: usize = 8;

/// Renders the warm-up trace's Overview offscreen the way a big trace's first screen is
/// rendered (its model and analysis decoded from a worker's sections, its timeline indexed, the
/// cards a task each), then removes it. Does nothing once a load has started.
///
/// Each step in a task of its own, as in [`memory_tab`]. The analysis is computed here (the
/// worker computes a real trace's): on one step of the demo's model, a few ms.
pub async fn overview() {
    if crate::load::stopped() {
        return;
    }
    let bytes = crate::load::rehearsal_trace();
    let Ok(Loaded::Trace(trace)) = load_bytes("warm-up", bytes) else {
        return;
    };
    // A worker's model arrives as sections, decoded on this thread.
    let mut model = trace_wire::Decoder::default();
    let mut k = 0;
    while let Some(section) = trace_wire::section(&trace, k) {
        if model.push(&section).is_err() {
            return;
        }
        k += 1;
    }
    drop(trace);
    let Ok(trace) = model.finish() else { return };
    yield_now().await;
    if crate::load::stopped() {
        return;
    }
    let analysis = Analysis::of("warm-up", &trace);
    yield_now().await;
    if crate::load::stopped() {
        return;
    }
    // And its analysis as sections too.
    let mut back = analysis_wire::Decoder::default();
    for section in analysis_wire::sections(&analysis).unwrap_or_default() {
        if back.push(&section).is_err() {
            return;
        }
    }
    drop(analysis);
    let Ok(analysis) = back.finish() else { return };
    let tf = TraceFile::new("warm-up", trace);
    tf.set_timeline(TimelineData::build_yielding(&tf.trace).await);
    tf.set_analysis(analysis);
    if crate::load::stopped() {
        return;
    }
    // A preview: big, so its cards come a task each, as a big trace's do.
    let Some(stage) = Stage::new(bytes.len(), true, Content::Trace(Box::new(tf))) else {
        return;
    };
    let (session, host) = (stage.session.clone(), stage.host.clone());
    yield_now().await;
    if !crate::load::stopped() {
        let s = session.clone();
        let tab = leptos::mount::mount_to(host.clone().unchecked_into(), move || {
            view! {
                <div class="tab-body">
                    <Later after=1><ScopePicker session=s.clone() file=0 /></Later>
                    {crate::tab_body::overview(session, 0)}
                </div>
            }
        });
        frames(OVERVIEW_FRAMES).await;
        drop(tab);
    }
    drop(stage);
}

/// A warm-up file as a session of its own, its session bar and tabs mounted in a new hidden
/// host; dropping it unmounts them and removes the host.
struct Stage {
    session: SessionRef,
    host: web_sys::Element,
    bar: Option<Box<dyn std::any::Any>>,
}

impl Stage {
    /// `preview`: shown as a big trace's head is (its cards a task each).
    fn new(bytes: usize, preview: bool, content: Content) -> Option<Stage> {
        let session = Arc::new(Session {
            files: vec![LoadedFile {
                name: "warm-up".into(),
                bytes: bytes as u64,
                decoded_bytes: bytes as u64,
                load_ms: 0.0,
                parse_ms: 0.0,
                first_bytes_ms: 0.0,
                model_ms: 0.0,
                workers: u32::from(preview),
                preview,
                content,
            }],
        });
        let host = hidden_host()?;
        let (s, tabs) = (session.clone(), session.available_tabs());
        let bar = leptos::mount::mount_to(host.clone().unchecked_into(), move || {
            view! {
                <SessionBar session=s />
                <TabBar available=tabs />
            }
        });
        Some(Stage {
            session,
            host,
            bar: Some(Box::new(bar)),
        })
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        drop(self.bar.take());
        self.host.remove();
    }
}

/// Waits `n` frames, or until a load starts.
async fn frames(n: usize) {
    for _ in 0..n {
        after_paint().await;
        if crate::load::stopped() {
            break;
        }
    }
}

/// An element laid out at the window's size but outside it, invisible, inert and hidden from
/// assistive technology, appended to the body.
fn hidden_host() -> Option<web_sys::Element> {
    let doc = web_sys::window()?.document()?;
    let host = doc.create_element("div").ok()?;
    let style = "position:fixed;left:-30000px;top:0;width:1280px;height:900px;\
                 visibility:hidden;pointer-events:none;overflow:hidden";
    host.set_attribute("style", style).ok()?;
    host.set_attribute("aria-hidden", "true").ok()?;
    host.set_attribute("inert", "").ok()?;
    host.set_attribute("data-rehearsal", "").ok()?;
    doc.body()?.append_child(&host).ok()?;
    Some(host)
}
