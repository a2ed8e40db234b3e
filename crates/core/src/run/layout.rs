//! Which file of a profiling run is which: ranks × artifacts, from names and content.
//!
//! Launchers write runs in a few shapes, recognised here:
//! - **NeMo** (`nsys`-free profiling callback): `traces/device/rank-N.json` (Kineto),
//!   `traces/host/rank-N.json` (Chakra execution trace), `memory_rankN.pkl` (allocator snapshot);
//! - **`tensorboard_trace_handler`** (and KempnerForge, which uses it): one
//!   `WORKER.TIMESTAMP_MS.pt.trace.json[.gz]` per worker and scheduled cycle; with `repeat > 1`
//!   a worker writes one file per cycle, kept apart as cycles (by timestamp), never merged;
//! - **nanochat**: `stageK-…_trace.json` with a `stageK-…_mem.pickle` beside it, stages in order,
//!   each stage's trace and snapshot paired;
//! - **loose rank files**: anything else, ranked like [`crate::ingest::ranks`] does.
//!
//! The format of every file comes from its content (the caller sniffs the first bytes); names only
//! place a file. A file that is none of ours is listed as skipped with the reason, never an error.

use crate::ingest::ranks::rank_from_name;
use crate::ingest::Format;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a run holds per rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Artifact {
    Trace,
    ExecutionTrace,
    Snapshot,
    MemoryTimeline,
    /// A Flight Recorder dump (`rank_N`, `nccl_trace_rank_N`).
    FlightRecorder,
}

impl Artifact {
    pub const ALL: [Artifact; 5] = [
        Artifact::Trace,
        Artifact::ExecutionTrace,
        Artifact::Snapshot,
        Artifact::MemoryTimeline,
        Artifact::FlightRecorder,
    ];

    pub fn of(f: Format) -> Artifact {
        match f {
            Format::Kineto => Artifact::Trace,
            Format::Chakra => Artifact::ExecutionTrace,
            Format::Snapshot => Artifact::Snapshot,
            Format::MemoryTimeline | Format::MemoryTimelineRaw => Artifact::MemoryTimeline,
            Format::FlightRecorder => Artifact::FlightRecorder,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Artifact::Trace => "trace",
            Artifact::ExecutionTrace => "ET",
            Artifact::Snapshot => "snapshot",
            Artifact::MemoryTimeline => "memory timeline",
            Artifact::FlightRecorder => "FR dump",
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayoutKind {
    Nemo,
    TraceHandler,
    Nanochat,
    LooseRanks,
    Single,
}

/// One file of the folder as the caller found it: its path relative to the folder, and what the
/// first decoded bytes say.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: String,
    /// The sniffed format, or why the content is none of ours.
    pub format: Result<Format, String>,
    /// `distributedInfo.rank` when the head of a Kineto trace holds it ([`head_rank`]).
    pub head_rank: Option<i64>,
}

/// One rank's artifacts for one cycle (or nanochat stage).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unit {
    pub rank: i64,
    /// 0, 1, … per rank: `tensorboard_trace_handler` cycles by time, or nanochat stages in order.
    pub cycle: u32,
    /// The nanochat stage's name (`stage2-mid`), when the layout has stages.
    pub stage: Option<String>,
    /// Path per [`Artifact`], in [`Artifact::ALL`] order.
    pub files: [Option<String>; 5],
}

impl Unit {
    pub fn file(&self, a: Artifact) -> Option<&str> {
        self.files[a.slot()].as_deref()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// A recognised run.
#[derive(Debug, Clone, Serialize)]
pub struct RunLayout {
    pub kind: LayoutKind,
    /// Sorted by (rank, cycle).
    pub units: Vec<Unit>,
    /// What every unit should have: the layout's own set (NeMo: trace, ET, snapshot; nanochat:
    /// trace, snapshot), else every artifact found for any rank.
    pub expected: Vec<Artifact>,
    pub skipped: Vec<Skipped>,
}

impl RunLayout {
    /// The expected artifacts a unit lacks.
    pub fn missing(&self, u: &Unit) -> Vec<Artifact> {
        self.expected
            .iter()
            .copied()
            .filter(|a| u.file(*a).is_none())
            .collect()
    }

    /// Distinct ranks, ascending.
    pub fn ranks(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self.units.iter().map(|u| u.rank).collect();
        r.dedup();
        r
    }

    /// Number of cycles (the most any rank has).
    pub fn cycles(&self) -> u32 {
        self.units.iter().map(|u| u.cycle + 1).max().unwrap_or(0)
    }

    /// The units, as (rank, cycle), whose memory files (snapshot, memory timeline) may go under
    /// the trace of unit (`rank`, `cycle`): that unit when it has one (NeMo's `memory_rankN.pkl`,
    /// a nanochat stage's `_mem.pickle`), else the units with memory but no trace (a snapshot
    /// opened beside a trace under an unrelated name). Another rank's or stage's never.
    pub fn memory_units_for(&self, rank: i64, cycle: u32) -> Vec<(i64, u32)> {
        let has_memory = |u: &Unit| {
            u.file(Artifact::Snapshot).is_some() || u.file(Artifact::MemoryTimeline).is_some()
        };
        if self
            .units
            .iter()
            .any(|u| u.rank == rank && u.cycle == cycle && has_memory(u))
        {
            return vec![(rank, cycle)];
        }
        self.units
            .iter()
            .filter(|u| has_memory(u) && u.file(Artifact::Trace).is_none())
            .map(|u| (u.rank, u.cycle))
            .collect()
    }
}

/// `distributedInfo.rank` from the first bytes of a Kineto trace (torch writes `distributedInfo`
/// before `traceEvents`), so a folder can be laid out before any file is parsed.
pub fn head_rank(head: &[u8]) -> Option<i64> {
    let at = memchr::memmem::find(head, b"\"distributedInfo\"")?;
    let rest = &head[at..head.len().min(at + 4096)];
    let k = memchr::memmem::find(rest, b"\"rank\"")?;
    let after = rest[k + 6..].trim_ascii_start().strip_prefix(b":")?;
    let digits: Vec<u8> = after
        .trim_ascii_start()
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Why a file that is none of ours was left out, named by its extension where that says more
/// than the content check.
pub fn skip_reason(path: &str, why: &str) -> String {
    let lower = base_name(path).to_ascii_lowercase();
    let what = [
        (".html", "an HTML page"),
        (".htm", "an HTML page"),
        (".log", "a log"),
        (".txt", "a text file"),
        (".out", "a log"),
        (".err", "a log"),
        (".py", "Python source"),
        (".sh", "a shell script"),
        (".yaml", "a config file"),
        (".yml", "a config file"),
        (".md", "Markdown"),
        (".csv", "a CSV table"),
    ]
    .iter()
    .find(|(ext, _)| lower.ends_with(ext))
    .map(|(_, w)| *w);
    match what {
        Some(w) => format!("{w}, not a profiler artifact"),
        None => format!("not a profiler artifact: {why}"),
    }
}

/// `tensorboard_trace_handler`'s `WORKER.TIMESTAMP_MS.pt.trace.json[.gz]`: (worker, timestamp).
fn handler_name(name: &str) -> Option<(&str, u64)> {
    let stem = name
        .strip_suffix(".pt.trace.json.gz")
        .or_else(|| name.strip_suffix(".pt.trace.json"))?;
    let (worker, ts) = stem.rsplit_once('.')?;
    let ts: u64 = ts.parse().ok()?;
    Some((worker, ts))
}

/// nanochat's `stageK-…`: (K, the stage's name without the artifact suffix).
fn stage_name(name: &str) -> Option<(u32, String)> {
    let rest = name.strip_prefix("stage")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let k: u32 = digits.parse().ok()?;
    let stem = name.split('.').next().unwrap_or(name);
    let stem = [
        "_memory_timeline",
        "_trace",
        "_mem",
        "-memory_timeline",
        "-trace",
        "-mem",
    ]
    .iter()
    .find_map(|s| stem.strip_suffix(s))
    .unwrap_or(stem);
    Some((k, stem.to_owned()))
}

/// A rank written as a trailing number (`dlrm_eg_3.json.gz`), for execution traces and snapshots
/// that carry no `rank` word.
fn trailing_number(name: &str) -> Option<i64> {
    let stem = name.split('.').next().unwrap_or(name);
    let digits: String = stem
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let before = stem[..stem.len() - digits.len()].chars().last();
    if digits.is_empty() || !matches!(before, Some('_' | '-')) {
        return None;
    }
    digits.parse().ok()
}

/// A file placed: (rank, nanochat stage, handler timestamp, artifact, entry).
type Placed<'a> = (i64, Option<(u32, String)>, u64, Artifact, &'a Entry);

/// Lays a folder's files out as ranks × artifacts. Deterministic: the same entries in any order
/// give the same layout.
pub fn recognise(entries: &[Entry]) -> RunLayout {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    crate::sort::by(&mut sorted, |a, b| a.path.cmp(&b.path));
    let mut skipped = Vec::new();
    let mut ours: Vec<(&Entry, Artifact)> = Vec::new();
    for e in sorted {
        match &e.format {
            Ok(f) => ours.push((e, Artifact::of(*f))),
            Err(why) => skipped.push(Skipped {
                path: e.path.clone(),
                reason: skip_reason(&e.path, why),
            }),
        }
    }
    let names: Vec<&str> = ours.iter().map(|(e, _)| base_name(&e.path)).collect();
    let nemo = ours.iter().any(|(e, _)| {
        let p = e.path.replace('\\', "/");
        (p.contains("device/") || p.contains("host/")) && base_name(&p).starts_with("rank")
    }) || names.iter().any(|n| n.starts_with("memory_rank"));
    let nanochat = names.iter().any(|n| stage_name(n).is_some());
    let handler = names.iter().any(|n| handler_name(n).is_some());

    // Rank of every file: distributedInfo, a rank word in the name, a trailing number, else the
    // order of distinct workers (tensorboard_trace_handler's host_pid names).
    let mut worker_rank: BTreeMap<String, i64> = BTreeMap::new();
    let mut placed: Vec<Placed> = Vec::new();
    let mut unranked = Vec::new();
    for (e, a) in &ours {
        let name = base_name(&e.path);
        let stage = stage_name(name);
        let ts = handler_name(name).map(|(_, ts)| ts).unwrap_or(0);
        let rank = e
            .head_rank
            .or_else(|| rank_from_name(name))
            .or_else(|| trailing_number(name).filter(|_| *a != Artifact::Trace || nemo));
        match rank {
            Some(r) => placed.push((r, stage, ts, *a, e)),
            None => unranked.push((stage, ts, *a, *e)),
        }
    }
    for (stage, ts, a, e) in unranked {
        let name = base_name(&e.path);
        let worker = match (&stage, handler_name(name)) {
            (Some(_), _) => String::new(),
            (None, Some((w, _))) => w.to_owned(),
            (None, None) => name.to_owned(),
        };
        let next = worker_rank.len() as i64;
        let r = *worker_rank.entry(worker).or_insert(next);
        placed.push((r, stage, ts, a, e));
    }
    // Traces first (they define the cycles), each rank's in time order, then the rest.
    crate::sort::by(&mut placed, |x, y| {
        (x.0, x.3 != Artifact::Trace, &x.1, x.2, &x.4.path).cmp(&(
            y.0,
            y.3 != Artifact::Trace,
            &y.1,
            y.2,
            &y.4.path,
        ))
    });
    let mut units: Vec<Unit> = Vec::new();
    for (rank, stage, _, a, e) in placed {
        let stage_label = stage.as_ref().map(|s| s.1.clone());
        let slot = units.iter().position(|u| {
            u.rank == rank
                && u.files[a.slot()].is_none()
                && (stage_label.is_none() || u.stage == stage_label)
        });
        let k = match slot {
            Some(k) => k,
            None => {
                let cycle = units.iter().filter(|u| u.rank == rank).count() as u32;
                units.push(Unit {
                    rank,
                    cycle,
                    stage: stage_label,
                    files: Default::default(),
                });
                units.len() - 1
            }
        };
        units[k].files[a.slot()] = Some(e.path.clone());
    }
    // Stages keep their own order whatever order their files were placed in.
    let stage_no = |u: &Unit| u.stage.as_deref().and_then(stage_name).map(|s| s.0);
    crate::sort::by_key(&mut units, |u| (u.rank, stage_no(u), u.cycle));
    let mut last = None;
    let mut c = 0;
    for u in &mut units {
        if last != Some(u.rank) {
            c = 0;
            last = Some(u.rank);
        }
        u.cycle = c;
        c += 1;
    }
    let kind = if nemo {
        LayoutKind::Nemo
    } else if nanochat {
        LayoutKind::Nanochat
    } else if handler && units.len() > 1 {
        LayoutKind::TraceHandler
    } else if units.len() > 1 {
        LayoutKind::LooseRanks
    } else {
        LayoutKind::Single
    };
    let expected = match kind {
        LayoutKind::Nemo => vec![
            Artifact::Trace,
            Artifact::ExecutionTrace,
            Artifact::Snapshot,
        ],
        LayoutKind::Nanochat => vec![Artifact::Trace, Artifact::Snapshot],
        _ => Artifact::ALL
            .into_iter()
            .filter(|a| units.iter().any(|u| u.file(*a).is_some()))
            .collect(),
    };
    RunLayout {
        kind,
        units,
        expected,
        skipped,
    }
}
