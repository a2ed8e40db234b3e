//! Snapshot tests, as speedscope keeps them: every fixture the repo holds
//! (`tests/fixtures/<producer>/…`) is loaded, and what we make of it — the model (counts per slice
//! kind, tracks, flows, time span, strings, memory events; a snapshot's segments and blocks; an
//! execution trace's nodes; for bad input the error kind and message) and the analysis (`tracelight
//! analyze --json`'s object with its tables cut to their first rows, and the Markdown report) — is
//! written as text and compared with the checked-in `<fixture>.expected` beside it.
//!
//! **These are regression snapshots of our own output, not independent answers.** They catch any
//! change in what a fixture loads to or reports, and show it as a diff; they cannot say which side
//! is right. The independent answers live elsewhere: torch's `key_averages` rows and table text
//! (`ops_vs_torch.rs`, `table_vs_torch.rs`), torch's and CUDA's own counters (`gpu_fixtures.rs`),
//! HTA's breakdowns and launch statistics (`hta_reference.rs`, `launch_vs_hta.rs`), memory_viz's
//! replay and torch's `_coalesce_timeline` (`snapshot.rs`, `memory_timeline.rs`, from
//! `scripts/snapshot_expected.out.json`), and hand-built traces whose answer is known by
//! construction (`kineto.rs`, `chakra_handbuilt.rs`, …).
//!
//! When a change is meant to alter what we show, regenerate and review the diff before committing:
//! `UPDATE_EXPECT=1 cargo test -p tracelight-core --test expected`. A new fixture without an
//! `.expected` fails until it is generated; an `.expected` whose fixture is gone fails too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

#[path = "expected/dump.rs"]
mod dump;
#[path = "expected/render.rs"]
mod render;

use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const SUFFIX: &str = ".expected";

/// Files beside the inputs that are not inputs: independent answers and documentation.
fn is_input(name: &str) -> bool {
    !(name.ends_with(SUFFIX)
        || name.ends_with(".reference.json")
        || name.ends_with(".reference.json.gz")
        || name.ends_with(".table.txt")
        || name.ends_with(".md")
        // Flight Recorder fixtures: their generator, what it built in, torch's fr_trace output.
        || name.ends_with(".py")
        || name.ends_with(".txt")
        || name == "expected.json")
}

/// Every file under `dir`, sorted, so the run and its report are in a fixed order.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap()
}

/// The path relative to the fixtures folder, for messages.
fn rel(p: &Path) -> String {
    p.strip_prefix(FIXTURES).unwrap().display().to_string()
}

#[test]
fn every_fixture_matches_its_expected_dump() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v != "0");
    let all = files(Path::new(FIXTURES));
    let inputs: Vec<&PathBuf> = all.iter().filter(|p| is_input(file_name(p))).collect();
    let mut failures = Vec::new();
    for input in &inputs {
        let dir = input.parent().unwrap();
        let bytes = std::fs::read(input).unwrap();
        let sibling = |name: &str| std::fs::read(dir.join(name)).ok();
        let got = dump::dump(file_name(input), &bytes, &sibling);
        let path = PathBuf::from(format!("{}{SUFFIX}", input.display()));
        if update {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(got.as_str()) {
                std::fs::write(&path, &got).unwrap();
                println!("updated {}", rel(&path));
            }
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{} differs from what we now make of {}:\n{}",
                rel(&path),
                rel(input),
                render::line_diff(&want, &got)
            )),
            Err(_) => failures.push(format!("{} is missing", rel(&path))),
        }
    }
    for p in all.iter().filter(|p| file_name(p).ends_with(SUFFIX)) {
        let input = p.to_str().unwrap().strip_suffix(SUFFIX).unwrap();
        if !Path::new(input).exists() {
            failures.push(format!("{} has no fixture (delete it)", rel(p)));
        }
    }
    assert!(
        inputs.len() >= 38,
        "only {} fixtures found under {FIXTURES}",
        inputs.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} snapshots fail. If the change is intended, regenerate with \
         `UPDATE_EXPECT=1 cargo test -p tracelight-core --test expected` and review the diff.\n\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}

/// Two runs over the same bytes give the same text: nothing in a dump depends on map order,
/// threads, paths or time.
#[test]
fn a_dump_is_the_same_twice() {
    let dir = Path::new(FIXTURES).join("torch-2.11-cuda13-h100");
    let name = "gpu_mlp.pt.trace.json.gz";
    let bytes = std::fs::read(dir.join(name)).unwrap();
    let none = |_: &str| None;
    assert_eq!(
        dump::dump(name, &bytes, &none),
        dump::dump(name, &bytes, &none)
    );
}

#[test]
fn the_diff_shows_the_differing_lines_with_context() {
    let want = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\n";
    // Two values changed in place, far apart: only those lines, with context, in two hunks.
    let got = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\nN\no\np\n";
    assert_eq!(
        render::line_diff(want, got),
        "@@ expected lines 4..14 of 16, actual 4..14 of 16 @@\n  a\n  b\n  c\n- d\n+ D\n  e\n  f\n  g\n\
         @@ line 11 @@\n  k\n  l\n  m\n- n\n+ N\n  o\n  p\n"
    );
    // A line added: each side of the differing run.
    let got = "a\nb\nc\nd\nX\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\n";
    assert_eq!(
        render::line_diff(want, got),
        "@@ expected lines 5..4 of 16, actual 5..5 of 17 @@\n  b\n  c\n  d\n+ X\n  e\n  f\n  g\n"
    );
}
