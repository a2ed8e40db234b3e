//! Flight Recorder dumps on the command line: `summary DIR` / `analyze DIR --json` on a folder
//! of dumps (or a run folder holding some), and `summary FILE…` on dumps given one by one. The
//! verdict comes first: it is what a team pastes into the incident.

use tracelight_core::analysis::flight_recorder::{analyze, FrReport, RankDump};
use tracelight_core::ingest::flight_recorder::{rank_of_file, FrDump};

/// One rank's dump as the run read it.
pub struct FrFile {
    pub rank: i64,
    pub cycle: u32,
    pub path: String,
    pub dump: FrDump,
}

impl FrFile {
    /// Its `files` entry (docs/definitions.md): `events` = the entries it holds.
    pub fn file_json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path,
            "format": "flight_recorder",
            "events": self.dump.entries.len(),
        })
    }
}

/// The report over cycle `cycle`'s dumps (a folder holding both the pickle and the JSON form of
/// each rank lays the second form out as cycle 1).
pub fn report(files: &[FrFile], cycle: u32) -> FrReport {
    let rd: Vec<RankDump> = files
        .iter()
        .filter(|f| f.cycle == cycle)
        .map(|f| RankDump {
            rank: f.rank,
            path: &f.path,
            dump: &f.dump,
        })
        .collect();
    analyze(&rd)
}

/// Dumps given on the command line: the rank from each file name (`rank_3`), else its order.
pub fn from_args(files: Vec<(String, FrDump)>) -> Vec<FrFile> {
    let ranks = tracelight_core::ingest::ranks::assign_ranks(
        &files
            .iter()
            .map(|(p, _)| (rank_of_file(p), p.as_str()))
            .collect::<Vec<_>>(),
    );
    files
        .into_iter()
        .zip(ranks)
        .map(|((path, dump), rank)| FrFile {
            rank,
            cycle: 0,
            path,
            dump,
        })
        .collect()
}
