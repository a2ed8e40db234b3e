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
use super::shard_wire::ShardDecoder;
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
    fn stopped_between_events(&self, at: u64, bare: bool) -> bool {
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

    /// [`KinetoReader::absorb`] for a shard read in another wasm instance, as its sections
    /// (`shard_wire.rs`) after a status section (`None`, or the error that stopped it). When the cut
    /// was not an event boundary the caller must push the shard's bytes itself.
    pub fn merge_sections(&mut self, start: u64, bare: bool, sections: &[&[u8]]) -> Result<Merge> {
        let Some(mut inc) = self.incoming(start, bare, sections.len())? else {
            return Ok(Merge::NotABoundary);
        };
        for s in sections {
            inc.push(s)?;
        }
        self.merge_incoming(inc)?;
        Ok(Merge::Merged)
    }

    /// [`KinetoReader::merge_sections`] one section at a time: the shard that starts at `start`,
    /// `count` sections with its status section; `None` when the cut was not an event boundary
    /// (push the shard's bytes instead). Give it the sections in order, then
    /// [`KinetoReader::merge_incoming`].
    pub fn incoming(&self, start: u64, bare: bool, count: usize) -> Result<Option<IncomingShard>> {
        if !self.stopped_between_events(start, bare) {
            return Ok(None);
        }
        if count == 0 {
            return Err(crate::model::wire::bad("shard sections missing"));
        }
        Ok(Some(IncomingShard {
            start,
            count,
            decoder: None,
        }))
    }

    /// Merges a shard whose sections were all given to `inc`.
    pub fn merge_incoming(&mut self, inc: IncomingShard) -> Result<()> {
        let Some(d) = inc.decoder else {
            return Err(crate::model::wire::bad("shard sections missing"));
        };
        let n = d.finish()?;
        if n.base < inc.start {
            return Err(crate::model::wire::bad(
                "a shard that ends before it starts",
            ));
        }
        self.merge(n);
        Ok(())
    }

    /// Takes over `n`, a shard that starts exactly where this reader stopped.
    fn merge(&mut self, n: KinetoReader) {
        if let (Sink::Direct(a), Sink::Direct(b)) = (&mut self.sink, n.sink) {
            a.absorb(b);
        }
        self.buf = n.buf;
        self.base = n.base;
        self.state = n.state;
        self.saw_trace_events |= n.saw_trace_events;
        self.events_not_array |= n.events_not_array;
        self.event_count += n.event_count;
    }
}

/// A shard arriving section by section ([`KinetoReader::incoming`]).
pub struct IncomingShard {
    start: u64,
    /// Its sections, the status section included.
    count: usize,
    /// The shard's decoder, once its status section said it has no error.
    decoder: Option<ShardDecoder>,
}

impl IncomingShard {
    /// Takes the next section: the status first (the shard's own error, returned here), then the
    /// shard's.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        if let Some(d) = &mut self.decoder {
            return d.push(section);
        }
        let mut g = crate::model::wire::Get::new(section);
        if let Some(e) = <Option<crate::Error> as crate::model::wire::Wire>::get(&mut g)? {
            return Err(e);
        }
        self.decoder = Some(ShardDecoder::new(self.count - 1)?);
        Ok(())
    }
}

/// What [`KinetoReader::merge_sections`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    Merged,
    /// The cut was not an event boundary: the shard's bytes must be read here instead.
    NotABoundary,
}

impl Builder {
    /// Appends `o`, the builder of the next shard, as though its events had been ingested here.
    pub(super) fn absorb(&mut self, mut o: Builder) {
        let smap: Vec<StrId> = (0..o.trace.strings.len() as u32)
            .map(|i| self.trace.strings.intern(o.trace.strings.resolve(StrId(i))))
            .collect();
        let s = |id: StrId| smap.get(id.index()).copied().unwrap_or(StrId::EMPTY);
        let v = |x: IdVal| match x {
            IdVal::Str(id) => IdVal::Str(s(id)),
            int => int,
        };
        let tmap: Vec<u32> = o
            .trace
            .tracks
            .iter()
            .map(|t| self.track(v(t.pid), v(t.tid)))
            .collect();
        let t = |x: u32| tmap.get(x as usize).copied().unwrap_or(0);
        let first = self.staged.len() as u32;

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
        let (ns, ni) = (o.staged.len(), o.trace.instants.ts.len());
        let mut slice_args = Vec::with_capacity(ns);
        let mut instant_args = Vec::with_capacity(ni);
        let instants = &o.trace.instants.args;
        let (mut i, mut j) = (0, 0);
        loop {
            while i < ns && o.staged.args.get(i).1 == 0 {
                slice_args.push((0, 0));
                i += 1;
            }
            while j < ni && instants[j].1 == 0 {
                instant_args.push((0, 0));
                j += 1;
            }
            let slice_first = match (i < ns, j < ni) {
                (false, false) => break,
                (true, true) => o.staged.args.get(i).0 < instants[j].0,
                (a, _) => a,
            };
            if slice_first {
                let r = o.staged.args.get(i);
                slice_args.push(self.trace.args.copy_record(&o.trace.args, r, &kmap));
                i += 1;
            } else {
                let r = instants[j];
                instant_args.push(self.trace.args.copy_record(&o.trace.args, r, &kmap));
                j += 1;
            }
        }

        // The shard's args text is copied: free it before its columns are.
        drop(std::mem::take(&mut o.trace.args));

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
        drop(std::mem::take(&mut x.args));
        for k in 0..ns {
            d.args.push(slice_args.get(k).copied().unwrap_or((0, 0)));
        }
        drop(slice_args);

        let (g, h) = (&mut self.trace.gpu, &mut o.trace.gpu);
        g.slice.extend(h.slice.iter().map(|&i| i + first));
        g.device.append(&mut h.device);
        g.stream.append(&mut h.stream);
        g.grid.append(&mut h.grid);
        g.block.append(&mut h.block);
        g.registers.append(&mut h.registers);
        g.shared_memory.append(&mut h.shared_memory);
        g.blocks_per_sm.append(&mut h.blocks_per_sm);
        g.warps_per_sm.append(&mut h.warps_per_sm);
        g.occupancy_pct.append(&mut h.occupancy_pct);
        g.bytes.append(&mut h.bytes);
        g.bandwidth_gbs.append(&mut h.bandwidth_gbs);
        g.launch.append(&mut h.launch);
        let f = &mut self.trace.flops;
        f.slice
            .extend(o.trace.flops.slice.iter().map(|&i| i + first));
        f.flops.append(&mut o.trace.flops.flops);

        let (di, xi) = (&mut self.trace.instants, &mut o.trace.instants);
        di.ts.append(&mut xi.ts);
        di.track.extend(xi.track.iter().map(|&x| t(x)));
        di.name.extend(xi.name.iter().map(|&x| s(x)));
        di.cat.extend(xi.cat.iter().map(|&x| s(x)));
        di.args.extend(instant_args);

        let (dm, xm) = (&mut self.trace.memory, &mut o.trace.memory);
        dm.ts.append(&mut xm.ts);
        dm.track.extend(xm.track.iter().map(|&x| t(x)));
        dm.device_type.append(&mut xm.device_type);
        dm.device_id.append(&mut xm.device_id);
        dm.addr.append(&mut xm.addr);
        dm.bytes.append(&mut xm.bytes);
        dm.total_allocated.append(&mut xm.total_allocated);
        dm.total_reserved.append(&mut xm.total_reserved);

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
