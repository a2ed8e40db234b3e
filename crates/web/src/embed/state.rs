//! What the embedding holds: the app's signals lent to it ([`Hooks`]) and its own state for the
//! page's life ([`State`]). Apart from `host` (which acts on messages) and `events` (which reports
//! to the host), so that each of those imports this and neither imports the other.

use super::decode::Message;
use super::protocol::Reject;
use crate::load::Posted;
use crate::session::{Notice, Progress, SessionRef};
use leptos::prelude::*;
use std::collections::BTreeMap;
use wasm_bindgen::JsValue;

/// What the app lends the embedding: its signals and how to open a trace (as the session, or as
/// B of Compare with `true`).
#[derive(Clone, Copy)]
pub struct Hooks {
    pub session: RwSignal<Option<SessionRef>>,
    pub compare: RwSignal<Option<SessionRef>>,
    pub notices: RwSignal<Vec<Notice>>,
    pub progress: RwSignal<Option<Progress>>,
    pub open: Callback<(Posted, bool)>,
}

/// The embedding's state, kept for the page's life.
#[derive(Default)]
pub(super) struct State {
    /// The window that last sent an accepted message, and its origin (events go there).
    pub(super) host: Option<(JsValue, String)>,
    /// Whether the open session came from the host (then it is described to it).
    pub(super) reporting: bool,
    /// A posted trace is loading: commands wait for it.
    pub(super) loading: bool,
    pub(super) queued: Vec<Message>,
    /// A trace came without `keepApiOpen`: later traces are refused (Perfetto's rule).
    pub(super) closed: bool,
    /// The `url` the host gave with the session's trace and with B (reported, never fetched).
    pub(super) urls: [Option<String>; 2],
    pub(super) accepted: u64,
    pub(super) ignored: BTreeMap<Reject, u64>,
}
