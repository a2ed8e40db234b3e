//! NCCL-format Flight Recorder dumps built by hand from the fields torch writes (torch
//! `csrc/distributed/c10d/FlightRecorder*.cpp`; the keys torch's `flight_recorder/components`
//! reads): states started / completed as the NCCL watchdog discovers them, a whole `pg_config`,
//! `pg_status` counting collectives only, older dumps without `pg_status` or thread fields,
//! `nccl_version` instead of `comm_lib_version`, format 1's `seq_id`, wrapped ring buffers of
//! different lengths, a missing rank's file, send/recv, coalesced groups and the JSON form. Each
//! answer is known by construction.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use tracelight_core::analysis::flight_recorder::{
    analyze, CellState, FrReport, HangKind, RankDump,
};
use tracelight_core::ingest::flight_recorder::FrDump;
use tracelight_core::ingest::{load_bytes, Loaded};

/// A Python value, written as a protocol-2 pickle the way torch's `Pickler` writes dumps.
#[derive(Clone, Debug)]
enum Py {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    Dict(Vec<(String, Py)>),
}

fn s(x: &str) -> Py {
    Py::Str(x.to_owned())
}

impl Py {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Py::None => out.push(b'N'),
            Py::Bool(true) => out.push(0x88),
            Py::Bool(false) => out.push(0x89),
            Py::Int(i) => {
                if let Ok(v) = i32::try_from(*i) {
                    out.push(b'J');
                    out.extend_from_slice(&v.to_le_bytes());
                } else {
                    out.push(0x8a);
                    out.push(8);
                    out.extend_from_slice(&i.to_le_bytes());
                }
            }
            Py::Float(f) => {
                out.push(b'G');
                out.extend_from_slice(&f.to_be_bytes());
            }
            Py::Str(t) => {
                out.push(b'X');
                out.extend_from_slice(&(t.len() as u32).to_le_bytes());
                out.extend_from_slice(t.as_bytes());
            }
            Py::List(v) => {
                out.extend_from_slice(b"](");
                for x in v {
                    x.write(out);
                }
                out.push(b'e');
            }
            Py::Tuple(v) => {
                out.push(b'(');
                for x in v {
                    x.write(out);
                }
                out.push(b't');
            }
            Py::Dict(kv) => {
                out.extend_from_slice(b"}(");
                for (k, v) in kv {
                    s(k).write(out);
                    v.write(out);
                }
                out.push(b'u');
            }
        }
    }

    fn pickle(&self) -> Vec<u8> {
        let mut out = vec![0x80, 2];
        self.write(&mut out);
        out.push(b'.');
        out
    }

    fn json(&self) -> String {
        match self {
            Py::None => "null".into(),
            Py::Bool(b) => b.to_string(),
            Py::Int(i) => i.to_string(),
            Py::Float(f) => f.to_string(),
            Py::Str(t) => serde_json::to_string(t).unwrap(),
            Py::List(v) | Py::Tuple(v) => {
                format!("[{}]", v.iter().map(Py::json).collect::<Vec<_>>().join(","))
            }
            Py::Dict(kv) => format!(
                "{{{}}}",
                kv.iter()
                    .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), v.json()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }
}

/// One recorded op, with the fields of a torch 2.10-format NCCL entry.
#[derive(Clone)]
struct E {
    record: i64,
    pg: &'static str,
    desc: &'static str,
    seq: i64,
    p2p_seq: i64,
    name: String,
    state: &'static str,
    numel: i64,
    dtype: &'static str,
}

const T0: i64 = 1_700_000_000_000_000_000;

impl E {
    fn new(record: i64, pg: &'static str, seq: i64, name: &str, state: &'static str) -> E {
        E {
            record,
            pg,
            desc: if pg == "0" { "default_pg" } else { "undefined" },
            seq,
            p2p_seq: 0,
            name: name.to_owned(),
            state,
            numel: 1024,
            dtype: "Float",
        }
    }

    fn py(&self, full: bool) -> Py {
        let created = T0 + self.record * 1_000_000;
        let started = matches!(self.state, "started" | "completed");
        let done = self.state == "completed";
        let sizes = Py::List(vec![Py::List(vec![Py::Int(self.numel)])]);
        let mut kv = vec![
            ("record_id".to_owned(), Py::Int(self.record)),
            ("pg_id".to_owned(), Py::Int(self.pg.parse().unwrap_or(9))),
            (
                "process_group".to_owned(),
                Py::Tuple(vec![s(self.pg), s(self.desc)]),
            ),
            ("collective_seq_id".to_owned(), Py::Int(self.seq)),
            ("p2p_seq_id".to_owned(), Py::Int(self.p2p_seq)),
            ("op_id".to_owned(), Py::Int(self.record + 1)),
            ("profiling_name".to_owned(), s(&self.name)),
            ("time_created_ns".to_owned(), Py::Int(created)),
            ("input_sizes".to_owned(), sizes.clone()),
            ("output_sizes".to_owned(), sizes),
            ("state".to_owned(), s(self.state)),
            (
                "time_discovered_started_ns".to_owned(),
                if started {
                    Py::Int(created + 1000)
                } else {
                    Py::None
                },
            ),
            (
                "time_discovered_completed_ns".to_owned(),
                if done {
                    Py::Int(created + 50_000)
                } else {
                    Py::None
                },
            ),
            ("retired".to_owned(), Py::Bool(done)),
            ("timeout_ms".to_owned(), Py::Int(600_000)),
            (
                "is_p2p".to_owned(),
                Py::Bool(self.name.contains("send") || self.name.contains("recv")),
            ),
            (
                "frames".to_owned(),
                Py::List(vec![Py::Dict(vec![
                    ("name".into(), s("train_step")),
                    ("filename".into(), s("train.py")),
                    ("line".into(), Py::Int(40 + self.seq)),
                ])]),
            ),
        ];
        if full {
            let d = Py::List(vec![s(self.dtype)]);
            kv.push(("input_dtypes".into(), d.clone()));
            kv.push(("output_dtypes".into(), d));
            kv.push(("thread_id".into(), s("140000")));
            kv.push(("thread_name".into(), s("pt_main_thread")));
            if done {
                kv.push(("duration_ms".into(), Py::Float(0.05)));
            }
        }
        Py::Dict(kv)
    }
}

fn config(groups: &[(&str, &str, &[i64])]) -> Py {
    Py::Dict(
        groups
            .iter()
            .map(|(n, d, r)| {
                let ranks: Vec<String> = r.iter().map(i64::to_string).collect();
                (
                    n.to_string(),
                    Py::Dict(vec![
                        ("name".into(), s(n)),
                        ("desc".into(), s(d)),
                        ("ranks".into(), s(&format!("[{}]", ranks.join(", ")))),
                    ]),
                )
            })
            .collect(),
    )
}

/// A whole dump: `version`, `pg_config`, `pg_status` (from the entries, as NCCL counts),
/// the library version under the key of the version's era, and the entries.
fn dump(version: &str, cfg: &Py, entries: &[E], status: bool) -> Py {
    let full = version != "2.2";
    let mut kv = vec![
        ("version".to_owned(), s(version)),
        ("pg_config".to_owned(), cfg.clone()),
    ];
    kv.push(if version == "2.4" || !full {
        ("nccl_version".into(), s("2.18.1"))
    } else {
        ("comm_lib_version".into(), s("2.21.5"))
    });
    if status {
        let mut pgs: Vec<&str> = entries.iter().map(|e| e.pg).collect();
        pgs.dedup();
        kv.push((
            "pg_status".into(),
            Py::Dict(
                pgs.iter()
                    .map(|pg| {
                        let mine = entries
                            .iter()
                            .filter(|e| e.pg == *pg && !e.name.contains(' '));
                        let last = |f: &dyn Fn(&E) -> bool| {
                            mine.clone()
                                .filter(|e| f(e))
                                .map(|e| e.seq)
                                .max()
                                .unwrap_or(-1)
                        };
                        (
                            pg.to_string(),
                            Py::Dict(vec![
                                ("last_enqueued_collective".into(), Py::Int(last(&|_| true))),
                                (
                                    "last_started_collective".into(),
                                    Py::Int(last(&|e| e.state != "scheduled")),
                                ),
                                (
                                    "last_completed_collective".into(),
                                    Py::Int(last(&|e| e.state == "completed")),
                                ),
                            ]),
                        )
                    })
                    .collect(),
            ),
        ));
    }
    kv.push((
        "entries".into(),
        Py::List(entries.iter().map(|e| e.py(full)).collect()),
    ));
    Py::Dict(kv)
}

fn load(name: &str, bytes: &[u8]) -> FrDump {
    match load_bytes(name, bytes) {
        Ok(Loaded::FlightRecorder(d)) => *d,
        Ok(other) => panic!("{name}: loaded as {:?}", other.format()),
        Err(e) => panic!("{name}: {e}"),
    }
}

fn report(dumps: &[(i64, FrDump)]) -> FrReport {
    let names: Vec<String> = dumps
        .iter()
        .map(|(r, _)| format!("nccl_trace_rank_{r}"))
        .collect();
    let rd: Vec<RankDump> = dumps
        .iter()
        .zip(&names)
        .map(|((r, d), n)| RankDump {
            rank: *r,
            path: n,
            dump: d,
        })
        .collect();
    analyze(&rd)
}

/// `n` completed all_reduces of group `pg` from record `from`, sequence ids `seq0..`.
fn done(from: i64, pg: &'static str, seq0: i64, n: i64) -> Vec<E> {
    (0..n)
        .map(|k| E::new(from + k, pg, seq0 + k, "nccl:all_reduce", "completed"))
        .collect()
}

/// Eight ranks of one NCCL job: 19 all_reduces completed; the 20th was started by every rank
/// but rank 5, whose GPU never reached it (still scheduled). Every rank issued it, so nobody is
/// missing: rank 5 did not get as far as the others.
#[test]
fn every_rank_issued_it_and_one_never_started_it() {
    let cfg = config(&[("0", "default_pg", &[0, 1, 2, 3, 4, 5, 6, 7])]);
    let dumps: Vec<(i64, FrDump)> = (0..8)
        .map(|r| {
            let mut e = done(0, "0", 1, 19);
            let st = if r == 5 { "scheduled" } else { "started" };
            e.push(E::new(19, "0", 20, "nccl:all_reduce", st));
            let p = dump("2.10", &cfg, &e, true).pickle();
            (r, load(&format!("nccl_trace_rank_{r}"), &p))
        })
        .collect();
    let d0 = &dumps[0].1;
    assert_eq!(d0.version, "2.10");
    assert_eq!(d0.comm_lib_version, "2.21.5");
    assert_eq!(d0.entries.len(), 20);
    assert_eq!(d0.entries[0].time_completed_ns, Some(T0 + 50_000));
    assert_eq!(d0.entries[0].duration_ms, Some(0.05));
    assert_eq!(d0.str(d0.entries[0].thread_name), "pt_main_thread");
    let r = report(&dumps);
    let h = r.hang.as_ref().expect("a hang");
    assert_eq!(h.kind, HangKind::NotCompleted);
    assert_eq!(
        (h.pg.as_str(), h.seq, h.op.as_str()),
        ("0", 20, "all_reduce")
    );
    assert_eq!(h.culprits, vec![5]);
    assert_eq!(h.waiting, (0..8).collect::<Vec<_>>());
    assert!(h.missing.is_empty());
    // NCCL dumps say their states themselves: nothing inferred about completion.
    let g = r.group("0").unwrap();
    assert!(g.columns.iter().flat_map(|c| &c.cells).all(|c| !c.inferred));
    assert_eq!(
        g.membership,
        tracelight_core::analysis::flight_recorder::Membership::PgConfig
    );
    let c20 = g.columns.last().unwrap();
    assert_eq!(c20.cells[5].state, CellState::Scheduled);
    assert_eq!(c20.cells[4].state, CellState::Started);
    assert!(r.inferred.is_empty(), "{:?}", r.inferred);
    // The culprit's stack beside the others'.
    assert_eq!(r.stacks[0].role, "lagging at the hang");
    assert_eq!(r.stacks[0].ranks, vec![5]);
    assert_eq!(
        r.stacks[0].frames[0],
        ("train_step".into(), "train.py".into(), 60)
    );
}

/// Four ranks, rank 2's file missing; `pg_config` names all four. Ranks 0, 1 and 3 started
/// collective 10: rank 2 is the one that cannot be accounted for.
#[test]
fn a_missing_dump_file_is_named_from_pg_config() {
    let cfg = config(&[("0", "default_pg", &[0, 1, 2, 3])]);
    let dumps: Vec<(i64, FrDump)> = [0, 1, 3]
        .into_iter()
        .map(|r| {
            let mut e = done(0, "0", 1, 9);
            e.push(E::new(9, "0", 10, "nccl:all_reduce", "started"));
            (r, load("d", &dump("2.10", &cfg, &e, true).pickle()))
        })
        .collect();
    let r = report(&dumps);
    assert_eq!(r.world, vec![0, 1, 2, 3]);
    assert_eq!(r.missing_dumps, vec![2]);
    let h = r.hang.as_ref().unwrap();
    assert_eq!(h.kind, HangKind::Unknown);
    assert_eq!(
        (h.seq, h.culprits.clone(), h.unknown.clone()),
        (10, vec![2], vec![2])
    );
    assert_eq!(h.waiting, vec![0, 1, 3]);
    assert!(r
        .inferred
        .iter()
        .any(|i| i.contains("No dump for rank(s) 2")));
}

/// Ring buffers of different lengths and no `pg_status` (older dumps): rank 0 kept sequence
/// ids 5–12, rank 1 only 8–12, rank 2 3–11 (it never issued 12). Before 8 not every rank's
/// record is whole: the window starts at 8, the cells before are lost, and the hang is 12.
#[test]
fn wrapped_buffers_without_pg_status_start_the_window_where_every_rank_is_whole() {
    let cfg = config(&[("0", "default_pg", &[0, 1, 2])]);
    let keep = |from_seq: i64, to_seq: i64, hung: bool| {
        let mut e: Vec<E> = (from_seq..=to_seq)
            .map(|q| E::new(q - 1, "0", q, "nccl:all_reduce", "completed"))
            .collect();
        if hung {
            e.last_mut().unwrap().state = "started";
        }
        dump("2.2", &cfg, &e, false).pickle()
    };
    let dumps = vec![
        (0, load("a", &keep(5, 12, true))),
        (1, load("b", &keep(8, 12, true))),
        (2, load("c", &keep(3, 11, false))),
    ];
    assert_eq!(dumps[0].1.comm_lib_version, "2.18.1");
    assert!(dumps[0].1.pg_status.is_empty());
    let r = report(&dumps);
    let g = r.group("0").unwrap();
    assert_eq!(g.columns.first().unwrap().seq, 3);
    assert_eq!(g.window_start, Some(8));
    let c5 = g.columns.iter().find(|c| c.seq == 5).unwrap();
    assert_eq!(c5.cells[1].state, CellState::Lost);
    let h = r.hang.as_ref().unwrap();
    assert_eq!(
        (h.kind, h.seq, h.missing.clone()),
        (HangKind::MissingRanks, 12, vec![2])
    );
    assert!(r.ranks.iter().all(|x| x.wrapped));
    // No pg_status: each rank's last sequence ids come from its entries.
    let s2 = &r.ranks[2].status[0];
    assert_eq!(
        (s2.last_enqueued, s2.last_completed, s2.source),
        (Some(11), Some(11), "entries")
    );
    let s0 = &r.ranks[0].status[0];
    assert_eq!(
        (s0.last_enqueued, s0.last_started, s0.last_completed),
        (Some(12), Some(12), Some(11))
    );
}

/// Pipeline stages 4 → 5 in group 1 (`pp`, ranks [4, 5]): sends name group-local ranks
/// (`nccl:send 0->1`). Two sends and recvs completed; rank 4's third send waits and rank 5
/// never posted the recv.
#[test]
fn a_send_nobody_receives_is_the_hang_in_global_ranks() {
    let cfg = config(&[("0", "default_pg", &[4, 5]), ("1", "pp", &[4, 5])]);
    let p2p = |rec: i64, k: i64, name: &str, state: &'static str| {
        let mut e = E::new(rec, "1", 3, name, state);
        e.desc = "pp";
        e.p2p_seq = k;
        e
    };
    let mut a = done(0, "0", 1, 3);
    a.extend([
        p2p(3, 1, "nccl:send 0->1", "completed"),
        p2p(4, 2, "nccl:send 0->1", "completed"),
        p2p(5, 3, "nccl:send 0->1", "started"),
    ]);
    let mut b = done(0, "0", 1, 3);
    b.extend([
        p2p(3, 1, "nccl:recv 1<-0", "completed"),
        p2p(4, 2, "nccl:recv 1<-0", "completed"),
    ]);
    let dumps = vec![
        (4, load("a", &dump("2.10", &cfg, &a, true).pickle())),
        (5, load("b", &dump("2.10", &cfg, &b, true).pickle())),
    ];
    assert_eq!(dumps[0].1.entries[5].peer, Some((Some(0), 1)));
    assert!(dumps[0].1.entries[5].is_p2p);
    let r = report(&dumps);
    let g = r.group("1").unwrap();
    assert_eq!(g.desc, "pp");
    assert_eq!(g.p2p.len(), 3);
    let h = r.hang.as_ref().expect("the unmatched send");
    assert_eq!(h.kind, HangKind::UnmatchedP2p);
    assert_eq!((h.p2p, h.op.as_str(), h.seq), (Some((4, 5)), "send", 3));
    assert_eq!((h.waiting.clone(), h.culprits.clone()), (vec![4], vec![5]));
    assert!(r.also.is_empty());
}

/// A coalesced group: two all_reduces and the `coalesced` marker share one sequence id. Rank 1
/// coalesced only one all_reduce: the ranks disagree on the op list.
#[test]
fn coalesced_groups_compare_their_op_lists() {
    let cfg = config(&[("0", "default_pg", &[0, 1])]);
    let group = |n: usize| {
        let mut e = done(0, "0", 1, 2);
        for k in 0..n {
            e.push(E::new(2 + k as i64, "0", 3, "nccl:all_reduce", "started"));
        }
        e.push(E::new(2 + n as i64, "0", 3, "nccl:coalesced", "started"));
        dump("2.10", &cfg, &e, true).pickle()
    };
    let dumps = vec![(0, load("a", &group(2))), (1, load("b", &group(1)))];
    let r = report(&dumps);
    let h = r.hang.as_ref().unwrap();
    assert_eq!(h.kind, HangKind::Mismatch);
    assert_eq!(h.seq, 3);
    // Two ranks disagree: the lower rank's list is the reference.
    assert_eq!(h.mismatches.len(), 1);
    let m = &h.mismatches[0];
    assert_eq!((m.rank, m.field), (1, "op"));
    assert_eq!(m.expected, "all_reduce+all_reduce+coalesced");
    assert_eq!(m.found, "all_reduce+coalesced");
}

/// The JSON form of the first scenario: times not yet discovered are 0, no frames; the same
/// verdict. A format-1 dump's `seq_id` reads as `collective_seq_id`.
#[test]
fn json_dumps_and_format_1_seq_ids_give_the_same_verdict() {
    let cfg = config(&[("0", "default_pg", &[0, 1])]);
    let dumps: Vec<(i64, FrDump)> = (0..2)
        .map(|r| {
            let mut e = done(0, "0", 1, 4);
            e.push(E::new(
                4,
                "0",
                5,
                "nccl:all_reduce",
                if r == 1 { "scheduled" } else { "started" },
            ));
            let text = dump("2.10", &cfg, &e, true)
                .json()
                .replace(
                    "\"time_discovered_started_ns\":null",
                    "\"time_discovered_started_ns\":0",
                )
                .replace(
                    "\"time_discovered_completed_ns\":null",
                    "\"time_discovered_completed_ns\":0",
                );
            (r, load("rank.json", text.as_bytes()))
        })
        .collect();
    assert_eq!(
        dumps[1].1.entries[4].time_started_ns, None,
        "0 means not discovered"
    );
    let r = report(&dumps);
    let h = r.hang.as_ref().unwrap();
    assert_eq!(
        (h.kind, h.seq, h.culprits.clone()),
        (HangKind::NotCompleted, 5, vec![1])
    );

    let v1 = |r: i64| {
        let mut e = done(0, "0", 1, 3);
        if r == 0 {
            e.push(E::new(3, "0", 4, "nccl:broadcast", "started"));
        }
        let text = dump("2.10", &cfg, &e, false)
            .json()
            .replace("collective_seq_id", "seq_id");
        load("x.json", text.as_bytes())
    };
    let r = report(&[(0, v1(0)), (1, v1(1))]);
    let h = r.hang.as_ref().unwrap();
    assert_eq!(
        (h.kind, h.seq, h.op.as_str(), h.missing.clone()),
        (HangKind::MissingRanks, 4, "broadcast", vec![1])
    );
}

/// Not a dump, or a broken one: a clear error naming the file, never a panic; and the pickle
/// reader never runs code.
#[test]
fn broken_dumps_are_refused_naming_the_file() {
    // A pickle that would import a function: refused.
    let mut evil = vec![0x80, 2];
    evil.extend_from_slice(b"}(X\x09\x00\x00\x00pg_configcos\nsystem\nu.");
    let e = load_bytes("nccl_trace_rank_0", &evil).unwrap_err();
    assert_eq!(e.file.as_deref(), Some("nccl_trace_rank_0"));
    assert!(e.to_string().contains("refused"), "{e}");
    // JSON whose entries are not a list.
    let e = load_bytes("rank_1.json", br#"{"pg_config":{},"entries":7}"#).unwrap_err();
    assert!(e.to_string().contains("Flight Recorder JSON"), "{e}");
    assert_eq!(e.file.as_deref(), Some("rank_1.json"));
    // Cut in the middle.
    let cfg = config(&[("0", "default_pg", &[0, 1])]);
    let whole = dump("2.10", &cfg, &done(0, "0", 1, 3), true).pickle();
    let e = load_bytes("rank_2", &whole[..whole.len() / 2]).unwrap_err();
    assert_eq!(e.file.as_deref(), Some("rank_2"));
    // A dump with no entries (the recorder was off): loaded, and said so.
    let empty = dump("2.10", &cfg, &[], true).pickle();
    let r = report(&[(0, load("e", &empty)), (1, load("f", &empty))]);
    assert!(r.hang.is_none());
    assert!(
        tracelight_core::report::flight_recorder::headline(&r, &|x| format!("{x}"))
            .contains("hold no entries")
    );
}
