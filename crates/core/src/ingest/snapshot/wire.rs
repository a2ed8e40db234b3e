//! A snapshot as sections ([`crate::model::wire`]), so the reader worker that decoded the pickle can
//! hand the model to the page one section per task: a head (kind, strings, warnings, the raw JSON
//! parts, the device count), then every column in pieces of at most [`PIECE`] values — frames,
//! stacks, segments, blocks, then each device's trace. The page never holds the whole encoding,
//! and no task on its thread grows with the file.

use super::*;
use crate::model::wire::{bad, column_piece, pieces, read_piece, Get, Wire};

/// Every action, in declaration order (the wire writes the index).
const ACTIONS: [Action; 12] = [
    Action::Alloc,
    Action::Free,
    Action::FreeRequested,
    Action::FreeCompleted,
    Action::SegmentAlloc,
    Action::SegmentFree,
    Action::SegmentMap,
    Action::SegmentUnmap,
    Action::Snapshot,
    Action::Oom,
    Action::Annotate,
    Action::Other,
];

impl Wire for Action {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        ACTIONS
            .get(u8::get(g)? as usize)
            .copied()
            .ok_or_else(|| bad("a trace action"))
    }
}

/// Calls `$m!(path)` for each column outside the device traces, in wire order.
macro_rules! fixed_columns {
    ($m:ident) => {
        $m!(frames.filename);
        $m!(frames.line);
        $m!(frames.name);
        $m!(stacks.start);
        $m!(stacks.frames);
        $m!(segments.device);
        $m!(segments.address);
        $m!(segments.total_size);
        $m!(segments.allocated_size);
        $m!(segments.active_size);
        $m!(segments.requested_size);
        $m!(segments.stream);
        $m!(segments.segment_type);
        $m!(segments.pool_id);
        $m!(segments.is_expandable);
        $m!(segments.stack);
        $m!(segments.first_block);
        $m!(blocks.segment);
        $m!(blocks.address);
        $m!(blocks.size);
        $m!(blocks.requested_size);
        $m!(blocks.state);
        $m!(blocks.stack);
    };
}

/// Calls `$m!(column)` for each column of one device's trace, in wire order.
macro_rules! trace_columns {
    ($m:ident) => {
        $m!(action_name);
        $m!(action);
        $m!(addr);
        $m!(size);
        $m!(stream);
        $m!(time_us);
        $m!(stack);
        $m!(device_free);
        $m!(category);
        $m!(user_metadata);
    };
}

fn json_text(v: &Option<serde_json::Value>) -> Option<String> {
    v.as_ref().map(|v| v.to_string())
}

fn head(s: &Snapshot) -> Vec<u8> {
    let mut out = Vec::new();
    u8::from(s.kind == SnapshotKind::ProfilePlot).put(&mut out);
    s.strings.put(&mut out);
    s.warnings.put(&mut out);
    json_text(&s.allocator_settings).put(&mut out);
    json_text(&s.external_annotations).put(&mut out);
    (s.device_traces.len() as u32).put(&mut out);
    out
}

/// Section `k` of a snapshot's list (`None` past the last), made alone, so a sender hands the
/// model over one section at a time without a second copy of it.
pub fn section(s: &Snapshot, k: usize) -> Option<Vec<u8>> {
    if k == 0 {
        return Some(head(s));
    }
    let mut i = k - 1;
    macro_rules! enc {
        ($a:ident . $b:ident) => {
            let n = pieces(s.$a.$b.len());
            if i < n {
                return Some(column_piece(&s.$a.$b, i));
            }
            i -= n;
        };
    }
    fixed_columns!(enc);
    for t in &s.device_traces {
        macro_rules! enc_t {
            ($c:ident) => {
                let n = pieces(t.$c.len());
                if i < n {
                    return Some(column_piece(&t.$c, i));
                }
                i -= n;
            };
        }
        trace_columns!(enc_t);
    }
    None
}

/// Every section of `s` (tests; a sender makes them one at a time with [`section`]).
pub fn encode(s: &Snapshot) -> Vec<Vec<u8>> {
    (0..).map_while(|k| section(s, k)).collect()
}

/// Columns outside the device traces (`fixed_columns!`).
const FIXED: usize = {
    let mut n = 0;
    macro_rules! count {
        ($a:ident . $b:ident) => {
            n += 1;
        };
    }
    fixed_columns!(count);
    n
};

/// Columns per device trace (`trace_columns!`).
const PER_DEVICE: usize = {
    let mut n = 0;
    macro_rules! count {
        ($c:ident) => {
            n += 1;
        };
    }
    trace_columns!(count);
    n
};

/// Rebuilds a snapshot from the sections of [`encode`], taken one at a time.
#[derive(Default)]
pub struct Decoder {
    s: Snapshot,
    head: bool,
    devices: usize,
    col: usize,
    left: Option<usize>,
}

fn json_of(t: Option<String>) -> Result<Option<serde_json::Value>> {
    t.map(|t| serde_json::from_str(&t).map_err(|_| bad("snapshot JSON that does not parse")))
        .transpose()
}

/// Whether the values of column `$a.$b` from `$from` on keep the invariants that need only columns
/// already whole (the wire sends frames, then stacks, segments, blocks, then the traces): checked
/// piece by piece as they arrive, so that no single task checks a whole model (the last section's
/// [`Decoder::finish`] took 49 ms on a 1 GB snapshot when it checked everything at once).
/// Lengths are compared in [`check`], at the end.
macro_rules! piece_ok {
    ($s:ident, frames.filename, $from:ident) => {
        strs_ok(&$s.strings, &$s.frames.filename[$from..])
    };
    ($s:ident, frames.name, $from:ident) => {
        strs_ok(&$s.strings, &$s.frames.name[$from..])
    };
    ($s:ident, stacks.start, $from:ident) => {
        ascending(&$s.stacks.start, $from)
    };
    ($s:ident, stacks.frames, $from:ident) => {
        below(&$s.stacks.frames[$from..], $s.frames.filename.len())
    };
    ($s:ident, segments.segment_type, $from:ident) => {
        strs_ok(&$s.strings, &$s.segments.segment_type[$from..])
    };
    ($s:ident, segments.stack, $from:ident) => {
        below(&$s.segments.stack[$from..], stack_count(&$s.stacks))
    };
    ($s:ident, segments.first_block, $from:ident) => {
        ascending(&$s.segments.first_block, $from)
    };
    ($s:ident, blocks.segment, $from:ident) => {
        below(&$s.blocks.segment[$from..], $s.segments.len())
    };
    ($s:ident, blocks.state, $from:ident) => {
        strs_ok(&$s.strings, &$s.blocks.state[$from..])
    };
    ($s:ident, blocks.stack, $from:ident) => {
        below(&$s.blocks.stack[$from..], stack_count(&$s.stacks))
    };
    ($s:ident, $a:ident . $b:ident, $from:ident) => {{
        let _ = $from;
        true
    }};
}

/// [`piece_ok`] for a device trace's columns.
macro_rules! trace_piece_ok {
    ($t:ident, action_name, $from:ident, $strings:ident, $stacks:ident) => {
        below_ids(&$t.action_name[$from..], $strings)
    };
    ($t:ident, category, $from:ident, $strings:ident, $stacks:ident) => {
        below_ids(&$t.category[$from..], $strings)
    };
    ($t:ident, user_metadata, $from:ident, $strings:ident, $stacks:ident) => {
        below_ids(&$t.user_metadata[$from..], $strings)
    };
    ($t:ident, stack, $from:ident, $strings:ident, $stacks:ident) => {
        below(&$t.stack[$from..], $stacks)
    };
    ($t:ident, $c:ident, $from:ident, $strings:ident, $stacks:ident) => {{
        let _ = ($from, $strings, $stacks);
        true
    }};
}

/// Stacks in the table: one fewer than its start offsets (none while those are missing).
fn stack_count(st: &Stacks) -> usize {
    st.start.len().saturating_sub(1)
}

fn below_ids(v: &[StrId], n: usize) -> bool {
    v.iter().all(|x| (x.0 as usize) < n)
}

fn strs_ok(strings: &Interner, v: &[StrId]) -> bool {
    below_ids(v, strings.len())
}

fn below<T: Copy + Into<u64>>(v: &[T], n: usize) -> bool {
    v.iter().all(|&x| x.into() < n as u64)
}

/// `v` never decreases from `from - 1` on (the piece joined to the one before it).
fn ascending<T: PartialOrd>(v: &[T], from: usize) -> bool {
    v.get(from.saturating_sub(1)..)
        .is_none_or(|w| w.windows(2).all(|p| p[0] <= p[1]))
}

impl Decoder {
    fn read_head(&mut self, section: &[u8]) -> Result<()> {
        let mut g = Get::new(section);
        let s = &mut self.s;
        s.kind = match u8::get(&mut g)? {
            0 => SnapshotKind::Allocator,
            1 => SnapshotKind::ProfilePlot,
            _ => return Err(bad("a snapshot kind")),
        };
        s.strings = <Interner as Wire>::get(&mut g)?;
        s.warnings = Warnings::get(&mut g)?;
        s.allocator_settings = json_of(Option::<String>::get(&mut g)?)?;
        s.external_annotations = json_of(Option::<String>::get(&mut g)?)?;
        self.devices = u32::get(&mut g)? as usize;
        g.done()?;
        // Devices are CUDA ordinals; each still sends a section per column, so a huge count is
        // corrupt (checked before allocating a trace per device).
        if self.devices > 1 << 16 {
            return Err(bad("a snapshot device count"));
        }
        s.device_traces = (0..self.devices).map(|_| DeviceTrace::default()).collect();
        Ok(())
    }

    /// Moves on after a piece: the next column once this one is whole.
    fn advance(&mut self, left: usize) {
        if left == 0 {
            self.col += 1;
            self.left = None;
        } else {
            self.left = Some(left);
        }
    }

    /// Takes the next section.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        if !self.head {
            self.head = true;
            return self.read_head(section);
        }
        let left = self.left;
        let s = &mut self.s;
        let mut i = self.col;
        macro_rules! dec {
            ($a:ident . $b:ident) => {
                if i == 0 {
                    let from = s.$a.$b.len();
                    let l = read_piece(&mut s.$a.$b, left, section)?;
                    if !piece_ok!(s, $a.$b, from) {
                        return Err(bad("snapshot columns that do not fit together"));
                    }
                    self.advance(l);
                    return Ok(());
                }
                i -= 1;
            };
        }
        fixed_columns!(dec);
        let (d, mut i) = (i / PER_DEVICE, i % PER_DEVICE);
        let Some(t) = s.device_traces.get_mut(d) else {
            return Err(bad("more snapshot sections than announced"));
        };
        let (strings, stacks) = (s.strings.len(), stack_count(&s.stacks));
        macro_rules! dec_t {
            ($c:ident) => {
                if i == 0 {
                    let from = t.$c.len();
                    let l = read_piece(&mut t.$c, left, section)?;
                    if !trace_piece_ok!(t, $c, from, strings, stacks) {
                        return Err(bad("snapshot columns that do not fit together"));
                    }
                    self.advance(l);
                    return Ok(());
                }
                i -= 1;
            };
        }
        trace_columns!(dec_t);
        let _ = i;
        Err(bad("a snapshot column out of range"))
    }

    /// The snapshot, once every section was taken: its columns checked to fit together, so the
    /// views can index by them.
    pub fn finish(self) -> Result<Snapshot> {
        if !self.head || self.col != FIXED + PER_DEVICE * self.devices || self.left.is_some() {
            return Err(bad("snapshot sections missing"));
        }
        check(&self.s)?;
        Ok(self.s)
    }
}

/// The invariants the analyses index by that [`piece_ok`] could not see piece by piece: parallel
/// columns of one length, the offsets' ends. Constant time but for the device list.
fn check(s: &Snapshot) -> Result<()> {
    let f = &s.frames;
    let nf = f.filename.len();
    let st = &s.stacks;
    let sg = &s.segments;
    let ns = sg.len();
    let b = &s.blocks;
    let nb = b.len();
    let frames_ok = f.line.len() == nf
        && f.name.len() == nf
        && !st.start.is_empty()
        && st
            .start
            .last()
            .is_some_and(|&e| e as usize == st.frames.len());
    let seg_ok = [
        sg.address.len(),
        sg.total_size.len(),
        sg.allocated_size.len(),
        sg.active_size.len(),
        sg.requested_size.len(),
        sg.stream.len(),
        sg.segment_type.len(),
        sg.pool_id.len(),
        sg.is_expandable.len(),
        sg.stack.len(),
    ]
    .iter()
    .all(|&x| x == ns)
        && sg.first_block.len() == ns + 1
        && sg.first_block.last().is_some_and(|&e| e as usize == nb);
    let blocks_ok = [
        b.address.len(),
        b.size.len(),
        b.requested_size.len(),
        b.state.len(),
        b.stack.len(),
    ]
    .iter()
    .all(|&x| x == nb);
    let traces_ok = s.device_traces.iter().all(|t| {
        let n = t.action.len();
        [
            t.action_name.len(),
            t.addr.len(),
            t.size.len(),
            t.stream.len(),
            t.time_us.len(),
            t.stack.len(),
            t.device_free.len(),
            t.category.len(),
            t.user_metadata.len(),
        ]
        .iter()
        .all(|&x| x == n)
    });
    if frames_ok && seg_ok && blocks_ok && traces_ok {
        Ok(())
    } else {
        Err(bad("snapshot columns that do not fit together"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::model::wire::PIECE;

    #[test]
    fn long_trace_columns_travel_in_pieces_and_cut_sections_are_errors() {
        let mut s = Decoder::default().s;
        s.segments.first_block = vec![0];
        let alloc = s.strings.intern("alloc");
        let mut t = DeviceTrace::default();
        let n = PIECE + 3;
        for k in 0..n as u64 {
            t.action_name.push(alloc);
            t.action.push(Action::Alloc);
            t.addr.push(k * 512);
            t.size.push(k);
            t.stream.push(0);
            t.time_us.push((k % 3 != 0).then_some(k as i64));
            t.stack.push(0);
            t.device_free.push(0);
            t.category.push(alloc);
            t.user_metadata.push(alloc);
        }
        s.device_traces = vec![DeviceTrace::default(), t];
        let sections = encode(&s);
        // The head, one piece per column, and a second piece for each of the nine long columns.
        assert_eq!(sections.len(), 1 + FIXED + 2 * PER_DEVICE + PER_DEVICE);
        let mut d = Decoder::default();
        for x in &sections {
            d.push(x).unwrap();
        }
        let back = d.finish().unwrap();
        assert_eq!(format!("{back:?}"), format!("{s:?}"));
        // Missing the last section; a column piece cut short; an extra section.
        let mut d = Decoder::default();
        for x in &sections[..sections.len() - 1] {
            d.push(x).unwrap();
        }
        assert!(d.finish().is_err());
        let mut d = Decoder::default();
        d.push(&sections[0]).unwrap();
        assert!(d.push(&sections[1][..sections[1].len() - 1]).is_err());
        let mut d = Decoder::default();
        for x in &sections {
            d.push(x).unwrap();
        }
        assert!(d.push(&sections[1]).is_err());
    }

    /// A small snapshot with every table filled: two frames, two stacks, a segment of two blocks,
    /// one device trace of three entries.
    fn small() -> Snapshot {
        let mut s = Decoder::default().s;
        let [file, f, g, alloc, seg, meta] =
            ["a.py", "f", "g", "alloc", "small", "m"].map(|x| s.strings.intern(x));
        s.frames = Frames {
            filename: vec![file, file],
            line: vec![1, 2],
            name: vec![f, g],
        };
        s.stacks = Stacks {
            start: vec![0, 1, 3],
            frames: vec![0, 0, 1],
        };
        let sg = &mut s.segments;
        sg.device.push(0);
        sg.address.push(1 << 20);
        sg.total_size.push(2 << 20);
        sg.allocated_size.push(1 << 20);
        sg.active_size.push(1 << 20);
        sg.requested_size.push(1 << 20);
        sg.stream.push(0);
        sg.segment_type.push(seg);
        sg.pool_id.push((0, 0));
        sg.is_expandable.push(false);
        sg.stack.push(1);
        sg.first_block = vec![0, 2];
        let b = &mut s.blocks;
        b.segment = vec![0, 0];
        b.address = vec![1 << 20, 3 << 19];
        b.size = vec![1 << 19, 1 << 19];
        b.requested_size = vec![1 << 19, 1 << 19];
        b.state = vec![alloc, alloc];
        b.stack = vec![0, 1];
        let mut t = DeviceTrace::default();
        for k in 0..3u64 {
            t.action_name.push(alloc);
            t.action.push(Action::Alloc);
            t.addr.push(k << 20);
            t.size.push(512);
            t.stream.push(0);
            t.time_us.push(Some(k as i64));
            t.stack.push((k % 2) as u32);
            t.device_free.push(0);
            t.category.push(alloc);
            t.user_metadata.push(meta);
        }
        s.device_traces = vec![t];
        s
    }

    fn decode(s: &Snapshot) -> Result<Snapshot> {
        let mut d = Decoder::default();
        for x in &encode(s) {
            d.push(x)?;
        }
        d.finish()
    }

    /// Ids out of range and offsets that go back are refused (by the piece that holds them, or
    /// at the end), each alone; the snapshot they were made from decodes to itself.
    #[test]
    fn columns_that_do_not_fit_together_are_refused() {
        let s = small();
        let back = decode(&s).unwrap();
        assert_eq!(format!("{back:?}"), format!("{s:?}"));
        let strings = StrId(s.strings.len() as u32);
        type Break = fn(&mut Snapshot, StrId);
        let breaks: Vec<(&str, Break)> = vec![
            ("frame file", |s, x| s.frames.filename[1] = x),
            ("frame name", |s, x| s.frames.name[0] = x),
            ("frame lines", |s, _| s.frames.line.push(3)),
            ("stack frame", |s, _| s.stacks.frames[2] = 2),
            ("stack starts", |s, _| s.stacks.start = vec![0, 3, 1]),
            ("stack end", |s, _| s.stacks.start = vec![0, 1, 2]),
            ("no stacks", |s, _| s.stacks.start.clear()),
            ("segment type", |s, x| s.segments.segment_type[0] = x),
            ("segment stack", |s, _| s.segments.stack[0] = 2),
            ("first blocks", |s, _| s.segments.first_block = vec![2, 0]),
            ("block segment", |s, _| s.blocks.segment[1] = 1),
            ("block state", |s, x| s.blocks.state[0] = x),
            ("block stack", |s, _| s.blocks.stack[1] = 2),
            ("block sizes", |s, _| s.blocks.size.pop().map_or((), drop)),
            ("trace name", |s, x| s.device_traces[0].action_name[2] = x),
            ("trace category", |s, x| s.device_traces[0].category[0] = x),
            ("trace metadata", |s, x| {
                s.device_traces[0].user_metadata[1] = x
            }),
            ("trace stack", |s, _| s.device_traces[0].stack[1] = 2),
            ("trace sizes", |s, _| s.device_traces[0].addr.push(0)),
        ];
        for (what, f) in breaks {
            let mut bad = s.clone();
            f(&mut bad, strings);
            assert!(decode(&bad).is_err(), "{what} accepted");
        }
    }
}
