//! Step markers (`ProfilerStep#N`, else a numbered loop annotation: `model::steps`) for the time ruler: one per step number, in time order.

use crate::model::{SliceKind, Trace};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepMark {
    pub start: i64,
    pub end: i64,
    /// `#N`, N the step's number.
    pub label: String,
    pub slice: u32,
}

/// Host-side step slices (`model::steps`; the GPU copies of the annotation are skipped), first
/// occurrence of each name, sorted by start.
pub fn step_marks(t: &Trace) -> Vec<StepMark> {
    let s = &t.slices;
    let mut out: Vec<StepMark> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for i in 0..s.len() {
        if !matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation) {
            continue;
        }
        let Some(n) = t.step_number(s.name[i]) else {
            continue;
        };
        if seen.insert(s.name[i]) {
            out.push(StepMark {
                start: s.start[i],
                end: s.end(i),
                label: format!("#{n}"),
                slice: i as u32,
            });
        }
    }
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
