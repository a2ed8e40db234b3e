//! The native sharded reader: the calling thread cuts the decoded stream into shards of about
//! [`SHARD_BYTES`] at likely event boundaries (`cut.rs`), a pool of threads (one per core) reads
//! them, and a merging thread joins them in stream order (`shard.rs`) into the model the
//! one-thread reader builds.
//!
//! At most `2 × threads` shards are in flight (cut and not yet merged), so memory is the model
//! plus those shards' bytes and models. After an error the rest of the input is skipped; the
//! error is the one-thread reader's (a shard's error only counts once the merge has checked the
//! cut before it).

use super::cut::find_cut;
use super::shard::{first_byte, Shard};
use super::KinetoReader;
use crate::error::{Error, ErrorKind, Result};
use crate::model::Trace;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Decoded bytes per shard: big enough that a merge (a few thousand strings, a key table) is
/// small beside the parse, small enough that two cores share a 20 MB file.
pub const SHARD_BYTES: usize = 4 << 20;

/// With no likely event boundary in this many shards' bytes (a file of one long line without
/// `},{`), cut anyway: the merge finds the cut wrong and reads on in order, so the pending bytes
/// stay bounded.
const BLIND_CUTS: usize = 4;

struct Job {
    index: usize,
    start: u64,
    bare: bool,
    bytes: Vec<u8>,
}

/// Reads a Kineto stream with a pool of threads; see the module docs.
pub struct ParallelReader {
    pending: Vec<u8>,
    shard_bytes: usize,
    /// Decoded offset of `pending[0]`.
    offset: u64,
    /// Whether the stream is a bare array, from its first byte (`None` before it).
    bare: Option<bool>,
    next_index: usize,
    jobs: Option<SyncSender<Job>>,
    /// One token per shard the merger has finished with: the bound on shards in flight.
    tokens: Receiver<()>,
    failed: Arc<AtomicBool>,
    events: Arc<AtomicU64>,
    workers: Vec<JoinHandle<()>>,
    merger: Option<JoinHandle<Result<Option<KinetoReader>>>>,
}

impl ParallelReader {
    /// Starts `threads` readers and the merger, for shards of about `shard_bytes` (normally
    /// [`SHARD_BYTES`]); `None` where threads cannot start (wasm).
    pub fn start(threads: usize, shard_bytes: usize) -> Option<ParallelReader> {
        let threads = threads.max(1);
        let (jobs, job_rx) = sync_channel::<Job>(threads);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (done_tx, done_rx) = channel::<(usize, Shard)>();
        let (token_tx, tokens) = channel::<()>();
        for _ in 0..2 * threads {
            let _ = token_tx.send(());
        }
        let failed = Arc::new(AtomicBool::new(false));
        let events = Arc::new(AtomicU64::new(0));
        let mut workers = Vec::with_capacity(threads);
        for k in 0..threads {
            let (rx, tx) = (Arc::clone(&job_rx), done_tx.clone());
            let w = std::thread::Builder::new()
                .name(format!("kineto-shard-{k}"))
                .spawn(move || work(&rx, &tx))
                .ok()?;
            workers.push(w);
        }
        drop(done_tx);
        let (f, e) = (Arc::clone(&failed), Arc::clone(&events));
        let merger = std::thread::Builder::new()
            .name("kineto-merge".into())
            .spawn(move || merge(&done_rx, &token_tx, &f, &e))
            .ok()?;
        Some(ParallelReader {
            pending: Vec::new(),
            shard_bytes: shard_bytes.max(1),
            offset: 0,
            bare: None,
            next_index: 0,
            jobs: Some(jobs),
            tokens,
            failed,
            events,
            workers,
            merger: Some(merger),
        })
    }

    /// Events merged so far (progress).
    pub fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    /// Takes the next slice of the decoded stream.
    pub fn push(&mut self, data: &[u8]) -> Result<()> {
        if self.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        self.pending.extend_from_slice(data);
        if self.bare.is_none() {
            self.bare = first_byte(&self.pending).map(|c| c == b'[');
        }
        let size = self.shard_bytes;
        while self.pending.len() >= size {
            let cut =
                find_cut(&self.pending, size / 2, self.pending.len())
                    .or((self.pending.len() >= BLIND_CUTS * size).then_some(self.pending.len()));
            let Some(cut) = cut else { break };
            let tail = self.pending[cut..].to_vec();
            let mut bytes = std::mem::replace(&mut self.pending, tail);
            bytes.truncate(cut);
            self.dispatch(bytes);
        }
        Ok(())
    }

    fn dispatch(&mut self, bytes: Vec<u8>) {
        // Wait for room: a token comes back per merged shard.
        let _ = self.tokens.recv();
        let job = Job {
            index: self.next_index,
            start: self.offset,
            bare: self.bare.unwrap_or(false),
            bytes,
        };
        self.offset += job.bytes.len() as u64;
        self.next_index += 1;
        if let Some(j) = &self.jobs {
            // A send fails only when every worker has stopped, which `finish` reports.
            let _ = j.send(job);
        }
    }

    /// Ends the stream: the last shard is read and merged, and the model finished.
    pub fn finish(mut self) -> Result<Trace> {
        let last = std::mem::take(&mut self.pending);
        if !last.is_empty() || self.next_index == 0 {
            self.dispatch(last);
        }
        self.jobs = None;
        let stopped = || Error::new(ErrorKind::Io("a trace reader thread stopped".into()), 0);
        for w in self.workers.drain(..) {
            w.join().map_err(|_| stopped())?;
        }
        let merged = match self.merger.take() {
            Some(m) => m.join().map_err(|_| stopped())??,
            None => None,
        };
        merged.ok_or_else(stopped)?.finish()
    }
}

fn work(jobs: &Mutex<Receiver<Job>>, done: &Sender<(usize, Shard)>) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let shard = if job.index == 0 {
            Shard::first(job.bytes)
        } else {
            Shard::read(job.start, job.bare, job.bytes)
        };
        if done.send((job.index, shard)).is_err() {
            return;
        }
    }
}

/// Merges shards in stream order as they come; after an error, only returns tokens.
fn merge(
    done: &Receiver<(usize, Shard)>,
    tokens: &Sender<()>,
    failed: &AtomicBool,
    events: &AtomicU64,
) -> Result<Option<KinetoReader>> {
    let mut waiting: BTreeMap<usize, Shard> = BTreeMap::new();
    let mut next = 0;
    let mut acc: Option<KinetoReader> = None;
    let mut error: Option<Error> = None;
    for (index, shard) in done {
        waiting.insert(index, shard);
        while let Some(shard) = waiting.remove(&next) {
            next += 1;
            if error.is_none() {
                let r = match &mut acc {
                    None => shard.read.map(|r| acc = Some(r)),
                    Some(a) => a.absorb(shard).map(|_| ()),
                };
                if let Err(e) = r {
                    failed.store(true, Ordering::Relaxed);
                    error = Some(e);
                }
                if let Some(a) = &acc {
                    events.store(a.events(), Ordering::Relaxed);
                }
            }
            let _ = tokens.send(());
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(acc),
    }
}
