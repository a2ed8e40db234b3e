//! A shard's args records copied into the merging reader's arena in runs (`ArgsArena::copier`).

use super::{ArgsArena, BLOCK, KEY};

impl ArgsArena {
    /// A copier of `other`'s records into this arena, for many records in `other`'s order: each
    /// placed exactly where [`ArgsArena::copy_record`] would place it, but the bytes of records
    /// that lie one after the other there copied at once (a shard's args, ~1 M records of ~40
    /// bytes for a 1 GB trace, were copied one by one: 36-56 ms of worker 0's merge natively).
    pub fn copier<'a>(
        &'a mut self,
        other: &'a ArgsArena,
        map: &'a [Option<u16>],
    ) -> RecordCopier<'a> {
        // A key past a full table is written out as text: records then change length, one by one.
        let runs = map.iter().all(Option::is_some);
        let identity = map
            .iter()
            .enumerate()
            .all(|(i, m)| *m == u16::try_from(i).ok());
        RecordCopier {
            to: self,
            from: other,
            map,
            runs,
            identity,
            block: 0,
            run: None,
        }
    }
}

/// See [`ArgsArena::copier`]. The bytes of the last run go in when it is dropped.
pub struct RecordCopier<'a> {
    to: &'a mut ArgsArena,
    from: &'a ArgsArena,
    map: &'a [Option<u16>],
    /// Every key of `from` has an id here: records keep their length.
    runs: bool,
    /// Every key has the same id here: records keep their bytes.
    identity: bool,
    /// The block of `from` the last record was in (records come in order: a walk, not a search).
    block: usize,
    /// Records placed but not yet copied: `from`'s block, their first and end bytes in it. They
    /// go at the end of this arena's last block, whose length does not count them yet.
    run: Option<(usize, usize, usize)>,
}

impl RecordCopier<'_> {
    /// Record `r` of `other`, where it goes in this arena (as [`ArgsArena::copy_record`] returns).
    pub fn copy(&mut self, r: (u32, u32)) -> (u32, u32) {
        if !self.runs {
            return self.to.copy_record(self.from, r, self.map);
        }
        if r.1 == 0 {
            return (0, 0);
        }
        let blocks = &self.from.blocks;
        // Where `get` would find it: the last block starting at or before it.
        if blocks.get(self.block).is_none_or(|b| b.0 > r.0) {
            self.block = 0;
        }
        while blocks.get(self.block + 1).is_some_and(|b| b.0 <= r.0) {
            self.block += 1;
        }
        let Some((start, b)) = blocks.get(self.block) else {
            return (0, 0);
        };
        let a = (r.0 - start) as usize;
        let len = r.1 as usize;
        if a + len > b.len() {
            return (0, 0);
        }
        // What `push(len, ..)` decides, with the run not yet copied counted in.
        let pending = self.run.map_or(0, |(_, s, e)| e - s);
        let to = &mut *self.to;
        if to.len as usize + pending + len * 2 >= u32::MAX as usize {
            return (0, 0);
        }
        let need_new = match to.blocks.last() {
            Some((_, d)) => d.len() + pending + len > d.capacity(),
            None => true,
        };
        if need_new {
            self.flush();
            let to = &mut *self.to;
            let cap = BLOCK.max(len.next_power_of_two());
            to.blocks.push((to.len, Vec::with_capacity(cap)));
        }
        let pending = self.run.map_or(0, |(_, s, e)| e - s);
        let Some((bstart, d)) = self.to.blocks.last() else {
            return (0, 0);
        };
        let off = *bstart as usize + d.len() + pending;
        if off + len > u32::MAX as usize {
            return (0, 0);
        }
        self.run = match self.run {
            Some((k, s, e)) if k == self.block && e == a => Some((k, s, a + len)),
            _ => {
                self.flush();
                Some((self.block, a, a + len))
            }
        };
        (off as u32, len as u32)
    }

    /// Copies the records placed and not yet copied, their key ids translated.
    fn flush(&mut self) {
        let Some((k, s, e)) = self.run.take() else {
            return;
        };
        let (Some((_, src)), Some((_, d))) = (self.from.blocks.get(k), self.to.blocks.last_mut())
        else {
            return;
        };
        let at = d.len();
        d.extend_from_slice(&src[s..e]);
        self.to.len += (e - s) as u32;
        if self.identity {
            return;
        }
        // Records never end inside a key reference (`push_object_from` escapes a literal KEY),
        // so one walk over the run finds each reference as the walk over each record would.
        let out = &mut d[at..];
        let mut i = 0;
        while let Some(j) = memchr::memchr(KEY, &out[i..]) {
            let p = i + j;
            let Some(id) = out.get(p + 1..p + 3) else {
                break;
            };
            let id = u16::from_le_bytes([id[0], id[1]]) as usize;
            if let Some(Some(new)) = self.map.get(id) {
                out[p + 1..p + 3].copy_from_slice(&new.to_le_bytes());
            }
            i = p + 3;
        }
    }
}

impl Drop for RecordCopier<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    /// The copier places every record where `copy_record` does, with the same bytes: records
    /// across the source's and the destination's block ends, records left out (gaps in a run),
    /// empty ones, keys numbered the same, otherwise, and past a full key table.
    #[test]
    fn the_copier_gives_copy_records_arena() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let keys: Vec<Vec<u8>> = (0..40).map(|k| format!("key{k}").into_bytes()).collect();
        let mut from = ArgsArena::default();
        let mut recs = Vec::new();
        while from.len() < 3 * BLOCK + 12_345 {
            let n = next(5) as usize;
            let pairs: Vec<(&[u8], Vec<u8>)> = (0..n)
                .map(|_| {
                    let v = vec![b'7'; 1 + next(300) as usize];
                    (&keys[next(40) as usize][..], v)
                })
                .collect();
            let file = (next(3) == 0).then(|| (next(1 << 40), next(1 << 20) as u32));
            let hint = pairs
                .iter()
                .map(|(k, v)| k.len() + v.len() + 4)
                .sum::<usize>()
                + 2;
            let r = from.push_object_from(hint, pairs.iter().map(|(k, v)| (*k, &v[..])), file);
            // Some records are never copied, some empty ones are asked for.
            match next(10) {
                0 => {}
                1 => recs.push((0, 0)),
                _ => recs.push(r),
            }
        }
        // A record bigger than a block, and one asked for out of order.
        let big = vec![b'x'; BLOCK + 77];
        recs.push(from.push(big.len(), |o| o.extend_from_slice(&big)));
        recs.push(recs[3]);
        let first_keys = |a: &mut ArgsArena, order: &[usize]| {
            for &k in order {
                a.key_id(&keys[k]);
            }
        };
        // `from`'s keys in its own order (the order of first use), and in another.
        let same: Vec<usize> = from
            .keys()
            .map(|k| std::str::from_utf8(&k[3..]).unwrap().parse().unwrap())
            .collect();
        let other: Vec<usize> = same.iter().rev().copied().collect();
        for (what, order, fill, full) in [
            ("same ids", &same, 0, false),
            ("other ids", &other, 0, false),
            ("other ids, a block part full", &other, BLOCK - 1000, false),
            ("a full key table", &same, 100, true),
        ] {
            // Made twice (a clone's blocks would have no room left).
            let made = || {
                let mut a = ArgsArena::default();
                // A full table holds a few of the keys: the others are written out as text.
                first_keys(&mut a, if full { &order[..3] } else { order });
                if full {
                    for k in a.keys.len()..=usize::from(u16::MAX) {
                        a.key_id(format!("filler{k}").as_bytes());
                    }
                }
                if fill > 0 {
                    a.push(fill, |o| o.extend(std::iter::repeat_n(b'f', fill)));
                }
                a
            };
            let (mut a, mut b) = (made(), made());
            let map = a.key_map(&from);
            assert_eq!(map, b.key_map(&from), "{what}");
            assert_eq!(map.iter().all(Option::is_some), !full, "{what}");
            let one: Vec<_> = recs
                .iter()
                .map(|&r| a.copy_record(&from, r, &map))
                .collect();
            let mut copier = b.copier(&from, &map);
            assert_eq!(copier.identity, order == &same && !full, "{what}");
            let runs: Vec<_> = recs.iter().map(|&r| copier.copy(r)).collect();
            drop(copier);
            assert_eq!(one, runs, "{what}: places");
            assert_eq!(a.len(), b.len(), "{what}: length");
            let (ab, bb): (Vec<_>, Vec<_>) = (a.blocks().collect(), b.blocks().collect());
            assert!(ab == bb, "{what}: bytes");
            for (&r, &c) in recs.iter().zip(&one) {
                assert_eq!(from.text(r), a.text(c), "{what}: text");
            }
        }
    }
}
