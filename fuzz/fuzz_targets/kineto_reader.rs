//! Fuzzes the streaming Kineto JSON reader directly, without gzip or format sniffing, so the fuzzer
//! reaches the scanner and the model builder at once. Like the `kineto` target it reads each input
//! whole and in small pushes (sizes drawn from the first byte), and with the two-thread reader the
//! CLI uses, and requires the same outcome.
//! Run: `cargo +nightly fuzz run kineto_reader fuzz/corpus/kineto -- -dict=fuzz/kineto.dict`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::mem::discriminant;
use tracelight_core::ingest::kineto::KinetoReader;
use tracelight_core::model::Trace;
use tracelight_core::{Error, ErrorKind};

#[derive(Debug, PartialEq)]
enum Outcome {
    Trace {
        events: u64,
        slices: usize,
        tracks: usize,
        warnings: usize,
    },
    Failed(std::mem::Discriminant<ErrorKind>, u64),
}

fn outcome(r: Result<Trace, Error>) -> Outcome {
    match r {
        Ok(t) => Outcome::Trace {
            events: t.event_count,
            slices: t.slices.len(),
            tracks: t.tracks.len(),
            warnings: t.warnings.iter().count(),
        },
        Err(e) => Outcome::Failed(discriminant(&e.kind), e.offset),
    }
}

fn read(data: &[u8], seed: Option<u8>, threaded: bool) -> Outcome {
    let mut r = if threaded {
        KinetoReader::threaded()
    } else {
        KinetoReader::new()
    };
    let mut i = 0;
    let mut k: u32 = u32::from(seed.unwrap_or(0));
    while i < data.len() {
        let n = match seed {
            None => data.len(),
            Some(_) => {
                k = k.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                1 + ((k >> 16) as usize % 64)
            }
        };
        let end = (i + n).min(data.len());
        if let Err(e) = r.push(&data[i..end]) {
            return outcome(Err(e));
        }
        i = end;
    }
    outcome(r.finish())
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, _)) = data.split_first() else {
        return;
    };
    let whole = read(data, None, false);
    let split = read(data, Some(seed), false);
    assert_eq!(whole, split, "slice boundaries changed the outcome");
    let threaded = read(data, Some(seed), true);
    assert_eq!(whole, threaded, "the two-thread reader disagrees");
});
