//! The invariants the views index a decoded model by: parallel columns of one length, ids in
//! range. Checked one column per step ([`Checked::step`]) so the page can yield between steps.

use super::bad;
use crate::error::Result;
use crate::model::trace::{Trace, NONE};

/// A decoded trace whose invariants are being checked, one step at a time.
pub struct Checked {
    t: Trace,
    /// The next step's number; past the last once all passed.
    next: usize,
}

/// Steps in [`Checked::step`].
const STEPS: usize = 9;

impl Checked {
    pub(super) fn new(t: Trace) -> Checked {
        Checked { t, next: 0 }
    }

    /// Runs the next check: `Ok(true)` once all passed, an error at the first that fails.
    pub fn step(&mut self) -> Result<bool> {
        if self.next >= STEPS {
            return Ok(true);
        }
        let ok = part(&self.t, self.next);
        self.next += 1;
        if !ok {
            self.next = usize::MAX;
            return Err(bad("columns that do not fit together"));
        }
        Ok(self.next >= STEPS)
    }

    /// The trace, once every step passed.
    pub fn trace(self) -> Result<Trace> {
        if self.next != STEPS {
            return Err(bad("a model not checked"));
        }
        Ok(self.t)
    }
}

/// Check `k` of [`STEPS`]: the lengths first (every later step indexes by them), then one
/// column, or a few small ones, each.
fn part(t: &Trace, k: usize) -> bool {
    let s = &t.slices;
    let n = s.len();
    let g = &t.gpu;
    let i = &t.instants;
    let m = &t.memory;
    let c = &t.counters;
    let strings = t.strings.len() as u32;
    let tracks = t.tracks.len() as u32;
    let in_strings = |v: &[crate::model::StrId]| v.iter().all(|x| x.0 < strings);
    match k {
        0 => lengths(t),
        1 => {
            s.track.iter().all(|&x| x < tracks)
                && i.track.iter().all(|&x| x < tracks)
                && m.track.iter().all(|&x| x < tracks)
                && t.tracks
                    .iter()
                    .all(|tr| tr.first as usize + tr.count as usize <= n)
        }
        2 => in_strings(&s.name) && in_strings(&i.name) && in_strings(&i.cat),
        3 => in_strings(&s.cat),
        4 => in_strings(&s.input_dims),
        5 => in_strings(&s.input_types),
        6 => s.parent.iter().all(|&p| p == NONE || (p as usize) < n),
        7 => {
            g.slice
                .iter()
                .chain(&t.flops.slice)
                .all(|&x| (x as usize) < n)
                && g.launch.iter().all(|&p| p == NONE || (p as usize) < n)
        }
        8 => {
            t.flows
                .from
                .iter()
                .chain(&t.flows.to)
                .all(|&x| (x as usize) < n)
                && c.series.iter().all(|&x| (x as usize) < c.series_name.len())
        }
        _ => true,
    }
}

/// Parallel columns of one length.
fn lengths(t: &Trace) -> bool {
    let s = &t.slices;
    let n = s.len();
    let same = [
        s.dur.len(),
        s.track.len(),
        s.name.len(),
        s.cat.len(),
        s.kind.len(),
        s.depth.len(),
        s.parent.len(),
        s.external_id.len(),
        s.correlation.len(),
        s.rf_id.len(),
        s.input_dims.len(),
        s.input_types.len(),
        s.args.len(),
    ];
    let g = &t.gpu;
    let rows = g.slice.len();
    let gpu = [
        g.device.len(),
        g.stream.len(),
        g.grid.len(),
        g.block.len(),
        g.registers.len(),
        g.shared_memory.len(),
        g.blocks_per_sm.len(),
        g.warps_per_sm.len(),
        g.occupancy_pct.len(),
        g.bytes.len(),
        g.bandwidth_gbs.len(),
        g.launch.len(),
    ];
    let i = &t.instants;
    let m = &t.memory;
    let c = &t.counters;
    same.iter().all(|&x| x == n)
        && gpu.iter().all(|&x| x == rows)
        && t.flops.slice.len() == t.flops.flops.len()
        && [i.track.len(), i.name.len(), i.cat.len(), i.args.len()]
            .iter()
            .all(|&x| x == i.ts.len())
        && [
            m.track.len(),
            m.device_type.len(),
            m.device_id.len(),
            m.addr.len(),
            m.bytes.len(),
            m.total_allocated.len(),
            m.total_reserved.len(),
        ]
        .iter()
        .all(|&x| x == m.ts.len())
        && c.series_pid.len() == c.series_name.len()
        && c.series.len() == c.ts.len()
        && c.value.len() == c.ts.len()
        && t.flows.from.len() == t.flows.cat.len()
        && t.flows.to.len() == t.flows.cat.len()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::view::testutil::trace_json;

    fn two_nested() -> Trace {
        let t = trace_json(
            r#"{"ph":"X","name":"outer","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":10},
               {"ph":"X","name":"inner","cat":"cpu_op","pid":1,"tid":1,"ts":2,"dur":3}"#,
        );
        assert_eq!(t.slices.len(), 2);
        t
    }

    /// A sound model passes every step, one at a time, and only then gives its trace.
    #[test]
    fn a_sound_model_passes_in_steps() {
        let mut c = Checked::new(two_nested());
        let mut steps = 1;
        while !c.step().unwrap() {
            steps += 1;
        }
        assert_eq!(steps, STEPS);
        assert!(c.step().unwrap(), "done stays done");
        assert_eq!(c.trace().unwrap().slices.len(), 2);
        let early = Checked::new(two_nested());
        assert!(early.trace().is_err(), "a trace before its checks");
    }

    /// Each broken invariant fails at its own step, the steps before it passing, and a failed
    /// model never gives its trace.
    #[test]
    fn a_broken_model_fails_at_the_step_that_checks_it() {
        type Break = fn(&mut Trace);
        let cases: [(usize, Break); 5] = [
            (0, |t| {
                t.slices.dur.pop();
            }),
            (1, |t| t.slices.track[0] = 99),
            (3, |t| t.slices.cat[1] = crate::model::StrId(1 << 30)),
            (6, |t| t.slices.parent[1] = 7),
            (8, |t| t.counters.series.push(3)),
        ];
        for (at, broken) in cases {
            let mut t = two_nested();
            broken(&mut t);
            if at == 8 {
                // A series index with its own time and value, so only the range is wrong.
                t.counters.ts.push(0);
                t.counters.value.push(0.0);
            }
            let mut c = Checked::new(t);
            for k in 0..at {
                assert!(!c.step().unwrap(), "step {k} before {at}");
            }
            assert!(c.step().is_err(), "step {at}");
            assert!(c.trace().is_err());
        }
    }
}
