//! The timeline's parts beside its level-of-detail index (counter tracks, track groups, step
//! marks, the scope picker's annotation names, the time bounds), and the same as a list of
//! sections, so the reader worker that built a model computes them and the page only decodes
//! them (issue 30): on a 10 GB trace each was a pass of 60-570 ms over 20 M slices on the page's
//! thread, one task each. The long lists (a counter's samples, a utilization track's intervals,
//! the step marks) go as `model::wire` columns in pieces of [`PIECE`] values, so the page decodes
//! one piece per task; a counter's pyramid and prefix sums are rebuilt there (one pass each)
//! rather than sent.
//!
//! Both ends are the same build; every read is checked, and bytes that do not decode, or parts
//! that do not fit the trace they came with ([`TimelineParts::fits`]), are an error (the page then
//! computes them itself), never a panic.

use crate::analysis::scope::annotation_names;
use crate::error::Result;
use crate::model::wire::{bad, read_piece, Get, Wire, PIECE};
use crate::model::Trace;
use crate::view::counters::{
    counter_tracks, BusySeries, CounterTrack, PyramidBuild, SeriesData, StepSeries, Unit,
};
use crate::view::layout::{groups, Group};
use crate::view::steps::{step_marks, StepMark};

/// What the timeline precomputes besides its LOD index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineParts {
    pub counters: Vec<CounterTrack>,
    pub groups: Vec<Group>,
    pub steps: Vec<StepMark>,
    /// The scope picker's annotation names (`analysis::scope::annotation_names`: name, count,
    /// total ns).
    pub annotations: Vec<(String, u32, i64)>,
    /// First and last instant of the trace; the ruler's zero is `bounds.0`.
    pub bounds: (i64, i64),
}

impl TimelineParts {
    pub fn of(t: &Trace) -> TimelineParts {
        let counters = counter_tracks(t);
        let groups = groups(t, &counters);
        TimelineParts {
            counters,
            groups,
            steps: step_marks(t),
            annotations: annotation_names(t),
            bounds: t.time_bounds().unwrap_or((0, 1)),
        }
    }

    /// Whether every track, counter and slice these parts name is one of `t`'s: the page indexes
    /// the trace with them.
    pub fn fits(&self, t: &Trace) -> bool {
        let tracks = t.tracks.len();
        let groups_fit = self.groups.iter().all(|g| {
            g.tracks.iter().chain(&g.idle).all(|&i| i < tracks)
                && g.counters.iter().all(|&c| c < self.counters.len())
        });
        groups_fit
            && self
                .steps
                .iter()
                .all(|m| (m.slice as usize) < t.slices.len())
    }
}

/// Kinds of counter data on the wire.
const STEP: u8 = 0;
const BUSY: u8 = 1;

fn unit_tag(u: Unit) -> u8 {
    match u {
        Unit::Bytes => 0,
        Unit::Fraction => 1,
        Unit::Plain => 2,
    }
}

fn unit_of(tag: u8) -> Result<Unit> {
    match tag {
        0 => Ok(Unit::Bytes),
        1 => Ok(Unit::Fraction),
        2 => Ok(Unit::Plain),
        _ => Err(bad("a counter's unit")),
    }
}

fn put_usizes(v: &[usize], out: &mut Vec<u8>) {
    (v.len() as u32).put(out);
    v.iter().for_each(|&x| (x as u32).put(out));
}

fn get_usizes(g: &mut Get<'_>) -> Result<Vec<usize>> {
    let n = g.count()?;
    (0..n).map(|_| u32::get(g).map(|x| x as usize)).collect()
}

/// Piece `i` of a column of `n` values, value `k` being `at(k)`: its values `i·PIECE..`, after
/// the column's length in the first piece (as `model::wire::column_piece` cuts a model's columns).
fn piece<T: Wire>(n: usize, i: usize, at: impl Fn(usize) -> T) -> Vec<u8> {
    let (lo, hi) = ((i * PIECE).min(n), (i * PIECE + PIECE).min(n));
    let part: Vec<T> = (lo..hi).map(at).collect();
    let mut s = Vec::with_capacity(8 + std::mem::size_of::<T>() * part.len());
    if i == 0 {
        (n as u32).put(&mut s);
    }
    (part.len() as u32).put(&mut s);
    T::put_many(&part, &mut s);
    s
}

/// The columns after the head, in order, each as (counter, column): a counter's two, then the step
/// marks' four (counter `None`).
fn columns(p: &TimelineParts) -> impl Iterator<Item = (Option<&CounterTrack>, usize)> {
    p.counters
        .iter()
        .flat_map(|c| [(Some(c), 0), (Some(c), 1)])
        .chain((0..4).map(|k| (None, k)))
}

/// Values in column `col` of counter `c` (the step marks' for `None`).
fn column_len(p: &TimelineParts, c: Option<&CounterTrack>) -> usize {
    match c.map(|c| &c.data) {
        Some(SeriesData::Step(s)) => s.ts.len(),
        Some(SeriesData::Busy(b)) => b.intervals().len(),
        None => p.steps.len(),
    }
}

/// How many sections [`section`] gives for `p`.
pub fn section_count(p: &TimelineParts) -> usize {
    1 + columns(p)
        .map(|(c, _)| column_len(p, c).div_ceil(PIECE).max(1))
        .sum::<usize>()
}

/// Every section of `p` ([`section`] one after the other).
pub fn sections(p: &TimelineParts) -> Vec<Vec<u8>> {
    (0..section_count(p))
        .filter_map(|k| section(p, k))
        .collect()
}

/// Section `k` of `p`, made when asked (a reader worker holds one at a time, not a copy of every
/// counter): first a head (bounds, annotation names, groups, each counter's label, unit, maximum
/// and kind), then each counter's two columns in pieces (a step series' times and values, a busy
/// series' starts and ends), then the step marks' starts, ends, slices and numbers. `None` past
/// the last.
pub fn section(p: &TimelineParts, k: usize) -> Option<Vec<u8>> {
    let Some(mut k) = k.checked_sub(1) else {
        return Some(head(p));
    };
    for (c, col) in columns(p) {
        let n = column_len(p, c);
        let pieces = n.div_ceil(PIECE).max(1);
        if k >= pieces {
            k -= pieces;
            continue;
        }
        let m = &p.steps;
        return Some(match (c.map(|c| &c.data), col) {
            (Some(SeriesData::Step(s)), 0) => piece(n, k, |i| s.ts[i]),
            (Some(SeriesData::Step(s)), _) => piece(n, k, |i| s.value[i]),
            (Some(SeriesData::Busy(b)), 0) => piece(n, k, |i| b.intervals()[i].0),
            (Some(SeriesData::Busy(b)), _) => piece(n, k, |i| b.intervals()[i].1),
            (None, 0) => piece(n, k, |i| m[i].start),
            (None, 1) => piece(n, k, |i| m[i].end),
            (None, 2) => piece(n, k, |i| m[i].slice),
            (None, _) => piece(n, k, |i| m[i].number),
        });
    }
    None
}

fn head(p: &TimelineParts) -> Vec<u8> {
    let mut head = Vec::new();
    p.bounds.put(&mut head);
    (p.annotations.len() as u32).put(&mut head);
    for (name, n, ns) in &p.annotations {
        name.put(&mut head);
        n.put(&mut head);
        ns.put(&mut head);
    }
    (p.groups.len() as u32).put(&mut head);
    for g in &p.groups {
        g.label.put(&mut head);
        put_usizes(&g.tracks, &mut head);
        put_usizes(&g.idle, &mut head);
        put_usizes(&g.counters, &mut head);
    }
    (p.counters.len() as u32).put(&mut head);
    for c in &p.counters {
        c.label.put(&mut head);
        unit_tag(c.unit).put(&mut head);
        c.max.put(&mut head);
        match c.data {
            SeriesData::Step(_) => STEP,
            SeriesData::Busy(_) => BUSY,
        }
        .put(&mut head);
    }
    head
}

/// One piece of a column, as [`read_piece`] reads it, into `out` alone (cleared first), without
/// reserving the whole column there: the column's length when this is its first piece (`left`
/// `None`), and the values still to come.
fn piece_apart(
    left: Option<usize>,
    section: &[u8],
    out: &mut Vec<i64>,
) -> Result<(Option<usize>, usize)> {
    let mut g = Get::new(section);
    let (total, left) = match left {
        Some(n) => (None, n),
        None => {
            let n = u32::get(&mut g)? as usize;
            (Some(n), n)
        }
    };
    let n = g.count()?;
    if n > left || (n == 0 && left > 0) {
        return Err(bad("a column piece that does not fit its column"));
    }
    out.clear();
    i64::get_many(&mut g, n, out)?;
    g.done()?;
    Ok((total, left - n))
}

/// A counter named in the head, its columns still to come.
struct Pending {
    label: String,
    unit: Unit,
    max: f64,
    kind: u8,
}

/// Rebuilds [`TimelineParts`] from [`sections`], one section per [`Decoder::push`]. What depends on
/// a whole column (a step series' pyramid, a busy series' prefix sums, the order checks, the
/// marks' labels) is made a piece at a time as the pieces come, so no push goes over more than a
/// piece (a 10 GB trace's memory series of 1.4 M samples had a pyramid of one task of 50-75 ms).
#[derive(Default)]
pub struct Decoder {
    p: TimelineParts,
    head: bool,
    pending: Vec<Pending>,
    /// The counter whose columns are being read (the step marks' at `pending.len()`), and which of
    /// its columns.
    at: usize,
    col: usize,
    /// Values of the column being read still to come; `None` before its first piece.
    left: Option<usize>,
    /// The piece just read.
    piece: Vec<i64>,
    /// A step series' times or the marks' starts; a step series' values and their pyramid; a busy
    /// series' intervals (starts, then ends written into them), its prefix sums and busy time so
    /// far; the marks' ends, slices and numbers.
    ts: Vec<i64>,
    values: Vec<f64>,
    pyramid: Option<PyramidBuild>,
    iv: Vec<(i64, i64)>,
    /// Of `iv`, the intervals whose ends are in.
    ends_in: usize,
    prefix: Vec<i64>,
    busy: i64,
    ends: Vec<i64>,
    slices: Vec<u32>,
    numbers: Vec<i64>,
}

/// A piece is `2^PIECE_LOG` values.
const PIECE_LOG: u32 = PIECE.trailing_zeros();

impl Decoder {
    /// Reads the next section.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        if !self.head {
            self.head = true;
            return self.read_head(section);
        }
        let kind = match self.pending.get(self.at) {
            Some(c) => Some(c.kind),
            None if self.at == self.pending.len() => None,
            None => return Err(bad("more timeline sections than announced")),
        };
        let left = match (kind, self.col) {
            (Some(STEP) | None, 0) => {
                let from = self.ts.len().saturating_sub(1);
                let left = read_piece(&mut self.ts, self.left, section)?;
                if kind.is_some() && self.ts[from..].windows(2).any(|w| w[0] > w[1]) {
                    return Err(bad("a counter's samples out of order"));
                }
                left
            }
            (Some(STEP), 1) => {
                let from = self.values.len();
                let left = read_piece(&mut self.values, self.left, section)?;
                let got = &self.values[from..];
                if left > 0 && got.len() != PIECE {
                    return Err(bad("a counter's values in uneven pieces"));
                }
                self.pyramid
                    .get_or_insert_with(|| PyramidBuild::new(PIECE_LOG))
                    .push(got);
                left
            }
            (Some(_), c) => self.busy_piece(c, section)?,
            (None, 1) => read_piece(&mut self.ends, self.left, section)?,
            (None, 2) => read_piece(&mut self.slices, self.left, section)?,
            (None, _) => {
                let from = self.numbers.len();
                let left = read_piece(&mut self.numbers, self.left, section)?;
                self.marks_from(from)?;
                left
            }
        };
        if left > 0 {
            self.left = Some(left);
            return Ok(());
        }
        self.left = None;
        self.column_done()
    }

    /// A piece of a busy series' starts (column 0) or ends (1), read into its intervals; with
    /// the ends, the intervals checked and their prefix sums made.
    fn busy_piece(&mut self, col: usize, section: &[u8]) -> Result<usize> {
        let (total, left) = piece_apart(self.left, section, &mut self.piece)?;
        if let Some(n) = total {
            if col == 0 {
                self.iv = Vec::new();
                self.iv
                    .try_reserve_exact(n)
                    .map_err(|_| bad("a column longer than memory allows"))?;
                self.prefix = vec![0];
                self.busy = 0;
            } else if n != self.iv.len() {
                return Err(bad("a busy series' starts and ends of different lengths"));
            }
        }
        if col == 0 {
            self.iv.extend(self.piece.iter().map(|&s| (s, s)));
            return Ok(left);
        }
        if left > 0 && self.piece.len() != PIECE {
            return Err(bad("a busy series in uneven pieces"));
        }
        let from = self.ends_in;
        let to = from + self.piece.len();
        let done = self.iv.get_mut(from..to).unwrap_or_default();
        for (x, &e) in done.iter_mut().zip(&self.piece) {
            x.1 = e;
        }
        let ordered = self.iv[from..to].iter().all(|x| x.0 <= x.1)
            && self.iv[from.saturating_sub(1)..to]
                .windows(2)
                .all(|w| w[0].1 < w[1].0);
        if !ordered {
            return Err(bad("a busy series' intervals out of order"));
        }
        self.busy = BusySeries::prefix_of(&self.iv[from..to], self.busy, &mut self.prefix);
        self.ends_in = to;
        Ok(left)
    }

    /// A column is complete: the next one, or the counter (or the marks) made from its columns.
    fn column_done(&mut self) -> Result<()> {
        let Some(c) = self.pending.get(self.at) else {
            if self.col < 3 {
                self.col += 1;
                return Ok(());
            }
            return self.marks_done();
        };
        if self.col == 0 {
            self.col = 1;
            return Ok(());
        }
        let (kind, unit, max) = (c.kind, c.unit, c.max);
        let data = if kind == STEP {
            let (ts, values) = (
                std::mem::take(&mut self.ts),
                std::mem::take(&mut self.values),
            );
            if ts.len() != values.len() {
                return Err(bad("a counter's samples unpaired"));
            }
            let pyramid = self
                .pyramid
                .take()
                .unwrap_or_else(|| PyramidBuild::new(PIECE_LOG));
            SeriesData::Step(StepSeries::with_pyramid(ts, values, pyramid))
        } else {
            let (iv, prefix) = (
                std::mem::take(&mut self.iv),
                std::mem::take(&mut self.prefix),
            );
            if self.ends_in != iv.len() {
                return Err(bad("a busy series' ends missing"));
            }
            self.ends_in = 0;
            SeriesData::Busy(
                BusySeries::from_prefix(iv, prefix)
                    .ok_or_else(|| bad("a busy series' prefix sums"))?,
            )
        };
        self.p.counters.push(CounterTrack {
            label: std::mem::take(&mut self.pending[self.at].label),
            unit,
            max,
            data,
        });
        self.at += 1;
        self.col = 0;
        Ok(())
    }

    /// The marks whose numbers came in the piece from `from`.
    fn marks_from(&mut self, from: usize) -> Result<()> {
        let n = self.numbers.len();
        if [self.ts.len(), self.ends.len(), self.slices.len()]
            .iter()
            .any(|&c| c < n)
        {
            return Err(bad("step marks of unequal columns"));
        }
        if from == 0 {
            self.p.steps = Vec::with_capacity(self.ts.len());
        }
        self.p.steps.extend((from..n).map(|i| StepMark {
            start: self.ts[i],
            end: self.ends[i],
            label: format!("#{}", self.numbers[i]),
            slice: self.slices[i],
            number: self.numbers[i],
        }));
        Ok(())
    }

    fn marks_done(&mut self) -> Result<()> {
        let n = self.ts.len();
        if [
            self.ends.len(),
            self.slices.len(),
            self.numbers.len(),
            self.p.steps.len(),
        ] != [n; 4]
        {
            return Err(bad("step marks of unequal columns"));
        }
        self.at += 1;
        Ok(())
    }

    fn read_head(&mut self, section: &[u8]) -> Result<()> {
        let g = &mut Get::new(section);
        let p = &mut self.p;
        p.bounds = <(i64, i64)>::get(g)?;
        let n = g.count()?;
        p.annotations = (0..n)
            .map(|_| Ok((String::get(g)?, u32::get(g)?, i64::get(g)?)))
            .collect::<Result<_>>()?;
        let n = g.count()?;
        p.groups = (0..n)
            .map(|_| {
                Ok(Group {
                    label: String::get(g)?,
                    tracks: get_usizes(g)?,
                    idle: get_usizes(g)?,
                    counters: get_usizes(g)?,
                })
            })
            .collect::<Result<_>>()?;
        let n = g.count()?;
        self.pending = (0..n)
            .map(|_| {
                let label = String::get(g)?;
                let unit = unit_of(u8::get(g)?)?;
                let max = f64::get(g)?;
                match u8::get(g)? {
                    k @ (STEP | BUSY) => Ok(Pending {
                        label,
                        unit,
                        max,
                        kind: k,
                    }),
                    _ => Err(bad("a counter's kind")),
                }
            })
            .collect::<Result<_>>()?;
        g.done()
    }

    /// The parts, once every announced section was read.
    pub fn finish(self) -> Result<TimelineParts> {
        if !self.head || self.at != self.pending.len() + 1 {
            return Err(bad("timeline sections missing"));
        }
        Ok(self.p)
    }
}
