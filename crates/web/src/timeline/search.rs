//! The search box: substring or `/regex/` over slice names; matches are highlighted on the canvas,
//! Enter / Shift+Enter (or the arrows) step through them in time order.

use super::tlstate::Ctx;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::view::search::{find, Matcher};

fn step(c: &Ctx, delta: isize) {
    let m = c.tl.matches.get_untracked();
    if m.is_empty() {
        return;
    }
    let n = m.len() as isize;
    let next = match c.tl.match_cur.get_untracked() {
        Some(k) => (k as isize + delta).rem_euclid(n),
        None if delta >= 0 => 0,
        None => n - 1,
    } as usize;
    c.tl.match_cur.set(Some(next));
    if let Some(&i) = m.get(next) {
        c.focus(i);
    }
}

#[component]
pub fn SearchBox(ctx: Ctx) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let c = ctx.clone();
    let on_input = move |ev: leptos::ev::Event| {
        let q = event_target_value(&ev);
        let Some(t) = c.trace() else { return };
        match Matcher::parse(&q) {
            Ok(Some(m)) => {
                error.set(None);
                c.tl.matches.set(Arc::new(find(t, &m)));
            }
            Ok(None) => {
                error.set(None);
                c.tl.matches.set(Arc::new(Vec::new()));
            }
            Err(e) => error.set(Some(e)),
        }
        c.tl.match_cur.set(None);
    };
    let c2 = ctx.clone();
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" {
            ev.prevent_default();
            step(&c2, if ev.shift_key() { -1 } else { 1 });
        }
    };
    let (c3, c4) = (ctx.clone(), ctx.clone());
    let tl = ctx.tl;
    let count = move || {
        let n = tl.matches.with(|m| m.len());
        match tl.match_cur.get() {
            Some(k) if n > 0 => format!("{} / {n}", k + 1),
            _ => format!("{n} matches"),
        }
    };
    view! {
        <span class="tl-search">
            <input
                type="search"
                placeholder="Search names (/regex/)"
                data-testid="search"
                on:input=on_input
                on:keydown=on_key
            />
            <span class="hint" data-testid="search-count" data-count=move || tl.matches.with(|m| m.len()).to_string()>{count}</span>
            <button class="button" title="Previous match" data-testid="search-prev" on:click=move |_| step(&c3, -1)>"‹"</button>
            <button class="button" title="Next match" data-testid="search-next" on:click=move |_| step(&c4, 1)>"›"</button>
            {move || error.get().map(|e| view! { <span class="tl-search-error" data-testid="search-error">{e}</span> })}
        </span>
    }
}
