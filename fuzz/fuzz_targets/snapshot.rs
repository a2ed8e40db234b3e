//! Fuzzes the snapshot model and its analyses, past the pickle decoder: the input bytes are read as
//! a recipe for a *well-formed* `_dump_snapshot()` dict (segments with blocks, device traces with
//! actions, addresses, sizes, streams, times and frames, some keys missing or of the wrong type),
//! which is pickled (protocol 2) and loaded through `ingest::Loader` like a file. The `pickle`
//! target mutates raw bytes and rarely gets this far; here every input is a snapshot, so mutations
//! reach the replay (frees of unknown addresses, overlapping blocks, segments freed twice, time
//! going backwards), the summary, the active timeline and the memory chart.
//! Run: `cargo +nightly fuzz run snapshot -- -max_len=4096` (no seeds needed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelight_core::analysis::memory_chart::snapshot_chart;
use tracelight_core::analysis::snapshot::{active_timeline, summarize};
use tracelight_core::ingest::{Loaded, Loader};

/// Reads fuzz bytes as small numbers; zeros once exhausted.
struct Recipe<'a>(&'a [u8]);

impl Recipe<'_> {
    fn byte(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }
    fn int(&mut self) -> i64 {
        // Mostly small values that collide (addresses, sizes), sometimes extremes.
        match self.byte() % 8 {
            0 => i64::from(self.byte()) * 512,
            1 => -i64::from(self.byte()),
            2 => i64::MAX - i64::from(self.byte()),
            3 => i64::from(u32::from_le_bytes([
                self.byte(),
                self.byte(),
                self.byte(),
                0,
            ])),
            _ => i64::from(self.byte() % 16) * 4096,
        }
    }
    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

/// A minimal protocol-2 pickle writer: dicts, lists, str, int, float, bool, None.
#[derive(Default)]
struct Pickler(Vec<u8>);

impl Pickler {
    fn str(&mut self, s: &str) {
        self.0.push(b'X');
        self.0.extend_from_slice(&(s.len() as u32).to_le_bytes());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn int(&mut self, v: i64) {
        match i32::try_from(v) {
            Ok(v) => {
                self.0.push(b'J');
                self.0.extend_from_slice(&v.to_le_bytes());
            }
            Err(_) => {
                self.0.extend_from_slice(&[0x8a, 8]);
                self.0.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    fn float(&mut self, v: f64) {
        self.0.push(b'G');
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn open_dict(&mut self) {
        self.0.extend_from_slice(b"}(");
    }
    fn open_list(&mut self) {
        self.0.extend_from_slice(b"](");
    }
    fn close_dict(&mut self) {
        self.0.push(b'u');
    }
    fn close_list(&mut self) {
        self.0.push(b'e');
    }
}

const ACTIONS: [&str; 11] = [
    "alloc",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "snapshot",
    "oom",
    "free",
    "bogus",
];
const STATES: [&str; 4] = [
    "active_allocated",
    "active_pending_free",
    "inactive",
    "weird",
];

fn frames(r: &mut Recipe<'_>, p: &mut Pickler) {
    p.str("frames");
    p.open_list();
    for _ in 0..r.byte() % 3 {
        p.open_dict();
        p.str("filename");
        p.str(["train.py", "torch/nn/modules/module.py", "??"][usize::from(r.byte() % 3)]);
        p.str("line");
        p.int(r.int());
        p.str("name");
        p.str(["forward", "backward", "<module>"][usize::from(r.byte() % 3)]);
        p.close_dict();
    }
    p.close_list();
}

/// Writes `key: int` unless the recipe drops the key (1 in 16) or makes it a string.
fn field(r: &mut Recipe<'_>, p: &mut Pickler, key: &str) {
    match r.byte() % 16 {
        0 => {}
        1 => {
            p.str(key);
            p.str("x");
        }
        _ => {
            p.str(key);
            p.int(r.int());
        }
    }
}

fn snapshot(r: &mut Recipe<'_>) -> Vec<u8> {
    let mut p = Pickler::default();
    p.0.extend_from_slice(&[0x80, 2]);
    p.open_dict();
    p.str("segments");
    p.open_list();
    for _ in 0..r.byte() % 4 {
        p.open_dict();
        for key in [
            "device",
            "address",
            "total_size",
            "allocated_size",
            "active_size",
            "requested_size",
            "stream",
        ] {
            field(r, &mut p, key);
        }
        p.str("segment_type");
        p.str(if r.byte() % 2 == 0 { "large" } else { "small" });
        p.str("blocks");
        p.open_list();
        for _ in 0..r.byte() % 4 {
            p.open_dict();
            for key in ["size", "requested_size", "address"] {
                field(r, &mut p, key);
            }
            p.str("state");
            p.str(STATES[usize::from(r.byte()) % STATES.len()]);
            frames(r, &mut p);
            p.close_dict();
        }
        p.close_list();
        p.close_dict();
    }
    p.close_list();
    p.str("device_traces");
    p.open_list();
    for _ in 0..1 + r.byte() % 2 {
        p.open_list();
        while !r.done() {
            p.open_dict();
            p.str("action");
            p.str(ACTIONS[usize::from(r.byte()) % ACTIONS.len()]);
            for key in ["addr", "size", "stream", "device_free"] {
                field(r, &mut p, key);
            }
            if r.byte() % 4 != 0 {
                p.str("time_us");
                p.int(r.int());
            }
            if r.byte() % 8 == 0 {
                p.str("compile_context");
                p.float(f64::from(r.byte()) / 3.0);
            }
            frames(r, &mut p);
            p.close_dict();
            if r.byte() % 32 == 0 {
                break;
            }
        }
        p.close_list();
    }
    p.close_list();
    p.close_dict();
    p.0.push(b'.');
    p.0
}

fuzz_target!(|data: &[u8]| {
    let bytes = snapshot(&mut Recipe(data));
    let mut l = Loader::new("fuzz.pickle");
    let loaded = l.push(&bytes).and_then(|()| l.finish());
    let Ok(Loaded::Snapshot(s)) = loaded else {
        // Every recipe is a well-formed snapshot dict: it must load.
        panic!(
            "a well-formed snapshot did not load: {:?}",
            loaded.map(|l| l.format())
        )
    };
    let _ = summarize(&s);
    for d in s.devices() {
        let _ = active_timeline(&s, d, 64, 64);
        let _ = snapshot_chart(&s, d, 8);
    }
});
