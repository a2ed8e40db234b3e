//! What a reader worker's own instance of this module runs (`js/shards.js`): it parses one shard of
//! a trace file and, in worker 0, merges the others and finishes the model (for a big file, a
//! worker that parses nothing merges every shard instead). Only numbers cross the
//! boundary (bytes go through this instance's memory: the worker writes into the input buffer
//! and copies sections out), because the worker has none of wasm-bindgen's glue: every import of
//! the module is a stub that throws, so nothing here may call into JS (no DOM, no clock, no log).

use std::cell::RefCell;
use tracelight_core::ingest::kineto::cut::find_cut_forward;
use tracelight_core::ingest::kineto::{first_byte, IncomingShard, KinetoReader};
use tracelight_core::ingest::snapshot::Snapshot;
use tracelight_core::ingest::Loader;
use tracelight_core::model::wire;
use tracelight_core::model::Trace;
use tracelight_core::report::analysis::{Analysis, Tables};
use tracelight_core::report::analysis_wire;
use tracelight_core::view::parts::{self, TimelineParts};
use tracelight_core::Error;
use wasm_bindgen::prelude::*;

#[derive(Default)]
pub(super) struct State {
    pub(super) input: Vec<u8>,
    reader: Option<KinetoReader>,
    pub(super) error: Option<Error>,
    /// The shard being merged, its sections read as they arrive.
    incoming: Option<IncomingShard>,
    /// `incoming` is the first shard of a worker that read nothing ([`tl_merge_first`]).
    incoming_first: bool,
    /// The finished model, handed out one section at a time, then analysed.
    pub(super) trace: Option<Trace>,
    /// The tables half of the analyses and the file's name, while the helper computes the other
    /// half (`worker_halves`).
    pub(super) tables: Option<(String, Tables)>,
    /// The model read back from its own sections before the analyses ([`tl_reload_begin`]).
    reload: Option<wire::Decoder>,
    next_section: usize,
    /// The analysis's sections still to hand out, last first.
    pub(super) analysis: Vec<Vec<u8>>,
    /// The timeline's parts and the next of their sections to hand out, each made when asked
    /// ([`tl_timeline`]): a 10 GB trace's counters are ~130 MB, which a copy of every section
    /// beside them would double in an instance near its 4 GB.
    pub(super) parts: Option<(TimelineParts, usize)>,
    /// A memory snapshot: its loader while the file streams in, then the model handed out one
    /// section at a time.
    pub(super) snap_loader: Option<Loader>,
    pub(super) snapshot: Option<Box<Snapshot>>,
    pub(super) next_snap_section: usize,
    /// The devices of the first views' charts, whose flame graphs follow the model.
    pub(super) charted: Vec<i64>,
    pub(super) out: Vec<Vec<u8>>,
    /// Memory written while this worker waits, for the merge to reuse ([`tl_touch`]).
    touched: super::prefault::Touched,
}

thread_local!(static S: RefCell<State> = RefCell::new(State::default()));

pub(super) fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    S.with(|s| f(&mut s.borrow_mut()))
}

/// The input buffer, at least `len` bytes long: its address in this instance's memory. It only
/// grows (every reader takes its first `len` bytes): clearing and refilling it with zeros for each
/// piece zeroed the whole file once more, ~13 ms of a 50 MB snapshot's decode.
#[wasm_bindgen]
pub fn tl_input(len: u32) -> u32 {
    with(|s| {
        if s.input.len() < len as usize {
            s.input.resize(len as usize, 0);
        }
        s.input.as_ptr() as u32
    })
}

/// Lets the input buffer go once a trace's share is parsed (4 MiB): what comes next (a shard's
/// sections, the merge, the model's finish) may reuse that memory.
#[wasm_bindgen]
pub fn tl_input_free() {
    with(|s| s.input = Vec::new());
}

/// Writes `mb` MiB of this instance's memory and frees it: called by the spare worker while it
/// waits for a load. Memory a fresh instance grows into is slow to touch the first time (page
/// faults behind `memory.grow`: ~0.6 ms per MiB in V8); freed, it stays with the allocator, so the
/// load's first allocations reuse pages already touched. Measured as bare wasm in Node, a fresh
/// instance decoded the 50 MB bench snapshot in 237-243 ms, after touching 64 MiB in 196-197 ms.
#[wasm_bindgen]
pub fn tl_prefault(mb: u32) {
    let v = vec![1u8; (mb.min(256) as usize) << 20];
    std::hint::black_box(&v);
}

/// Writes `mb` more MiB of a block of `budget_mb` MiB kept for the merge: called while the merging
/// worker waits for a shard (worker 0 when it parsed its own first; a worker that parses nothing
/// while the others parse). The merge grows the instance by about its shards' model (a 1 GB trace
/// on two workers: ~206 MB), whose first writes are page faults (~0.6 ms per MiB) on the load's
/// serial path; written while it waits, freed at [`tl_touch_free`] before the merge, the allocator
/// hands the same pages out again. 0 once the block is whole or cannot be had.
#[wasm_bindgen]
pub fn tl_touch(mb: u32, budget_mb: u32) -> u32 {
    with(|s| {
        u32::from(
            s.touched
                .grow((budget_mb as usize) << 20, (mb as usize) << 20),
        )
    })
}

/// Frees the block [`tl_touch`] wrote, for the merge's allocations.
#[wasm_bindgen]
pub fn tl_touch_free() {
    with(|s| s.touched = Default::default());
}

/// The first likely event boundary in the first `len` input bytes, or -1.
#[wasm_bindgen]
pub fn tl_cut(len: u32) -> i32 {
    with(|s| {
        let w = s.input.get(..len as usize).unwrap_or_default();
        find_cut_forward(w, 0).map_or(-1, |c| c as i32)
    })
}

/// The first byte of the stream (in the first `len` input bytes) past blanks; 0 if none.
#[wasm_bindgen]
pub fn tl_first_byte(len: u32) -> u32 {
    with(|s| u32::from(first_byte(s.input.get(..len as usize).unwrap_or_default()).unwrap_or(0)))
}

/// Starts the reader: from the stream's first byte (`start` < 0), else a shard from `start`.
#[wasm_bindgen]
pub fn tl_begin(start: f64, bare: u32) {
    with(|s| {
        let mut r = if start < 0.0 {
            KinetoReader::new()
        } else {
            KinetoReader::shard(start as u64, bare != 0)
        };
        // The page keeps the blob this worker reads, and reads a slice's other args from it
        // when the details panel shows them (`platform::reread`).
        r.leave_args_in_file();
        s.reader = Some(r);
        s.error = None;
    });
}

/// Parses the first `len` input bytes; 0 when that failed (the error is kept).
#[wasm_bindgen]
pub fn tl_push(len: u32) -> u32 {
    with(|s| {
        let State { input, reader, .. } = s;
        let Some(r) = reader else { return 0 };
        match r.push(input.get(..len as usize).unwrap_or_default()) {
            Ok(()) => 1,
            Err(e) => {
                fail(s, e);
                0
            }
        }
    })
}

/// Events read so far.
#[wasm_bindgen]
pub fn tl_events() -> f64 {
    with(|s| s.reader.as_ref().map_or(0.0, |r| r.events() as f64))
}

/// How many sections this shard takes: a status section (0, or 1 and the error), then the
/// reader's, made one at a time by [`tl_shard_section`].
#[wasm_bindgen]
pub fn tl_shard_sections() -> u32 {
    with(|s| {
        let reader = s.reader.as_ref().and_then(KinetoReader::section_count);
        1 + reader.unwrap_or(0) as u32
    })
}

/// Makes the output section `i` of this shard (alone: the shard is never held twice); its
/// length.
#[wasm_bindgen]
pub fn tl_shard_section(i: u32) -> u32 {
    with(|s| {
        let v = match i {
            0 => error_section(s.error.as_ref()),
            i => s
                .reader
                .as_ref()
                .and_then(|r| r.section(i as usize - 1))
                .unwrap_or_default(),
        };
        let n = v.len() as u32;
        s.out = vec![v];
        n
    })
}

fn error_section(e: Option<&Error>) -> Vec<u8> {
    use wire::Wire;
    let mut v = Vec::new();
    e.cloned().put(&mut v);
    v
}

#[wasm_bindgen]
pub fn tl_section_ptr(i: u32) -> u32 {
    with(|s| s.out.get(i as usize).map_or(0, |v| v.as_ptr() as u32))
}

#[wasm_bindgen]
pub fn tl_section_len(i: u32) -> u32 {
    with(|s| s.out.get(i as usize).map_or(0, |v| v.len() as u32))
}

#[wasm_bindgen]
pub fn tl_sections_clear() {
    with(|s| s.out = Vec::new());
}

/// Slices this worker's shard holds: the merging worker reserves for all of them
/// ([`tl_merge_first`]).
#[wasm_bindgen]
pub fn tl_slices() -> f64 {
    with(|s| s.reader.as_ref().map_or(0.0, |r| r.slices() as f64))
}

/// The merging worker of a big file, which read nothing: the first shard (from byte 0) comes as
/// `count` sections, its staged columns made one block each of `slices` (every shard's slices
/// together), so the model's finish reuses them (`IncomingShard::first`). Its sections then go
/// through [`tl_absorb_section`] and [`tl_absorb_end`], as the next shards' do. 0, or 2 (failed,
/// the error kept).
#[wasm_bindgen]
pub fn tl_merge_first(count: u32, slices: f64) -> i32 {
    with(
        |s| match IncomingShard::first(count as usize, slices.max(0.0) as usize) {
            Ok(inc) => {
                s.reader = None;
                s.error = None;
                s.incoming = Some(inc);
                s.incoming_first = true;
                0
            }
            Err(e) => fail(s, e),
        },
    )
}

/// The next shard to merge starts at `start` and comes as `count` sections. 0: send
/// them; 1: the cut was not an event boundary (push the shard's bytes instead); 2: failed (the
/// error is kept for `tl_error_sections`).
#[wasm_bindgen]
pub fn tl_absorb_begin(start: f64, bare: u32, count: u32) -> i32 {
    with(|s| {
        let Some(r) = s.reader.as_ref() else { return 2 };
        match r.incoming(start as u64, bare != 0, count as usize) {
            Ok(Some(inc)) => {
                s.incoming = Some(inc);
                0
            }
            Ok(None) => 1,
            Err(e) => fail(s, e),
        }
    })
}

/// Its next section, the first `len` input bytes, read at once (its bytes are not kept); 0 when
/// that failed.
#[wasm_bindgen]
pub fn tl_absorb_section(len: u32) -> u32 {
    with(|s| {
        let State {
            input,
            incoming,
            reader,
            incoming_first,
            ..
        } = s;
        let Some(inc) = incoming else { return 0 };
        let section = input.get(..len as usize).unwrap_or_default();
        let read = match reader {
            // A shard merged as it comes, its columns decoded onto the reader's.
            Some(r) if !*incoming_first => r.absorb_section(inc, section),
            _ => inc.push(section),
        };
        match read {
            Ok(()) => 1,
            Err(e) => {
                fail(s, e);
                0
            }
        }
    })
}

/// Merges the shard (or, after [`tl_merge_first`], makes it the reader the next are merged
/// into): 0 merged, 2 failed (the error is kept).
#[wasm_bindgen]
pub fn tl_absorb_end() -> i32 {
    with(|s| {
        if std::mem::take(&mut s.incoming_first) {
            let Some(inc) = s.incoming.take() else {
                return 2;
            };
            return match inc.into_reader() {
                Ok(r) => {
                    s.reader = Some(r);
                    0
                }
                Err(e) => fail(s, e),
            };
        }
        let (Some(inc), Some(r)) = (s.incoming.take(), s.reader.as_mut()) else {
            return 2;
        };
        match r.merge_incoming(inc) {
            Ok(()) => 0,
            Err(e) => fail(s, e),
        }
    })
}

/// Keeps `e` as the load's error and drops the reader; returns 2.
fn fail(s: &mut State, e: Error) -> i32 {
    s.error = Some(e);
    s.reader = None;
    s.incoming = None;
    s.incoming_first = false;
    2
}

/// Ends the stream and builds the model: 0, or -1 with the error kept.
#[wasm_bindgen]
pub fn tl_finish() -> i32 {
    with(|s| {
        let Some(r) = s.reader.take() else { return -1 };
        match r.finish() {
            Ok(t) => {
                s.trace = Some(t);
                s.next_section = 0;
                0
            }
            Err(e) => {
                s.error = Some(e);
                -1
            }
        }
    })
}

/// Makes the output the model's next section; its length, or -1 after the last.
#[wasm_bindgen]
pub fn tl_next_section() -> i32 {
    with(|s| {
        let Some(t) = &s.trace else { return -1 };
        match wire::section(t, s.next_section) {
            Some(v) => {
                s.next_section += 1;
                let n = v.len() as i32;
                s.out = vec![v];
                n
            }
            // The model stays for `tl_analyze`.
            None => -1,
        }
    })
}

/// The merging worker of a big file, after the model's last section: drops the model, to read it
/// back from its sections ([`tl_reload_section`], [`tl_reload_end`]) before the analyses. Its
/// columns lay among the holes the merge and the finish left, which the analyses' allocations did
/// not fit: they grew the instance past the finish's peak (0.35x -> 0.41x a 1 GB file); read
/// back into an instance that holds nothing else, the model and the analyses fit in it.
#[wasm_bindgen]
pub fn tl_reload_begin() {
    with(|s| {
        s.trace = None;
        s.reload = Some(wire::Decoder::default());
    });
}

/// The model's next section, the first `len` input bytes; 0 when that failed.
#[wasm_bindgen]
pub fn tl_reload_section(len: u32) -> u32 {
    with(|s| {
        let State { input, reload, .. } = s;
        let Some(d) = reload else { return 0 };
        u32::from(
            d.push(input.get(..len as usize).unwrap_or_default())
                .is_ok(),
        )
    })
}

/// The model read back: 0, or -1 (no analyses then: the page computes them).
#[wasm_bindgen]
pub fn tl_reload_end() -> i32 {
    with(|s| match s.reload.take().map(wire::Decoder::finish) {
        Some(Ok(t)) => {
            s.trace = Some(t);
            0
        }
        _ => -1,
    })
}

/// Makes the output the kept error (one section); returns 1.
#[wasm_bindgen]
pub fn tl_error_sections() -> u32 {
    with(|s| {
        s.out = vec![error_section(s.error.as_ref())];
        1
    })
}

/// The merging worker, after the model's last section and before [`tl_analyze`]: computes the
/// timeline's parts beside its LOD index (counter tracks, groups, step marks, annotation names:
/// each a pass over the model, one task of up to 570 ms each on the page's thread for a 10 GB
/// trace) while the page builds the index. Returns how many sections they take (handed out by
/// [`tl_next_analysis_section`]), or -1 without a model.
#[wasm_bindgen]
pub fn tl_timeline() -> i32 {
    with(|s| {
        let Some(t) = s.trace.as_ref() else {
            return -1;
        };
        let p = TimelineParts::of(t);
        let n = parts::section_count(&p);
        s.parts = Some((p, 0));
        n as i32
    })
}

/// Worker 0, after the model's last section: computes every analysis of the model
/// (`Analysis::of`, what the page would otherwise run on its own thread for seconds) under the
/// file name in the first `len` input bytes, and drops the model. Returns how many sections the
/// analysis takes, or -1 (no model, or it could not be encoded: the page computes it itself).
#[wasm_bindgen]
pub fn tl_analyze(len: u32) -> i32 {
    with(|s| {
        // The timeline's parts, handed out or not, are let go before the analyses grow the memory.
        s.parts = None;
        let name = String::from_utf8_lossy(s.input.get(..len as usize).unwrap_or_default());
        let Some(t) = s.trace.take() else { return -1 };
        let a = Analysis::of(&name, &t);
        drop(t);
        hand_out(s, analysis_wire::sections(&a))
    })
}

/// Keeps what follows the model (`sections`, handed out last first by
/// [`tl_next_analysis_section`]); how many, or -1 when it could not be encoded.
pub(super) fn hand_out(s: &mut State, sections: Result<Vec<Vec<u8>>, Error>) -> i32 {
    match sections {
        Ok(mut v) => {
            v.reverse();
            s.analysis = v;
            s.analysis.len() as i32
        }
        Err(_) => -1,
    }
}

/// Makes the output the analysis's next section; its length, or -1 after the last.
#[wasm_bindgen]
pub fn tl_next_analysis_section() -> i32 {
    with(|s| {
        if let Some((p, k)) = s.parts.as_mut() {
            if let Some(v) = parts::section(p, *k) {
                *k += 1;
                let n = v.len() as i32;
                s.out = vec![v];
                return n;
            }
            s.parts = None;
            return -1;
        }
        next_analysis_section(s)
    })
}

fn next_analysis_section(s: &mut State) -> i32 {
    match s.analysis.pop() {
        Some(v) => {
            let n = v.len() as i32;
            s.out = vec![v];
            n
        }
        None => -1,
    }
}
