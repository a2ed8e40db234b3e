//! The shared text fitting ([`crate::widgets::text`]), as the painters here name it.

pub use crate::widgets::text::{TextCache, FONT};
