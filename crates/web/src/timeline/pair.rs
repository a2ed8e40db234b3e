//! A paired timeline (`session::pair`): keeps its window and the shared relative one in step and
//! takes the occurrences the compare view asks for. A paired timeline owns no deep link, keyboard
//! or app-wide window: those belong to the main timeline.

use super::tlstate::{Ctx, Revealed};
use super::viewport::Viewport;
use crate::session::pair::Pair;
use leptos::prelude::*;
use std::sync::Arc;

/// Keeps this side's window and the shared relative one in step, and takes occurrences in.
pub fn follow(c: &Ctx, p: Pair) {
    let tl = c.tl;
    let o = p.origin_ns;
    Effect::new(move |_| {
        let vp = tl.vp.get();
        let rel = (vp.start_ns.saturating_sub(o), vp.end_ns.saturating_sub(o));
        if p.rel.get_untracked() != rel {
            p.rel.set(rel);
        }
    });
    Effect::new(move |_| {
        let (a, b) = p.rel.get();
        let want = (o.saturating_add(a), o.saturating_add(b));
        let vp = tl.vp.get_untracked();
        if (vp.start_ns, vp.end_ns) != want {
            tl.vp
                .update(|v| *v = Viewport::new(want.0, want.1, v.width_px));
        }
    });
    let c = c.clone();
    Effect::new(move |_| {
        let Some((slices, label)) = p.reveal.get() else {
            tl.revealed.set(None);
            return;
        };
        let Some(t) = c.trace() else { return };
        let mut v: Vec<u32> = slices
            .iter()
            .copied()
            .filter(|&i| (i as usize) < t.slices.len())
            .collect();
        tracelight_core::sort::by_key(&mut v, |&i| (t.slices.start[i as usize], i));
        // The first occurrence in the shown window, else the first: selected, window unchanged
        // (the other side shows its own occurrences in the same window).
        let (w0, w1) = p.window();
        let cur = v
            .iter()
            .position(|&i| t.slices.start[i as usize] < w1 && t.slices.end(i as usize) > w0)
            .unwrap_or(0);
        tl.selected.set(v.get(cur).copied());
        tl.revealed.set(Some(Revealed {
            label,
            slices: Arc::new(v),
            cur,
        }));
    });
}
