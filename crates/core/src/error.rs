//! The crate's one error type.
//!
//! Every failure to read input becomes an [`Error`] carrying the file it came from (attached once, by
//! the loader), the byte offset into the *decoded* stream where it was noticed, and a
//! `#[non_exhaustive]` [`ErrorKind`]. Truncation is its own kind so that callers can keep what parsed.

use std::fmt;

/// What went wrong, without the where.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The bytes are not any format this reader understands (content sniffing said no).
    Incompatible(String),
    /// The input ended in the middle of a value.
    Truncated,
    /// Malformed input: what was expected.
    Syntax(String),
    /// Well-formed input that we refuse to interpret (e.g. a pickle opcode that would run code).
    Refused(String),
    /// A limit that protects the tab from hostile input was hit.
    Limit(String),
    /// The gzip layer failed.
    Compression(String),
    /// The load was cancelled by the user.
    Cancelled,
    /// Reading the file failed.
    Io(String),
}

/// The offset of an [`Error::whole_file`] error.
pub const WHOLE_FILE: u64 = u64::MAX;

/// A read failure: which file, where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub file: Option<String>,
    pub offset: u64,
    pub kind: ErrorKind,
}

impl Error {
    pub fn new(kind: ErrorKind, offset: u64) -> Self {
        Error {
            file: None,
            offset,
            kind,
        }
    }

    /// An error about the file as a whole (too big for a tab, a worker out of memory), where a
    /// byte offset would mislead: its message has none.
    pub fn whole_file(kind: ErrorKind) -> Self {
        Error::new(kind, WHOLE_FILE)
    }

    /// Names the file, once, at the adapter boundary.
    #[must_use]
    pub fn in_file(mut self, file: &str) -> Self {
        if self.file.is_none() {
            self.file = Some(file.to_owned());
        }
        self
    }

    pub fn is_truncated(&self) -> bool {
        matches!(self.kind, ErrorKind::Truncated)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Incompatible(s) => write!(f, "not a supported profiler file: {s}"),
            ErrorKind::Truncated => write!(f, "the file ends in the middle of a value (truncated)"),
            ErrorKind::Syntax(s) => write!(f, "malformed input: {s}"),
            ErrorKind::Refused(s) => write!(f, "refused: {s}"),
            ErrorKind::Limit(s) => write!(f, "limit exceeded: {s}"),
            ErrorKind::Compression(s) => write!(f, "gzip: {s}"),
            ErrorKind::Cancelled => write!(f, "cancelled"),
            ErrorKind::Io(s) => write!(f, "read error: {s}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.as_deref().unwrap_or("input");
        match self.kind {
            ErrorKind::Cancelled | ErrorKind::Io(_) | ErrorKind::Incompatible(_) => {
                write!(f, "{file}: {}", self.kind)
            }
            _ if self.offset == WHOLE_FILE => write!(f, "{file}: {}", self.kind),
            _ => write!(f, "{file}: {} (at byte {})", self.kind, self.offset),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
