//! What the page shows of a load, decided from the core's typed error ([`tracelight_core::Error`])
//! rather than from its text: a cancel shows nothing (the user asked for it), a truncation is a
//! warning (what parsed is kept where the format allows), anything else (a refusal, malformed
//! input, a limit, gzip, a read failure) is an error. Parse warnings of files no view lists
//! (CUDA snapshots) become warnings here too.

use super::{Content, LoadedFile};
use tracelight_core::{Error, ErrorKind};

/// One line of the banner under the open bar.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    Warning(String),
    Error(String),
    /// A file of a folder (or of a pick of several) that is no profiler output, with the reason,
    /// as `tracelight summary DIR` lists it under "Skipped": said in grey, never as an error.
    Skipped(String, String),
}

impl Notice {
    /// What to show of a failed load; `None` for a cancel.
    pub fn of_error(e: &Error) -> Option<Notice> {
        match e.kind {
            ErrorKind::Cancelled => None,
            ErrorKind::Truncated => Some(Notice::Warning(e.to_string())),
            _ => Some(Notice::Error(e.to_string())),
        }
    }

    /// A failed load among several files: a file no reader recognises is skipped (a run folder's
    /// `reference.json`, a results table), anything else as [`Notice::of_error`]. One file alone
    /// that is not ours is still an error: it was all the user asked for.
    pub fn of_error_among_many(e: &Error) -> Option<Notice> {
        match &e.kind {
            ErrorKind::Incompatible(why) => Some(Notice::Skipped(
                e.file.clone().unwrap_or_default(),
                why.clone(),
            )),
            _ => Notice::of_error(e),
        }
    }

    /// The warnings of a loaded file that its views do not show: a snapshot's parse warnings
    /// (a trace's are listed in the Overview's facts panel).
    pub fn of_file(f: &LoadedFile) -> Vec<Notice> {
        match &f.content {
            Content::Snapshot(s) => s
                .warnings
                .lines()
                .into_iter()
                .map(|w| Notice::Warning(format!("{}: {w}", f.name)))
                .collect(),
            Content::ExecTrace(e) => {
                e.et.warnings
                    .lines()
                    .into_iter()
                    .map(|w| Notice::Warning(format!("{}: {w}", f.name)))
                    .collect()
            }
            Content::FlightRecorder(d) => d
                .warnings
                .lines()
                .into_iter()
                .map(|w| Notice::Warning(format!("{}: {w}", f.name)))
                .collect(),
            Content::Trace(_) | Content::MemoryTimeline(_) => Vec::new(),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Notice::Error(_))
    }

    pub fn is_warning(&self) -> bool {
        matches!(self, Notice::Warning(_))
    }

    pub fn is_skipped(&self) -> bool {
        matches!(self, Notice::Skipped(..))
    }

    pub fn text(&self) -> String {
        match self {
            Notice::Warning(s) | Notice::Error(s) => s.clone(),
            // In the run layout's words, as `tracelight summary DIR` lists it.
            Notice::Skipped(f, why) => {
                format!("{f}: {}", tracelight_core::run::layout::skip_reason(f, why))
            }
        }
    }
}
