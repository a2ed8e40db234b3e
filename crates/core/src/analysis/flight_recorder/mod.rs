//! "Why did my job hang?": the Flight Recorder dumps of a job's ranks read together
//! (docs/formats.md; torch's `flight_recorder/fr_trace` is the reference).
//!
//! Like `fr_trace`, the same collective on every rank of its process group is keyed by
//! (process group name, `collective_seq_id`), and the ranks are checked to agree on op, sizes
//! and dtypes (with `fr_trace`'s exceptions: all_to_all sizes may differ, scatter's inputs and
//! gather's outputs too). Unlike it, nothing is taken from `pg_config` unless it is whole: a
//! group's members come from a `pg_config` that names the group, else from every rank whose
//! entries or `pg_status` mention it (the default group holds every rank), so gloo's broken
//! `pg_config`, a missing rank's file or a ring buffer that wrapped still give an answer, and the
//! report lists what it inferred ([`FrReport::inferred`]).
//!
//! Per group and sequence id each rank's cell is completed / started / scheduled (as dumped, or
//! inferred from `retired` and `pg_status` where gloo leaves `state` at scheduled), absent (the
//! rank never issued it), lost (before the rank's ring buffer window) or no dump. The first
//! sequence id of a group where the ranks are not all completed is the group's divergence: ranks
//! missing from it, ranks that issued something else, or every rank issued and some never
//! finished. Among the groups' divergences the hang is the one a rank caused without waiting
//! elsewhere (module [`verdict`]); the others are listed as consequences. Point-to-point ops are
//! paired per (source, destination) in order: the k-th send from a to b with the k-th recv at b
//! from a.
//!
//! Times are the dumps' `time_created_ns` and discovered times, shown relative to the earliest
//! entry of any rank. They come from each host's wall clock, so across hosts they are only as
//! comparable as the clocks.

mod grid;
mod p2p;
pub mod verdict;

use crate::ingest::flight_recorder::{EntryState, FrDump};
use serde::Serialize;

pub use verdict::{Blocked, Hang, HangKind, Mismatch, StackGroup};

/// One rank's dump, as the caller placed it (the rank comes from the file name).
#[derive(Debug, Clone, Copy)]
pub struct RankDump<'a> {
    pub rank: i64,
    pub path: &'a str,
    pub dump: &'a FrDump,
}

/// What one rank did with one collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellState {
    Completed,
    Started,
    Scheduled,
    /// The rank never issued it: its last sequence id in the group is lower.
    Absent,
    /// Before the rank's ring-buffer window, and `pg_status` does not say it completed.
    Lost,
    /// The rank's dump is missing.
    NoDump,
}

impl CellState {
    pub fn label(self) -> &'static str {
        match self {
            CellState::Completed => "completed",
            CellState::Started => "started",
            CellState::Scheduled => "scheduled",
            CellState::Absent => "absent",
            CellState::Lost => "lost",
            CellState::NoDump => "no dump",
        }
    }

    /// The rank issued it (it may still be running).
    pub fn issued(self) -> bool {
        matches!(
            self,
            CellState::Completed | CellState::Started | CellState::Scheduled
        )
    }

    fn of(s: EntryState) -> CellState {
        match s {
            EntryState::Completed => CellState::Completed,
            EntryState::Started => CellState::Started,
            EntryState::Scheduled => CellState::Scheduled,
        }
    }
}

/// One rank's cell of one collective.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub rank: i64,
    pub state: CellState,
    /// The state is inferred (from `retired` or `pg_status`), not dumped as such.
    pub inferred: bool,
    /// Index into the rank's [`FrDump::entries`] (the last one for a coalesced group).
    pub entry: Option<usize>,
    /// The op this rank issued (`all_reduce`; coalesced ops joined by `+`), when it differs from
    /// the column's.
    pub op: Option<String>,
}

/// The state of a collective across its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnStatus {
    /// Completed on every member.
    Completed,
    /// Issued by every member, not completed on all.
    Pending,
    /// Some members never issued it.
    Missing,
    /// Some members' cells are lost or have no dump, the rest completed or wait.
    Unknown,
}

/// One collective (one sequence id of one group) on every member.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    pub seq: i64,
    /// The op most members issued (`all_reduce`).
    pub op: String,
    pub input_sizes: String,
    pub output_sizes: String,
    pub input_dtypes: String,
    pub output_dtypes: String,
    pub status: ColumnStatus,
    /// Ranks that issued something else, with what.
    pub mismatches: Vec<Mismatch>,
    /// In [`Group::members`] order.
    pub cells: Vec<Cell>,
}

/// Where a group's members came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Membership {
    /// A `pg_config` entry naming the group.
    PgConfig,
    /// The default group: every rank of the job.
    World,
    /// The ranks whose entries or `pg_status` mention it (inferred).
    Entries,
}

/// One process group: its members and its collectives in sequence order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub name: String,
    pub desc: String,
    pub members: Vec<i64>,
    pub membership: Membership,
    /// The first sequence id every member's buffer still holds (or `pg_status` accounts for).
    pub window_start: Option<i64>,
    pub columns: Vec<Column>,
    /// Index into `columns` of the first collective not completed everywhere, or disagreeing.
    pub first_divergence: Option<usize>,
    /// Point-to-point ops of the group, paired.
    pub p2p: Vec<p2p::P2pPair>,
}

pub use p2p::{P2pPair, P2pSide, P2pStatus};

/// `pg_status` of one group on one rank (from the dump, else inferred from its entries).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupStatus {
    pub pg: String,
    pub desc: String,
    pub last_enqueued: Option<i64>,
    pub last_started: Option<i64>,
    pub last_completed: Option<i64>,
    /// `pg_status` (as dumped) or `entries` (inferred).
    pub source: &'static str,
}

/// One rank's dump in summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankSummary {
    pub rank: i64,
    pub file: String,
    pub version: String,
    pub backend: String,
    pub comm_lib_version: String,
    pub entries: usize,
    pub first_record: Option<i64>,
    pub last_record: Option<i64>,
    /// The ring buffer wrapped: the first record kept is not record 0.
    pub wrapped: bool,
    pub stacks: bool,
    pub status: Vec<GroupStatus>,
    /// The rank's last entry (any group): index into its entries.
    pub last_entry: Option<usize>,
}

/// Everything the dumps say, for `analyze DIR --json`, `summary DIR` and the Ranks tab.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrReport {
    /// Ranks with a dump, ascending.
    pub ranks: Vec<RankSummary>,
    /// Every rank the job had, as far as the dumps tell.
    pub world: Vec<i64>,
    /// Ranks of the job whose dump is missing.
    pub missing_dumps: Vec<i64>,
    pub groups: Vec<Group>,
    /// The hang: the divergence a rank caused without waiting elsewhere. None when every
    /// recorded collective completed on every rank.
    pub hang: Option<Hang>,
    /// The other groups' divergences (consequences of the hang, or independent).
    pub also: Vec<Hang>,
    /// Collectives that completed although the ranks disagreed on them.
    pub disagreements: Vec<Hang>,
    /// The culprits' last collectives beside the stacks of the ranks waiting at the hang.
    pub stacks: Vec<StackGroup>,
    /// Facts the report inferred rather than read, in words.
    pub inferred: Vec<String>,
    /// The earliest `time_created_ns` of any entry: times are shown relative to it.
    pub t0_ns: i64,
}

impl FrReport {
    /// The group named `name`.
    pub fn group(&self, name: &str) -> Option<&Group> {
        self.groups.iter().find(|g| g.name == name)
    }
}

/// Reads the ranks' dumps together (module doc).
pub fn analyze(dumps: &[RankDump]) -> FrReport {
    let mut dumps: Vec<RankDump> = dumps.to_vec();
    crate::sort::by_key(&mut dumps, |d| d.rank);
    dumps.dedup_by_key(|d| d.rank);
    let t0 = dumps
        .iter()
        .flat_map(|d| d.dump.entries.iter().map(|e| e.time_created_ns))
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(0);
    let mut inferred = Vec::new();
    let world = grid::world(&dumps, &mut inferred);
    let missing_dumps: Vec<i64> = world
        .iter()
        .copied()
        .filter(|r| !dumps.iter().any(|d| d.rank == *r))
        .collect();
    let mut groups = grid::groups(&dumps, &world, &mut inferred);
    for g in &mut groups {
        g.p2p = p2p::pairs(&dumps, g);
    }
    let ranks = grid::summaries(&dumps, &groups);
    let v = verdict::verdict(&dumps, &groups);
    let notes = grid::notes(&dumps, &groups, &missing_dumps);
    inferred.extend(notes);
    FrReport {
        ranks,
        world,
        missing_dumps,
        groups,
        hang: v.hang,
        also: v.also,
        disagreements: v.disagreements,
        stacks: v.stacks,
        inferred,
        t0_ns: t0,
    }
}
