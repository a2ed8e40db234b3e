//! Every key the JSON reports has a definition in `docs/definitions.md`: `analyze --json` on every
//! fixture of the repository (traces, snapshots, memory timelines, execution traces, the Flight
//! Recorder dumps), on several traces read as one run, on the demo trace, on a trace scoped to one
//! step (`--scope`), and `diff --json` of two traces; with the corpus beside the clone also the
//! 8-rank DLRM run folder (`analyze DIR` and `diff DIR DIR`). A figure that lands without a
//! definition fails this test, naming its path.
//!
//! How a key path maps to the page: a heading of `docs/definitions.md` that holds a path in
//! backticks written jq's way (`` `.idle_causes.devices[]` ``; `` `.` `` is the top level of
//! `analyze --json`, `` `diff .ops[]` `` an object of `diff --json`) opens the section of that
//! object; a heading may name several paths (`` `diff .sides.a`, `diff .sides.b` ``), and a
//! heading without one closes the section. Each key of the object is defined in that section by a
//! table row whose first cell, or a list item whose start, holds the key in backticks
//! (`` | `busy_us` | … ``; one cell may define several keys). Paths are reduced before the
//! look-up: `[]` stands for every element of an array; a key that is a number (a rank) is `*`; a
//! key that holds a dot (a figure name such as `breakdown.kernel`) is `breakdown.*`; the values of
//! a map of names (`diff .figures`) are one object, `diff .figures.*`; `traces[]` of a run holds
//! trace objects (so `.traces[].ops[]` is `.ops[]`); and in `diff --json` an object of only `a`,
//! `b` and `delta` (a figure compared) is one value, defined where its key is.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json_of(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "tracelight {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Objects whose keys are names (each defined in the object's section) over values of one
/// shape, defined once under `*`.
const MAPS: &[&str] = &["diff .figures"];

/// Every object path in `v` under `root` (`.` or `diff .`), with the key of each object: the map
/// from the reduced parent path to its keys.
fn walk(v: &Value, parent: &str, diff: bool, out: &mut BTreeMap<String, BTreeSet<String>>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if parent == "." && k == "traces" && !diff {
                    // A run's per-trace objects are the trace objects of the top level.
                    out.entry(parent.into()).or_default().insert(k.clone());
                    if let Value::Array(items) = x {
                        for t in items {
                            walk(t, ".", diff, out);
                        }
                    }
                    continue;
                }
                let key = if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
                    "*".to_string()
                } else if let Some((head, _)) = k.split_once('.') {
                    format!("{head}.*")
                } else {
                    k.clone()
                };
                out.entry(parent.into()).or_default().insert(key.clone());
                if diff && compared(x) {
                    continue;
                }
                let sep = if parent.ends_with('.') { "" } else { "." };
                let child = if MAPS.contains(&parent) { "*" } else { &key };
                walk(x, &format!("{parent}{sep}{child}"), diff, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                walk(x, &format!("{parent}[]"), diff, out);
            }
        }
        _ => {}
    }
}

/// A figure of `diff --json` given for both sides and their difference.
fn compared(v: &Value) -> bool {
    match v {
        Value::Object(o) => {
            o.contains_key("delta") && o.keys().all(|k| matches!(k.as_str(), "a" | "b" | "delta"))
        }
        _ => false,
    }
}

/// The sections of the page: object path -> keys defined there.
fn sections(md: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in md.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if t.starts_with('#') {
            let paths: Vec<String> = ticked(t)
                .into_iter()
                .filter(|p| p.starts_with('.') || p.starts_with("diff ."))
                .collect();
            // A heading without a path closes the section: its tables define nothing.
            current = paths;
            continue;
        }
        let cell = if let Some(rest) = t.strip_prefix('|') {
            rest.split('|').next().unwrap_or("")
        } else if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
            // A list item defines the keys ticked before its first colon or dash.
            rest.split([':', '—']).next().unwrap_or("")
        } else {
            continue;
        };
        for key in ticked(cell) {
            for p in &current {
                out.entry(p.clone()).or_default().insert(key.clone());
            }
        }
    }
    out
}

/// The text between pairs of backticks.
fn ticked(s: &str) -> Vec<String> {
    s.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, x)| x.trim().to_string())
        .collect()
}

fn fixtures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["torch-2.11-cuda13-h100", "torch-2.15-cpu", "snapshots-gen"] {
        let d = repo().join("crates/core/tests/fixtures").join(dir);
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let input = [".json", ".json.gz", ".pickle"]
                .iter()
                .any(|s| name.ends_with(s))
                && !name.contains("reference")
                && name != "expected.json";
            if input {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_key_of_the_json_is_defined_in_docs_definitions() {
    let md = std::fs::read_to_string(repo().join("docs/definitions.md")).unwrap();
    let defined = sections(&md);
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let s = |p: &Path| p.to_str().unwrap().to_string();

    let files = fixtures();
    assert!(files.len() >= 12, "fixtures: {files:?}");
    for f in &files {
        walk(
            &json_of(&["analyze", &s(f), "--json"]),
            ".",
            false,
            &mut seen,
        );
    }
    walk(
        &json_of(&[
            "analyze",
            &s(&repo().join("web/demo/demo.pt.trace.json.gz")),
            "--json",
        ]),
        ".",
        false,
        &mut seen,
    );
    let fr = repo().join("crates/core/tests/fixtures/fr-torch-2.15-gloo");
    let mut scenarios = 0;
    for e in std::fs::read_dir(&fr).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(
                &json_of(&["analyze", &s(&p), "--json"]),
                ".",
                false,
                &mut seen,
            );
            scenarios += 1;
        }
    }
    assert_eq!(scenarios, 9, "Flight Recorder scenarios");
    let h100 = repo().join("crates/core/tests/fixtures/torch-2.11-cuda13-h100");
    let (a, b) = (
        h100.join("gpu_mlp.pt.trace.json.gz"),
        h100.join("gpu_lm_bf16.pt.trace.json.gz"),
    );
    walk(
        &json_of(&["analyze", &s(&a), &s(&b), "--json"]),
        ".",
        false,
        &mut seen,
    );
    walk(
        &json_of(&["analyze", &s(&a), "--json", "--scope", "step:2"]),
        ".",
        false,
        &mut seen,
    );
    walk(
        &json_of(&["diff", &s(&a), &s(&b), "--json"]),
        "diff .",
        true,
        &mut seen,
    );
    walk(
        &json_of(&[
            "diff",
            &s(&h100.join("gpu_mlp_plain.pt.trace.json.gz")),
            &s(&a),
            "--json",
        ]),
        "diff .",
        true,
        &mut seen,
    );
    // Allocator snapshots: a folder of OOM dumps read as a run, and the diff of two snapshots.
    let gen = repo().join("crates/core/tests/fixtures/snapshots-gen");
    walk(
        &json_of(&["analyze", &s(&gen.join("oom_run")), "--json"]),
        ".",
        false,
        &mut seen,
    );
    walk(
        &json_of(&[
            "diff",
            &s(&gen.join("step_a.pickle")),
            &s(&gen.join("content.pickle")),
            "--json",
        ]),
        "diff .",
        true,
        &mut seen,
    );
    if let Some(dlrm) = tracelight_testkit::path("real/param/dlrm_8rank") {
        walk(
            &json_of(&["analyze", &s(&dlrm), "--json"]),
            ".",
            false,
            &mut seen,
        );
        walk(
            &json_of(&["diff", &s(&dlrm), &s(&dlrm), "--json"]),
            "diff .",
            true,
            &mut seen,
        );
    }

    let mut missing = Vec::new();
    for (parent, keys) in &seen {
        let have = defined.get(parent);
        for k in keys {
            if !have.is_some_and(|h| h.contains(k)) {
                let sep = if parent.ends_with('.') { "" } else { "." };
                missing.push(format!("{parent}{sep}{k}"));
            }
        }
    }
    let total: usize = seen.values().map(BTreeSet::len).sum();
    assert!(total > 500, "only {total} keys seen: the walk is broken");
    assert!(
        missing.is_empty(),
        "{} of {total} keys of the JSON have no definition in docs/definitions.md (a heading \
         naming the object's path in backticks, then a row or item naming the key):\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn the_section_parser_reads_headings_rows_and_items() {
    let md = "# x\n## Steps `.steps[]`\n| key | meaning |\n|---|---|\n| `dur_us` | d |\n\
              | `a`, `b` | two |\n- `name`: its name\n```\n| `hidden` |\n```\n\
              ### Sides `diff .sides.a`, `diff .sides.b`\n| `label` | l |\n";
    let s = sections(md);
    let keys = |p: &str| s.get(p).cloned().unwrap_or_default();
    assert_eq!(
        keys(".steps[]"),
        ["a", "b", "dur_us", "name"]
            .iter()
            .map(|x| x.to_string())
            .collect()
    );
    assert!(keys("diff .sides.b").contains("label"));
    assert!(!keys(".steps[]").contains("hidden"));
    let mut seen = BTreeMap::new();
    let v: Value = serde_json::from_str(
        r#"{"traces":[{"ops":[{"name":"x"}]}],"alignment":{"offsets_us":{"3":1.0}},
            "gpu":{"comm_us":{"a":1,"b":2,"delta":1}}}"#,
    )
    .unwrap();
    walk(&v, "diff .", true, &mut seen);
    assert!(seen["diff .gpu"].contains("comm_us"));
    assert!(!seen.contains_key("diff .gpu.comm_us"));
    let mut seen = BTreeMap::new();
    walk(&v, ".", false, &mut seen);
    assert!(seen[".ops[]"].contains("name"));
    assert!(seen[".alignment.offsets_us"].contains("*"));
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (a repeated heading gets `-1`, `-2`… as on GitHub).
fn anchors(md: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let mut a = base.clone();
        let mut k = 0;
        while out.contains(&a) {
            k += 1;
            a = format!("{base}-{k}");
        }
        out.insert(a);
    }
    out
}

#[test]
fn every_link_of_the_docs_leads_to_a_file_and_heading_of_the_repository() {
    let root = repo();
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    let mut bad = Vec::new();
    let mut links = 0;
    for page in &pages {
        let md = std::fs::read_to_string(page).unwrap();
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        for (k, _) in md.match_indices("](") {
            let rest = &md[k + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            links += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            if file.contains("../shared") {
                bad.push(format!("{name}: {target} points outside the repository"));
                continue;
            }
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !dest.exists() {
                bad.push(format!("{name}: {target}: no such file"));
            } else if !anchor.is_empty() {
                let text = std::fs::read_to_string(&dest).unwrap_or_default();
                if !anchors(&text).contains(anchor) {
                    bad.push(format!("{name}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(links > 100, "only {links} links found: the scan is broken");
    assert!(
        bad.is_empty(),
        "broken links in the docs:\n{}",
        bad.join("\n")
    );
}

#[test]
fn anchors_follow_github() {
    assert_eq!(slug(" Scoped tables (`--scope`)"), "scoped-tables---scope");
    assert_eq!(
        slug(" Idle causes `.idle_causes`"),
        "idle-causes-idle_causes"
    );
    assert_eq!(
        slug(" The gate's figures `diff .figures`"),
        "the-gates-figures-diff-figures"
    );
    let a = anchors("## A\n## A\n```\n# not\n```\n");
    assert_eq!(a, ["a", "a-1"].iter().map(|x| x.to_string()).collect());
}

#[test]
fn no_file_of_the_repository_points_outside_it_for_documentation() {
    // The definitions live in docs/, not in a design note beside the clone: a clone alone must
    // tell a user what every figure means. (Tests may read ../shared/corpus: that is data.)
    let root = repo();
    let mut bad = Vec::new();
    let mut checked = 0;
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                let skip = [
                    "target",
                    "node_modules",
                    "dist",
                    "dist-single",
                    ".git",
                    ".venv",
                    "fuzz",
                ];
                if !skip.contains(&name.as_str()) && !name.starts_with('.') {
                    dirs.push(p);
                }
                continue;
            }
            let text_like = [
                ".rs", ".md", ".mjs", ".js", ".py", ".sh", ".toml", ".html", ".css",
            ];
            if !text_like.iter().any(|x| name.ends_with(x)) || p.ends_with(file!()) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            checked += 1;
            for (k, line) in text.lines().enumerate() {
                if ["DESIGN §", "DESIGN.md", "STYLE.md", "shared/DESIGN"]
                    .iter()
                    .any(|w| line.contains(w))
                {
                    let rel = p.strip_prefix(&root).unwrap().display().to_string();
                    bad.push(format!("{rel}:{}: {}", k + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        checked > 300,
        "only {checked} files read: the walk is broken"
    );
    assert!(
        bad.is_empty(),
        "these lines point to documentation outside the repository (say it in docs/ and point \
         there):\n{}",
        bad.join("\n")
    );
}
