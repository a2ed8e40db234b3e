//! A per-slice integer id (`External id`, `correlation`, `Record function id`) in 4 bytes a slice
//! where the trace's values allow it. Every slice has all three, so as `i64` columns they were 24
//! bytes of a slice's ~75 in the model: 14.5 MB of a 304 MB trace's page, which keeps the model
//! for the session. Kineto's ids are counters, so a trace's values span far less than 2³²: they
//! are kept as offsets from the smallest. A trace whose values do not fit (ids from elsewhere,
//! negative, hashed) keeps them whole; either way [`Ids::get`] answers the value as written.

/// A missing integer arg (`External id`, `correlation`…).
pub const NO_ID: i64 = i64::MIN;

/// The offset that stands for [`NO_ID`] in the narrow form.
const MISSING: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub enum Ids {
    /// `base + v[i]`, or [`NO_ID`] where `v[i] == MISSING`.
    Narrow {
        base: i64,
        v: Vec<u32>,
    },
    Wide(Vec<i64>),
}

impl Default for Ids {
    fn default() -> Ids {
        Ids::Narrow {
            base: 0,
            v: Vec::new(),
        }
    }
}

/// Equal when every value is (the form is decided by the values, but two equal columns may still
/// come from different builds).
impl PartialEq for Ids {
    fn eq(&self, o: &Ids) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter())
    }
}

/// The smallest and largest of `values` other than [`NO_ID`]; `(i64::MAX, i64::MIN)` for none.
pub fn span(values: impl Iterator<Item = i64>) -> (i64, i64) {
    values
        .filter(|&x| x != NO_ID)
        .fold((i64::MAX, i64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

impl Ids {
    /// The `n` values `value(0..n)`, read twice: for their span, then to store them at their size.
    pub fn from_fn(n: usize, value: impl Fn(usize) -> i64) -> Ids {
        Ids::within(span((0..n).map(&value)), n, value)
    }

    /// [`Ids::from_fn`] where the values' span (`lo`, `hi`, as [`span`] gives it) is known: read
    /// once. A span wider than the values' is allowed (they may then be kept whole).
    pub fn within((lo, hi): (i64, i64), n: usize, value: impl Fn(usize) -> i64) -> Ids {
        let base = if lo > hi { 0 } else { lo };
        let fits = lo > hi || hi.checked_sub(lo).is_some_and(|d| d < i64::from(MISSING));
        if fits {
            let v = (0..n)
                .map(|i| match value(i) {
                    NO_ID => MISSING,
                    x => (x - base) as u32,
                })
                .collect();
            Ids::Narrow { base, v }
        } else {
            Ids::Wide((0..n).map(value).collect())
        }
    }

    /// Value `i`; [`NO_ID`] where it has none (and past the end).
    pub fn get(&self, i: usize) -> i64 {
        match self {
            Ids::Narrow { base, v } => match v.get(i) {
                Some(&MISSING) | None => NO_ID,
                Some(&x) => base + i64::from(x),
            },
            Ids::Wide(v) => v.get(i).copied().unwrap_or(NO_ID),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Ids::Narrow { v, .. } => v.len(),
            Ids::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    pub fn capacity_bytes(&self) -> usize {
        match self {
            Ids::Narrow { v, .. } => v.capacity() * 4,
            Ids::Wide(v) => v.capacity() * 8,
        }
    }
}

/// The first row with each id, among the rows kept: [`Ids::first_rows`].
pub struct FirstRows {
    /// By offset from `base` where the column is narrow and its span small: `u32::MAX` for none.
    table: Vec<u32>,
    base: i64,
    /// Else by value.
    map: rustc_hash::FxHashMap<i64, u32>,
}

impl FirstRows {
    /// The first kept row with id `id`.
    pub fn get(&self, id: i64) -> Option<u32> {
        if id == NO_ID {
            return None;
        }
        if self.table.is_empty() {
            return self.map.get(&id).copied();
        }
        let at = usize::try_from(id.checked_sub(self.base)?).ok()?;
        self.table.get(at).copied().filter(|&r| r != u32::MAX)
    }
}

impl Ids {
    /// The first row `keep` accepts for each id. Kineto's ids are counters, so where the column is
    /// narrow and its offsets span at most four times its length, a table by offset (4 bytes an
    /// offset, one pass); else a hash map. On a 1 GB trace the launches' map by correlation took
    /// ~47 ms of the model's finish natively.
    pub fn first_rows(&self, keep: impl Fn(usize) -> bool) -> FirstRows {
        let mut out = FirstRows {
            table: Vec::new(),
            base: 0,
            map: rustc_hash::FxHashMap::default(),
        };
        if let Ids::Narrow { base, v } = self {
            let span = v
                .iter()
                .filter(|&&x| x != MISSING)
                .max()
                .map(|&x| x as usize + 1);
            if let Some(span) = span.filter(|&s| s <= v.len().saturating_mul(4)) {
                out.base = *base;
                out.table = vec![u32::MAX; span];
                for (i, &x) in v.iter().enumerate() {
                    if x != MISSING && keep(i) {
                        let slot = &mut out.table[x as usize];
                        if *slot == u32::MAX {
                            *slot = i as u32;
                        }
                    }
                }
                return out;
            }
        }
        for i in 0..self.len() {
            let id = self.get(i);
            if id != NO_ID && keep(i) {
                out.map.entry(id).or_insert(i as u32);
            }
        }
        out
    }
}

impl FromIterator<i64> for Ids {
    fn from_iter<I: IntoIterator<Item = i64>>(it: I) -> Ids {
        let v: Vec<i64> = it.into_iter().collect();
        Ids::from_fn(v.len(), |i| v[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_as_written_in_either_form() {
        let counters = [NO_ID, 5_000_000_001, 5_000_000_000, NO_ID, 5_004_000_000];
        let a: Ids = counters.iter().copied().collect();
        assert!(matches!(
            a,
            Ids::Narrow {
                base: 5_000_000_000,
                ..
            }
        ));
        assert_eq!(a.iter().collect::<Vec<_>>(), counters);
        assert_eq!(a.capacity_bytes(), 4 * counters.len());
        // A span of 2^32 - 1 or more, and negative ids, are kept whole.
        let wide = [0, i64::from(u32::MAX) - 1, NO_ID];
        let b: Ids = wide.iter().copied().collect();
        assert!(matches!(b, Ids::Narrow { .. }));
        assert_eq!(b.iter().collect::<Vec<_>>(), wide);
        let wider = [0, i64::from(u32::MAX), -7, NO_ID, i64::MAX];
        let c: Ids = wider.iter().copied().collect();
        assert!(matches!(c, Ids::Wide(_)));
        assert_eq!(c.iter().collect::<Vec<_>>(), wider);
        // None at all, and past the end.
        let d: Ids = [NO_ID, NO_ID].into_iter().collect();
        assert_eq!(d.iter().collect::<Vec<_>>(), [NO_ID, NO_ID]);
        assert_eq!(d.get(9), NO_ID);
        // Equal by values whatever the form.
        let w = Ids::Wide(counters.to_vec());
        assert_eq!(a, w);
        assert_ne!(a, b);
        // A span given ahead: the values' own gives the same form; a wider one the same values.
        let at = |i: usize| counters[i];
        let given = Ids::within(span(counters.iter().copied()), counters.len(), at);
        assert!(matches!(
            given,
            Ids::Narrow {
                base: 5_000_000_000,
                ..
            }
        ));
        assert_eq!(given.iter().collect::<Vec<_>>(), counters);
        let wider_span = Ids::within((-1, i64::MAX), counters.len(), at);
        assert!(matches!(wider_span, Ids::Wide(_)));
        assert_eq!(wider_span, a);
        assert_eq!(span([NO_ID].into_iter()), (i64::MAX, i64::MIN));
    }

    /// `first_rows` as a map built row by row, in both forms (a dense narrow column, a sparse
    /// one, a wide one), with repeats, rows not kept and ids never seen.
    #[test]
    fn first_rows_is_the_first_kept_row_of_each_id() {
        let dense: Vec<i64> = vec![10, 11, NO_ID, 10, 12, 13, 11, 14];
        let sparse: Vec<i64> = vec![1, 1_000_000, 1, NO_ID, 7];
        let wide: Vec<i64> = vec![-5, i64::MAX, -5, 3];
        for (k, vals) in [dense, sparse, wide].into_iter().enumerate() {
            let ids: Ids = vals.iter().copied().collect();
            let keep = |i: usize| i % 3 != 1;
            let got = ids.first_rows(keep);
            let mut want = std::collections::HashMap::new();
            for (i, &v) in vals.iter().enumerate() {
                if v != NO_ID && keep(i) {
                    want.entry(v).or_insert(i as u32);
                }
            }
            for probe in vals
                .iter()
                .copied()
                .chain([NO_ID, 0, 9, 15, i64::MIN + 1, i64::MAX - 1])
            {
                assert_eq!(
                    got.get(probe),
                    want.get(&probe).copied(),
                    "column {k}, id {probe}"
                );
            }
            assert_eq!(got.table.is_empty(), k != 0, "column {k}");
        }
    }
}
