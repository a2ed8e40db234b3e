//! Point-to-point ops: the k-th send from a to b pairs with the k-th recv at b from a (NCCL and
//! gloo deliver in order per pair). Ring buffers that wrapped drop different numbers of old ops
//! on the two sides, so ops that completed are paired among themselves and ops still in flight
//! among themselves: a send in flight with no recv in flight at its peer is a send nobody
//! receives.

use super::{CellState, Group, RankDump};
use crate::ingest::flight_recorder::EntryState;
use serde::Serialize;

/// One side of a point-to-point pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P2pSide {
    pub rank: i64,
    /// Index into the rank's entries.
    pub entry: usize,
    pub state: CellState,
    pub inferred: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum P2pStatus {
    Completed,
    /// Both sides posted, not finished.
    Pending,
    /// One side waits; its peer posted nothing to match it.
    Unmatched,
    /// The peer's dump is missing.
    Unknown,
}

/// A send and the recv that matches it (either may be missing).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P2pPair {
    /// Global ranks.
    pub src: i64,
    pub dst: i64,
    pub send: Option<P2pSide>,
    pub recv: Option<P2pSide>,
    pub status: P2pStatus,
}

fn side(rd: &RankDump, k: usize) -> P2pSide {
    let e = &rd.dump.entries[k];
    let (state, inferred) = match e.state {
        EntryState::Completed => (CellState::Completed, false),
        _ if e.retired => (CellState::Completed, true),
        EntryState::Started => (CellState::Started, false),
        EntryState::Scheduled => (CellState::Scheduled, false),
    };
    P2pSide {
        rank: rd.rank,
        entry: k,
        state,
        inferred,
    }
}

/// The group's point-to-point ops, paired.
pub(super) fn pairs(dumps: &[RankDump], g: &Group) -> Vec<P2pPair> {
    let mut members = g.members.clone();
    crate::sort::by_key(&mut members, |&m| m);
    let global = |local: i64| -> Option<i64> { members.get(usize::try_from(local).ok()?).copied() };
    // ((src, dst), is a send, side), in record order per rank.
    let mut ops: Vec<((i64, i64), bool, P2pSide)> = Vec::new();
    for rd in dumps {
        let d = rd.dump;
        for (k, e) in d.entries.iter().enumerate() {
            if !e.is_p2p || d.str(e.pg_name) != g.name {
                continue;
            }
            let Some((src, dst)) = e.peer else {
                continue;
            };
            let (Some(src), Some(dst)) = (src.and_then(global), global(dst)) else {
                continue;
            };
            match d.str(e.op) {
                "send" => ops.push(((src, dst), true, side(rd, k))),
                "recv" => ops.push(((src, dst), false, side(rd, k))),
                _ => {}
            }
        }
    }
    // Stable: each pair's sends and recvs stay in record order.
    crate::sort::by(&mut ops, |a, b| a.0.cmp(&b.0));
    let has_dump = |r: i64| dumps.iter().any(|d| d.rank == r);
    let mut out = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        let (src, dst) = ops[i].0;
        let j = i + ops[i..].iter().take_while(|o| o.0 == (src, dst)).count();
        let of = |send: bool| -> Vec<P2pSide> {
            ops[i..j]
                .iter()
                .filter(|o| o.1 == send)
                .map(|o| o.2.clone())
                .collect()
        };
        let (s, r) = (of(true), of(false));
        i = j;
        for done in [true, false] {
            let pick = |v: &[P2pSide]| -> Vec<P2pSide> {
                v.iter()
                    .filter(|x| (x.state == CellState::Completed) == done)
                    .cloned()
                    .collect()
            };
            let (ss, rr) = (pick(&s), pick(&r));
            for i in 0..ss.len().max(rr.len()) {
                let (send, recv) = (ss.get(i).cloned(), rr.get(i).cloned());
                let status = match (&send, &recv) {
                    _ if done => P2pStatus::Completed,
                    (Some(_), Some(_)) => P2pStatus::Pending,
                    (Some(_), None) if !has_dump(dst) => P2pStatus::Unknown,
                    (None, Some(_)) if !has_dump(src) => P2pStatus::Unknown,
                    _ => P2pStatus::Unmatched,
                };
                // Completed ops whose partner was lost to a wrapped buffer are not news.
                if done && (send.is_none() || recv.is_none()) {
                    continue;
                }
                out.push(P2pPair {
                    src,
                    dst,
                    send,
                    recv,
                    status,
                });
            }
        }
    }
    out
}
