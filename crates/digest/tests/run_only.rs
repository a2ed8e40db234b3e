//! What the page reads of a digest (`Digest::read_run_only`, without the figures the run does
//! not use) gives the run figures the full read gives, on the 8 DLRM ranks.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::Path;
use tracelight_core::digest::Digest;
use tracelight_core::report::json::{rank_inputs, Analysis};
use tracelight_core::report::run::run_figures;

#[test]
fn run_only_read_gives_the_full_reads_run_figures() {
    let kineto = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/real/param/dlrm_8rank/kineto"
    ));
    if !kineto.is_dir() {
        println!("note: {} absent; skipping", kineto.display());
        return;
    }
    let out = std::env::temp_dir().join(format!("tracelight-run-only-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut full: Vec<Analysis> = Vec::new();
    let mut lite: Vec<Analysis> = Vec::new();
    let mut traces: Vec<_> = std::fs::read_dir(kineto)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    traces.sort();
    for t in &traces {
        let w = tracelight_digest::digest_file(t, &out).unwrap();
        let head = std::fs::read(&w.header).unwrap();
        let name = w.header.display().to_string();
        let file = |f: &str| std::fs::read(out.join(f)).ok();
        full.push(
            Digest::read(&name, &head, file)
                .unwrap()
                .rebuild(&name)
                .unwrap()
                .analysis,
        );
        lite.push(
            Digest::read_run_only(&name, &head, file)
                .unwrap()
                .rebuild(&name)
                .unwrap()
                .analysis,
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    let a = run_figures(&rank_inputs(&full, &[]));
    let b = run_figures(&rank_inputs(&lite, &[]));
    assert_eq!(a, b);
    assert_eq!(a.ranks.len(), 8);
    assert_eq!(a.collectives.len(), 8);
    // What the run-only read leaves out, it leaves empty (not half-filled).
    assert!(lite
        .iter()
        .all(|x| x.recommendations.is_empty() && x.flops.per_op.is_empty()));
    assert!(full.iter().any(|x| !x.recommendations.is_empty()));
}
