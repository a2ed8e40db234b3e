//! Scoped tables: the part of a trace the Overview, Operators, Kernels and Modules tables are
//! restricted to — one `ProfilerStep#N`, a `user_annotation` region (all its occurrences or one),
//! or a time window (the timeline's area selection). A scope is a set of disjoint windows
//! `[start, end)` in trace ns ([`TimeScope`]); [`crate::report::analysis::Analysis::scoped`]
//! builds the tables over it, and `tracelight analyze --scope` prints them.
//!
//! How events are counted (docs/definitions.md, "Scoped tables"):
//! - **Host events** (ops, annotations, runtime calls, module frames) belong to the scope when
//!   they *start* inside a window, and then count **whole**: an op that starts inside and ends
//!   after the window keeps its full CPU time, self time and the device time of everything it
//!   launched; an op that started before the window is out, even where its children are in.
//!   Clipping would make self time and calls meaningless, and a step or an annotation contains
//!   its ops entirely, so the choice only shows at the edge of a hand-drawn window.
//! - **Device work** (kernels, memcpy, memset) belongs to the scope when the runtime call that
//!   *launched* it starts inside a window (a kernel launched in step 3 that runs during step 4 is
//!   step 3's work, as in the per-step distribution), else, without a recorded launch, when it
//!   starts inside. So an op's device time and the kernel table agree.
//! - **Time figures** (GPU utilization, busy and idle time, the step breakdown) are about the
//!   windows themselves: what ran on the GPU during them, clipped to them.
//! - `[memory]` events count where their timestamp lies.

use crate::model::steps::StepRule;
use crate::model::{Ns, SliceKind, Trace, NONE};

/// What the user picked, as written in the CLI's `--scope` and the page's link (`scope=`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ScopeSpec {
    #[default]
    Whole,
    /// `step:N`: the slice `ProfilerStep#N`.
    Step(i64),
    /// `annotation:NAME` (every occurrence) or `annotation:NAME:K` (the K-th, 1-based, in time
    /// order): `user_annotation` slices (`record_function`) named NAME.
    Annotation {
        name: String,
        occurrence: Option<u32>,
    },
    /// `window:START-END`, trace ns.
    Window(Ns, Ns),
}

impl ScopeSpec {
    /// Parses `whole`, `step:N`, `annotation:NAME[:K]`, `window:START-END`. An annotation name
    /// may contain `:` (`nccl:all_reduce`); a last part made of digits is the occurrence.
    pub fn parse(text: &str) -> Result<ScopeSpec, String> {
        let text = text.trim();
        if text.is_empty() || text == "whole" {
            return Ok(ScopeSpec::Whole);
        }
        let bad = || {
            format!(
                "bad scope {text:?}: expected step:N, annotation:NAME[:OCCURRENCE] or \
                 window:START_NS-END_NS"
            )
        };
        let (kind, rest) = text.split_once(':').ok_or_else(bad)?;
        match kind {
            "step" => {
                let n = rest.trim_start_matches("ProfilerStep#");
                n.parse().map(ScopeSpec::Step).map_err(|_| bad())
            }
            "annotation" if !rest.is_empty() => {
                let (name, occurrence) = match rest.rsplit_once(':') {
                    Some((name, k))
                        if !name.is_empty()
                            && !k.is_empty()
                            && k.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        let k: u32 = k.parse().map_err(|_| bad())?;
                        if k == 0 {
                            return Err(format!("{}: occurrences count from 1", bad()));
                        }
                        (name, Some(k))
                    }
                    _ => (rest, None),
                };
                Ok(ScopeSpec::Annotation {
                    name: name.to_owned(),
                    occurrence,
                })
            }
            "window" => {
                // The separator is the first '-' after the start's own sign.
                let cut = rest
                    .char_indices()
                    .skip(1)
                    .find(|&(_, c)| c == '-')
                    .map(|(k, _)| k)
                    .ok_or_else(bad)?;
                let a: Ns = rest[..cut].parse().map_err(|_| bad())?;
                let b: Ns = rest[cut + 1..].parse().map_err(|_| bad())?;
                if b <= a {
                    return Err(format!("{}: the window ends before it starts", bad()));
                }
                Ok(ScopeSpec::Window(a, b))
            }
            _ => Err(bad()),
        }
    }

    /// The text [`ScopeSpec::parse`] reads back.
    pub fn text(&self) -> String {
        match self {
            ScopeSpec::Whole => "whole".into(),
            ScopeSpec::Step(n) => format!("step:{n}"),
            ScopeSpec::Annotation {
                name,
                occurrence: None,
            } => format!("annotation:{name}"),
            ScopeSpec::Annotation {
                name,
                occurrence: Some(k),
            } => format!("annotation:{name}:{k}"),
            ScopeSpec::Window(a, b) => format!("window:{a}-{b}"),
        }
    }

    /// What a person reads: `ProfilerStep#3`, `forward (all 3)`, `forward #2`, `window 1.5 ms`.
    pub fn label(&self) -> String {
        match self {
            ScopeSpec::Whole => "whole trace".into(),
            ScopeSpec::Step(n) => format!("ProfilerStep#{n}"),
            ScopeSpec::Annotation {
                name,
                occurrence: None,
            } => format!("{name} (every occurrence)"),
            ScopeSpec::Annotation {
                name,
                occurrence: Some(k),
            } => format!("{name} #{k}"),
            ScopeSpec::Window(a, b) => {
                format!("window of {}", crate::model::time::format_duration(b - a))
            }
        }
    }

    /// The windows this names in `t`; an error says what the trace has instead.
    pub fn resolve(&self, t: &Trace) -> Result<Option<TimeScope>, String> {
        let s = &t.slices;
        let host = |i: usize| matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation);
        let window = |i: usize, label: String| Window {
            start_ns: s.start[i],
            // A zero-length slice still names its instant.
            end_ns: s.end(i).max(s.start[i] + 1),
            label,
            slice: i as u32,
        };
        let windows = match self {
            ScopeSpec::Whole => return Ok(None),
            ScopeSpec::Step(n) => {
                // By number under the trace's step rule (`model::steps`): `ProfilerStep#N`, or
                // `train_step_N` in a loop annotated so.
                let rule = t.step_rule();
                let name = match rule {
                    StepRule::User(p) => format!("{p}_{n}"),
                    _ => format!("ProfilerStep#{n}"),
                };
                let found = (0..s.len())
                    .filter(|&i| host(i) && rule.number(t.str(s.name[i])) == Some(*n))
                    .min_by_key(|&i| (s.start[i], i));
                match found {
                    Some(i) => vec![window(i, t.str(s.name[i]).to_owned())],
                    None => {
                        let steps = step_numbers(t);
                        return Err(match (steps.first(), steps.last()) {
                            (Some(a), Some(b)) => format!(
                                "no {name} in this trace (it has {} steps, #{a} to #{b})",
                                steps.len()
                            ),
                            _ => format!(
                                "no {name}: this trace has no step annotation (ProfilerStep#N, or a loop's train_step_N)"
                            ),
                        });
                    }
                }
            }
            ScopeSpec::Annotation { name, occurrence } => {
                let all = annotation_slices(t, name);
                if all.is_empty() {
                    return Err(format!("no user_annotation named {name:?} in this trace"));
                }
                match occurrence {
                    Some(k) => match all.get(*k as usize - 1) {
                        Some(&i) => vec![window(i as usize, format!("{name} #{k}"))],
                        None => {
                            return Err(format!("{name:?} occurs {} times, not {k}", all.len()))
                        }
                    },
                    None => all
                        .iter()
                        .enumerate()
                        .map(|(k, &i)| window(i as usize, format!("{name} #{}", k + 1)))
                        .collect(),
                }
            }
            ScopeSpec::Window(a, b) => vec![Window {
                start_ns: *a,
                end_ns: *b,
                label: self.label(),
                slice: NONE,
            }],
        };
        Ok(Some(TimeScope::new(windows)))
    }
}

/// One window of a scope, with what it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub start_ns: Ns,
    pub end_ns: Ns,
    /// `ProfilerStep#3`, `forward #2`.
    pub label: String,
    /// The step or annotation slice, [`NONE`] for a drawn window.
    pub slice: u32,
}

/// Windows in time order. Occurrences that overlap (a nested or recursive annotation) stay
/// separate windows for the step breakdown but count once for membership ([`TimeScope::merged`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TimeScope {
    pub windows: Vec<Window>,
    /// The windows' union, sorted and disjoint.
    pub merged: Vec<(Ns, Ns)>,
}

impl TimeScope {
    pub fn new(mut windows: Vec<Window>) -> TimeScope {
        crate::sort::by_key(&mut windows, |w| (w.start_ns, w.end_ns, w.slice));
        let merged =
            super::intervals::union(windows.iter().map(|w| (w.start_ns, w.end_ns)).collect());
        TimeScope { windows, merged }
    }

    /// Whether instant `ts` lies in a window.
    pub fn contains(&self, ts: Ns) -> bool {
        let k = self.merged.partition_point(|w| w.0 <= ts);
        k > 0 && ts < self.merged[k - 1].1
    }

    /// The windows' total length (overlaps once).
    pub fn total_ns(&self) -> Ns {
        super::intervals::total(&self.merged)
    }

    /// Per slice, whether it belongs to the scope (see the module doc): host slices by their
    /// start, device work by its launching call's start (else its own).
    pub fn slice_mask(&self, t: &Trace) -> Vec<bool> {
        let s = &t.slices;
        let mut keep: Vec<bool> = (0..s.len()).map(|i| self.contains(s.start[i])).collect();
        let g = &t.gpu;
        for r in 0..g.slice.len() {
            let i = g.slice[r] as usize;
            let l = g.launch[r];
            if l != NONE && s.kind[i].is_gpu_work() {
                keep[i] = self.contains(s.start[l as usize]);
            }
        }
        keep
    }
}

/// A per-slice filter for the table builders: every slice, or those a scope keeps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mask<'a>(pub Option<&'a [bool]>);

impl Mask<'_> {
    pub const ALL: Mask<'static> = Mask(None);

    pub fn has(&self, i: usize) -> bool {
        self.0.is_none_or(|m| m.get(i).copied().unwrap_or(false))
    }
}

/// The `N` of every step host slice (`ProfilerStep#N`, else e.g. `train_step_N`:
/// `model::steps`), ascending.
pub fn step_numbers(t: &Trace) -> Vec<i64> {
    step_scopes(t).into_iter().map(|(n, _)| n).collect()
}

/// Every step's window, by number, as [`ScopeSpec::Step`]`(n).resolve` gives it (the earliest
/// host-side slice numbered `n` under the trace's step rule), in one pass over the slices with each
/// name's number read once: the scope picker lists every step, and resolving them one at a time
/// was steps × slices (0.6 s of the page's thread on a trace of 1,721 steps).
pub fn step_scopes(t: &Trace) -> Vec<(i64, Window)> {
    let s = &t.slices;
    let rule = t.step_rule();
    let mut number: Vec<Option<Option<i64>>> = vec![None; t.strings.len()];
    let mut best: rustc_hash::FxHashMap<i64, usize> = Default::default();
    for i in 0..s.len() {
        if !matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation) {
            continue;
        }
        let id = s.name[i];
        let n = match number.get_mut(id.0 as usize) {
            Some(Some(n)) => *n,
            Some(slot) => *slot.insert(rule.number(t.str(id))),
            None => rule.number(t.str(id)),
        };
        let Some(n) = n else { continue };
        let e = best.entry(n).or_insert(i);
        if (s.start[i], i) < (s.start[*e], *e) {
            *e = i;
        }
    }
    let mut v: Vec<(i64, Window)> = best
        .into_iter()
        .map(|(n, i)| {
            let w = Window {
                start_ns: s.start[i],
                end_ns: s.end(i).max(s.start[i] + 1),
                label: t.str(s.name[i]).to_owned(),
                slice: i as u32,
            };
            (n, w)
        })
        .collect();
    v.sort_unstable_by_key(|(n, _)| *n);
    v
}

/// The host-side `user_annotation` slices named `name`, in time order.
pub fn annotation_slices(t: &Trace, name: &str) -> Vec<u32> {
    let s = &t.slices;
    let Some(id) = t.strings.get(name) else {
        return Vec::new();
    };
    let mut v: Vec<u32> = (0..s.len())
        .filter(|&i| s.name[i] == id && s.kind[i] == SliceKind::UserAnnotation)
        .map(|i| i as u32)
        .collect();
    crate::sort::by_key(&mut v, |&i| (s.start[i as usize], i));
    v
}

/// The annotations a scope picker offers: every `user_annotation` name but the steps and the
/// async collectives (`nccl:*` …, which start and end on different threads), with its
/// occurrences and their summed host time; most time first.
pub fn annotation_names(t: &Trace) -> Vec<(String, u32, Ns)> {
    let s = &t.slices;
    let mut acc: rustc_hash::FxHashMap<crate::model::StrId, (u32, Ns)> = Default::default();
    for i in 0..s.len() {
        if s.kind[i] == SliceKind::UserAnnotation {
            let e = acc.entry(s.name[i]).or_default();
            e.0 += 1;
            e.1 += s.dur[i];
        }
    }
    let mut v: Vec<(String, u32, Ns)> = acc
        .into_iter()
        .map(|(id, (n, d))| (t.str(id).to_owned(), n, d))
        .filter(|(name, _, _)| {
            !t.step_rule().is_step(name)
                && !["gloo:", "nccl:", "mpi:", "ucc:", "xccl:"]
                    .iter()
                    .any(|p| name.starts_with(p))
        })
        .collect();
    crate::sort::by(&mut v, |a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_bad_ones_say_what_is_expected() {
        for text in [
            "step:12",
            "annotation:## forward ##",
            "annotation:nccl:all_reduce:3",
            "window:100-2000",
            "window:-50-20",
        ] {
            assert_eq!(ScopeSpec::parse(text).unwrap().text(), text);
        }
        assert_eq!(ScopeSpec::parse("").unwrap(), ScopeSpec::Whole);
        assert_eq!(
            ScopeSpec::parse("step:ProfilerStep#4").unwrap(),
            ScopeSpec::Step(4)
        );
        assert_eq!(
            ScopeSpec::parse("annotation:nccl:all_reduce").unwrap(),
            ScopeSpec::Annotation {
                name: "nccl:all_reduce".into(),
                occurrence: None
            }
        );
        for bad in [
            "step:x",
            "annotation:",
            "annotation:a:0",
            "window:5-5",
            "window:9",
            "zzz",
        ] {
            assert!(ScopeSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
