//! The flame graph's controls: the scope (whole trace, one step, the timeline's area selection),
//! the weight (host time or GPU time launched), Python frames, the search, and the breadcrumb of
//! the zoomed frame. They edit the session's [`FlameState`] (kept across tab switches).

use crate::session::{FlameScope, FlameState, Nav, SessionRef};
use crate::widgets::fmt;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::view::flame::Flame;
use tracelight_core::view::steps::StepMark;

/// The scope picker's value for a scope.
fn scope_value(s: FlameScope) -> String {
    match s {
        FlameScope::Whole => "all".into(),
        FlameScope::Step(i) => format!("step:{i}"),
        FlameScope::Area => "area".into(),
    }
}

fn parse_scope(v: &str) -> FlameScope {
    match v {
        "area" => FlameScope::Area,
        _ => v
            .strip_prefix("step:")
            .and_then(|i| i.parse().ok())
            .map_or(FlameScope::Whole, FlameScope::Step),
    }
}

/// A `<select>` of `(value, label)` options with `cur` selected, built whole (one reactive
/// closure per select, not one per option: each closure is its own code in the wasm).
fn options(opts: Vec<(String, String)>, cur: &str) -> impl IntoView {
    opts.into_iter()
        .map(|(v, label)| {
            let sel = v == cur;
            view! { <option value=v selected=sel>{label}</option> }
        })
        .collect_view()
}

/// Scope, weight and Python switches.
#[component]
pub fn Controls(
    steps: Arc<Vec<StepMark>>,
    has_gpu: bool,
    has_python: bool,
    query: RwSignal<String>,
) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let st = nav.flame;
    let set = move |f: &dyn Fn(&mut FlameState)| {
        st.update(|s| {
            f(s);
            s.zoom = 0;
        })
    };
    let scope = move || {
        let (cur, area) = st.with(|s| (s.scope, s.area.clone()));
        let mut opts = vec![("all".to_owned(), "Whole trace".to_owned())];
        if let Some(a) = area {
            let label = format!(
                "Timeline selection · {} · {} tracks",
                fmt::dur(a.t1 - a.t0),
                a.tracks.len()
            );
            opts.push(("area".to_owned(), label));
        }
        opts.extend(steps.iter().map(|m| {
            let label = format!("Step {} · {}", m.label, fmt::dur(m.end - m.start));
            (scope_value(FlameScope::Step(m.slice)), label)
        }));
        view! {
            <select
                data-testid="flame-scope"
                on:change=move |ev| {
                    let v = parse_scope(&event_target_value(&ev));
                    set(&|s| s.scope = v);
                }
            >{options(opts, &scope_value(cur))}</select>
        }
    };
    let weight = move || {
        let cur = if st.with(|s| s.device) {
            "device"
        } else {
            "cpu"
        };
        let opts = vec![
            ("cpu".to_owned(), "CPU time".to_owned()),
            ("device".to_owned(), "GPU time launched".to_owned()),
        ];
        view! {
            <select
                data-testid="flame-weight"
                on:change=move |ev| {
                    let d = event_target_value(&ev) == "device";
                    set(&|s| s.device = d);
                }
            >{options(opts, cur)}</select>
        }
    };
    view! {
        <label class="field">"Scope " {scope}</label>
        {has_gpu.then(|| view! {
            <label class="field" title="Width: host wall time of the ops, or the GPU time of the kernels, copies and sets they launched">"Width " {weight}</label>
        })}
        {has_python.then(|| view! {
            <label class="field" title="Keep python_function frames (with_stack=True) in the stacks">
                <input
                    type="checkbox"
                    data-testid="flame-python"
                    checked=st.with_untracked(|s| s.python)
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        set(&|s| s.python = on);
                    }
                />
                " Python frames"
            </label>
        })}
        <input
            type="search"
            placeholder="Highlight names (/regex/)"
            data-testid="flame-search"
            on:input=move |ev| query.set(event_target_value(&ev))
        />
    }
}

/// The path from the root to the zoomed frame; a click zooms out to that frame.
#[component]
pub fn Breadcrumb(session: SessionRef, file: usize, graph: Memo<Arc<Flame>>) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let st = nav.flame;
    move || {
        let g = graph.get();
        let t = &session.trace(file)?.trace;
        let zoom = st.with(|s| s.zoom);
        let path = g.path(if (zoom as usize) < g.len() { zoom } else { 0 });
        let last = path.len() - 1;
        let crumbs = path
            .into_iter()
            .enumerate()
            .map(|(k, n)| {
                let label = g.label(t, n).to_owned();
                let pct = fmt::pct(g.total[n as usize], g.total[0]);
                let title = format!("{label} · {pct} of all");
                view! {
                    <button
                        class="link flame-crumb"
                        data-testid="flame-crumb"
                        title=title
                        on:click=move |_| st.update(|s| s.zoom = n)
                    >{label}</button>
                    {(k < last).then_some(" › ")}
                }
            })
            .collect_view();
        Some(view! { <nav class="flame-path" data-testid="flame-path">{crumbs}</nav> })
    }
}
