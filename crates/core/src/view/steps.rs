//! Step markers (`ProfilerStep#N`, else a numbered loop annotation: `model::steps`) for the time ruler: one per step number, in time order.

use crate::model::Trace;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepMark {
    pub start: i64,
    pub end: i64,
    /// `#N`, N the step's number.
    pub label: String,
    pub slice: u32,
    /// N.
    pub number: i64,
}

/// One mark per step number: its earliest host-side slice (`analysis::scope::step_scopes`, so
/// the ruler's step N is the window `--scope step:N` uses), in time order.
pub fn step_marks(t: &Trace) -> Vec<StepMark> {
    let s = &t.slices;
    let mut out: Vec<StepMark> = crate::analysis::scope::step_scopes(t)
        .into_iter()
        .map(|(n, w)| {
            let i = w.slice as usize;
            StepMark {
                start: s.start[i],
                end: s.end(i),
                label: format!("#{n}"),
                slice: w.slice,
                number: n,
            }
        })
        .collect();
    crate::sort::by_key(&mut out, |m| (m.start, m.slice));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testutil::trace_of;

    #[test]
    fn one_mark_per_step_in_time_order() {
        let t = trace_of(&[
            ("ProfilerStep#8", "user_annotation", 1, 100.0, 50.0),
            ("ProfilerStep#7", "user_annotation", 1, 0.0, 90.0),
            ("aten::mm", "cpu_op", 1, 10.0, 5.0),
            ("ProfilerStep#7", "user_annotation", 2, 0.0, 90.0),
        ]);
        let m = step_marks(&t);
        let labels: Vec<&str> = m.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["#7", "#8"]);
        assert_eq!((m[1].start, m[1].end), (100_000, 150_000));
    }
}
