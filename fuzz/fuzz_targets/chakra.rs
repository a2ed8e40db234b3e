//! Fuzzes the streaming Chakra execution-trace reader directly (no gzip, no sniffing), reading each
//! input whole and in 1–64-byte pushes (sizes drawn from the first byte): both must give the same
//! outcome. Every node of a model that loads then goes through the analyses the page and the CLI
//! run on it: the summary, the data-dependency index and each node's details, and a link to an
//! empty Kineto trace.
//! Run: `cargo +nightly fuzz run chakra fuzz/corpus/chakra -- -dict=fuzz/chakra.dict`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::mem::discriminant;
use tracelight_core::analysis::et::{details, summary, Producers};
use tracelight_core::analysis::et_link::link;
use tracelight_core::ingest::chakra::ChakraReader;
use tracelight_core::model::exec_trace::ExecTrace;
use tracelight_core::model::Trace;
use tracelight_core::{Error, ErrorKind};

#[derive(Debug, PartialEq)]
enum Outcome {
    Et {
        nodes: usize,
        args: usize,
        attrs: usize,
        warnings: usize,
    },
    Failed(std::mem::Discriminant<ErrorKind>, u64),
}

fn read(data: &[u8], seed: Option<u8>) -> (Outcome, Option<ExecTrace>) {
    let mut r = ChakraReader::new();
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
            return (Outcome::Failed(discriminant(&e.kind), e.offset), None);
        }
        i = end;
    }
    match r.finish() {
        Ok(et) => (
            Outcome::Et {
                nodes: et.nodes.len(),
                args: et.args.len(),
                attrs: et.attrs.name.len(),
                warnings: et.warnings.iter().count(),
            },
            Some(et),
        ),
        Err(Error { kind, offset, .. }) => (Outcome::Failed(discriminant(&kind), offset), None),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, _)) = data.split_first() else {
        return;
    };
    let (whole, et) = read(data, None);
    let (split, _) = read(data, Some(seed));
    assert_eq!(whole, split, "slice boundaries changed the outcome");
    if let Some(et) = et {
        let _ = summary(&et);
        let p = Producers::build(&et);
        for n in 0..et.nodes.len() {
            let _ = details(&et, &p, n);
        }
        let _ = link(&Trace::default(), &et);
    }
});
