//! What the page reads of a digest (`Digest::read_run_only`, without the figures the run does
//! not use) gives the run figures the full read gives, on the 8 DLRM ranks.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use tracelight_core::digest::Digest;
use tracelight_core::report::json::{rank_inputs, Analysis};
use tracelight_core::report::run::run_figures;

#[test]
fn run_only_read_gives_the_full_reads_run_figures() {
    let Some(kineto) = tracelight_testkit::path("real/param/dlrm_8rank/kineto") else {
        return;
    };
    let out = std::env::temp_dir().join(format!("tracelight-run-only-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut full: Vec<Analysis> = Vec::new();
    let mut lite: Vec<Analysis> = Vec::new();
    let mut traces: Vec<_> = std::fs::read_dir(kineto)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    traces.sort();
    tracelight_testkit::checked("DLRM ranks", traces.len(), 8);
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

#[test]
fn run_only_read_refuses_a_broken_header_by_name() {
    let dir = std::env::temp_dir().join(format!("tracelight-run-only-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("rank-0.json");
    std::fs::write(
        &trace,
        r#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"device":0,"stream":7}}]}"#,
    )
    .unwrap();
    let w = tracelight_digest::digest_file(&trace, &dir).unwrap();
    let good: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&w.header).unwrap()).unwrap();
    let file = |f: &str| std::fs::read(dir.join(f)).ok();
    for (edit, want) in [
        ("figures", "no figures"),
        ("version", "digest version"),
        ("tracks", "no tracks"),
    ] {
        let mut h = good.clone();
        if edit == "version" {
            h["version"] = serde_json::json!(2);
        } else {
            h.as_object_mut().unwrap().remove(edit);
        }
        let bytes = serde_json::to_vec(&h).unwrap();
        let e = Digest::read_run_only("h.digest.json", &bytes, file)
            .err()
            .unwrap();
        assert_eq!(e.file.as_deref(), Some("h.digest.json"));
        assert!(e.to_string().contains(want), "{edit}: {e}");
    }
    assert!(
        Digest::read_run_only("h.digest.json", &std::fs::read(&w.header).unwrap(), file).is_ok()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
