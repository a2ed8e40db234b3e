//! Flight Recorder dumps: torch 2.15 gloo fixtures whose hangs are known by construction
//! (`fixtures/fr-torch-2.15-gloo/*/expected.json`, written by the generator from what it did)
//! and checked against torch's own analyzer run on the same entries (`fr_trace.txt`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::{Path, PathBuf};
use tracelight_core::analysis::flight_recorder::{
    analyze, CellState, ColumnStatus, FrReport, Hang, HangKind, RankDump,
};
use tracelight_core::ingest::flight_recorder::{rank_of_file, FrDump};
use tracelight_core::ingest::{load_bytes, Loaded};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/fr-torch-2.15-gloo/"
);

fn load_dir(dir: &Path) -> Vec<(i64, String, FrDump)> {
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for p in names {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("fr_trace") || name == "expected.json" || name.ends_with(".expected") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let Ok(Loaded::FlightRecorder(d)) = load_bytes(&name, &bytes) else {
            panic!("{name} did not load as a Flight Recorder dump");
        };
        out.push((rank_of_file(&name).unwrap(), name, *d));
    }
    out
}

fn report(dir: &Path) -> FrReport {
    let dumps = load_dir(dir);
    let rd: Vec<RankDump> = dumps
        .iter()
        .map(|(r, p, d)| RankDump {
            rank: *r,
            path: p,
            dump: d,
        })
        .collect();
    analyze(&rd)
}

const SCENARIOS: [&str; 9] = [
    "missing_rank",
    "missing_rank_json",
    "wrong_op",
    "wrong_size",
    "wrong_dtype",
    "two_pgs",
    "p2p",
    "wrapped",
    "healthy",
];

fn expected(s: &str) -> serde_json::Value {
    let t = std::fs::read_to_string(Path::new(FIXTURES).join(s).join("expected.json")).unwrap();
    serde_json::from_str(&t).unwrap()
}

fn ranks(v: &serde_json::Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_i64).collect())
        .unwrap_or_default()
}

/// Every divergence the report names: the hang, the others, the disagreements that completed.
fn all_problems(r: &FrReport) -> Vec<&Hang> {
    r.hang
        .iter()
        .chain(r.also.iter())
        .chain(r.disagreements.iter())
        .collect()
}

fn check(h: &Hang, want: &serde_json::Value, what: &str) {
    assert_eq!(h.pg, want["pg"].as_str().unwrap(), "{what}: group");
    assert_eq!(h.seq, want["seq"].as_i64().unwrap(), "{what}: sequence id");
    assert_eq!(h.op, want["op"].as_str().unwrap(), "{what}: op");
    if want.get("missing").is_some() {
        assert_eq!(h.missing, ranks(&want["missing"]), "{what}: missing ranks");
    }
    if let Some(m) = want.get("mismatch").and_then(|m| m.as_object()) {
        for (rank, fields) in m {
            let rank: i64 = rank.parse().unwrap();
            for (field, value) in fields.as_object().unwrap() {
                let found = h
                    .mismatches
                    .iter()
                    .find(|x| x.rank == rank && x.field == field)
                    .unwrap_or_else(|| panic!("{what}: no {field} mismatch for rank {rank}"));
                let want_text = match value {
                    serde_json::Value::String(s) => s.clone(),
                    // `[[2, 2]]` as Python prints it; dtypes as a list of names.
                    serde_json::Value::Array(a) if a.iter().all(|x| x.is_string()) => a
                        .iter()
                        .map(|x| x.as_str().unwrap().to_owned())
                        .collect::<Vec<_>>()
                        .join(", "),
                    v => v.to_string().replace(',', ", "),
                };
                assert_eq!(found.found, want_text, "{what}: rank {rank} {field}");
            }
        }
    }
}

/// The generator wrote down what each scenario did; the report names that hang, its group,
/// sequence id, op, missing ranks, disagreements and culprits exactly.
#[test]
fn gloo_fixtures_give_the_hang_each_scenario_built_in() {
    for s in SCENARIOS {
        let r = report(&Path::new(FIXTURES).join(s));
        let want = &expected(s)["hang"];
        if want.is_null() {
            assert!(r.hang.is_none(), "{s}: a hang where none was built");
            assert!(r.also.is_empty() && r.disagreements.is_empty(), "{s}");
            continue;
        }
        if want["completed"] == true {
            assert!(r.hang.is_none(), "{s}: it completed");
            assert_eq!(r.disagreements.len(), 1, "{s}");
            check(&r.disagreements[0], want, s);
            assert_eq!(r.disagreements[0].culprits, ranks(&want["culprit"]), "{s}");
            continue;
        }
        let h = r
            .hang
            .as_ref()
            .unwrap_or_else(|| panic!("{s}: no hang found"));
        check(h, want, s);
        assert_eq!(h.culprits, ranks(&want["culprit"]), "{s}: culprits");
        let also: Vec<&Hang> = r.also.iter().chain(r.disagreements.iter()).collect();
        let want_also = want["also"].as_array().cloned().unwrap_or_default();
        assert_eq!(also.len(), want_also.len(), "{s}: other divergences");
        for w in &want_also {
            let found = also
                .iter()
                .find(|h| h.pg == w["pg"].as_str().unwrap() && h.seq == w["seq"].as_i64().unwrap())
                .unwrap_or_else(|| panic!("{s}: {w} not reported"));
            check(found, w, s);
            assert_eq!(
                found.kind == HangKind::CompletedMismatch,
                w["completed"] == true,
                "{s}: {w}"
            );
        }
    }
}

/// One block of torch's `fr_trace` output: (group name, sequence id, missing ranks, culprit
/// ranks with fr_trace's error type).
#[derive(Debug, PartialEq)]
struct TorchFinding {
    pg: String,
    seq: i64,
    missing: Vec<i64>,
    culprits: Vec<(i64, String)>,
}

fn set_of(s: &str) -> Vec<i64> {
    let mut v: Vec<i64> = s
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    v.sort_unstable();
    v
}

fn torch_findings(text: &str) -> Vec<TorchFinding> {
    let mut out: Vec<TorchFinding> = Vec::new();
    for line in text.lines() {
        let seq = line
            .strip_prefix("Not all ranks joining collective, sequence number: ")
            .or_else(|| {
                line.strip_prefix("Collective sequence number: ")
                    .and_then(|r| r.strip_suffix(" has errors"))
            });
        if let Some(seq) = seq {
            out.push(TorchFinding {
                pg: String::new(),
                seq: seq.trim().parse().unwrap(),
                missing: Vec::new(),
                culprits: Vec::new(),
            });
            continue;
        }
        let Some(cur) = out.last_mut() else { continue };
        if let Some(g) = line.strip_prefix("group info: ") {
            cur.pg = g.split(':').next().unwrap().to_owned();
        } else if let Some(m) = line.strip_prefix("missing ranks: ") {
            cur.missing = set_of(m);
        } else if let Some(e) = line.strip_prefix("error msg: ") {
            for part in e.split("Culprit rank ").skip(1) {
                let rank: i64 = part.split(';').next().unwrap().trim().parse().unwrap();
                let kind = part
                    .split("Error type: ")
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .next()
                    .unwrap()
                    .to_owned();
                cur.culprits.push((rank, kind));
            }
        }
    }
    out
}

/// fr_trace's error type for our mismatch field.
fn torch_kind(field: &str) -> &'static str {
    match field {
        "op" => "COLLECTIVE_TYPE_MISMATCH",
        "input_sizes" | "output_sizes" => "SIZE_OR_SYNTAX_MISMATCH",
        _ => "COLLECTIVE_DTYPE_MISMATCH",
    }
}

/// torch's own analyzer, run by the generator on the same entries with the groups' real
/// members in `pg_config` (it raises KeyError on gloo's own): every collective it reports is one
/// the report names, with the same missing ranks and culprits, and the report names no other.
#[test]
fn divergences_equal_torch_fr_trace_on_the_same_entries() {
    for s in SCENARIOS {
        let path = Path::new(FIXTURES).join(s).join("fr_trace.txt");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // the JSON form: fr_trace reads pickles only
        };
        assert!(text.contains("# exit 0"), "{s}: fr_trace did not run");
        let torch = torch_findings(&text);
        let r = report(&Path::new(FIXTURES).join(s));
        let ours = all_problems(&r);
        assert_eq!(ours.len(), torch.len(), "{s}: {torch:?}");
        for t in &torch {
            let h = ours
                .iter()
                .find(|h| h.pg == t.pg && h.seq == t.seq)
                .unwrap_or_else(|| panic!("{s}: fr_trace reports {t:?}, we do not"));
            assert_eq!(h.missing, t.missing, "{s}: {t:?}");
            // fr_trace names the first check that fails per rank; we list each field.
            let mut got: Vec<(i64, String)> = h
                .mismatches
                .iter()
                .map(|m| (m.rank, torch_kind(m.field).to_owned()))
                .collect();
            got.dedup();
            assert_eq!(got, t.culprits, "{s}");
        }
    }
}

/// What made this worth building: torch 2.15's fr_trace raises KeyError on gloo's own dumps
/// (their pg_config is one entry named ''), and prints nothing else.
#[test]
fn torch_fr_trace_fails_on_raw_gloo_dumps_and_the_report_does_not() {
    for s in ["missing_rank", "two_pgs", "wrong_op"] {
        let raw =
            std::fs::read_to_string(Path::new(FIXTURES).join(s).join("fr_trace.raw.txt")).unwrap();
        assert!(raw.contains("KeyError"), "{s}: {raw}");
        assert!(report(&Path::new(FIXTURES).join(s)).hang.is_some(), "{s}");
    }
}

/// `_dump_fr_trace_json` of the same scenario (no stacks, pg_status as strings, times 0)
/// gives the pickle's verdict.
#[test]
fn json_form_gives_the_pickle_verdict() {
    let a = report(&Path::new(FIXTURES).join("missing_rank"));
    let b = report(&Path::new(FIXTURES).join("missing_rank_json"));
    let (ha, hb) = (a.hang.unwrap(), b.hang.unwrap());
    assert_eq!(
        (ha.pg, ha.seq, ha.op, ha.missing, ha.waiting),
        (hb.pg, hb.seq, hb.op, hb.missing, hb.waiting)
    );
    assert!(a.ranks.iter().all(|r| r.stacks));
    assert!(b.ranks.iter().all(|r| !r.stacks));
    assert_eq!(b.ranks[0].status[0].last_enqueued, Some(8));
}

/// Sniffed by content: every dump loads the same under the name `unknown`.
#[test]
fn dumps_are_recognised_by_content_whatever_their_name() {
    for s in SCENARIOS {
        for (_, name, d) in load_dir(&Path::new(FIXTURES).join(s)) {
            let bytes = std::fs::read(Path::new(FIXTURES).join(s).join(&name)).unwrap();
            let Ok(Loaded::FlightRecorder(u)) = load_bytes("unknown", &bytes) else {
                panic!("{s}/{name} not recognised without its name");
            };
            assert_eq!(u.entries.len(), d.entries.len(), "{s}/{name}");
        }
    }
}

/// The wrapped ring buffer: each rank kept its last 16 records, rank 1's one earlier than the
/// others'; pg_status accounts for the collectives that fell out, so the grid is whole from
/// the earliest record kept.
#[test]
fn a_wrapped_ring_buffer_keeps_its_window_and_pg_status_fills_it() {
    let r = report(&Path::new(FIXTURES).join("wrapped"));
    assert!(r.ranks.iter().all(|x| x.wrapped && x.entries == 16));
    assert_eq!(r.ranks[1].first_record, Some(24));
    assert_eq!(r.ranks[0].first_record, Some(25));
    let g = r.group("0").unwrap();
    assert_eq!(g.columns.first().map(|c| c.seq), Some(25));
    assert_eq!(g.window_start, Some(25));
    let c25 = &g.columns[0];
    // Rank 1 holds #25; the others' buffers start at #26, but their pg_status says #40 finished.
    assert!(c25.cells.iter().all(|c| c.state == CellState::Completed));
    assert!(c25.cells.iter().filter(|c| c.rank != 1).all(|c| c.inferred));
    let last = g.columns.last().unwrap();
    assert_eq!(last.seq, 41);
    assert_eq!(last.status, ColumnStatus::Missing);
    assert_eq!(g.first_divergence, Some(g.columns.len() - 1));
}
