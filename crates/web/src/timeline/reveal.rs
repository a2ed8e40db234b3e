//! The reveal banner: another view asked to show a set of slices ("row click → occurrences");
//! shows "name — N occurrences", steps through them and dismisses.

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
    let n = r.slices.len() as isize;
    if n == 0 {
        return;
    }
    r.cur = (r.cur as isize + delta).rem_euclid(n) as usize;
    let i = r.slices.get(r.cur).copied();
    c.tl.revealed.set(Some(r));
    if let Some(i) = i {
        c.focus(i);
    }
}

#[component]
pub fn RevealBanner(ctx: Ctx) -> impl IntoView {
    let c = ctx.clone();
    move || {
        let r = c.tl.revealed.get()?;
        let n = r.slices.len();
        let (c1, c2, tl) = (c.clone(), c.clone(), c.tl);
        Some(view! {
            <div class="tl-reveal" data-testid="reveal" data-count=n.to_string()>
                <strong data-testid="reveal-label">{format!("{} — {n} occurrences", r.label)}</strong>
                <button class="button" data-testid="reveal-prev" on:click=move |_| step(&c1, -1)>"‹ Previous"</button>
                <span data-testid="reveal-pos">{format!("{} / {n}", (r.cur + 1).min(n))}</span>
                <button class="button" data-testid="reveal-next" on:click=move |_| step(&c2, 1)>"Next ›"</button>
                <button class="button" data-testid="reveal-close" on:click=move |_| tl.revealed.set(None)>"✕"</button>
            </div>
        })
    }
}
