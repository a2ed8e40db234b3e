//! Feeding bytes to the core `Loader` in fixed slices, yielding to the browser whenever the time
//! budget is spent, publishing progress in bytes with MB/s and honouring the cancel flag.

use super::LoadCtx;
use crate::platform::clock::{now_ms, wasm_memory_bytes, yield_now};
use crate::session::derived::TimelineData;
use crate::session::{Content, EtFile, LoadedFile, Progress, TraceFile};
use leptos::prelude::*;
use tracelight_core::ingest::budget::check_fits;
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::{Error, ErrorKind};

/// Raw bytes per slice: small enough that parsing one (gzip included) stays well under 50 ms.
pub const SLICE_BYTES: u64 = 1 << 20;

/// Parse work between yields: keeps every main-thread task well under 50 ms.
const BUDGET_MS: f64 = 30.0;

pub(super) struct Feed {
    pub(super) loader: Loader,
    started: f64,
    last_yield: f64,
    /// Time spent inside the reader itself, so a benchmark can tell parse cost from waiting on
    /// the browser (reads, yields).
    busy_ms: f64,
    total: Option<u64>,
    ctx: LoadCtx,
    /// When the first bytes were pushed (ms since page start), 0 before.
    first_bytes: f64,
}

impl Feed {
    /// `started`: when the read was asked for (the load time counts from there).
    pub(super) fn new(name: &str, total: Option<u64>, ctx: LoadCtx, started: f64) -> Self {
        ctx.cancel.set(false);
        ctx.progress.set(Some(Progress {
            name: name.to_owned(),
            done: 0,
            total,
            mb_per_s: 0.0,
            phase: "reading",
        }));
        let mut loader = Loader::new(name);
        if let Some(t) = total {
            loader.size_hint(t);
        }
        Feed {
            loader,
            started,
            last_yield: now_ms(),
            busy_ms: 0.0,
            total,
            ctx,
            first_bytes: 0.0,
        }
    }

    /// Parses `bytes` in [`SLICE_BYTES`] pieces, yielding to the browser whenever the budget is
    /// spent; progress and the cancel flag are checked at each yield. `inflated` carries the
    /// source bytes read so far when the bytes were already decompressed by the platform.
    /// The error a cancel ends the load with (the page shows nothing for it).
    fn cancelled(&self) -> Error {
        Error::new(ErrorKind::Cancelled, self.loader.raw_bytes()).in_file(self.loader.name())
    }

    pub(super) async fn push(&mut self, bytes: &[u8], inflated: Option<u64>) -> Result<(), Error> {
        for piece in bytes.chunks(SLICE_BYTES as usize) {
            if self.ctx.cancel.get_untracked() {
                return Err(self.cancelled());
            }
            // Refuse before the module runs out of memory and traps (which would lose the
            // session already open): see `tracelight_core::ingest::budget`.
            let l = &self.loader;
            check_fits(
                wasm_memory_bytes(),
                l.raw_bytes(),
                self.total,
                l.decoded_bytes(),
            )
            .map_err(|e| e.in_file(l.name()))?;
            let t0 = now_ms();
            if self.first_bytes == 0.0 {
                self.first_bytes = t0;
            }
            match inflated {
                Some(raw) => self.loader.push_inflated(piece, raw),
                None => self.loader.push(piece),
            }
            .map_err(|e| e.in_file(self.loader.name()))?;
            let now = now_ms();
            self.busy_ms += now - t0;
            if now - self.last_yield >= BUDGET_MS {
                let secs = ((now - self.started) / 1000.0).max(1e-6);
                let done = self.loader.raw_bytes();
                self.ctx.progress.set(Some(Progress {
                    name: self.loader.name().to_owned(),
                    done,
                    total: self.total,
                    mb_per_s: done as f64 / 1e6 / secs,
                    phase: "reading",
                }));
                yield_now().await;
                self.last_yield = now_ms();
            }
        }
        if self.ctx.cancel.get_untracked() {
            return Err(self.cancelled());
        }
        Ok(())
    }

    pub(super) async fn finish(self) -> Result<LoadedFile, Error> {
        let name = self.loader.name().to_owned();
        let bytes = self.loader.raw_bytes();
        let decoded_bytes = self.loader.decoded_bytes();
        self.ctx.progress.update(|p| {
            if let Some(p) = p {
                p.phase = "building model";
            }
        });
        yield_now().await;
        let t0 = now_ms();
        let mut model = 0.0;
        let content = match self.loader.finish()? {
            Loaded::Trace(t) => {
                let tf = TraceFile::new(&name, *t);
                model = now_ms();
                // The timeline's LOD index, built now (yielding between lanes) rather than on the
                // first view of the timeline: 0.8-1.3 s on the 1 GB trace (BENCHMARKS.md).
                self.ctx.progress.update(|p| {
                    if let Some(p) = p {
                        p.phase = "indexing timeline";
                    }
                });
                let data = TimelineData::build_yielding(&tf.trace).await;
                tf.set_timeline(data);
                Content::Trace(Box::new(tf))
            }
            Loaded::Snapshot(s) => Content::Snapshot(crate::session::SnapshotFile::new(*s, None)),
            Loaded::MemoryTimeline(m) => Content::MemoryTimeline(m),
            Loaded::ExecTrace(e) => Content::ExecTrace(Box::new(EtFile::new(*e))),
            Loaded::FlightRecorder(d) => Content::FlightRecorder(d),
        };
        let end = now_ms();
        let load_ms = end - self.started;
        if model == 0.0 {
            model = end;
        }
        Ok(LoadedFile {
            parse_ms: self.busy_ms + (end - t0),
            first_bytes_ms: self.first_bytes.max(self.started) - self.started,
            model_ms: model - self.started,
            workers: 0,
            preview: false,
            name,
            bytes,
            decoded_bytes,
            load_ms,
            content,
        })
    }
}
