//! Embedding (issue 15): the page inside another page's iframe, driven by `postMessage` (load
//! bytes, pick a tab, report state). Empty until that lands; it uses `session`, `load` and
//! `platform`, and `app.rs` wires it up.
