//! Above the tabs: which files are open (ranks, snapshots) and which trace the views show.

use crate::session::{Content, Nav, SessionRef, Tab};
use leptos::prelude::*;

#[component]
pub fn SessionBar(session: SessionRef) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    // Traces by rank, then memory files.
    let order: Vec<usize> = session
        .trace_indices()
        .into_iter()
        .chain(session.snapshot_indices())
        .chain(session.timeline_indices())
        .chain(session.et_indices())
        .collect();
    // Rank and cycle from the run layout, as the Ranks tab and `analyze DIR` see them: a
    // `tensorboard_trace_handler` worker's cycles are one rank, told apart by cycle.
    let lay = crate::session::run::layout(&session, &[]);
    let units = crate::session::run::units_of_files(&session, &lay);
    let (many_ranks, many_cycles) = (lay.ranks().len() > 1, lay.cycles() > 1);
    let files = order
        .into_iter()
        .map(|i| (i, &session.files[i]))
        .map(|(i, f)| {
            let (kind, rank) = match &f.content {
                Content::Trace(t) => ("trace", Some(t.rank)),
                Content::Snapshot(_) => ("memory snapshot", None),
                Content::MemoryTimeline(_) => ("memory timeline", None),
                Content::ExecTrace(_) => ("execution trace", None),
                Content::FlightRecorder(_) => ("Flight Recorder dump", None),
            };
            let is_trace = rank.is_some();
            let label = match units.get(i).copied().flatten() {
                Some((r, c)) if many_cycles => format!("rank {r} · cycle {c} · {}", f.name),
                Some((r, _)) if many_ranks => format!("rank {r} · {}", f.name),
                _ => f.name.clone(),
            };
            view! {
                <button
                    class="file-chip"
                    data-testid="file-chip"
                    class:active=move || is_trace && nav.file.get() == i
                    title=kind
                    on:click=move |_| {
                        if is_trace {
                            nav.file.set(i);
                        } else {
                            nav.tab.set(Tab::Memory);
                        }
                    }
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    view! { <nav class="session-bar" data-testid="session-bar">{files}</nav> }
}

#[component]
pub fn TabBar(available: Vec<Tab>) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let tabs = available
        .into_iter()
        .map(|t| {
            view! {
                <button
                    role="tab"
                    class="tab"
                    data-testid=format!("tab-{}", t.slug())
                    aria-selected=move || (nav.tab.get() == t).to_string()
                    class:active=move || nav.tab.get() == t
                    on:click=move |_| nav.tab.set(t)
                >
                    {t.label()}
                </button>
            }
        })
        .collect_view();
    // The URL hash always holds the view (tab, file, window, selection): copying the address
    // reopens it. `data-link` keeps what was copied (tests; clipboards need a permission).
    let copy = move |ev: web_sys::MouseEvent| {
        let Some(href) = web_sys::window().and_then(|w| w.location().href().ok()) else {
            return;
        };
        crate::platform::export::copy(&href);
        if let Some(el) = ev
            .current_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        {
            let _ = el.set_attribute("data-link", &href);
        }
    };
    view! {
        <div class="tab-bar" role="tablist">
            {tabs}
            <button class="button small copy-link" data-testid="copy-link" title="Copy a link to this view" on:click=copy>"Copy link"</button>
        </div>
    }
}
