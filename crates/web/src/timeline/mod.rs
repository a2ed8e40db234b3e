//! The timeline: a viewport over trace time, a layout of track rows, and a canvas painter.

pub mod layout;
pub mod paint;
pub mod view;
pub mod viewport;
