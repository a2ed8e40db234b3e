//! The verdict: which collective hung, who is missing from it or issued something else, and the
//! stacks that show where each rank was.
//!
//! Each group's first collective that is not completed on every member is a divergence (and a
//! send or recv in flight whose peer posted nothing is one too). A divergence is a consequence
//! when every rank missing from it is itself waiting at another divergence (rank 2 never reaches
//! the world all_reduce because it waits in its data-parallel group for rank 3). The hang is the
//! divergence that is not a consequence, in this order: ranks that issued a different op, size
//! or dtype; ranks missing that wait nowhere; every rank issued it and some never finished;
//! ranks whose dumps are missing. Ties go to the collective issued first. Collectives that
//! completed although the ranks disagreed are reported apart: they did not hang the job, but
//! they are bugs.

use super::p2p::P2pStatus;
use super::{CellState, ColumnStatus, Group, RankDump};
use serde::Serialize;

/// A rank whose op, sizes or dtypes differ from what the other ranks issued.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    pub rank: i64,
    /// `op`, `input_sizes`, `output_sizes`, `input_dtypes` or `output_dtypes`.
    pub field: &'static str,
    pub expected: String,
    pub found: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HangKind {
    /// Ranks issued a different op, size or dtype.
    Mismatch,
    /// Ranks never issued it.
    MissingRanks,
    /// A send or recv in flight whose peer posted nothing to match it.
    UnmatchedP2p,
    /// Every rank issued it; some never finished.
    NotCompleted,
    /// The ranks that did not issue it have no dump, or it fell out of their ring buffer.
    Unknown,
    /// It completed, but the ranks disagreed on it.
    CompletedMismatch,
}

impl HangKind {
    pub fn label(self) -> &'static str {
        match self {
            HangKind::Mismatch => "ranks disagree",
            HangKind::MissingRanks => "ranks missing",
            HangKind::UnmatchedP2p => "unmatched send/recv",
            HangKind::NotCompleted => "issued everywhere, not finished",
            HangKind::Unknown => "ranks unaccounted for",
            HangKind::CompletedMismatch => "completed although the ranks disagreed",
        }
    }
}

/// A missing rank that waits at another collective.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blocked {
    pub rank: i64,
    pub pg: String,
    pub seq: i64,
    pub op: String,
}

/// One divergence: a collective (or send/recv) the ranks did not all finish.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hang {
    pub kind: HangKind,
    pub pg: String,
    pub pg_desc: String,
    /// `collective_seq_id`; for a send/recv, its order within the (source, destination) pair.
    pub seq: i64,
    /// (source, destination) of a send/recv.
    pub p2p: Option<(i64, i64)>,
    pub op: String,
    pub input_sizes: String,
    pub output_sizes: String,
    pub input_dtypes: String,
    pub output_dtypes: String,
    pub members: Vec<i64>,
    /// Issued it and did not finish.
    pub waiting: Vec<i64>,
    pub completed: Vec<i64>,
    /// Never issued it.
    pub missing: Vec<i64>,
    /// No dump, or it fell out of their ring buffer.
    pub unknown: Vec<i64>,
    pub mismatches: Vec<Mismatch>,
    /// Missing ranks that wait at another divergence.
    pub blocked: Vec<Blocked>,
    /// The ranks that cause it (see the module doc).
    pub culprits: Vec<i64>,
    /// The earliest `time_created_ns` of the waiting ranks' entries.
    pub since_ns: Option<i64>,
    /// Index into [`super::Group::columns`] (collectives) of the divergence.
    pub column: Option<usize>,
}

/// Ranks grouped by one stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StackGroup {
    /// `culprit's last collective`, `issued instead`, `lagging at the hang`, `waiting at the
    /// hang`.
    pub role: &'static str,
    pub ranks: Vec<i64>,
    pub pg: String,
    pub seq: i64,
    pub op: String,
    pub state: CellState,
    /// (function, file, line), innermost first.
    pub frames: Vec<(String, String, i64)>,
}

pub(super) struct Verdict {
    pub hang: Option<Hang>,
    pub also: Vec<Hang>,
    pub disagreements: Vec<Hang>,
    pub stacks: Vec<StackGroup>,
}

fn entry_of<'a>(
    dumps: &'a [RankDump],
    rank: i64,
    entry: Option<usize>,
) -> Option<(&'a RankDump<'a>, usize)> {
    let d = dumps.iter().find(|d| d.rank == rank)?;
    let k = entry?;
    (k < d.dump.entries.len()).then_some((d, k))
}

fn divergences(dumps: &[RankDump], g: &Group, out: &mut Vec<Hang>, agree: &mut Vec<Hang>) {
    let start = g.window_start.unwrap_or(i64::MAX);
    let mut hung = false;
    for (ci, c) in g.columns.iter().enumerate() {
        if c.seq < start {
            continue;
        }
        let done = c.status == ColumnStatus::Completed;
        if done && c.mismatches.is_empty() {
            continue;
        }
        let ranks_in = |f: &dyn Fn(CellState) -> bool| -> Vec<i64> {
            c.cells
                .iter()
                .filter(|x| f(x.state))
                .map(|x| x.rank)
                .collect()
        };
        let waiting = ranks_in(&|s| matches!(s, CellState::Started | CellState::Scheduled));
        // Cells that are lost or have no dump while every rank present finished: no one waits.
        if !done && waiting.is_empty() {
            continue;
        }
        let since = c
            .cells
            .iter()
            .filter(|x| matches!(x.state, CellState::Started | CellState::Scheduled))
            .filter_map(|x| {
                let (d, k) = entry_of(dumps, x.rank, x.entry)?;
                Some(d.dump.entries[k].time_created_ns)
            })
            .min();
        let missing = ranks_in(&|s| s == CellState::Absent);
        let unknown = ranks_in(&|s| matches!(s, CellState::Lost | CellState::NoDump));
        let mut culprits: Vec<i64> = c.mismatches.iter().map(|m| m.rank).collect();
        culprits.dedup();
        let kind = if done {
            HangKind::CompletedMismatch
        } else if !c.mismatches.is_empty() {
            HangKind::Mismatch
        } else if !missing.is_empty() {
            culprits = missing.clone();
            HangKind::MissingRanks
        } else if !unknown.is_empty() {
            culprits = unknown.clone();
            HangKind::Unknown
        } else {
            // Every rank issued it: a rank that did not get as far as the others is the lead.
            let least = c
                .cells
                .iter()
                .map(|x| x.state)
                .filter(|s| s.issued())
                .max()
                .unwrap_or(CellState::Scheduled);
            let most = c
                .cells
                .iter()
                .map(|x| x.state)
                .filter(|s| s.issued())
                .min()
                .unwrap_or(CellState::Scheduled);
            if least != most {
                culprits = ranks_in(&|s| s == least);
            }
            HangKind::NotCompleted
        };
        let h = Hang {
            kind,
            pg: g.name.clone(),
            pg_desc: g.desc.clone(),
            seq: c.seq,
            p2p: None,
            op: c.op.clone(),
            input_sizes: c.input_sizes.clone(),
            output_sizes: c.output_sizes.clone(),
            input_dtypes: c.input_dtypes.clone(),
            output_dtypes: c.output_dtypes.clone(),
            members: g.members.clone(),
            waiting,
            completed: ranks_in(&|s| s == CellState::Completed),
            missing,
            unknown,
            mismatches: c.mismatches.clone(),
            blocked: Vec::new(),
            culprits,
            since_ns: since,
            column: Some(ci),
        };
        if done {
            agree.push(h);
        } else if !hung {
            out.push(h);
            hung = true;
        }
    }
    for (k, p) in g.p2p.iter().enumerate() {
        if !matches!(p.status, P2pStatus::Unmatched | P2pStatus::Unknown) {
            continue;
        }
        let Some(posted) = p.send.as_ref().or(p.recv.as_ref()) else {
            continue;
        };
        let Some((d, e)) = entry_of(dumps, posted.rank, Some(posted.entry)) else {
            continue;
        };
        let en = &d.dump.entries[e];
        let peer = if p.send.is_some() { p.dst } else { p.src };
        let order = g.p2p[..k]
            .iter()
            .filter(|q| q.src == p.src && q.dst == p.dst)
            .count() as i64
            + 1;
        let s = |id| d.dump.str(id).to_owned();
        out.push(Hang {
            kind: if p.status == P2pStatus::Unknown {
                HangKind::Unknown
            } else {
                HangKind::UnmatchedP2p
            },
            pg: g.name.clone(),
            pg_desc: g.desc.clone(),
            seq: order,
            p2p: Some((p.src, p.dst)),
            op: s(en.op),
            input_sizes: s(en.input_sizes),
            output_sizes: s(en.output_sizes),
            input_dtypes: s(en.input_dtypes),
            output_dtypes: s(en.output_dtypes),
            members: vec![p.src, p.dst],
            waiting: vec![posted.rank],
            completed: Vec::new(),
            missing: if p.status == P2pStatus::Unmatched {
                vec![peer]
            } else {
                Vec::new()
            },
            unknown: if p.status == P2pStatus::Unknown {
                vec![peer]
            } else {
                Vec::new()
            },
            mismatches: Vec::new(),
            blocked: Vec::new(),
            culprits: vec![peer],
            since_ns: Some(en.time_created_ns),
            column: None,
        });
    }
}

fn stack_of(d: &RankDump, k: usize) -> Vec<(String, String, i64)> {
    d.dump
        .stack(d.dump.entries[k].stack)
        .into_iter()
        .map(|(n, f, l)| (n.to_owned(), f.to_owned(), l))
        .collect()
}

fn push_stack(out: &mut Vec<StackGroup>, role: &'static str, d: &RankDump, k: usize) {
    let e = &d.dump.entries[k];
    let frames = stack_of(d, k);
    let (pg, op) = (
        d.dump.str(e.pg_name).to_owned(),
        d.dump.str(e.op).to_owned(),
    );
    let seq = if e.is_p2p {
        e.p2p_seq_id
    } else {
        e.collective_seq_id
    };
    let state = if e.retired {
        CellState::Completed
    } else {
        CellState::of(e.state)
    };
    if let Some(g) = out
        .iter_mut()
        .find(|g| g.role == role && g.frames == frames && g.op == op && g.pg == pg && g.seq == seq)
    {
        g.ranks.push(d.rank);
        return;
    }
    out.push(StackGroup {
        role,
        ranks: vec![d.rank],
        pg,
        seq,
        op,
        state,
        frames,
    });
}

pub(super) fn verdict(dumps: &[RankDump], groups: &[Group]) -> Verdict {
    let mut all = Vec::new();
    let mut disagreements = Vec::new();
    for g in groups {
        divergences(dumps, g, &mut all, &mut disagreements);
    }
    // Which missing ranks wait at another divergence, and where.
    let blocked: Vec<Vec<Blocked>> = all
        .iter()
        .enumerate()
        .map(|(i, h)| {
            h.missing
                .iter()
                .filter_map(|&m| {
                    let (_, w) = all
                        .iter()
                        .enumerate()
                        .find(|(j, w)| *j != i && w.waiting.contains(&m))?;
                    Some(Blocked {
                        rank: m,
                        pg: w.pg.clone(),
                        seq: w.seq,
                        op: w.op.clone(),
                    })
                })
                .collect()
        })
        .collect();
    for (h, b) in all.iter_mut().zip(blocked) {
        h.blocked = b;
        if matches!(h.kind, HangKind::MissingRanks | HangKind::UnmatchedP2p) {
            let free: Vec<i64> = h
                .missing
                .iter()
                .copied()
                .filter(|m| !h.blocked.iter().any(|b| b.rank == *m))
                .collect();
            if !free.is_empty() {
                h.culprits = free;
            }
        }
    }
    let blocked_share = |h: &Hang| -> u64 {
        if h.missing.is_empty() {
            0
        } else {
            (1000 * h.blocked.len() / h.missing.len()) as u64
        }
    };
    let rank = |h: &Hang| -> u8 {
        match h.kind {
            HangKind::Mismatch => 0,
            HangKind::MissingRanks | HangKind::UnmatchedP2p => 1,
            HangKind::NotCompleted => 2,
            HangKind::Unknown | HangKind::CompletedMismatch => 3,
        }
    };
    crate::sort::by(&mut all, |a, b| {
        (rank(a), blocked_share(a), a.since_ns.unwrap_or(i64::MAX))
            .cmp(&(rank(b), blocked_share(b), b.since_ns.unwrap_or(i64::MAX)))
            .then_with(|| a.pg.cmp(&b.pg))
            .then(a.seq.cmp(&b.seq))
    });
    let mut it = all.into_iter();
    let hang = it.next();
    let also: Vec<Hang> = it.collect();
    let mut stacks = Vec::new();
    if let Some(h) = &hang {
        for &c in &h.culprits {
            let Some(d) = dumps.iter().find(|d| d.rank == c) else {
                continue;
            };
            let mine = h.column.and_then(|ci| {
                let g = groups.iter().find(|g| g.name == h.pg)?;
                g.columns.get(ci)?.cells.iter().find(|x| x.rank == c)?.entry
            });
            match mine {
                Some(k) if h.kind == HangKind::Mismatch => {
                    push_stack(&mut stacks, "issued instead", d, k)
                }
                Some(k) => push_stack(&mut stacks, "lagging at the hang", d, k),
                None => {
                    if let Some(k) = d.dump.entries.len().checked_sub(1) {
                        push_stack(&mut stacks, "culprit's last collective", d, k);
                    }
                }
            }
        }
        let g = groups.iter().find(|g| g.name == h.pg);
        let col = h.column.and_then(|ci| g?.columns.get(ci));
        for &w in &h.waiting {
            if h.culprits.contains(&w) {
                continue;
            }
            let Some(d) = dumps.iter().find(|d| d.rank == w) else {
                continue;
            };
            let k = match col {
                Some(c) => c.cells.iter().find(|x| x.rank == w).and_then(|x| x.entry),
                None => g.and_then(|g| {
                    g.p2p.iter().find_map(|p| {
                        let s = p.send.as_ref().or(p.recv.as_ref())?;
                        (s.rank == w && Some((p.src, p.dst)) == h.p2p).then_some(s.entry)
                    })
                }),
            };
            if let Some(k) = k {
                push_stack(&mut stacks, "waiting at the hang", d, k);
            }
        }
    }
    Verdict {
        hang,
        also,
        disagreements,
        stacks,
    }
}
