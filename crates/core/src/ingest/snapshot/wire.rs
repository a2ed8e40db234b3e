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
pub struct Decoder {
    s: Snapshot,
    head: bool,
    devices: usize,
    col: usize,
    left: Option<usize>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            s: Snapshot {
                kind: SnapshotKind::Allocator,
                strings: Interner::default(),
                frames: Frames::default(),
                stacks: Stacks::default(),
                segments: Segments::default(),
                blocks: Blocks::default(),
                device_traces: Vec::new(),
                allocator_settings: None,
                external_annotations: None,
                warnings: Warnings::default(),
            },
            head: false,
            devices: 0,
            col: 0,
            left: None,
        }
    }
}

fn json_of(t: Option<String>) -> Result<Option<serde_json::Value>> {
    t.map(|t| serde_json::from_str(&t).map_err(|_| bad("snapshot JSON that does not parse")))
        .transpose()
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
                    let l = read_piece(&mut s.$a.$b, left, section)?;
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
        macro_rules! dec_t {
            ($c:ident) => {
                if i == 0 {
                    let l = read_piece(&mut t.$c, left, section)?;
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

/// The invariants the analyses index by: parallel columns of one length, ids in range.
fn check(s: &Snapshot) -> Result<()> {
    let strings = s.strings.len() as u32;
    let str_ok = |v: &[StrId]| v.iter().all(|x| x.0 < strings);
    let f = &s.frames;
    let nf = f.filename.len();
    let st = &s.stacks;
    let stacks = st.len() as u32;
    let sg = &s.segments;
    let ns = sg.len();
    let b = &s.blocks;
    let nb = b.len();
    let frames_ok = f.line.len() == nf
        && f.name.len() == nf
        && str_ok(&f.filename)
        && str_ok(&f.name)
        && !st.start.is_empty()
        && st.start.windows(2).all(|w| w[0] <= w[1])
        && st
            .start
            .last()
            .is_some_and(|&e| e as usize == st.frames.len())
        && st.frames.iter().all(|&x| (x as usize) < nf);
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
        && sg.first_block.windows(2).all(|w| w[0] <= w[1])
        && sg.first_block.last().is_some_and(|&e| e as usize == nb)
        && str_ok(&sg.segment_type)
        && sg.stack.iter().all(|&x| x < stacks);
    let blocks_ok = [
        b.address.len(),
        b.size.len(),
        b.requested_size.len(),
        b.state.len(),
        b.stack.len(),
    ]
    .iter()
    .all(|&x| x == nb)
        && b.segment.iter().all(|&x| (x as usize) < ns)
        && str_ok(&b.state)
        && b.stack.iter().all(|&x| x < stacks);
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
            && str_ok(&t.action_name)
            && str_ok(&t.category)
            && str_ok(&t.user_metadata)
            && t.stack.iter().all(|&x| x < stacks)
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
}
