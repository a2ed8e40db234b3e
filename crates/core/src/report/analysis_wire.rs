//! An [`Analysis`] as a list of sections, so the reader worker that built a model can compute its
//! analyses too and hand them to the page (issue 30: no task on the page's thread grows with the
//! trace; `Analysis::of` on a 100 MB trace is seconds). Each field is one section, the JSON of its
//! serde derives; the per-slice vectors (`autograd`'s, the modules' call frames, which the JSON
//! leaves out) are `model::wire` columns cut in pieces of [`PIECE`] values. The receiver decodes
//! one section per task ([`Decoder`]), so the largest task is one field's table, not the whole.
//!
//! Both ends are the same build; every read is checked, and bytes that do not decode are an error
//! (the page then computes the analysis itself), never a panic. A field whose JSON cannot come back
//! (a non-finite float is written as `null`) is such an error too.

use super::analysis::Analysis;
use crate::analysis::idle::IdleCauses;
use crate::analysis::per_step::PerStep;
use crate::error::Result;
use crate::model::wire::{bad, Get, Wire, PIECE};

/// The JSON fields, in section order. A `long` one holds lists that grow with the trace's steps
/// (a 10 GB trace's 172 K steps made each of them one section of 25-47 MB, a task of 130-270 ms on
/// the page): it goes as a shell, the field with those lists empty, then the lists in chunks of
/// about [`CHUNK_BYTES`] of JSON ([`Long`]).
macro_rules! json_fields {
    ($m:ident) => {
        $m!(path, short);
        $m!(events, short);
        $m!(ops, short);
        $m!(kernels, short);
        $m!(categories, short);
        $m!(gpu, short);
        $m!(temporal_hta, short);
        $m!(steps, long);
        $m!(memory, short);
        $m!(memory_ops, short);
        $m!(launch, short);
        $m!(sync, short);
        $m!(flops, short);
        $m!(idle, long);
        $m!(roofline, short);
        $m!(recommendations, short);
        $m!(rank, short);
        $m!(collectives, long);
        $m!(modules, short);
        $m!(sources, short);
        $m!(backward, short);
        $m!(graphs, short);
        $m!(health, short);
        $m!(per_step, long);
        $m!(warnings, short);
        $m!(info, short);
    };
}

/// How many JSON sections come first.
const JSON_SECTIONS: usize = {
    let mut n = 0;
    macro_rules! count {
        ($f:ident, $kind:ident) => {
            n += 1;
        };
    }
    json_fields!(count);
    n
};

/// The columns after the JSON, each in pieces: autograd's `bwd`, `fwd`, and its anchors' runs
/// (their starts, then their values).
fn column(a: &Analysis, c: usize) -> &[u32] {
    let (at, val, _) = a.autograd.anchor.runs();
    match c {
        0 => &a.autograd.bwd,
        1 => &a.autograd.fwd,
        2 => at,
        _ => val,
    }
}

const COLUMNS: usize = 4;

/// Every section of `a`, in order: the JSON fields, then a section of the other small values
/// (autograd's unmatched count, each module row's frames), then the columns' pieces.
pub fn sections(a: &Analysis) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    macro_rules! enc {
        ($f:ident, short) => {
            out.push(serde_json::to_vec(&a.$f).map_err(|e| bad(&e.to_string()))?);
        };
        ($f:ident, long) => {
            put_long(&a.$f, &mut out)?;
        };
    }
    json_fields!(enc);
    let mut rest = Vec::new();
    a.autograd.unmatched.put(&mut rest);
    a.autograd.anchor.runs().2.put(&mut rest);
    let frames: Vec<&[u32]> = a.modules.rows.iter().map(|r| r.frames.as_slice()).collect();
    (frames.len() as u32).put(&mut rest);
    for f in frames {
        (f.len() as u32).put(&mut rest);
        f.iter().for_each(|v| v.put(&mut rest));
    }
    out.push(rest);
    for c in 0..COLUMNS {
        let v = column(a, c);
        let mut chunks = v.chunks(PIECE);
        // The first piece carries the column's length; an empty column is one empty piece.
        let mut first = Vec::with_capacity(8 + 4 * v.len().min(PIECE));
        (v.len() as u32).put(&mut first);
        let head = chunks.next().unwrap_or_default();
        head.iter().for_each(|x| x.put(&mut first));
        out.push(first);
        for piece in chunks {
            let mut s = Vec::with_capacity(4 * piece.len());
            piece.iter().for_each(|x| x.put(&mut s));
            out.push(s);
        }
    }
    Ok(out)
}

/// JSON of one chunk of a long list, about.
const CHUNK_BYTES: usize = 256 << 10;

/// A field whose lists grow with the trace's steps ([`json_fields`]' `long` ones).
trait Long: Sized {
    /// The field with its lists empty, and each list's chunks.
    fn split(&self) -> Result<(Self, Vec<Vec<Vec<u8>>>)>;
    /// Each list's length.
    fn lens(&self) -> Vec<usize>;
    /// Makes room for lists of the announced lengths (fallibly: a corrupt length is an error).
    fn reserve(&mut self, lens: &[usize]) -> Result<()>;
    /// Appends a chunk of list `k`.
    fn append(&mut self, k: usize, chunk: &[u8]) -> Result<()>;
}

/// `v` as JSON arrays of about [`CHUNK_BYTES`] each (none for an empty list).
fn chunks<T: serde::Serialize>(v: &[T]) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    for x in v {
        cur.push(if cur.is_empty() { b'[' } else { b',' });
        serde_json::to_writer(&mut cur, x).map_err(|e| bad(&e.to_string()))?;
        if cur.len() >= CHUNK_BYTES {
            cur.push(b']');
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        cur.push(b']');
        out.push(cur);
    }
    Ok(out)
}

fn reserve<T>(v: &mut Vec<T>, n: Option<&usize>) -> Result<()> {
    let n = *n.ok_or_else(|| bad("an analysis list not announced"))?;
    *v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| bad("an analysis list longer than memory allows"))
}

/// Appends a chunk to `v`, within the room [`reserve`] made.
fn append<T: serde::de::DeserializeOwned>(v: &mut Vec<T>, chunk: &[u8]) -> Result<()> {
    let part: Vec<T> =
        serde_json::from_slice(chunk).map_err(|e| bad(&format!("an analysis chunk: {e}")))?;
    if part.len() > v.capacity() - v.len() {
        return Err(bad("an analysis chunk longer than its list"));
    }
    v.extend(part);
    Ok(())
}

impl<T: serde::Serialize + serde::de::DeserializeOwned> Long for Vec<T> {
    fn split(&self) -> Result<(Self, Vec<Vec<Vec<u8>>>)> {
        Ok((Vec::new(), vec![chunks(self)?]))
    }
    fn lens(&self) -> Vec<usize> {
        vec![self.len()]
    }
    fn reserve(&mut self, lens: &[usize]) -> Result<()> {
        reserve(self, lens.first())
    }
    fn append(&mut self, k: usize, chunk: &[u8]) -> Result<()> {
        match k {
            0 => append(self, chunk),
            _ => Err(bad("an analysis chunk of no list")),
        }
    }
}

impl Long for IdleCauses {
    fn split(&self) -> Result<(Self, Vec<Vec<Vec<u8>>>)> {
        let shell = IdleCauses {
            window_start_ns: self.window_start_ns,
            window_end_ns: self.window_end_ns,
            window_from_steps: self.window_from_steps,
            idle_ns: self.idle_ns,
            causes: self.causes.clone(),
            devices: self.devices.clone(),
            streams: self.streams.clone(),
            steps: Vec::new(),
            intervals: self.intervals.clone(),
        };
        Ok((shell, vec![chunks(&self.steps)?]))
    }
    fn lens(&self) -> Vec<usize> {
        vec![self.steps.len()]
    }
    fn reserve(&mut self, lens: &[usize]) -> Result<()> {
        reserve(&mut self.steps, lens.first())
    }
    fn append(&mut self, k: usize, chunk: &[u8]) -> Result<()> {
        match k {
            0 => append(&mut self.steps, chunk),
            _ => Err(bad("an analysis chunk of no list")),
        }
    }
}

impl Long for PerStep {
    fn split(&self) -> Result<(Self, Vec<Vec<Vec<u8>>>)> {
        let lists = vec![
            chunks(&self.steps)?,
            chunks(&self.ops)?,
            chunks(&self.kernels)?,
        ];
        Ok((PerStep::default(), lists))
    }
    fn lens(&self) -> Vec<usize> {
        vec![self.steps.len(), self.ops.len(), self.kernels.len()]
    }
    fn reserve(&mut self, lens: &[usize]) -> Result<()> {
        reserve(&mut self.steps, lens.first())?;
        reserve(&mut self.ops, lens.get(1))?;
        reserve(&mut self.kernels, lens.get(2))
    }
    fn append(&mut self, k: usize, chunk: &[u8]) -> Result<()> {
        match k {
            0 => append(&mut self.steps, chunk),
            1 => append(&mut self.ops, chunk),
            2 => append(&mut self.kernels, chunk),
            _ => Err(bad("an analysis chunk of no list")),
        }
    }
}

/// A long field's sections: its shell (how many lists; each one's length and chunk count; then
/// the JSON of the field with its lists empty), then every list's chunks in order.
fn put_long<L: Long + serde::Serialize>(f: &L, out: &mut Vec<Vec<u8>>) -> Result<()> {
    let (shell, lists) = f.split()?;
    let mut head = Vec::new();
    (lists.len() as u32).put(&mut head);
    for (n, c) in f.lens().into_iter().zip(&lists) {
        (n as u32).put(&mut head);
        (c.len() as u32).put(&mut head);
    }
    serde_json::to_writer(&mut head, &shell).map_err(|e| bad(&e.to_string()))?;
    out.push(head);
    out.extend(lists.into_iter().flatten());
    Ok(())
}

/// A shell's lists' lengths, their chunks still to come (list, count) and its JSON.
type Shell<'a> = (
    Vec<usize>,
    std::collections::VecDeque<(usize, usize)>,
    &'a [u8],
);

fn shell(section: &[u8]) -> Result<Shell<'_>> {
    let mut g = Get::new(section);
    let m = g.count()?;
    let mut lens = Vec::with_capacity(m);
    let mut chunks = std::collections::VecDeque::new();
    for k in 0..m {
        lens.push(u32::get(&mut g)? as usize);
        let c = u32::get(&mut g)? as usize;
        if c > 0 {
            chunks.push_back((k, c));
        }
    }
    let json = g.take(section.len() - 4 * (1 + 2 * m))?;
    Ok((lens, chunks, json))
}

/// Cuts the lists that grow with the trace's steps and calls to their length. JSON carries no
/// lengths, so serde grows each list by doubling: up to half of each was spare, and the page keeps
/// the analysis for the session. Done after each section, so the next one reuses what is freed.
fn fit(a: &mut Analysis) {
    a.steps.shrink_to_fit();
    a.collectives.shrink_to_fit();
    a.idle.steps.shrink_to_fit();
    let p = &mut a.per_step;
    p.steps.shrink_to_fit();
    for d in p.ops.iter_mut().chain(p.kernels.iter_mut()) {
        d.per_step_ns.shrink_to_fit();
    }
    p.ops.shrink_to_fit();
    p.kernels.shrink_to_fit();
}

/// Rebuilds an [`Analysis`] from [`sections`], one section per [`Decoder::push`].
#[derive(Default)]
pub struct Decoder {
    a: Analysis,
    /// The columns as they arrive ([`column`]'s order); the anchors' runs are checked at the end.
    cols: [Vec<u32>; COLUMNS],
    /// How many slices the anchors cover.
    anchor_len: u32,
    /// JSON fields read so far (their shells, for long ones).
    field: usize,
    /// Of the last long field read: its lists' announced lengths, and the chunks still to come,
    /// as (list, chunks), in order.
    lens: Vec<usize>,
    chunks: std::collections::VecDeque<(usize, usize)>,
    /// Whether the section after the JSON fields was read.
    rest: bool,
    /// The column being read and how many of its values are still to come (`None` before its
    /// first piece).
    col: usize,
    left: Option<usize>,
}

impl Decoder {
    /// Reads the next section.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        if let Some((list, n)) = self.chunks.front_mut() {
            let list = *list;
            *n -= 1;
            if *n == 0 {
                self.chunks.pop_front();
            }
            return self.chunk(list, section);
        }
        let k = self.field;
        if k < JSON_SECTIONS {
            self.field += 1;
            let mut i = 0;
            macro_rules! dec {
                ($f:ident, short) => {
                    if i == k {
                        self.a.$f = serde_json::from_slice(section)
                            .map_err(|e| bad(&format!("analysis {}: {e}", stringify!($f))))?;
                        fit(&mut self.a);
                        return Ok(());
                    }
                    i += 1;
                };
                ($f:ident, long) => {
                    if i == k {
                        let (lens, chunks, json) = shell(section)?;
                        self.a.$f = serde_json::from_slice(json)
                            .map_err(|e| bad(&format!("analysis {}: {e}", stringify!($f))))?;
                        Long::reserve(&mut self.a.$f, &lens)?;
                        self.lens = lens;
                        self.chunks = chunks;
                        return self.lists_done(k);
                    }
                    i += 1;
                };
            }
            json_fields!(dec);
            let _ = i;
            return Err(bad("analysis section out of order"));
        }
        if !self.rest {
            self.rest = true;
            return self.rest(section);
        }
        self.piece(section)
    }

    /// A chunk of list `list` of the long field read last.
    fn chunk(&mut self, list: usize, section: &[u8]) -> Result<()> {
        let k = self.field - 1;
        let mut i = 0;
        macro_rules! app {
            ($f:ident, short) => {
                i += 1;
            };
            ($f:ident, long) => {
                if i == k {
                    Long::append(&mut self.a.$f, list, section)?;
                    return self.lists_done(k);
                }
                i += 1;
            };
        }
        json_fields!(app);
        let _ = i;
        Err(bad("an analysis chunk of a field without lists"))
    }

    /// After a long field's shell or chunk: once its last chunk is in, its lists hold what was
    /// announced.
    fn lists_done(&self, k: usize) -> Result<()> {
        if !self.chunks.is_empty() {
            return Ok(());
        }
        let mut i = 0;
        macro_rules! lens {
            ($f:ident, short) => {
                i += 1;
            };
            ($f:ident, long) => {
                if i == k {
                    return if Long::lens(&self.a.$f) == self.lens {
                        Ok(())
                    } else {
                        Err(bad("an analysis list of another length than announced"))
                    };
                }
                i += 1;
            };
        }
        json_fields!(lens);
        let _ = i;
        Ok(())
    }

    /// The unmatched count and the modules' frames.
    fn rest(&mut self, section: &[u8]) -> Result<()> {
        let mut g = Get::new(section);
        self.a.autograd.unmatched = u64::get(&mut g)?;
        self.anchor_len = u32::get(&mut g)?;
        let rows = g.count()?;
        if rows != self.a.modules.rows.len() {
            return Err(bad("module frames for another number of modules"));
        }
        for r in &mut self.a.modules.rows {
            let n = g.count()?;
            r.frames = (0..n).map(|_| u32::get(&mut g)).collect::<Result<_>>()?;
        }
        g.done()
    }

    /// A piece of a column.
    fn piece(&mut self, section: &[u8]) -> Result<()> {
        if self.col >= COLUMNS {
            return Err(bad("more analysis sections than columns"));
        }
        let mut g = Get::new(section);
        let left = match self.left {
            Some(l) => l,
            None => u32::get(&mut g)? as usize,
        };
        let here = left.min(PIECE);
        let Some(col) = self.cols.get_mut(self.col) else {
            return Err(bad("more analysis sections than columns"));
        };
        // One piece at a time, at its size (a corrupt count is no huge allocation, and the
        // column ends at its length, not at the next power of two).
        col.reserve_exact(here);
        for _ in 0..here {
            col.push(u32::get(&mut g)?);
        }
        g.done()?;
        let left = left - here;
        if left == 0 {
            self.col += 1;
            self.left = None;
        } else {
            self.left = Some(left);
        }
        Ok(())
    }

    /// The analysis, once every section was read.
    pub fn finish(self) -> Result<Analysis> {
        if self.field < JSON_SECTIONS
            || !self.chunks.is_empty()
            || !self.rest
            || self.col != COLUMNS
        {
            return Err(bad("analysis sections missing"));
        }
        let mut a = self.a;
        let [bwd, fwd, at, val] = self.cols;
        (a.autograd.bwd, a.autograd.fwd) = (bwd, fwd);
        a.autograd.anchor = crate::analysis::autograd::Anchors::from_runs(at, val, self.anchor_len)
            .ok_or_else(|| bad("autograd anchors that are not runs"))?;
        Ok(a)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::analysis::autograd::Anchors;

    #[test]
    fn columns_cut_in_pieces_come_back() {
        let mut a = Analysis::default();
        let dense: Vec<u32> = (0..(2 * PIECE as u32 + 5)).collect();
        a.autograd.anchor = Anchors::from_dense(&dense);
        a.autograd.bwd = vec![3, 9];
        a.autograd.unmatched = 7;
        let s = sections(&a).unwrap();
        // JSON fields, the rest, bwd (1), fwd (1, empty), the runs' starts and values (3 each).
        assert_eq!(s.len(), JSON_SECTIONS + 1 + 1 + 1 + 3 + 3);
        let mut d = Decoder::default();
        for x in &s {
            d.push(x).unwrap();
        }
        let b = d.finish().unwrap();
        assert_eq!(b.autograd.anchor, a.autograd.anchor);
        assert_eq!(b.autograd.anchor.get(PIECE + 1), PIECE as u32 + 1);
        assert_eq!(b.autograd.bwd, vec![3, 9]);
        assert!(b.autograd.fwd.is_empty());
        assert_eq!(b.autograd.unmatched, 7);
    }

    #[test]
    fn missing_or_damaged_sections_are_errors() {
        let a = Analysis::default();
        let s = sections(&a).unwrap();
        let mut d = Decoder::default();
        for x in &s[..s.len() - 1] {
            d.push(x).unwrap();
        }
        assert!(d.finish().is_err());
        let mut d = Decoder::default();
        assert!(d.push(b"{not json").is_err());
        // A non-finite figure is written as null and does not come back: an error, not a panic.
        let mut a = Analysis::default();
        a.gpu.devices.push(crate::analysis::gpu::DeviceUtil {
            device: 0,
            busy_ns: 0,
            utilization: f64::NAN,
        });
        let s = sections(&a).unwrap();
        let mut d = Decoder::default();
        assert!(s.iter().try_for_each(|x| d.push(x)).is_err());
    }
}
