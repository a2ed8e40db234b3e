//! Kineto Chrome-trace JSON (`export_chrome_trace`, `tensorboard_trace_handler`).
//!
//! Format: the Trace Event Format
//! (<https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU>) as written by
//! libkineto (`libkineto/src/output_json.cpp`): a top-level object with `schemaVersion`,
//! `deviceProperties`, `distributedInfo`, `traceEvents`, … or, in 2020 files, a bare array of events.
//!
//! Supported: phases X, B/E, i/I, s/f/t (flows), M (process/thread metadata), C (counters);
//! `[memory]` instants; the typed args of `model::arg_keys`; old (`Operator`, `Runtime`, `Kernel`,
//! `async` flows) and new (`cpu_op`, `cuda_runtime`, `kernel`, `ac2g`) spellings; string pids/tids;
//! u64 ids; trailing commas; truncated files (everything before the cut is kept and a warning gives
//! the offset).
//!
//! The reader is push-based: [`KinetoReader::push`] takes the decoded stream in slices of any size and
//! keeps only the unfinished tail of the last event, so memory is the model plus one slice.

mod args_kept;
mod build;
mod columns;
pub mod cut;
mod display_order;
mod event;
mod finish;
mod flows;
mod incoming;
mod parallel;
mod shard;
mod shard_wire;
mod staged;
mod threaded;

use crate::error::{Error, ErrorKind, Result};
use crate::ingest::json::{Cursor, Stop};
use crate::model::Trace;
use crate::warnings::WarningKind;
use build::Builder;
pub use incoming::{IncomingShard, Merge};
pub use parallel::{ParallelReader, SHARD_BYTES};
pub use shard::{first_byte, read_in_shards, read_in_shards_with, Shard};
use threaded::Pipe;

/// One JSON value (an event, a metadata block) may not be larger than this: protects the tab from a
/// file that is one giant string.
const MAX_VALUE_BYTES: usize = 256 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    TopKeys,
    Events { bare: bool },
    Done,
}

/// What the scanner finds besides events, for the builder to record in order.
#[derive(Clone, Copy)]
enum Note {
    /// An event object that is not valid; the message says what was expected.
    Malformed(&'static str, u64),
    /// A `traceEvents` entry that is not an object.
    NotObject(u64),
    /// `traceEvents` is there but not an array.
    EventsNotArray,
}

impl Note {
    fn record(self, b: &mut Builder) {
        let w = &mut b.trace.warnings;
        match self {
            Note::Malformed(m, at) => {
                w.add(WarningKind::MalformedEvent, || format!("{m} at byte {at}"))
            }
            Note::NotObject(at) => w.add(WarningKind::MalformedEvent, || {
                format!("a traceEvents entry that is not an object at byte {at}")
            }),
            Note::EventsNotArray => w.add(WarningKind::BadMetadata, || {
                "traceEvents is not an array".into()
            }),
        }
    }
}

/// Where scanned events go: straight into the builder, or to a builder thread (native only).
// The builder is inline because every event goes through it; the reader itself is boxed by
// its owner, so its size costs nothing.
#[allow(clippy::large_enum_variant)]
enum Sink {
    Direct(Builder),
    Threaded(Pipe),
}

/// Streaming reader; see the module docs.
pub struct KinetoReader {
    buf: Vec<u8>,
    /// Offset in the decoded stream of `buf[0]`.
    base: u64,
    state: State,
    saw_trace_events: bool,
    /// `traceEvents` was there but not an array.
    events_not_array: bool,
    bare_array: bool,
    event_count: u64,
    sink: Sink,
    pairs: Vec<event::ArgPair>,
}

impl Default for KinetoReader {
    fn default() -> Self {
        Self::new()
    }
}

impl KinetoReader {
    pub fn new() -> Self {
        KinetoReader {
            buf: Vec::new(),
            base: 0,
            state: State::Start,
            saw_trace_events: false,
            events_not_array: false,
            bare_array: false,
            event_count: 0,
            sink: Sink::Direct(Builder::default()),
            pairs: Vec::new(),
        }
    }

    /// A reader that scans on the calling thread and builds the model on a second one: the two
    /// halves of the work are about equal, so a two-core machine reads nearly twice as fast. The
    /// model is identical to [`KinetoReader::new`]'s. Where threads cannot start (wasm), it is
    /// that reader.
    pub fn threaded() -> Self {
        let mut r = Self::new();
        if let Some(p) = Pipe::start() {
            r.sink = Sink::Threaded(p);
        }
        r
    }

    /// Keeps in the model only the args of a slice that an analysis reads, and where in the
    /// stream its whole args object lies (`Trace::slice_args_in_file`), for a reader whose caller
    /// can read the stream again by offset (the page's workers read a `File` or `Blob`): the rest
    /// was only ever shown, and can be most of a trace's args (Python call stacks). Every
    /// analysis gives the same answer. Only the one-thread reader ([`KinetoReader::new`],
    /// [`KinetoReader::shard`]) does this; the two-thread one keeps every arg.
    pub fn leave_args_in_file(&mut self) {
        if let Sink::Direct(b) = &mut self.sink {
            b.kept.in_file = true;
        }
    }

    /// Decoded bytes consumed so far.
    pub fn bytes_consumed(&self) -> u64 {
        self.base
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.event_count
    }

    /// Slices read so far (0 for the two-thread reader): what a merging worker reserves for,
    /// summed over every shard ([`IncomingShard::first`]).
    pub fn slices(&self) -> usize {
        match &self.sink {
            Sink::Direct(b) => b.staged.len(),
            Sink::Threaded(_) => 0,
        }
    }

    /// Feeds the next slice of the decoded stream. Events are parsed straight from `data`; only the
    /// unfinished tail (at most one event) is copied and carried to the next call.
    pub fn push(&mut self, data: &[u8]) -> Result<()> {
        if let Sink::Threaded(_) = self.sink {
            return self.push_threaded(data);
        }
        let mut pos = 0;
        if !self.buf.is_empty() {
            // Finish the event cut by the previous slice, growing the carry-over in small steps.
            loop {
                let take = (data.len() - pos).min(64 << 10);
                self.buf.extend_from_slice(&data[pos..pos + take]);
                pos += take;
                let used = self.run()?;
                if used > 0 {
                    self.base += used as u64;
                    let leftover = self.buf.len() - used;
                    if leftover <= take {
                        // The rest is a suffix of `data`: continue there without copying.
                        pos -= leftover;
                        self.buf.clear();
                        break;
                    }
                    self.buf.drain(..used);
                }
                if pos == data.len() {
                    return self.check_pending();
                }
            }
        }
        let rest = &data[pos..];
        let used = self.run_on(rest)?;
        self.base += used as u64;
        self.buf.extend_from_slice(&rest[used..]);
        self.check_pending()
    }

    /// The threaded reader owns every byte it scans (the builder thread reads them later): the
    /// slice is appended to the carried tail, scanned, and the window shipped with its events.
    /// Windows are about [`threaded::WINDOW_BYTES`], whatever the caller's slice size, so the
    /// few in flight stay small.
    fn push_threaded(&mut self, data: &[u8]) -> Result<()> {
        for piece in data.chunks(threaded::WINDOW_BYTES) {
            self.buf.extend_from_slice(piece);
            let used = self.run()?;
            self.base += used as u64;
            if let Sink::Threaded(p) = &mut self.sink {
                p.ship(&mut self.buf, used);
            }
            self.check_pending()?;
        }
        Ok(())
    }

    fn check_pending(&self) -> Result<()> {
        if self.buf.len() > MAX_VALUE_BYTES {
            return Err(Error::new(
                ErrorKind::Limit(format!(
                    "one JSON value is larger than {} MiB",
                    MAX_VALUE_BYTES >> 20
                )),
                self.base,
            ));
        }
        Ok(())
    }

    /// Ends the stream and builds the model. A stream cut inside `traceEvents` keeps what parsed and
    /// records a `Truncated` warning; a stream with no events at all is an error.
    pub fn finish(mut self) -> Result<Trace> {
        let end = self.base + self.buf.len() as u64;
        // A final number touching the end of the stream is complete now.
        self.buf.push(b' ');
        let used = self.run()?;
        self.base += used as u64;
        let at = self.base.min(end);
        let leftover = end - at;
        let truncated = match self.state {
            State::Done => false,
            State::Start => {
                return Err(Error::new(
                    ErrorKind::Incompatible("the file is empty".into()),
                    0,
                ));
            }
            State::TopKeys | State::Events { .. } => {
                if !self.saw_trace_events && self.event_count == 0 {
                    return Err(Error::new(ErrorKind::Truncated, at));
                }
                true
            }
        };
        if !self.saw_trace_events && self.events_not_array {
            return Err(Error::new(
                ErrorKind::Syntax("`traceEvents` is not an array of events".into()),
                0,
            ));
        }
        if !self.saw_trace_events && !self.bare_array {
            return Err(Error::new(
                ErrorKind::Incompatible(
                    "a JSON object without `traceEvents` is not a Kineto trace".into(),
                ),
                0,
            ));
        }
        let (events, bare, bytes) = (self.event_count, self.bare_array, self.base);
        let end = move |mut b: Builder| {
            b.trace.event_count = events;
            b.trace.meta.bare_array = bare;
            b.trace.bytes_read = bytes;
            if truncated {
                b.trace.warnings.add(WarningKind::Truncated, || {
                    format!("stream ends at byte {end} inside an unfinished value ({leftover} bytes dropped)")
                });
            }
            b.finish()
        };
        match self.sink {
            Sink::Direct(b) => Ok(end(b)),
            // The model is finished where it was built: its memory is reused in the same place.
            Sink::Threaded(mut p) => {
                p.ship(&mut self.buf, used);
                p.finish(Box::new(end))
            }
        }
    }

    /// Parses as far as the window allows; returns the bytes fully consumed.
    fn run(&mut self) -> Result<usize> {
        let buf = std::mem::take(&mut self.buf);
        let r = self.run_on(&buf);
        self.buf = buf;
        r
    }

    fn run_on(&mut self, buf: &[u8]) -> Result<usize> {
        let mut c = Cursor::new(buf, 0);
        let base = self.base;
        let err = |kind: ErrorKind, at: usize| Error::new(kind, base + at as u64);
        loop {
            // Whitespace is consumed here, never carried to the next slice: a long run of it
            // between events is not one growing "value".
            c.ws();
            let mark = c.i;
            match self.state {
                State::Start => {
                    if buf.starts_with(b"\xEF\xBB\xBF") && c.i == 0 {
                        c.i = 3;
                    }
                    match c.peek() {
                        Ok(b'{') => {
                            c.i += 1;
                            self.state = State::TopKeys;
                        }
                        Ok(b'[') => {
                            c.i += 1;
                            self.bare_array = true;
                            self.state = State::Events { bare: true };
                        }
                        Ok(_) => {
                            return Err(err(
                                ErrorKind::Incompatible(
                                    "expected a JSON object or array of trace events".into(),
                                ),
                                c.i,
                            ))
                        }
                        Err(_) => return Ok(mark),
                    }
                }
                State::TopKeys => match c.peek() {
                    Err(_) => return Ok(mark),
                    Ok(b'}') => {
                        c.i += 1;
                        self.state = State::Done;
                    }
                    Ok(b',') => c.i += 1,
                    Ok(_) => match self.top_key(&mut c) {
                        Ok(()) => {}
                        Err(Stop::Incomplete) => return Ok(mark),
                        Err(Stop::Syntax(m)) => return Err(err(ErrorKind::Syntax(m.into()), c.i)),
                    },
                },
                State::Events { bare } => match c.peek() {
                    Err(_) => return Ok(mark),
                    Ok(b']') => {
                        c.i += 1;
                        self.state = if bare { State::Done } else { State::TopKeys };
                    }
                    Ok(b',') => c.i += 1,
                    Ok(b'{') => match event::scan_event(&mut c, &mut self.pairs) {
                        Ok(ev) => {
                            self.event_count += 1;
                            let at = base + mark as u64;
                            match &mut self.sink {
                                Sink::Direct(b) => b.ingest(&ev, buf, &self.pairs, at),
                                Sink::Threaded(p) => p.event(&ev, buf, &self.pairs, at),
                            }
                        }
                        Err(Stop::Incomplete) => return Ok(mark),
                        Err(Stop::Syntax(m)) => {
                            // Skip the whole object if its brackets balance; otherwise give up here.
                            c.i = mark;
                            match c.value() {
                                Ok(_) => {
                                    self.event_count += 1;
                                    self.note(Note::Malformed(m, base + mark as u64));
                                }
                                Err(Stop::Incomplete) => return Ok(mark),
                                Err(Stop::Syntax(m2)) => {
                                    return Err(err(ErrorKind::Syntax(m2.into()), c.i))
                                }
                            }
                        }
                    },
                    Ok(_) => match c.value() {
                        Ok(_) => {
                            self.event_count += 1;
                            self.note(Note::NotObject(base + mark as u64));
                        }
                        Err(Stop::Incomplete) => return Ok(mark),
                        Err(Stop::Syntax(m)) => return Err(err(ErrorKind::Syntax(m.into()), c.i)),
                    },
                },
                State::Done => return Ok(buf.len()),
            }
        }
    }

    fn top_key(&mut self, c: &mut Cursor<'_>) -> Result<(), Stop> {
        let key = c.string()?;
        c.expect(b':', "expected ':' after a top-level key")?;
        if key.bytes == b"traceEvents" {
            if c.peek()? == b'[' {
                c.i += 1;
                self.saw_trace_events = true;
                self.state = State::Events { bare: false };
            } else {
                c.value()?;
                self.events_not_array = true;
                self.note(Note::EventsNotArray);
            }
            return Ok(());
        }
        let v = c.value()?;
        match &mut self.sink {
            Sink::Direct(b) => b.top_level(key.bytes, v),
            Sink::Threaded(p) => p.top_level(c.b, key.bytes, v),
        }
        Ok(())
    }

    fn note(&mut self, n: Note) {
        match &mut self.sink {
            Sink::Direct(b) => n.record(b),
            Sink::Threaded(p) => p.note(n),
        }
    }
}

/// Reads a whole in-memory trace (tests, small files).
pub fn read_kineto(bytes: &[u8]) -> Result<Trace> {
    let mut r = KinetoReader::new();
    r.push(bytes)?;
    r.finish()
}

/// A random order of `0..n` (display place -> slice) and its inverse (slice -> place), for the
/// tests of what the finish puts in display order.
#[cfg(test)]
fn shuffled(n: usize, rnd: &mut impl FnMut(u64) -> u64) -> (Vec<u32>, Vec<u32>) {
    let mut order: Vec<u32> = (0..n as u32).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rnd(i as u64 + 1) as usize);
    }
    let mut new_of = vec![0u32; n];
    for (new, &old) in order.iter().enumerate() {
        new_of[old as usize] = new as u32;
    }
    (order, new_of)
}

/// A xorshift generator for the tests' random tables: `rng(seed)(m)` is the next value below `m`.
#[cfg(test)]
fn rng(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    }
}
