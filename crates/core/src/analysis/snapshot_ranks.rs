//! A folder of allocator snapshots dumped on OOM (one pickle per rank, or per OOM event) read as
//! one run: per dump the state at the dump (reserved vs allocated, the largest live blocks with
//! their stacks), the allocations that failed where the trace recorded them (`oom` entries), and
//! which ranks differ from the others and by which allocation sites.
//!
//! Definitions (docs/definitions.md, `.oom_dumps`):
//! - each dump's figures are summed over its devices (a rank's dump holds its own device);
//! - the **median** of a figure is over all dumps (the lower middle value for an even count, so
//!   it is always some dump's value);
//! - a dump **differs** when its allocated or reserved bytes are off the median by more than
//!   [`DIFFER_SHARE`] of the median (and more than [`DIFFER_MIN_BYTES`]), or it recorded an OOM
//!   while fewer than half the dumps did; its **excess** rows are the attributed frames whose live
//!   bytes differ most from that frame's median over all dumps (a frame a dump lacks counts 0).

use super::snapshot::top_frames;
use super::snapshot_dump::{frame_of, live_blocks, LiveBlockRow};
use super::snapshot_frames::FrameRanker;
use crate::ingest::snapshot::{Action, Snapshot};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// Largest live blocks kept per dump.
pub const MAX_BLOCKS: usize = 10;
/// Frames listed per differing dump.
pub const MAX_EXCESS: usize = 5;
/// A dump differs past this share of the median…
pub const DIFFER_SHARE: f64 = 0.05;
/// …and past this many bytes (1 MiB).
pub const DIFFER_MIN_BYTES: u64 = 1 << 20;

/// An allocation the allocator failed (`oom` trace entry).
#[derive(Debug, Clone, Serialize)]
pub struct FailedAlloc {
    pub device: i64,
    /// Index of the entry in the device's trace.
    pub index: usize,
    pub time_us: Option<i64>,
    pub requested_bytes: u64,
    /// What CUDA reported free (`device_free`).
    pub device_free_bytes: u64,
    pub frame: String,
    pub top_frames: Vec<String>,
    pub user_metadata: String,
}

/// One dump, reduced to what the run compares (the snapshot itself is dropped).
#[derive(Debug, Clone, Serialize)]
pub struct RankDump {
    pub rank: i64,
    pub path: String,
    pub devices: u64,
    pub segments: u64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub fragmentation_bytes: u64,
    pub live_blocks: u64,
    pub trace_entries: u64,
    pub largest_blocks: Vec<LiveBlockRow>,
    pub ooms: Vec<FailedAlloc>,
    /// Live bytes per attributed frame (all of them: the run compares them across dumps).
    #[serde(skip)]
    pub by_frame: BTreeMap<String, u64>,
}

impl RankDump {
    pub fn of(rank: i64, path: &str, s: &Snapshot) -> RankDump {
        let mut ranks = FrameRanker::default();
        let sg = &s.segments;
        let mut d = RankDump {
            rank,
            path: path.to_owned(),
            devices: 0,
            segments: sg.len() as u64,
            reserved_bytes: sg.total_size.iter().fold(0u64, |t, &x| t.saturating_add(x)),
            allocated_bytes: sg
                .allocated_size
                .iter()
                .fold(0u64, |t, &x| t.saturating_add(x)),
            fragmentation_bytes: 0,
            live_blocks: 0,
            trace_entries: s.device_traces.iter().map(|t| t.len() as u64).sum(),
            largest_blocks: Vec::new(),
            ooms: Vec::new(),
            by_frame: BTreeMap::new(),
        };
        d.fragmentation_bytes = d.reserved_bytes.saturating_sub(d.allocated_bytes);
        let devices = s.devices();
        d.devices = devices.len() as u64;
        let mut all = Vec::new();
        for dev in devices {
            let blocks = live_blocks(s, dev);
            for b in &blocks {
                let f = frame_of(s, &mut ranks, b.stack);
                let x = d.by_frame.entry(f).or_insert(0);
                *x = x.saturating_add(b.size);
            }
            all.extend(blocks);
            if let Some(t) = s.trace(dev) {
                for i in 0..t.len() {
                    if t.action[i] == Action::Oom {
                        d.ooms.push(FailedAlloc {
                            device: dev,
                            index: i,
                            time_us: t.time_us[i],
                            requested_bytes: t.size[i],
                            device_free_bytes: t.device_free[i],
                            frame: frame_of(s, &mut ranks, t.stack[i]),
                            top_frames: top_frames(s, t.stack[i]),
                            user_metadata: s.str(t.user_metadata[i]).to_owned(),
                        });
                    }
                }
            }
        }
        d.live_blocks = all.len() as u64;
        crate::sort::by(&mut all, |a, b| {
            b.size.cmp(&a.size).then(a.addr.cmp(&b.addr))
        });
        d.largest_blocks = all
            .iter()
            .take(MAX_BLOCKS)
            .map(|b| LiveBlockRow::of(s, &mut ranks, b))
            .collect();
        d
    }
}

/// A frame whose live bytes on a dump differ from its median over the dumps.
#[derive(Debug, Clone, Serialize)]
pub struct Excess {
    pub frame: String,
    pub bytes: u64,
    pub median_bytes: u64,
    pub delta_bytes: i64,
}

/// A dump that differs from the others, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Differs {
    pub rank: i64,
    pub path: String,
    pub allocated_delta_bytes: i64,
    pub reserved_delta_bytes: i64,
    pub recorded_oom: bool,
    pub excess: Vec<Excess>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OomRun {
    /// By rank, then path.
    pub dumps: Vec<RankDump>,
    pub median_allocated_bytes: u64,
    pub median_reserved_bytes: u64,
    /// Dumps whose trace recorded an `oom`.
    pub ranks_with_oom: Vec<i64>,
    pub differs: Vec<Differs>,
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

fn delta(x: u64, m: u64) -> i64 {
    (x as i128 - m as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// The run of `dumps` (see the module doc).
pub fn compare(mut dumps: Vec<RankDump>) -> OomRun {
    crate::sort::by(&mut dumps, |a, b| {
        a.rank.cmp(&b.rank).then(a.path.cmp(&b.path))
    });
    let ma = median(dumps.iter().map(|d| d.allocated_bytes).collect());
    let mr = median(dumps.iter().map(|d| d.reserved_bytes).collect());
    let with_oom: Vec<i64> = dumps
        .iter()
        .filter(|d| !d.ooms.is_empty())
        .map(|d| d.rank)
        .collect();
    let rare_oom = with_oom.len() * 2 < dumps.len();
    let mut frames: FxHashMap<&str, Vec<u64>> = FxHashMap::default();
    for (i, d) in dumps.iter().enumerate() {
        for (f, &b) in &d.by_frame {
            frames.entry(f).or_insert_with(|| vec![0; dumps.len()])[i] = b;
        }
    }
    let frame_median: FxHashMap<&str, u64> = frames
        .iter()
        .map(|(f, v)| (*f, median(v.clone())))
        .collect();
    let off = |x: u64, m: u64| {
        let d = x.abs_diff(m);
        d > DIFFER_MIN_BYTES && d as f64 > DIFFER_SHARE * m as f64
    };
    let mut differs = Vec::new();
    for (i, d) in dumps.iter().enumerate() {
        let recorded_oom = rare_oom && !d.ooms.is_empty();
        if !(off(d.allocated_bytes, ma) || off(d.reserved_bytes, mr) || recorded_oom) {
            continue;
        }
        let mut excess: Vec<Excess> = frames
            .iter()
            .map(|(f, v)| {
                let m = frame_median.get(f).copied().unwrap_or(0);
                Excess {
                    frame: (*f).to_owned(),
                    bytes: v[i],
                    median_bytes: m,
                    delta_bytes: delta(v[i], m),
                }
            })
            .filter(|e| e.delta_bytes != 0)
            .collect();
        crate::sort::by(&mut excess, |a, b| {
            b.delta_bytes
                .unsigned_abs()
                .cmp(&a.delta_bytes.unsigned_abs())
                .then(a.frame.cmp(&b.frame))
        });
        excess.truncate(MAX_EXCESS);
        differs.push(Differs {
            rank: d.rank,
            path: d.path.clone(),
            allocated_delta_bytes: delta(d.allocated_bytes, ma),
            reserved_delta_bytes: delta(d.reserved_bytes, mr),
            recorded_oom,
            excess,
        });
    }
    OomRun {
        median_allocated_bytes: ma,
        median_reserved_bytes: mr,
        ranks_with_oom: with_oom,
        differs,
        dumps,
    }
}
