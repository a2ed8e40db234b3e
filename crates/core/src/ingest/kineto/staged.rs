//! Slice columns while parsing, in fixed-size chunks.
//!
//! A growing `Vec` doubles its capacity and copies itself; across a dozen columns that slack and the
//! copy transients cost more than the columns (and wasm linear memory never gives pages back).
//! Chunks never move and waste at most one chunk per column. `finish` sorts the slices anyway, so
//! it gathers each column straight from the chunks into an exact-size `Vec`.

use crate::model::{Ids, Ns, SliceKind, StrId};

const SHIFT: u32 = 16;
const CHUNK: usize = 1 << SHIFT;
const MASK: usize = CHUNK - 1;

#[derive(Debug)]
pub(super) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy> Chunked<T> {
    pub fn push(&mut self, v: T) {
        if self.len & MASK == 0 {
            self.chunks.push(Vec::with_capacity(CHUNK));
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
        self.chunks[i >> SHIFT][i & MASK]
    }

    pub fn set(&mut self, i: usize, v: T) {
        self.chunks[i >> SHIFT][i & MASK] = v;
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.chunks.iter_mut().flat_map(|c| c.iter_mut())
    }

    /// Appends `o`'s values through `f`, freeing each of `o`'s chunks once copied (`o` is left
    /// empty).
    pub fn append_mapped(&mut self, o: &mut Chunked<T>, f: impl Fn(T) -> T) {
        for c in std::mem::take(&mut o.chunks) {
            for v in c {
                self.push(f(v));
            }
        }
        o.len = 0;
    }

    /// The column in `order`, as [`Ids`]; the chunks are freed after.
    pub fn gather_ids(&mut self, order: &[u32]) -> Ids
    where
        T: Into<i64>,
    {
        let out = Ids::from_fn(order.len(), |k| self.get(order[k] as usize).into());
        self.chunks = Vec::new();
        self.len = 0;
        out
    }

    /// The column in `order`, as one exact-size `Vec`; the chunks are freed as it goes.
    pub fn gather(&mut self, order: &[u32]) -> Vec<T> {
        let out: Vec<T> = order.iter().map(|&i| self.get(i as usize)).collect();
        self.chunks = Vec::new();
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
}
