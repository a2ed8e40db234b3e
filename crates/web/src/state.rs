//! What the app holds: the loaded session and the load in flight.

use std::sync::Arc;
use tracelight_core::model::Trace;
use tracelight_core::report::facts::Facts;

/// One opened file.
pub struct Session {
    pub name: String,
    pub trace: Trace,
    pub facts: Facts,
    pub bytes: u64,
    pub load_ms: f64,
}

pub type SessionRef = Arc<Session>;

/// Progress of the load in flight, measured in raw bytes read.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub name: String,
    pub done: u64,
    pub total: Option<u64>,
    pub mb_per_s: f64,
    pub phase: &'static str,
}

impl Progress {
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .filter(|&t| t > 0)
            .map(|t| (self.done as f64 / t as f64).min(1.0))
    }
}
