//! The flame graph tab: the op tree's call stacks merged by name, speedscope's "left heavy" view
//! (core's `view::flame` builds it), for the whole trace, one step or the timeline's area
//! selection; a frame's occurrences open in the timeline.

pub mod bar;
pub mod info;
pub mod paint;
pub mod view;
