//! Interned strings: every name, category and shape text is stored once and referred to by a `StrId`.
//!
//! Traces repeat a few thousand distinct names millions of times; one shared buffer plus a hash table
//! of offsets keeps that to one copy and one lookup per event, with no allocation per event.

use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::Hasher;

/// Index of an interned string. `StrId::EMPTY` is the empty string, always present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

impl StrId {
    pub const EMPTY: StrId = StrId(0);
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Debug, Clone)]
pub struct Interner {
    buf: String,
    spans: Vec<(u32, u32)>,
    table: HashTable<u32>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut s = Interner {
            buf: String::new(),
            spans: Vec::new(),
            table: HashTable::new(),
        };
        s.intern("");
        s
    }
}

fn hash(s: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(s);
    h.finish()
}

/// `a == b`, eight bytes at a time: in wasm a slice compare is a call to a `memcmp` that
/// compares byte by byte, and a reader worker spent ~4 % of its time there on names it had
/// seen (kernel names run to hundreds of bytes).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |x: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(x);
        u64::from_ne_bytes(w)
    };
    let (x, y) = (a.chunks_exact(8), b.chunks_exact(8));
    let (xr, yr) = (x.remainder(), y.remainder());
    x.zip(y).all(|(p, q)| word(p) == word(q)) && xr.iter().zip(yr).all(|(p, q)| p == q)
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> StrId {
        let h = hash(s.as_bytes());
        let Interner { buf, spans, table } = self;
        let found = table.find(h, |&id| {
            let (a, b) = spans[id as usize];
            &buf.as_bytes()[a as usize..b as usize] == s.as_bytes()
        });
        if let Some(&id) = found {
            return StrId(id);
        }
        let id = spans.len() as u32;
        let start = buf.len() as u32;
        buf.push_str(s);
        spans.push((start, buf.len() as u32));
        table.insert_unique(h, id, |&id| {
            let (a, b) = spans[id as usize];
            hash(&buf.as_bytes()[a as usize..b as usize])
        });
        StrId(id)
    }

    /// Looks raw bytes up without adding them or checking them as UTF-8: every interned string is
    /// UTF-8, so bytes equal to one are too. The reader tries this before it validates a name
    /// (`from_utf8` was ~2 % of a reader worker's time, on names it had seen before).
    #[inline]
    pub fn find_bytes(&self, b: &[u8]) -> Option<StrId> {
        let (buf, spans) = (self.buf.as_bytes(), &self.spans);
        self.table
            .find(hash(b), |&id| {
                let (a, e) = spans[id as usize];
                same(&buf[a as usize..e as usize], b)
            })
            .map(|&id| StrId(id))
    }

    /// Looks a string up without adding it.
    pub fn get(&self, s: &str) -> Option<StrId> {
        let h = hash(s.as_bytes());
        self.table
            .find(h, |&id| self.resolve(StrId(id)) == s)
            .map(|&id| StrId(id))
    }

    pub fn resolve(&self, id: StrId) -> &str {
        match self.spans.get(id.index()) {
            Some(&(a, b)) => &self.buf[a as usize..b as usize],
            None => "",
        }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.len() <= 1
    }

    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity() + self.spans.capacity() * 8 + self.table.capacity() * 5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_twice_gives_the_same_id_and_resolves_back() {
        let mut i = Interner::default();
        let a = i.intern("aten::mm");
        let b = i.intern("aten::addmm");
        assert_ne!(a, b);
        assert_eq!(i.intern("aten::mm"), a);
        assert_eq!(i.resolve(a), "aten::mm");
        assert_eq!(i.resolve(b), "aten::addmm");
        assert_eq!(i.intern(""), StrId::EMPTY);
        assert_eq!(i.get("aten::addmm"), Some(b));
        assert_eq!(i.get("nope"), None);
        assert_eq!(i.find_bytes(b"aten::addmm"), Some(b));
        assert_eq!(i.find_bytes(b""), Some(StrId::EMPTY));
        assert_eq!(i.find_bytes(b"aten::m"), None);
        assert_eq!(i.find_bytes(&[0xff, 0xfe]), None);
    }

    /// Word by word, as a slice compare, at every length and every place of a difference.
    #[test]
    fn same_is_slice_equality() {
        let a: Vec<u8> = (0..40u8).map(|k| k.wrapping_mul(37)).collect();
        for n in 0..a.len() {
            assert!(same(&a[..n], &a[..n]));
            assert!(!same(&a[..n], &a[..n + 1]));
            for at in 0..n {
                let mut b = a[..n].to_vec();
                b[at] ^= 1 << (at % 8);
                assert_eq!(same(&a[..n], &b), a[..n] == b[..], "{n} {at}");
                assert!(!same(&a[..n], &b));
            }
        }
    }
}
