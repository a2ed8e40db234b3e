//! Opening files: the file button, the drop zone, the demo button, progress with MB/s and Cancel.

use crate::session::Progress;
use leptos::prelude::*;

#[component]
pub fn OpenBar(
    on_files: Callback<web_sys::FileList>,
    /// A folder of runs opened as a trend (each entry one run).
    on_trend: Callback<web_sys::FileList>,
    /// A folder dropped on the trend button: opened as a trend.
    on_trend_drop: Callback<web_sys::DragEvent>,
    on_demo: Callback<()>,
    progress: RwSignal<Option<Progress>>,
    cancel: RwSignal<bool>,
) -> impl IntoView {
    let on_change = move |ev: web_sys::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            on_files.run(files);
        }
        input.set_value("");
    };
    // `webkitdirectory` (pick a whole folder) is no attribute the view macro knows: set it directly.
    let folder = NodeRef::<leptos::html::Input>::new();
    let runs = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        for r in [folder, runs] {
            if let Some(el) = r.get() {
                let _ = el.set_attribute("webkitdirectory", "");
            }
        }
    });
    let on_runs = move |ev: web_sys::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            on_trend.run(files);
        }
        input.set_value("");
    };
    view! {
        <div class="open-bar">
            <label class="button primary">
                "Open trace…"
                <input type="file" data-testid="file-input" multiple accept=".json,.gz,.pickle,.pkl,.parquet" on:change=on_change />
            </label>
            <label class="button">
                "Open folder…"
                <input type="file" data-testid="folder-input" node_ref=folder multiple on:change=on_change />
            </label>
            <label class="button" data-testid="trend-open" on:dragover=move |ev: web_sys::DragEvent| { ev.prevent_default(); ev.stop_propagation(); }
                on:drop=move |ev| on_trend_drop.run(ev) title="A folder whose entries are runs (trace files, digests or run folders) named by date or commit: opens them as a series, the change points marked">
                "Open runs as a trend…"
                <input type="file" data-testid="trend-input" node_ref=runs multiple on:change=on_runs />
            </label>
            <button class="button" data-testid="demo" on:click=move |_| on_demo.run(())>"Open the demo trace"</button>
            <span class="hint">"or drop files or a folder of rank files anywhere on the page · nothing leaves your machine"</span>
            <Show when=move || progress.get().is_some()>
                <ProgressLine progress=progress cancel=cancel />
            </Show>
        </div>
    }
}

#[component]
fn ProgressLine(progress: RwSignal<Option<Progress>>, cancel: RwSignal<bool>) -> impl IntoView {
    let text = move || {
        progress.get().map_or(String::new(), |p| {
            let mb = p.done as f64 / 1e6;
            let pct = p
                .fraction()
                .map(|f| format!(" ({:.0}%)", f * 100.0))
                .unwrap_or_default();
            format!(
                "{} — {}: {mb:.1} MB{pct} at {:.0} MB/s",
                p.name, p.phase, p.mb_per_s
            )
        })
    };
    let pct = move || progress.get().and_then(|p| p.fraction()).unwrap_or(0.0) * 100.0;
    view! {
        <div class="progress" data-testid="progress" role="status">
            <div class="progress-track"><div class="progress-fill" style=move || format!("width:{:.1}%", pct())></div></div>
            <span>{text}</span>
            <button class="button" data-testid="cancel" on:click=move |_| cancel.set(true)>"Cancel"</button>
        </div>
    }
}
