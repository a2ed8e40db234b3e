//! DOM views: the open bar, the progress line, the facts and the track list.

pub mod facts;
pub mod open;
