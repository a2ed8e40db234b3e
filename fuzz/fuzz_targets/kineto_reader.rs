//! Fuzzes the streaming Kineto JSON reader directly, without gzip or format sniffing, so the fuzzer
//! reaches the scanner and the model builder at once. Like the `kineto` target it reads each input
//! whole and in small pushes (sizes drawn from the first byte), and with the two-thread reader the
//! CLI uses, and requires the same outcome; then reads it in shards cut at places drawn from the
//! first byte (event boundaries and arbitrary bytes: a wrong cut must be noticed by the merge) and
//! requires the same model, every column and warning, or the same error. The same again with
//! display-only args left in the input (`leave_args_in_file`, what the page's workers do): the
//! sharded model equals the one-thread one, and every span it leaves points at an args object
//! (`{` … `}`) inside the input.
//! Run: `cargo +nightly fuzz run kineto_reader fuzz/corpus/kineto -- -dict=fuzz/kineto.dict`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::mem::discriminant;
use tracelight_core::ingest::kineto::cut::find_cut;
use tracelight_core::ingest::kineto::{read_in_shards, read_in_shards_with, KinetoReader};
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

/// Everything the model holds, as text (the interner through its strings).
fn model(r: Result<Trace, Error>) -> Result<String, String> {
    let t = r.map_err(|e| e.to_string())?;
    let strings: Vec<&str> = (0..t.strings.len() as u32)
        .map(|i| t.str(tracelight_core::model::StrId(i)))
        .collect();
    let args: Vec<(String, Option<(u64, u32)>)> = (0..t.slices.len())
        .map(|i| (t.slice_args_stored(i).into_owned(), t.slice_args_in_file(i)))
        .collect();
    Ok(format!(
        "{strings:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{args:?}{} {}",
        t.meta,
        t.processes,
        t.tracks,
        t.slices,
        t.gpu,
        t.flops,
        t.instants,
        t.memory,
        t.counters,
        t.flows,
        t.warnings,
        t.event_count,
        t.bytes_read
    ))
}

/// Up to four cuts: event boundaries found from positions drawn from `seed`, and arbitrary bytes.
fn cuts(data: &[u8], seed: u8) -> Vec<usize> {
    let mut k = u32::from(seed) | 1;
    let mut out = Vec::new();
    for n in 0..4 {
        k = k.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let at = 1 + (k >> 8) as usize % data.len().max(2);
        let c = if n % 2 == 0 {
            find_cut(&data[..at.min(data.len())], 1, usize::MAX)
        } else {
            Some(at)
        };
        out.extend(c);
    }
    out.sort_unstable();
    out.dedup();
    out
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
    let cuts = cuts(data, seed);
    let mut r = KinetoReader::new();
    let one = r.push(data).and_then(|()| r.finish());
    let (sharded, _) = read_in_shards(data, &cuts);
    assert_eq!(
        model(one),
        model(sharded),
        "the sharded reader disagrees at {cuts:?}"
    );
    let mut r = KinetoReader::new();
    r.leave_args_in_file();
    let lean = r.push(data).and_then(|()| r.finish());
    if let Ok(t) = &lean {
        for i in 0..t.slices.len() {
            if let Some((off, len)) = t.slice_args_in_file(i) {
                let span = data.get(off as usize..off as usize + len as usize);
                assert!(
                    span.is_some_and(|b| b.first() == Some(&b'{') && b.last() == Some(&b'}')),
                    "slice {i}: args left at {off}+{len} are not an object there"
                );
            }
        }
    }
    let (sharded, _) = read_in_shards_with(data, &cuts, true);
    assert_eq!(
        model(lean),
        model(sharded),
        "args left in the input: the sharded reader disagrees at {cuts:?}"
    );
});
