//! A shard's reader as bytes (`model::wire` sections), so one worker's wasm instance can merge
//! what another read: the parse state, the model so far ([`crate::model::Trace`]'s sections, its
//! slices still staged) and the builder's maps. Both ends are the same build; every index is
//! checked on the way in, so bad bytes are an error, never a panic in the merge.

use super::build::{Builder, FlowEnd, ProcMeta, ThreadMeta, UnmatchedEnd};
use super::staged::Chunked;
use super::{KinetoReader, Sink, State};
use crate::error::Result;
use crate::model::wire::{bad, Decoder, Get, Wire};
use crate::model::{IdVal, Ns, StrId};

/// Calls `$m!(column)` for each staged slice column, in wire order.
macro_rules! staged_columns {
    ($m:ident) => {
        $m!(start);
        $m!(dur);
        $m!(track);
        $m!(name);
        $m!(cat);
        $m!(kind);
        $m!(external_id);
        $m!(correlation);
        $m!(rf_id);
        $m!(input_dims);
        $m!(input_types);
        $m!(args);
    };
}

/// Sections after the trace's: the parse state and maps, then the staged columns.
const TAIL_SECTIONS: usize = 13;

fn state_tag(s: State) -> u8 {
    match s {
        State::Start => 0,
        State::TopKeys => 1,
        State::Events { bare: false } => 2,
        State::Events { bare: true } => 3,
        State::Done => 4,
    }
}

fn state_of(tag: u8) -> Result<State> {
    Ok(match tag {
        0 => State::Start,
        1 => State::TopKeys,
        2 => State::Events { bare: false },
        3 => State::Events { bare: true },
        4 => State::Done,
        _ => return Err(bad("a parse state")),
    })
}

impl KinetoReader {
    /// This reader (a shard read in a worker) as sections; `None` for the two-thread reader,
    /// which no worker runs.
    pub fn to_sections(&self) -> Option<Vec<Vec<u8>>> {
        let n = self.section_count()?;
        (0..n).map(|k| self.section(k)).collect()
    }

    /// How many sections [`KinetoReader::to_sections`] makes (`None` as there).
    pub fn section_count(&self) -> Option<usize> {
        let Sink::Direct(b) = &self.sink else {
            return None;
        };
        Some(crate::model::wire::section_count(&b.trace) + TAIL_SECTIONS)
    }

    /// Section `k` of [`KinetoReader::to_sections`], made alone, so a worker can hand its shard
    /// over one section at a time instead of holding every section beside the shard.
    pub fn section(&self, k: usize) -> Option<Vec<u8>> {
        let Sink::Direct(b) = &self.sink else {
            return None;
        };
        let n = crate::model::wire::section_count(&b.trace);
        if k < n {
            return crate::model::wire::section(&b.trace, k);
        }
        if k == n {
            return Some(self.state_section(b));
        }
        let (st, want) = (&b.staged, k - n - 1);
        let mut i = 0;
        macro_rules! enc {
            ($c:ident) => {
                if i == want {
                    return Some(staged_column(&st.$c));
                }
                i += 1;
            };
        }
        staged_columns!(enc);
        let _ = i;
        None
    }

    /// The parse state and the builder's maps, as one section.
    fn state_section(&self, b: &Builder) -> Vec<u8> {
        let mut s = Vec::new();
        state_tag(self.state).put(&mut s);
        self.base.put(&mut s);
        self.saw_trace_events.put(&mut s);
        self.events_not_array.put(&mut s);
        self.bare_array.put(&mut s);
        self.event_count.put(&mut s);
        crate::model::wire::put_bytes(&mut s, &self.buf);
        b.top_set.put(&mut s);
        b.shard.put(&mut s);
        let mut open: Vec<(u32, Vec<u32>)> = b.open.iter().map(|(&t, v)| (t, v.clone())).collect();
        open.sort_unstable_by_key(|o| o.0);
        open.put(&mut s);
        (b.unmatched_ends.len() as u32).put(&mut s);
        for e in &b.unmatched_ends {
            e.track.put(&mut s);
            e.ts.put(&mut s);
            e.kinds_before.put(&mut s);
        }
        (b.process_names.len() as u32).put(&mut s);
        for (pid, m) in &b.process_names {
            pid.put(&mut s);
            m.name.put(&mut s);
            m.labels.put(&mut s);
            m.sort_index.put(&mut s);
        }
        (b.thread_names.len() as u32).put(&mut s);
        for ((pid, tid), m) in &b.thread_names {
            pid.put(&mut s);
            tid.put(&mut s);
            m.name.put(&mut s);
            m.sort_index.put(&mut s);
        }
        (b.flow_ends.len() as u32).put(&mut s);
        for f in &b.flow_ends {
            f.cat.put(&mut s);
            f.id.put(&mut s);
            f.ph.put(&mut s);
            f.ts.put(&mut s);
            f.track.put(&mut s);
            f.enclosing.put(&mut s);
            f.named.put(&mut s);
        }
        s
    }

    /// A reader back from [`KinetoReader::to_sections`].
    pub fn from_sections(sections: &[&[u8]]) -> Result<KinetoReader> {
        let mut d = ShardDecoder::new(sections.len())?;
        for s in sections {
            d.push(s)?;
        }
        d.finish()
    }
}

/// [`KinetoReader::from_sections`] one section at a time, so a worker can drop each section's
/// bytes once it is read: holding a whole shard's sections beside the shard they decode to was
/// most of the merging worker's peak memory.
pub struct ShardDecoder {
    /// The trace's sections still to come (then the tail's [`TAIL_SECTIONS`]).
    trace_left: usize,
    trace: Option<Decoder>,
    /// The reader, once the trace's sections and the state section are read.
    reader: Option<KinetoReader>,
    /// The staged column the next section holds (its index in `staged_columns!`).
    col: usize,
    /// Slices each staged column is made to hold as one block ([`Chunked::reserve_flat`]); 0:
    /// chunks.
    reserve: usize,
}

impl ShardDecoder {
    /// For a shard of `count` sections.
    pub fn new(count: usize) -> Result<ShardDecoder> {
        if count < TAIL_SECTIONS + 1 {
            return Err(bad("shard sections missing"));
        }
        Ok(ShardDecoder {
            trace_left: count - TAIL_SECTIONS,
            trace: Some(Decoder::default()),
            reader: None,
            col: 0,
            reserve: 0,
        })
    }

    /// Makes each staged column one block of `slices` values (the shard's and those of the
    /// shards to be merged after it), as [`Chunked::reserve_flat`].
    pub fn reserve(mut self, slices: usize) -> ShardDecoder {
        self.reserve = slices;
        self
    }

    /// Takes the next section.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        if self.trace_left > 0 {
            self.trace_left -= 1;
            return match &mut self.trace {
                Some(d) => d.push(section),
                None => Err(bad("shard sections out of order")),
            };
        }
        let Some(r) = &mut self.reader else {
            let t = self
                .trace
                .take()
                .ok_or_else(|| bad("shard sections out of order"))?
                .finish_unchecked()?;
            self.reader = Some(state_of_section(t, section)?);
            return Ok(());
        };
        let Sink::Direct(b) = &mut r.sink else {
            return Err(bad("shard sections out of order"));
        };
        let (st, k, flat) = (&mut b.staged, self.col, self.reserve);
        let mut i = 0;
        macro_rules! dec {
            ($c:ident) => {
                if i == k {
                    st.$c.reserve_flat(flat);
                    read_into(&mut st.$c, section)?;
                }
                i += 1;
            };
        }
        staged_columns!(dec);
        if k >= i {
            return Err(bad("more shard sections than columns"));
        }
        self.col += 1;
        Ok(())
    }

    /// The shard's reader once its trace's sections and its state section were taken, its slices
    /// not yet read: for a merge that decodes them straight onto the merged reader's columns
    /// (`incoming.rs`). Its indices other than its slices' are checked there, once its first
    /// column says how many slices it has ([`check_rest`]).
    pub fn take_reader(&mut self) -> Option<KinetoReader> {
        self.reader.take()
    }

    /// The reader, once every section was taken.
    pub fn finish(self) -> Result<KinetoReader> {
        let mut r = self.reader.ok_or_else(|| bad("shard sections missing"))?;
        if self.col != TAIL_SECTIONS - 1 {
            return Err(bad("shard sections missing"));
        }
        let Sink::Direct(b) = &mut r.sink else {
            return Err(bad("shard sections missing"));
        };
        for (i, tr) in b.trace.tracks.iter().enumerate() {
            b.track_of.insert((tr.pid, tr.tid), i as u32);
        }
        b.last_track = None;
        let c = &b.trace.counters;
        for (k, (&pid, &name)) in c.series_pid.iter().zip(&c.series_name).enumerate() {
            b.counter_series.insert((pid, name), k as u32);
        }
        check(b)?;
        Ok(r)
    }
}

/// A staged column as one section, as `wire::column` writes a `Vec` (no whole-column `Vec` in
/// between).
fn staged_column<T: Wire + Copy>(c: &Chunked<T>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + c.len() * std::mem::size_of::<T>());
    (c.len() as u32).put(&mut out);
    c.put_all(&mut out);
    out
}

/// Appends a column's section to its staged chunks (no whole-column `Vec` in between).
fn read_into<T: Wire + Copy>(c: &mut Chunked<T>, section: &[u8]) -> Result<()> {
    let mut g = Get::new(section);
    let n = g.count()?;
    c.extend_from_wire(&mut g, n)?;
    g.done()
}

/// The reader of a shard whose model so far is `t`, from its state section (the parse state and
/// the builder's maps).
fn state_of_section(t: crate::model::Trace, section: &[u8]) -> Result<KinetoReader> {
    let mut b = Builder::default();
    b.trace = t;
    let mut r = KinetoReader::new();
    let mut g = Get::new(section);
    r.state = state_of(u8::get(&mut g)?)?;
    r.base = u64::get(&mut g)?;
    r.saw_trace_events = bool::get(&mut g)?;
    r.events_not_array = bool::get(&mut g)?;
    r.bare_array = bool::get(&mut g)?;
    r.event_count = u64::get(&mut g)?;
    r.buf = g.bytes()?.to_vec();
    b.top_set = u8::get(&mut g)?;
    b.shard = bool::get(&mut g)?;
    b.open = Vec::<(u32, Vec<u32>)>::get(&mut g)?.into_iter().collect();
    for _ in 0..g.count()? {
        b.unmatched_ends.push(UnmatchedEnd {
            track: u32::get(&mut g)?,
            ts: Option::<Ns>::get(&mut g)?,
            kinds_before: u32::get(&mut g)?,
        });
    }
    for _ in 0..g.count()? {
        let pid = IdVal::get(&mut g)?;
        let m = ProcMeta {
            name: Option::get(&mut g)?,
            labels: Option::get(&mut g)?,
            sort_index: Option::<Option<i64>>::get(&mut g)?,
        };
        b.process_names.insert(pid, m);
    }
    for _ in 0..g.count()? {
        let key = (IdVal::get(&mut g)?, IdVal::get(&mut g)?);
        let m = ThreadMeta {
            name: Option::get(&mut g)?,
            sort_index: Option::<Option<i64>>::get(&mut g)?,
        };
        b.thread_names.insert(key, m);
    }
    // At its size: pushed one by one, the doubling held the old and new ends at once (the merge's
    // largest transient left on a 304 MB trace).
    let flows = g.count()?;
    b.flow_ends.reserve_exact(flows);
    for _ in 0..flows {
        b.flow_ends.push(FlowEnd {
            cat: StrId::get(&mut g)?,
            id: i64::get(&mut g)?,
            ph: u8::get(&mut g)?,
            ts: Ns::get(&mut g)?,
            track: u32::get(&mut g)?,
            enclosing: bool::get(&mut g)?,
            named: bool::get(&mut g)?,
        });
    }
    g.done()?;
    r.sink = Sink::Direct(b);
    Ok(r)
}

/// Every index the merge and `finish` follow is in range.
fn check(b: &Builder) -> Result<()> {
    let s = &b.staged;
    let n = s.len();
    let lens = [
        s.dur.len(),
        s.track.len(),
        s.name.len(),
        s.cat.len(),
        s.kind.len(),
        s.external_id.len(),
        s.correlation.len(),
        s.rf_id.len(),
        s.input_dims.len(),
        s.input_types.len(),
        s.args.len(),
    ];
    let tracks = b.trace.tracks.len() as u32;
    let strings = b.trace.strings.len() as u32;
    let str_ok = |id: StrId| id.0 < strings;
    let staged_ok = (0..n).all(|i| {
        s.track.get(i) < tracks
            && str_ok(s.name.get(i))
            && str_ok(s.cat.get(i))
            && str_ok(s.input_dims.get(i))
            && str_ok(s.input_types.get(i))
    });
    if lens.iter().all(|&l| l == n) && staged_ok {
        check_rest(b, n)
    } else {
        Err(bad("a shard whose indices do not fit together"))
    }
}

/// [`check`] but for the staged slices' own values, for a shard of `n` slices.
pub(super) fn check_rest(b: &Builder, n: usize) -> Result<()> {
    let t = &b.trace;
    let tracks = t.tracks.len() as u32;
    let strings = t.strings.len() as u32;
    let series = t.counters.series_name.len() as u32;
    let str_ok = |id: StrId| id.0 < strings;
    let idval_ok = |v: &IdVal| !matches!(v, IdVal::Str(id) if !str_ok(*id));
    let ok = t
        .tracks
        .iter()
        .all(|tr| idval_ok(&tr.pid) && idval_ok(&tr.tid))
        && t.gpu
            .slice
            .iter()
            .chain(&t.flops.slice)
            .all(|&i| (i as usize) < n)
        && t.instants
            .track
            .iter()
            .chain(&t.memory.track)
            .all(|&x| x < tracks)
        && t.instants
            .name
            .iter()
            .chain(&t.instants.cat)
            .all(|&x| str_ok(x))
        && t.counters.series.iter().all(|&x| x < series)
        && t.counters.series_name.iter().all(|&x| str_ok(x))
        && t.counters.series_pid.iter().all(idval_ok)
        && b.open
            .iter()
            .all(|(&tr, v)| tr < tracks && v.iter().all(|&i| (i as usize) < n))
        && b.unmatched_ends.iter().all(|e| e.track < tracks)
        && b.flow_ends.iter().all(|f| {
            f.track < tracks
                && str_ok(f.cat)
                && (!f.named || (f.id & !(1 << 62)) < i64::from(strings))
        })
        && b.process_names.iter().all(|(pid, m)| {
            idval_ok(pid) && m.name.is_none_or(str_ok) && m.labels.is_none_or(str_ok)
        })
        && b.thread_names
            .iter()
            .all(|((pid, tid), m)| idval_ok(pid) && idval_ok(tid) && m.name.is_none_or(str_ok));
    if ok {
        Ok(())
    } else {
        Err(bad("a shard whose indices do not fit together"))
    }
}
