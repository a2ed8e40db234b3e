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
    let options = move || {
        let area = st.with(|s| s.area.clone()).map(|a| {
            let label = format!(
                "Timeline selection · {} · {} tracks",
                fmt::dur(a.t1 - a.t0),
                a.tracks.len()
            );
            view! { <option value="area" prop:selected=move || st.with(|s| s.scope == FlameScope::Area)>{label}</option> }
        });
        let steps = steps
            .iter()
            .map(|m| {
                let label = format!("Step {} · {}", m.label, fmt::dur(m.end - m.start));
                let me = FlameScope::Step(m.slice);
                view! { <option value=scope_value(me) prop:selected=move || st.with(|s| s.scope == me)>{label}</option> }
            })
            .collect_view();
        view! {
            <option value="all" prop:selected=move || st.with(|s| s.scope == FlameScope::Whole)>"Whole trace"</option>
            {area}
            {steps}
        }
    };
    view! {
        <label class="field">"Scope "
            <select
                data-testid="flame-scope"
                on:change=move |ev| {
                    let v = parse_scope(&event_target_value(&ev));
                    set(&|s| s.scope = v);
                }
            >{options}</select>
        </label>
        {has_gpu.then(|| view! {
            <label class="field" title="Width: host wall time of the ops, or the GPU time of the kernels, copies and sets they launched">"Width "
                <select
                    data-testid="flame-weight"
                    on:change=move |ev| {
                        let d = event_target_value(&ev) == "device";
                        set(&|s| s.device = d);
                    }
                >
                    <option value="cpu" prop:selected=move || !st.with(|s| s.device)>"CPU time"</option>
                    <option value="device" prop:selected=move || st.with(|s| s.device)>"GPU time launched"</option>
                </select>
            </label>
        })}
        {has_python.then(|| view! {
            <label class="field" title="Keep python_function frames (with_stack=True) in the stacks">
                <input
                    type="checkbox"
                    data-testid="flame-python"
                    prop:checked=move || st.with(|s| s.python)
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
            prop:value=move || query.get()
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
