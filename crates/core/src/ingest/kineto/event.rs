//! One `traceEvents` entry, scanned without allocating: every field is a borrowed span of the window.

use crate::ingest::json::{Cursor, RawStr, Scan, Stop};
use crate::model::arg_keys::bytes as k;

/// Declares [`ArgSpans`] from its field list.
macro_rules! arg_spans {
    ($($(#[$doc:meta])* $f:ident),* $(,)?) => {
        /// The typed args ([`crate::model::arg_keys`]) that the model keeps in columns, as raw
        /// value spans.
        #[derive(Default, Clone, Copy)]
        pub(super) struct ArgSpans<'a> {
            $($(#[$doc])* pub $f: Option<&'a [u8]>,)*
        }
    };
}

arg_spans!(
    external_id,
    correlation,
    rf_id,
    input_dims,
    input_types,
    flops,
    device,
    stream,
    grid,
    block,
    registers,
    shared_memory,
    blocks_per_sm,
    warps_per_sm,
    occupancy,
    bytes,
    bandwidth,
    total_allocated,
    total_reserved,
    addr,
    device_id,
    device_type,
    /// `name` (metadata events: process/thread names).
    name,
    sort_index,
    labels,
);

/// Which of the typed args keys ([`crate::model::arg_keys`]) an args entry has, as a small number
/// ([`key_of`]; [`key::NONE`] for any other key): the scanner matches each key once and keeps
/// the number with the entry ([`ArgPair`]), and the builder's [`ArgSpans::from_pairs`] and
/// `ArgsKept::store` read it instead of matching the key again (in wasm the second match was a
/// few % of a reader worker).
pub(super) mod key {
    pub const NONE: usize = 0;
    pub const EXTERNAL_ID: usize = 1;
    pub const EXTERNAL_ID_LOWER: usize = 2;
    pub const CORRELATION: usize = 3;
    pub const RECORD_FUNCTION_ID: usize = 4;
    pub const INPUT_DIMS: usize = 5;
    pub const INPUT_DIMS_LOWER: usize = 6;
    pub const INPUT_TYPE: usize = 7;
    pub const FLOPS: usize = 8;
    pub const DEVICE: usize = 9;
    pub const STREAM: usize = 10;
    pub const GRID: usize = 11;
    pub const BLOCK: usize = 12;
    pub const REGISTERS: usize = 13;
    pub const SHARED_MEMORY: usize = 14;
    pub const BLOCKS_PER_SM: usize = 15;
    pub const WARPS_PER_SM: usize = 16;
    pub const OCCUPANCY: usize = 17;
    pub const BYTES: usize = 18;
    pub const BYTES_UPPER: usize = 19;
    pub const BANDWIDTH: usize = 20;
    pub const TOTAL_ALLOCATED: usize = 21;
    pub const TOTAL_RESERVED: usize = 22;
    pub const ADDR: usize = 23;
    pub const DEVICE_ID: usize = 24;
    pub const DEVICE_TYPE: usize = 25;
    pub const NAME: usize = 26;
    pub const SORT_INDEX: usize = 27;
    pub const LABELS: usize = 28;
}

/// The [`key`] number of an args key.
#[inline]
pub(super) fn key_of(name: &[u8]) -> usize {
    match name {
        k::EXTERNAL_ID => key::EXTERNAL_ID,
        k::EXTERNAL_ID_LOWER => key::EXTERNAL_ID_LOWER,
        k::CORRELATION => key::CORRELATION,
        k::RECORD_FUNCTION_ID => key::RECORD_FUNCTION_ID,
        k::INPUT_DIMS => key::INPUT_DIMS,
        k::INPUT_DIMS_LOWER => key::INPUT_DIMS_LOWER,
        k::INPUT_TYPE => key::INPUT_TYPE,
        k::FLOPS => key::FLOPS,
        k::DEVICE => key::DEVICE,
        k::STREAM => key::STREAM,
        k::GRID => key::GRID,
        k::BLOCK => key::BLOCK,
        k::REGISTERS => key::REGISTERS,
        k::SHARED_MEMORY => key::SHARED_MEMORY,
        k::BLOCKS_PER_SM => key::BLOCKS_PER_SM,
        k::WARPS_PER_SM => key::WARPS_PER_SM,
        k::OCCUPANCY => key::OCCUPANCY,
        k::BYTES => key::BYTES,
        k::BYTES_UPPER => key::BYTES_UPPER,
        k::BANDWIDTH => key::BANDWIDTH,
        k::TOTAL_ALLOCATED => key::TOTAL_ALLOCATED,
        k::TOTAL_RESERVED => key::TOTAL_RESERVED,
        k::ADDR => key::ADDR,
        k::DEVICE_ID => key::DEVICE_ID,
        k::DEVICE_TYPE => key::DEVICE_TYPE,
        k::NAME => key::NAME,
        k::SORT_INDEX => key::SORT_INDEX,
        k::LABELS => key::LABELS,
        _ => key::NONE,
    }
}

impl<'a> ArgSpans<'a> {
    /// The column an args key feeds (by its [`key`] number), if any.
    #[inline]
    fn slot(&mut self, key: usize) -> Option<&mut Option<&'a [u8]>> {
        let a = self;
        Some(match key {
            key::EXTERNAL_ID | key::EXTERNAL_ID_LOWER => &mut a.external_id,
            key::CORRELATION => &mut a.correlation,
            key::RECORD_FUNCTION_ID => &mut a.rf_id,
            key::INPUT_DIMS | key::INPUT_DIMS_LOWER => &mut a.input_dims,
            key::INPUT_TYPE => &mut a.input_types,
            key::FLOPS => &mut a.flops,
            key::DEVICE => &mut a.device,
            key::STREAM => &mut a.stream,
            key::GRID => &mut a.grid,
            key::BLOCK => &mut a.block,
            key::REGISTERS => &mut a.registers,
            key::SHARED_MEMORY => &mut a.shared_memory,
            key::BLOCKS_PER_SM => &mut a.blocks_per_sm,
            key::WARPS_PER_SM => &mut a.warps_per_sm,
            key::OCCUPANCY => &mut a.occupancy,
            key::BYTES | key::BYTES_UPPER => &mut a.bytes,
            key::BANDWIDTH => &mut a.bandwidth,
            key::TOTAL_ALLOCATED => &mut a.total_allocated,
            key::TOTAL_RESERVED => &mut a.total_reserved,
            key::ADDR => &mut a.addr,
            key::DEVICE_ID => &mut a.device_id,
            key::DEVICE_TYPE => &mut a.device_type,
            key::NAME => &mut a.name,
            key::SORT_INDEX => &mut a.sort_index,
            key::LABELS => &mut a.labels,
            _ => return None,
        })
    }

    /// The typed args again from the entries' spans and key numbers (the builder thread of the
    /// native reader gets the entries, not 25 spans per event).
    pub fn from_pairs(w: &'a [u8], pairs: &[ArgPair]) -> Self {
        let mut a = ArgSpans::default();
        for p in pairs {
            if let Some(slot) = a.slot(p[4]) {
                *slot = Some(w.get(p[2]..p[3]).unwrap_or_default());
            }
        }
        a
    }
}

/// A byte range of a window, as `(start, end)` offsets.
type Span = (u32, u32);

fn span(w: &[u8], part: &[u8]) -> Span {
    let start = offset(w, part);
    (start as u32, (start + part.len()) as u32)
}

/// The range `s` of `w`; empty when out of range (it never is: spans come from the same window).
fn slice(w: &[u8], s: Span) -> &[u8] {
    w.get(s.0 as usize..s.1 as usize).unwrap_or_default()
}

#[derive(Default)]
pub(super) struct Ev<'a> {
    pub ph: u8,
    pub name: Option<RawStr<'a>>,
    pub cat: Option<RawStr<'a>>,
    pub pid: Option<&'a [u8]>,
    pub tid: Option<&'a [u8]>,
    pub ts: Option<&'a [u8]>,
    pub dur: Option<&'a [u8]>,
    pub id: Option<&'a [u8]>,
    pub bp: Option<RawStr<'a>>,
    /// The whole `args` object, raw.
    pub args: Option<&'a [u8]>,
    /// Where `args` starts, counted from the event's `{`: with the event's offset, its place in
    /// the file (for args left there, `model/args.rs`).
    pub args_rel: u32,
    pub a: ArgSpans<'a>,
    /// A key read above appeared twice (the last value is kept, as `JSON.parse` does).
    pub dup: bool,
}

/// An [`Ev`] as offsets into its window: what the threaded reader hands the builder thread along
/// with the window's bytes.
#[derive(Clone, Copy)]
pub(super) struct EvAt {
    ph: u8,
    name: Option<(Span, bool)>,
    cat: Option<(Span, bool)>,
    pid: Option<Span>,
    tid: Option<Span>,
    ts: Option<Span>,
    dur: Option<Span>,
    id: Option<Span>,
    bp: Option<(Span, bool)>,
    args: Option<Span>,
    args_rel: u32,
    dup: bool,
}

/// Builds `$ty` from `$e` field by field, strings through `$raw` and other spans through `$sp`: the
/// one field list both directions of the [`Ev`] / [`EvAt`] conversion share.
macro_rules! convert_ev {
    ($ty:ident, $e:expr, $raw:expr, $sp:expr $(, $k:ident: $v:expr)*) => {
        $ty {
            ph: $e.ph,
            name: $raw($e.name),
            cat: $raw($e.cat),
            pid: $sp($e.pid),
            tid: $sp($e.tid),
            ts: $sp($e.ts),
            dur: $sp($e.dur),
            id: $sp($e.id),
            bp: $raw($e.bp),
            args: $sp($e.args),
            args_rel: $e.args_rel,
            dup: $e.dup,
            $($k: $v,)*
        }
    };
}

impl<'a> Ev<'a> {
    /// This event's spans as offsets into `w`, the window it was scanned from.
    pub fn at(&self, w: &[u8]) -> EvAt {
        let raw = |r: Option<RawStr<'_>>| r.map(|r| (span(w, r.bytes), r.escaped));
        let sp = |v: Option<&[u8]>| v.map(|v| span(w, v));
        convert_ev!(EvAt, self, raw, sp)
    }
}

impl EvAt {
    /// The event again, borrowing `w` (the same window's bytes); `pairs` are its args entries.
    pub fn get<'a>(&self, w: &'a [u8], pairs: &[ArgPair]) -> Ev<'a> {
        let raw = |r: Option<(Span, bool)>| {
            r.map(|(s, escaped)| RawStr {
                bytes: slice(w, s),
                escaped,
            })
        };
        let sp = |v: Option<Span>| v.map(|s| slice(w, s));
        convert_ev!(Ev, self, raw, sp, a: ArgSpans::from_pairs(w, pairs))
    }
}

/// Byte ranges of one args entry in the window, key (between its quotes) and raw value, then its
/// key's [`key`] number.
pub(super) type ArgPair = [usize; 5];

/// Scans one event object; the cursor must be on its `{`. Every args entry's key and value spans
/// are appended to `pairs` (cleared first) so the builder can copy args compactly without a rescan.
pub(super) fn scan_event<'a>(c: &mut Cursor<'a>, pairs: &mut Vec<ArgPair>) -> Scan<Ev<'a>> {
    pairs.clear();
    let mut ev = Ev::default();
    let event_start = c.i;
    c.expect(b'{', "expected an event object")?;
    if c.peek()? == b'}' {
        c.i += 1;
        return Ok(ev);
    }
    // One bit per key read below, to notice a key given twice.
    let mut seen = 0u16;
    loop {
        let key = c.string()?;
        c.expect(b':', "expected ':' after a key")?;
        let bit = match key.bytes {
            b"ph" => {
                let v = c.value()?;
                ev.ph = match v {
                    [b'"', p, ..] => *p,
                    _ => 0,
                };
                1
            }
            b"name" => {
                ev.name = Some(string_or_raw(c)?);
                2
            }
            b"cat" => {
                ev.cat = Some(string_or_raw(c)?);
                4
            }
            b"pid" => {
                ev.pid = Some(c.value()?);
                8
            }
            b"tid" => {
                ev.tid = Some(c.value()?);
                16
            }
            b"ts" => {
                ev.ts = Some(c.value()?);
                32
            }
            b"dur" => {
                ev.dur = Some(c.value()?);
                64
            }
            b"id" => {
                ev.id = Some(c.value()?);
                128
            }
            b"bp" => {
                ev.bp = Some(string_or_raw(c)?);
                256
            }
            b"args" if c.peek()? == b'{' => {
                let start = c.i;
                scan_args(c, &mut ev.a, pairs)?;
                ev.args = Some(&c.b[start..c.i]);
                ev.args_rel = u32::try_from(start - event_start).unwrap_or(u32::MAX);
                512
            }
            _ => {
                c.value()?;
                0
            }
        };
        ev.dup |= seen & bit != 0;
        seen |= bit;
        if end_of_member(c, "expected ',' or '}' in an event")? {
            return Ok(ev);
        }
    }
}

/// Strings stay strings; any other value (a number used as a name, say) is kept as its raw text.
fn string_or_raw<'a>(c: &mut Cursor<'a>) -> Scan<RawStr<'a>> {
    if c.peek()? == b'"' {
        c.string()
    } else {
        Ok(RawStr {
            bytes: c.value()?,
            escaped: false,
        })
    }
}

fn offset(base: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - base.as_ptr() as usize
}

fn scan_args<'a>(c: &mut Cursor<'a>, a: &mut ArgSpans<'a>, pairs: &mut Vec<ArgPair>) -> Scan<()> {
    c.expect(b'{', "expected args object")?;
    if c.peek()? == b'}' {
        c.i += 1;
        return Ok(());
    }
    loop {
        let key = c.string()?;
        c.expect(b':', "expected ':' after an args key")?;
        let v = c.value()?;
        let (k0, v0) = (offset(c.b, key.bytes), offset(c.b, v));
        let id = key_of(key.bytes);
        pairs.push([k0, k0 + key.bytes.len(), v0, v0 + v.len(), id]);
        if let Some(slot) = a.slot(id) {
            *slot = Some(v);
        }
        if end_of_member(c, "expected ',' or '}' in args")? {
            return Ok(());
        }
    }
}

/// After an object member: consumes `,` (and a `}` right after it: trailing commas are tolerated)
/// or `}`; true when the object is closed.
fn end_of_member(c: &mut Cursor<'_>, what: &'static str) -> Scan<bool> {
    match c.peek()? {
        b',' => {
            c.i += 1;
            if c.peek()? == b'}' {
                c.i += 1;
                return Ok(true);
            }
            Ok(false)
        }
        b'}' => {
            c.i += 1;
            Ok(true)
        }
        _ => Err(Stop::Syntax(what)),
    }
}
