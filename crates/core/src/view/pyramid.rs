//! A step series' min/max pyramid ([`crate::view::counters::StepSeries`]) made a piece of values at
//! a time, for a series that arrives in pieces (`view::parts`).

/// [`StepSeries::new`]'s pyramid made a piece of values at a time, each piece of `2^log` values
/// but the last: a page takes a long series in pieces, and the whole pyramid of 1.4 M values was
/// one task of 50-75 ms on its thread.
pub struct PyramidBuild {
    log: u32,
    levels: Vec<Vec<(f64, f64)>>,
}

fn min_max(c: &[(f64, f64)]) -> (f64, f64) {
    c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, b| {
        (a.0.min(b.0), a.1.max(b.1))
    })
}

impl PyramidBuild {
    /// For pieces of `2^log` values (`log` ≥ 1).
    pub fn new(log: u32) -> PyramidBuild {
        PyramidBuild {
            log: log.max(1),
            levels: Vec::new(),
        }
    }

    /// The next piece's values: its blocks of every level up to `2^log` values (a piece's block
    /// of each level is the whole series' block there, pieces being aligned).
    pub fn push(&mut self, v: &[f64]) {
        if v.is_empty() {
            return;
        }
        self.levels.resize_with(self.log as usize, Vec::new);
        let mut level: Vec<(f64, f64)> = v
            .chunks(2)
            .map(|c| {
                c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &b| {
                    (a.0.min(b), a.1.max(b))
                })
            })
            .collect();
        for k in 0..self.log as usize {
            if k > 0 {
                level = level.chunks(2).map(min_max).collect();
            }
            self.levels[k].extend_from_slice(&level);
        }
    }

    /// The pyramid of a series of `n` values: the levels above a piece made from the pieces',
    /// up to a level of one block, and none past it.
    pub(crate) fn finish(mut self, n: usize) -> Vec<Vec<(f64, f64)>> {
        if n <= 1 {
            return Vec::new();
        }
        while self.levels.last().is_some_and(|l| l.len() > 1) {
            let next = self
                .levels
                .last()
                .map_or_else(Vec::new, |l| l.chunks(2).map(min_max).collect::<Vec<_>>());
            self.levels.push(next);
        }
        if let Some(one) = self.levels.iter().position(|l| l.len() == 1) {
            self.levels.truncate(one + 1);
        }
        self.levels
    }
}
