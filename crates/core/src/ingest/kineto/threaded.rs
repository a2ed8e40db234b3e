//! The two-thread reader's plumbing: the calling thread scans windows of the stream into events
//! (spans as offsets) and ships each window with its events to a builder thread, which interns,
//! decodes and appends them exactly as the one-thread reader does, in the same order.
//!
//! Scanning (tokenizing JSON) and building (interning, number parsing, column appends) each take
//! about half of the per-event time, so the pipeline nearly halves it on two cores. A bounded
//! channel keeps at most [`IN_FLIGHT`] windows queued, and windows come back to be reused, so
//! memory stays the model plus a few windows and no page is faulted in twice.

use super::build::Builder;
use super::event::{ArgPair, Ev, EvAt};
use super::Note;
use crate::error::{Error, ErrorKind, Result};
use crate::model::Trace;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Windows queued for the builder beyond the one it works on.
const IN_FLIGHT: usize = 2;

/// New bytes per window: with its events and args spans a window takes about twice this.
pub(super) const WINDOW_BYTES: usize = 1 << 20;

/// What the builder thread applies, in stream order.
enum Item {
    Event {
        ev: EvAt,
        pairs: (u32, u32),
        at: u64,
    },
    Top {
        key: (u32, u32),
        value: (u32, u32),
    },
    Note(Note),
}

/// One window of the stream and what was scanned from it; offsets index `bytes`.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    items: Vec<Item>,
    pairs: Vec<ArgPair>,
}

impl Batch {
    fn span(&self, (a, b): (u32, u32)) -> &[u8] {
        self.bytes.get(a as usize..b as usize).unwrap_or_default()
    }

    fn apply(&self, b: &mut Builder) {
        for item in &self.items {
            match *item {
                Item::Event { ev, pairs, at } => {
                    let pairs = self
                        .pairs
                        .get(pairs.0 as usize..pairs.1 as usize)
                        .unwrap_or_default();
                    b.ingest(&ev.get(&self.bytes, pairs), &self.bytes, pairs, at);
                }
                Item::Top { key, value } => b.top_level(self.span(key), self.span(value)),
                Item::Note(n) => n.record(b),
            }
        }
    }
}

/// The last step, run by the builder thread once every window is applied.
pub(super) type End = Box<dyn FnOnce(Builder) -> Trace + Send>;

enum Msg {
    Window(Batch),
    End(End),
}

pub(super) struct Pipe {
    /// The batch being filled from the current window.
    batch: Batch,
    to_builder: SyncSender<Msg>,
    spares: Receiver<Batch>,
    builder: JoinHandle<Option<Trace>>,
}

impl Pipe {
    /// Starts the builder thread; `None` where threads are not available (wasm).
    pub fn start() -> Option<Pipe> {
        let (to_builder, msgs) = sync_channel::<Msg>(IN_FLIGHT);
        let (give_back, spares) = channel::<Batch>();
        let builder = std::thread::Builder::new()
            .name("kineto-builder".into())
            .spawn(move || {
                let mut b = Builder::default();
                for msg in msgs {
                    match msg {
                        Msg::Window(mut batch) => {
                            batch.apply(&mut b);
                            batch.items.clear();
                            batch.pairs.clear();
                            // The reader may have finished: then the spare is simply dropped.
                            let _ = give_back.send(batch);
                        }
                        Msg::End(end) => return Some(end(b)),
                    }
                }
                // The reader stopped on an error: nothing to finish.
                None
            })
            .ok()?;
        Some(Pipe {
            batch: Batch::default(),
            to_builder,
            spares,
            builder,
        })
    }

    /// Records an event scanned from `window` (the reader's current window).
    pub fn event(&mut self, ev: &Ev<'_>, window: &[u8], pairs: &[ArgPair], at: u64) {
        let b = &mut self.batch;
        let p0 = b.pairs.len() as u32;
        b.pairs.extend_from_slice(pairs);
        b.items.push(Item::Event {
            ev: ev.at(window),
            pairs: (p0, b.pairs.len() as u32),
            at,
        });
    }

    pub fn top_level(&mut self, window: &[u8], key: &[u8], value: &[u8]) {
        let span = |part: &[u8]| {
            let a = part.as_ptr() as usize - window.as_ptr() as usize;
            (a as u32, (a + part.len()) as u32)
        };
        self.batch.items.push(Item::Top {
            key: span(key),
            value: span(value),
        });
    }

    pub fn note(&mut self, n: Note) {
        self.batch.items.push(Item::Note(n));
    }

    /// Sends the window `buf` (whose first `used` bytes were scanned) with its events to the
    /// builder, leaving in `buf` only the unscanned tail, in a recycled buffer.
    pub fn ship(&mut self, buf: &mut Vec<u8>, used: usize) {
        if self.batch.items.is_empty() {
            buf.drain(..used);
            return;
        }
        let spare = self.spares.try_recv().unwrap_or_default();
        let mut bytes = spare.bytes;
        bytes.clear();
        bytes.extend_from_slice(&buf[used..]);
        // `buf` keeps the tail (in the spare's allocation); the scanned window goes with its items.
        std::mem::swap(buf, &mut bytes);
        let empty = Batch {
            bytes: Vec::new(),
            items: spare.items,
            pairs: spare.pairs,
        };
        let mut full = std::mem::replace(&mut self.batch, empty);
        full.bytes = bytes;
        // The builder only stops early by panicking, which `finish` reports.
        let _ = self.to_builder.send(Msg::Window(full));
    }

    /// Has the builder apply everything shipped, then `end`, and returns the model.
    pub fn finish(self, end: End) -> Result<Trace> {
        let stopped = || Error::new(ErrorKind::Io("the trace builder thread stopped".into()), 0);
        self.to_builder.send(Msg::End(end)).map_err(|_| stopped())?;
        drop(self.to_builder);
        self.builder.join().ok().flatten().ok_or_else(stopped)
    }
}
