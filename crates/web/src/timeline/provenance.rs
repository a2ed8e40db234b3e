//! The selected slice's way back to the code: its module, its line of user code, the forward op
//! it differentiates (with a jump) or its backward nodes and their GPU time, and the Python stack
//! with each frame's call line, copyable (core's `view::details::provenance`).

use super::tlstate::Ctx;
use crate::platform::export;
use crate::widgets::fmt;
use leptos::prelude::*;
use tracelight_core::view::details::provenance;

fn name_of(c: &Ctx, i: u32) -> String {
    c.trace()
        .and_then(|t| t.slices.name.get(i as usize).map(|&n| t.str(n).to_owned()))
        .unwrap_or_default()
}

fn jump(c: &Ctx, i: u32, testid: &'static str) -> impl IntoView {
    let name = name_of(c, i);
    let c = c.clone();
    view! {
        <button class="linkish" data-testid=testid data-slice=i.to_string() on:click=move |_| c.focus(i)>
            {name}
        </button>
    }
}

/// Nothing when the slice has no stack, module or autograd pair.
pub fn section(c: &Ctx, slice: u32) -> Option<impl IntoView> {
    let tf = c.session.trace(c.file)?;
    let p = provenance(&tf.trace, &tf.analysis().autograd, slice as usize);
    if p.frames.is_empty() && p.forward_op.is_none() && p.backward_nodes.is_empty() {
        return None;
    }
    let copied = RwSignal::new(false);
    let text = p.stack_text.clone();
    let on_copy = move |_| {
        export::copy(&text);
        copied.set(true);
    };
    let more = p.backward_nodes.len().saturating_sub(20);
    Some(view! {
        <dl data-testid="details-provenance">
            {p.module.clone().map(|m| view! { <dt>"Module"</dt><dd data-testid="details-module">{m}</dd> })}
            {p.source.clone().map(|s| view! { <dt>"Source line"</dt><dd data-testid="details-source"><code>{s}</code></dd> })}
            {p.forward_op.map(|f| view! {
                <dt>"Backward of"</dt>
                <dd data-testid="details-backward-of">{jump(c, f, "jump-forward")}
                    <span class="muted">" (by sequence number)"</span></dd>
            })}
            {(!p.backward_nodes.is_empty()).then(|| view! {
                <dt>"Backward"</dt>
                <dd data-testid="details-backward">
                    {p.backward_nodes.iter().take(20).map(|&b| jump(c, b, "jump-backward")).collect_view()}
                    {(more > 0).then(|| format!(" … and {more} more"))}
                    <span class="muted" data-testid="details-backward-gpu" data-ns=p.backward_gpu_ns.to_string()>
                        {format!(" · GPU {}", fmt::dur(p.backward_gpu_ns))}
                    </span>
                </dd>
            })}
        </dl>
        {(!p.frames.is_empty()).then(|| view! {
            <h4>"Python stack "
                <button class="linkish" data-testid="details-copy-stack" on:click=on_copy>
                    {move || if copied.get() { "copied ✓" } else { "copy" }}
                </button>
            </h4>
            <ol class="tl-stack" data-testid="details-stack">
                {p.frames.iter().map(|f| {
                    let cls = if f.user { "user" } else { "lib" };
                    view! {
                        <li class=cls>{f.name.clone()}
                            {f.call_from.clone().map(|cf| view! { <span class="muted">{format!("  ← {cf}")}</span> })}
                        </li>
                    }
                }).collect_view()}
            </ol>
        })}
    })
}
