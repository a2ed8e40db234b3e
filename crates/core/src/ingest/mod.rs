//! Readers, one module per format, behind one push-based [`Loader`] that inflates gzip on the fly and
//! sniffs the format from content.

pub mod budget;
pub mod chakra;
pub mod flight_recorder;
pub mod gzip;
pub(crate) mod json;
pub mod kineto;
pub mod memory_timeline;
pub mod pickle;
pub mod ranks;
pub mod snapshot;
pub mod sniff;
pub(crate) mod stops;

use crate::error::{Error, ErrorKind, Result};
use crate::model::exec_trace::ExecTrace;
use crate::model::Trace;
use crate::warnings::WarningKind;
use chakra::ChakraReader;
use gzip::{Gunzip, GzError};
use kineto::{KinetoReader, ParallelReader};
use memory_timeline::MemoryTimeline;
use snapshot::{Snapshot, SnapshotStream};
pub use sniff::Format;

/// Formats read whole (a pickle cannot be decoded in slices) stop growing their buffer here.
pub const MAX_BUFFERED_BYTES: u64 = 2 << 30;

/// The longest run of whitespace the loader accepts. No profiler writes more than a few bytes of
/// indentation in a row; a run this long is a decompression bomb (2 GiB of spaces gzip to 2 MB) or
/// padding, and reading it would only burn time: the load stops with a [`ErrorKind::Limit`] that
/// says so, after 16 MiB instead of after gigabytes.
pub const MAX_WHITESPACE_RUN: u64 = 16 << 20;

/// What a file turned out to hold.
#[derive(Debug, Clone)]
pub enum Loaded {
    Trace(Box<Trace>),
    Snapshot(Box<Snapshot>),
    MemoryTimeline(Box<MemoryTimeline>),
    /// A Chakra execution trace.
    ExecTrace(Box<ExecTrace>),
    /// One rank's Flight Recorder dump.
    FlightRecorder(Box<flight_recorder::FrDump>),
}

impl Loaded {
    pub fn format(&self) -> Format {
        match self {
            Loaded::Trace(_) => Format::Kineto,
            Loaded::Snapshot(_) => Format::Snapshot,
            Loaded::MemoryTimeline(m) => m.format,
            Loaded::ExecTrace(_) => Format::Chakra,
            Loaded::FlightRecorder(_) => Format::FlightRecorder,
        }
    }
}

enum Inner {
    Sniffing(Vec<u8>),
    Kineto(Box<KinetoReader>),
    /// Kineto read in shards on every core ([`Loader::threaded`]).
    Parallel(Box<ParallelReader>),
    Chakra(Box<ChakraReader>),
    /// A memory snapshot, decoded as it arrives in bounded memory ([`SnapshotStream`]).
    Snapshot(Box<SnapshotStream>),
    /// Memory-timeline and Flight Recorder bytes, decoded at `finish`.
    Buffered(Format, Vec<u8>),
}

/// Reads one file of any supported format from slices of raw bytes (the browser's `File.slice`, a
/// native `read`), so callers control slice size, progress and cancellation.
pub struct Loader {
    name: String,
    raw_head: Vec<u8>,
    gz: Option<Gunzip>,
    decided_gz: bool,
    inner: Inner,
    raw_bytes: u64,
    decoded_bytes: u64,
    /// A platform inflater (see [`Loader::push_inflated`]) reported the gzip stream cut short.
    inflated_truncated: bool,
    /// Read Kineto traces on this many threads ([`Loader::threaded`]); 0 or 1: on this one.
    threads: usize,
    /// Decoded bytes per shard of the threaded reader.
    shard_bytes: usize,
    /// [`Loader::size_hint`]: bytes expected, 0 when unknown.
    size_hint: u64,
    /// Whitespace bytes at the end of the decoded stream so far (see [`MAX_WHITESPACE_RUN`]).
    ws_run: u64,
}

impl Loader {
    pub fn new(name: &str) -> Self {
        Loader {
            name: name.to_owned(),
            raw_head: Vec::new(),
            gz: None,
            decided_gz: false,
            inner: Inner::Sniffing(Vec::new()),
            raw_bytes: 0,
            decoded_bytes: 0,
            inflated_truncated: false,
            threads: 0,
            shard_bytes: kineto::SHARD_BYTES,
            size_hint: 0,
            ws_run: 0,
        }
    }

    /// Reads Kineto traces on every core (native callers: the CLI, the Python package): the
    /// stream is cut into shards read in parallel and merged ([`ParallelReader`]); the model is
    /// the one-thread reader's. Where threads cannot start (wasm) it is that reader.
    pub fn threaded(self) -> Self {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.threads(n)
    }

    /// [`Loader::threaded`] with `n` reading threads (tests, benchmarks).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// [`Loader::threads`] with shards of about `bytes` (tests: many shards from a small file).
    pub fn shard_bytes(mut self, bytes: usize) -> Self {
        self.shard_bytes = bytes;
        self
    }

    /// The input's size if known (a `File`'s size, a `content-length`): a format read whole
    /// (snapshots) reserves its buffer once instead of doubling it, which in wasm means copying tens
    /// of MB and keeping the old copies' memory, since linear memory never shrinks.
    pub fn size_hint(&mut self, bytes: u64) {
        self.size_hint = bytes;
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Raw (possibly compressed) bytes pushed so far: the progress measure.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    pub fn decoded_bytes(&self) -> u64 {
        self.decoded_bytes
    }

    /// Events read so far (Kineto).
    pub fn events(&self) -> u64 {
        match &self.inner {
            Inner::Kineto(r) => r.events(),
            Inner::Parallel(r) => r.events(),
            Inner::Chakra(r) => r.nodes(),
            Inner::Sniffing(_) | Inner::Buffered(..) | Inner::Snapshot(_) => 0,
        }
    }

    pub fn push(&mut self, data: &[u8]) -> Result<()> {
        self.raw_bytes += data.len() as u64;
        let r = self.push_raw(data);
        r.map_err(|e| e.in_file(&self.name))
    }

    /// Takes bytes a platform inflater already decompressed (the browser's `DecompressionStream`,
    /// which runs off the parsing thread and beats flate2 in wasm); `raw_bytes` is how much of the
    /// compressed file they account for, for progress. Do not mix with [`Loader::push`].
    pub fn push_inflated(&mut self, data: &[u8], raw_bytes: u64) -> Result<()> {
        self.decided_gz = true;
        self.raw_bytes = self.raw_bytes.max(raw_bytes);
        let r = self.push_decoded(data);
        r.map_err(|e| e.in_file(&self.name))
    }

    /// The platform inflater stopped on bad input. A stream that merely ends early keeps what
    /// parsed, with a warning, exactly as when flate2 finds it truncated; anything else is an error
    /// at the compressed offset reached.
    pub fn inflate_failed(&mut self, truncated: bool, message: &str) -> Result<()> {
        if truncated {
            self.inflated_truncated = true;
            return Ok(());
        }
        Err(
            Error::new(ErrorKind::Compression(message.to_owned()), self.raw_bytes)
                .in_file(&self.name),
        )
    }

    fn push_raw(&mut self, data: &[u8]) -> Result<()> {
        if !self.decided_gz {
            self.raw_head.extend_from_slice(data);
            if self.raw_head.len() < 2 {
                return Ok(());
            }
            self.decided_gz = true;
            if sniff::is_gzip(&self.raw_head) {
                self.gz = Some(Gunzip::default());
            }
            let head = std::mem::take(&mut self.raw_head);
            return self.push_compressed(&head);
        }
        self.push_compressed(data)
    }

    fn push_compressed(&mut self, data: &[u8]) -> Result<()> {
        match self.gz.take() {
            Some(mut gz) => {
                let offset = self.raw_bytes;
                let r = gz.push(data, &mut |d| self.push_decoded(d));
                self.gz = Some(gz);
                match r {
                    Ok(()) => Ok(()),
                    Err(GzError::Downstream(e)) => Err(e),
                    Err(GzError::Truncated) => Err(Error::new(ErrorKind::Truncated, offset)),
                    Err(GzError::Corrupt(m)) => Err(Error::new(ErrorKind::Compression(m), offset)),
                }
            }
            None => self.push_decoded(data),
        }
    }

    fn push_decoded(&mut self, data: &[u8]) -> Result<()> {
        self.check_whitespace(data)?;
        self.decoded_bytes += data.len() as u64;
        match &mut self.inner {
            Inner::Kineto(r) => r.push(data),
            Inner::Parallel(r) => r.push(data),
            Inner::Chakra(r) => r.push(data),
            Inner::Buffered(_, buf) => push_buffered(buf, data),
            Inner::Snapshot(r) => r.push(data),
            Inner::Sniffing(head) => {
                head.extend_from_slice(data);
                if head.len() >= sniff::SNIFF_BYTES {
                    self.decide()?;
                }
                Ok(())
            }
        }
    }

    /// Tracks the run of whitespace at the end of the stream; costs a few byte tests per slice
    /// of real data (the run ends at its first and last bytes).
    fn check_whitespace(&mut self, data: &[u8]) -> Result<()> {
        let is_ws = |c: &&u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t');
        let lead = data.iter().take_while(is_ws).count() as u64;
        let run = self.ws_run + lead;
        if run > MAX_WHITESPACE_RUN {
            let from = self.decoded_bytes - self.ws_run;
            return Err(Error::new(
                ErrorKind::Limit(format!(
                    "more than {} MiB of nothing but whitespace: no profiler writes that; if this is a small .gz, it is a decompression bomb (it would \
                     inflate to gigabytes of blanks). Reading stopped",
                    MAX_WHITESPACE_RUN >> 20
                )),
                from,
            ));
        }
        self.ws_run = if lead == data.len() as u64 {
            run
        } else {
            data.iter().rev().take_while(is_ws).count() as u64
        };
        Ok(())
    }

    fn decide(&mut self) -> Result<()> {
        let Inner::Sniffing(head) = &mut self.inner else {
            return Ok(());
        };
        let head = std::mem::take(head);
        // Only the first SNIFF_BYTES decide, however large the slice that brought them.
        match sniff::sniff(&head[..head.len().min(sniff::SNIFF_BYTES)]) {
            Ok(Format::Kineto) => {
                if self.threads > 1 {
                    if let Some(mut p) = ParallelReader::start(self.threads, self.shard_bytes) {
                        p.push(&head)?;
                        self.inner = Inner::Parallel(Box::new(p));
                        return Ok(());
                    }
                }
                let mut r = Box::new(KinetoReader::new());
                r.push(&head)?;
                self.inner = Inner::Kineto(r);
                Ok(())
            }
            Ok(Format::Chakra) => {
                let mut r = Box::new(ChakraReader::new());
                r.push(&head)?;
                self.inner = Inner::Chakra(r);
                Ok(())
            }
            Ok(Format::Snapshot) => {
                let mut r = Box::new(SnapshotStream::new());
                r.expect_bytes(self.size_hint);
                r.push(&head)?;
                self.inner = Inner::Snapshot(r);
                Ok(())
            }
            Ok(
                f @ (Format::MemoryTimeline | Format::MemoryTimelineRaw | Format::FlightRecorder),
            ) => {
                // Compressed input decodes to more than the hint: then the buffer still grows. A
                // hint that cannot be reserved (a lying `content-length`) is only a missed hint.
                let mut buf = Vec::new();
                let _ = buf.try_reserve(self.size_hint.min(MAX_BUFFERED_BYTES) as usize);
                push_buffered(&mut buf, &head)?;
                self.inner = Inner::Buffered(f, buf);
                Ok(())
            }
            Err(why) => Err(Error::new(ErrorKind::Incompatible(why), 0)),
        }
    }

    /// Ends the input and returns what it held.
    pub fn finish(mut self) -> Result<Loaded> {
        let name = self.name.clone();
        self.finish_inner().map_err(|e| e.in_file(&name))
    }

    fn finish_inner(&mut self) -> Result<Loaded> {
        if !self.decided_gz {
            self.decided_gz = true;
            let head = std::mem::take(&mut self.raw_head);
            self.push_decoded(&head)?;
        }
        let mut gz_truncated = self.inflated_truncated;
        if let Some(gz) = self.gz.take() {
            let offset = self.raw_bytes;
            match gz.finish(&mut |d| self.push_decoded(d)) {
                Ok(()) => {}
                Err(GzError::Downstream(e)) => return Err(e),
                Err(GzError::Truncated) => gz_truncated = true,
                Err(GzError::Corrupt(m)) => {
                    // The sharded reader reports what it read only at its end: a syntax error in
                    // the bytes inflated before the corruption was found is what the one-thread
                    // reader would have stopped at first, so it wins (its truncation does not).
                    if let Inner::Parallel(r) =
                        std::mem::replace(&mut self.inner, Inner::Sniffing(Vec::new()))
                    {
                        if let Err(e) = r.finish() {
                            if e.kind != ErrorKind::Truncated {
                                return Err(e);
                            }
                        }
                    }
                    return Err(Error::new(ErrorKind::Compression(m), offset));
                }
            }
        }
        self.decide()?;
        let kineto = |t: Result<Trace>| -> Result<Loaded> {
            let mut t = t?;
            if gz_truncated && t.warnings.count(WarningKind::Truncated) == 0 {
                let at = self.raw_bytes;
                t.warnings.add(WarningKind::Truncated, || {
                    format!("gzip stream ends early at compressed byte {at}")
                });
            }
            Ok(Loaded::Trace(Box::new(t)))
        };
        match std::mem::replace(&mut self.inner, Inner::Sniffing(Vec::new())) {
            Inner::Kineto(r) => kineto(r.finish()),
            Inner::Parallel(r) => kineto(r.finish()),
            Inner::Chakra(r) => {
                let mut et = r.finish()?;
                if gz_truncated && et.warnings.count(WarningKind::Truncated) == 0 {
                    let at = self.raw_bytes;
                    et.warnings.add(WarningKind::Truncated, || {
                        format!("gzip stream ends early at compressed byte {at}")
                    });
                }
                Ok(Loaded::ExecTrace(Box::new(et)))
            }
            Inner::Snapshot(r) => {
                if gz_truncated {
                    return Err(Error::new(ErrorKind::Truncated, self.decoded_bytes));
                }
                Ok(Loaded::Snapshot(Box::new(r.finish()?)))
            }
            Inner::Buffered(Format::FlightRecorder, buf) => {
                if gz_truncated {
                    return Err(Error::new(ErrorKind::Truncated, buf.len() as u64));
                }
                Ok(Loaded::FlightRecorder(Box::new(flight_recorder::parse(
                    &buf,
                )?)))
            }
            Inner::Buffered(f, buf) => {
                if gz_truncated {
                    return Err(Error::new(ErrorKind::Truncated, buf.len() as u64));
                }
                let m = memory_timeline::parse(&buf, f)?;
                Ok(Loaded::MemoryTimeline(Box::new(m)))
            }
            Inner::Sniffing(_) => Err(Error::new(
                ErrorKind::Incompatible("the file is empty".into()),
                0,
            )),
        }
    }
}

fn push_buffered(buf: &mut Vec<u8>, data: &[u8]) -> Result<()> {
    if (buf.len() + data.len()) as u64 > MAX_BUFFERED_BYTES {
        return Err(Error::new(
            ErrorKind::Limit(format!(
                "snapshots, memory timelines and Flight Recorder dumps are read whole; this one exceeds {} GiB decoded",
                MAX_BUFFERED_BYTES >> 30
            )),
            buf.len() as u64,
        ));
    }
    buf.extend_from_slice(data);
    Ok(())
}

/// Loads a whole in-memory file (tests, CLI on small inputs).
pub fn load_bytes(name: &str, bytes: &[u8]) -> Result<Loaded> {
    let mut l = Loader::new(name);
    for chunk in bytes.chunks(4 << 20) {
        l.push(chunk)?;
    }
    l.finish()
}
