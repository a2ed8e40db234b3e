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
        match c.peek()? {
            b',' => {
                c.i += 1;
                // Trailing comma before `}`.
                if c.peek()? == b'}' {
                    c.i += 1;
                    return Ok(ev);
                }
            }
            b'}' => {
                c.i += 1;
                return Ok(ev);
            }
            _ => return Err(Stop::Syntax("expected ',' or '}' in an event")),
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
            b"External id" | b"external id" => &mut a.external_id,
            b"correlation" => &mut a.correlation,
            b"Record function id" => &mut a.rf_id,
            b"Input Dims" | b"Input dims" => &mut a.input_dims,
            b"Input type" => &mut a.input_types,
            b"flops" => &mut a.flops,
            b"device" => &mut a.device,
            b"stream" => &mut a.stream,
            b"grid" => &mut a.grid,
            b"block" => &mut a.block,
            b"registers per thread" => &mut a.registers,
            b"shared memory" => &mut a.shared_memory,
            b"blocks per SM" => &mut a.blocks_per_sm,
            b"warps per SM" => &mut a.warps_per_sm,
            b"est. achieved occupancy %" => &mut a.occupancy,
            b"bytes" | b"Bytes" => &mut a.bytes,
            b"memory bandwidth (GB/s)" => &mut a.bandwidth,
            b"Total Allocated" => &mut a.total_allocated,
            b"Total Reserved" => &mut a.total_reserved,
            b"Addr" => &mut a.addr,
            b"Device Id" => &mut a.device_id,
            b"Device Type" => &mut a.device_type,
            b"name" => &mut a.name,
            b"sort_index" => &mut a.sort_index,
            b"labels" => &mut a.labels,
            _ => match c.peek()? {
                b',' => {
                    c.i += 1;
                    if c.peek()? == b'}' {
                        c.i += 1;
                        return Ok(());
                    }
                    continue;
                }
                b'}' => {
                    c.i += 1;
                    return Ok(());
                }
                _ => return Err(Stop::Syntax("expected ',' or '}' in args")),
            },
        };
        *slot = Some(v);
        match c.peek()? {
            b',' => {
                c.i += 1;
                if c.peek()? == b'}' {
                    c.i += 1;
                    return Ok(());
                }
            }
            b'}' => {
                c.i += 1;
                return Ok(());
            }
            _ => return Err(Stop::Syntax("expected ',' or '}' in args")),
        }
    }
}
