//! Reads and writes the deep link in the URL hash (`tracelight_core::view::link`). Writes use
//! `history.replaceState`, debounced, so zooming neither floods the history nor trips the browser's
//! navigation throttle.

use leptos::prelude::*;
use std::time::Duration;
use tracelight_core::view::link::DeepLink;

pub fn read() -> DeepLink {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    DeepLink::parse(&hash)
}

/// Replaces the hash now with `f` applied to the current link.
pub fn update(f: impl FnOnce(&mut DeepLink)) {
    let mut d = read();
    f(&mut d);
    let text = d.encode();
    let Some(w) = web_sys::window() else { return };
    if w.location().hash().ok().as_deref() == Some(text.as_str()) {
        return;
    }
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&text));
    }
}

/// Debounced [`update`]: only the last call within 250 ms is applied, and none after the view
/// that owns it is gone: a timeline closed by a tab switch must not write its file back over the
/// link of the file the user went to.
#[derive(Clone, Copy)]
pub struct Debounced {
    handle: StoredValue<Option<TimeoutHandle>>,
}

impl Debounced {
    pub fn new() -> Debounced {
        let handle = StoredValue::new(None::<TimeoutHandle>);
        on_cleanup(move || {
            if let Some(Some(h)) = handle.try_get_value() {
                h.clear();
            }
        });
        Debounced { handle }
    }

    pub fn update(&self, f: impl FnOnce(&mut DeepLink) + 'static) {
        if let Some(Some(h)) = self.handle.try_get_value() {
            h.clear();
        }
        let handle = self.handle;
        let h = set_timeout_with_handle(
            move || {
                // A disposed owner's value reads as `None`.
                if handle.try_get_value().is_some() {
                    update(f)
                }
            },
            Duration::from_millis(250),
        )
        .ok();
        self.handle.try_set_value(h);
    }
}

impl Default for Debounced {
    fn default() -> Self {
        Self::new()
    }
}
