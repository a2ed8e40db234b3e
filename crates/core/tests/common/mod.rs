//! Helpers shared by the integration tests that compare two readers' models.

use std::io::Read;
use tracelight_core::model::{StrId, Trace};

/// Every Kineto trace of the corpus (the list of `tests/scripts/corpus_event_counts.out.json`),
/// decompressed, with its path under the corpus folder. A debug build (CI's `cargo test`) keeps 2 MB
/// at most of each (a cut file: what precedes the cut is kept, with a warning), since the
/// unoptimized reader takes ~90 s for the whole 444 MB; `cargo test --release` reads them whole.
#[allow(dead_code)] // Each test crate compiles this module; not every one reads the corpus.
pub fn kineto_corpus() -> Vec<(String, Vec<u8>)> {
    let list: serde_json::Value =
        serde_json::from_str(include_str!("../scripts/corpus_event_counts.out.json"))
            .expect("the corpus list is JSON");
    let files = list["files"].as_object().expect("the list has files");
    let mut out = Vec::new();
    for rel in files.keys() {
        let raw = std::fs::read(tracelight_testkit::root().join(rel)).expect(rel);
        let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut v = Vec::new();
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut v)
                .expect(rel);
            v
        } else {
            raw
        };
        let keep = if cfg!(debug_assertions) {
            2 << 20
        } else {
            usize::MAX
        };
        out.push((rel.clone(), bytes[..bytes.len().min(keep)].to_vec()));
    }
    out
}

/// The repo's GPU and CPU fixtures (`tests/fixtures/*/*.pt.trace.json.gz`) and then every corpus
/// file of the list found beside the clone, each inflated, with its name; and how many fixtures
/// lead. Where CI must have the corpus, a missing file fails (`testkit::checked`).
#[allow(dead_code)] // Each test crate compiles this module; not every one reads these.
pub fn fixtures_and_corpus(what: &str) -> (Vec<(String, Vec<u8>)>, usize) {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for dir in ["torch-2.11-cuda13-h100", "torch-2.15-cpu"] {
        let mut names: Vec<_> = std::fs::read_dir(format!("{fixtures}/{dir}"))
            .expect("the fixtures folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".pt.trace.json.gz"))
            .collect();
        names.sort();
        for p in names {
            files.push((
                p.display().to_string(),
                std::fs::read(&p).expect("a fixture"),
            ));
        }
    }
    let fixture_count = files.len();
    assert!(fixture_count >= 5, "{fixture_count} fixtures");
    let list: serde_json::Value =
        serde_json::from_str(include_str!("../scripts/corpus_event_counts.out.json"))
            .expect("the corpus list is JSON");
    let listed = list["files"].as_object().expect("the list has files");
    let mut corpus = 0;
    for rel in listed.keys() {
        if let Some(b) = tracelight_testkit::bytes(rel) {
            files.push((rel.clone(), b));
            corpus += 1;
        }
    }
    tracelight_testkit::checked(what, corpus, listed.len());
    let files = files
        .into_iter()
        .map(|(name, raw)| (name, inflate(raw)))
        .collect();
    (files, fixture_count)
}

/// `raw`, gunzipped where it is gzip.
pub fn inflate(raw: Vec<u8>) -> Vec<u8> {
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return raw;
    }
    let mut v = Vec::new();
    flate2::read::MultiGzDecoder::new(&raw[..])
        .read_to_end(&mut v)
        .expect("gzip that inflates");
    v
}

/// Two models are the same: every slice column, string, stored args text, and (through their
/// `Debug` form) every other table, the metadata and the warnings.
#[allow(dead_code)] // Each test crate compiles this module; not every one compares models.
pub fn assert_same_model(a: &Trace, b: &Trace, what: &str) {
    let (x, y) = (&a.slices, &b.slices);
    assert!(
        x.start == y.start && x.dur == y.dur && x.track == y.track,
        "{what}: slices"
    );
    assert!(
        x.name == y.name && x.cat == y.cat && x.kind == y.kind,
        "{what}: names"
    );
    assert!(
        x.depth == y.depth && x.parent == y.parent,
        "{what}: nesting"
    );
    assert!(
        x.external_id == y.external_id && x.correlation == y.correlation && x.rf_id == y.rf_id,
        "{what}: ids"
    );
    assert!(
        x.input_dims == y.input_dims && x.input_types == y.input_types && x.args == y.args,
        "{what}: args"
    );
    assert_eq!(a.strings.len(), b.strings.len(), "{what}: strings");
    for i in 0..a.strings.len() as u32 {
        assert_eq!(a.str(StrId(i)), b.str(StrId(i)), "{what}: string {i}");
    }
    for i in 0..x.len() {
        assert_eq!(
            a.slice_args_stored(i),
            b.slice_args_stored(i),
            "{what}: args of slice {i}"
        );
        assert_eq!(
            a.slice_args_in_file(i),
            b.slice_args_in_file(i),
            "{what}: args in the file of slice {i}"
        );
    }
    let parts = |t: &Trace| {
        [
            ("meta", format!("{:?}", t.meta)),
            ("processes", format!("{:?}", t.processes)),
            ("tracks", format!("{:?}", t.tracks)),
            ("gpu", format!("{:?}", t.gpu)),
            ("flops", format!("{:?}", t.flops)),
            ("instants", format!("{:?}", t.instants)),
            ("memory", format!("{:?}", t.memory)),
            ("counters", format!("{:?}", t.counters)),
            ("flows", format!("{:?}", t.flows)),
            ("warnings", format!("{:?}", t.warnings)),
            ("counts", format!("{} {}", t.event_count, t.bytes_read)),
        ]
    };
    for ((part, x), (_, y)) in parts(a).iter().zip(parts(b).iter()) {
        assert!(x == y, "{what}: {part} differ:\n{x}\n{y}");
    }
}
