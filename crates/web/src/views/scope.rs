//! The scope picker above the Overview, Operators, Kernels and Modules tabs: one control for the
//! four (the whole trace, one `ProfilerStep#N`, an annotation's occurrences or one of them, a
//! timeline window), kept in `Nav::scope` and the link's `scope=`. The tables under it are
//! core's `Analysis::scoped` over that scope — the function behind `tracelight analyze --scope` —
//! so the page and the CLI print the same figures for the same scope text.

use crate::session::{Nav, SessionRef, TimeWindow};
use crate::widgets::fmt::{self, html_text};
use leptos::prelude::*;
use tracelight_core::analysis::scope::ScopeSpec;
use tracelight_core::report::scoped::WHOLE_TRACE;

/// Annotation names offered (most host time first), and occurrences listed per name.
const MAX_NAMES: usize = 30;
const MAX_OCCURRENCES: u32 = 24;
/// Steps listed at most (the first and the last half of them): a `<select>` of 5,000 options
/// took ~190 ms of layout on the page's thread, and nobody scrolls 5,000 options.
const MAX_STEPS: usize = 200;

/// One choice: the scope text (the option's value, `--scope`'s argument) and its label.
struct Choice {
    spec: String,
    label: String,
}

#[component]
pub fn ScopePicker(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return ().into_any();
    };
    let t = &tf.trace;
    let now = nav.scope.get_untracked();
    let now_text = now.text();
    // Each step's own slice (`ProfilerStep#N`, or `train_step_N`: core's step rule), all in one
    // pass: resolving them one by one was steps × slices on the page's thread.
    // The steps the loader indexed with the timeline (core's `step_marks`: each number's
    // window, as `ScopeSpec::Step(n).resolve` gives it), by number.
    let data = crate::session::derived::cached(&session, file);
    let mut all: Vec<(i64, u32, i64)> = data
        .as_ref()
        .map(|d| {
            d.steps
                .iter()
                .map(|m| (m.number, m.slice, m.end - m.start))
                .collect()
        })
        .unwrap_or_default();
    all.sort_unstable();
    let numbers = (all.first().map(|s| s.0), all.last().map(|s| s.0));
    let many = all.len() > MAX_STEPS;
    let mut steps: Vec<Choice> = Vec::with_capacity(all.len().min(MAX_STEPS + 1));
    for (k, &(n, slice, dur)) in all.iter().enumerate() {
        // Of thousands of steps the list keeps the first and the last; the others are a number
        // away (the step box beside it), and one still in force is listed on its own (`listed`).
        if many && k >= MAX_STEPS / 2 && k < all.len() - MAX_STEPS / 2 {
            if k == MAX_STEPS / 2 {
                steps.push(Choice {
                    spec: String::new(),
                    label: format!(
                        "… {} more steps: type a number in the step box",
                        all.len() - MAX_STEPS
                    ),
                });
            }
            continue;
        }
        let name = t.str(t.slices.name[slice as usize]);
        steps.push(Choice {
            spec: ScopeSpec::Step(n).text(),
            label: format!("{name} · {}", fmt::dur(dur)),
        });
    }
    let mut notes: Vec<Choice> = Vec::new();
    let names = data.as_ref().map_or(&[][..], |d| &d.annotations[..]);
    for (name, n, total) in names.iter().take(MAX_NAMES) {
        let (n, total) = (*n, *total);
        let every = ScopeSpec::Annotation {
            name: name.clone(),
            occurrence: None,
        };
        notes.push(Choice {
            spec: every.text(),
            label: format!("{name} · all {n} · {}", fmt::dur(total)),
        });
        if n > 1 {
            for k in 1..=n.min(MAX_OCCURRENCES) {
                let one = ScopeSpec::Annotation {
                    name: name.clone(),
                    occurrence: Some(k),
                };
                notes.push(Choice {
                    spec: one.text(),
                    label: format!("\u{2003}{name} #{k}"),
                });
            }
        }
    }
    // Time windows: the one in force (an area selection's), and what the timeline shows now.
    let mut windows: Vec<Choice> = Vec::new();
    if let ScopeSpec::Window(a, b) = now {
        windows.push(Choice {
            spec: now_text.clone(),
            label: format!("Selected window · {}", fmt::dur(b - a)),
        });
    }
    if let Some((a, b)) = use_context::<TimeWindow>().map(|w| w.0.get_untracked()) {
        let w = ScopeSpec::Window(a, b);
        if b - a > 1 && w != now && matches!(w.resolve(t), Ok(Some(_))) {
            windows.push(Choice {
                spec: w.text(),
                label: format!("Timeline's view · {}", fmt::dur(b - a)),
            });
        }
    }
    let listed = now == ScopeSpec::Whole
        || [&steps, &notes, &windows]
            .iter()
            .any(|g| g.iter().any(|c| c.spec == now_text));
    // Each group's options as one HTML text set at once: a trace of 5,000 steps made 5,000 option
    // views (a task of ~200 ms on the page's thread); the browser parses the text in a few ms.
    let group = |label: &'static str, g: &[Choice]| {
        (!g.is_empty()).then(|| {
            let mut html = String::with_capacity(g.len() * 48);
            for c in g {
                if c.spec.is_empty() {
                    html.push_str("<option disabled>");
                    html_text(&c.label, &mut html);
                    html.push_str("</option>");
                    continue;
                }
                html.push_str("<option value=\"");
                html_text(&c.spec, &mut html);
                html.push_str(if c.spec == now_text {
                    "\" selected>"
                } else {
                    "\">"
                });
                html_text(&c.label, &mut html);
                html.push_str("</option>");
            }
            view! { <optgroup label=label inner_html=html></optgroup> }
        })
    };
    let error = tf.scope_error(&now);
    // What the tables count, and what stays the whole trace's (`scope.whole_trace` in the CLI's
    // JSON: `WHOLE_TRACE`), in words.
    let note = match (&now, &error) {
        (ScopeSpec::Whole, _) => view! {
            <span>"The whole trace. Pick a step, an annotation or a timeline window (or drag an area in the timeline: “Tables of this window”) to restrict every table and card of these four tabs."</span>
        }
        .into_any(),
        (_, Some(e)) => view! { <span>{format!("{e}: the tables show the whole trace.")}</span> }.into_any(),
        (_, None) => {
            let sc = now.resolve(t).ok().flatten();
            let (n, total) = sc
                .as_ref()
                .map_or((0, 0), |s| (s.windows.len(), s.total_ns()));
            let windows = if n == 1 {
                format!("1 window, {}", fmt::dur(total))
            } else {
                format!("{n} windows, {} in all", fmt::dur(total))
            };
            view! {
                <span title=format!("Not restricted: {}", WHOLE_TRACE.join(", "))>
                    {format!("{windows}. Ops count by their start, whole; GPU work by its launch; utilization over the windows. The per-step column, idle causes, launch delays, idle gaps, per-op memory and recommendations stay the whole trace's. Same figures as ")}
                    <code>{format!("tracelight analyze --json --scope '{now_text}'")}</code>
                </span>
            }
            .into_any()
        }
    };
    let on_change = move |ev: web_sys::Event| {
        if let Ok(s) = ScopeSpec::parse(&event_target_value(&ev)) {
            if s != nav.scope.get_untracked() {
                nav.scope.set(s);
            }
        }
    };
    let reset = move |_| nav.scope.set(ScopeSpec::Whole);
    let on_step = move |ev: web_sys::Event| {
        if let Ok(n) = event_target_value(&ev).trim().parse::<i64>() {
            nav.scope.set(ScopeSpec::Step(n));
        }
    };
    let step_box = match numbers {
        (Some(lo), Some(hi)) if many => Some(view! {
            <input class="scope-step" type="number" data-testid="scope-step-input" min=lo.to_string() max=hi.to_string()
                placeholder="step #" title=format!("Any step, {lo} to {hi}: Enter") on:change=on_step />
        }),
        _ => None,
    };
    let scoped = now != ScopeSpec::Whole;
    view! {
        <div class="scope-bar" class:scoped=scoped data-testid="scope-bar" data-scope=now_text.clone()
            data-error=error.is_some().then_some("1")>
            <label class="scope-label" for="scope-pick">"Scope"</label>
            <select id="scope-pick" data-testid="scope-pick" on:change=on_change>
                <option value="whole" selected=!scoped>"Whole trace"</option>
                {(!listed).then(|| view! { <option value=now_text.clone() selected=true>{now.label()}</option> })}
                {group("Steps", &steps)}
                {group("Annotations (record_function)", &notes)}
                {group("Timeline", &windows)}
            </select>
            {step_box}
            {scoped.then(|| view! { <button class="button" data-testid="scope-reset" on:click=reset>"Whole trace"</button> })}
            <span class="hint scope-note" class:scope-error=error.is_some() data-testid="scope-note">{note}</span>
        </div>
    }
    .into_any()
}
