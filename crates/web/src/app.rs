//! The page: open bar, error banner, then the loaded session's facts, timeline and tracks.

use crate::load::{load_file, load_url, LoadCtx};
use crate::state::{Progress, SessionRef};
use crate::timeline::view::Timeline;
use crate::views::facts::{FactsPanel, TrackList};
use crate::views::open::OpenBar;
use leptos::prelude::*;
use leptos::task::spawn_local;

/// Where the bundled demo trace is served from (copied by trunk from `web/`).
pub const DEMO_URL: &str = "demo/demo.pt.trace.json.gz";

fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.get(name)
}

#[component]
pub fn App() -> impl IntoView {
    let session = RwSignal::new(None::<SessionRef>);
    let error = RwSignal::new(None::<String>);
    let progress = RwSignal::new(None::<Progress>);
    let cancel = RwSignal::new(false);
    let ctx = LoadCtx { progress, cancel };
    // Each load gets a number; a late result from an older load is ignored.
    let generation = StoredValue::new(0u64);

    let finish = move |gen: u64, r: Result<SessionRef, String>| {
        if generation.get_value() != gen {
            return;
        }
        progress.set(None);
        match r {
            Ok(s) => {
                error.set(None);
                session.set(Some(s));
            }
            // A failed load keeps the previous session on screen.
            Err(e) => error.set(Some(e)),
        }
    };
    let start = move || {
        let g = generation.get_value() + 1;
        generation.set_value(g);
        g
    };
    let open_files = Callback::new(move |files: web_sys::FileList| {
        let Some(file) = files.get(0) else { return };
        let g = start();
        spawn_local(async move { finish(g, load_file(file, ctx).await) });
    });
    let open_url = move |url: String| {
        let g = start();
        spawn_local(async move { finish(g, load_url(&url, ctx).await) });
    };
    let on_demo = Callback::new(move |_| open_url(DEMO_URL.to_owned()));
    if let Some(url) = query_param("url") {
        open_url(url);
    }

    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        if let Some(files) = ev.data_transfer().and_then(|d| d.files()) {
            open_files.run(files);
        }
    };
    let on_dragover = move |ev: web_sys::DragEvent| ev.prevent_default();

    view! {
        <main class="app" on:drop=on_drop on:dragover=on_dragover>
            <header>
                <h1>"Tracelight"</h1>
                <OpenBar on_files=open_files on_demo=on_demo progress=progress cancel=cancel />
            </header>
            <Show when=move || error.get().is_some()>
                <div class="error" role="alert" data-testid="error">
                    <span>{move || error.get().unwrap_or_default()}</span>
                    <button class="button" on:click=move |_| error.set(None)>"Dismiss"</button>
                </div>
            </Show>
            {move || match session.get() {
                Some(s) => view! {
                    <FactsPanel session=s.clone() />
                    <Timeline session=s.clone() />
                    <TrackList session=s />
                }.into_any(),
                None => view! {
                    <section class="empty" data-testid="empty">
                        <p>"Drop a PyTorch profiler trace (Kineto .json / .json.gz) to see where the time went."</p>
                        <p><button class="button primary" on:click=move |_| on_demo.run(())>"Open the demo trace"</button></p>
                    </section>
                }.into_any(),
            }}
        </main>
    }
}
