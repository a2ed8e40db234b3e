//! The timeline's part of the deep link (`tracelight_core::view::link`): restored when the
//! timeline mounts (window or step, selected slice, revealed op or kernel at its occurrence) and
//! written back, debounced, as they change.

use super::tlstate::{Ctx, Revealed};
use super::viewport::Viewport;
use crate::platform::hash;
use crate::session::reveal::{named_of, named_slices};
use crate::session::{Nav, Tab};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::view::link::{step_window, SliceRef};

/// Applies the link in the URL hash, if it is for this file.
pub fn restore(c: &Ctx) {
    let link = hash::read();
    if link.file.is_some_and(|f| f != c.file) {
        return;
    }
    let Some(tf) = c.session.trace(c.file) else {
        return;
    };
    let t = &tf.trace;
    let bounds = c.data.bounds;
    let window = link
        .window
        .or_else(|| link.step.as_deref().and_then(|s| step_window(t, s)))
        .filter(|&(a, b)| a < bounds.1 && b > bounds.0);
    if let Some((a, b)) = window {
        c.tl.vp.update(|v| *v = Viewport::new(a, b, v.width_px));
    }
    let sel = link
        .slice
        .as_ref()
        .and_then(|r| r.find(t))
        .or(link.sel.filter(|&s| (s as usize) < t.slices.len()));
    let mut focus = sel;
    if let Some((kind, name, n)) = link.reveal {
        let v = named_slices(tf, kind, &name);
        if let Some(last) = v.len().checked_sub(1) {
            let cur = (n as usize).saturating_sub(1).min(last);
            focus = focus.or(Some(v[cur]));
            c.tl.revealed.set(Some(Revealed {
                label: name,
                slices: Arc::new(v),
                cur,
                ranges: Arc::default(),
            }));
        }
    }
    if let Some(i) = focus {
        if window.is_some() {
            c.tl.selected.set(Some(i));
        } else {
            c.focus(i);
        }
    }
}

/// Keeps the hash in step with the window, the selection and the revealed occurrence.
pub fn follow(c: &Ctx) {
    let deb = hash::Debounced::new();
    let c = c.clone();
    // The tab shown (embed mode's Overview shows the timeline too: its link keeps that tab).
    let nav = use_context::<Nav>();
    Effect::new(move |_| {
        let tab = nav.map_or(Tab::Timeline, |n| n.tab.get_untracked());
        let vp = c.tl.vp.get();
        let sel = c.tl.selected.get();
        let revealed = c.tl.revealed.get();
        let Some(t) = c.trace() else { return };
        let slice = sel
            .filter(|&i| (i as usize) < t.slices.len())
            .map(|i| SliceRef::of(t, i as usize));
        let reveal = revealed.and_then(|r| {
            let kind = named_of(t, &r.label, &r.slices)?;
            Some((kind, r.label.clone(), r.cur as u32 + 1))
        });
        let file = c.file;
        deb.update(move |d| {
            d.tab = Some(tab.slug().to_owned());
            d.file = Some(file);
            d.window = Some((vp.start_ns, vp.end_ns));
            d.sel = None;
            d.step = None;
            d.slice = slice;
            d.reveal = reveal;
        });
    });
}
