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
use crate::error::Result;
use crate::model::wire::{bad, Get, Wire, PIECE};

/// The JSON fields, in section order.
macro_rules! json_fields {
    ($m:ident) => {
        $m!(path);
        $m!(events);
        $m!(ops);
        $m!(kernels);
        $m!(categories);
        $m!(gpu);
        $m!(temporal_hta);
        $m!(steps);
        $m!(memory);
        $m!(memory_ops);
        $m!(launch);
        $m!(sync);
        $m!(flops);
        $m!(idle);
        $m!(roofline);
        $m!(recommendations);
        $m!(rank);
        $m!(collectives);
        $m!(modules);
        $m!(sources);
        $m!(backward);
        $m!(graphs);
        $m!(health);
        $m!(per_step);
        $m!(warnings);
        $m!(info);
    };
}

/// How many JSON sections come first.
const JSON_SECTIONS: usize = {
    let mut n = 0;
    macro_rules! count {
        ($f:ident) => {
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
        ($f:ident) => {
            out.push(serde_json::to_vec(&a.$f).map_err(|e| bad(&e.to_string()))?);
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
    /// Sections read so far.
    k: usize,
    /// The column being read and how many of its values are still to come (`None` before its
    /// first piece).
    col: usize,
    left: Option<usize>,
}

impl Decoder {
    /// Reads the next section.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        let k = self.k;
        self.k += 1;
        if k < JSON_SECTIONS {
            let mut i = 0;
            macro_rules! dec {
                ($f:ident) => {
                    if i == k {
                        self.a.$f = serde_json::from_slice(section)
                            .map_err(|e| bad(&format!("analysis {}: {e}", stringify!($f))))?;
                        fit(&mut self.a);
                        return Ok(());
                    }
                    i += 1;
                };
            }
            json_fields!(dec);
            let _ = i;
            return Err(bad("analysis section out of order"));
        }
        if k == JSON_SECTIONS {
            return self.rest(section);
        }
        self.piece(section)
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
        if self.k <= JSON_SECTIONS || self.col != COLUMNS {
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
