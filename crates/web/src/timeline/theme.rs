//! The timeline's theme: the shared canvas colours ([`crate::widgets::theme`]) and the palette
//! ([`crate::widgets::palette`]): kernels by their category under the session's rules
//! ([`tracelight_core::view::slice_colors`]).

pub use crate::widgets::palette::{kind_color, SliceCat};
pub use crate::widgets::theme::{set_dark, Theme};
