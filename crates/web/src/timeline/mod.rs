//! The timeline: Perfetto-style navigation over a canvas. Pure logic (viewport, level-of-detail,
//! layout, hit testing, search, aggregation, deep links) lives in `tracelight_core::view`; these
//! modules adapt it to the browser: data cache, theme, painters, input, panels and wiring.

pub mod area;
pub mod details;
pub mod et_details;
pub mod input;
pub mod layout;
pub mod link;
pub mod paint;
pub mod pair;
pub mod provenance;
pub mod reveal;
pub mod search;
pub mod side;
pub mod theme;
pub mod tlstate;
pub mod view;
pub mod viewport;
