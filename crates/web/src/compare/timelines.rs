//! One step of A above the same step of B, on one relative time axis (each step's start = 0):
//! the two timelines scroll and zoom together, and a diff-table row shows its occurrences in both.
//! The step picker offers the steps both sides have (the n-th of A with the n-th of B); traces
//! without steps are shown whole, from their first event.

use crate::session::pair::{Pair, PairReveal, PairedFn};
use crate::session::SessionRef;
use leptos::prelude::*;
use tracelight_core::model::time::format_duration;

/// A step's `(name, start_ns, dur_ns)`.
type Win = (String, i64, i64);

/// A side's trace file and its steps, else its whole span as one.
fn windows(s: &SessionRef) -> Option<(usize, Vec<Win>)> {
    let f = *s.trace_indices().first()?;
    let tf = s.trace(f)?;
    let steps: Vec<Win> = tf
        .analysis()
        .steps
        .iter()
        .map(|st| (st.name.clone(), st.start_ns, st.dur_ns))
        .collect();
    if !steps.is_empty() {
        return Some((f, steps));
    }
    let (a, b) = tf.trace.time_bounds()?;
    Some((f, vec![("whole trace".to_owned(), a, b - a)]))
}

/// The step of `v` whose duration is the median: a typical step, not the warm-up.
fn typical(v: &[Win]) -> usize {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    tracelight_core::sort::by_key(&mut idx, |&i| (v[i].2, i));
    idx.get(idx.len() / 2).copied().unwrap_or(0)
}

#[component]
pub fn PairedTimelines(
    a: SessionRef,
    b: SessionRef,
    reveal_a: RwSignal<PairReveal>,
    reveal_b: RwSignal<PairReveal>,
    paired: PairedFn,
) -> impl IntoView {
    let (Some((fa, wa)), Some((fb, wb))) = (windows(&a), windows(&b)) else {
        return ().into_any();
    };
    let n = wa.len().min(wb.len());
    let pick = RwSignal::new(typical(&wa[..n]));
    let options = (0..n)
        .map(|k| {
            let text = format!(
                "A {} ({}) · B {} ({})",
                wa[k].0,
                format_duration(wa[k].2),
                wb[k].0,
                format_duration(wb[k].2)
            );
            view! { <option value=k.to_string() prop:selected=move || pick.get() == k>{text}</option> }
        })
        .collect_view();
    let on_pick = move |ev: leptos::ev::Event| {
        if let Ok(k) = event_target_value(&ev).parse::<usize>() {
            if k < n {
                pick.set(k);
            }
        }
    };
    let sides = move || {
        let k = pick.get();
        let (sa, sb) = (&wa[k], &wb[k]);
        // Both start on the longer step, so neither side is cut.
        let rel = RwSignal::new((0, sa.2.max(sb.2).max(1)));
        let pa = Pair {
            side: "A",
            origin_ns: sa.1,
            step_ns: sa.2,
            rel,
            reveal: reveal_a,
        };
        let pb = Pair {
            side: "B",
            origin_ns: sb.1,
            step_ns: sb.2,
            rel,
            reveal: reveal_b,
        };
        view! {
            <div class="cmp-tl" data-testid="compare-tl-a" data-origin-ns=sa.1.to_string() data-step-ns=sa.2.to_string()>{paired(a.clone(), fa, pa)}</div>
            <div class="cmp-tl" data-testid="compare-tl-b" data-origin-ns=sb.1.to_string() data-step-ns=sb.2.to_string()>{paired(b.clone(), fb, pb)}</div>
        }
    };
    view! {
        <section class="card cmp-timelines" data-testid="compare-timelines" data-steps=n.to_string()>
            <div class="toolbar">
                <h2>"Timelines, step by step"</h2>
                <select data-testid="compare-step-pick" on:change=on_pick>{options}</select>
                <span class="muted">"A above B, time from each step's start; zoom and pan move both; a diff row below jumps to its first occurrence inside this step in both."</span>
            </div>
            {sides}
        </section>
    }
    .into_any()
}
