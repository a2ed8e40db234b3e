//! A small CUDA memory snapshot pickle, written as `torch.cuda.memory._dump_snapshot()` writes
//! one (protocol 4, every string, dict and list memoized, items in batches of 1000), for the page
//! to run its snapshot reader on before the first real one: allocations and frees on one stream,
//! frames as fresh dicts in half of the entries and as memo fetches of earlier ones in the other
//! half (both ways torch's pickles hold them), one segment whose blocks are what is still live.

use std::collections::HashMap;

/// Python's pickler puts at most this many items between a MARK and its APPENDS / SETITEMS.
const BATCH: usize = 1000;

#[derive(Default)]
struct Pickler {
    out: Vec<u8>,
    memo: u32,
    strs: HashMap<String, u32>,
}

impl Pickler {
    fn memoize(&mut self) -> u32 {
        self.out.push(0x94);
        self.memo += 1;
        self.memo - 1
    }
    fn get(&mut self, i: u32) {
        if i < 256 {
            self.out.extend_from_slice(&[b'h', i as u8]);
        } else {
            self.out.push(b'j');
            self.out.extend_from_slice(&i.to_le_bytes());
        }
    }
    fn str(&mut self, s: &str) {
        if let Some(&i) = self.strs.get(s) {
            self.get(i);
            return;
        }
        let b = s.as_bytes();
        if b.len() < 256 {
            self.out.extend_from_slice(&[0x8c, b.len() as u8]);
        } else {
            self.out.push(b'X');
            self.out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        }
        self.out.extend_from_slice(b);
        let i = self.memoize();
        self.strs.insert(s.to_owned(), i);
    }
    fn int(&mut self, v: u64) {
        match v {
            0..=0xff => self.out.extend_from_slice(&[b'K', v as u8]),
            0x100..=0xffff => {
                self.out.push(b'M');
                self.out.extend_from_slice(&(v as u16).to_le_bytes());
            }
            0x1_0000..=0x7fff_ffff => {
                self.out.push(b'J');
                self.out.extend_from_slice(&(v as u32).to_le_bytes());
            }
            _ => {
                // LONG1: little-endian two's complement, with a sign byte when the top bit is set.
                let mut b = v.to_le_bytes().to_vec();
                while b.len() > 1 && b[b.len() - 1] == 0 && b[b.len() - 2] & 0x80 == 0 {
                    b.pop();
                }
                if b[b.len() - 1] & 0x80 != 0 {
                    b.push(0);
                }
                self.out.extend_from_slice(&[0x8a, b.len() as u8]);
                self.out.extend_from_slice(&b);
            }
        }
    }
    /// A new dict or list, memoized, and the MARK of its first batch.
    fn open(&mut self, op: u8) {
        self.out.push(op);
        self.memoize();
    }
}

/// One frame of a stack: (file, line, function).
type Frame = (&'static str, u64, &'static str);

const FILES: [&str; 4] = [
    "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py",
    "/venv/lib/python3.11/site-packages/torch/_tensor.py",
    "/home/user/proj/model.py",
    "??",
];
const NAMES: [&str; 6] = [
    "forward",
    "backward",
    "linear",
    "_call_impl",
    "attention",
    "step",
];

/// A snapshot pickle of `entries` trace entries with `depth` frames each.
pub fn snapshot(entries: u32, depth: u32) -> Vec<u8> {
    let mut p = Pickler::default();
    p.out.extend_from_slice(&[0x80, 4]);
    p.open(b'}');
    p.out.push(b'(');
    let base = 0x7f00_0000_0000u64;
    let seg_size = 64u64 << 20;
    // Entry k allocates 512·(k % 97 + 1) bytes at its own offset; every third frees the one
    // before it.
    let size = |k: u64| 512 * (k % 97 + 1);
    let addr = |k: u64| base + k * 64 * 1024;
    let frame = |k: u64, d: u64| -> Frame {
        let i = (k * 7 + d * 3) as usize;
        (
            FILES[i % FILES.len()],
            10 + (k + d) % 400,
            NAMES[i % NAMES.len()],
        )
    };
    let mut live: Vec<u64> = Vec::new();
    let mut actions: Vec<(&str, u64)> = Vec::new();
    for k in 0..u64::from(entries) {
        actions.push(("alloc", k));
        live.push(k);
        if k % 3 == 2 {
            let f = k - 1;
            actions.push(("free_requested", f));
            actions.push(("free_completed", f));
            live.retain(|&x| x != f);
        }
    }
    // Memo slot of each frame dict written fresh, by its stack position and entry.
    let mut frame_memo: HashMap<(u64, u64), u32> = HashMap::new();

    p.str("segments");
    p.open(b']');
    p.out.push(b'(');
    p.open(b'}');
    p.out.push(b'(');
    for (key, v) in [
        ("device", 0),
        ("address", base),
        ("total_size", seg_size),
        ("allocated_size", live.iter().map(|&k| size(k)).sum()),
        ("active_size", live.iter().map(|&k| size(k)).sum()),
        ("requested_size", live.iter().map(|&k| size(k)).sum()),
        ("stream", 0),
    ] {
        p.str(key);
        p.int(v);
    }
    p.str("segment_type");
    p.str("large");
    p.str("segment_pool_id");
    p.int(0);
    p.int(0);
    p.out.push(0x86); // TUPLE2
    p.memoize();
    p.str("is_expandable");
    p.out.push(0x89); // False
    p.str("frames");
    p.open(b']');
    p.str("blocks");
    p.open(b']');
    for chunk in live.chunks(BATCH) {
        p.out.push(b'(');
        for &k in chunk {
            p.open(b'}');
            p.out.push(b'(');
            p.str("address");
            p.int(addr(k));
            p.str("size");
            p.int(size(k));
            p.str("requested_size");
            p.int(size(k));
            p.str("state");
            p.str("active_allocated");
            p.str("frames");
            p.open(b']');
            p.out.push(b'u');
        }
        p.out.push(b'e');
    }
    p.out.extend_from_slice(b"ue"); // the segment's SETITEMS, the segments' APPENDS

    p.str("device_traces");
    p.open(b']');
    p.out.push(b'(');
    p.open(b']');
    for (n, chunk) in actions.chunks(BATCH).enumerate() {
        p.out.push(b'(');
        for (j, &(action, k)) in chunk.iter().enumerate() {
            p.open(b'}');
            p.out.push(b'(');
            p.str("action");
            p.str(action);
            p.str("addr");
            p.int(addr(k));
            p.str("size");
            p.int(size(k));
            p.str("stream");
            p.int(0);
            p.str("time_us");
            p.int(1_760_000_000_000_000 + ((n * BATCH + j) as u64) * 10);
            p.str("frames");
            p.open(b']');
            p.out.push(b'(');
            // An alloc's frames, fetched again by its frees; fresh dicts otherwise.
            for d in 0..u64::from(depth) {
                if let (true, Some(&m)) = (action != "alloc", frame_memo.get(&(k, d))) {
                    p.get(m);
                    continue;
                }
                let (file, line, name) = frame(k, d);
                p.open(b'}');
                let m = p.memo - 1;
                frame_memo.insert((k, d), m);
                p.out.push(b'(');
                p.str("filename");
                p.str(file);
                p.str("line");
                p.int(line);
                p.str("name");
                p.str(name);
                p.out.push(b'u');
            }
            p.out.extend_from_slice(b"eu");
        }
        p.out.push(b'e');
    }
    p.out.push(b'e'); // device_traces' APPENDS
    p.str("allocator_settings");
    p.open(b'}');
    p.out.extend_from_slice(b"u.");
    p.out
}
