//! Fuzzes the whole loading path of a Kineto trace: gzip sniffing, format sniffing, the streaming
//! JSON scanner and the model builder. Any bytes must give a trace (perhaps with warnings) or a
//! specific error, never a panic, a hang or unbounded allocation.
//!
//! Each input is loaded twice through [`Loader`]: whole, and in small pushes whose sizes come from
//! the first input byte. Both must give the same outcome (same format and event count, or the same
//! error kind): slice boundaries must never change the result.
//! Run: `cargo +nightly fuzz run kineto fuzz/corpus/kineto -- -dict=fuzz/kineto.dict`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::mem::discriminant;
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::{Error, ErrorKind};

/// The outcome reduced to what must not depend on slicing.
#[derive(Debug, PartialEq)]
enum Outcome {
    Trace { events: u64, slices: usize },
    Other(&'static str),
    Failed(std::mem::Discriminant<ErrorKind>),
}

fn outcome(r: Result<Loaded, Error>) -> Outcome {
    match r {
        Ok(Loaded::Trace(t)) => Outcome::Trace {
            events: t.event_count,
            slices: t.slices.len(),
        },
        Ok(other) => Outcome::Other(other.format().label()),
        Err(e) => Outcome::Failed(discriminant(&e.kind)),
    }
}

fn load_whole(data: &[u8]) -> Outcome {
    let mut l = Loader::new("fuzz");
    outcome(l.push(data).and_then(|()| l.finish()))
}

/// Pushes in pieces of 1..=64 bytes; the sizes cycle through a pattern drawn from `seed`.
fn load_split(data: &[u8], seed: u8) -> Outcome {
    let mut l = Loader::new("fuzz");
    let mut i = 0;
    let mut k: u32 = u32::from(seed);
    while i < data.len() {
        k = k.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = 1 + ((k >> 16) as usize % 64);
        let end = (i + n).min(data.len());
        if let Err(e) = l.push(&data[i..end]) {
            return outcome(Err(e));
        }
        i = end;
    }
    outcome(l.finish())
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, _)) = data.split_first() else {
        return;
    };
    let whole = load_whole(data);
    let split = load_split(data, seed);
    assert_eq!(whole, split, "slice boundaries changed the outcome");
});
