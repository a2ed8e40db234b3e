//! Leptos client-side app over `tracelight-core`: loading (file, drop, `?url=`), the session,
//! DOM views and canvas painters. Parsing runs on the main thread in fixed slices that yield to the
//! browser between them, so progress paints and Cancel works (the design's accepted alternative to
//! a worker).
//!
//! Layers, each importing only those before it (`tests/arch/imports.test.mjs` enforces it):
//! `platform` (the browser) → `session` (files, derived data, navigation) → `load` (reading files
//! into a session) and `widgets` (shared pieces) → features (`views`, `timeline`, `flame`,
//! `memory`, `ranks`, `compare`, `embed`), which never import each other → `app`, which composes them
//! (and `rehearse`, which renders them once offscreen before the first load, for `app`).
//! ARCHITECTURE.md at the repository root walks the whole path from a dropped byte to a pixel.

pub mod app;
pub mod compare;
pub mod embed;
pub mod flame;
pub mod load;
pub mod memory;
pub mod platform;
pub mod ranks;
pub mod rehearse;
pub mod roofline;
pub mod session;
pub mod tab_body;
pub mod timeline;
pub mod trend;
pub mod views;
pub mod widgets;
