//! `torch.profiler` memory timelines: what `profile.export_memory_timeline(path)` writes.
//!
//! Two shapes (torch `torch/profiler/_memory_profiler.py`, `MemoryProfileTimeline`):
//! - `.json`: `[times_us, sizes]`, `sizes[i]` = 9 ints: index 0 unused (always 0), then bytes live in
//!   PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, unknown —
//!   the output of torch's `_coalesce_timeline`.
//! - `.raw.json.gz`: `[[t_ns or -1, action, bytes, category], ...]`, action 1 PREEXISTING, 2 CREATE,
//!   3 INCREMENT_VERSION, 4 DESTROY (bytes already signed), category 0..7 in the order above.
//!   It is coalesced into the same series exactly as `_coalesce_timeline` does: ns → µs by Python's
//!   `int(t / 1000)`, one sample per distinct consecutive time, each entry adding its signed bytes to
//!   its category, and `-1` (pre-existing) times replaced by the smallest positive time.
//!
//! The series is columnar: one `Vec<i64>` of bytes per category.

use super::sniff::Format;
use crate::error::{Error, ErrorKind, Result};
use serde::Serialize;
use serde_json::Number;

/// Category names in torch's order (`_CATEGORY_TO_INDEX`; `None` is "unknown").
pub const CATEGORIES: [&str; 8] = [
    "parameter",
    "optimizer_state",
    "input",
    "temporary",
    "activation",
    "gradient",
    "autograd_detail",
    "unknown",
];

/// A memory timeline: sample times and bytes per category at each sample.
#[derive(Debug, Clone)]
pub struct MemoryTimeline {
    pub format: Format,
    /// Absolute epoch µs (trace `ts` + `baseTimeNanoseconds` / 1000).
    pub times_us: Vec<i64>,
    /// `bytes[c][i]`: bytes in category `c` (see [`CATEGORIES`]) at sample `i`.
    pub bytes: [Vec<i64>; 8],
    /// Records read: samples (`.json`) or raw entries (`.raw.json`).
    pub records: u64,
}

impl MemoryTimeline {
    pub fn len(&self) -> usize {
        self.times_us.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times_us.is_empty()
    }

    /// Sum over categories at sample `i`, saturating: a file may hold values near `i64::MAX`.
    pub fn total(&self, i: usize) -> i64 {
        self.bytes
            .iter()
            .map(|c| c.get(i).copied().unwrap_or(0))
            .fold(0i64, i64::saturating_add)
    }
}

/// The peak of the summed series and what it was made of.
#[derive(Debug, Clone, Serialize)]
pub struct TimelinePeak {
    pub samples: usize,
    pub start_us: i64,
    pub end_us: i64,
    pub peak_total_bytes: i64,
    /// Time of the first sample reaching the peak.
    pub peak_time_us: i64,
    pub peak_index: usize,
    /// `(category, bytes)` at the peak, in torch's category order.
    pub at_peak: Vec<(&'static str, i64)>,
}

/// Peak total (first sample with the maximum sum over categories) and the breakdown there.
pub fn peak(m: &MemoryTimeline) -> TimelinePeak {
    let mut best = (0usize, i64::MIN);
    for i in 0..m.len() {
        let t = m.total(i);
        if t > best.1 {
            best = (i, t);
        }
    }
    let (i, total) = if m.is_empty() { (0, 0) } else { best };
    TimelinePeak {
        samples: m.len(),
        start_us: m.times_us.iter().copied().min().unwrap_or(0),
        end_us: m.times_us.iter().copied().max().unwrap_or(0),
        peak_total_bytes: total,
        peak_time_us: m.times_us.get(i).copied().unwrap_or(0),
        peak_index: i,
        at_peak: CATEGORIES
            .iter()
            .zip(m.bytes.iter())
            .map(|(n, c)| (*n, c.get(i).copied().unwrap_or(0)))
            .collect(),
    }
}

fn num_i64(n: &Number) -> Option<i64> {
    n.as_i64().or_else(|| n.as_f64().map(|f| f as i64))
}

/// serde's error with the byte offset its line and column point at.
fn syntax(e: serde_json::Error, bytes: &[u8]) -> Error {
    let line_start: usize = bytes
        .split(|&c| c == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    let at = (line_start + e.column().saturating_sub(1)).min(bytes.len()) as u64;
    let kind = if e.is_eof() {
        ErrorKind::Truncated
    } else {
        ErrorKind::Syntax(format!(
            "a memory timeline is [times, [[bytes per category]...]] or raw [[t, action, bytes, \
             category]...]: {e}"
        ))
    };
    Error::new(kind, at)
}

/// Python's `int(t / 1000)` for an int `t`: true division (rounded to a double), then truncation.
fn ns_to_us(t: i64) -> i64 {
    let q = t / 1000;
    let r = t % 1000;
    (q as f64 + r as f64 / 1000.0) as i64
}

/// Parses either shape; `format` is what the sniffer said.
pub fn parse(bytes: &[u8], format: Format) -> Result<MemoryTimeline> {
    match format {
        Format::MemoryTimelineRaw => parse_raw(bytes),
        _ => parse_plot(bytes),
    }
}

fn parse_plot(bytes: &[u8]) -> Result<MemoryTimeline> {
    let (times, sizes): (Vec<Number>, Vec<Vec<Number>>) =
        serde_json::from_slice(bytes).map_err(|e| syntax(e, bytes))?;
    if times.len() != sizes.len() {
        return Err(Error::new(
            ErrorKind::Syntax(format!(
                "memory timeline with {} times but {} size rows",
                times.len(),
                sizes.len()
            )),
            0,
        ));
    }
    let mut m = MemoryTimeline {
        format: Format::MemoryTimeline,
        times_us: Vec::with_capacity(times.len()),
        bytes: Default::default(),
        records: times.len() as u64,
    };
    for (t, row) in times.iter().zip(&sizes) {
        m.times_us.push(num_i64(t).unwrap_or(0));
        for (c, col) in m.bytes.iter_mut().enumerate() {
            // Index 0 of each row is unused by torch; categories start at 1.
            col.push(row.get(c + 1).and_then(num_i64).unwrap_or(0));
        }
    }
    Ok(m)
}

fn parse_raw(bytes: &[u8]) -> Result<MemoryTimeline> {
    let rows: Vec<Vec<Number>> = serde_json::from_slice(bytes).map_err(|e| syntax(e, bytes))?;
    let mut m = MemoryTimeline {
        format: Format::MemoryTimelineRaw,
        times_us: Vec::new(),
        bytes: Default::default(),
        records: rows.len() as u64,
    };
    let mut t_min = -1i64;
    let mut cur = [0i64; 8];
    for (i, row) in rows.iter().enumerate() {
        let field = |k: usize| row.get(k).and_then(num_i64);
        let (Some(t), Some(action), Some(delta), Some(cat)) =
            (field(0), field(1), field(2), field(3))
        else {
            return Err(Error::new(
                ErrorKind::Syntax(format!("raw memory timeline entry {i} is not 4 numbers")),
                0,
            ));
        };
        if !(1..=4).contains(&action) {
            return Err(Error::new(
                ErrorKind::Syntax(format!(
                    "raw memory timeline entry {i}: unknown action {action}"
                )),
                0,
            ));
        }
        let t = if t == -1 { -1 } else { ns_to_us(t) };
        if t_min == -1 || (t < t_min && t > 0) {
            t_min = t;
        }
        if m.times_us.last() != Some(&t) || m.times_us.is_empty() {
            if !m.times_us.is_empty() {
                for (c, col) in m.bytes.iter_mut().enumerate() {
                    col.push(cur[c]);
                }
            }
            m.times_us.push(t);
        }
        let c = usize::try_from(cat).ok().filter(|&c| c < 8).unwrap_or(7);
        cur[c] = cur[c].saturating_add(delta);
    }
    if !m.times_us.is_empty() {
        for (c, col) in m.bytes.iter_mut().enumerate() {
            col.push(cur[c]);
        }
    }
    for t in &mut m.times_us {
        if *t < 0 {
            *t = t_min;
        }
    }
    Ok(m)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn raw_entries_coalesce_like_torch() {
        let raw = b"[[-1, 1, 100, 0], [2000, 2, 50, 4], [2400, 3, -50, 4], [2400, 3, 50, 5], [3000, 4, -100, 0]]";
        let m = parse(raw, Format::MemoryTimelineRaw).unwrap();
        assert_eq!(m.times_us, vec![2, 2, 3]);
        assert_eq!(m.bytes[0], vec![100, 100, 0]);
        assert_eq!(m.bytes[4], vec![0, 0, 0]);
        assert_eq!(m.bytes[5], vec![0, 50, 50]);
        let p = peak(&m);
        assert_eq!(p.peak_total_bytes, 150);
        assert_eq!(p.peak_index, 1);
    }

    #[test]
    fn python_int_division_rounds_like_python() {
        assert_eq!(ns_to_us(1_795_343_593_399_842_999), 1_795_343_593_399_843);
        assert_eq!(ns_to_us(1_500), 1);
    }
}
