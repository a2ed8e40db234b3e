//! Collective matching across ranks (docs/definitions.md).
//!
//! Each rank's collectives are its NCCL kernels (HTA's `^nccl…Kernel` rule), else, in CPU-only
//! runs, its `gloo:*` / `nccl:*` annotations. Their collective args (`Collective name`, `In msg
//! nelems`, `Out msg nelems`, `dtype`, `Group size`, `Process Group Name`, `Seq`) come from the
//! kernel, else from the op that launched it (`record_param_comms`); old traces have none.
//!
//! The same collective on every rank of its group is keyed by (`Process Group Name`, `Seq`) where
//! the args hold both, else by its order within (process group, rank), TraceLens's rule; with no
//! process group at all, the group is the collective's name (the k-th all_reduce of each rank).
//! Name, element count, dtype and group size are checked to agree and every disagreement is
//! reported. Per collective: latency = the shortest rank's duration; arrival skew = latest start −
//! earliest start; a rank's wait = latest start − its start; algbw = bytes ÷ latency; busbw =
//! algbw × NCCL's factor (nccl-tests `PERFORMANCE.md`: all_reduce 2(n−1)/n; all_gather,
//! reduce_scatter and all_to_all (n−1)/n; broadcast, reduce, send/recv 1). Bytes are `In msg
//! nelems` × the dtype's size, `Out msg nelems` for all_gather (nccl-tests count the gathered
//! buffer). Starts are compared after each rank's clock offset is removed (see
//! [`crate::report::run`]: steps, else matched collectives): clocks of different hosts differ.

pub use super::comm_calls::{calls, dtype_size, normalise, Call};
use crate::model::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// NCCL's bus-bandwidth factor for `n` ranks (see the module doc).
pub fn busbw_factor(name: &str, n: u32) -> Option<f64> {
    let n = n.max(1) as f64;
    Some(match name {
        "allreduce" => 2.0 * (n - 1.0) / n,
        "allgather" | "reducescatter" | "alltoall" | "alltoallv" | "alltoallbase" => (n - 1.0) / n,
        "broadcast" | "reduce" | "send" | "recv" | "sendrecv" => 1.0,
        _ => return None,
    })
}

/// One rank's calls and its clock offset (its time minus the reference rank's).
#[derive(Debug, Clone, Copy)]
pub struct RankCalls<'a> {
    pub rank: i64,
    pub calls: &'a [Call],
    pub offset_ns: Ns,
}

/// One rank's part of a matched collective, on the aligned clock.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    pub rank: i64,
    pub start_ns: Ns,
    pub end_ns: Ns,
    pub wait_ns: Ns,
    /// Index into that rank's [`calls`].
    pub call: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Collective {
    pub name: String,
    pub pg: Option<String>,
    /// `Seq` when the args hold it, else the order within (group, rank), from 0.
    pub seq: i64,
    pub seq_from_args: bool,
    pub bytes: Option<u64>,
    pub dtype: Option<String>,
    /// `Group size` from the args, else the number of ranks matched.
    pub group_size: u32,
    pub parts: Vec<Part>,
    pub latency_ns: Ns,
    pub skew_ns: Ns,
    pub earliest_rank: i64,
    pub latest_rank: i64,
    pub algbw_gbs: Option<f64>,
    pub busbw_gbs: Option<f64>,
    /// Where the ranks disagree (`In msg nelems: rank 0 = 4096, rank 3 = 2048`).
    pub mismatches: Vec<String>,
}

/// Per-rank totals over the matched collectives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankWait {
    pub rank: i64,
    pub collectives: u32,
    pub wait_ns: Ns,
    pub arrived_last: u32,
    pub arrived_last_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Seq(i64),
    Order(i64),
}

/// Groups the ranks' calls into collectives by key (no timing yet): (group, key) → (rank index,
/// call index) per rank.
pub fn group_calls(ranks: &[RankCalls]) -> Vec<Vec<(usize, usize)>> {
    let mut groups: BTreeMap<(String, Key), Vec<(usize, usize)>> = BTreeMap::new();
    for (r, rc) in ranks.iter().enumerate() {
        let mut order: BTreeMap<String, i64> = BTreeMap::new();
        for (k, c) in rc.calls.iter().enumerate() {
            let group = match &c.pg {
                Some(pg) => format!("pg:{pg}"),
                None => format!("name:{}", c.name),
            };
            let key = match (c.seq, &c.pg) {
                (Some(s), Some(_)) => Key::Seq(s),
                _ => {
                    let n = order.entry(group.clone()).or_insert(0);
                    *n += 1;
                    Key::Order(*n - 1)
                }
            };
            groups.entry((group, key)).or_default().push((r, k));
        }
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

fn check<T: PartialEq + std::fmt::Debug>(
    what: &str,
    vals: &[(i64, Option<T>)],
    out: &mut Vec<String>,
) {
    let Some((r0, v0)) = vals.first() else {
        return;
    };
    if let Some((r, v)) = vals.iter().find(|(_, v)| v != v0) {
        let show = |v: &Option<T>| match v {
            Some(v) => format!("{v:?}").trim_matches('"').to_owned(),
            None => "absent".to_owned(),
        };
        out.push(format!(
            "{what}: rank {r0} = {}, rank {r} = {}",
            show(v0),
            show(v)
        ));
    }
}

/// Matches collectives across ranks and measures them on the aligned clock. Output sorted by the
/// earliest aligned start.
pub fn match_collectives(ranks: &[RankCalls]) -> (Vec<Collective>, Vec<RankWait>) {
    let mut out = Vec::new();
    for g in group_calls(ranks) {
        let call = |&(r, k): &(usize, usize)| (ranks[r].rank, &ranks[r].calls[k]);
        let first = call(&g[0]).1;
        let mut parts: Vec<Part> = g
            .iter()
            .map(|&(r, k)| {
                let c = &ranks[r].calls[k];
                Part {
                    rank: ranks[r].rank,
                    start_ns: c.start_ns - ranks[r].offset_ns,
                    end_ns: c.end_ns - ranks[r].offset_ns,
                    wait_ns: 0,
                    call: k,
                }
            })
            .collect();
        crate::sort::by_key(&mut parts, |p| p.rank);
        let latest = parts.iter().map(|p| p.start_ns).max().unwrap_or(0);
        let earliest = parts.iter().map(|p| p.start_ns).min().unwrap_or(0);
        for p in &mut parts {
            p.wait_ns = latest - p.start_ns;
        }
        let latency = parts
            .iter()
            .map(|p| p.end_ns - p.start_ns)
            .min()
            .unwrap_or(0);
        let mut mismatches = Vec::new();
        let vals = |f: &dyn Fn(&Call) -> Option<String>| -> Vec<(i64, Option<String>)> {
            g.iter()
                .map(call)
                .map(|(r, c)| (r, f(c)))
                .collect::<Vec<_>>()
        };
        check(
            "Collective name",
            &vals(&|c| Some(c.name.clone())),
            &mut mismatches,
        );
        check(
            "In msg nelems",
            &vals(&|c| c.in_nelems.map(|v| v.to_string())),
            &mut mismatches,
        );
        check("dtype", &vals(&|c| c.dtype.clone()), &mut mismatches);
        check(
            "Group size",
            &vals(&|c| c.group_size.map(|v| v.to_string())),
            &mut mismatches,
        );
        let n = first.group_size.unwrap_or(parts.len() as u32);
        let elem = first.dtype.as_deref().and_then(dtype_size);
        let nelems = if first.name == "allgather" {
            first.out_nelems
        } else {
            first.in_nelems
        };
        let bytes = nelems.zip(elem).map(|(n, e)| n * e);
        let algbw = bytes
            .filter(|_| latency > 0)
            .map(|b| b as f64 / latency as f64); // bytes per ns = GB/s
        let seq_from_args = first.seq.is_some() && first.pg.is_some();
        let seq = if seq_from_args {
            first.seq.unwrap_or(0)
        } else {
            let (r, k) = g[0];
            let group_of = |c: &Call| (c.pg.clone(), c.name.clone());
            let mine = group_of(first);
            ranks[r].calls[..k]
                .iter()
                .filter(|c| {
                    if first.pg.is_some() {
                        c.pg == first.pg && c.seq.is_none()
                    } else {
                        group_of(c) == mine
                    }
                })
                .count() as i64
        };
        let by_start = |later: bool| {
            let mut best = &parts[0];
            for p in &parts[1..] {
                if (later && p.start_ns > best.start_ns) || (!later && p.start_ns < best.start_ns) {
                    best = p;
                }
            }
            best.rank
        };
        out.push(Collective {
            name: first.name.clone(),
            pg: first.pg.clone(),
            seq,
            seq_from_args,
            bytes,
            dtype: first.dtype.clone(),
            group_size: n,
            earliest_rank: by_start(false),
            latest_rank: by_start(true),
            latency_ns: latency,
            skew_ns: latest - earliest,
            algbw_gbs: algbw,
            busbw_gbs: algbw.zip(busbw_factor(&first.name, n)).map(|(a, f)| a * f),
            parts,
            mismatches,
        });
    }
    crate::sort::by_key(&mut out, |c| {
        (
            c.parts.iter().map(|p| p.start_ns).min().unwrap_or(0),
            c.pg.clone(),
            c.seq,
        )
    });
    let waits = ranks
        .iter()
        .map(|rc| {
            let mine = out.iter().filter_map(|c| {
                c.parts
                    .iter()
                    .find(|p| p.rank == rc.rank)
                    .map(|p| (p, c.latest_rank == rc.rank))
            });
            let (mut n, mut wait, mut last) = (0u32, 0, 0u32);
            for (p, l) in mine {
                n += 1;
                wait += p.wait_ns;
                last += u32::from(l);
            }
            RankWait {
                rank: rc.rank,
                collectives: n,
                wait_ns: wait,
                arrived_last: last,
                arrived_last_pct: if n == 0 {
                    0.0
                } else {
                    100.0 * last as f64 / n as f64
                },
            }
        })
        .collect();
    (out, waits)
}

/// Clock offsets that make the matched collectives end together: per rank, the median of (its
/// end − the reference rank's end) over the collectives both take part in. A collective ends on
/// every rank once the last one arrives, so its end is the one moment the ranks share.
pub fn offsets_from_collectives(ranks: &[RankCalls]) -> Vec<Ns> {
    let groups = group_calls(ranks);
    (0..ranks.len())
        .map(|r| {
            let mut d: Vec<Ns> = groups
                .iter()
                .filter_map(|g| {
                    let reference = g.iter().find(|x| x.0 == 0)?;
                    let mine = g.iter().find(|x| x.0 == r)?;
                    Some(ranks[r].calls[mine.1].end_ns - ranks[0].calls[reference.1].end_ns)
                })
                .collect();
            if d.is_empty() {
                return 0;
            }
            d.sort_unstable();
            d[d.len() / 2]
        })
        .collect()
}
