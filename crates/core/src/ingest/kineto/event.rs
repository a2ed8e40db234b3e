//! One `traceEvents` entry, scanned without allocating: every field is a borrowed span of the window.

use crate::ingest::json::{Cursor, RawStr, Scan, Stop};

/// The typed args of DESIGN §3 that the model keeps in columns, as raw value spans.
#[derive(Default, Clone, Copy)]
pub(super) struct ArgSpans<'a> {
    pub external_id: Option<&'a [u8]>,
    pub correlation: Option<&'a [u8]>,
    pub rf_id: Option<&'a [u8]>,
    pub input_dims: Option<&'a [u8]>,
    pub input_types: Option<&'a [u8]>,
    pub flops: Option<&'a [u8]>,
    pub device: Option<&'a [u8]>,
    pub stream: Option<&'a [u8]>,
    pub grid: Option<&'a [u8]>,
    pub block: Option<&'a [u8]>,
    pub registers: Option<&'a [u8]>,
    pub shared_memory: Option<&'a [u8]>,
    pub blocks_per_sm: Option<&'a [u8]>,
    pub warps_per_sm: Option<&'a [u8]>,
    pub occupancy: Option<&'a [u8]>,
    pub bytes: Option<&'a [u8]>,
    pub bandwidth: Option<&'a [u8]>,
    pub total_allocated: Option<&'a [u8]>,
    pub total_reserved: Option<&'a [u8]>,
    pub addr: Option<&'a [u8]>,
    pub device_id: Option<&'a [u8]>,
    pub device_type: Option<&'a [u8]>,
    /// `name` (metadata events: process/thread names).
    pub name: Option<&'a [u8]>,
    pub sort_index: Option<&'a [u8]>,
    pub labels: Option<&'a [u8]>,
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
    pub a: ArgSpans<'a>,
}

/// Byte ranges of one args entry in the window: key (between its quotes) and raw value.
pub(super) type ArgPair = [usize; 4];

/// Scans one event object; the cursor must be on its `{`. Every args entry's key and value spans
/// are appended to `pairs` (cleared first) so the builder can copy args compactly without a rescan.
pub(super) fn scan_event<'a>(c: &mut Cursor<'a>, pairs: &mut Vec<ArgPair>) -> Scan<Ev<'a>> {
    pairs.clear();
    let mut ev = Ev::default();
    c.expect(b'{', "expected an event object")?;
    if c.peek()? == b'}' {
        c.i += 1;
        return Ok(ev);
    }
    loop {
        let key = c.string()?;
        c.expect(b':', "expected ':' after a key")?;
        match key.bytes {
            b"ph" => {
                let v = c.value()?;
                ev.ph = match v {
                    [b'"', p, ..] => *p,
                    _ => 0,
                };
            }
            b"name" => ev.name = Some(string_or_raw(c)?),
            b"cat" => ev.cat = Some(string_or_raw(c)?),
            b"pid" => ev.pid = Some(c.value()?),
            b"tid" => ev.tid = Some(c.value()?),
            b"ts" => ev.ts = Some(c.value()?),
            b"dur" => ev.dur = Some(c.value()?),
            b"id" => ev.id = Some(c.value()?),
            b"bp" => ev.bp = Some(string_or_raw(c)?),
            b"args" if c.peek()? == b'{' => {
                let start = c.i;
                scan_args(c, &mut ev.a, pairs)?;
                ev.args = Some(&c.b[start..c.i]);
            }
            _ => {
                c.value()?;
            }
        }
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
        let slot = match key.bytes {
            b"External id" | b"external id" => Some(&mut a.external_id),
            b"correlation" => Some(&mut a.correlation),
            b"Record function id" => Some(&mut a.rf_id),
            b"Input Dims" | b"Input dims" => Some(&mut a.input_dims),
            b"Input type" => Some(&mut a.input_types),
            b"flops" => Some(&mut a.flops),
            b"device" => Some(&mut a.device),
            b"stream" => Some(&mut a.stream),
            b"grid" => Some(&mut a.grid),
            b"block" => Some(&mut a.block),
            b"registers per thread" => Some(&mut a.registers),
            b"shared memory" => Some(&mut a.shared_memory),
            b"blocks per SM" => Some(&mut a.blocks_per_sm),
            b"warps per SM" => Some(&mut a.warps_per_sm),
            b"est. achieved occupancy %" => Some(&mut a.occupancy),
            b"bytes" | b"Bytes" => Some(&mut a.bytes),
            b"memory bandwidth (GB/s)" => Some(&mut a.bandwidth),
            b"Total Allocated" => Some(&mut a.total_allocated),
            b"Total Reserved" => Some(&mut a.total_reserved),
            b"Addr" => Some(&mut a.addr),
            b"Device Id" => Some(&mut a.device_id),
            b"Device Type" => Some(&mut a.device_type),
            b"name" => Some(&mut a.name),
            b"sort_index" => Some(&mut a.sort_index),
            b"labels" => Some(&mut a.labels),
            _ => None,
        };
        if let Some(slot) = slot {
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
