//! Events to the host (`{tracelight: {event, …}}`): `progress`, `loaded`, `error`, `selection`,
//! `window`, sent to the window that last sent an accepted message, and only while the open session
//! is the host's (see `super::host`).

use super::decode::Message;
use super::state::{Hooks, State};
use crate::session::{Nav, SessionRef, TimeWindow};
use js_sys::{Function, Reflect};
use leptos::prelude::*;
use std::time::Duration;
use tracelight_core::report::json::analyze_json;
use wasm_bindgen::{JsCast, JsValue};

/// Posts `msg` to `win` (a possibly cross-origin WindowProxy) for `origin` (`"*"` when the sender
/// is an opaque origin such as `file://`, which no target origin can name).
pub(super) fn post_to(win: &JsValue, origin: &str, msg: &JsValue) {
    let target = if origin.is_empty() || origin == "null" {
        "*"
    } else {
        origin
    };
    if let Ok(f) = Reflect::get(win, &JsValue::from_str("postMessage")) {
        if let Some(f) = f.dyn_ref::<Function>() {
            let _ = f.call2(win, msg, &JsValue::from_str(target));
        }
    }
}

/// `{tracelight: {event, …body}}` as a JS object.
fn event(name: &str, mut body: serde_json::Value) -> JsValue {
    if let serde_json::Value::Object(o) = &mut body {
        o.insert("event".into(), name.into());
    }
    let text = serde_json::json!({ "tracelight": body }).to_string();
    js_sys::JSON::parse(&text).unwrap_or(JsValue::NULL)
}

pub(super) fn send(state: StoredValue<State, LocalStorage>, name: &str, body: serde_json::Value) {
    let host = state.with_value(|s| s.host.clone());
    if let Some((w, o)) = host {
        post_to(&w, &o, &event(name, body));
    }
}

pub(super) fn reporting(state: StoredValue<State, LocalStorage>) -> bool {
    state.with_value(|s| s.reporting && s.host.is_some())
}

/// `loaded`: the files and the `analyze --json` summary of session `s` (or B, `role` "compare").
pub(super) fn post_loaded(state: StoredValue<State, LocalStorage>, s: &SessionRef, role: &str) {
    let analyses: Vec<_> = s
        .trace_indices()
        .into_iter()
        .filter_map(|i| s.trace(i).map(|t| t.analysis().clone()))
        .collect();
    let files: Vec<_> = s
        .files
        .iter()
        .map(|f| serde_json::json!({"name": f.name, "bytes": f.bytes, "load_ms": f.load_ms}))
        .collect();
    let summary = (!analyses.is_empty()).then(|| analyze_json(&analyses));
    let url = state.with_value(|st| st.urls[usize::from(role == "compare")].clone());
    send(
        state,
        "loaded",
        serde_json::json!({"role": role, "files": files, "url": url, "summary": summary}),
    );
}

/// How the host carries out one message.
pub(super) type Act =
    fn(StoredValue<State, LocalStorage>, Hooks, Option<Nav>, Option<TimeWindow>, Message);

/// Events to the host: progress, loaded, error, selection, window.
/// `act` carries out a command that waited for the posted trace (the host's, passed in so this
/// module does not import the host's).
pub(super) fn report(
    state: StoredValue<State, LocalStorage>,
    h: Hooks,
    nav: Option<Nav>,
    window: Option<TimeWindow>,
    act: Act,
) {
    Effect::new(move |_| {
        let Some(p) = h.progress.get() else { return };
        if reporting(state) {
            send(
                state,
                "progress",
                serde_json::json!({"name": p.name, "done": p.done, "total": p.total, "phase": p.phase}),
            );
        }
    });
    Effect::new(move |_| {
        let errors: Vec<String> = h.notices.with(|n| {
            n.iter()
                .filter(|x| x.is_error())
                .map(|x| x.text().to_owned())
                .collect()
        });
        if errors.is_empty() || !reporting(state) {
            return;
        }
        state.update_value(|s| {
            s.loading = false;
            s.queued.clear();
        });
        send(
            state,
            "error",
            serde_json::json!({"message": errors.join("\n")}),
        );
    });
    Effect::new(move |_| {
        let Some(s) = h.session.get() else { return };
        if !reporting(state) {
            return;
        }
        post_loaded(state, &s, "session");
        let queued = state.with_value(|st| st.loading).then(|| {
            state.update_value(|st| st.loading = false);
            state.try_update_value(|st| std::mem::take(&mut st.queued))
        });
        for m in queued.flatten().unwrap_or_default() {
            act(state, h, nav, window, m);
        }
    });
    Effect::new(move |prev: Option<bool>| {
        let has = h.compare.with(|c| c.is_some());
        if prev.is_some() && has && reporting(state) {
            if let Some(c) = h.compare.get_untracked() {
                post_loaded(state, &c, "compare");
            }
        }
        has
    });
    if let Some(nav) = nav {
        Effect::new(move |_| {
            let Some((file, i)) = nav.selected.get() else {
                return;
            };
            if !reporting(state) {
                return;
            }
            let Some(s) = h.session.get_untracked() else {
                return;
            };
            let Some(t) = s.trace(file).map(|f| &f.trace) else {
                return;
            };
            let iu = i as usize;
            if iu >= t.slices.len() {
                return;
            }
            let track = t.slices.track[iu] as usize;
            send(
                state,
                "selection",
                serde_json::json!({
                    "kind": "slice", "file": file, "slice": i,
                    "name": t.str(t.slices.name[iu]),
                    "ts_ns": t.slices.start[iu], "dur_ns": t.slices.end(iu) - t.slices.start[iu],
                    "track": t.track_label(track),
                }),
            );
        });
    }
    if let Some(w) = window {
        // Zooming changes the window every frame: the host hears the last one of each 150 ms.
        let pending = StoredValue::new(None::<TimeoutHandle>);
        Effect::new(move |_| {
            let (a, b) = w.0.get();
            if !reporting(state) || h.session.with_untracked(|s| s.is_none()) {
                return;
            }
            if let Some(Some(t)) = pending.try_get_value() {
                t.clear();
            }
            let t = set_timeout_with_handle(
                move || {
                    send(
                        state,
                        "window",
                        serde_json::json!({"start_ns": a, "end_ns": b, "start_s": a as f64 / 1e9, "end_s": b as f64 / 1e9}),
                    );
                },
                Duration::from_millis(150),
            )
            .ok();
            pending.try_set_value(t);
        });
    }
}
