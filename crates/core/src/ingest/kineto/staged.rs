//! Slice columns while parsing, in fixed-size chunks.
//!
//! A growing `Vec` doubles its capacity and copies itself; across a dozen columns that slack and the
//! copy transients cost more than the columns (and wasm linear memory never gives pages back).
//! Chunks never move and waste at most one chunk per column. `finish` sorts the slices anyway, so
//! it gathers each column straight from the chunks into an exact-size `Vec`.

use crate::model::wire::{Get, Wire};
use crate::model::{Ids, Ns, SliceKind, StrId};
use crate::Result;

const SHIFT: u32 = 16;
pub(super) const CHUNK: usize = 1 << SHIFT;

/// [`Chunked::reserve_flat`]'s chunk: every index below 2³¹ (more slices than any wasm32 instance
/// can hold) falls in chunk 0.
const FLAT_SHIFT: u32 = 31;

#[derive(Debug)]
pub(super) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
    /// Values a chunk holds, as a power of two: [`SHIFT`], or [`FLAT_SHIFT`] for one block.
    shift: u32,
    /// The first chunk's capacity.
    first_cap: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
            shift: SHIFT,
            first_cap: CHUNK,
        }
    }
}

impl<T: Copy> Chunked<T> {
    fn mask(&self) -> usize {
        (1usize << self.shift) - 1
    }

    /// Out of line, so that [`Self::push`] (a dozen a slice) inlines: with this in it, `push`
    /// stayed a call, ~5 % of a reader worker's time in V8.
    #[cold]
    #[inline(never)]
    fn new_chunk(&mut self) {
        let cap = if self.chunks.is_empty() {
            self.first_cap
        } else {
            CHUNK
        };
        self.chunks.push(Vec::with_capacity(cap));
    }

    /// Makes an empty column one block of `n` values, filled by later pushes and appends: where
    /// the whole table's length is known ahead (a worker that only merges shards), the finish's
    /// exact-size columns then reuse each block as it is let go, instead of growing the instance
    /// beside chunks whose holes no later column fits. Does nothing to a column with values.
    pub fn reserve_flat(&mut self, n: usize) {
        if self.len == 0 && self.chunks.is_empty() && n > CHUNK {
            self.shift = FLAT_SHIFT;
            self.first_cap = n;
        }
    }

    #[inline]
    pub fn push(&mut self, v: T) {
        if self.len & self.mask() == 0 {
            self.new_chunk();
        }
        if let Some(c) = self.chunks.last_mut() {
            c.push(v);
            self.len += 1;
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn get(&self, i: usize) -> T {
        self.chunks[i >> self.shift][i & self.mask()]
    }

    pub fn set(&mut self, i: usize, v: T) {
        let m = self.mask();
        self.chunks[i >> self.shift][i & m] = v;
    }

    /// Every value, in order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.chunks.iter_mut().flat_map(|c| c.iter_mut())
    }

    /// The last chunk, with room for at least one more value (a new chunk when it is full).
    fn tail(&mut self) -> &mut Vec<T> {
        if self.len & self.mask() == 0 {
            self.new_chunk();
        }
        let i = self.chunks.len() - 1;
        &mut self.chunks[i]
    }

    /// Appends `o`'s values through `f`, freeing each of `o`'s chunks once copied (`o` is left
    /// empty). A run at a time, up to the end of this column's last chunk: value by value, a
    /// check for a new chunk each, merging a shard of 1 GB took ~125 ms natively.
    pub fn append_mapped(&mut self, o: &mut Chunked<T>, f: impl Fn(T) -> T) {
        for c in std::mem::take(&mut o.chunks) {
            let mut rest = &c[..];
            while !rest.is_empty() {
                let room = (self.mask() + 1) - (self.len & self.mask());
                let (now, later) = rest.split_at(room.min(rest.len()));
                self.tail().extend(now.iter().map(|&v| f(v)));
                self.len += now.len();
                rest = later;
            }
        }
        o.len = 0;
    }

    /// Appends `n` values decoded from `g`, a run at a time as [`Self::append_mapped`].
    pub fn extend_from_wire(&mut self, g: &mut Get<'_>, n: usize) -> Result<()>
    where
        T: Wire,
    {
        let mut left = n;
        while left > 0 {
            let k = ((self.mask() + 1) - (self.len & self.mask())).min(left);
            let tail = self.tail();
            let had = tail.len();
            if let Err(e) = T::get_many(g, k, tail) {
                // As before the call: no value half read, no empty chunk past the last.
                tail.truncate(had);
                if had == 0 {
                    self.chunks.pop();
                }
                return Err(e);
            }
            self.len += k;
            left -= k;
        }
        Ok(())
    }

    /// Appends `v`, a run at a time as [`Self::append_mapped`].
    pub fn extend_from_slice(&mut self, mut v: &[T]) {
        while !v.is_empty() {
            let room = (self.mask() + 1) - (self.len & self.mask());
            let (now, later) = v.split_at(room.min(v.len()));
            self.tail().extend_from_slice(now);
            self.len += now.len();
            v = later;
        }
    }

    /// Replaces each value from index `from` on by `f` of it; false (and the values from the
    /// first refused on left as they were) when `f` refuses one.
    pub fn map_from(&mut self, from: usize, mut f: impl FnMut(T) -> Option<T>) -> bool {
        let (shift, mask) = (self.shift, self.mask());
        let mut at = from;
        while at < self.len {
            let Some(c) = self.chunks.get_mut(at >> shift) else {
                return false;
            };
            for v in c.iter_mut().skip(at & mask) {
                match f(*v) {
                    Some(x) => *v = x,
                    None => return false,
                }
                at += 1;
            }
        }
        true
    }

    /// Drops every value from index `len` on.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let keep = if len == 0 {
            0
        } else {
            ((len - 1) >> self.shift) + 1
        };
        self.chunks.truncate(keep);
        if let Some(c) = self.chunks.last_mut() {
            c.truncate(len - ((keep - 1) << self.shift));
        }
        self.len = len;
    }

    /// Every value, in order, as one `Vec`; the chunks are freed as it goes.
    pub fn take_vec(&mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        for c in std::mem::take(&mut self.chunks) {
            out.extend_from_slice(&c);
        }
        self.len = 0;
        out
    }

    /// Every value written as `Wire::put_many` writes them, a chunk at a time.
    pub fn put_all(&self, out: &mut Vec<u8>)
    where
        T: Wire,
    {
        self.chunks.iter().for_each(|c| T::put_many(c, out));
    }

    /// The column in `order` (every index once), as [`Ids`]; the chunks are freed after. Their
    /// span is read from the chunks in place, not through `order`: on a 10 GB trace natively a
    /// value read in display order cost ~25 ns, in place a few.
    pub fn gather_ids(&mut self, order: &[u32]) -> Ids
    where
        T: Into<i64>,
    {
        let span = crate::model::ids::span(self.chunks.iter().flatten().map(|&x| x.into()));
        let out = Ids::within(span, order.len(), |k| self.get(order[k] as usize).into());
        self.chunks = Vec::new();
        self.len = 0;
        out
    }

    /// The column in `order`, as one exact-size `Vec`; the chunks are freed after. The finish
    /// uses [`Self::scatter`]; this is what the tests hold it to.
    #[cfg(test)]
    pub fn gather(&mut self, order: &[u32]) -> Vec<T> {
        let out: Vec<T> = order.iter().map(|&i| self.get(i as usize)).collect();
        self.chunks = Vec::new();
        self.len = 0;
        out
    }

    /// [`Self::gather`] given the order's inverse (value `i` goes to `new_of[i]`, every place
    /// once): the chunks read in turn, each freed once read, and the values written to their
    /// places. Reading through the order found each value's chunk first (two bounds checks and a
    /// chunk's address a value): the gathers were ~110 ms of a 1 GB trace's finish in V8.
    pub fn scatter(&mut self, new_of: &[u32]) -> Vec<T> {
        let Some(&fill) = self.chunks.first().and_then(|c| c.first()) else {
            self.len = 0;
            return Vec::new();
        };
        let mut out = vec![fill; self.len];
        let mut places = new_of;
        for c in std::mem::take(&mut self.chunks) {
            let (now, later) = places.split_at(c.len().min(places.len()));
            for (&v, &at) in c.iter().zip(now) {
                out[at as usize] = v;
            }
            places = later;
        }
        self.len = 0;
        out
    }
}

/// The columns of [`crate::model::Slices`] that exist before `finish`.
#[derive(Debug, Default)]
pub(super) struct StagedSlices {
    pub start: Chunked<Ns>,
    pub dur: Chunked<Ns>,
    pub track: Chunked<u32>,
    pub name: Chunked<StrId>,
    pub cat: Chunked<StrId>,
    pub kind: Chunked<SliceKind>,
    pub external_id: Chunked<i64>,
    pub correlation: Chunked<i64>,
    pub rf_id: Chunked<i64>,
    pub input_dims: Chunked<StrId>,
    pub input_types: Chunked<StrId>,
    pub args: Chunked<(u32, u32)>,
}

impl StagedSlices {
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// Drops every slice from index `n` on, in every column (a merge that failed half way).
    pub fn truncate(&mut self, n: usize) {
        macro_rules! cut {
            ($($c:ident),*) => { $(self.$c.truncate(n);)* };
        }
        cut!(
            start,
            dur,
            track,
            name,
            cat,
            kind,
            external_id,
            correlation,
            rf_id,
            input_dims,
            input_types,
            args
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_reorders_across_chunks() {
        let mut c = Chunked::default();
        for i in 0..(CHUNK as u32 * 2 + 7) {
            c.push(i);
        }
        c.set(CHUNK + 1, 999_999);
        let order: Vec<u32> = vec![CHUNK as u32 + 1, 0, CHUNK as u32 * 2 + 6];
        assert_eq!(c.gather(&order), vec![999_999, 0, CHUNK as u32 * 2 + 6]);
    }

    /// The runs cross chunk ends where they fall: values and `get` as pushing one by one would
    /// leave them; a section cut short leaves the column as it was.
    #[test]
    fn runs_across_chunk_ends_equal_pushing_one_by_one() {
        let mut a: Chunked<u32> = Chunked::default();
        let mut b: Chunked<u32> = Chunked::default();
        let mut want = Vec::new();
        for i in 0..(CHUNK as u32 / 2 + 3) {
            a.push(i);
            b.push(i);
            want.push(i);
        }
        let mut o: Chunked<u32> = Chunked::default();
        for i in 0..(CHUNK as u32 + 11) {
            o.push(i * 3);
            want.push(i * 3 + 1);
        }
        a.append_mapped(&mut o, |v| v + 1);
        assert_eq!(o.len(), 0);
        let mut wire = Vec::new();
        let more: Vec<u32> = (0..(CHUNK as u32 * 2)).map(|i| i ^ 0x55).collect();
        u32::put_many(&more, &mut wire);
        want.extend(&more);
        let mut g = Get::new(&wire);
        assert!(a.extend_from_wire(&mut g, more.len()).is_ok());
        for &v in &want[b.len()..] {
            b.push(v);
        }
        assert_eq!(a.len(), want.len());
        assert_eq!((0..a.len()).map(|i| a.get(i)).collect::<Vec<_>>(), want);
        let (mut wa, mut wb) = (Vec::new(), Vec::new());
        a.put_all(&mut wa);
        u32::put_many(&want, &mut wb);
        assert_eq!(wa, wb);
        assert_eq!(a.chunks.len(), b.chunks.len());
        // Short data: an error, and the column unchanged (the next push lands at `len`).
        let n = a.len();
        let mut g = Get::new(&wire[..10]);
        assert!(a.extend_from_wire(&mut g, 5).is_err());
        assert_eq!(a.len(), n);
        a.push(7);
        assert_eq!(a.get(n), 7);
        let mut e: Chunked<u32> = Chunked::default();
        assert!(e.extend_from_wire(&mut Get::new(&wire[..3]), 1).is_err());
        e.push(9);
        assert_eq!((e.len(), e.get(0), e.chunks.len()), (1, 9, 1));
    }

    /// One block ([`Chunked::reserve_flat`]) holds what chunks hold, read and written the same
    /// way, whether the reservation was short, exact or long; a column already holding values,
    /// or a small one, keeps its chunks.
    #[test]
    fn a_flat_column_equals_a_chunked_one() {
        let n = CHUNK * 2 + 5;
        for reserve in [CHUNK + 1, n, n * 2] {
            let mut flat: Chunked<u32> = Chunked::default();
            let mut chunked: Chunked<u32> = Chunked::default();
            flat.reserve_flat(reserve);
            assert_eq!(flat.shift, FLAT_SHIFT);
            let mut wire = Vec::new();
            let head: Vec<u32> = (0..(CHUNK as u32 + 3)).map(|i| i * 7).collect();
            u32::put_many(&head, &mut wire);
            for c in [&mut flat, &mut chunked] {
                assert!(c.extend_from_wire(&mut Get::new(&wire), head.len()).is_ok());
                let mut o: Chunked<u32> = Chunked::default();
                for i in 0..(n - head.len() - 2) as u32 {
                    o.push(i ^ 0x3c);
                }
                c.append_mapped(&mut o, |v| v + 2);
                c.push(11);
                c.push(12);
                c.set(CHUNK + 1, 5);
            }
            assert_eq!(flat.chunks.len(), 1, "reserve {reserve}");
            assert_eq!(flat.len(), n);
            let all = |c: &Chunked<u32>| (0..c.len()).map(|i| c.get(i)).collect::<Vec<_>>();
            assert_eq!(all(&flat), all(&chunked), "reserve {reserve}");
            let (mut wf, mut wc) = (Vec::new(), Vec::new());
            flat.put_all(&mut wf);
            chunked.put_all(&mut wc);
            assert_eq!(wf, wc);
            let order: Vec<u32> = (0..n as u32).rev().step_by(3).collect();
            assert_eq!(flat.gather(&order), chunked.gather(&order));
        }
        let mut small: Chunked<u8> = Chunked::default();
        small.reserve_flat(CHUNK);
        let mut used: Chunked<u8> = Chunked::default();
        used.push(1);
        used.reserve_flat(CHUNK * 4);
        assert_eq!((small.shift, used.shift), (SHIFT, SHIFT));
    }

    /// Through the order's inverse, the column [`Chunked::gather`] gives, across chunk ends,
    /// flat or chunked.
    #[test]
    fn scatter_is_gather() {
        let mut rnd = super::super::rng(0x1234_5678_9abc_def1);
        for (n, flat) in [
            (0, false),
            (1, false),
            (CHUNK - 1, false),
            (CHUNK * 2 + 7, false),
            (CHUNK + 3, true),
        ] {
            let (order, new_of) = super::super::shuffled(n, &mut rnd);
            let fill = |c: &mut Chunked<i64>| {
                if flat {
                    c.reserve_flat(n);
                }
                for i in 0..n {
                    c.push(i as i64 * 7 - 3);
                }
            };
            let (mut a, mut b) = (Chunked::default(), Chunked::default());
            fill(&mut a);
            fill(&mut b);
            assert_eq!(a.scatter(&new_of), b.gather(&order), "{n} {flat}");
            assert_eq!(a.len(), 0);
        }
    }
}
