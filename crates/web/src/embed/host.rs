//! The page as an embedded viewer: listens for the host's messages (Perfetto's protocol plus our
//! commands), acts on the ones from a trusted sender and posts events back to that sender.
//!
//! Privacy: events describe only a session the host itself opened (a posted trace, or `?url=`);
//! a file the user drops or picks inside the frame is never reported to the embedding page.

use super::decode::{decode, is_ignored, Kind, Message, Open, Payload};
use super::events::{post_loaded, post_to, report, reporting, send};
use super::protocol::{window_ns, Origins, Reject};
pub use super::state::Hooks;
use super::state::State;
use crate::load::Posted;
use crate::platform::url::query_param;
use crate::session::reveal::named_slices;
use crate::session::{Nav, Tab, TimeWindow};
use leptos::prelude::*;
use wasm_bindgen::JsValue;

/// The handle `App` keeps: it tells the embedding when the user opens something themselves.
#[derive(Clone, Copy)]
pub struct Embed {
    state: StoredValue<State, LocalStorage>,
}

impl Embed {
    /// The user opened a file or the demo: from now on nothing is reported to the host.
    pub fn user_opened(&self) {
        self.state.update_value(|s| {
            s.reporting = false;
            s.loading = false;
            s.queued.clear();
        });
    }
}

/// Counts and publishes (as `data-embed-*` on the root element, for tests and curious hosts).
fn count(state: StoredValue<State, LocalStorage>, r: Option<Reject>) {
    state.update_value(|s| match r {
        Some(r) => *s.ignored.entry(r).or_default() += 1,
        None => s.accepted += 1,
    });
    let (acc, ign) = state.with_value(|s| (s.accepted, s.ignored.values().sum::<u64>()));
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("data-embed-accepted", &acc.to_string());
        let _ = root.set_attribute("data-embed-ignored", &ign.to_string());
    }
}

/// Whether `src` is the window embedding this page or the one that opened it.
fn parent_or_opener(src: &JsValue) -> bool {
    let Some(w) = web_sys::window() else {
        return false;
    };
    let me = JsValue::from(w.clone());
    let parent = w.parent().ok().flatten().map(JsValue::from);
    let opener = w
        .opener()
        .ok()
        .filter(|o| !o.is_null() && !o.is_undefined());
    (parent.is_some_and(|p| p != me && &p == src)) || opener.is_some_and(|o| &o == src)
}

/// Installs the listener and the event reporters. Call once, from `App`.
pub fn serve(h: Hooks) -> Embed {
    let state = StoredValue::new_local(State {
        // The embedder chose `?url=`: that session is the host's to hear about.
        reporting: query_param("url").is_some(),
        urls: [query_param("url"), None],
        ..State::default()
    });
    let origins = Origins::parse(query_param("origins").as_deref());
    let nav = use_context::<Nav>();
    let window = use_context::<TimeWindow>();

    let handle = window_event_listener(leptos::ev::message, move |ev: web_sys::MessageEvent| {
        let data = ev.data();
        if is_ignored(&data) {
            return;
        }
        let src: JsValue = ev.source().map(JsValue::from).unwrap_or(JsValue::NULL);
        let origin = ev.origin();
        if src.is_null() || !origins.allows(&origin, parent_or_opener(&src)) {
            count(state, Some(Reject::Untrusted));
            return;
        }
        let msg = match decode(&data) {
            Ok(m) => m,
            Err(r) => {
                count(state, Some(r));
                return;
            }
        };
        let first = state.with_value(|s| s.host.is_none());
        state.update_value(|s| s.host = Some((src.clone(), origin.clone())));
        if let Message::Ping = msg {
            // Answered only once the app runs (this listener is installed by it).
            post_to(&src, &origin, &JsValue::from_str("PONG"));
            count(state, None);
            // A `?url=` session may have loaded before the host's first message.
            if first && reporting(state) && !state.with_value(|s| s.loading) {
                if let Some(s) = h.session.get_untracked() {
                    post_loaded(state, &s, "session");
                }
            }
            return;
        }
        act(state, h, nav, window, msg);
    });
    on_cleanup(move || handle.remove());
    report(state, h, nav, window, act);
    Embed { state }
}

/// Acts on one accepted message (or queues it while a posted trace loads).
pub(super) fn act(
    state: StoredValue<State, LocalStorage>,
    h: Hooks,
    nav: Option<Nav>,
    window: Option<TimeWindow>,
    msg: Message,
) {
    let outcome = match msg {
        Message::Ping => Ok(()),
        Message::Open(o) => {
            if state.with_value(|s| s.closed) {
                Err(Reject::ApiClosed)
            } else {
                state.update_value(|s| {
                    s.urls[0] = o.url.clone();
                    s.closed = !o.keep_api_open;
                    s.reporting = true;
                    s.loading = true;
                    s.queued.clear();
                });
                open(h, o, false)
            }
        }
        Message::Compare(o) => {
            state.update_value(|s| s.urls[1] = o.url.clone());
            open(h, o, true)
        }
        Message::Stats => {
            let ignored: serde_json::Map<String, serde_json::Value> = state.with_value(|s| {
                Reject::ALL
                    .iter()
                    .map(|r| {
                        (
                            r.key().to_owned(),
                            s.ignored.get(r).copied().unwrap_or(0).into(),
                        )
                    })
                    .collect()
            });
            let accepted = state.with_value(|s| s.accepted);
            count(state, None);
            send(
                state,
                "stats",
                serde_json::json!({"accepted": accepted, "ignored": ignored}),
            );
            return;
        }
        m if state.with_value(|s| s.loading) => {
            state.update_value(|s| s.queued.push(m));
            Ok(())
        }
        Message::Window(a, b, pct) => {
            let visible = window.map_or((0, 1), |w| w.0.get_untracked());
            window_ns(a, b, pct, visible).and_then(|w| {
                let nav = nav.ok_or(Reject::NotFound)?;
                h.session
                    .with_untracked(|s| s.is_some())
                    .then_some(())
                    .ok_or(Reject::NotFound)?;
                nav.goto.set(Some(w));
                if nav.tab.get_untracked() != Tab::Timeline {
                    nav.tab.set(Tab::Timeline);
                }
                Ok(())
            })
        }
        Message::OpenTab(slug) => {
            let tab = Tab::from_slug(&slug);
            let ok = h
                .session
                .with_untracked(|s| s.as_ref().map(|s| s.available_tabs()))
                .zip(tab)
                .filter(|(tabs, t)| tabs.contains(t));
            match (ok, nav) {
                (Some((_, t)), Some(nav)) => {
                    if nav.tab.get_untracked() != t {
                        nav.tab.set(t);
                    }
                    Ok(())
                }
                _ => {
                    send(
                        state,
                        "error",
                        serde_json::json!({"message": format!("no tab {slug:?} in this session")}),
                    );
                    Err(Reject::NotFound)
                }
            }
        }
        Message::Reveal(kind, name, n) => reveal(h, nav, kind, &name, n).map_err(|message| {
            send(state, "error", serde_json::json!({ "message": message }));
            Reject::NotFound
        }),
    };
    count(state, outcome.err());
}

/// Starts loading a posted trace through `App`.
fn open(h: Hooks, o: Open, compare: bool) -> Result<(), Reject> {
    let posted = match o.payload {
        Payload::Buffer(b) => {
            let parts = js_sys::Array::of1(&b);
            let f = web_sys::File::new_with_buffer_source_sequence(&parts, &o.name)
                .map_err(|_| Reject::BadField)?;
            Posted::Bytes(f)
        }
        Payload::Stream(stream, total) => Posted::Stream {
            stream,
            total,
            name: o.name,
        },
    };
    h.open.run((posted, compare));
    Ok(())
}

/// Shows the `n`-th occurrence (time order) of op or kernel `name` of the current trace file.
fn reveal(h: Hooks, nav: Option<Nav>, kind: Kind, name: &str, n: usize) -> Result<(), String> {
    let nav = nav.ok_or("no navigation")?;
    let s = h.session.get_untracked().ok_or("no trace is open")?;
    let file = nav.file.get_untracked();
    let tf = s.trace(file).ok_or("no trace is open")?;
    let slices = named_slices(tf, kind, name);
    if n >= slices.len() {
        return Err(format!(
            "{name:?} has {} occurrences; occurrence {} asked",
            slices.len(),
            n + 1
        ));
    }
    nav.reveal_nth(file, slices, name.to_owned(), n);
    Ok(())
}
