//! A memory snapshot's views — its summary (`analysis::snapshot::summarize`, the figures of
//! `.snapshot.devices[]`), and the chart (`snapshot_chart`) and peak flame graph (`peak_flame`) of
//! each device the Memory tab lists —
//! as sections, so the worker that decoded the pickle builds them as well and the page only decodes
//! them, one section per task (issue 27: on a 1 GB snapshot the summary and the chart were single
//! tasks of 2.6 s and 7.2 s on the page's thread).
//!
//! Sections: the chart count and the summary's JSON; then per chart its device and small fields
//! ([`Head`]), its bands in groups of at most [`PIECE`] points, its entry positions in pieces of
//! [`PIECE`], the device's peak flame graph as JSON. Both ends are the same build; every read is checked, and bytes that do not decode
//! are an error (the page then computes the views itself), never a panic.

use crate::analysis::memory_chart::wire::Head;
use crate::analysis::memory_chart::{snapshot_chart, Band, MemoryChart, MAX_BANDS};
use crate::analysis::snapshot::{summarize, SnapshotSummary};
use crate::analysis::snapshot_flame::{peak_flame, PeakFlame};
use crate::error::Result;
use crate::ingest::snapshot::Snapshot;
use crate::model::wire::{bad, column_piece, pieces, read_piece, Get, Wire, PIECE};

/// What the Memory tab shows first of a snapshot, computed where the snapshot was decoded.
#[derive(Debug, Clone)]
pub struct SnapshotViews {
    pub summary: SnapshotSummary,
    /// `(device, chart)` for each of [`charted_devices`].
    pub charts: Vec<(i64, MemoryChart)>,
    /// The peak flame graph of each of them, in the same order.
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
    pub fn of(s: &Snapshot) -> SnapshotViews {
        let summary = summarize(s);
        let devices = charted_devices(&summary);
        let charts = devices
            .iter()
            .map(|&d| (d, snapshot_chart(s, d, MAX_BANDS)))
            .collect();
        let flames = devices.iter().map(|&d| peak_flame(s, d)).collect();
        SnapshotViews {
            summary,
            charts,
            flames,
        }
    }
}

/// Every section of `v`, in order.
pub fn sections(v: &SnapshotViews) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut first = Vec::new();
    (v.charts.len() as u32).put(&mut first);
    let json = serde_json::to_vec(&v.summary).map_err(|e| bad(&e.to_string()))?;
    first.extend_from_slice(&json);
    out.push(first);
    for ((device, c), flame) in v.charts.iter().zip(&v.flames) {
        let mut head = Vec::new();
        device.put(&mut head);
        Head::of(c).put(&mut head);
        out.push(head);
        // Bands in groups of about PIECE points (at least one band a group).
        let mut k = 0;
        while k < c.bands.len() {
            let mut group: Vec<&Band> = Vec::new();
            let mut points = 0;
            while k < c.bands.len() && (group.is_empty() || points + c.bands[k].x.len() <= PIECE) {
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
        out.push(serde_json::to_vec(flame).map_err(|e| bad(&e.to_string()))?);
    }
    Ok(out)
}

/// What the next section holds.
enum Want {
    Summary,
    Head,
    Bands,
    Entries(Option<usize>),
    Flame,
}

/// Takes [`sections`] one at a time.
pub struct Decoder {
    want: Want,
    charts_left: usize,
    summary: Option<SnapshotSummary>,
    charts: Vec<(i64, MemoryChart)>,
    flames: Vec<PeakFlame>,
    bands_left: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            want: Want::Summary,
            charts_left: 0,
            summary: None,
            charts: Vec::new(),
            flames: Vec::new(),
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
            Want::Entries(left) => {
                let Some((_, c)) = self.charts.last_mut() else {
                    return Err(bad("entries before a chart"));
                };
                let rest = read_piece(&mut c.entry_x, *left, section)?;
                if rest == 0 {
                    self.want = Want::Flame;
                } else {
                    *left = Some(rest);
                }
            }
            Want::Flame => {
                let f: PeakFlame =
                    serde_json::from_slice(section).map_err(|e| bad(&e.to_string()))?;
                self.flames.push(f);
                self.charts_left -= 1;
                self.want = Want::Head;
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
            flames: self.flames,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

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
}
