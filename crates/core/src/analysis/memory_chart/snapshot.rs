//! A snapshot device's active-memory chart: memory_viz's layout of the largest allocations as
//! stacked bands over the replay of its trace, the rest summarized, the reserved line and the
//! markers (the parent module's doc says what each part means).

use super::{monotonic, Band, BandKind, Line, Marker, MarkerKind, MemoryChart, XUnit};
use crate::analysis::snapshot::{replay, Replay};
use crate::ingest::snapshot::{Action, Snapshot};

/// The active-memory chart of one snapshot device (see the module doc).
pub fn snapshot_chart(s: &Snapshot, device: i64, max_bands: usize) -> MemoryChart {
    let segments = s.trace(device).is_some_and(|t| {
        t.action
            .iter()
            .any(|a| matches!(a, Action::SegmentAlloc | Action::SegmentFree))
    });
    let seg = segments.then(|| replay(s, device, true));
    snapshot_chart_in(
        s,
        device,
        max_bands,
        &replay(s, device, false),
        seg.as_ref(),
    )
}

/// [`snapshot_chart`] from the device's allocation replay (`replay(s, device, false)`) and, where
/// its trace has segment actions, its segment replay (`replay(s, device, true)`), made before.
pub fn snapshot_chart_in(
    s: &Snapshot,
    device: i64,
    max_bands: usize,
    r: &Replay,
    seg: Option<&Replay>,
) -> MemoryChart {
    let t = s.trace(device);
    let n = t.map_or(0, |t| t.len());
    let timed = n > 0 && t.is_some_and(|t| t.time_us.iter().all(|v| v.is_some()));
    let mut xs: Vec<i64> = (0..=n)
        .map(|i| {
            if timed {
                t.and_then(|t| t.time_us.get(i).copied().flatten())
                    .map_or(i64::MIN, |us| us.saturating_mul(1000))
            } else {
                i as i64
            }
        })
        .collect();
    if timed {
        // One past the last entry: the last instant plus 1 µs, so the last action has a width.
        xs[n] = xs[n - 1].saturating_add(1000);
        monotonic(&mut xs);
    }
    let x_of = |i: usize| xs.get(i).copied().unwrap_or(0);
    let x0 = x_of(0);
    let x_end = x_of(n);

    // The `max_bands` largest (ties: the earlier first): a selection, not a sort of every
    // element (2.8 M on the 1 GB snapshot; the sort's random reads were most of the chart's time).
    // The order is total, so the set is the sort's first `max_bands`.
    let mut order: Vec<(u64, usize)> = r
        .elements
        .iter()
        .enumerate()
        .map(|(i, e)| (e.size, i))
        .collect();
    let by = |a: &(u64, usize), b: &(u64, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
    if max_bands < order.len() {
        if max_bands > 0 {
            order.select_nth_unstable_by(max_bands - 1, by);
        }
        order.truncate(max_bands);
    }
    let mut drawn = vec![false; r.elements.len()];
    for &(_, e) in &order {
        drawn[e] = true;
    }
    let mut chart = MemoryChart {
        unit: if timed { XUnit::Ns } else { XUnit::Index },
        epoch: timed,
        x_range: (0, 1),
        y_max: 1,
        bands: Vec::new(),
        lines: Vec::new(),
        markers: Vec::new(),
        peak: (x0, 0),
        entry_x: xs.get(..n).map_or_else(Vec::new, <[i64]>::to_vec),
    };
    // Bands by element; `stack` holds band indices of live drawn elements, bottom first.
    let mut band_of: Vec<Option<usize>> = vec![None; r.elements.len()];
    let mut stack: Vec<usize> = Vec::new();
    let mut total_drawn = 0u64;
    let mut summarized = 0u64;
    let mut summarized_count = 0u64;
    let mut live = vec![false; r.elements.len()];
    let mut bands: Vec<Band> = Vec::new();
    let add = |e: usize, x: i64, bands: &mut Vec<Band>, total_drawn: &mut u64| {
        let el = &r.elements[e];
        bands.push(Band::new(
            BandKind::Alloc {
                addr: el.addr,
                size: el.size,
                stack: el.stack,
                alloc_index: el.start,
                free_index: el.end,
            },
            x,
            *total_drawn,
            total_drawn.saturating_add(el.size),
        ));
        *total_drawn = total_drawn.saturating_add(el.size);
        bands.len() - 1
    };
    // Pre-existing elements: live from the start.
    for (e, el) in r.elements.iter().enumerate() {
        if el.start.is_none() {
            live[e] = true;
            if drawn[e] {
                let b = add(e, x0, &mut bands, &mut total_drawn);
                band_of[e] = Some(b);
                stack.push(b);
            } else {
                summarized = summarized.saturating_add(el.size);
                summarized_count += 1;
            }
        }
    }
    let mut summ = Band::new(
        BandKind::Summarized { count: 0 },
        x0,
        total_drawn,
        total_drawn.saturating_add(summarized),
    );
    for (k, &(i, _)) in r.series.iter().enumerate() {
        let Some(&e) = r.acted.get(k) else { break };
        let e = e as usize;
        let x = x_of(i);
        let size = r.elements[e].size;
        if live[e] {
            live[e] = false;
            if let Some(b) = band_of[e] {
                if let Some(pos) = stack.iter().position(|&v| v == b) {
                    stack.remove(pos);
                    for &above in &stack[pos..] {
                        let band = &mut bands[above];
                        let (lo, hi) = (
                            band.lo.last().copied().unwrap_or(0),
                            band.hi.last().copied().unwrap_or(0),
                        );
                        band.push(x, lo.saturating_sub(size), hi.saturating_sub(size));
                    }
                }
                bands[b].end = x;
                total_drawn = total_drawn.saturating_sub(size);
            } else {
                summarized = summarized.saturating_sub(size);
            }
        } else if r.elements[e].start == Some(i) {
            live[e] = true;
            if drawn[e] {
                let b = add(e, x, &mut bands, &mut total_drawn);
                band_of[e] = Some(b);
                stack.push(b);
            } else {
                summarized = summarized.saturating_add(size);
                summarized_count += 1;
            }
        }
        summ.push(x, total_drawn, total_drawn.saturating_add(summarized));
        let total = total_drawn.saturating_add(summarized);
        if total > chart.peak.1 {
            chart.peak = (x, total);
        }
    }
    if r.series.is_empty() || r.acted.is_empty() {
        chart.peak = (x0, total_drawn.saturating_add(summarized));
    }
    // Saturating: trace times past i64::MAX ns put x0 at the ceiling.
    for &b in &stack {
        bands[b].end = x_end.max(bands[b].start().saturating_add(1));
    }
    summ.end = x_end.max(x0.saturating_add(1));
    summ.kind = BandKind::Summarized {
        count: summarized_count,
    };
    bands.push(summ);
    chart.bands = bands;

    if let Some(t) = t {
        let has_segments = t
            .action
            .iter()
            .any(|a| matches!(a, Action::SegmentAlloc | Action::SegmentFree));
        if let (true, Some(seg)) = (has_segments, seg) {
            let mut line = Line {
                name: "reserved",
                x: vec![x0],
                y: vec![seg.preexisting_bytes],
                end: x_end,
            };
            for &(i, v) in &seg.series {
                let x = x_of(i);
                if line.x.last() == Some(&x) {
                    if let Some(l) = line.y.last_mut() {
                        *l = v;
                    }
                } else {
                    line.x.push(x);
                    line.y.push(v);
                }
            }
            chart.lines.push(line);
        }
        for i in 0..t.len() {
            if t.action[i] == Action::Oom {
                chart.markers.push(Marker {
                    kind: MarkerKind::Oom,
                    x: x_of(i),
                    bytes: t.size[i],
                    label: format!(
                        "OOM: requested {} B, {} B free on device",
                        t.size[i], t.device_free[i]
                    ),
                });
            }
        }
    }
    chart.markers.push(Marker {
        kind: MarkerKind::Peak,
        x: chart.peak.0,
        bytes: chart.peak.1,
        label: "peak active".into(),
    });
    chart.finish();
    chart
}
