//! Embedding (issue 15): the page inside another page's iframe (or a window it opened), driven by
//! `postMessage` the way Perfetto's UI is — `PING`/`PONG`, `{perfetto: {buffer | stream, …}}`,
//! `{perfetto: {timeStart, timeEnd, viewPercentage}}`, `perfettoIgnore` — plus our commands
//! (`open-tab`, `reveal`, `compare`, `stats`) and events back to the host (`progress`, `loaded`,
//! `error`, `selection`, `window`). README § Embedding documents the protocol.
//!
//! [`protocol`] holds the rules as pure functions, [`decode`] reads a message into a typed one,
//! [`host`] listens, checks the sender and acts; `events` reports back. `app.rs` lends it the session's signals and
//! its way of opening a trace ([`host::Hooks`]).

pub mod decode;
mod events;
pub mod host;
pub mod protocol;
mod state;

pub use host::{serve, Embed, Hooks};

/// Embed mode ([`protocol::embed_mode`]) for this page's URL: the compact layout for an iframe.
/// A page that is an `<iframe srcdoc>` (`about:srcdoc`: the single-file build inside a notebook
/// cell, `tracelight.show()`) has no query or hash to say so, and is always a host's frame.
pub fn embedded() -> bool {
    let Some(loc) = web_sys::window().map(|w| w.location()) else {
        return false;
    };
    if loc.href().is_ok_and(|h| h == "about:srcdoc") {
        return true;
    }
    protocol::embed_mode(
        &loc.search().unwrap_or_default(),
        &loc.hash().unwrap_or_default(),
    )
}
