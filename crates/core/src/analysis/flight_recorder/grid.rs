//! Groups, their members and the ranks × sequence grid (see the module doc of the parent).

use super::verdict::Mismatch;
use super::{
    Cell, CellState, Column, ColumnStatus, Group, GroupStatus, Membership, RankDump, RankSummary,
};
use crate::ingest::flight_recorder::{EntryState, FrDump, FrEntry, PgStatus};
use std::collections::{BTreeMap, BTreeSet};

/// Whether a dump's `pg_config` can be believed: every entry named and its ranks readable
/// (gloo's single `''` entry is not).
pub(super) fn config_trusted(d: &FrDump) -> bool {
    !d.pg_config.is_empty()
        && d.pg_config
            .iter()
            .all(|c| !c.key.is_empty() && c.ranks.as_ref().is_some_and(|r| r.len() <= MAX_WORLD))
}

/// More ranks than any job has: a `pg_config` listing more is not believed.
pub const MAX_WORLD: usize = 1 << 20;

/// Cells one group's grid holds at most (ranks × collectives); past it, only the latest
/// collectives are kept (a hang is at the end of every buffer).
pub const MAX_CELLS: usize = 4 << 20;

/// Every rank of the job: the dumps' ranks, the ranks a believable `pg_config` names, and the
/// gaps in the dumps' numbering (a missing file).
pub(super) fn world(dumps: &[RankDump], inferred: &mut Vec<String>) -> Vec<i64> {
    let mut w: BTreeSet<i64> = dumps.iter().map(|d| d.rank).collect();
    let mut from_config = false;
    for d in dumps.iter().filter(|d| config_trusted(d.dump)) {
        for c in &d.dump.pg_config {
            w.extend(c.ranks.iter().flatten().copied());
            from_config = true;
        }
    }
    // A gap between the dumps' ranks is a missing file; one dump alone says nothing of the rest.
    if !from_config && dumps.len() > 1 {
        if let (Some(&lo), Some(&hi)) = (w.first(), w.last()) {
            let gaps: Vec<i64> = (lo.min(0)..=hi).filter(|r| !w.contains(r)).collect();
            if !gaps.is_empty() && gaps.len() <= 4096 {
                inferred.push(format!(
                    "Rank(s) {} have no dump: the job's ranks were inferred from the dumps' numbering (no pg_config names them).",
                    list(&gaps)
                ));
                w.extend(gaps);
            }
        }
    }
    w.into_iter().collect()
}

pub(super) fn list(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(i64::to_string).collect();
    s.join(", ")
}

/// A rank's view of one group.
#[derive(Default)]
struct RankGroup {
    /// Collective (non-p2p) entries by sequence id, indexes into the dump's entries.
    by_seq: BTreeMap<i64, Vec<usize>>,
    status: Option<PgStatus>,
    mentioned: bool,
}

fn group_order(name: &str) -> (u8, i64, String) {
    match name.parse::<i64>() {
        Ok(n) => (0, n, String::new()),
        Err(_) => (1, 0, name.to_owned()),
    }
}

/// pg id → group name on one rank, from its entries.
fn names_by_id(d: &FrDump) -> Vec<(i64, crate::model::StrId)> {
    let mut v: Vec<(i64, crate::model::StrId)> = Vec::new();
    for e in &d.entries {
        if let Some(id) = e.pg_id {
            if !v.iter().any(|x| x.0 == id) {
                v.push((id, e.pg_name));
            }
        }
    }
    v
}

/// The group a `pg_status` key names on this rank.
fn status_group(d: &FrDump, ids: &[(i64, crate::model::StrId)], key: &str) -> String {
    let id = key.parse::<i64>().ok();
    match ids.iter().find(|x| Some(x.0) == id) {
        Some(x) => d.str(x.1).to_owned(),
        None => key.to_owned(),
    }
}

/// Whether a dump's `pg_status` counts what `collective_seq_id` counts: for every group the dump
/// has collectives of, its last enqueued id is the last entry's. torch 2.15's gloo counts
/// send/recv in `pg_status` but not in `collective_seq_id`, so there the two disagree and
/// `pg_status` cannot say which collectives a rank finished.
pub(super) fn status_usable(d: &FrDump) -> bool {
    rank_groups_raw(d).values().all(|g| {
        let last = g.by_seq.keys().next_back().copied();
        match (last, g.status.as_ref().and_then(|s| s.last_enqueued)) {
            (Some(l), Some(e)) => l == e,
            _ => true,
        }
    })
}

fn rank_groups(d: &FrDump) -> BTreeMap<String, RankGroup> {
    let mut m = rank_groups_raw(d);
    if !status_usable(d) {
        for g in m.values_mut() {
            g.status = None;
        }
    }
    m
}

fn rank_groups_raw(d: &FrDump) -> BTreeMap<String, RankGroup> {
    let ids = names_by_id(d);
    let mut m: BTreeMap<String, RankGroup> = BTreeMap::new();
    for (k, e) in d.entries.iter().enumerate() {
        let g = m.entry(d.str(e.pg_name).to_owned()).or_default();
        g.mentioned = true;
        if !e.is_p2p {
            g.by_seq.entry(e.collective_seq_id).or_default().push(k);
        }
    }
    for s in &d.pg_status {
        let name = status_group(d, &ids, &s.key);
        let g = m.entry(name).or_default();
        g.mentioned = true;
        g.status = Some(s.clone());
    }
    m
}

fn sig(d: &FrDump, idx: &[usize]) -> [String; 5] {
    let es: Vec<&FrEntry> = idx.iter().filter_map(|&k| d.entries.get(k)).collect();
    let op: Vec<&str> = es.iter().map(|e| d.str(e.op)).collect();
    let first = es.first();
    let s = |f: fn(&FrEntry) -> crate::model::StrId| {
        first.map_or(String::new(), |e| d.str(f(e)).to_owned())
    };
    [
        op.join("+"),
        s(|e| e.input_sizes),
        s(|e| e.output_sizes),
        s(|e| e.input_dtypes),
        s(|e| e.output_dtypes),
    ]
}

const UNEVEN: [&str; 5] = [
    "all_to_all",
    "all_to_all_single",
    "all_to_all_v_single",
    "all_gather_v",
    "reduce_scatter_v",
];

/// Where `found` disagrees with `want`, fr_trace's checks in its order.
fn disagreements(rank: i64, want: &[String; 5], found: &[String; 5]) -> Vec<Mismatch> {
    let m = |field: &'static str, k: usize| Mismatch {
        rank,
        field,
        expected: want[k].clone(),
        found: found[k].clone(),
    };
    if want[0] != found[0] {
        return vec![m("op", 0)];
    }
    let op = want[0].as_str();
    let mut v = Vec::new();
    let uneven = UNEVEN.contains(&op);
    if !uneven && op != "scatter" && want[1] != found[1] {
        v.push(m("input_sizes", 1));
    }
    if !uneven && op != "gather" && want[2] != found[2] {
        v.push(m("output_sizes", 2));
    }
    if !matches!(op, "scatter" | "broadcast") && want[3] != found[3] {
        v.push(m("input_dtypes", 3));
    }
    if op != "gather" && want[4] != found[4] {
        v.push(m("output_dtypes", 4));
    }
    v
}

/// The groups of the job, each with its grid.
pub(super) fn groups(dumps: &[RankDump], world: &[i64], inferred: &mut Vec<String>) -> Vec<Group> {
    let per: Vec<BTreeMap<String, RankGroup>> = dumps.iter().map(|d| rank_groups(d.dump)).collect();
    let mut names: Vec<String> = per.iter().flat_map(|m| m.keys().cloned()).collect();
    crate::sort::by_key(&mut names, |n| group_order(n));
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let desc = dumps
            .iter()
            .flat_map(|d| {
                d.dump
                    .entries
                    .iter()
                    .filter(|e| d.dump.str(e.pg_name) == name)
                    .map(|e| d.dump.str(e.pg_desc))
            })
            .find(|s| !s.is_empty())
            .unwrap_or("")
            .to_owned();
        let config: BTreeSet<i64> = dumps
            .iter()
            .filter(|d| config_trusted(d.dump))
            .flat_map(|d| d.dump.pg_config.iter())
            .filter(|c| c.key == name || c.name == name)
            .flat_map(|c| c.ranks.iter().flatten().copied())
            .collect();
        let (members, membership) = if !config.is_empty() {
            (config.into_iter().collect(), Membership::PgConfig)
        } else if desc == "default_pg" || (desc.is_empty() && name == "0") {
            (world.to_vec(), Membership::World)
        } else {
            let m: Vec<i64> = dumps
                .iter()
                .zip(&per)
                .filter(|(_, p)| p.get(&name).is_some_and(|g| g.mentioned))
                .map(|(d, _)| d.rank)
                .collect();
            inferred.push(format!(
                "Group {name}{}: members {} inferred from the ranks whose entries or pg_status mention it.",
                if desc.is_empty() || desc == "undefined" { String::new() } else { format!(" ({desc})") },
                list(&m)
            ));
            (m, Membership::Entries)
        };
        let columns = columns(dumps, &per, &name, &members);
        let window_start = columns
            .iter()
            .find(|c| c.cells.iter().all(|x| x.state != CellState::Lost))
            .map(|c| c.seq);
        let first_divergence = columns.iter().position(|c| {
            Some(c.seq) >= window_start
                && window_start.is_some()
                && (c.status != ColumnStatus::Completed || !c.mismatches.is_empty())
        });
        out.push(Group {
            name,
            desc,
            members,
            membership,
            window_start,
            columns,
            first_divergence,
            p2p: Vec::new(),
        });
    }
    out
}

fn columns(
    dumps: &[RankDump],
    per: &[BTreeMap<String, RankGroup>],
    name: &str,
    members: &[i64],
) -> Vec<Column> {
    let mut seqs: BTreeSet<i64> = per
        .iter()
        .filter_map(|m| m.get(name))
        .flat_map(|g| g.by_seq.keys().copied())
        .collect();
    let keep = (MAX_CELLS / members.len().max(1)).max(1);
    while seqs.len() > keep {
        seqs.pop_first();
    }
    // `analyze` sorted the dumps by rank.
    let idx_of = |rank: i64| dumps.binary_search_by_key(&rank, |d| d.rank).ok();
    let mut cols = Vec::with_capacity(seqs.len());
    for seq in seqs {
        let mut cells = Vec::with_capacity(members.len());
        let mut sigs: Vec<(i64, [String; 5])> = Vec::new();
        for &rank in members {
            let Some(k) = idx_of(rank) else {
                cells.push(Cell {
                    rank,
                    state: CellState::NoDump,
                    inferred: false,
                    entry: None,
                    op: None,
                });
                continue;
            };
            let d = dumps[k].dump;
            let g = per[k].get(name);
            let status = g.and_then(|g| g.status.as_ref());
            let done = status
                .and_then(|s| s.last_completed)
                .is_some_and(|c| c >= seq);
            let started = status
                .and_then(|s| s.last_started)
                .is_some_and(|c| c >= seq);
            let (state, inferred, entry) = match g.and_then(|g| g.by_seq.get(&seq)) {
                Some(idx) => {
                    sigs.push((rank, sig(d, idx)));
                    let last = *idx.last().unwrap_or(&0);
                    let e = &d.entries[last];
                    let dumped = CellState::of(e.state);
                    let (st, inf) = if e.state == EntryState::Completed {
                        (CellState::Completed, false)
                    } else if e.retired || done {
                        (CellState::Completed, true)
                    } else if e.state == EntryState::Started {
                        (CellState::Started, false)
                    } else if started {
                        (CellState::Started, true)
                    } else {
                        (dumped, false)
                    };
                    (st, inf, Some(last))
                }
                None => {
                    let first = g.and_then(|g| g.by_seq.keys().next().copied());
                    let last = g.and_then(|g| g.by_seq.keys().next_back().copied());
                    let enqueued = status
                        .and_then(|s| s.last_enqueued)
                        .is_some_and(|c| c >= seq);
                    let wrapped = d.entries.first().is_some_and(|e| e.record_id > 0);
                    if done {
                        (CellState::Completed, true, None)
                    } else if first.is_some_and(|f| seq < f) {
                        (CellState::Lost, false, None)
                    } else if last.is_some_and(|l| seq < l) {
                        // A hole inside the rank's own range: filtered out of the dump.
                        (CellState::Lost, false, None)
                    } else if enqueued {
                        (CellState::Scheduled, true, None)
                    } else if first.is_none() && wrapped {
                        (CellState::Lost, true, None)
                    } else {
                        (CellState::Absent, false, None)
                    }
                }
            };
            cells.push(Cell {
                rank,
                state,
                inferred,
                entry,
                op: None,
            });
        }
        // The reference: what most ranks issued; a tie goes to the lowest rank's.
        let mut counts: Vec<(&[String; 5], usize, i64)> = Vec::new();
        for (r, s) in &sigs {
            match counts.iter_mut().find(|c| c.0 == s) {
                Some(c) => c.1 += 1,
                None => counts.push((s, 1, *r)),
            }
        }
        let want = counts
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))
            .map(|c| c.0.clone())
            .unwrap_or_default();
        let mut mismatches = Vec::new();
        for (r, s) in &sigs {
            if s != &want {
                mismatches.extend(disagreements(*r, &want, s));
                if s[0] != want[0] {
                    if let Some(c) = cells.iter_mut().find(|c| c.rank == *r) {
                        c.op = Some(s[0].clone());
                    }
                }
            }
        }
        let any = |f: fn(CellState) -> bool| cells.iter().any(|c| f(c.state));
        let status = if cells.iter().all(|c| c.state == CellState::Completed) {
            ColumnStatus::Completed
        } else if any(|s| s == CellState::Absent) {
            ColumnStatus::Missing
        } else if any(|s| matches!(s, CellState::Lost | CellState::NoDump)) {
            ColumnStatus::Unknown
        } else {
            ColumnStatus::Pending
        };
        let [op, input_sizes, output_sizes, input_dtypes, output_dtypes] = want;
        cols.push(Column {
            seq,
            op,
            input_sizes,
            output_sizes,
            input_dtypes,
            output_dtypes,
            status,
            mismatches,
            cells,
        });
    }
    cols
}

/// Per rank: its dump in summary and its groups' last sequence ids.
pub(super) fn summaries(dumps: &[RankDump], groups: &[Group]) -> Vec<RankSummary> {
    dumps
        .iter()
        .map(|rd| {
            let d = rd.dump;
            let per = rank_groups_raw(d);
            let usable = status_usable(d);
            // The backend most entries name (dumps hold one, or `c10d` hooks beside it).
            let mut backends: Vec<(crate::model::StrId, usize)> = Vec::new();
            for e in &d.entries {
                match backends.iter_mut().find(|b| b.0 == e.backend) {
                    Some(b) => b.1 += 1,
                    None => backends.push((e.backend, 1)),
                }
            }
            let backend = backends
                .iter()
                .max_by_key(|b| b.1)
                .map_or("", |b| d.str(b.0))
                .to_owned();
            let status = groups
                .iter()
                .filter(|g| g.members.contains(&rd.rank))
                .filter_map(|g| {
                    let mine = per.get(&g.name)?;
                    if let Some(s) = &mine.status {
                        return Some(GroupStatus {
                            pg: g.name.clone(),
                            desc: g.desc.clone(),
                            last_enqueued: s.last_enqueued,
                            last_started: s.last_started,
                            last_completed: s.last_completed,
                            source: if usable {
                                "pg_status"
                            } else {
                                "pg_status (not used: it counts send/recv too)"
                            },
                        });
                    }
                    let last_with = |f: &dyn Fn(&FrEntry) -> bool| {
                        mine.by_seq
                            .iter()
                            .filter(|(_, v)| v.iter().any(|&k| f(&d.entries[k])))
                            .map(|(s, _)| *s)
                            .next_back()
                    };
                    Some(GroupStatus {
                        pg: g.name.clone(),
                        desc: g.desc.clone(),
                        last_enqueued: mine.by_seq.keys().next_back().copied(),
                        last_started: last_with(&|e| e.state >= EntryState::Started || e.retired),
                        last_completed: last_with(&|e| {
                            e.state == EntryState::Completed || e.retired
                        }),
                        source: "entries",
                    })
                })
                .collect();
            RankSummary {
                rank: rd.rank,
                file: rd.path.to_owned(),
                version: d.version.clone(),
                backend,
                comm_lib_version: d.comm_lib_version.clone(),
                entries: d.entries.len(),
                first_record: d.entries.first().map(|e| e.record_id),
                last_record: d.entries.last().map(|e| e.record_id),
                wrapped: d.entries.first().is_some_and(|e| e.record_id > 0),
                stacks: d.has_stacks(),
                status,
                last_entry: (!d.entries.is_empty()).then(|| d.entries.len() - 1),
            }
        })
        .collect()
}

/// What the report inferred about the dumps as a whole, in words.
pub(super) fn notes(dumps: &[RankDump], groups: &[Group], missing: &[i64]) -> Vec<String> {
    let mut out = Vec::new();
    for g in groups {
        if (g.columns.len() + 1) * g.members.len() > MAX_CELLS {
            out.push(format!(
                "Group {}: only its latest {} collectives are laid out ({} ranks × collectives would exceed {} cells).",
                g.name,
                g.columns.len(),
                g.members.len(),
                MAX_CELLS
            ));
        }
    }
    let inferred_done: usize = groups
        .iter()
        .flat_map(|g| g.columns.iter().flat_map(|c| c.cells.iter()))
        .filter(|c| c.inferred && c.state == CellState::Completed)
        .count();
    if inferred_done > 0 {
        out.push(format!(
            "{inferred_done} cell(s) read as completed from `retired` or pg_status, not from `state` (gloo leaves `state` at scheduled)."
        ));
    }
    let broken: Vec<i64> = dumps
        .iter()
        .filter(|d| !d.dump.pg_config.is_empty() && !config_trusted(d.dump))
        .map(|d| d.rank)
        .collect();
    if !broken.is_empty() {
        out.push(format!(
            "pg_config is not usable on rank(s) {} (gloo writes one entry named '' holding the last created group's ranks): members come from the entries.",
            list(&broken)
        ));
    }
    let wrapped: Vec<i64> = dumps
        .iter()
        .filter(|d| d.dump.entries.first().is_some_and(|e| e.record_id > 0))
        .map(|d| d.rank)
        .collect();
    if !wrapped.is_empty() {
        let starts: Vec<String> = groups
            .iter()
            .filter(|g| g.columns.first().map(|c| Some(c.seq)) != Some(g.window_start))
            .filter_map(|g| {
                Some(format!(
                    "group {} from sequence id {}",
                    g.name, g.window_start?
                ))
            })
            .collect();
        out.push(format!(
            "The ring buffer wrapped on rank(s) {}: older collectives are gone from them{}.",
            list(&wrapped),
            if starts.is_empty() {
                String::new()
            } else {
                format!("; every member's record is whole for {}", starts.join(", "))
            }
        ));
    }
    if !missing.is_empty() {
        out.push(format!(
            "No dump for rank(s) {}: their cells are unknown, not absent.",
            list(missing)
        ));
    }
    let odd: Vec<i64> = dumps
        .iter()
        .filter(|d| !status_usable(d.dump))
        .map(|d| d.rank)
        .collect();
    if !odd.is_empty() {
        out.push(format!(
            "pg_status on rank(s) {} counts more than the collectives' sequence ids (gloo counts send/recv too): it was not used to infer which collectives finished.",
            list(&odd)
        ));
    }
    if dumps.iter().any(|d| {
        d.dump
            .entries
            .iter()
            .any(|e| d.dump.str(e.backend) == "gloo")
    }) {
        out.push(
            "gloo records no send/recv in the Flight Recorder: a rank blocked in point-to-point ops shows no entry for them."
                .to_owned(),
        );
    }
    out
}
