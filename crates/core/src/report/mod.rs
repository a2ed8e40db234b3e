//! Text and JSON renderings of what was loaded, shared by the CLI and the page.

pub mod facts;
pub mod memory;
