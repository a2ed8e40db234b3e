//! What the flame graph says about a frame: the hover tooltip (name, total, self, calls, share of
//! the root) and the info bar of the selected frame, with its occurrences sent to the timeline
//! (`Nav::reveal`, the reveal banner steps through them) and a zoom button; plus what a search
//! covers.

use crate::session::{FlameState, Nav, SessionRef};
use crate::widgets::fmt;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::model::Ns;
use tracelight_core::view::flame::{Flame, Weight};

/// What a search matched: per node whether it matches, and the weight the matches cover.
pub type Hits = Option<Arc<(Vec<bool>, Ns)>>;

/// The figures of frame `n`, as (label, text, raw ns or count for tests).
fn figures(g: &Flame, n: u32) -> Vec<(&'static str, String, i64)> {
    let k = n as usize;
    let (total, self_ns, calls) = (g.total[k], g.self_ns[k], i64::from(g.calls[k]));
    let parent = g.parent[k];
    let mut v = vec![
        ("Total", fmt::dur(total), total),
        ("Self", fmt::dur(self_ns), self_ns),
        ("Calls", calls.to_string(), calls),
    ];
    if calls > 0 {
        v.push(("Avg", fmt::dur(total / calls), total / calls));
    }
    v.push(("Of all", fmt::pct(total, g.total[0]), total));
    if (parent as usize) < g.len() {
        v.push((
            "Of parent",
            fmt::pct(total, g.total[parent as usize]),
            total,
        ));
    }
    v
}

fn weight_label(g: &Flame) -> &'static str {
    match g.weight {
        Weight::Cpu => "CPU time",
        Weight::Device => "GPU time launched",
    }
}

/// The tooltip over the hovered frame (`hover`: the node and the pointer's window coordinates).
#[component]
pub fn Tip(
    session: SessionRef,
    file: usize,
    graph: Memo<Arc<Flame>>,
    hover: RwSignal<Option<(u32, f64, f64)>>,
) -> impl IntoView {
    move || {
        let (n, x, y) = hover.get()?;
        let g = graph.get();
        if n as usize >= g.len() {
            return None;
        }
        let t = &session.trace(file)?.trace;
        let name = g.label(t, n).to_owned();
        let (win_w, win_h) = web_sys::window()
            .map(|w| {
                let f = |v: Result<wasm_bindgen::JsValue, _>| v.ok().and_then(|v| v.as_f64());
                (f(w.inner_width()), f(w.inner_height()))
            })
            .map_or((1440.0, 900.0), |(a, b)| {
                (a.unwrap_or(1440.0), b.unwrap_or(900.0))
            });
        let left = (x + 14.0).min(win_w - 380.0).max(0.0);
        // Below the pointer in the upper half of the window, above it in the lower half.
        let place = if y < win_h / 2.0 {
            format!("left:{left}px;top:{}px", y + 16.0)
        } else {
            format!("left:{left}px;bottom:{}px", win_h - y + 12.0)
        };
        let rows = figures(&g, n)
            .into_iter()
            .map(|(k, v, raw)| {
                view! { <div data-key=k data-value=raw.to_string()><span class="muted-inv">{k}": "</span>{v}</div> }
            })
            .collect_view();
        Some(view! {
            <div class="mem-tip flame-tip" data-testid="flame-tip" data-node=n.to_string() style=place>
                <b data-testid="flame-tip-name">{name}</b>
                <div class="hint-inv">{weight_label(&g)}</div>
                {rows}
            </div>
        })
    }
}

/// The selected frame's figures and actions, and what the search matches.
#[component]
pub fn Info(
    session: SessionRef,
    file: usize,
    graph: Memo<Arc<Flame>>,
    selected: RwSignal<Option<u32>>,
    matches: Memo<Hits>,
) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let search = move || {
        let m = matches.get()?;
        let g = graph.get();
        let n = m.0.iter().filter(|&&h| h).count();
        Some(view! {
            <span class="flame-search-sum" data-testid="flame-matches" data-count=n.to_string() data-ns=m.1.to_string()>
                {format!("{n} frames match · {} of all", fmt::pct(m.1, g.total[0]))}
            </span>
        })
    };
    let chosen = move || {
        let n = selected.get()?;
        let g = graph.get();
        if n as usize >= g.len() {
            return None;
        }
        let t = &session.trace(file)?.trace;
        let name = g.label(t, n).to_owned();
        let occ = g.occurrences(n).to_vec();
        let count = occ.len();
        let facts = figures(&g, n)
            .into_iter()
            .map(|(k, v, raw)| view! { <span class="flame-fact" data-key=k data-value=raw.to_string()>{k}" "<b>{v}</b></span> })
            .collect_view();
        let label = name.clone();
        let reveal = move |_| nav.reveal(file, occ.clone(), label.clone());
        let zoom = move |_| nav.flame.update(|s: &mut FlameState| s.zoom = n);
        Some(view! {
            <div class="flame-info" data-testid="flame-selected" data-node=n.to_string()>
                <b class="flame-name" title=name.clone()>{name.clone()}</b>
                {facts}
                <button class="button" data-testid="flame-reveal" disabled=count == 0 on:click=reveal>
                    {format!("Show {count} in timeline")}
                </button>
                <button class="button" data-testid="flame-zoom" on:click=zoom>"Zoom in"</button>
            </div>
        })
    };
    view! {
        <div class="flame-status">
            {chosen}
            {search}
        </div>
    }
}
