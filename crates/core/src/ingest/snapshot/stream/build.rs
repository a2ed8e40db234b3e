//! What a value becomes when it is put into its container: a frame dict a frame id, a `frames`
//! list a stack id, a trace entry a row of its device's columns, a segment (with its blocks) rows
//! of the segment and block columns; and, at STOP, the model assembled from the root dict. The
//! rules read the same keys, defaults and warnings as [`super::super::read`] (the whole-file
//! reader), so both give the same model.

use super::{Kind, SnapshotStream, V};
use crate::ingest::snapshot::read::FrameTable;
use crate::ingest::snapshot::*;

/// The dict keys the model reads, interned once.
pub(super) struct Keys {
    pub(super) filename: StrId,
    pub(super) line: StrId,
    pub(super) name: StrId,
    pub(super) action: StrId,
    pub(super) addr: StrId,
    pub(super) size: StrId,
    pub(super) stream: StrId,
    pub(super) time_us: StrId,
    pub(super) frames: StrId,
    pub(super) device_free: StrId,
    pub(super) category: StrId,
    pub(super) user_metadata: StrId,
    pub(super) blocks: StrId,
    pub(super) total_size: StrId,
    pub(super) address: StrId,
    pub(super) requested_size: StrId,
    pub(super) state: StrId,
    pub(super) device: StrId,
    pub(super) allocated_size: StrId,
    pub(super) active_size: StrId,
    pub(super) segment_type: StrId,
    pub(super) segment_pool_id: StrId,
    pub(super) is_expandable: StrId,
    pub(super) segments: StrId,
    pub(super) device_traces: StrId,
    pub(super) allocator_settings: StrId,
    pub(super) external_annotations: StrId,
}

/// The model under construction.
pub(super) struct Build {
    pub(super) s: Snapshot,
    pub(super) k: Keys,
    empty: StrId,
    frame_ids: FrameTable,
    /// Stack ids by their frames, which are read from `s.stacks` itself: no second copy of each
    /// stack, and the frames compared on a hit are contiguous with the other stacks'.
    stack_ids: hashbrown::HashTable<StackId>,
    /// Trace entries by the list they were appended to (`Cont::trace`).
    pub(super) traces: Vec<DeviceTrace>,
    pub(super) ids: Vec<u32>,
}

impl Build {
    pub(super) fn new() -> Self {
        let mut strings = Interner::default();
        let empty = strings.intern("");
        let mut k = |t: &str| strings.intern(t);
        let keys = Keys {
            filename: k("filename"),
            line: k("line"),
            name: k("name"),
            action: k("action"),
            addr: k("addr"),
            size: k("size"),
            stream: k("stream"),
            time_us: k("time_us"),
            frames: k("frames"),
            device_free: k("device_free"),
            category: k("category"),
            user_metadata: k("user_metadata"),
            blocks: k("blocks"),
            total_size: k("total_size"),
            address: k("address"),
            requested_size: k("requested_size"),
            state: k("state"),
            device: k("device"),
            allocated_size: k("allocated_size"),
            active_size: k("active_size"),
            segment_type: k("segment_type"),
            segment_pool_id: k("segment_pool_id"),
            is_expandable: k("is_expandable"),
            segments: k("segments"),
            device_traces: k("device_traces"),
            allocator_settings: k("allocator_settings"),
            external_annotations: k("external_annotations"),
        };
        Build {
            s: Snapshot {
                kind: SnapshotKind::Allocator,
                strings,
                frames: Frames::default(),
                stacks: Stacks::default(),
                segments: Segments {
                    first_block: vec![0],
                    ..Segments::default()
                },
                blocks: Blocks::default(),
                device_traces: Vec::new(),
                allocator_settings: None,
                external_annotations: None,
                warnings: Warnings::default(),
            },
            k: keys,
            empty,
            frame_ids: FrameTable::default(),
            stack_ids: hashbrown::HashTable::new(),
            traces: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// Room for `n` distinct stacks in the stack table. Growing it rehashes every stack's
    /// frames again (the hash is not kept): on the 50 MB bench snapshot, 100,000 stacks of ~28
    /// frames, each doubling hashed all of them again.
    pub(super) fn reserve_stacks(&mut self, n: usize) {
        let stacks = &self.s.stacks;
        self.stack_ids.reserve(n, |&id| hash_frames(stacks.get(id)));
    }
}

/// What a container shared through the memo became, else the value itself.
pub(super) fn settle(r: &SnapshotStream, v: V) -> V {
    if let V::Cont(c) = v {
        if let Some(d) = r.conts.get(c as usize).and_then(|x| x.done) {
            return d;
        }
    }
    v
}

pub(super) fn kind(r: &SnapshotStream, v: V) -> Option<Kind> {
    match v {
        V::Cont(c) => r.conts.get(c as usize).map(|x| x.kind),
        _ => None,
    }
}

pub(super) fn items(r: &SnapshotStream, c: u32) -> &[V] {
    r.conts.get(c as usize).map_or(&[], |x| x.items.as_slice())
}

/// The value under `key` in dict `c` (a repeated key keeps its last value, as in Python).
pub(super) fn get(r: &SnapshotStream, c: u32, key: StrId) -> Option<V> {
    items(r, c)
        .chunks_exact(2)
        .rev()
        .find(|kv| kv[0] == V::Str(key))
        .map(|kv| settle(r, kv[1]))
}

fn has(r: &SnapshotStream, c: u32, key: StrId) -> bool {
    items(r, c).chunks_exact(2).any(|kv| kv[0] == V::Str(key))
}

fn as_i128(r: &SnapshotStream, v: V) -> Option<i128> {
    match v {
        V::Int(i) => Some(i128::from(i)),
        V::Big(k) => r.big.get(k as usize).copied(),
        V::Bool(b) => Some(i128::from(b)),
        _ => None,
    }
}

fn as_u64(r: &SnapshotStream, v: Option<V>) -> Option<u64> {
    v.and_then(|v| as_i128(r, v))
        .and_then(|x| u64::try_from(x).ok())
}

fn as_i64(r: &SnapshotStream, v: Option<V>) -> Option<i64> {
    v.and_then(|v| as_i128(r, v))
        .and_then(|x| i64::try_from(x).ok())
}

fn str_id(b: &Build, v: Option<V>) -> StrId {
    match v {
        Some(V::Str(s)) => s,
        _ => b.empty,
    }
}

/// Puts `vals` into container `c`, each made the model value it is where it is one.
pub(super) fn place(r: &mut SnapshotStream, c: u32, vals: &[V]) -> Result<()> {
    let Some(k) = r.conts.get(c as usize).map(|x| x.kind) else {
        return Ok(());
    };
    if k == Kind::Dict {
        for kv in vals.chunks_exact(2) {
            let v = if kv[0] == V::Str(r.b.k.frames) {
                to_stack(r, kv[1])
            } else {
                settle(r, kv[1])
            };
            if let Some(x) = r.conts.get_mut(c as usize) {
                x.items.push(kv[0]);
                x.items.push(v);
            }
        }
        return Ok(());
    }
    if !vals.iter().any(|v| matches!(v, V::Cont(_))) {
        // No container among them (a frames list of memoized frames, a list of ints): each
        // stays what it is.
        if let Some(x) = r.conts.get_mut(c as usize) {
            x.items.extend_from_slice(vals);
        }
        return Ok(());
    }
    for &v in vals {
        let v = settle(r, v);
        let keep = match v {
            V::Cont(x) if kind(r, v) == Some(Kind::Dict) => {
                let in_trace = r.conts.get(c as usize).and_then(|y| y.trace);
                if in_trace.is_some() || has(r, x, r.b.k.action) {
                    let t = match in_trace {
                        Some(t) => t,
                        None => {
                            r.b.traces.push(DeviceTrace::default());
                            let t = (r.b.traces.len() - 1) as u32;
                            if let Some(y) = r.conts.get_mut(c as usize) {
                                y.trace = Some(t);
                            }
                            t
                        }
                    };
                    entry(r, x, t);
                    release_tree(r, x, 2);
                    None
                } else if has(r, x, r.b.k.blocks) || has(r, x, r.b.k.total_size) {
                    segment(r, x);
                    release_tree(r, x, 4);
                    None
                } else if has(r, x, r.b.k.filename) || has(r, x, r.b.k.line) {
                    // A frame (an annotation has a `name` too, so that alone is not one; a
                    // frame without file or line is read when its `frames` list is).
                    let f = frame(r, x);
                    r.release(x, V::Frame(f));
                    Some(V::Frame(f))
                } else {
                    Some(v)
                }
            }
            other => Some(other),
        };
        if let Some(v) = keep {
            if let Some(x) = r.conts.get_mut(c as usize) {
                x.items.push(v);
            }
        }
    }
    Ok(())
}

/// Gives back container `c` and, `depth` levels down, the containers inside it.
fn release_tree(r: &mut SnapshotStream, c: u32, depth: u32) {
    if depth > 0 {
        let n = items(r, c).len();
        for i in 0..n {
            if let Some(V::Cont(x)) = r
                .conts
                .get(c as usize)
                .and_then(|y| y.items.get(i).copied())
            {
                release_tree(r, x, depth - 1);
            }
        }
    }
    r.release(c, V::Gone);
}

/// The frame of dict `c` (its `filename`, `line`, `name`; absent ones empty or 0).
fn frame(r: &mut SnapshotStream, c: u32) -> u32 {
    let (mut file, mut name, mut line) = (None, None, None);
    for kv in items(r, c).chunks_exact(2) {
        match kv[0] {
            V::Str(k) if k == r.b.k.filename => file = Some(kv[1]),
            V::Str(k) if k == r.b.k.name => name = Some(kv[1]),
            V::Str(k) if k == r.b.k.line => line = Some(kv[1]),
            _ => {}
        }
    }
    let line = as_i64(r, line).unwrap_or(0);
    let str_of = |v: Option<V>| match v {
        Some(V::Str(s)) => Some(s),
        _ => None,
    };
    frame_id(&mut r.b, str_of(file), str_of(name), line)
}

/// The id of frame (`file`, `line`, `name`), recorded if new; an absent string is the empty one.
pub(super) fn frame_id(b: &mut Build, file: Option<StrId>, name: Option<StrId>, line: i64) -> u32 {
    let (file, name) = (file.unwrap_or(b.empty), name.unwrap_or(b.empty));
    let next = b.s.frames.filename.len() as u32;
    let id = b.frame_ids.get_or_insert(file, line, name, next);
    if id == next {
        b.s.frames.filename.push(file);
        b.s.frames.line.push(line);
        b.s.frames.name.push(name);
    }
    id
}

/// A `frames` value as a stack: a list of frames (dicts or frame ids) interned; anything else is
/// left as it is (read as the empty stack).
fn to_stack(r: &mut SnapshotStream, v: V) -> V {
    let v = settle(r, v);
    let V::Cont(c) = v else { return v };
    if kind(r, v) == Some(Kind::Dict) {
        return v;
    }
    let mut ids = std::mem::take(&mut r.b.ids);
    ids.clear();
    let frames_only = items(r, c).iter().all(|x| matches!(x, V::Frame(_)));
    let n = if frames_only {
        ids.extend(items(r, c).iter().filter_map(|x| match x {
            V::Frame(f) => Some(*f),
            _ => None,
        }));
        0
    } else {
        items(r, c).len()
    };
    for i in 0..n {
        let Some(x) = r
            .conts
            .get(c as usize)
            .and_then(|y| y.items.get(i).copied())
        else {
            break;
        };
        match settle(r, x) {
            V::Frame(f) => ids.push(f),
            d @ V::Cont(y) if kind(r, d) == Some(Kind::Dict) => {
                let f = frame(r, y);
                r.release(y, V::Frame(f));
                ids.push(f);
            }
            _ => {}
        }
    }
    let id = stack_id(&mut r.b, &ids);
    r.b.ids = ids;
    r.release(c, V::Stack(id));
    V::Stack(id)
}

/// The id of the stack of frames `ids`, recorded if new; the empty stack is 0.
pub(super) fn stack_id(b: &mut Build, ids: &[u32]) -> StackId {
    if ids.is_empty() {
        return 0;
    }
    let h = hash_frames(ids);
    let stacks = &b.s.stacks;
    match b.stack_ids.find(h, |&id| stacks.get(id) == ids) {
        Some(&id) => id,
        None => {
            let next = b.s.stacks.len() as StackId;
            b.s.stacks.frames.extend_from_slice(ids);
            b.s.stacks.start.push(b.s.stacks.frames.len() as u32);
            let stacks = &b.s.stacks;
            b.stack_ids
                .insert_unique(h, next, |&id| hash_frames(stacks.get(id)));
            next
        }
    }
}

fn hash_frames(ids: &[u32]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(ids)
}

fn stack_of(v: Option<V>) -> StackId {
    match v {
        Some(V::Stack(s)) => s,
        _ => 0,
    }
}

/// Trace entry `c` appended to `traces[t]`.
pub(super) fn entry(r: &mut SnapshotStream, c: u32, t: u32) {
    let k = &r.b.k;
    let mut f: [Option<V>; 9] = [None; 9];
    for kv in items(r, c).chunks_exact(2) {
        let V::Str(key) = kv[0] else { continue };
        let slot = match key {
            x if x == k.action => 0,
            x if x == k.addr => 1,
            x if x == k.size => 2,
            x if x == k.stream => 3,
            x if x == k.time_us => 4,
            x if x == k.frames => 5,
            x if x == k.device_free => 6,
            x if x == k.category => 7,
            x if x == k.user_metadata => 8,
            _ => continue,
        };
        f[slot] = Some(settle(r, kv[1]));
    }
    let u = |v: Option<V>| as_u64(r, v).unwrap_or(0);
    let (addr, size, stream, free) = (u(f[1]), u(f[2]), u(f[3]), u(f[6]));
    let time = as_i64(r, f[4]);
    let b = &mut r.b;
    let name_id = str_id(b, f[0]);
    let name = b.s.strings.resolve(name_id);
    let action = Action::parse(name);
    if action == Action::Other {
        let n = name.to_owned();
        b.s.warnings
            .add(WarningKind::Other, || format!("unknown trace action {n:?}"));
    }
    let cat = str_id(b, f[7]);
    let meta = str_id(b, f[8]);
    let Some(tr) = b.traces.get_mut(t as usize) else {
        return;
    };
    tr.action_name.push(name_id);
    tr.action.push(action);
    tr.addr.push(addr);
    tr.size.push(size);
    tr.stream.push(stream);
    tr.time_us.push(time);
    tr.stack.push(stack_of(f[5]));
    tr.device_free.push(free);
    tr.category.push(cat);
    tr.user_metadata.push(meta);
}

/// Segment dict `c` and its blocks appended to the segment and block columns.
pub(super) fn segment(r: &mut SnapshotStream, seg: u32) {
    let k = &r.b.k;
    let (kaddress, ktotal, kstream, kframes, ktype, kpool, kblocks) = (
        k.address,
        k.total_size,
        k.stream,
        k.frames,
        k.segment_type,
        k.segment_pool_id,
        k.blocks,
    );
    let (ksize, kreq, kstate, kalloc, kactive, kdevice, kexp) = (
        k.size,
        k.requested_size,
        k.state,
        k.allocated_size,
        k.active_size,
        k.device,
        k.is_expandable,
    );
    let int = |r: &SnapshotStream, c: u32, key: StrId| as_u64(r, get(r, c, key));
    let si = r.b.s.segments.len() as u32;
    let address = int(r, seg, kaddress).unwrap_or(0);
    let total = int(r, seg, ktotal).unwrap_or(0);
    let stream = int(r, seg, kstream).unwrap_or(0);
    let stack = stack_of(get(r, seg, kframes));
    let seg_type = str_id(&r.b, get(r, seg, ktype));
    let pool = match get(r, seg, kpool) {
        Some(V::Cont(t)) => {
            let it = items(r, t);
            let a = as_i64(r, it.first().map(|&x| settle(r, x))).unwrap_or(0);
            let b = as_i64(r, it.get(1).map(|&x| settle(r, x))).unwrap_or(0);
            (a, b)
        }
        _ => (0, 0),
    };
    // Blocks: addresses laid out from the segment start when absent (MemoryViz.js annotate_snapshot).
    let (mut alloc, mut active, mut req) = (0u64, 0u64, 0u64);
    let mut addr = address;
    let blocks = match get(r, seg, kblocks) {
        Some(v @ V::Cont(l)) if kind(r, v) != Some(Kind::Dict) => l,
        _ => u32::MAX,
    };
    let nb = items(r, blocks).len();
    for i in 0..nb {
        let Some(bv) = r
            .conts
            .get(blocks as usize)
            .and_then(|y| y.items.get(i).copied())
        else {
            break;
        };
        let bv = settle(r, bv);
        let V::Cont(b) = bv else { continue };
        if kind(r, bv) != Some(Kind::Dict) {
            continue;
        }
        let size = int(r, b, ksize).unwrap_or(0);
        let baddr = int(r, b, kaddress).unwrap_or(addr);
        let frames = get(r, b, kframes);
        // Legacy blocks without frames may lack requested_size: memory_viz then uses size.
        let requested = int(r, b, kreq).unwrap_or(if frames.is_none() { size } else { 0 });
        let state = str_id(&r.b, get(r, b, kstate));
        match r.b.s.strings.resolve(state) {
            // Saturating: hostile sizes must not overflow a segment's totals (fuzz regression).
            "active_allocated" => {
                alloc = alloc.saturating_add(size);
                active = active.saturating_add(size);
                req = req.saturating_add(requested);
            }
            "active_awaiting_free" | "active_pending_free" => {
                active = active.saturating_add(size);
                req = req.saturating_add(requested);
            }
            _ => {}
        }
        let bl = &mut r.b.s.blocks;
        bl.segment.push(si);
        bl.address.push(baddr);
        bl.size.push(size);
        bl.requested_size.push(requested);
        bl.state.push(state);
        bl.stack.push(stack_of(frames));
        addr = baddr.saturating_add(size);
    }
    let has_totals = get(r, seg, kalloc).is_some();
    let device = as_i64(r, get(r, seg, kdevice)).unwrap_or(0);
    let allocated = int(r, seg, kalloc).unwrap_or(alloc);
    let active_size = int(r, seg, kactive).unwrap_or(active);
    let requested = int(r, seg, kreq).unwrap_or(req);
    let expandable = match get(r, seg, kexp) {
        Some(V::Bool(b)) => b,
        Some(V::Int(i)) => i != 0,
        _ => false,
    };
    let s = &mut r.b.s;
    if !has_totals {
        s.kind = SnapshotKind::ProfilePlot;
    }
    let nblocks = s.blocks.len() as u32;
    let sg = &mut s.segments;
    sg.device.push(device);
    sg.address.push(address);
    sg.total_size.push(total);
    sg.allocated_size.push(allocated);
    sg.active_size.push(active_size);
    sg.requested_size.push(requested);
    sg.stream.push(stream);
    sg.segment_type.push(seg_type);
    sg.pool_id.push(pool);
    sg.is_expandable.push(expandable);
    sg.stack.push(stack);
    sg.first_block.push(nblocks);
}
