//! Reading a snapshot's pickle into the model of [`super`]: the dict walked key by key, frames and
//! stacks interned as they come, the variants the module doc of [`super`] lists recognised, and
//! the warnings for what was repaired. Kept apart from the model the analyses read.

use super::*;
use crate::ingest::pickle::{NodeId, Pickle, PickleValue};

/// Builds the model, interning as it goes. Caches by pickle node only hold nodes the pickle fetched
/// from its memo ([`Pickle::is_shared`]): a fresh frame dict is read once, so caching it would only
/// grow a map by millions of entries (that map was half the model time on the 50 MB benchmark).
struct Builder<'p> {
    p: &'p Pickle,
    s: Snapshot,
    frame_ids: FrameTable,
    stack_ids: FxHashMap<Vec<u32>, StackId>,
    /// The same frames list object fetched again from the memo: skip re-reading it.
    stack_of_node: FxHashMap<NodeId, StackId>,
    frame_of_node: FxHashMap<NodeId, u32>,
    /// Pickle memoizes a repeated string object once: resolving by node skips re-hashing its text.
    str_of_node: FxHashMap<NodeId, StrId>,
    /// Shared string nodes, direct-mapped in front of `str_of_node`: two lookups per frame dict,
    /// nearly always the same few file and function names.
    recent_strs: Vec<(NodeId, StrId)>,
    /// Frame ids of the stack being read (reused, so a stack seen before allocates nothing).
    scratch: Vec<u32>,
    /// Dict keys by node, direct-mapped: pickle memoizes each key string once, so after the first
    /// entry every key is a known node and no text is compared (millions of frame dicts).
    keys: [(NodeId, Key); KEY_CACHE],
    empty: StrId,
}

fn int(p: &Pickle, d: NodeId, key: &str) -> Option<u64> {
    p.dict_get(d, key).and_then(|v| p.as_u64(v))
}

/// Lines below this are looked up in a per-(file, function) array.
const DENSE_LINES: i64 = 1 << 14;
/// Array slots in all (16 MiB); past it, frames go to the hash map.
const DENSE_SLOTS: usize = 1 << 22;

/// Frame ids by (file, line, function). The hottest lookup of a load (once per frame dict, millions
/// of times) into ~100k distinct frames: a hash map of them misses cache on nearly every probe.
/// Distinct (file, function) pairs are few (hundreds), so a small map finds the pair and an array
/// indexed by line finds the frame: a few hundred KB that stay in cache. Lines that do not fit
/// ([`DENSE_LINES`], [`DENSE_SLOTS`]) use a plain map; a miss in the array checks that map before
/// inserting, so a frame never gets two ids whichever path it took first.
///
/// The pair is found in a direct-mapped cache before the map: in the page's worker the pair's
/// hash was a call of its own (V8 did not inline it, 8% of a 50 MB snapshot's decode) before the
/// map's probe, where the cache is two multiplies, a shift and one compare (bare wasm decode of
/// the bench snapshot 196-206 -> 180-193 ms).
pub(super) struct FrameTable {
    pairs: FxHashMap<(StrId, StrId), u32>,
    /// (file, function, pair) by a hash of the first two; `u32::MAX` file: empty.
    pair_cache: Box<[[u32; 3]; PAIR_CACHE]>,
    /// Per pair, frame id + 1 by line (0: not seen).
    lines: Vec<Vec<u32>>,
    slots: usize,
    wide: FxHashMap<(StrId, i64, StrId), u32>,
}

/// Slots of [`FrameTable::pair_cache`] (12 KB): a few times the pairs a large snapshot holds.
const PAIR_CACHE: usize = 1 << 10;

impl Default for FrameTable {
    fn default() -> Self {
        FrameTable {
            pairs: FxHashMap::default(),
            pair_cache: Box::new([[u32::MAX, 0, 0]; PAIR_CACHE]),
            lines: Vec::new(),
            slots: 0,
            wide: FxHashMap::default(),
        }
    }
}

impl FrameTable {
    /// The index of the (file, function) pair in `lines`, made if new.
    fn pair(&mut self, file: StrId, name: StrId) -> u32 {
        let h = (file.0.wrapping_mul(0x9E37_79B1) ^ name.0).wrapping_mul(0x85EB_CA6B);
        let slot = (h >> (32 - PAIR_CACHE.trailing_zeros())) as usize;
        if let Some(e) = self.pair_cache.get(slot) {
            if e[0] == file.0 && e[1] == name.0 {
                return e[2];
            }
        }
        let n = self.lines.len() as u32;
        let pair = *self.pairs.entry((file, name)).or_insert(n);
        if pair == n {
            self.lines.push(Vec::new());
        }
        if let Some(e) = self.pair_cache.get_mut(slot) {
            *e = [file.0, name.0, pair];
        }
        pair
    }

    /// The id of the frame, or `next` after recording it as new.
    pub(super) fn get_or_insert(&mut self, file: StrId, line: i64, name: StrId, next: u32) -> u32 {
        let pair = self.pair(file, name);
        let Some(tab) = self.lines.get_mut(pair as usize) else {
            return next;
        };
        let slot = usize::try_from(line).ok().filter(|_| line < DENSE_LINES);
        if let Some(&id) = slot.and_then(|l| tab.get(l)).filter(|&&id| id != 0) {
            return id - 1;
        }
        let id = *self.wide.entry((file, line, name)).or_insert(next);
        if id != next {
            return id;
        }
        // New: also remember it in the array when it fits, so the next lookup stays there.
        if let Some(l) = slot {
            if l >= tab.len() && self.slots + (l + 1 - tab.len()) <= DENSE_SLOTS {
                self.slots += l + 1 - tab.len();
                tab.resize(l + 1, 0);
            }
            if let Some(x) = tab.get_mut(l) {
                *x = next + 1;
                self.wide.remove(&(file, line, name));
            }
        }
        next
    }
}

/// The dict keys the model reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Filename,
    Line,
    Name,
    Action,
    Addr,
    Size,
    Stream,
    TimeUs,
    Frames,
    DeviceFree,
    Category,
    UserMetadata,
    Other,
}

impl Key {
    fn parse(s: Option<&str>) -> Key {
        match s {
            Some("filename") => Key::Filename,
            Some("line") => Key::Line,
            Some("name") => Key::Name,
            Some("action") => Key::Action,
            Some("addr") => Key::Addr,
            Some("size") => Key::Size,
            Some("stream") => Key::Stream,
            Some("time_us") => Key::TimeUs,
            Some("frames") => Key::Frames,
            Some("device_free") => Key::DeviceFree,
            Some("category") => Key::Category,
            Some("user_metadata") => Key::UserMetadata,
            _ => Key::Other,
        }
    }
}

/// Slots of [`Builder::recent_strs`].
const STR_CACHE: usize = 1024;

/// Slots of [`Builder::keys`].
const KEY_CACHE: usize = 32;

/// The fields of a trace entry, read in one pass over its dict (a repeated key keeps its last value,
/// as in Python).
#[derive(Default)]
struct EntryFields {
    action: Option<NodeId>,
    addr: Option<NodeId>,
    size: Option<NodeId>,
    stream: Option<NodeId>,
    time_us: Option<NodeId>,
    frames: Option<NodeId>,
    device_free: Option<NodeId>,
    category: Option<NodeId>,
    user_metadata: Option<NodeId>,
}

impl<'p> Builder<'p> {
    fn key(&mut self, node: NodeId) -> Key {
        let slot = node as usize % KEY_CACHE;
        if self.keys[slot].0 == node {
            return self.keys[slot].1;
        }
        let k = Key::parse(self.p.as_str(node));
        if self.p.is_shared(node) {
            self.keys[slot] = (node, k);
        }
        k
    }

    fn entry_fields(&mut self, e: NodeId) -> EntryFields {
        let p = self.p;
        let mut f = EntryFields::default();
        for kv in p.dict_items(e).chunks_exact(2) {
            let slot = match self.key(kv[0]) {
                Key::Action => &mut f.action,
                Key::Addr => &mut f.addr,
                Key::Size => &mut f.size,
                Key::Stream => &mut f.stream,
                Key::TimeUs => &mut f.time_us,
                Key::Frames => &mut f.frames,
                Key::DeviceFree => &mut f.device_free,
                Key::Category => &mut f.category,
                Key::UserMetadata => &mut f.user_metadata,
                _ => continue,
            };
            *slot = Some(kv[1]);
        }
        f
    }

    fn str_of(&mut self, id: Option<NodeId>) -> StrId {
        let Some(node) = id else { return self.empty };
        let slot = node as usize % STR_CACHE;
        if let Some(&(n, s)) = self.recent_strs.get(slot) {
            if n == node {
                return s;
            }
        }
        let shared = self.p.is_shared(node);
        if shared {
            if let Some(&s) = self.str_of_node.get(&node) {
                if let Some(x) = self.recent_strs.get_mut(slot) {
                    *x = (node, s);
                }
                return s;
            }
        }
        let s = match self.p.as_str(node) {
            Some(t) => self.s.strings.intern(t),
            None => self.empty,
        };
        if shared {
            self.str_of_node.insert(node, s);
            if let Some(x) = self.recent_strs.get_mut(slot) {
                *x = (node, s);
            }
        }
        s
    }

    fn frame(&mut self, node: NodeId) -> Option<u32> {
        let p = self.p;
        let shared = p.is_shared(node);
        if shared {
            if let Some(&f) = self.frame_of_node.get(&node) {
                return Some(f);
            }
        }
        if !p.is_dict(node) {
            return None;
        }
        let (mut filename, mut name, mut line) = (None, None, None);
        for kv in p.dict_items(node).chunks_exact(2) {
            match self.key(kv[0]) {
                Key::Filename => filename = Some(kv[1]),
                Key::Name => name = Some(kv[1]),
                Key::Line => line = Some(kv[1]),
                _ => {}
            }
        }
        let filename = self.str_of(filename);
        let name = self.str_of(name);
        let line = line.and_then(|v| p.as_i64(v)).unwrap_or(0);
        let next = self.s.frames.filename.len() as u32;
        let id = self.frame_ids.get_or_insert(filename, line, name, next);
        if id == next {
            self.s.frames.filename.push(filename);
            self.s.frames.line.push(line);
            self.s.frames.name.push(name);
        }
        if shared {
            self.frame_of_node.insert(node, id);
        }
        Some(id)
    }

    fn stack(&mut self, list: Option<NodeId>) -> StackId {
        let Some(list) = list else { return 0 };
        let p = self.p;
        let shared = p.is_shared(list);
        if shared {
            if let Some(&s) = self.stack_of_node.get(&list) {
                return s;
            }
        }
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        for &f in p.items(list) {
            if let Some(id) = self.frame(f) {
                ids.push(id);
            }
        }
        let id = if ids.is_empty() {
            0
        } else {
            match self.stack_ids.get(ids.as_slice()) {
                Some(&id) => id,
                None => {
                    let next = self.s.stacks.len() as StackId;
                    self.s.stacks.frames.extend_from_slice(&ids);
                    self.s.stacks.start.push(self.s.stacks.frames.len() as u32);
                    self.stack_ids.insert(ids.clone(), next);
                    next
                }
            }
        };
        self.scratch = ids;
        if shared {
            self.stack_of_node.insert(list, id);
        }
        id
    }

    fn segment(&mut self, seg: NodeId) {
        let p = self.p;
        if !p.is_dict(seg) {
            self.s.warnings.add(WarningKind::MalformedEvent, || {
                "a segment that is not a dict".into()
            });
            return;
        }
        let si = self.s.segments.len() as u32;
        let address = int(p, seg, "address").unwrap_or(0);
        let total = int(p, seg, "total_size").unwrap_or(0);
        let stream = int(p, seg, "stream").unwrap_or(0);
        let stack = self.stack(p.dict_get(seg, "frames"));
        let seg_type = self.str_of(p.dict_get(seg, "segment_type"));
        let pool = p
            .dict_get(seg, "segment_pool_id")
            .map(|t| {
                let it = p.items(t);
                let a = it.first().and_then(|&x| p.as_i64(x)).unwrap_or(0);
                let b = it.get(1).and_then(|&x| p.as_i64(x)).unwrap_or(0);
                (a, b)
            })
            .unwrap_or((0, 0));
        // Blocks: addresses laid out from the segment start when absent (MemoryViz.js annotate_snapshot).
        let (mut alloc, mut active, mut req) = (0u64, 0u64, 0u64);
        let mut addr = address;
        let blocks = p.dict_get(seg, "blocks").map(|b| p.items(b)).unwrap_or(&[]);
        for &b in blocks {
            if !p.is_dict(b) {
                continue;
            }
            let size = int(p, b, "size").unwrap_or(0);
            let baddr = int(p, b, "address").unwrap_or(addr);
            let frames = p.dict_get(b, "frames");
            // Legacy blocks without frames may lack requested_size: memory_viz then uses size.
            let requested =
                int(p, b, "requested_size").unwrap_or(if frames.is_none() { size } else { 0 });
            let state_text = p
                .dict_get(b, "state")
                .and_then(|v| p.as_str(v))
                .unwrap_or("");
            match state_text {
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
            let state = self.s.strings.intern(state_text);
            let stack = self.stack(frames);
            let bl = &mut self.s.blocks;
            bl.segment.push(si);
            bl.address.push(baddr);
            bl.size.push(size);
            bl.requested_size.push(requested);
            bl.state.push(state);
            bl.stack.push(stack);
            addr = baddr.saturating_add(size);
        }
        let has_totals = p.dict_get(seg, "allocated_size").is_some();
        if !has_totals {
            self.s.kind = SnapshotKind::ProfilePlot;
        }
        let sg = &mut self.s.segments;
        sg.device.push(
            p.dict_get(seg, "device")
                .and_then(|v| p.as_i64(v))
                .unwrap_or(0),
        );
        sg.address.push(address);
        sg.total_size.push(total);
        sg.allocated_size
            .push(int(p, seg, "allocated_size").unwrap_or(alloc));
        sg.active_size
            .push(int(p, seg, "active_size").unwrap_or(active));
        sg.requested_size
            .push(int(p, seg, "requested_size").unwrap_or(req));
        sg.stream.push(stream);
        sg.segment_type.push(seg_type);
        sg.pool_id.push(pool);
        sg.is_expandable.push(
            p.dict_get(seg, "is_expandable")
                .and_then(|v| p.as_bool(v))
                .unwrap_or(false),
        );
        sg.stack.push(stack);
        sg.first_block.push(self.s.blocks.len() as u32);
    }

    fn trace(&mut self, list: NodeId) -> DeviceTrace {
        let p = self.p;
        let mut t = DeviceTrace::default();
        let u = |v: Option<NodeId>| v.and_then(|v| p.as_u64(v)).unwrap_or(0);
        for &e in p.items(list) {
            if !p.is_dict(e) {
                self.s.warnings.add(WarningKind::MalformedEvent, || {
                    "a trace entry that is not a dict".into()
                });
                continue;
            }
            let f = self.entry_fields(e);
            let name_id = self.str_of(f.action.filter(|&v| p.as_str(v).is_some()));
            let name = self.s.strings.resolve(name_id);
            let action = Action::parse(name);
            if action == Action::Other {
                let n = name.to_owned();
                self.s
                    .warnings
                    .add(WarningKind::Other, || format!("unknown trace action {n:?}"));
            }
            t.action_name.push(name_id);
            t.action.push(action);
            t.addr.push(u(f.addr));
            t.size.push(u(f.size));
            t.stream.push(u(f.stream));
            t.time_us.push(f.time_us.and_then(|v| p.as_i64(v)));
            let stack = self.stack(f.frames);
            t.stack.push(stack);
            t.device_free.push(u(f.device_free));
            let cat = self.str_of(f.category);
            t.category.push(cat);
            // Dicts set by `_set_memory_metadata` arrive as their JSON text; anything else that is
            // not a string is kept as empty.
            let meta = self.str_of(f.user_metadata.filter(|&v| p.as_str(v).is_some()));
            t.user_metadata.push(meta);
        }
        t
    }
}

/// Builds the model from a decoded pickle, or says why it is no snapshot.
pub fn from_pickle(p: &Pickle) -> Result<Snapshot> {
    let mut strings = Interner::default();
    let empty = strings.intern("");
    let mut b = Builder {
        p,
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
        frame_ids: FrameTable::default(),
        stack_ids: FxHashMap::default(),
        stack_of_node: FxHashMap::default(),
        frame_of_node: FxHashMap::default(),
        str_of_node: FxHashMap::default(),
        scratch: Vec::new(),
        recent_strs: vec![(NodeId::MAX, StrId::EMPTY); STR_CACHE],
        keys: [(NodeId::MAX, Key::Other); KEY_CACHE],
        empty,
    };
    let root = p.root;
    let (segments, traces) = match p.get(root) {
        PickleValue::Dict(_) => {
            let segs = p.dict_get(root, "segments");
            let traces = p.dict_get(root, "device_traces");
            if segs.is_none() && traces.is_none() {
                return Err(Error::new(
                    ErrorKind::Incompatible(
                        "a pickle holding a dict without `segments` or `device_traces`: not a CUDA memory snapshot"
                            .into(),
                    ),
                    0,
                ));
            }
            (segs.map(|s| p.items(s)).unwrap_or(&[]), traces)
        }
        // torch 1.13 `memory_snapshot()` pickled: the bare list of segments.
        PickleValue::List(_) => {
            let items = p.items(root);
            if let Some(i) = items
                .iter()
                .position(|&v| !matches!(p.get(v), PickleValue::Dict(_)))
            {
                return Err(Error::new(
                    ErrorKind::Incompatible(format!(
                        "a pickled list whose item {i} is not a segment dict: not a CUDA memory snapshot"
                    )),
                    0,
                ));
            }
            (items, None)
        }
        _ => {
            return Err(Error::new(
                ErrorKind::Incompatible("a pickle that is not a CUDA memory snapshot".into()),
                0,
            ))
        }
    };
    for &s in segments {
        b.segment(s);
    }
    if let Some(tr) = traces {
        for &d in p.items(tr) {
            let t = b.trace(d);
            b.s.device_traces.push(t);
        }
    }
    if b.s.kind == SnapshotKind::ProfilePlot {
        b.s.warnings.add(WarningKind::Other, || {
            "memory_viz profile_plot data (not an allocator snapshot): segment totals recomputed from blocks".into()
        });
    }
    if let Some(v) = p.dict_get(root, "allocator_settings") {
        b.s.allocator_settings = Some(p.to_json(v, 8));
    }
    if let Some(v) = p.dict_get(root, "external_annotations") {
        b.s.external_annotations = Some(p.to_json(v, 8));
    }
    Ok(b.s)
}
