//! A memory snapshot's views — its summary (`analysis::snapshot::summarize`, the figures of
//! `.snapshot.devices[]`), and the chart (`snapshot_chart`) and peak flame graph (`peak_flame`) of
//! each device the Memory tab lists —
//! as sections, so the worker that decoded the pickle builds them as well and the page only decodes
//! them, one section per task (issue 27: on a 1 GB snapshot the summary and the chart were single
//! tasks of 2.6 s and 7.2 s on the page's thread).
//!
//! Sections ([`sections`]): the chart count and the summary's JSON; then per chart its device and
//! small fields ([`Head`]), its bands in groups of at most [`PIECE`] points (a band of more alone:
//! its kind, then its x, lo and hi columns in pieces of [`PIECE`]), its entry positions in pieces
//! of [`PIECE`]. The flame graphs travel apart (`report::snapshot_flame_wire`), after the model:
//! the Memory tab draws the chart while the model arrives and shows no flame graph until it has
//! come, so the chart need not wait for them (on the 50 MB bench snapshot they were 1.7 MB of the
//! views' 2.9 MB). No section grows with the snapshot: on a 5.6 M-entry snapshot one band section
//! was 88 MB and the flame graph's JSON 26 MB, each one task of 50–130 ms on the page. Both ends
//! are the same build; every read is checked, and bytes that do not decode are an error (the page
//! then computes the views itself), never a panic.

use crate::analysis::memory_chart::wire::Head;
use crate::analysis::memory_chart::{
    snapshot_chart, snapshot_chart_in, Band, BandKind, MemoryChart, MAX_BANDS,
};
use crate::analysis::snapshot::{
    device_figures_in, device_memory_in, replay, DeviceMemory, Replay, SnapshotSummary,
};
use crate::analysis::snapshot_flame::{peak_flame, peak_flame_in, PeakFlame};
use crate::error::Result;
use crate::ingest::snapshot::Snapshot;
use crate::model::wire::{bad, column_piece, pieces, read_piece, Get, Wire, PIECE};

/// What the Memory tab shows first of a snapshot, computed where the snapshot was decoded.
#[derive(Debug, Clone)]
pub struct SnapshotViews {
    pub summary: SnapshotSummary,
    /// `(device, chart)` for each of [`charted_devices`].
    pub charts: Vec<(i64, MemoryChart)>,
    /// The peak flame graph of each of them, in the same order (none in
    /// [`SnapshotViews::first`]'s: see [`peak_flames`]).
    pub flames: Vec<PeakFlame>,
}

/// The devices the Memory tab lists for a snapshot: those with trace entries or segments, else
/// every device of the summary.
pub fn charted_devices(sum: &SnapshotSummary) -> Vec<i64> {
    let busy: Vec<i64> = sum
        .devices
        .iter()
        .filter(|d| d.trace_entries > 0 || d.segments > 0)
        .map(|d| d.device)
        .collect();
    if busy.is_empty() {
        sum.devices.iter().map(|d| d.device).collect()
    } else {
        busy
    }
}

impl SnapshotViews {
    /// The same views as [`crate::analysis::snapshot::summarize`], [`snapshot_chart`] and
    /// [`peak_flame`] give, with each device's two replays made once for all three (they made
    /// five), one device at a time so only one device's replays are held at once.
    pub fn of(s: &Snapshot) -> SnapshotViews {
        SnapshotViews::made(s, device_memory_in, true)
    }

    /// [`SnapshotViews::of`] with each device's figures alone ([`device_figures_in`]: no peak
    /// tables, no state at the dump) and no flame graphs: what the Memory tab draws first, in
    /// ~40 % of the time. The flame graphs ([`peak_flames`]) and the whole summary
    /// ([`crate::analysis::snapshot::summarize`]) follow.
    pub fn first(s: &Snapshot) -> SnapshotViews {
        SnapshotViews::made(s, device_figures_in, false)
    }

    fn made(
        s: &Snapshot,
        figures: fn(&Snapshot, i64, &Replay, &Replay) -> DeviceMemory,
        with_flames: bool,
    ) -> SnapshotViews {
        let mut devices = Vec::new();
        let (mut charts, mut flames) = (Vec::new(), Vec::new());
        for d in s.devices() {
            let (active, segs) = (replay(s, d, false), replay(s, d, true));
            let m = figures(s, d, &active, &segs);
            if m.trace_entries > 0 || m.segments > 0 {
                charts.push((d, snapshot_chart_in(s, d, MAX_BANDS, &active, Some(&segs))));
                if with_flames {
                    flames.push(peak_flame_in(s, d, &active));
                }
            }
            devices.push(m);
        }
        let summary = SnapshotSummary {
            kind: s.kind,
            devices,
        };
        if charts.is_empty() {
            // No busy device: every device is listed (`charted_devices`), each without a trace.
            for d in charted_devices(&summary) {
                charts.push((d, snapshot_chart(s, d, MAX_BANDS)));
                if with_flames {
                    flames.push(peak_flame(s, d));
                }
            }
        }
        SnapshotViews {
            summary,
            charts,
            flames,
        }
    }
}

/// The peak flame graphs of `devices` (those of the views' charts, in their order): what
/// [`SnapshotViews::of`] holds and [`SnapshotViews::first`] leaves out.
pub fn peak_flames(s: &Snapshot, devices: &[i64]) -> Vec<PeakFlame> {
    devices.iter().map(|&d| peak_flame(s, d)).collect()
}

/// The whole summary in one section, after [`SnapshotViews::first`]'s figures: bounded
/// whatever the snapshot's size (its tables keep the largest blocks and groups only).
pub fn summary_section(sum: &SnapshotSummary) -> Result<Vec<u8>> {
    serde_json::to_vec(sum).map_err(|e| bad(&e.to_string()))
}

/// The summary of a [`summary_section`].
pub fn summary_of(section: &[u8]) -> Result<SnapshotSummary> {
    serde_json::from_slice(section).map_err(|e| bad(&e.to_string()))
}

/// Every section of `v`'s summary and charts, in order (its flame graphs:
/// `snapshot_flame_wire::flame_sections`).
pub fn sections(v: &SnapshotViews) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut first = Vec::new();
    (v.charts.len() as u32).put(&mut first);
    let json = serde_json::to_vec(&v.summary).map_err(|e| bad(&e.to_string()))?;
    first.extend_from_slice(&json);
    out.push(first);
    for (device, c) in &v.charts {
        let mut head = Vec::new();
        device.put(&mut head);
        Head::of(c).put(&mut head);
        out.push(head);
        // Bands in groups of about PIECE points; a band of more points (the summarized band has
        // one an action) alone, its columns in pieces.
        let mut k = 0;
        while k < c.bands.len() {
            if c.bands[k].x.len() > PIECE {
                let b = &c.bands[k];
                let mut sec = Vec::new();
                0u32.put(&mut sec);
                b.kind.put(&mut sec);
                b.end.put(&mut sec);
                out.push(sec);
                for i in 0..pieces(b.x.len()) {
                    out.push(column_piece(&b.x, i));
                }
                for col in [&b.lo, &b.hi] {
                    for i in 0..pieces(col.len()) {
                        out.push(column_piece(col, i));
                    }
                }
                k += 1;
                continue;
            }
            let mut group: Vec<&Band> = Vec::new();
            let mut points = 0;
            while k < c.bands.len()
                && c.bands[k].x.len() <= PIECE
                && (group.is_empty() || points + c.bands[k].x.len() <= PIECE)
            {
                points += c.bands[k].x.len();
                group.push(&c.bands[k]);
                k += 1;
            }
            let mut sec = Vec::new();
            (group.len() as u32).put(&mut sec);
            group.iter().for_each(|b| b.put(&mut sec));
            out.push(sec);
        }
        for i in 0..pieces(c.entry_x.len()) {
            out.push(column_piece(&c.entry_x, i));
        }
    }
    Ok(out)
}

/// What the next section holds.
enum Want {
    Summary,
    Head,
    Bands,
    /// A piece of column `col` (x, lo, hi) of the band just begun alone; values still to come.
    BigBand(u8, Option<usize>),
    Entries(Option<usize>),
}

/// Takes [`sections`] one at a time.
pub struct Decoder {
    want: Want,
    charts_left: usize,
    summary: Option<SnapshotSummary>,
    charts: Vec<(i64, MemoryChart)>,
    bands_left: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            want: Want::Summary,
            charts_left: 0,
            summary: None,
            charts: Vec::new(),
            bands_left: 0,
        }
    }
}

impl Decoder {
    /// Whether every section has come.
    pub fn complete(&self) -> bool {
        self.summary.is_some() && matches!(self.want, Want::Head) && self.charts_left == 0
    }

    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        match &mut self.want {
            Want::Summary => {
                let mut g = Get::new(section);
                self.charts_left = u32::get(&mut g)? as usize;
                let json = g.take(section.len() - 4)?;
                let s: SnapshotSummary =
                    serde_json::from_slice(json).map_err(|e| bad(&e.to_string()))?;
                self.summary = Some(s);
                self.want = Want::Head;
            }
            Want::Head => {
                if self.charts_left == 0 {
                    return Err(bad("a section after the last chart"));
                }
                let mut g = Get::new(section);
                let device = i64::get(&mut g)?;
                let head = Head::get(&mut g)?;
                g.done()?;
                self.bands_left = head.bands as usize;
                self.charts.push((device, head.chart()));
                self.want = if self.bands_left > 0 {
                    Want::Bands
                } else {
                    Want::Entries(None)
                };
            }
            Want::Bands => {
                let mut g = Get::new(section);
                let n = g.count()?;
                if n == 0 && self.bands_left > 0 {
                    let kind = BandKind::get(&mut g)?;
                    let end = i64::get(&mut g)?;
                    g.done()?;
                    let Some((_, c)) = self.charts.last_mut() else {
                        return Err(bad("bands before a chart"));
                    };
                    c.bands.push(Band {
                        kind,
                        x: Vec::new(),
                        lo: Vec::new(),
                        hi: Vec::new(),
                        end,
                    });
                    self.want = Want::BigBand(0, None);
                    return Ok(());
                }
                if n == 0 || n > self.bands_left {
                    return Err(bad("a band group that does not fit its chart"));
                }
                let Some((_, c)) = self.charts.last_mut() else {
                    return Err(bad("bands before a chart"));
                };
                for _ in 0..n {
                    c.bands.push(Band::get(&mut g)?);
                }
                g.done()?;
                self.bands_left -= n;
                if self.bands_left == 0 {
                    self.want = Want::Entries(None);
                }
            }
            Want::BigBand(col, left) => {
                let Some(b) = self.charts.last_mut().and_then(|(_, c)| c.bands.last_mut()) else {
                    return Err(bad("a band piece before its band"));
                };
                let v = match col {
                    0 => read_piece(&mut b.x, *left, section)?,
                    1 => read_piece(&mut b.lo, *left, section)?,
                    _ => read_piece(&mut b.hi, *left, section)?,
                };
                if v > 0 {
                    *left = Some(v);
                } else if *col < 2 {
                    self.want = Want::BigBand(*col + 1, None);
                } else {
                    if b.lo.len() != b.x.len() || b.hi.len() != b.x.len() {
                        return Err(bad("a band whose columns differ in length"));
                    }
                    self.bands_left -= 1;
                    self.want = if self.bands_left == 0 {
                        Want::Entries(None)
                    } else {
                        Want::Bands
                    };
                }
            }
            Want::Entries(left) => {
                let Some((_, c)) = self.charts.last_mut() else {
                    return Err(bad("entries before a chart"));
                };
                let rest = read_piece(&mut c.entry_x, *left, section)?;
                if rest == 0 {
                    self.charts_left -= 1;
                    self.want = Want::Head;
                } else {
                    *left = Some(rest);
                }
            }
        }
        Ok(())
    }

    pub fn finish(self) -> Result<SnapshotViews> {
        if !self.complete() {
            return Err(bad("snapshot views cut short"));
        }
        let summary = self.summary.ok_or_else(|| bad("no summary"))?;
        Ok(SnapshotViews {
            summary,
            charts: self.charts,
            flames: Vec::new(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::analysis::snapshot_flame::FlameNode;
    use crate::report::snapshot_flame_wire::{flame_sections, FlameDecoder, NODE_PIECE};

    #[test]
    fn cut_or_damaged_sections_are_errors_not_panics() {
        let mut d = Decoder::default();
        assert!(d.push(&[1, 0, 0]).is_err());
        let mut d = Decoder::default();
        assert!(d.push(&[0, 0, 0, 0, b'{']).is_err());
        // A summary with no charts is complete; one more section is an error.
        let mut d = Decoder::default();
        let mut s = vec![0, 0, 0, 0];
        s.extend_from_slice(br#"{"kind":"allocator","devices":[]}"#);
        d.push(&s).unwrap();
        assert!(d.complete());
        assert!(d.push(&[0; 8]).is_err());
        assert!(Decoder::default().finish().is_err());
    }

    /// A band of more than [`PIECE`] points between two small ones, and a flame graph of more
    /// than [`NODE_PIECE`] nodes: every section stays small, and the views come back equal.
    #[test]
    fn a_huge_band_and_flame_graph_travel_in_small_sections_and_come_back_equal() {
        use crate::analysis::memory_chart::XUnit;
        let band = |n: usize, k: i64| Band {
            kind: BandKind::Summarized { count: n as u64 },
            x: (0..n as i64).map(|i| i * 3 + k).collect(),
            lo: (0..n as u64).map(|i| i % 7).collect(),
            hi: (0..n as u64).map(|i| i % 7 + 100).collect(),
            end: n as i64 * 3 + k,
        };
        let n_big = PIECE * 2 + 17;
        let chart = MemoryChart {
            unit: XUnit::Ns,
            epoch: true,
            x_range: (0, 1_000),
            y_max: 107,
            bands: vec![band(5, 1), band(n_big, 2), band(3, 3)],
            lines: Vec::new(),
            markers: Vec::new(),
            peak: (9, 107),
            entry_x: (0..PIECE as i64 + 5).collect(),
        };
        let flame = PeakFlame {
            nodes: (0..NODE_PIECE as u32 * 2 + 3)
                .map(|i| FlameNode {
                    label: format!("frame {i} ünïcode"),
                    depth: i % 5,
                    offset: u64::from(i) * 10,
                    bytes: 10,
                    parent: i.saturating_sub(1),
                })
                .collect(),
            total_bytes: 12_345,
            depth: 5,
            blocks: (0..1000u64)
                .map(|i| (i << 20, i + 1, (i % 50) as u32))
                .collect(),
        };
        let summary: SnapshotSummary =
            serde_json::from_str(r#"{"kind":"allocator","devices":[]}"#).unwrap();
        let v = SnapshotViews {
            summary,
            charts: vec![(0, chart)],
            flames: vec![flame],
        };
        let secs = sections(&v).unwrap();
        let fsecs = flame_sections(&v.flames);
        let largest = secs.iter().chain(&fsecs).map(Vec::len).max().unwrap();
        // A piece of one i64 column, plus its two lengths: nothing of the whole band or graph.
        assert!(largest <= PIECE * 8 + 8, "largest section {largest} B");
        let mut d = Decoder::default();
        for sec in &secs {
            assert!(!d.complete());
            d.push(sec).unwrap();
        }
        let back = d.finish().unwrap();
        assert_eq!(format!("{:?}", back.charts), format!("{:?}", v.charts));
        assert!(back.flames.is_empty());
        let mut fd = FlameDecoder::default();
        for sec in &fsecs {
            assert!(!fd.complete());
            fd.push(sec).unwrap();
        }
        assert_eq!(
            format!("{:?}", fd.finish().unwrap()),
            format!("{:?}", v.flames)
        );
        // Cut anywhere, the views and the graphs are an error, never a panic or a wrong answer.
        for cut in [1, 3, secs.len() / 2, secs.len() - 1] {
            let mut d = Decoder::default();
            for sec in &secs[..cut] {
                d.push(sec).unwrap();
            }
            assert!(d.finish().is_err(), "cut after {cut} sections");
        }
        for cut in [1, 2, fsecs.len() / 2, fsecs.len() - 1] {
            let mut d = FlameDecoder::default();
            for sec in &fsecs[..cut] {
                d.push(sec).unwrap();
            }
            assert!(d.finish().is_err(), "flame graphs cut after {cut} sections");
        }
        // One section too many is an error too.
        let mut d = FlameDecoder::default();
        for sec in &fsecs {
            d.push(sec).unwrap();
        }
        assert!(d.push(&fsecs[1]).is_err());
    }
}
