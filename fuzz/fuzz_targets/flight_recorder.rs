//! Fuzzes the Flight Recorder reader and the cross-rank verdict. The first byte picks the mode:
//! - even: the rest is one file's raw bytes (pickle or JSON, whatever they are), loaded through
//!   `ingest::Loader` under a dump's name: any input must give a dump or an error, never a panic
//!   or a hang (the pickle decoder stays data-only);
//! - odd: the rest is a recipe for 1–6 *well-formed* dumps (pickled, protocol 2) of one job —
//!   groups, sequence ids that skip, repeat and go backwards, states, `retired`, p2p names with
//!   odd peers (`send 9->-1`, `recv 3<-?`), sizes, dtypes, `pg_status` that agrees or not, a
//!   `pg_config` that is whole or gloo's broken one — which must all load, and whose report
//!   (grid, verdict, stacks, Markdown, JSON) must be built without a panic.
//! Run: `cargo +nightly fuzz run flight_recorder -- -max_len=4096` (seeds: the gloo fixtures).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelight_core::analysis::flight_recorder::{analyze, RankDump};
use tracelight_core::ingest::flight_recorder::FrDump;
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::report::flight_recorder::{json, markdown};

struct Recipe<'a>(&'a [u8]);

impl Recipe<'_> {
    fn byte(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }
    fn small(&mut self) -> i64 {
        match self.byte() % 16 {
            0 => -1,
            1 => i64::MAX - i64::from(self.byte()),
            2 => -i64::from(self.byte()),
            n => i64::from(n),
        }
    }
    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

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
    fn key_int(&mut self, k: &str, v: i64) {
        self.str(k);
        self.int(v);
    }
    fn key_str(&mut self, k: &str, v: &str) {
        self.str(k);
        self.str(v);
    }
    fn open(&mut self, dict: bool) {
        self.0.extend_from_slice(if dict { b"}(" } else { b"](" });
    }
    fn close(&mut self, dict: bool) {
        self.0.push(if dict { b'u' } else { b'e' });
    }
}

const OPS: [&str; 10] = [
    "nccl:all_reduce",
    "gloo:all_reduce",
    "nccl:broadcast",
    "nccl:all_gather",
    "nccl:all_to_all",
    "nccl:coalesced",
    "nccl:send 0->1",
    "nccl:recv 1<-0",
    "gloo:recv 3<-?",
    "nccl:send 9->-1",
];
const STATES: [&str; 4] = ["scheduled", "started", "completed", "odd"];
const PGS: [(&str, &str); 4] = [
    ("0", "default_pg"),
    ("1", "dp"),
    ("2", "undefined"),
    ("", ""),
];

fn dump(r: &mut Recipe<'_>, rank: i64) -> Vec<u8> {
    let mut p = Pickler::default();
    p.0.extend_from_slice(&[0x80, 2]);
    p.open(true);
    p.key_str("version", if r.byte() % 4 == 0 { "1.0" } else { "2.10" });
    p.str("pg_config");
    p.open(true);
    if r.byte() % 2 == 0 {
        // gloo's: one entry named ''.
        p.str("");
        p.open(true);
        p.key_str("name", "");
        p.key_str("desc", "");
        p.key_str("ranks", "[0, 1, 2, 3]");
        p.close(true);
    } else {
        for (name, desc) in PGS.iter().take(1 + usize::from(r.byte() % 3)) {
            p.str(name);
            p.open(true);
            p.key_str("name", name);
            p.key_str("desc", desc);
            p.key_str(
                "ranks",
                ["[0, 1, 2, 3]", "[0, 1]", "[x]", "[]"][usize::from(r.byte() % 4)],
            );
            p.close(true);
        }
    }
    p.close(true);
    p.str("pg_status");
    p.open(true);
    for _ in 0..r.byte() % 3 {
        p.str(PGS[usize::from(r.byte() % 4)].0);
        p.open(true);
        p.key_int("last_enqueued_collective", r.small());
        p.key_int("last_started_collective", r.small());
        p.key_int("last_completed_collective", r.small());
        p.close(true);
    }
    p.close(true);
    p.str("entries");
    p.open(false);
    let mut record = i64::from(r.byte() % 8);
    let mut seq = 1;
    while !r.done() {
        let b = r.byte();
        if b == 0xff {
            break;
        }
        let (pg, desc) = PGS[usize::from(b % 4)];
        p.open(true);
        p.key_int("record_id", record);
        p.key_int("pg_id", i64::from(b % 4));
        p.str("process_group");
        p.0.push(b'(');
        p.str(pg);
        p.str(desc);
        p.0.push(b't');
        seq += match r.byte() % 8 {
            0 => 0,
            1 => -2,
            2 => 5,
            _ => 1,
        };
        p.key_int("collective_seq_id", seq);
        p.key_int("p2p_seq_id", r.small());
        let op = OPS[usize::from(r.byte()) % OPS.len()];
        p.key_str("profiling_name", op);
        p.str("is_p2p");
        p.0.push(if op.contains(' ') { 0x88 } else { 0x89 });
        for key in ["input_sizes", "output_sizes"] {
            p.str(key);
            p.open(false);
            for _ in 0..r.byte() % 3 {
                p.open(false);
                p.int(r.small());
                p.close(false);
            }
            p.close(false);
        }
        for key in ["input_dtypes", "output_dtypes"] {
            p.str(key);
            p.open(false);
            p.str(["Float", "Int", "BFloat16"][usize::from(r.byte() % 3)]);
            p.close(false);
        }
        p.key_str("state", STATES[usize::from(r.byte() % 4)]);
        p.str("retired");
        p.0.push(if r.byte() % 2 == 0 { 0x88 } else { 0x89 });
        p.key_int("time_created_ns", (1_000 * record).wrapping_add(r.small()));
        p.key_int("time_discovered_started_ns", r.small());
        if r.byte() % 4 == 0 {
            p.str("frames");
            p.open(false);
            p.open(true);
            p.key_str("name", "step");
            p.key_str("filename", "train.py");
            p.key_int("line", rank);
            p.close(true);
            p.close(false);
        }
        p.close(true);
        record += 1;
    }
    p.close(false);
    p.close(true);
    p.0.push(b'.');
    p.0
}

fn load(name: &str, bytes: &[u8]) -> Option<FrDump> {
    let mut l = Loader::new(name);
    match l.push(bytes).and_then(|()| l.finish()) {
        Ok(Loaded::FlightRecorder(d)) => Some(*d),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        if let Some(d) = load("nccl_trace_rank_0", rest) {
            let r = analyze(&[RankDump {
                rank: 0,
                path: "nccl_trace_rank_0",
                dump: &d,
            }]);
            let _ = markdown(&r);
            let _ = json(&r);
        }
        return;
    }
    let mut recipe = Recipe(rest);
    let n = 1 + i64::from(recipe.byte() % 6);
    let names: Vec<String> = (0..n).map(|k| format!("rank_{k}")).collect();
    let dumps: Vec<FrDump> = (0..n)
        .map(|k| {
            let bytes = dump(&mut recipe, k);
            load(&names[k as usize], &bytes)
                .unwrap_or_else(|| panic!("a well-formed dump did not load"))
        })
        .collect();
    // Ranks as the names give them, one left out now and then (a missing file).
    let rd: Vec<RankDump> = dumps
        .iter()
        .zip(&names)
        .enumerate()
        .filter(|(k, _)| n < 3 || *k != 1)
        .map(|(k, (d, p))| RankDump {
            rank: k as i64,
            path: p,
            dump: d,
        })
        .collect();
    let r = analyze(&rd);
    let _ = markdown(&r);
    let _ = json(&r);
});
