//! The browser, wrapped: clocks and yielding, the URL (query and hash), canvases sized for the
//! device pixel ratio, element resizes, animation frames, drops and folder walks, downloads and
//! the clipboard, data inlined by the single-file build. Imports nothing of this crate (`tests/arch/imports.test.mjs` checks), so every
//! other folder may use it.

pub mod canvas;
pub mod clock;
pub mod drop;
pub mod export;
pub mod frame;
pub mod hash;
pub mod inline;
pub mod reread;
pub mod resize;
pub mod served;
pub mod url;
