//! Leptos client-side app over `tracelight-core`: loading (file, drop, `?url=`), state, DOM views
//! and canvas painters. Parsing runs on the main thread in fixed slices that yield to the browser
//! between them, so progress paints and Cancel works (DESIGN §2's accepted alternative to a worker).

pub mod app;
pub mod drop;
pub mod load;
pub mod memory;
pub mod resize;
pub mod state;
pub mod timeline;
pub mod views;
