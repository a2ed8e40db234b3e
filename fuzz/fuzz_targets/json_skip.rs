//! Fuzzes the JSON scanner's container skip, eight bytes at a time (SWAR), against its byte-at-a-
//! time reference: from every `{` and `[` of the input, both must end at the same byte or stop
//! the same way (`tracelight_core::ingest::skips_agree`).
//! Run: `cargo +nightly fuzz run json_skip fuzz/corpus/json_skip -- -dict=fuzz/kineto.dict`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    assert!(tracelight_core::ingest::skips_agree(data));
});
