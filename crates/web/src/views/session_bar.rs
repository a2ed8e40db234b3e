//! Above the tabs: which files are open (ranks, snapshots) and which trace the views show.

use crate::session::{Content, Nav, SessionRef, Tab};
use leptos::prelude::*;

#[component]
pub fn SessionBar(session: SessionRef) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    // Rank and cycle from the run layout, as the Ranks tab and `analyze DIR` see them: a
    // `tensorboard_trace_handler` worker's cycles are one rank, told apart by cycle.
    let lay = crate::session::run::layout(&session, &[]);
    let units = crate::session::run::units_of_files(&session, &lay);
    let (many_ranks, many_cycles) = (lay.ranks().len() > 1, lay.cycles() > 1);
    let mut order: Vec<usize> = session
        .trace_indices()
        .into_iter()
        .chain(session.et_indices())
        .chain(session.snapshot_indices())
        .chain(session.timeline_indices())
        .collect();
    // Rank order, each rank's trace first and its execution trace, snapshot and memory
    // timeline right after it; files of no rank last, in the session's order.
    let pos: Vec<usize> = {
        let mut p = vec![0; session.files.len()];
        for (k, &i) in order.iter().enumerate() {
            p[i] = k;
        }
        p
    };
    tracelight_core::sort::by_key(&mut order, |&i| {
        let kind = match &session.files[i].content {
            Content::Trace(_) => 0u8,
            Content::ExecTrace(_) => 1,
            Content::Snapshot(_) => 2,
            Content::MemoryTimeline(_) => 3,
            Content::FlightRecorder(_) => 4,
        };
        match units.get(i).copied().flatten() {
            Some((r, c)) => (0u8, r, c, kind, pos[i]),
            None => (1, 0, 0, 0, pos[i]),
        }
    });
    // The trace of each (rank, cycle): where a rank's other files point.
    let trace_of = |unit: Option<(i64, u32)>| -> Option<usize> {
        let u = unit?;
        order.iter().copied().find(|&k| {
            units.get(k).copied().flatten() == Some(u)
                && matches!(session.files[k].content, Content::Trace(_))
        })
    };
    let files = order
        .iter()
        .copied()
        .map(|i| {
            let f = &session.files[i];
            let (kind, is_trace) = match &f.content {
                Content::Trace(_) => ("trace", true),
                Content::Snapshot(_) => ("memory snapshot", false),
                Content::MemoryTimeline(_) => ("memory timeline", false),
                Content::ExecTrace(_) => ("execution trace", false),
                Content::FlightRecorder(_) => ("Flight Recorder dump", false),
            };
            let unit = units.get(i).copied().flatten();
            let owner = if is_trace { None } else { trace_of(unit) };
            // A rank's other files sit under its trace's chip: smaller, named by what they are.
            let label = match unit {
                Some((r, c)) if many_cycles && is_trace => {
                    format!("rank {r} · cycle {c} · {}", f.name)
                }
                Some((r, _)) if many_ranks && is_trace => format!("rank {r} · {}", f.name),
                _ if owner.is_some() => format!("{kind} · {}", f.name),
                _ => f.name.clone(),
            };
            let is_et = matches!(f.content, Content::ExecTrace(_));
            view! {
                <button
                    class="file-chip"
                    class:sub=owner.is_some()
                    data-testid="file-chip"
                    data-kind=kind
                    data-rank=unit.map(|u| u.0.to_string()).unwrap_or_default()
                    class:active=move || is_trace && nav.file.get() == i
                    title=format!("{kind}: {}", f.name)
                    on:click=move |_| {
                        if is_trace {
                            nav.file.set(i);
                            // From the run's tab, a rank's chip opens that rank.
                            if nav.tab.get_untracked() == Tab::Ranks {
                                nav.tab.set(Tab::Overview);
                            }
                        } else if is_et {
                            // An execution trace belongs to its rank's trace: open that.
                            if let Some(t) = owner {
                                nav.file.set(t);
                            }
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
