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
        // The first occurrence inside the chosen step (and the shown window, if one is), so
        // both panes show the row's work in the step compared; else one in the window, else
        // the first. The shared window only ever widens to take it in (the other side then
        // still holds its own), and its track is scrolled into the pane.
        let (w0, w1) = p.window();
        let (s0, s1) = (o, o.saturating_add(p.step_ns.max(1)));
        let meets = |i: u32, a: i64, b: i64| {
            let iu = i as usize;
            t.slices.start[iu] < b && t.slices.end(iu) > a
        };
        let cur = v
            .iter()
            .position(|&i| meets(i, s0, s1) && meets(i, w0, w1))
            .or_else(|| v.iter().position(|&i| meets(i, s0, s1)))
            .or_else(|| v.iter().position(|&i| meets(i, w0, w1)))
            .unwrap_or(0);
        let first = v.get(cur).copied();
        tl.selected.set(first);
        tl.revealed.set(Some(Revealed {
            label,
            slices: Arc::new(v),
            cur,
            ranges: Arc::default(),
        }));
        if let Some(i) = first {
            let iu = i as usize;
            let (a, b) = (t.slices.start[iu], t.slices.end(iu));
            if a < w0 || b > w1 {
                let pad = (b - a).max(1);
                let (r0, r1) = p.rel.get_untracked();
                p.rel.set((
                    r0.min(a.saturating_sub(o).saturating_sub(pad)),
                    r1.max(b.saturating_sub(o).saturating_add(pad)),
                ));
            }
            c.show_slice_row(i);
            // Again on the next frame: a group just opened grows the scroll area only when the
            // DOM has its new height, and the browser clamps a scroll set before that.
            let c2 = c.clone();
            request_animation_frame(move || c2.show_slice_row(i));
        }
    });
}
