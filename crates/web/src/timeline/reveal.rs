//! The reveal banner: another view asked to show a set of slices ("row click → occurrences") or
//! of time intervals (idle stretches of one cause); shows "name — N occurrences" / "N
//! intervals", steps through them and dismisses.

use super::tlstate::{Ctx, Revealed};
use crate::session::Nav;
use leptos::prelude::*;
use std::sync::Arc;

/// Takes `nav.reveal` for this file into the timeline: sorted by time, the first one focused.
pub fn follow(c: &Ctx) {
    let Some(nav) = use_context::<Nav>() else {
        return;
    };
    let c = c.clone();
    Effect::new(move |_| {
        let Some(r) = nav.reveal.get() else { return };
        if r.file != c.file {
            return;
        }
        let Some(t) = c.trace() else { return };
        if !r.ranges.is_empty() {
            let mut v: Vec<(i64, i64)> = r.ranges.iter().copied().filter(|x| x.1 > x.0).collect();
            v.sort_unstable();
            let first = v.first().copied();
            c.tl.revealed.set(Some(Revealed {
                label: r.label.clone(),
                slices: Arc::default(),
                cur: 0,
                ranges: Arc::new(v),
            }));
            nav.reveal.set(None);
            if let Some((a, b)) = first {
                c.show_range(a, b);
            }
            return;
        }
        let mut v: Vec<u32> = r
            .slices
            .iter()
            .copied()
            .filter(|&i| (i as usize) < t.slices.len())
            .collect();
        tracelight_core::sort::by_key(&mut v, |&i| (t.slices.start[i as usize], i));
        v.dedup();
        let cur = r.first.min(v.len().saturating_sub(1));
        let first = v.get(cur).copied();
        c.tl.revealed.set(Some(Revealed {
            label: r.label.clone(),
            slices: Arc::new(v),
            cur,
            ranges: Arc::default(),
        }));
        nav.reveal.set(None);
        if let Some(i) = first {
            c.zoom_to(i);
            c.tl.selected.set(Some(i));
        }
    });
}

fn step(c: &Ctx, delta: isize) {
    let Some(mut r) = c.tl.revealed.get_untracked() else {
        return;
    };
    let n = r.len() as isize;
    if n == 0 {
        return;
    }
    r.cur = (r.cur as isize + delta).rem_euclid(n) as usize;
    let i = r.slices.get(r.cur).copied();
    let band = r.band();
    c.tl.revealed.set(Some(r));
    if let Some((a, b)) = band {
        c.show_range(a, b);
    } else if let Some(i) = i {
        c.focus(i);
    }
}

#[component]
pub fn RevealBanner(ctx: Ctx) -> impl IntoView {
    let c = ctx.clone();
    move || {
        let r = c.tl.revealed.get()?;
        let n = r.len();
        let what = if r.ranges.is_empty() {
            "occurrences"
        } else {
            "intervals"
        };
        let band = r
            .band()
            .map(|(a, b)| format!("{a},{b}"))
            .unwrap_or_default();
        let (c1, c2, tl) = (c.clone(), c.clone(), c.tl);
        Some(view! {
            <div class="tl-reveal" data-testid="reveal" data-count=n.to_string() data-band=band>
                <strong data-testid="reveal-label">{format!("{} — {n} {what}", r.label)}</strong>
                <button class="button" data-testid="reveal-prev" on:click=move |_| step(&c1, -1)>"‹ Previous"</button>
                <span data-testid="reveal-pos">{format!("{} / {n}", (r.cur + 1).min(n))}</span>
                <button class="button" data-testid="reveal-next" on:click=move |_| step(&c2, 1)>"Next ›"</button>
                <button class="button" data-testid="reveal-close" on:click=move |_| tl.revealed.set(None)>"✕"</button>
            </div>
        })
    }
}
