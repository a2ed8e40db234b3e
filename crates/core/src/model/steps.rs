//! Which slices are a trace's **steps**: the one definition every analysis, view and report reads
//! (docs/definitions.md, "Steps"), so a trace whose loop is annotated another way than torch's
//! profiler still has its per-step figures.
//!
//! - torch.profiler's `prof.step()` records `ProfilerStep#N` around each step: when a trace has
//!   any, they are its steps and nothing else is.
//! - Otherwise, a training loop's own numbered annotation (`with record_function(f"train_step_{i}")`,
//!   as nanochat- or NeMo-style loops and many hand-written ones do): a host-side
//!   `user_annotation` named `<prefix><sep>N`, where the prefix is one of [`USER_PREFIXES`]
//!   (case-insensitive), the separator `_`, `#`, `-`, a space or none, and `N` a number. The first
//!   prefix of that list some such annotation carries is the trace's, so a `step_3` nested in
//!   `train_step_3` is not a second set of steps.
//!
//! The rule is decided once per trace, on first use ([`super::Trace::step_rule`]).

use super::{SliceKind, Trace};

/// What torch's profiler names a step, before its number.
pub const PROFILER_PREFIX: &str = "ProfilerStep#";
/// Numbered user annotations read as steps when there is no `ProfilerStep#N`, most specific
/// first.
pub const USER_PREFIXES: [&str; 6] = [
    "train_step",
    "training_step",
    "train_iter",
    "iteration",
    "step",
    "iter",
];
/// [`StepRule::merged`] of each of [`USER_PREFIXES`].
const USER_MERGED: [&str; 6] = [
    "train_step*",
    "training_step*",
    "train_iter*",
    "iteration*",
    "step*",
    "iter*",
];

/// How a trace's steps are named.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum StepRule {
    /// No step annotation: the whole trace is the window.
    #[default]
    None,
    /// `ProfilerStep#N`.
    Profiler,
    /// A user annotation with this prefix (one of [`USER_PREFIXES`], lower case).
    User(&'static str),
}

/// `name`'s prefix (one of [`USER_PREFIXES`]) and number when it is a numbered loop annotation.
fn user_step(name: &str) -> Option<(&'static str, i64)> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 18 {
        return None;
    }
    let (head, num) = name.split_at(name.len() - digits);
    let head = head.strip_suffix(['_', '#', '-', ' ']).unwrap_or(head);
    let p = USER_PREFIXES
        .iter()
        .find(|p| head.eq_ignore_ascii_case(p))?;
    Some((p, num.parse().ok()?))
}

impl StepRule {
    /// The rule of `t`: `ProfilerStep#N` if any host slice is one, else the first of
    /// [`USER_PREFIXES`] a host `user_annotation` carries, else none.
    pub fn of(t: &Trace) -> StepRule {
        let s = &t.slices;
        // Each distinct name once.
        let mut seen = vec![false; t.strings.len()];
        let mut best: Option<usize> = None;
        for i in 0..s.len() {
            let k = s.kind[i];
            if !matches!(k, SliceKind::UserAnnotation | SliceKind::CpuOp) {
                continue;
            }
            let id = s.name[i];
            match seen.get_mut(id.0 as usize) {
                Some(true) => continue,
                Some(v) => *v = true,
                None => {}
            }
            let name = t.str(id);
            if name
                .strip_prefix(PROFILER_PREFIX)
                .is_some_and(|n| n.parse::<i64>().is_ok())
            {
                return StepRule::Profiler;
            }
            if k == SliceKind::UserAnnotation {
                if let Some((p, _)) = user_step(name) {
                    let rank = USER_PREFIXES.iter().position(|x| *x == p);
                    best = match (best, rank) {
                        (Some(b), Some(r)) => Some(b.min(r)),
                        (None, r) => r,
                        (b, None) => b,
                    };
                }
            }
        }
        best.map_or(StepRule::None, |k| StepRule::User(USER_PREFIXES[k]))
    }

    /// The step number of a slice named `name` under this rule.
    pub fn number(&self, name: &str) -> Option<i64> {
        match self {
            StepRule::None => None,
            StepRule::Profiler => name.strip_prefix(PROFILER_PREFIX)?.parse().ok(),
            StepRule::User(p) => user_step(name).filter(|(q, _)| q == p).map(|(_, n)| n),
        }
    }

    /// Whether a slice named `name` is a step under this rule.
    pub fn is_step(&self, name: &str) -> bool {
        self.number(name).is_some()
    }

    /// What the steps are called (`ProfilerStep`, `train_step`), for messages.
    pub fn label(&self) -> &'static str {
        match self {
            StepRule::None | StepRule::Profiler => "ProfilerStep",
            StepRule::User(p) => p,
        }
    }

    /// The row or frame every step merges into (`ProfilerStep*`, as torch's `key_averages`
    /// names it; `train_step*` for a user annotation).
    pub fn merged(&self) -> &'static str {
        match self {
            StepRule::None | StepRule::Profiler => "ProfilerStep*",
            StepRule::User(p) => USER_PREFIXES
                .iter()
                .position(|x| x == p)
                .map_or("ProfilerStep*", |k| USER_MERGED[k]),
        }
    }
}

/// Whether torch's `key_averages` merges a row of this name into `ProfilerStep*`: only
/// `ProfilerStep#N` (a loop's own `train_step_N` stays a row per name there). The op tables,
/// which match `key_averages` row for row, merge these and no others; the flame graph merges
/// every step of the trace's rule.
pub fn torch_merges(name: &str) -> bool {
    name.starts_with(PROFILER_PREFIX)
}

/// Whether `name` is a row or frame all steps merged into ([`StepRule::merged`] of any rule),
/// for code that reads the tables without the trace.
pub fn is_merged(name: &str) -> bool {
    name == "ProfilerStep*" || USER_MERGED.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_loop_annotations_parse_and_others_do_not() {
        assert_eq!(user_step("train_step_12"), Some(("train_step", 12)));
        assert_eq!(user_step("Train_Step#3"), Some(("train_step", 3)));
        assert_eq!(user_step("step 7"), Some(("step", 7)));
        assert_eq!(user_step("iteration-0"), Some(("iteration", 0)));
        assert_eq!(user_step("step7"), Some(("step", 7)));
        assert_eq!(user_step("train_step"), None);
        assert_eq!(user_step("optimizer_step_1"), None);
        assert_eq!(user_step("## forward ##"), None);
        let r = StepRule::User("train_step");
        assert_eq!(r.number("train_step_4"), Some(4));
        assert_eq!(r.number("step_4"), None);
        assert_eq!(r.number("ProfilerStep#4"), None);
        assert_eq!(StepRule::Profiler.number("ProfilerStep#4"), Some(4));
        assert_eq!(StepRule::Profiler.number("train_step_4"), None);
        assert_eq!(StepRule::None.number("ProfilerStep#4"), None);
        assert_eq!(r.merged(), "train_step*");
        assert_eq!(StepRule::Profiler.merged(), "ProfilerStep*");
        assert!(is_merged("train_step*") && is_merged("ProfilerStep*") && !is_merged("aten::mm"));
    }
}
