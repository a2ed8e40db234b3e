//! The session's files as core's run layout sees them ([`recognise`]): what the Ranks tab lays
//! out and what the file chips are labelled with (a `tensorboard_trace_handler` folder's
//! `host_pid.ts` files are ranks × cycles, never one rank per file).

use super::{Content, Session};
use tracelight_core::ingest::Format;
use tracelight_core::run::layout::{recognise, Artifact, Entry, RunLayout};

/// Why the page left a picked or dropped file out (it never reads those).
pub const NOT_OPENED: &str =
    "its name is not .json, .json.gz, .gz, .pickle, .pkl, .parquet or a dump's <prefix><rank>";

fn format_of(c: &Content) -> Format {
    match c {
        Content::Trace(_) => Format::Kineto,
        Content::Snapshot(_) => Format::Snapshot,
        Content::MemoryTimeline(_) => Format::MemoryTimeline,
        Content::ExecTrace(_) => Format::Chakra,
        Content::FlightRecorder(_) => Format::FlightRecorder,
    }
}

/// The layout of `session`'s files plus the files it `skipped` (name, reason).
pub fn layout(session: &Session, skipped: &[(String, String)]) -> RunLayout {
    let mut entries: Vec<Entry> = session
        .files
        .iter()
        .map(|f| Entry {
            path: f.name.clone(),
            format: Ok(format_of(&f.content)),
            // What the CLI reads from a trace's head: `distributedInfo.rank` only; the layout
            // ranks the rest from names (handler workers, NeMo `rank-N`), as the CLI.
            head_rank: match &f.content {
                Content::Trace(t) => t.trace.meta.distributed.as_ref().and_then(|d| d.rank),
                _ => None,
            },
        })
        .collect();
    entries.extend(skipped.iter().map(|(p, why)| Entry {
        path: p.clone(),
        format: Err(why.clone()),
        head_rank: None,
    }));
    recognise(&entries)
}

/// Per session file: the (rank, cycle) of the run unit it belongs to, if any. A name that
/// repeats (two folders' `rank-0.json`) is given to the files in order, each once.
pub fn units_of_files(session: &Session, lay: &RunLayout) -> Vec<Option<(i64, u32)>> {
    let mut out = vec![None; session.files.len()];
    for u in &lay.units {
        for a in Artifact::ALL {
            let Some(name) = u.file(a) else {
                continue;
            };
            if let Some(k) = (0..session.files.len())
                .find(|&k| out[k].is_none() && session.files[k].name == name)
            {
                out[k] = Some((u.rank, u.cycle));
            }
        }
    }
    out
}

/// The session's Flight Recorder dumps of one cycle read together: what `analyze DIR --json`
/// prints under `flight_recorder` for the same folder (ranks placed by the run layout, as the
/// CLI places them).
pub struct FrRun {
    pub report: tracelight_core::analysis::flight_recorder::FrReport,
    /// Session file index of each of `report.ranks` (same order).
    pub files: Vec<usize>,
}

impl FrRun {
    /// The dump of `rank`.
    pub fn dump<'a>(
        &self,
        session: &'a Session,
        rank: i64,
    ) -> Option<&'a tracelight_core::ingest::flight_recorder::FrDump> {
        let k = self.report.ranks.iter().position(|r| r.rank == rank)?;
        match &session.files.get(*self.files.get(k)?)?.content {
            Content::FlightRecorder(d) => Some(d),
            _ => None,
        }
    }
}

/// The allocator snapshots of `cycle` in `lay` compared as `analyze DIR --json`'s `oom_dumps`
/// (ranks placed by the run layout): with two or more, or one that recorded an OOM.
pub fn oom_dumps(
    session: &Session,
    lay: &RunLayout,
    cycle: u32,
) -> Option<tracelight_core::analysis::snapshot_ranks::OomRun> {
    use tracelight_core::analysis::snapshot_ranks::{compare, RankDump};
    let mut used = vec![false; session.files.len()];
    let mut dumps = Vec::new();
    for u in lay.units.iter().filter(|u| u.cycle == cycle) {
        let Some(name) = u.file(Artifact::Snapshot) else {
            continue;
        };
        let Some(k) = (0..session.files.len()).find(|&k| {
            !used[k]
                && session.files[k].name == name
                && matches!(session.files[k].content, Content::Snapshot(_))
        }) else {
            continue;
        };
        used[k] = true;
        if let Content::Snapshot(s) = &session.files[k].content {
            dumps.push(RankDump::of(u.rank, name, s));
        }
    }
    (dumps.len() >= 2 || dumps.iter().any(|d| !d.ooms.is_empty())).then(|| compare(dumps))
}

/// The dumps of `cycle` in `lay`, analysed; None when the session holds none.
pub fn flight_recorder(session: &Session, lay: &RunLayout, cycle: u32) -> Option<FrRun> {
    use tracelight_core::analysis::flight_recorder::{analyze, RankDump};
    let mut used = vec![false; session.files.len()];
    let mut picked: Vec<(i64, usize)> = Vec::new();
    for u in lay.units.iter().filter(|u| u.cycle == cycle) {
        let Some(name) = u.file(Artifact::FlightRecorder) else {
            continue;
        };
        let k = (0..session.files.len()).find(|&k| {
            !used[k]
                && session.files[k].name == name
                && matches!(session.files[k].content, Content::FlightRecorder(_))
        })?;
        used[k] = true;
        picked.push((u.rank, k));
    }
    if picked.is_empty() {
        return None;
    }
    let dumps: Vec<RankDump> = picked
        .iter()
        .filter_map(|&(rank, k)| match &session.files[k].content {
            Content::FlightRecorder(d) => Some(RankDump {
                rank,
                path: &session.files[k].name,
                dump: d,
            }),
            _ => None,
        })
        .collect();
    let report = analyze(&dumps);
    let files = report
        .ranks
        .iter()
        .filter_map(|r| picked.iter().find(|p| p.0 == r.rank).map(|p| p.1))
        .collect();
    Some(FrRun { report, files })
}
