//! PyTorch Flight Recorder dumps: the last N collectives one rank issued, written when a job
//! times out (`TORCH_NCCL_DUMP_ON_TIMEOUT=1`, file `<prefix><rank>`, e.g. `nccl_trace_rank_3`) or
//! on demand (`torch._C._distributed_c10d._dump_fr_trace()` → pickle bytes,
//! `_dump_fr_trace_json()` → JSON text). One file per rank; the rank is in the file name only.
//!
//! Format (torch `csrc/distributed/c10d/FlightRecorder*.cpp`; the fields torch's own analyzer
//! reads are in `torch/distributed/flight_recorder/components/{loader,builder,types}.py`): a dict
//! of `version` (`"2.10"` in torch 2.15), `pg_config` (group name → `{name, desc, ranks}`, `ranks`
//! a string such as `"[0, 1]"`), `pg_status` (pg id → `last_enqueued_collective`,
//! `last_started_collective`, `last_completed_collective`), `comm_lib_version` (older:
//! `nccl_version`) and `entries[]`: `record_id`, `pg_id`, `process_group` (`(name, desc)`),
//! `collective_seq_id`, `p2p_seq_id`, `op_id`, `profiling_name` (`nccl:all_reduce`,
//! `gloo:broadcast`, `nccl:send 1->2`, `nccl:recv 3<-0`), `is_p2p`, `input_sizes`,
//! `output_sizes`, `input_dtypes`, `output_dtypes`, `state` (`scheduled` / `started` /
//! `completed`), `retired`, `time_created_ns`, `time_discovered_started_ns`,
//! `time_discovered_completed_ns` (None, or 0 in the JSON form, until discovered),
//! `duration_ms` (when timing was on), `timeout_ms`, `thread_id`, `thread_name` and `frames[]`
//! (`name`, `filename`, `line`; absent from the JSON form and when stacks were not asked for).
//! Every field but `profiling_name` is optional here: versions before 2.x wrote `seq_id` for
//! `collective_seq_id`, older 2.x lack the dtypes, `is_p2p`, `pg_status`, the thread fields.
//!
//! What torch 2.15's gloo backend writes differs from NCCL's, and the reader keeps it as written:
//! `state` stays `scheduled` even for collectives that finished (`retired` and
//! `pg_status.last_completed_collective` say they did), the times discovered are None, send/recv
//! are not recorded at all, and `pg_config` is one entry named `''` holding the last created
//! group's ranks. The analysis ([`crate::analysis::flight_recorder`]) therefore works from the
//! entries and `pg_status`, and says which facts it inferred.
//!
//! The pickle is read by the data-only decoder ([`super::pickle`]): no code runs, whatever the
//! file holds. Sizes and dtypes are interned as their Python-style text (`[[4], [2, 2]]`,
//! `Float, Float`), so comparing them across ranks compares ids.

mod from_json;
mod from_pickle;

use super::snapshot::{Frames, StackId, Stacks};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Interner, StrId};
use crate::warnings::Warnings;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The state an entry was dumped in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    Scheduled,
    Started,
    Completed,
}

impl EntryState {
    pub fn parse(s: &str) -> Option<EntryState> {
        Some(match s {
            "scheduled" => EntryState::Scheduled,
            "started" => EntryState::Started,
            "completed" => EntryState::Completed,
            _ => return None,
        })
    }

    pub fn label(self) -> &'static str {
        match self {
            EntryState::Scheduled => "scheduled",
            EntryState::Started => "started",
            EntryState::Completed => "completed",
        }
    }
}

/// One recorded collective or point-to-point op. Strings are ids into [`FrDump::strings`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrEntry {
    pub record_id: i64,
    pub pg_id: Option<i64>,
    /// `process_group[0]`: the group's name (`"0"` is the default group).
    pub pg_name: StrId,
    /// `process_group[1]`: `default_pg`, a user's `group_desc`, or `undefined`.
    pub pg_desc: StrId,
    pub collective_seq_id: i64,
    pub p2p_seq_id: i64,
    pub op_id: Option<i64>,
    pub profiling_name: StrId,
    /// `profiling_name` after the backend: `all_reduce`, `send`, `coalesced`.
    pub op: StrId,
    /// `profiling_name` before the colon: `nccl`, `gloo`.
    pub backend: StrId,
    /// Send / recv: (source, destination) as the name writes them, group-local ranks; the source
    /// is None for a recv from any source (`3<-?`).
    pub peer: Option<(Option<i64>, i64)>,
    pub is_p2p: bool,
    pub input_sizes: StrId,
    pub output_sizes: StrId,
    pub input_dtypes: StrId,
    pub output_dtypes: StrId,
    /// Elements over all inputs / outputs (products of the sizes).
    pub input_numel: u64,
    pub output_numel: u64,
    pub state: EntryState,
    pub retired: bool,
    pub time_created_ns: i64,
    pub time_started_ns: Option<i64>,
    pub time_completed_ns: Option<i64>,
    pub duration_ms: Option<f64>,
    pub timeout_ms: Option<i64>,
    pub thread_id: StrId,
    pub thread_name: StrId,
    /// Innermost frame first, as torch records it; 0 = no stack.
    pub stack: StackId,
}

/// A `pg_config` entry as written (gloo's is wrong: see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PgConfig {
    /// The dict key.
    pub key: String,
    pub name: String,
    pub desc: String,
    /// `ranks` parsed (`"[0, 1]"`), None when it does not parse.
    pub ranks: Option<Vec<i64>>,
}

/// A `pg_status` entry: the group's last sequence ids on this rank (torch writes -1 for none;
/// read as None).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PgStatus {
    /// The dict key: the group's `pg_id` as text.
    pub key: String,
    pub last_enqueued: Option<i64>,
    pub last_started: Option<i64>,
    pub last_completed: Option<i64>,
}

/// Which form the dump came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DumpForm {
    Pickle,
    Json,
}

/// One rank's dump.
#[derive(Debug, Clone, Default)]
pub struct FrDump {
    pub version: String,
    /// `comm_lib_version` (`nccl_version` in older dumps); empty for gloo.
    pub comm_lib_version: String,
    pub form: Option<DumpForm>,
    pub pg_config: Vec<PgConfig>,
    pub pg_status: Vec<PgStatus>,
    /// In `record_id` order (torch dumps them so; sorted again in case).
    pub entries: Vec<FrEntry>,
    pub strings: Interner,
    pub frames: Frames,
    pub stacks: Stacks,
    pub warnings: Warnings,
}

impl FrDump {
    pub fn str(&self, id: StrId) -> &str {
        self.strings.resolve(id)
    }

    /// Whether any entry carries a stack.
    pub fn has_stacks(&self) -> bool {
        self.entries.iter().any(|e| e.stack != 0)
    }

    /// An entry's stack as (function, file, line), innermost first.
    pub fn stack(&self, id: StackId) -> Vec<(&str, &str, i64)> {
        self.stacks
            .get(id)
            .iter()
            .filter_map(|&f| {
                let f = f as usize;
                Some((
                    self.str(*self.frames.name.get(f)?),
                    self.str(*self.frames.filename.get(f)?),
                    *self.frames.line.get(f)?,
                ))
            })
            .collect()
    }
}

/// At most this many entries per dump (torch's default ring is 2000; 20 000 is a large one).
pub const MAX_ENTRIES: usize = 1 << 20;

/// The fields of one entry before interning; `None` = absent.
#[derive(Default)]
struct RawEntry<'a> {
    record_id: Option<i64>,
    pg_id: Option<i64>,
    pg_name: Option<&'a str>,
    pg_desc: Option<&'a str>,
    collective_seq_id: Option<i64>,
    p2p_seq_id: Option<i64>,
    op_id: Option<i64>,
    profiling_name: Option<&'a str>,
    is_p2p: Option<bool>,
    input_sizes: Option<Vec<Vec<i64>>>,
    output_sizes: Option<Vec<Vec<i64>>>,
    input_dtypes: Option<Vec<&'a str>>,
    output_dtypes: Option<Vec<&'a str>>,
    state: Option<&'a str>,
    retired: Option<bool>,
    time_created_ns: Option<i64>,
    time_started_ns: Option<i64>,
    time_completed_ns: Option<i64>,
    duration_ms: Option<f64>,
    timeout_ms: Option<i64>,
    thread_id: Option<String>,
    thread_name: Option<&'a str>,
    frames: Vec<(&'a str, &'a str, i64)>,
}

/// Interns entries into a [`FrDump`].
struct Builder {
    dump: FrDump,
    frame_ids: FxHashMap<(StrId, i64, StrId), u32>,
    stack_ids: FxHashMap<Vec<u32>, StackId>,
}

/// `[[4], [2, 2]]`, as Python prints a list of sizes.
fn sizes_text(sizes: &[Vec<i64>]) -> String {
    let inner: Vec<String> = sizes
        .iter()
        .map(|s| {
            let d: Vec<String> = s.iter().map(i64::to_string).collect();
            format!("[{}]", d.join(", "))
        })
        .collect();
    format!("[{}]", inner.join(", "))
}

fn numel(sizes: &[Vec<i64>]) -> u64 {
    sizes
        .iter()
        .map(|s| {
            s.iter()
                .map(|&d| u64::try_from(d).unwrap_or(0))
                .fold(1u64, u64::saturating_mul)
        })
        .fold(0u64, u64::saturating_add)
}

/// `send 1->2` → (Some(1), 2); `recv 3<-0` → (Some(0), 3); `recv 3<-?` → (None, 3).
fn peer_of(op: &str, meta: &str) -> Option<(Option<i64>, i64)> {
    match op {
        "send" => {
            let (s, d) = meta.split_once("->")?;
            Some((Some(s.trim().parse().ok()?), d.trim().parse().ok()?))
        }
        "recv" => {
            let (d, s) = meta.split_once("<-")?;
            let s = s.trim();
            let src = if s == "?" {
                None
            } else {
                Some(s.parse().ok()?)
            };
            Some((src, d.trim().parse().ok()?))
        }
        _ => None,
    }
}

impl Builder {
    fn new(form: DumpForm) -> Builder {
        let mut dump = FrDump {
            form: Some(form),
            ..FrDump::default()
        };
        // Id 0 is the empty string, so absent fields read as "".
        dump.strings.intern("");
        Builder {
            dump,
            frame_ids: FxHashMap::default(),
            stack_ids: FxHashMap::default(),
        }
    }

    fn intern(&mut self, s: &str) -> StrId {
        self.dump.strings.intern(s)
    }

    fn stack(&mut self, frames: &[(&str, &str, i64)]) -> StackId {
        if frames.is_empty() {
            return 0;
        }
        let mut ids = Vec::with_capacity(frames.len());
        for &(name, file, line) in frames {
            let (n, f) = (self.intern(name), self.intern(file));
            let next = self.dump.frames.name.len() as u32;
            let id = *self.frame_ids.entry((f, line, n)).or_insert(next);
            if id == next {
                self.dump.frames.filename.push(f);
                self.dump.frames.line.push(line);
                self.dump.frames.name.push(n);
            }
            ids.push(id);
        }
        if let Some(&s) = self.stack_ids.get(&ids) {
            return s;
        }
        let st = &mut self.dump.stacks;
        st.frames.extend_from_slice(&ids);
        st.start.push(st.frames.len() as u32);
        let id = (st.start.len() - 2) as StackId;
        self.stack_ids.insert(ids, id);
        id
    }

    fn entry(&mut self, r: RawEntry) -> Result<()> {
        if self.dump.entries.len() >= MAX_ENTRIES {
            return Err(Error::new(
                ErrorKind::Limit(format!(
                    "more than {MAX_ENTRIES} Flight Recorder entries in one dump"
                )),
                0,
            ));
        }
        let Some(name) = r.profiling_name else {
            self.dump
                .warnings
                .add(crate::warnings::WarningKind::MalformedEvent, || {
                    format!(
                        "entry {} has no profiling_name: skipped",
                        self.dump.entries.len()
                    )
                });
            return Ok(());
        };
        // `nccl:send 1->2`: backend before the last colon, op and its meta after.
        let (backend, rest) = name.rsplit_once(':').unwrap_or(("", name));
        let (op, meta) = rest.split_once(' ').unwrap_or((rest, ""));
        let peer = peer_of(op, meta);
        let is_p2p = r
            .is_p2p
            .unwrap_or(matches!(op, "send" | "recv") || peer.is_some());
        let sizes = |b: &mut Builder, s: &Option<Vec<Vec<i64>>>| match s {
            Some(s) => (b.intern(&sizes_text(s)), numel(s)),
            None => (StrId(0), 0),
        };
        let (input_sizes, input_numel) = sizes(self, &r.input_sizes);
        let (output_sizes, output_numel) = sizes(self, &r.output_sizes);
        let dtypes = |b: &mut Builder, d: &Option<Vec<&str>>| match d {
            Some(d) => b.intern(&d.join(", ")),
            None => StrId(0),
        };
        let input_dtypes = dtypes(self, &r.input_dtypes);
        let output_dtypes = dtypes(self, &r.output_dtypes);
        let state = match r.state.map(|s| (s, EntryState::parse(s))) {
            Some((_, Some(s))) => s,
            Some((s, None)) => {
                let s = s.to_owned();
                self.dump
                    .warnings
                    .add(crate::warnings::WarningKind::Other, || {
                        format!("unknown entry state {s:?}: read as scheduled")
                    });
                EntryState::Scheduled
            }
            None => EntryState::Scheduled,
        };
        let e = FrEntry {
            record_id: r.record_id.unwrap_or(self.dump.entries.len() as i64),
            pg_id: r.pg_id,
            pg_name: self.intern(r.pg_name.unwrap_or("")),
            pg_desc: self.intern(r.pg_desc.unwrap_or("")),
            collective_seq_id: r.collective_seq_id.unwrap_or(0),
            p2p_seq_id: r.p2p_seq_id.unwrap_or(0),
            op_id: r.op_id,
            profiling_name: self.intern(name),
            op: self.intern(op),
            backend: self.intern(backend),
            peer,
            is_p2p,
            input_sizes,
            output_sizes,
            input_dtypes,
            output_dtypes,
            input_numel,
            output_numel,
            state,
            retired: r.retired.unwrap_or(false),
            time_created_ns: r.time_created_ns.unwrap_or(0),
            // The JSON form writes 0 for "not discovered".
            time_started_ns: r.time_started_ns.filter(|&t| t > 0),
            time_completed_ns: r.time_completed_ns.filter(|&t| t > 0),
            duration_ms: r.duration_ms,
            timeout_ms: r.timeout_ms,
            thread_id: {
                let t = r.thread_id.unwrap_or_default();
                self.intern(&t)
            },
            thread_name: self.intern(r.thread_name.unwrap_or("")),
            stack: self.stack(&r.frames),
        };
        self.dump.entries.push(e);
        Ok(())
    }

    fn finish(mut self) -> FrDump {
        let sorted = self
            .dump
            .entries
            .windows(2)
            .all(|w| w[0].record_id <= w[1].record_id);
        if !sorted {
            crate::sort::by_key(&mut self.dump.entries, |e| e.record_id);
        }
        self.dump
    }
}

/// `"[0, 1, 2]"` (or `"0,1,2"`) → the ranks.
pub fn parse_ranks(s: &str) -> Option<Vec<i64>> {
    let t = s.trim().trim_start_matches('[').trim_end_matches(']');
    if t.trim().is_empty() {
        return Some(Vec::new());
    }
    t.split(',').map(|x| x.trim().parse().ok()).collect()
}

/// The rank a dump's file name gives, the way torch's `fr_trace` reads it: the digits that end
/// the name (`rank_3`, `nccl_trace_rank_12`, `fr_0.json`), extensions aside.
pub fn rank_of_file(path: &str) -> Option<i64> {
    let mut name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    for ext in [".gz", ".json", ".pickle", ".pkl"] {
        name = name.strip_suffix(ext).unwrap_or(name);
    }
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    name[name.len() - digits..].parse().ok()
}

/// Decodes a whole dump, pickle or JSON (decided by its first byte).
pub fn parse(bytes: &[u8]) -> Result<FrDump> {
    let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if b.first() == Some(&0x80) {
        from_pickle::parse(b)
    } else {
        from_json::parse(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_op_and_peer() {
        assert_eq!(peer_of("send", "1->2"), Some((Some(1), 2)));
        assert_eq!(peer_of("recv", "3<-0"), Some((Some(0), 3)));
        assert_eq!(peer_of("recv", "3<-?"), Some((None, 3)));
        assert_eq!(peer_of("all_reduce", ""), None);
        assert_eq!(sizes_text(&[vec![4], vec![2, 2]]), "[[4], [2, 2]]");
        assert_eq!(sizes_text(&[]), "[]");
        assert_eq!(numel(&[vec![4], vec![2, 2]]), 8);
        assert_eq!(parse_ranks("[0, 1, 3]"), Some(vec![0, 1, 3]));
        assert_eq!(parse_ranks("[]"), Some(vec![]));
        assert_eq!(parse_ranks("[a]"), None);
        assert_eq!(rank_of_file("dumps/nccl_trace_rank_12"), Some(12));
        assert_eq!(rank_of_file("rank_3.json"), Some(3));
        assert_eq!(rank_of_file("fr_0.json.gz"), Some(0));
        assert_eq!(rank_of_file("trace"), None);
    }
}
