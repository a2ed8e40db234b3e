//! Fuzzes the `export_memory_timeline` readers (`[times, sizes]` and the raw `[[t, action, bytes,
//! category], ...]`) and what is computed from them (the peak, the chart). Any bytes must give a
//! timeline or a specific error, never a panic, a hang or unbounded allocation.
//!
//! Raw bytes rarely parse as JSON arrays of the right shape, so half the inputs (first byte odd)
//! are a recipe instead: numbers taken from the bytes are written out as a timeline of either
//! shape, with rows of the wrong length, negative and huge values and NaN-free floats, so the
//! mutations reach the coalescing, the peak search and the chart. Both go through
//! `ingest::Loader`, the sniffer included.
//! Run: `cargo +nightly fuzz run memory_timeline -- -max_len=4096`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
use tracelight_core::analysis::memory_chart::timeline_chart;
use tracelight_core::ingest::memory_timeline::peak;
use tracelight_core::ingest::{Loaded, Loader};

fn number(b: &[u8], i: &mut usize) -> String {
    let mut next = || {
        let v = b.get(*i).copied().unwrap_or(0);
        *i += 1;
        v
    };
    match next() % 8 {
        0 => format!("{}", -i64::from(next())),
        1 => format!("{}", i64::MAX - i64::from(next())),
        2 => format!("{}.5", next()),
        3 => format!("{}e{}", next(), next() % 40),
        4 => "-1".into(),
        _ => format!("{}", u32::from_le_bytes([next(), next(), 0, 0])),
    }
}

fn recipe(b: &[u8]) -> String {
    let mut i = 1;
    let raw = b.get(1).is_some_and(|x| x % 2 == 0);
    let mut out = String::from("[");
    if raw {
        while i < b.len() {
            let width = 2 + b[i] % 4; // 4 is right; 2, 3 and 5 are not
            i += 1;
            out.push('[');
            for k in 0..width {
                if k == 1 {
                    let _ = write!(out, "{}", b.get(i).copied().unwrap_or(0) % 6);
                    i += 1;
                } else {
                    out += &number(b, &mut i);
                }
                out.push(',');
            }
            out.pop();
            out += "],";
        }
        if out.ends_with(',') {
            out.pop();
        }
    } else {
        let rows = b.len() / 8;
        out.push('[');
        for _ in 0..rows {
            out += &number(b, &mut i);
            out.push(',');
        }
        if out.ends_with(',') {
            out.pop();
        }
        out += "],[";
        for _ in 0..rows {
            out.push('[');
            for _ in 0..b.get(i).map_or(9, |x| x % 10) {
                out += &number(b, &mut i);
                out.push(',');
            }
            if out.ends_with(',') {
                out.pop();
            }
            out += "],";
        }
        if out.ends_with(',') {
            out.pop();
        }
        out.push(']');
    }
    out.push(']');
    out
}

fuzz_target!(|data: &[u8]| {
    let text;
    let bytes = match data.first() {
        Some(x) if x % 2 == 1 => {
            text = recipe(data);
            text.as_bytes()
        }
        _ => data,
    };
    let mut l = Loader::new("fuzz.json");
    if let Ok(Loaded::MemoryTimeline(m)) = l.push(bytes).and_then(|()| l.finish()) {
        let p = peak(&m);
        assert!(p.peak_index < m.len().max(1));
        let _ = timeline_chart(&m);
    }
});
