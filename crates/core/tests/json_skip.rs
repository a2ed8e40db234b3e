//! The JSON scanner skips containers eight bytes at a time (SWAR); its byte-at-a-time reference
//! must agree from every `{` and `[` (`ingest::skips_agree`): random texts of the characters that
//! matter, deep and cut containers, and every window of the HTA corpus traces. The `json_skip` fuzz
//! target runs the same check on fuzzed input.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tracelight_core::ingest::skips_agree;

/// A deterministic stream of numbers (no `rand` for tests).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *seed >> 33
}

#[test]
fn skipping_eight_bytes_at_a_time_agrees_with_the_byte_rule() {
    let mut seed = 9;
    let alphabet = b"{}[]\"\\ ,:1a\n";
    for len in 1..300 {
        for _ in 0..40 {
            let data: Vec<u8> = (0..len)
                .map(|_| alphabet[lcg(&mut seed) as usize % alphabet.len()])
                .collect();
            assert!(skips_agree(&data), "{:?}", String::from_utf8_lossy(&data));
        }
    }
    // Deep, long and cut containers of a real shape.
    let mut deep = String::new();
    for k in 0..200 {
        deep.push_str(&format!(
            "[{{\"k{k}\": \"a}}]\\\"b\", \"v\": [1, 2, [3]]}}, "
        ));
    }
    deep.push_str(&"]".repeat(200));
    for cut in (1..deep.len()).step_by(7) {
        assert!(skips_agree(&deep.as_bytes()[..cut]));
    }
    assert!(skips_agree(deep.as_bytes()));
}

/// Every container in the corpus's Kineto traces (their first MiBs in debug builds), in
/// windows cut at arbitrary bytes.
#[test]
fn skipping_agrees_on_every_container_of_the_corpus() {
    use std::io::Read;
    let Some(dir) = tracelight_testkit::path("real/hta") else {
        return;
    };
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    names.sort();
    let mut seed = 3;
    let mut checked = 0;
    for p in &names {
        let raw = std::fs::read(p).unwrap();
        let mut v = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .take(if cfg!(debug_assertions) {
                1 << 20
            } else {
                64 << 20
            })
            .read_to_end(&mut v)
            .unwrap();
        let mut at = 0;
        while at < v.len() {
            let end = (at + 1 + lcg(&mut seed) as usize % (256 << 10)).min(v.len());
            assert!(
                skips_agree(&v[at..end]),
                "{} bytes {at}..{end}",
                p.display()
            );
            checked += 1;
            at = end;
        }
    }
    assert!(
        names.len() >= 5 && checked > 40,
        "{} files, {checked} windows",
        names.len()
    );
}
