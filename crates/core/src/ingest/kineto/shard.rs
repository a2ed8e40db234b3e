//! Shards: the stream cut at event boundaries, each part read on its own (another thread, another
//! worker's wasm instance) and merged in stream order into the model the one-thread reader builds.
//!
//! A shard reader starts in the middle of `traceEvents`, with an empty model of its own. Merging a
//! shard into the reader of everything before it ([`KinetoReader::absorb`]) maps its strings,
//! tracks, counter series and args keys onto the reader's (interning them in the shard's order of
//! first use, which is the one-thread order of first use), appends its columns, closes with its
//! unmatched `E`s the `B`s the earlier shards left open, and takes over its parse state. Only the
//! merge checks that the cut was an event boundary: the reader of everything before must have
//! stopped exactly where the shard started, between two events and with nothing pending. When it
//! did not (a newline inside a string of invalid JSON, a cut made blind), that reader reads the
//! shard's bytes itself, so a wrong cut costs time, never a wrong model.

use super::build::{top, Builder};
use super::{KinetoReader, Sink, State};
use crate::error::Result;
use crate::model::{IdVal, StrId, Trace};
use crate::warnings::WarningKind;

/// One part of the stream, read on its own.
pub struct Shard {
    /// Decoded offset of its first byte.
    pub start: u64,
    /// Read as entries of a bare array (the file's first byte is `[`) rather than of an object's
    /// `traceEvents`.
    pub bare: bool,
    /// Its bytes, kept until the merge: read again there if the cut was not an event boundary.
    pub bytes: Vec<u8>,
    pub read: Result<KinetoReader>,
}

impl Shard {
    /// Reads `bytes`, the first part of the stream (from offset 0): the reader every later shard
    /// is merged into.
    pub fn first(bytes: Vec<u8>) -> Shard {
        Shard::read_by(KinetoReader::new(), 0, false, bytes)
    }

    /// Reads `bytes`, the stream from decoded offset `start` on, as a shard.
    pub fn read(start: u64, bare: bool, bytes: Vec<u8>) -> Shard {
        Shard::read_by(KinetoReader::shard(start, bare), start, bare, bytes)
    }

    /// Reads `bytes` with reader `r` (made for that place in the stream).
    fn read_by(mut r: KinetoReader, start: u64, bare: bool, bytes: Vec<u8>) -> Shard {
        let read = r.push(&bytes).map(|()| r);
        Shard {
            start,
            bare,
            bytes,
            read,
        }
    }
}

/// Reads `bytes` cut at `cuts` (increasing offsets into it) as shards, one after the other, and
/// merges them: the sharded reader without threads, for tests and the fuzz target, which require
/// the one-thread reader's result wherever the cuts fall. Also returns how many cuts were event
/// boundaries (merged rather than read again).
pub fn read_in_shards(bytes: &[u8], cuts: &[usize]) -> (Result<Trace>, usize) {
    read_in_shards_with(bytes, cuts, false)
}

/// [`read_in_shards`], every reader leaving args in the file with `args_in_file`
/// ([`KinetoReader::leave_args_in_file`]), as the page's workers do.
pub fn read_in_shards_with(
    bytes: &[u8],
    cuts: &[usize],
    args_in_file: bool,
) -> (Result<Trace>, usize) {
    let mut merged = 0;
    let r = read_cut(bytes, cuts, &mut merged, args_in_file);
    (r, merged)
}

fn read_cut(bytes: &[u8], cuts: &[usize], merged: &mut usize, args_in_file: bool) -> Result<Trace> {
    let setup = |mut r: KinetoReader| {
        if args_in_file {
            r.leave_args_in_file();
        }
        r
    };
    let bare = first_byte(bytes) == Some(b'[');
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().copied().filter(|&c| c > 0 && c < bytes.len()));
    bounds.push(bytes.len());
    let mut acc: Option<KinetoReader> = None;
    for w in bounds.windows(2) {
        let part = bytes[w[0]..w[1].max(w[0])].to_vec();
        match &mut acc {
            None => acc = Some(Shard::read_by(setup(KinetoReader::new()), 0, false, part).read?),
            Some(a) => {
                *merged += usize::from(a.stopped_between_events(w[0] as u64, bare));
                let r = setup(KinetoReader::shard(w[0] as u64, bare));
                a.absorb(Shard::read_by(r, w[0] as u64, bare, part))?;
            }
        }
    }
    match acc {
        Some(a) => a.finish(),
        None => setup(KinetoReader::new()).finish(),
    }
}

/// The stream's first byte past a byte-order mark and blanks: `[` for a bare array of events.
pub fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(bytes)
        .iter()
        .copied()
        .find(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
}

impl KinetoReader {
    /// A reader for the stream from decoded offset `base` on, which is assumed to be between two
    /// entries of `traceEvents` (or of a bare array, with `bare`); [`KinetoReader::absorb`] checks it.
    pub fn shard(base: u64, bare: bool) -> Self {
        let mut r = Self::new();
        r.base = base;
        r.state = State::Events { bare };
        if let Sink::Direct(b) = &mut r.sink {
            b.shard = true;
        }
        r
    }

    /// Whether this reader stopped exactly at decoded offset `at`, between two entries of an
    /// events array of the given kind: where a shard starting there assumed it would be.
    pub(super) fn stopped_between_events(&self, at: u64, bare: bool) -> bool {
        self.base == at
            && self.buf.is_empty()
            && self.state == State::Events { bare }
            && matches!(self.sink, Sink::Direct(_))
    }

    /// Continues this reader with `next`, the shard that starts where this reader's input ended:
    /// merged when the cut between them was an event boundary, else read again here. Either way
    /// this reader is then the one-thread reader of both parts; a shard's error is returned as the
    /// one-thread reader would have returned it. True when merged.
    pub fn absorb(&mut self, next: Shard) -> Result<bool> {
        if !self.stopped_between_events(next.start, next.bare) {
            self.push(&next.bytes)?;
            return Ok(false);
        }
        self.merge(next.read?);
        Ok(true)
    }

    /// Takes over `n`, a shard that starts exactly where this reader stopped.
    fn merge(&mut self, mut n: KinetoReader) {
        self.take_parse_state(&mut n);
        if let (Sink::Direct(a), Sink::Direct(b)) = (&mut self.sink, n.sink) {
            a.absorb(b);
        }
    }

    /// Continues from where `n`, the shard that started where this reader stopped, stopped.
    pub(super) fn take_parse_state(&mut self, n: &mut KinetoReader) {
        self.buf = std::mem::take(&mut n.buf);
        self.base = n.base;
        self.state = n.state;
        self.saw_trace_events |= n.saw_trace_events;
        self.events_not_array |= n.events_not_array;
        self.event_count += n.event_count;
    }
}

/// Appends `s` to `d` and frees `s`. `d` grows by what `s` holds, or by half if that is more (many
/// shards): `Vec::append` doubled `d` and kept `s`'s memory until the shard was dropped, most of
/// the rest of a 304 MB trace's merge transient.
fn append_all<T>(d: &mut Vec<T>, s: &mut Vec<T>) {
    grow(d, s.len());
    d.append(s);
    *s = Vec::new();
}

/// [`append_all`], each value through `f`.
fn extend_all<T: Copy>(d: &mut Vec<T>, s: &mut Vec<T>, f: impl Fn(T) -> T) {
    grow(d, s.len());
    d.extend(s.iter().map(|&x| f(x)));
    *s = Vec::new();
}

/// Room in `d` for `more` values: exactly, or half `d`'s length if that is more.
fn grow<T>(d: &mut Vec<T>, more: usize) {
    let len = d.len();
    if d.capacity() - len < more {
        d.reserve_exact(more.max(len / 2));
    }
}

/// What a merged shard's ids map to in the reader it is merged into, made from its strings and
/// tracks before its slices are appended.
pub(super) struct MergeMaps {
    smap: Vec<StrId>,
    tmap: Vec<u32>,
    /// The shard's first slice's index in the merged reader.
    pub first: u32,
}

impl MergeMaps {
    pub fn s(&self, id: StrId) -> StrId {
        self.smap.get(id.index()).copied().unwrap_or(StrId::EMPTY)
    }

    pub fn t(&self, x: u32) -> u32 {
        self.tmap.get(x as usize).copied().unwrap_or(0)
    }

    fn v(&self, x: IdVal) -> IdVal {
        match x {
            IdVal::Str(id) => IdVal::Str(self.s(id)),
            int => int,
        }
    }
}

impl Builder {
    /// Interns `o`'s strings and tracks here, in its order of first use: the maps its slices and
    /// the rest go through.
    pub(super) fn merge_maps(&mut self, o: &Builder) -> MergeMaps {
        let smap: Vec<StrId> = (0..o.trace.strings.len() as u32)
            .map(|i| self.trace.strings.intern(o.trace.strings.resolve(StrId(i))))
            .collect();
        let mut m = MergeMaps {
            smap,
            tmap: Vec::new(),
            first: self.staged.len() as u32,
        };
        m.tmap = o
            .trace
            .tracks
            .iter()
            .map(|t| self.track(m.v(t.pid), m.v(t.tid)))
            .collect();
        m
    }

    /// Appends `o`, the builder of the next shard, as though its events had been ingested here.
    pub(super) fn absorb(&mut self, mut o: Builder) {
        let m = self.merge_maps(&o);
        let (s, t) = (|id| m.s(id), |x| m.t(x));
        // Column by column, each of the shard's chunks freed once copied: the merge then holds
        // one chunk of a column twice, not the shard's slices.
        let (d, x) = (&mut self.staged, &mut o.staged);
        d.start.append_mapped(&mut x.start, |v| v);
        d.dur.append_mapped(&mut x.dur, |v| v);
        d.track.append_mapped(&mut x.track, t);
        d.name.append_mapped(&mut x.name, s);
        d.cat.append_mapped(&mut x.cat, s);
        d.kind.append_mapped(&mut x.kind, |v| v);
        d.external_id.append_mapped(&mut x.external_id, |v| v);
        d.correlation.append_mapped(&mut x.correlation, |v| v);
        d.rf_id.append_mapped(&mut x.rf_id, |v| v);
        d.input_dims.append_mapped(&mut x.input_dims, s);
        d.input_types.append_mapped(&mut x.input_types, s);
        let args = x.args.take_vec();
        self.absorb_rest(o, &m, args);
    }

    /// The merge after the shard's slice columns (all but its args, `args`: its slices' args
    /// records in its own arena) were appended through `m`: the args, the open and unmatched
    /// `B`/`E`s, GPU details, instants, counters, flows, names and top-level keys.
    pub(super) fn absorb_rest(&mut self, mut o: Builder, m: &MergeMaps, mut args: Vec<(u32, u32)>) {
        let (s, t, v) = (|id| m.s(id), |x| m.t(x), |x| m.v(x));
        let first = m.first;

        // `E`s that found nothing open in their shard close what the earlier shards left open.
        let (mut unmatched, mut kinds_before) = (0u64, 0usize);
        for e in &o.unmatched_ends {
            let open = self.open.get_mut(&t(e.track)).and_then(Vec::pop);
            match (open, e.ts) {
                (Some(i), Some(ts)) => self.close(Some(i), Some(ts)),
                _ => {
                    if unmatched == 0 {
                        kinds_before = e.kinds_before as usize;
                    }
                    unmatched += 1;
                }
            }
        }
        o.trace
            .warnings
            .add_as_of(WarningKind::UnmatchedEnd, kinds_before, unmatched);
        for (track, stack) in o.open.drain() {
            let mine = self.open.entry(t(track)).or_default();
            mine.extend(stack.iter().map(|&i| i + first));
        }

        // Args records, copied in the order they were stored (slices' and instants' interleaved).
        let kmap = self.trace.args.key_map(&o.trace.args);
        let (ns, ni) = (args.len(), o.trace.instants.ts.len());
        let mut instant_args = Vec::with_capacity(ni);
        let instants = &o.trace.instants.args;
        let mut copier = self.trace.args.copier(&o.trace.args, &kmap);
        let (mut i, mut j) = (0, 0);
        loop {
            while i < ns && args[i].1 == 0 {
                args[i] = (0, 0);
                i += 1;
            }
            while j < ni && instants[j].1 == 0 {
                instant_args.push((0, 0));
                j += 1;
            }
            let slice_first = match (i < ns, j < ni) {
                (false, false) => break,
                (true, true) => args[i].0 < instants[j].0,
                (a, _) => a,
            };
            if slice_first {
                args[i] = copier.copy(args[i]);
                i += 1;
            } else {
                instant_args.push(copier.copy(instants[j]));
                j += 1;
            }
        }
        drop(copier);
        drop(std::mem::take(&mut o.trace.args));
        self.staged.args.extend_from_slice(&args);
        drop(args);

        let (g, h) = (&mut self.trace.gpu, &mut o.trace.gpu);
        extend_all(&mut g.slice, &mut h.slice, |i| i + first);
        append_all(&mut g.device, &mut h.device);
        append_all(&mut g.stream, &mut h.stream);
        append_all(&mut g.grid, &mut h.grid);
        append_all(&mut g.block, &mut h.block);
        append_all(&mut g.registers, &mut h.registers);
        append_all(&mut g.shared_memory, &mut h.shared_memory);
        append_all(&mut g.blocks_per_sm, &mut h.blocks_per_sm);
        append_all(&mut g.warps_per_sm, &mut h.warps_per_sm);
        append_all(&mut g.occupancy_pct, &mut h.occupancy_pct);
        append_all(&mut g.bytes, &mut h.bytes);
        append_all(&mut g.bandwidth_gbs, &mut h.bandwidth_gbs);
        append_all(&mut g.launch, &mut h.launch);
        let f = &mut self.trace.flops;
        extend_all(&mut f.slice, &mut o.trace.flops.slice, |i| i + first);
        append_all(&mut f.flops, &mut o.trace.flops.flops);

        let (di, xi) = (&mut self.trace.instants, &mut o.trace.instants);
        append_all(&mut di.ts, &mut xi.ts);
        extend_all(&mut di.track, &mut xi.track, t);
        extend_all(&mut di.name, &mut xi.name, s);
        extend_all(&mut di.cat, &mut xi.cat, s);
        append_all(&mut di.args, &mut { instant_args });

        let (dm, xm) = (&mut self.trace.memory, &mut o.trace.memory);
        append_all(&mut dm.ts, &mut xm.ts);
        extend_all(&mut dm.track, &mut xm.track, t);
        append_all(&mut dm.device_type, &mut xm.device_type);
        append_all(&mut dm.device_id, &mut xm.device_id);
        append_all(&mut dm.addr, &mut xm.addr);
        append_all(&mut dm.bytes, &mut xm.bytes);
        append_all(&mut dm.total_allocated, &mut xm.total_allocated);
        append_all(&mut dm.total_reserved, &mut xm.total_reserved);

        let xc = &o.trace.counters;
        let cmap: Vec<u32> = (0..xc.series_name.len())
            .map(|k| {
                let (pid, name) = (v(xc.series_pid[k]), s(xc.series_name[k]));
                let c = &mut self.trace.counters;
                let next = c.series_name.len() as u32;
                let series = *self.counter_series.entry((pid, name)).or_insert(next);
                if series == next {
                    c.series_name.push(name);
                    c.series_pid.push(pid);
                }
                series
            })
            .collect();
        let c = &mut self.trace.counters;
        c.series.extend(
            xc.series
                .iter()
                .map(|&k| cmap.get(k as usize).copied().unwrap_or(0)),
        );
        c.ts.extend_from_slice(&xc.ts);
        c.value.extend_from_slice(&xc.value);

        // Pushed one by one, the doubling held the old and new ends at once.
        grow(&mut self.flow_ends, o.flow_ends.len());
        for mut e in o.flow_ends.drain(..) {
            e.cat = s(e.cat);
            e.track = t(e.track);
            if e.named {
                e.id = i64::from(s(StrId((e.id & !(1 << 62)) as u32)).0) | (1 << 62);
            }
            self.flow_ends.push(e);
        }

        for (pid, m) in o.process_names.drain() {
            let e = self.process_names.entry(v(pid)).or_default();
            e.name = m.name.map(s).or(e.name);
            e.labels = m.labels.map(s).or(e.labels);
            e.sort_index = m.sort_index.or(e.sort_index);
        }
        for ((pid, tid), m) in o.thread_names.drain() {
            let e = self.thread_names.entry((v(pid), v(tid))).or_default();
            e.name = m.name.map(s).or(e.name);
            e.sort_index = m.sort_index.or(e.sort_index);
        }

        let (dm, xm, set) = (&mut self.trace.meta, &mut o.trace.meta, o.top_set);
        if set & top::SCHEMA != 0 {
            dm.schema_version = xm.schema_version;
        }
        if set & top::NAME != 0 {
            dm.trace_name = xm.trace_name.take();
        }
        if set & top::UNIT != 0 {
            dm.display_time_unit = xm.display_time_unit.take();
        }
        if set & top::BASE_TIME != 0 {
            dm.base_time_ns = xm.base_time_ns;
        }
        if set & top::DEVICES != 0 {
            dm.devices = std::mem::take(&mut xm.devices);
        }
        if set & top::DISTRIBUTED != 0 {
            dm.distributed = xm.distributed.take();
        }
        self.top_set |= set;
        self.trace.warnings.extend(&o.trace.warnings);
    }
}
