//! A trace as sections: the small tables, each column in pieces of at most [`PIECE`] values, the
//! args arena's keys and blocks; and the decoder that takes them back one at a time.

use super::check::Checked;
use super::{bad, put_bytes, Get, Wire};
use crate::error::Result;
use crate::model::args::ArgsArena;
use crate::model::ids::Ids;
use crate::model::strings::Interner;
use crate::model::trace::*;
use crate::warnings::Warnings;

/// The small tables of a trace: strings, metadata, processes, tracks, warnings, counts.
fn head(t: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    t.strings.put(&mut out);
    t.meta.put(&mut out);
    t.processes.put(&mut out);
    t.tracks.put(&mut out);
    t.warnings.put(&mut out);
    t.event_count.put(&mut out);
    t.bytes_read.put(&mut out);
    out
}

fn read_head(t: &mut Trace, section: &[u8]) -> Result<()> {
    let mut g = Get::new(section);
    t.strings = <Interner as Wire>::get(&mut g)?;
    t.meta = TraceMeta::get(&mut g)?;
    t.processes = Vec::get(&mut g)?;
    t.tracks = Vec::get(&mut g)?;
    t.warnings = Warnings::get(&mut g)?;
    t.event_count = u64::get(&mut g)?;
    t.bytes_read = u64::get(&mut g)?;
    g.done()
}

/// Calls `$m!(table.column)` for each column of a trace, in wire order: the one list encoder and
/// decoder share.
macro_rules! trace_columns {
    ($m:ident) => {
        $m!(slices.start);
        $m!(slices.dur);
        $m!(slices.track);
        $m!(slices.name);
        $m!(slices.cat);
        $m!(slices.kind);
        $m!(slices.depth);
        $m!(slices.parent);
        $m!(slices.external_id);
        $m!(slices.correlation);
        $m!(slices.rf_id);
        $m!(slices.input_dims);
        $m!(slices.input_types);
        $m!(slices.args);
        $m!(gpu.slice);
        $m!(gpu.device);
        $m!(gpu.stream);
        $m!(gpu.grid);
        $m!(gpu.block);
        $m!(gpu.registers);
        $m!(gpu.shared_memory);
        $m!(gpu.blocks_per_sm);
        $m!(gpu.warps_per_sm);
        $m!(gpu.occupancy_pct);
        $m!(gpu.bytes);
        $m!(gpu.bandwidth_gbs);
        $m!(gpu.launch);
        $m!(flops.slice);
        $m!(flops.flops);
        $m!(instants.ts);
        $m!(instants.track);
        $m!(instants.name);
        $m!(instants.cat);
        $m!(instants.args);
        $m!(memory.ts);
        $m!(memory.track);
        $m!(memory.device_type);
        $m!(memory.device_id);
        $m!(memory.addr);
        $m!(memory.bytes);
        $m!(memory.total_allocated);
        $m!(memory.total_reserved);
        $m!(counters.series_name);
        $m!(counters.series_pid);
        $m!(counters.series);
        $m!(counters.ts);
        $m!(counters.value);
        $m!(flows.cat);
        $m!(flows.from);
        $m!(flows.to);
    };
}

/// `t` as sections: the small tables, each column, then the args arena's keys and blocks.
pub fn encode(t: &Trace) -> Vec<Vec<u8>> {
    (0..).map_while(|k| section(t, k)).collect()
}

/// Values per column section at most: the page decodes one section per task, so a section of a
/// long column stays a few MiB (a few ms) however many events the trace holds.
pub const PIECE: usize = 1 << 18;

/// Sections a column of `n` values takes (an empty one still takes one).
pub fn pieces(n: usize) -> usize {
    n.div_ceil(PIECE).max(1)
}

/// Piece `i` of column `v`: its values `i·PIECE..`, after the column's length in the first piece.
pub fn column_piece<T: Wire>(v: &[T], i: usize) -> Vec<u8> {
    let lo = (i * PIECE).min(v.len());
    let part = &v[lo..(lo + PIECE).min(v.len())];
    let mut out = Vec::with_capacity(8 + std::mem::size_of_val(part));
    if i == 0 {
        (v.len() as u32).put(&mut out);
    }
    (part.len() as u32).put(&mut out);
    T::put_many(part, &mut out);
    out
}

/// A model column as pieces: a `Vec` of wire values, or an [`Ids`] column (its form and base in
/// the first piece, then its 4- or 8-byte values).
trait Column {
    fn values(&self) -> usize;
    fn piece(&self, i: usize) -> Vec<u8>;
    /// As [`read_piece`].
    fn read(&mut self, left: Option<usize>, section: &[u8]) -> Result<usize>;
}

impl<T: Wire> Column for Vec<T> {
    fn values(&self) -> usize {
        self.len()
    }
    fn piece(&self, i: usize) -> Vec<u8> {
        column_piece(self, i)
    }
    fn read(&mut self, left: Option<usize>, section: &[u8]) -> Result<usize> {
        read_piece(self, left, section)
    }
}

impl Column for Ids {
    fn values(&self) -> usize {
        self.len()
    }
    fn piece(&self, i: usize) -> Vec<u8> {
        let mut out = Vec::new();
        if i == 0 {
            match self {
                Ids::Narrow { base, .. } => {
                    0u8.put(&mut out);
                    base.put(&mut out);
                }
                Ids::Wide(_) => {
                    1u8.put(&mut out);
                    0i64.put(&mut out);
                }
            }
        }
        out.extend(match self {
            Ids::Narrow { v, .. } => column_piece(v, i),
            Ids::Wide(v) => column_piece(v, i),
        });
        out
    }
    fn read(&mut self, left: Option<usize>, section: &[u8]) -> Result<usize> {
        let mut section = section;
        if left.is_none() {
            let mut g = Get::new(section);
            let wide = u8::get(&mut g)?;
            let base = i64::get(&mut g)?;
            *self = match wide {
                0 => Ids::Narrow {
                    base,
                    v: Vec::new(),
                },
                1 => Ids::Wide(Vec::new()),
                _ => return Err(bad("an id column of no known form")),
            };
            section = g.take(section.len() - 9)?;
        }
        match self {
            Ids::Narrow { v, .. } => read_piece(v, left, section),
            Ids::Wide(v) => read_piece(v, left, section),
        }
    }
}

/// How many sections [`encode`] makes of `t`, without making them.
pub fn section_count(t: &Trace) -> usize {
    let mut n = 1;
    macro_rules! count {
        ($a:ident . $b:ident) => {
            n += pieces(Column::values(&t.$a.$b));
        };
    }
    trace_columns!(count);
    n + 1 + t.args.blocks().count()
}

/// Section `k` of [`encode`]'s list, made alone (`None` past the last), so a sender can hand a
/// model over one section at a time without a second copy of it.
pub fn section(t: &Trace, k: usize) -> Option<Vec<u8>> {
    if k == 0 {
        return Some(head(t));
    }
    let mut i = k - 1;
    macro_rules! enc {
        ($a:ident . $b:ident) => {
            let n = pieces(Column::values(&t.$a.$b));
            if i < n {
                return Some(Column::piece(&t.$a.$b, i));
            }
            i -= n;
        };
    }
    trace_columns!(enc);
    match i {
        0 => Some(args_head(&t.args)),
        b => t.args.blocks().nth(b - 1).map(|(start, b)| {
            let mut s = Vec::with_capacity(b.len() + 8);
            start.put(&mut s);
            put_bytes(&mut s, b);
            s
        }),
    }
}

/// The args arena's key table and block count (its blocks follow, a section each).
fn args_head(a: &ArgsArena) -> Vec<u8> {
    let mut head = Vec::new();
    (a.keys().count() as u32).put(&mut head);
    for k in a.keys() {
        put_bytes(&mut head, k);
    }
    (a.blocks().count() as u32).put(&mut head);
    head
}

/// Reads an args arena back, one section at a time.
struct ArgsDecoder {
    keys: Vec<Box<[u8]>>,
    blocks: Vec<(u32, Vec<u8>)>,
    /// Blocks still to come.
    more: usize,
}

impl ArgsDecoder {
    fn new(head: &[u8]) -> Result<Self> {
        let mut g = Get::new(head);
        let n = g.count()?;
        let keys = (0..n)
            .map(|_| g.bytes().map(Box::from))
            .collect::<Result<Vec<_>>>()?;
        let more = u32::get(&mut g)? as usize;
        g.done()?;
        Ok(ArgsDecoder {
            keys,
            blocks: Vec::new(),
            more,
        })
    }

    fn push(&mut self, section: &[u8]) -> Result<()> {
        let mut g = Get::new(section);
        let start = u32::get(&mut g)?;
        let b = g.bytes()?.to_vec();
        g.done()?;
        if self.more == 0 {
            return Err(bad("more args blocks than announced"));
        }
        self.more -= 1;
        self.blocks.push((start, b));
        Ok(())
    }

    fn finish(self) -> Result<ArgsArena> {
        if self.more != 0 {
            return Err(bad("args blocks missing"));
        }
        ArgsArena::from_parts(self.keys, self.blocks)
            .ok_or_else(|| bad("args blocks that do not fit"))
    }
}

/// Rebuilds a trace from the sections of [`encode`], taken one at a time.
#[derive(Default)]
pub struct Decoder {
    t: Trace,
    /// Whether the head (the first section) was read.
    head: bool,
    /// The column being read (its index in `trace_columns!`).
    col: usize,
    /// Values of that column still to come; `None` before its first piece.
    left: Option<usize>,
    args: Option<ArgsDecoder>,
}

/// Appends one piece of a column to `v`: `left` is `None` at the column's first piece (which
/// says the column's length); returns the values still to come.
pub fn read_piece<T: Wire>(v: &mut Vec<T>, left: Option<usize>, section: &[u8]) -> Result<usize> {
    let mut g = Get::new(section);
    let left = match left {
        Some(n) => n,
        None => {
            let n = u32::get(&mut g)? as usize;
            // The whole column's capacity at once: growing it piece by piece copied it each time
            // (a 45 MB copy in one task at the end of a 5.6 M-value column). Fallible, so a
            // corrupt length is an error, never an abort.
            *v = Vec::new();
            v.try_reserve_exact(n)
                .map_err(|_| bad("a column longer than memory allows"))?;
            n
        }
    };
    let n = g.count()?;
    if n > left || (n == 0 && left > 0) {
        return Err(bad("a column piece that does not fit its column"));
    }
    T::get_many(&mut g, n, v)?;
    g.done()?;
    Ok(left - n)
}

impl Decoder {
    /// Takes the next section.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        if !self.head {
            self.head = true;
            return read_head(&mut self.t, section);
        }
        let mut i = self.col;
        let t = &mut self.t;
        macro_rules! dec {
            ($a:ident . $b:ident) => {
                if i == 0 {
                    let left = Column::read(&mut t.$a.$b, self.left, section)?;
                    if left == 0 {
                        self.col += 1;
                        self.left = None;
                    } else {
                        self.left = Some(left);
                    }
                    return Ok(());
                }
                i -= 1;
            };
        }
        trace_columns!(dec);
        let _ = i;
        match &mut self.args {
            None => self.args = Some(ArgsDecoder::new(section)?),
            Some(a) => a.push(section)?,
        }
        Ok(())
    }

    /// The trace, once every section was taken.
    pub fn finish(self) -> Result<Trace> {
        let mut c = self.finish_in_steps()?;
        while !c.step()? {}
        c.trace()
    }

    /// [`Decoder::finish`] with its checks in steps of one column each (a few ms on a 1 GB
    /// trace), for a page that yields between them: in one piece they were one task of 50-68 ms.
    pub fn finish_in_steps(self) -> Result<Checked> {
        Ok(Checked::new(self.finish_unchecked()?))
    }

    /// The trace without the checks of a finished model (a shard's, whose slices are still
    /// staged: its reader checks it).
    pub fn finish_unchecked(self) -> Result<Trace> {
        let mut t = self.t;
        let Some(a) = self.args else {
            return Err(bad("sections missing"));
        };
        t.args = a.finish()?;
        Ok(t)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn cut_or_corrupt_sections_are_errors_not_panics() {
        let mut t = Trace::default();
        t.strings.intern("a");
        let sections = encode(&t);
        let mut d = Decoder::default();
        for s in &sections {
            d.push(s).unwrap();
        }
        assert!(d.finish().is_ok());
        // The head cut short, a column with a huge count, and sections missing.
        let mut d = Decoder::default();
        assert!(d.push(&sections[0][..sections[0].len() - 1]).is_err());
        let mut d = Decoder::default();
        d.push(&sections[0]).unwrap();
        assert!(d.push(&[0xff, 0xff, 0xff, 0x7f, 1]).is_err());
        let mut d = Decoder::default();
        d.push(&sections[0]).unwrap();
        assert!(d.finish().is_err());
        // A column longer than its pieces say, and one cut short before the args.
        let mut d = Decoder::default();
        d.push(&sections[0]).unwrap();
        assert!(d.push(&[1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]).is_err());
        let mut d = Decoder::default();
        d.push(&sections[0]).unwrap();
        assert!(d.push(&[0, 0, 0, 0, 0, 0, 0, 0]).is_ok());
        assert!(d.finish().is_err());
    }

    #[test]
    fn long_columns_travel_in_pieces_and_come_back_whole() {
        let mut t = Trace::default();
        let n = 2 * PIECE + 7;
        t.counters.series_name.push(t.strings.intern("c"));
        t.counters.series_pid.push(IdVal::Int(1));
        t.counters.ts = (0..n as i64).map(|x| x * 3).collect();
        t.counters.value = (0..n).map(|x| x as f64 / 2.0).collect();
        t.counters.series = vec![0; n];
        let sections = encode(&t);
        // Three pieces for each of the three long columns, where an empty trace has one.
        assert_eq!(sections.len(), encode(&Trace::default()).len() + 3 * 2);
        assert!(sections.iter().all(|s| s.len() <= 8 + 8 * PIECE));
        let mut d = Decoder::default();
        for s in &sections {
            d.push(s).unwrap();
        }
        let back = d.finish().unwrap();
        assert_eq!(back.counters.ts, t.counters.ts);
        assert_eq!(back.counters.value, t.counters.value);
        assert_eq!(back.counters.series, t.counters.series);
    }

    /// Ids in both forms, over more than one piece, with and without gaps, come back as written;
    /// a form byte that is neither is an error.
    #[test]
    fn id_columns_come_back_in_either_form() {
        let n = PIECE + 3;
        let json = br#"{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}"#;
        let mut t = crate::ingest::kineto::read_kineto(json).unwrap();
        let s = &mut t.slices;
        let one = |v: i64| (0..n).map(move |_| v);
        s.start = (0..n as i64).collect();
        s.dur = one(1).collect();
        s.track = vec![0; n];
        s.name = vec![s.name[0]; n];
        s.cat = vec![s.cat[0]; n];
        s.kind = vec![s.kind[0]; n];
        s.depth = vec![0; n];
        s.parent = vec![NONE; n];
        s.input_dims = vec![s.input_dims[0]; n];
        s.input_types = vec![s.input_types[0]; n];
        s.args = vec![(0, 0); n];
        s.external_id = (0..n as i64)
            .map(|i| if i % 3 == 0 { NO_ID } else { 1 << 40 | i })
            .collect();
        s.correlation = (0..n as i64)
            .map(|i| if i == 5 { i64::MIN + 1 } else { i })
            .collect();
        s.rf_id = one(NO_ID).collect();
        t.tracks[0].count = n as u32;
        assert!(matches!(t.slices.external_id, Ids::Narrow { .. }));
        assert!(matches!(t.slices.correlation, Ids::Wide(_)));
        let sections = encode(&t);
        let mut d = Decoder::default();
        for x in &sections {
            d.push(x).unwrap();
        }
        let b = d.finish().unwrap();
        for (x, y) in [
            (&b.slices.external_id, &t.slices.external_id),
            (&b.slices.correlation, &t.slices.correlation),
            (&b.slices.rf_id, &t.slices.rf_id),
        ] {
            assert!(x.iter().eq(y.iter()));
            assert_eq!(std::mem::discriminant(x), std::mem::discriminant(y));
        }
        // The external ids' first piece with its form byte made 2.
        let first = 1 + 8 * pieces(n);
        let mut bad_form = sections.clone();
        bad_form[first][0] = 2;
        let mut d = Decoder::default();
        assert!(bad_form.iter().try_for_each(|x| d.push(x)).is_err());
    }

    #[test]
    fn the_section_count_is_the_sections_made() {
        let mut t = Trace::default();
        assert_eq!(section_count(&t), encode(&t).len());
        // Long columns in pieces, and args text in blocks.
        t.counters.ts = vec![0; PIECE + 1];
        assert_eq!(section_count(&t), encode(&t).len());
        let json = br#"{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"k":"v"}}]}"#;
        let t = crate::ingest::kineto::read_kineto(json).unwrap();
        assert!(t.args.blocks().count() > 0);
        assert_eq!(section_count(&t), encode(&t).len());
        assert!(section(&t, section_count(&t)).is_none());
    }
}
