//! A model as bytes, to move it between wasm instances (the page's reader workers and the page):
//! a list of sections, each a column or a small table, so the receiver can take them one at a time
//! (the page decodes one per task and never holds the whole encoding in its memory).
//!
//! Little-endian fixed-width values, lengths as `u32`; nothing is shared with another version of
//! the code (both ends are the same build), so there is no version field. Every read is checked:
//! bytes that end early or hold an impossible value are an [`ErrorKind::Syntax`] error, never a
//! panic.

use super::args::ArgsArena;
use super::strings::{Interner, StrId};
use super::trace::*;
use crate::error::{Error, ErrorKind, Result};
use crate::warnings::{WarningKind, Warnings};

/// Why a section could not be read.
pub fn bad(what: &str) -> Error {
    Error::new(
        ErrorKind::Syntax(format!("model data from a reader worker: {what}")),
        0,
    )
}

/// Reads values back from one section.
pub struct Get<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Get<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Get { b, i: 0 }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.i.checked_add(n).ok_or_else(|| bad("length"))?;
        let s = self.b.get(self.i..end).ok_or_else(|| bad("cut short"))?;
        self.i = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub fn count(&mut self) -> Result<usize> {
        let n = u32::get(self)? as usize;
        // Every element takes at least one byte: a larger count is corrupt, not a huge allocation.
        if n > self.b.len() - self.i {
            return Err(bad("a count larger than its data"));
        }
        Ok(n)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.count()?;
        self.take(n)
    }

    pub fn str(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| bad("text that is not UTF-8"))
    }

    pub fn string(&mut self) -> Result<String> {
        self.str().map(str::to_owned)
    }

    pub fn done(&self) -> Result<()> {
        if self.i == self.b.len() {
            Ok(())
        } else {
            Err(bad("trailing bytes"))
        }
    }
}

/// A value with a fixed encoding.
pub trait Wire: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn get(g: &mut Get<'_>) -> Result<Self>;
}

macro_rules! wire_num {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(g: &mut Get<'_>) -> Result<Self> {
                g.array().map(<$t>::from_le_bytes)
            }
        }
    )*};
}
wire_num!(u8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Wire for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(u8::get(g)? != 0)
    }
}

impl Wire for StrId {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        u32::get(g).map(StrId)
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.put(out);
            }
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        match u8::get(g)? {
            0 => Ok(None),
            1 => T::get(g).map(Some),
            _ => Err(bad("an option tag")),
        }
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok((A::get(g)?, B::get(g)?))
    }
}

impl Wire for [u32; 3] {
    fn put(&self, out: &mut Vec<u8>) {
        self.iter().for_each(|v| v.put(out));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok([u32::get(g)?, u32::get(g)?, u32::get(g)?])
    }
}

impl Wire for String {
    fn put(&self, out: &mut Vec<u8>) {
        put_bytes(out, self.as_bytes());
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        g.string()
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        (self.len() as u32).put(out);
        self.iter().for_each(|v| v.put(out));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let n = g.count()?;
        (0..n).map(|_| T::get(g)).collect()
    }
}

impl Wire for IdVal {
    fn put(&self, out: &mut Vec<u8>) {
        match *self {
            IdVal::Int(v) => {
                out.push(0);
                v.put(out);
            }
            IdVal::Str(s) => {
                out.push(1);
                s.put(out);
            }
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        match u8::get(g)? {
            0 => i64::get(g).map(IdVal::Int),
            1 => StrId::get(g).map(IdVal::Str),
            _ => Err(bad("an id tag")),
        }
    }
}

/// Every slice kind, in declaration order (the wire writes the index).
const KINDS: [SliceKind; 10] = [
    SliceKind::CpuOp,
    SliceKind::UserAnnotation,
    SliceKind::PythonFunction,
    SliceKind::Runtime,
    SliceKind::Driver,
    SliceKind::Kernel,
    SliceKind::Memcpy,
    SliceKind::Memset,
    SliceKind::GpuAnnotation,
    SliceKind::Other,
];

impl Wire for SliceKind {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        KINDS
            .get(u8::get(g)? as usize)
            .copied()
            .ok_or_else(|| bad("a slice kind"))
    }
}

impl Wire for TrackKind {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self == TrackKind::Gpu));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(if bool::get(g)? {
            TrackKind::Gpu
        } else {
            TrackKind::Cpu
        })
    }
}

pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    (b.len() as u32).put(out);
    out.extend_from_slice(b);
}

/// A column as one section.
pub fn column<T: Wire>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + std::mem::size_of_val(v));
    (v.len() as u32).put(&mut out);
    v.iter().for_each(|x| x.put(&mut out));
    out
}

/// A column back from its section.
pub fn read_column<T: Wire>(section: &[u8]) -> Result<Vec<T>> {
    let mut g = Get::new(section);
    let v = Vec::<T>::get(&mut g)?;
    g.done()?;
    Ok(v)
}

impl Wire for Process {
    fn put(&self, out: &mut Vec<u8>) {
        self.pid.put(out);
        self.name.put(out);
        self.labels.put(out);
        self.sort_index.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(Process {
            pid: IdVal::get(g)?,
            name: StrId::get(g)?,
            labels: StrId::get(g)?,
            sort_index: Option::get(g)?,
        })
    }
}

impl Wire for Track {
    fn put(&self, out: &mut Vec<u8>) {
        self.pid.put(out);
        self.tid.put(out);
        self.name.put(out);
        self.sort_index.put(out);
        self.kind.put(out);
        self.device.put(out);
        self.stream.put(out);
        self.first.put(out);
        self.count.put(out);
        self.max_depth.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(Track {
            pid: IdVal::get(g)?,
            tid: IdVal::get(g)?,
            name: StrId::get(g)?,
            sort_index: Option::get(g)?,
            kind: TrackKind::get(g)?,
            device: Option::get(g)?,
            stream: Option::get(g)?,
            first: u32::get(g)?,
            count: u32::get(g)?,
            max_depth: u16::get(g)?,
        })
    }
}

impl Wire for DeviceProps {
    fn put(&self, out: &mut Vec<u8>) {
        self.id.put(out);
        self.name.put(out);
        self.total_global_mem.put(out);
        self.compute_major.put(out);
        self.compute_minor.put(out);
        self.num_sms.put(out);
        self.max_threads_per_sm.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(DeviceProps {
            id: i64::get(g)?,
            name: String::get(g)?,
            total_global_mem: u64::get(g)?,
            compute_major: i64::get(g)?,
            compute_minor: i64::get(g)?,
            num_sms: i64::get(g)?,
            max_threads_per_sm: i64::get(g)?,
        })
    }
}

impl Wire for TraceMeta {
    fn put(&self, out: &mut Vec<u8>) {
        self.schema_version.put(out);
        self.trace_name.put(out);
        self.display_time_unit.put(out);
        self.base_time_ns.put(out);
        self.devices.put(out);
        let d = self.distributed.as_ref();
        d.is_some().put(out);
        if let Some(d) = d {
            d.rank.put(out);
            d.world_size.put(out);
            d.backend.put(out);
        }
        self.bare_array.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(TraceMeta {
            schema_version: Option::get(g)?,
            trace_name: Option::get(g)?,
            display_time_unit: Option::get(g)?,
            base_time_ns: Option::get(g)?,
            devices: Vec::get(g)?,
            distributed: if bool::get(g)? {
                Some(DistributedInfo {
                    rank: Option::get(g)?,
                    world_size: Option::get(g)?,
                    backend: Option::get(g)?,
                })
            } else {
                None
            },
            bare_array: bool::get(g)?,
        })
    }
}

impl Wire for Warnings {
    fn put(&self, out: &mut Vec<u8>) {
        (self.iter().count() as u32).put(out);
        for w in self.iter() {
            (WarningKind::ALL
                .iter()
                .position(|k| *k == w.kind)
                .unwrap_or(0) as u8)
                .put(out);
            w.count.put(out);
            w.examples.put(out);
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let mut w = Warnings::default();
        for _ in 0..g.count()? {
            let kind = WarningKind::ALL
                .get(u8::get(g)? as usize)
                .copied()
                .ok_or_else(|| bad("a warning kind"))?;
            let count = u64::get(g)?;
            let examples = Vec::<String>::get(g)?;
            w.push_counted(kind, count, examples);
        }
        Ok(w)
    }
}

impl Wire for Interner {
    fn put(&self, out: &mut Vec<u8>) {
        (self.len() as u32).put(out);
        for i in 0..self.len() as u32 {
            put_bytes(out, self.resolve(StrId(i)).as_bytes());
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let mut s = Interner::default();
        let n = g.count()?;
        for i in 0..n as u32 {
            // Interning in id order gives each string its id again; a duplicate would not.
            if s.intern(g.str()?) != StrId(i) {
                return Err(bad("a string table with a duplicate"));
            }
        }
        Ok(s)
    }
}

/// The small tables of a trace: strings, metadata, processes, tracks, warnings, counts.
fn head(t: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    t.strings.put(&mut out);
    t.meta.put(&mut out);
    t.processes.put(&mut out);
    t.tracks.put(&mut out);
    t.warnings.put(&mut out);
    t.event_count.put(&mut out);
    t.bytes_read.put(&mut out);
    out
}

fn read_head(t: &mut Trace, section: &[u8]) -> Result<()> {
    let mut g = Get::new(section);
    t.strings = <Interner as Wire>::get(&mut g)?;
    t.meta = TraceMeta::get(&mut g)?;
    t.processes = Vec::get(&mut g)?;
    t.tracks = Vec::get(&mut g)?;
    t.warnings = Warnings::get(&mut g)?;
    t.event_count = u64::get(&mut g)?;
    t.bytes_read = u64::get(&mut g)?;
    g.done()
}

/// Calls `$m!(table.column)` for each column of a trace, in wire order: the one list encoder and
/// decoder share.
macro_rules! trace_columns {
    ($m:ident) => {
        $m!(slices.start);
        $m!(slices.dur);
        $m!(slices.track);
        $m!(slices.name);
        $m!(slices.cat);
        $m!(slices.kind);
        $m!(slices.depth);
        $m!(slices.parent);
        $m!(slices.external_id);
        $m!(slices.correlation);
        $m!(slices.rf_id);
        $m!(slices.input_dims);
        $m!(slices.input_types);
        $m!(slices.args);
        $m!(gpu.slice);
        $m!(gpu.device);
        $m!(gpu.stream);
        $m!(gpu.grid);
        $m!(gpu.block);
        $m!(gpu.registers);
        $m!(gpu.shared_memory);
        $m!(gpu.blocks_per_sm);
        $m!(gpu.warps_per_sm);
        $m!(gpu.occupancy_pct);
        $m!(gpu.bytes);
        $m!(gpu.bandwidth_gbs);
        $m!(gpu.launch);
        $m!(flops.slice);
        $m!(flops.flops);
        $m!(instants.ts);
        $m!(instants.track);
        $m!(instants.name);
        $m!(instants.cat);
        $m!(instants.args);
        $m!(memory.ts);
        $m!(memory.track);
        $m!(memory.device_type);
        $m!(memory.device_id);
        $m!(memory.addr);
        $m!(memory.bytes);
        $m!(memory.total_allocated);
        $m!(memory.total_reserved);
        $m!(counters.series_name);
        $m!(counters.series_pid);
        $m!(counters.series);
        $m!(counters.ts);
        $m!(counters.value);
        $m!(flows.cat);
        $m!(flows.from);
        $m!(flows.to);
    };
}

/// `t` as sections: the small tables, each column, then the args arena's keys and blocks.
pub fn encode(t: &Trace) -> Vec<Vec<u8>> {
    let mut out = vec![head(t)];
    macro_rules! enc {
        ($a:ident . $b:ident) => {
            out.push(column(&t.$a.$b));
        };
    }
    trace_columns!(enc);
    out.extend(args_sections(&t.args));
    out
}

/// The args arena as sections: the key table and block count, then each block.
fn args_sections(a: &ArgsArena) -> Vec<Vec<u8>> {
    let mut head = Vec::new();
    (a.keys().count() as u32).put(&mut head);
    for k in a.keys() {
        put_bytes(&mut head, k);
    }
    (a.blocks().count() as u32).put(&mut head);
    let mut out = vec![head];
    for (start, b) in a.blocks() {
        let mut s = Vec::with_capacity(b.len() + 8);
        start.put(&mut s);
        put_bytes(&mut s, b);
        out.push(s);
    }
    out
}

/// Reads an args arena back, one section at a time.
struct ArgsDecoder {
    keys: Vec<Box<[u8]>>,
    blocks: Vec<(u32, Vec<u8>)>,
    /// Blocks still to come.
    more: usize,
}

impl ArgsDecoder {
    fn new(head: &[u8]) -> Result<Self> {
        let mut g = Get::new(head);
        let n = g.count()?;
        let keys = (0..n)
            .map(|_| g.bytes().map(Box::from))
            .collect::<Result<Vec<_>>>()?;
        let more = u32::get(&mut g)? as usize;
        g.done()?;
        Ok(ArgsDecoder {
            keys,
            blocks: Vec::new(),
            more,
        })
    }

    fn push(&mut self, section: &[u8]) -> Result<()> {
        let mut g = Get::new(section);
        let start = u32::get(&mut g)?;
        let b = g.bytes()?.to_vec();
        g.done()?;
        if self.more == 0 {
            return Err(bad("more args blocks than announced"));
        }
        self.more -= 1;
        self.blocks.push((start, b));
        Ok(())
    }

    fn finish(self) -> Result<ArgsArena> {
        if self.more != 0 {
            return Err(bad("args blocks missing"));
        }
        ArgsArena::from_parts(self.keys, self.blocks)
            .ok_or_else(|| bad("args blocks that do not fit"))
    }
}

/// Rebuilds a trace from the sections of [`encode`], taken one at a time.
#[derive(Default)]
pub struct Decoder {
    t: Trace,
    next: usize,
    args: Option<ArgsDecoder>,
}

impl Decoder {
    /// Takes the next section.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        let k = self.next;
        self.next += 1;
        if k == 0 {
            return read_head(&mut self.t, section);
        }
        let mut i = k - 1;
        let t = &mut self.t;
        macro_rules! dec {
            ($a:ident . $b:ident) => {
                if i == 0 {
                    t.$a.$b = read_column(section)?;
                    return Ok(());
                }
                i -= 1;
            };
        }
        trace_columns!(dec);
        let _ = i;
        match &mut self.args {
            None => self.args = Some(ArgsDecoder::new(section)?),
            Some(a) => a.push(section)?,
        }
        Ok(())
    }

    /// The trace, once every section was taken.
    pub fn finish(self) -> Result<Trace> {
        let mut t = self.t;
        let Some(a) = self.args else {
            return Err(bad("sections missing"));
        };
        t.args = a.finish()?;
        check(&t)?;
        Ok(t)
    }
}

/// The invariants the views index by: parallel columns of one length, ids in range.
fn check(t: &Trace) -> Result<()> {
    let s = &t.slices;
    let n = s.len();
    let same = [
        s.dur.len(),
        s.track.len(),
        s.name.len(),
        s.cat.len(),
        s.kind.len(),
        s.depth.len(),
        s.parent.len(),
        s.external_id.len(),
        s.correlation.len(),
        s.rf_id.len(),
        s.input_dims.len(),
        s.input_types.len(),
        s.args.len(),
    ];
    let g = &t.gpu;
    let rows = g.slice.len();
    let gpu = [
        g.device.len(),
        g.stream.len(),
        g.grid.len(),
        g.block.len(),
        g.registers.len(),
        g.shared_memory.len(),
        g.blocks_per_sm.len(),
        g.warps_per_sm.len(),
        g.occupancy_pct.len(),
        g.bytes.len(),
        g.bandwidth_gbs.len(),
        g.launch.len(),
    ];
    let i = &t.instants;
    let m = &t.memory;
    let c = &t.counters;
    let ok = same.iter().all(|&x| x == n)
        && gpu.iter().all(|&x| x == rows)
        && t.flops.slice.len() == t.flops.flops.len()
        && [i.track.len(), i.name.len(), i.cat.len(), i.args.len()]
            .iter()
            .all(|&x| x == i.ts.len())
        && [
            m.track.len(),
            m.device_type.len(),
            m.device_id.len(),
            m.addr.len(),
            m.bytes.len(),
            m.total_allocated.len(),
            m.total_reserved.len(),
        ]
        .iter()
        .all(|&x| x == m.ts.len())
        && c.series_pid.len() == c.series_name.len()
        && c.series.len() == c.ts.len()
        && c.value.len() == c.ts.len()
        && t.flows.from.len() == t.flows.cat.len()
        && t.flows.to.len() == t.flows.cat.len();
    let strings = t.strings.len() as u32;
    let tracks = t.tracks.len() as u32;
    let in_range = s.track.iter().all(|&x| x < tracks)
        && i.track.iter().all(|&x| x < tracks)
        && m.track.iter().all(|&x| x < tracks)
        && [
            &s.name,
            &s.cat,
            &s.input_dims,
            &s.input_types,
            &i.name,
            &i.cat,
        ]
        .iter()
        .all(|v| v.iter().all(|x| x.0 < strings))
        && s.parent.iter().all(|&p| p == NONE || (p as usize) < n)
        && g.slice
            .iter()
            .chain(&t.flops.slice)
            .all(|&x| (x as usize) < n)
        && g.launch.iter().all(|&p| p == NONE || (p as usize) < n)
        && t.flows
            .from
            .iter()
            .chain(&t.flows.to)
            .all(|&x| (x as usize) < n)
        && c.series.iter().all(|&x| (x as usize) < c.series_name.len())
        && t.tracks
            .iter()
            .all(|tr| tr.first as usize + tr.count as usize <= n);
    if ok && in_range {
        Ok(())
    } else {
        Err(bad("columns that do not fit together"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn cut_or_corrupt_sections_are_errors_not_panics() {
        let mut t = Trace::default();
        t.strings.intern("a");
        let sections = encode(&t);
        let mut d = Decoder::default();
        for s in &sections {
            d.push(s).unwrap();
        }
        assert!(d.finish().is_ok());
        // The head cut short, a column with a huge count, and sections missing.
        let mut d = Decoder::default();
        assert!(d.push(&sections[0][..sections[0].len() - 1]).is_err());
        let mut d = Decoder::default();
        d.push(&sections[0]).unwrap();
        assert!(d.push(&[0xff, 0xff, 0xff, 0x7f, 1]).is_err());
        let mut d = Decoder::default();
        d.push(&sections[0]).unwrap();
        assert!(d.finish().is_err());
    }
}
