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

impl<'a> ArgSpans<'a> {
    /// The column an args key feeds, if any.
    fn slot(&mut self, key: &[u8]) -> Option<&mut Option<&'a [u8]>> {
        let a = self;
        Some(match key {
            k::EXTERNAL_ID | k::EXTERNAL_ID_LOWER => &mut a.external_id,
            k::CORRELATION => &mut a.correlation,
            k::RECORD_FUNCTION_ID => &mut a.rf_id,
            k::INPUT_DIMS | k::INPUT_DIMS_LOWER => &mut a.input_dims,
            k::INPUT_TYPE => &mut a.input_types,
            k::FLOPS => &mut a.flops,
            k::DEVICE => &mut a.device,
            k::STREAM => &mut a.stream,
            k::GRID => &mut a.grid,
            k::BLOCK => &mut a.block,
            k::REGISTERS => &mut a.registers,
            k::SHARED_MEMORY => &mut a.shared_memory,
            k::BLOCKS_PER_SM => &mut a.blocks_per_sm,
            k::WARPS_PER_SM => &mut a.warps_per_sm,
            k::OCCUPANCY => &mut a.occupancy,
            k::BYTES | k::BYTES_UPPER => &mut a.bytes,
            k::BANDWIDTH => &mut a.bandwidth,
            k::TOTAL_ALLOCATED => &mut a.total_allocated,
            k::TOTAL_RESERVED => &mut a.total_reserved,
            k::ADDR => &mut a.addr,
            k::DEVICE_ID => &mut a.device_id,
            k::DEVICE_TYPE => &mut a.device_type,
            k::NAME => &mut a.name,
            k::SORT_INDEX => &mut a.sort_index,
            k::LABELS => &mut a.labels,
            _ => return None,
        })
    }

    /// The typed args again from the entries' spans: the builder thread redoes this cheap match
    /// rather than receive 25 spans per event.
    pub fn from_pairs(w: &'a [u8], pairs: &[ArgPair]) -> Self {
        let mut a = ArgSpans::default();
        for p in pairs {
            let key = w.get(p[0]..p[1]).unwrap_or_default();
            if let Some(slot) = a.slot(key) {
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

/// Byte ranges of one args entry in the window: key (between its quotes) and raw value.
pub(super) type ArgPair = [usize; 4];

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
        pairs.push([k0, k0 + key.bytes.len(), v0, v0 + v.len()]);
        if let Some(slot) = a.slot(key.bytes) {
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
