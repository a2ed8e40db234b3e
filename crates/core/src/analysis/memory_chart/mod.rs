//! Memory charts ready to draw: the same chart for the three memory sources, built once at load.
//!
//! - **Snapshot** (`device_traces`): memory_viz's "Active Memory Timeline" (`MemoryViz.js`
//!   `process_alloc_data`): the `max_bands` largest allocations are stacked bands in allocation
//!   order; when one is freed every band above it drops by its size; all smaller allocations are one
//!   "summarized" band on top. Unlike memory_viz (which spends 3 fake timesteps per shift on an event
//!   axis) x is real time, `time_us` of each entry, when every entry has one; otherwise the entry
//!   index (then [`XUnit::Index`]). A reserved-memory line (the segment replay) is added when the
//!   trace records segment actions; OOMs are markers.
//! - **Memory timeline** (`export_memory_timeline`): the 8 categories as stacked areas.
//! - **Kineto `[memory]` events**: `Total Allocated` as an area, `Total Reserved` as a line.
//!
//! x is `i64` nanoseconds (`chart_ns`): epoch ns for snapshots and memory timelines, trace ns for a
//! Kineto trace; [`trace_epoch_offset_ns`] maps between them (see its doc for the clock rules).
//! Drawing helpers ([`band_columns`], [`line_columns`]) merge everything that falls in one pixel
//! column into one envelope (STYLE 9), so cost follows the canvas width, not the event count.

mod geometry;
mod snapshot;
pub mod wire;
use crate::analysis::memory::curve;
use crate::ingest::memory_timeline::{MemoryTimeline, CATEGORIES};
use crate::ingest::snapshot::StackId;
use crate::model::Trace;
pub use geometry::{
    band_columns, brush_window, line_columns, overlaps, px_time, step_columns, x_px, zoom_window,
    Column,
};
pub use snapshot::{snapshot_chart, snapshot_chart_in};

/// Default number of allocations drawn as their own band (memory_viz draws its largest too).
pub const MAX_BANDS: usize = 2000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XUnit {
    /// Nanoseconds (epoch or trace clock, see [`MemoryChart::epoch`]).
    Ns,
    /// Trace-entry index: the snapshot recorded no `time_us`.
    Index,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BandKind {
    /// One allocation of a snapshot trace.
    Alloc {
        addr: u64,
        size: u64,
        stack: StackId,
        /// Trace index of the alloc (`None`: before the trace began).
        alloc_index: Option<usize>,
        /// Trace index of the free (`None`: still live at the end).
        free_index: Option<usize>,
    },
    /// All allocations too small to get their own band.
    Summarized { count: u64 },
    /// A memory-timeline category (index into [`CATEGORIES`]).
    Category(u8),
    /// `Total Allocated` of `[memory]` events.
    Allocated,
}

/// A filled band, step-after: point `k` holds on `[x[k], x[k + 1])`, the last until `end`.
#[derive(Debug, Clone)]
pub struct Band {
    pub kind: BandKind,
    pub x: Vec<i64>,
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
    pub end: i64,
}

impl Band {
    fn new(kind: BandKind, x: i64, lo: u64, hi: u64) -> Band {
        Band {
            kind,
            x: vec![x],
            lo: vec![lo],
            hi: vec![hi],
            end: x,
        }
    }

    fn push(&mut self, x: i64, lo: u64, hi: u64) {
        if let (Some(&lx), Some(&ll), Some(&lh)) = (self.x.last(), self.lo.last(), self.hi.last()) {
            if ll == lo && lh == hi {
                return;
            }
            if lx == x {
                // Same instant: the later value wins.
                let n = self.x.len() - 1;
                self.lo[n] = lo;
                self.hi[n] = hi;
                return;
            }
        }
        self.x.push(x);
        self.lo.push(lo);
        self.hi.push(hi);
    }

    pub fn start(&self) -> i64 {
        self.x.first().copied().unwrap_or(self.end)
    }

    /// `(lo, hi)` at `x`, `None` outside `[start, end)`.
    pub fn at(&self, x: i64) -> Option<(u64, u64)> {
        if x < self.start() || x >= self.end {
            return None;
        }
        let k = self.x.partition_point(|&v| v <= x).checked_sub(1)?;
        Some((self.lo[k], self.hi[k]))
    }
}

/// A step line (value holds until the next point).
#[derive(Debug, Clone)]
pub struct Line {
    pub name: &'static str,
    pub x: Vec<i64>,
    pub y: Vec<u64>,
    pub end: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    Peak,
    Oom,
}

#[derive(Debug, Clone)]
pub struct Marker {
    pub kind: MarkerKind,
    pub x: i64,
    pub bytes: u64,
    pub label: String,
}

/// One chart: bands (drawn first to last), lines on top, markers.
#[derive(Debug, Clone)]
pub struct MemoryChart {
    pub unit: XUnit,
    /// x is epoch ns (comparable across files); `false` for Kineto's trace clock and for indices.
    pub epoch: bool,
    pub x_range: (i64, i64),
    pub y_max: u64,
    pub bands: Vec<Band>,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    /// `(x, bytes)` of the first maximum of the total.
    pub peak: (i64, u64),
    /// A snapshot chart's x of each trace entry (the allocator-state scrubber's positions: the
    /// state after entry `i` is drawn from `entry_x[i]`); empty for the other charts.
    pub entry_x: Vec<i64>,
}

impl MemoryChart {
    fn finish(&mut self) {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        let mut y = 0u64;
        for b in &self.bands {
            lo = lo.min(b.start());
            hi = hi.max(b.end);
            y = y.max(b.hi.iter().copied().max().unwrap_or(0));
        }
        for l in &self.lines {
            lo = lo.min(l.x.first().copied().unwrap_or(lo));
            hi = hi.max(l.end);
            y = y.max(l.y.iter().copied().max().unwrap_or(0));
        }
        if lo > hi {
            (lo, hi) = (0, 1);
        }
        if hi <= lo {
            // A width of 1; at the i64 ceiling the range moves down instead of overflowing.
            hi = lo.saturating_add(1);
            lo = hi - 1;
        }
        self.x_range = (lo, hi);
        self.y_max = y.max(1);
    }

    /// The trace entry whose state is drawn at `x` on a snapshot chart: the last one at or
    /// before `x` (the first when `x` is before them all); `None` for a chart of no entries.
    pub fn entry_at(&self, x: i64) -> Option<usize> {
        if self.entry_x.is_empty() {
            return None;
        }
        Some(self.entry_x.partition_point(|&e| e <= x).saturating_sub(1))
    }

    /// The band under `(x, y)`; a band thinner than `slack` bytes still counts when `y` is within
    /// `slack` of it. Topmost (last drawn) wins.
    pub fn hit(&self, x: i64, y: u64, slack: u64) -> Option<usize> {
        let mut near: Option<(u64, usize)> = None;
        for (i, b) in self.bands.iter().enumerate().rev() {
            let Some((lo, hi)) = b.at(x) else { continue };
            if hi <= lo {
                continue;
            }
            if (lo..hi).contains(&y) {
                return Some(i);
            }
            let d = if y < lo { lo - y } else { y - hi + 1 };
            if d <= slack && near.is_none_or(|(bd, _)| d < bd) {
                near = Some((d, i));
            }
        }
        near.map(|(_, i)| i)
    }
}

/// Makes `x` non-decreasing (approximate clocks can step back a little between streams).
fn monotonic(x: &mut [i64]) {
    for i in 1..x.len() {
        if x[i] < x[i - 1] {
            x[i] = x[i - 1];
        }
    }
}

/// Stacked category areas of an `export_memory_timeline` file (epoch ns).
pub fn timeline_chart(m: &MemoryTimeline) -> MemoryChart {
    let mut xs: Vec<i64> = m.times_us.iter().map(|&t| t.saturating_mul(1000)).collect();
    monotonic(&mut xs);
    let end = xs.last().map_or(1, |&x| x.saturating_add(1000));
    let mut bands: Vec<Band> = Vec::new();
    let mut below = vec![0u64; xs.len()];
    let mut peak = (xs.first().copied().unwrap_or(0), 0u64);
    for (c, col) in m.bytes.iter().enumerate() {
        let mut band: Option<Band> = None;
        for (i, &x) in xs.iter().enumerate() {
            let v = col.get(i).copied().unwrap_or(0).max(0) as u64;
            let lo = below[i];
            let hi = lo.saturating_add(v);
            below[i] = hi;
            match &mut band {
                Some(b) => b.push(x, lo, hi),
                None => band = Some(Band::new(BandKind::Category(c as u8), x, lo, hi)),
            }
        }
        if let Some(mut b) = band {
            b.end = end;
            if b.hi.iter().zip(&b.lo).any(|(h, l)| h > l) {
                bands.push(b);
            }
        }
    }
    for (i, &t) in below.iter().enumerate() {
        if t > peak.1 {
            peak = (xs[i], t);
        }
    }
    let mut chart = MemoryChart {
        unit: XUnit::Ns,
        epoch: true,
        x_range: (0, 1),
        y_max: 1,
        bands,
        lines: Vec::new(),
        markers: vec![Marker {
            kind: MarkerKind::Peak,
            x: peak.0,
            bytes: peak.1,
            label: "peak total".into(),
        }],
        peak,
        entry_x: Vec::new(),
    };
    chart.finish();
    chart
}

/// `Total Allocated` (area) and `Total Reserved` (line) of one `[memory]` device, trace ns.
pub fn trace_chart(t: &Trace, device_type: i16, device_id: i16) -> MemoryChart {
    let pts = curve(t, device_type, device_id);
    let mut band: Option<Band> = None;
    let mut line = Line {
        name: "reserved",
        x: Vec::new(),
        y: Vec::new(),
        end: 0,
    };
    let mut peak = (pts.first().map_or(0, |p| p.ts_ns), 0u64);
    for p in &pts {
        let a = p.allocated.max(0) as u64;
        let r = p.reserved.max(0) as u64;
        match &mut band {
            Some(b) => b.push(p.ts_ns, 0, a),
            None => band = Some(Band::new(BandKind::Allocated, p.ts_ns, 0, a)),
        }
        if line.x.last() == Some(&p.ts_ns) {
            if let Some(l) = line.y.last_mut() {
                *l = r;
            }
        } else {
            line.x.push(p.ts_ns);
            line.y.push(r);
        }
        if a > peak.1 {
            peak = (p.ts_ns, a);
        }
    }
    let end = pts.last().map_or(1, |p| p.ts_ns + 1000);
    let mut chart = MemoryChart {
        unit: XUnit::Ns,
        epoch: false,
        x_range: (0, 1),
        y_max: 1,
        bands: Vec::new(),
        lines: Vec::new(),
        markers: vec![Marker {
            kind: MarkerKind::Peak,
            x: peak.0,
            bytes: peak.1,
            label: "peak allocated".into(),
        }],
        peak,
        entry_x: Vec::new(),
    };
    if let Some(mut b) = band {
        b.end = end;
        chart.bands.push(b);
    }
    line.end = end;
    if line.y.iter().any(|&v| v > 0) {
        chart.lines.push(line);
    }
    chart.finish();
    chart
}

/// The label of a band kind for legends and tooltips.
pub fn category_name(c: u8) -> &'static str {
    CATEGORIES.get(usize::from(c)).copied().unwrap_or("unknown")
}

/// What to add to a trace's ns to get epoch ns, or `None` when its clock is not an epoch clock.
///
/// Kineto writes `ts` in µs: older traces (up to ~2023) as absolute epoch µs, newer ones relative to
/// `baseTimeNanoseconds` (epoch ns). A trace whose timestamps already look like epoch time (after
/// 2001-09-09, i.e. ≥ 1e18 ns) needs no offset even if it has a base; otherwise the base is the
/// offset; with neither, the clock is unknown. Snapshot `time_us` and memory-timeline times are
/// epoch µs, so `trace_ns + offset = chart_ns` lines them up.
pub fn trace_epoch_offset_ns(t: &Trace) -> Option<i64> {
    const EPOCH_LIKE_NS: i64 = 1_000_000_000_000_000_000;
    let (lo, _) = t.time_bounds()?;
    if lo >= EPOCH_LIKE_NS {
        return Some(0);
    }
    t.meta.base_time_ns.filter(|&b| b > 0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn a_free_drops_the_bands_above_it() {
        // Hand-built: three bands, the middle one freed at x=10.
        let mut a = Band::new(BandKind::Allocated, 0, 0, 10);
        let mut b = Band::new(BandKind::Allocated, 0, 10, 30);
        a.end = 20;
        b.push(10, 0, 20);
        b.end = 20;
        assert_eq!(b.at(5), Some((10, 30)));
        assert_eq!(b.at(10), Some((0, 20)));
        assert_eq!(b.at(20), None);
        assert_eq!(a.at(-1), None);
    }

    #[test]
    fn brush_needs_a_drag_and_stays_inside_the_bounds() {
        assert_eq!(brush_window((0, 1000), 100.0, 10.0, 11.0, (0, 1000)), None);
        assert_eq!(
            brush_window((0, 1000), 100.0, 50.0, 20.0, (0, 1000)),
            Some((200, 500))
        );
        assert_eq!(
            brush_window((0, 1000), 100.0, -20.0, 150.0, (100, 900)),
            Some((100, 900))
        );
        let z = zoom_window((0, 1000), 100.0, 50.0, 0.5, (0, 1000));
        assert_eq!(z, (250, 750));
        let z = zoom_window((0, 1000), 100.0, 50.0, 4.0, (0, 1000));
        assert_eq!(z, (0, 1000));
    }

    #[test]
    fn sub_pixel_points_merge_into_one_column_with_their_envelope() {
        let x: Vec<i64> = (0..1000).collect();
        let v: Vec<u64> = (0..1000).map(|i| if i == 501 { 100 } else { 1 }).collect();
        let (cols, end) = step_columns(&x, &v, &v, 1000, (0, 1000), 10.0);
        assert_eq!(cols.len(), 10);
        assert_eq!(cols[5].hi, 100, "a one-sample spike survives the merge");
        assert_eq!(cols[4].hi, 1);
        assert!((end - 10.0).abs() < 1e-9);
        // A window in the middle starts with the value carried in from before it.
        let (cols, _) = step_columns(&[0, 100], &[5, 7], &[5, 7], 200, (50, 150), 100.0);
        assert_eq!(
            cols[0],
            Column {
                px: 0.0,
                lo: 5,
                hi: 5
            }
        );
        assert_eq!(cols[1].lo, 7);
    }

    #[test]
    fn hit_finds_the_band_under_the_pointer_and_thin_ones_with_slack() {
        let mut c = MemoryChart {
            unit: XUnit::Index,
            epoch: false,
            x_range: (0, 1),
            y_max: 1,
            bands: vec![
                Band::new(BandKind::Allocated, 0, 0, 100),
                Band::new(BandKind::Allocated, 0, 100, 101),
            ],
            lines: Vec::new(),
            markers: Vec::new(),
            peak: (0, 0),
            entry_x: Vec::new(),
        };
        for b in &mut c.bands {
            b.end = 10;
        }
        assert_eq!(c.hit(5, 50, 0), Some(0));
        assert_eq!(c.hit(5, 100, 0), Some(1));
        assert_eq!(c.hit(5, 104, 5), Some(1));
        assert_eq!(c.hit(5, 104, 0), None);
        assert_eq!(c.hit(10, 50, 0), None);
    }
}
