//! The page: open bar, error banner, then the session: its files, the tab bar and the active view.

use crate::embed::Hooks;
use crate::load::{load_files, load_posted, load_url, LoadCtx, Posted, Preview, PreviewOf};
use crate::session::series::{Series, SeriesRef};
use crate::session::{
    FineRules, LoadedFile, Nav, Notice, Progress, Session, SessionRef, Tab, TimeWindow,
};
use crate::tab_body;
use crate::views::open::OpenBar;
use crate::views::scope::ScopePicker;
use crate::views::session_bar::{SessionBar, TabBar};
use crate::widgets::later::Later;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::sync::Arc;
use tracelight_core::analysis::scope::ScopeSpec;

/// Where the bundled demo trace is served from (copied by trunk from `web/`).
pub const DEMO_URL: &str = "demo/demo.pt.trace.json.gz";
const DEMO_NAME: &str = "demo.pt.trace.json.gz";

/// The notices of one kind (`Notice::is_error`, `is_warning`, `is_skipped`), one per line.
fn notice_text(notices: RwSignal<Vec<Notice>>, kind: fn(&Notice) -> bool) -> String {
    notices.with(|n| {
        n.iter()
            .filter(|x| kind(x))
            .map(Notice::text)
            .collect::<Vec<_>>()
            .join("\n")
    })
}

#[component]
pub fn App() -> impl IntoView {
    let session = RwSignal::new(None::<SessionRef>);
    // What the last load has to say: errors and warnings, decided from the typed error.
    let notices = RwSignal::new(Vec::<Notice>::new());
    let progress = RwSignal::new(None::<Progress>);
    let cancel = RwSignal::new(false);
    // A big trace's head, shown while the whole of it loads (`load::preview`), with the number of
    // the load it belongs to.
    let preview = RwSignal::new(None::<(u64, Preview)>);
    // What was on screen before a preview replaced it: put back if the load fails or is cancelled.
    let before_preview = StoredValue::new(None::<Option<SessionRef>>);
    let ctx = LoadCtx {
        progress,
        cancel,
        preview: None,
    };
    // A load that may show a preview: the user's own opens, not B of Compare or a trend.
    let main_ctx = move |g: u64| LoadCtx {
        preview: Some((preview, g)),
        ..ctx
    };
    let nav = Nav::new();
    provide_context(nav);
    provide_context(FineRules::new());
    provide_context(TimeWindow(RwSignal::new((0, 1))));
    // Each load gets a number; a late result from an older load is ignored.
    let generation = StoredValue::new(0u64);
    let link_used = StoredValue::new(false);
    // The tab and file go into the URL hash, so a copied link reopens the same view.
    Effect::new(move |_| {
        let (tab, file) = (nav.tab.get(), nav.file.get());
        let scope = nav
            .scope
            .with(|s| (*s != ScopeSpec::Whole).then(|| s.text()));
        // Not for a snapshot's views shown while its model arrives (~4 ms before its first frame):
        // the whole file, on the same tab and file, writes the link a moment later.
        if session.with(|s| s.as_ref().is_some_and(|s| !s.awaiting_model())) {
            // In a task of its own: `history.replaceState` took ~40 ms in the same task as a big
            // snapshot's first render.
            leptos::task::spawn_local(async move {
                crate::platform::clock::yield_now().await;
                crate::platform::hash::update(|d| {
                    d.tab = Some(tab.slug().to_owned());
                    d.file = Some(file);
                    d.scope = scope;
                });
            });
        }
    });

    // The files a pick or drop held that are no profiler output, with the reason: those the page
    // does not open by name (logs, pages, scripts) and those no reader recognised (a run folder's
    // `reference.json`); the Ranks tab lists them as skipped, as `tracelight summary DIR` does.
    let skipped = RwSignal::new(Vec::<(String, String)>::new());
    let finish = move |gen: u64, files: Vec<LoadedFile>, errors: Vec<tracelight_core::Error>| {
        if generation.get_value() != gen {
            return;
        }
        progress.set(None);
        let mut before = None;
        before_preview.update_value(|b| before = b.take());
        preview.set(None);
        let many = files.len() + errors.len() > 1;
        let mut said: Vec<Notice> = errors
            .iter()
            .filter_map(if many {
                Notice::of_error_among_many
            } else {
                Notice::of_error
            })
            .collect();
        skipped.update(|s| {
            s.extend(said.iter().filter_map(|n| match n {
                Notice::Skipped(f, why) => Some((f.clone(), why.clone())),
                _ => None,
            }))
        });
        said.extend(files.iter().flat_map(Notice::of_file));
        notices.set(said);
        // A failed load keeps the previous session on screen (the one before its preview).
        if files.is_empty() {
            if let Some(b) = before {
                session.set(b);
            }
            return;
        }
        let s = Session { files };
        let tabs = s.available_tabs();
        nav.file
            .set(s.trace_indices().first().copied().unwrap_or(0));
        nav.reveal.set(None);
        // A run (two or more rank traces) opens on its Ranks tab: the run's picture first, a
        // rank's Overview one click away.
        // A folder of allocator snapshots (one per rank: OOM dumps) opens as a run too.
        let run = s.trace_indices().len() > 1
            || (s.trace_indices().is_empty() && s.snapshot_indices().len() > 1);
        if tabs.contains(&Tab::Ranks) && run {
            nav.tab.set(Tab::Ranks);
        } else if !tabs.contains(&nav.tab.get_untracked()) {
            nav.tab.set(tabs.first().copied().unwrap_or(Tab::Overview));
        }
        // The first load of the page honours a deep link's tab and file (`#tab=timeline&file=0…`).
        if !link_used.get_value() {
            link_used.set_value(true);
            let link = crate::platform::hash::read();
            if let Some(f) = link.file.filter(|&f| s.trace(f).is_some()) {
                nav.file.set(f);
            }
            if let Some(sc) = link.scope.as_deref().and_then(|v| ScopeSpec::parse(v).ok()) {
                nav.scope.set(sc);
            }
            if let Some(t) = link
                .tab
                .as_deref()
                .and_then(Tab::from_slug)
                .filter(|t| tabs.contains(t))
            {
                nav.tab.set(t);
            }
        }
        session.set(Some(Arc::new(s)));
    };
    // A preview of the load under way goes on screen; the whole trace replaces it in `finish`.
    Effect::new(move |_| {
        let Some(s) = preview.with(|p| {
            p.as_ref()
                .filter(|(g, _)| *g == generation.get_value())
                .map(|(_, p)| p.session.clone())
        }) else {
            return;
        };
        if before_preview.with_value(Option::is_none) {
            before_preview.set_value(Some(session.get_untracked()));
        }
        nav.file
            .set(s.trace_indices().first().copied().unwrap_or(0));
        nav.reveal.set(None);
        let tabs = s.available_tabs();
        if !tabs.contains(&nav.tab.get_untracked()) {
            nav.tab.set(tabs.first().copied().unwrap_or(Tab::Overview));
        }
        session.set(Some(s));
    });
    let start = move || {
        let g = generation.get_value() + 1;
        generation.set_value(g);
        g
    };
    // B of the Compare tab: loaded after A, kept while A changes; a failed load keeps the old B.
    let compare = RwSignal::new(None::<SessionRef>);
    let finish_compare = move |files: Vec<LoadedFile>, errors: Vec<tracelight_core::Error>| {
        progress.set(None);
        if !errors.is_empty() {
            notices.set(errors.iter().filter_map(Notice::of_error).collect());
        }
        if !files.is_empty() {
            compare.set(Some(Arc::new(Session { files })));
            nav.tab.set(Tab::Compare);
        }
    };
    // A trace a host page posted (`embed`): as the session, or as B of Compare.
    let open_posted = Callback::new(move |(p, as_b): (Posted, bool)| {
        let g = if as_b { 0 } else { start() };
        spawn_local(async move {
            match (load_posted(p, ctx).await, as_b) {
                (Ok(f), true) => finish_compare(vec![f], Vec::new()),
                (Err(e), true) => finish_compare(Vec::new(), vec![e]),
                (Ok(f), false) => finish(g, vec![f], Vec::new()),
                (Err(e), false) => finish(g, Vec::new(), vec![e]),
            }
        });
    });
    // The open trend (a folder of runs): kept while other files are opened; its pairs open in
    // Compare as A and B.
    let trend = RwSignal::new(None::<SeriesRef>);
    let finish_trend =
        move |gen: u64, runs: Vec<(String, SessionRef)>, errors: Vec<tracelight_core::Error>| {
            if generation.get_value() != gen {
                return;
            }
            progress.set(None);
            let mut said: Vec<Notice> = errors
                .iter()
                .filter_map(Notice::of_error_among_many)
                .collect();
            let (series, empty) = Series::of(runs);
            if !empty.is_empty() {
                said.push(Notice::Error(format!(
                    "no Kineto trace or digest in run {}: left out of the trend",
                    empty.join(", ")
                )));
            }
            if series.runs.len() < 2 {
                said.push(Notice::Error(format!(
                "a trend needs at least two runs (trace files, digests or run folders); found {}",
                series.runs.len()
            )));
                notices.set(said);
                return;
            }
            notices.set(said);
            // The last run is the session on screen, so its tabs are one click away.
            if let Some((_, last)) = series.runs.last() {
                nav.file
                    .set(last.trace_indices().first().copied().unwrap_or(0));
                nav.reveal.set(None);
                session.set(Some(last.clone()));
            }
            trend.set(Some(Arc::new(series)));
            nav.tab.set(Tab::Trend);
        };
    let embed = crate::embed::serve(Hooks {
        session,
        compare,
        notices,
        progress,
        open: open_posted,
    });
    let open_list = move |all: Vec<web_sys::File>| {
        embed.user_opened();
        // A folder lists every file inside: keep the ones worth opening, name the rest.
        let many = all.len() > 1;
        let (files, left): (Vec<_>, Vec<_>) = all
            .into_iter()
            .partition(|f| !many || crate::platform::drop::looks_openable(&f.name()));
        skipped.set(
            left.iter()
                .map(|f| (f.name(), crate::session::run::NOT_OPENED.to_owned()))
                .collect(),
        );
        if files.is_empty() {
            notices.set(vec![Notice::Error(
                "nothing to open: no .json, .json.gz, .pickle or Flight Recorder dump (rank_N) files found".into(),
            )]);
            return;
        }
        let g = start();
        spawn_local(async move {
            let (ok, errors) = load_files(files, main_ctx(g)).await;
            finish(g, ok, errors);
        });
    };
    // A folder of runs: grouped into runs as `tracelight trend DIR` groups them, each run loaded
    // as a session of its own.
    let open_trend_list = move |all: Vec<(String, web_sys::File)>| {
        embed.user_opened();
        let paths: Vec<&str> = all.iter().map(|(p, _)| p.as_str()).collect();
        let groups = tracelight_core::report::trend_runs::group(&paths);
        if groups.len() < 2 {
            notices.set(vec![Notice::Error(format!(
                "a trend needs at least two runs (trace files, digests or run folders); found {}",
                groups.len()
            ))]);
            return;
        }
        let mut files: Vec<Option<web_sys::File>> = all.into_iter().map(|(_, f)| Some(f)).collect();
        let groups: Vec<(String, Vec<web_sys::File>)> = groups
            .into_iter()
            .map(|(name, idx)| {
                let fs = idx
                    .into_iter()
                    .filter_map(|i| files.get_mut(i).and_then(Option::take))
                    .filter(|f| crate::platform::drop::looks_openable(&f.name()))
                    .collect();
                (name, fs)
            })
            .collect();
        let g = start();
        spawn_local(async move {
            let mut runs = Vec::new();
            let mut errors = Vec::new();
            for (name, fs) in groups {
                let (ok, errs) = load_files(fs, ctx).await;
                errors.extend(errs);
                if !ok.is_empty() {
                    runs.push((name, Arc::new(Session { files: ok })));
                }
            }
            finish_trend(g, runs, errors);
        });
    };
    let open_trend = Callback::new(move |list: web_sys::FileList| {
        open_trend_list(
            (0..list.length())
                .filter_map(|i| list.get(i))
                .map(|f| (crate::platform::drop::relative_path(&f), f))
                .collect(),
        );
    });
    // A folder dropped on the trend button: its paths in the drop group it into runs.
    let drop_trend = Callback::new(move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        ev.stop_propagation();
        let Some(dt) = ev.data_transfer() else { return };
        let entries = crate::platform::drop::entries(&dt);
        spawn_local(
            async move { open_trend_list(crate::platform::drop::collect_paths(entries).await) },
        );
    });
    // A pair of the trend's runs as Compare's A and B.
    let open_pair = Callback::new(move |(a, b): (usize, usize)| {
        let Some(t) = trend.get_untracked() else {
            return;
        };
        let (Some((_, sa)), Some((_, sb))) = (t.runs.get(a), t.runs.get(b)) else {
            return;
        };
        nav.file
            .set(sa.trace_indices().first().copied().unwrap_or(0));
        nav.reveal.set(None);
        session.set(Some(sa.clone()));
        compare.set(Some(sb.clone()));
        nav.tab.set(Tab::Compare);
    });
    let open_files = Callback::new(move |list: web_sys::FileList| {
        open_list((0..list.length()).filter_map(|i| list.get(i)).collect());
    });
    let open_url = move |url: String| {
        let g = start();
        spawn_local(async move {
            match load_url(&url, main_ctx(g)).await {
                Ok(f) => finish(g, vec![f], Vec::new()),
                Err(e) => finish(g, Vec::new(), vec![e]),
            }
        });
    };
    // The demo: inlined in the single-file build (a `file://` page can fetch nothing), else fetched.
    let on_demo = Callback::new(move |_| {
        embed.user_opened();
        match crate::platform::inline::file("tracelight-demo", DEMO_NAME) {
            Some(f) => open_list(vec![f]),
            None => open_url(DEMO_URL.to_owned()),
        }
    });
    // B of a comparison: a trace, or a run folder's files (the ones worth opening).
    let open_compare_list = move |all: Vec<web_sys::File>| {
        embed.user_opened();
        let many = all.len() > 1;
        let files: Vec<web_sys::File> = all
            .into_iter()
            .filter(|f| !many || crate::platform::drop::looks_openable(&f.name()))
            .collect();
        spawn_local(async move {
            let (ok, errors) = load_files(files, ctx).await;
            finish_compare(ok, errors);
        });
    };
    let open_compare = Callback::new(move |list: web_sys::FileList| {
        open_compare_list((0..list.length()).filter_map(|i| list.get(i)).collect());
    });
    // A drop on the compare view's target opens B; it never reaches the page's drop (A).
    let drop_compare = Callback::new(move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        ev.stop_propagation();
        let Some(dt) = ev.data_transfer() else { return };
        let entries = crate::platform::drop::entries(&dt);
        if entries.iter().any(|e| e.is_directory()) {
            spawn_local(async move {
                open_compare_list(crate::platform::drop::collect_files(entries).await)
            });
        } else if let Some(list) = dt.files() {
            open_compare_list((0..list.length()).filter_map(|i| list.get(i)).collect());
        }
    });
    if let Some(manifest) = crate::platform::url::query_param("files") {
        // `tracelight view PATH…`: the files the local server lists, opened as one drop.
        spawn_local(async move {
            match crate::platform::served::files(&manifest).await {
                Ok(files) => open_list(files),
                Err(e) => notices.set(vec![Notice::Error(e)]),
            }
        });
    } else if let Some(url) = crate::platform::url::query_param("url") {
        let g = start();
        spawn_local(async move {
            match load_url(&url, main_ctx(g)).await {
                Ok(f) => finish(g, vec![f], Vec::new()),
                Err(e) => finish(g, Vec::new(), vec![e]),
            }
            // `?url=A&compare=B`: B once A is open.
            if let Some(b) = crate::platform::url::query_param("compare") {
                match load_url(&b, ctx).await {
                    Ok(f) => finish_compare(vec![f], Vec::new()),
                    Err(e) => finish_compare(Vec::new(), vec![e]),
                }
            }
        });
    } else {
        // Optimize the reader and start its worker before a file is picked (see `load::prepare`).
        spawn_local(async {
            crate::platform::clock::yield_now().await;
            crate::load::prepare().await;
            crate::platform::clock::yield_now().await;
            crate::rehearse::memory_tab().await;
            crate::platform::clock::yield_now().await;
            crate::rehearse::overview().await;
        });
    }

    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        let Some(dt) = ev.data_transfer() else { return };
        let entries = crate::platform::drop::entries(&dt);
        if entries.iter().any(|e| e.is_directory()) {
            // Folders (e.g. a tensorboard_trace_handler log dir of rank files) are walked.
            spawn_local(
                async move { open_list(crate::platform::drop::collect_files(entries).await) },
            );
        } else if let Some(files) = dt.files() {
            open_files.run(files);
        }
    };
    let on_dragover = move |ev: web_sys::DragEvent| ev.prevent_default();
    let embedded = crate::embed::embedded();

    let body = move || {
        match session.get() {
        Some(s) => {
            let mut tabs = s.available_tabs();
            if trend.with(Option::is_some) {
                tabs.push(Tab::Trend);
            }
            let s2 = s.clone();
            let active = move || {
                let s = s2.clone();
                let file = nav.file.get();
                let tab = nav.tab.get();
                // The four scoped tabs remount under a new scope (their tables are its tables).
                if tab.scoped() && !embedded {
                    nav.scope.track();
                }
                // A big trace's picker (hundreds of options) a task after the tab's first render.
                let after = u32::from(s.files.get(file).is_some_and(|f| f.is_big()));
                let picker = (tab.scoped() && !embedded).then(|| {
                    let s = s.clone();
                    view! { <Later after=after><ScopePicker session=s.clone() file=file /></Later> }
                });
                // Each tab's body is a function of its own (`tab_body`), called through a
                // pointer the optimizers cannot see through (`black_box`): called directly,
                // wasm-opt inlined each into this closure (its only caller), one function of
                // 174 KB that V8 compiled at a loaded file's first render.
                use std::hint::black_box as opaque;
                let body = match tab {
                    Tab::Overview if embedded => opaque(tab_body::embed_overview as fn(_, _) -> _)(s, file),
                    Tab::Overview => opaque(tab_body::overview as fn(_, _) -> _)(s, file),
                    Tab::Timeline => opaque(tab_body::timeline as fn(_, _) -> _)(s, file),
                    Tab::Operators => opaque(tab_body::operators as fn(_, _) -> _)(s, file),
                    Tab::Modules => opaque(tab_body::modules as fn(_, _) -> _)(s, file),
                    Tab::Flame => opaque(tab_body::flame as fn(_, _) -> _)(s, file),
                    Tab::Kernels => opaque(tab_body::kernels as fn(_, _) -> _)(s, file),
                    Tab::Gpu => opaque(tab_body::gpu as fn(_, _) -> _)(s, file),
                    Tab::Roofline => opaque(tab_body::roofline as fn(_, _) -> _)(s, file),
                    Tab::Ranks => opaque(tab_body::ranks as fn(_, _) -> _)(s, skipped.get_untracked()),
                    Tab::Memory => opaque(tab_body::memory as fn(_) -> _)(s),
                    Tab::Trend => opaque(tab_body::trend as fn(_, _, _) -> _)(trend.get_untracked(), open_pair, open_trend),
                    Tab::Compare => opaque(tab_body::compare as fn(_, _, _, _) -> _)(s, compare.get(), open_compare, drop_compare),
                };
                view! { {picker} {body} }.into_any()
            };
            view! {
                <SessionBar session=s.clone() />
                <TabBar available=tabs />
                <div class="tab-body">{active}</div>
            }
            .into_any()
        }
        None => view! {
            <section class="empty" data-testid="empty">
                <p>"Drop a PyTorch profiler trace (Kineto .json / .json.gz), a folder of rank files, a CUDA memory snapshot, or a folder of Flight Recorder dumps (why did my job hang?) to see where the time and memory went."</p>
                <p><button class="button primary" on:click=move |_| on_demo.run(())>"Open the demo trace"</button></p>
            </section>
        }
        .into_any(),
    }
    };

    view! {
        <main class=if embedded { "app embedded" } else { "app" } on:drop=on_drop on:dragover=on_dragover>
            <header>
                <h1>"Tracelight"</h1>
                <OpenBar on_files=open_files on_trend=open_trend on_trend_drop=drop_trend on_demo=on_demo progress=progress cancel=cancel />
            </header>
            <Show when=move || notices.with(|n| n.iter().any(Notice::is_error))>
                <div class="error" role="alert" data-testid="error">
                    <span>{move || notice_text(notices, Notice::is_error)}</span>
                    <button class="button" on:click=move |_| notices.update(|n| n.retain(|x| !x.is_error()))>"Dismiss"</button>
                </div>
            </Show>
            <Show when=move || notices.with(|n| n.iter().any(Notice::is_warning))>
                <div class="error warning" role="status" data-testid="load-warnings">
                    <span>{move || notice_text(notices, Notice::is_warning)}</span>
                    <button class="button" on:click=move |_| notices.update(|n| n.retain(|x| !x.is_warning()))>"Dismiss"</button>
                </div>
            </Show>
            <Show when=move || preview.with(|p| p.as_ref().is_some_and(|(g, p)| *g == generation.get_value() && p.of == PreviewOf::TraceHead))>
                {move || preview.with(|p| p.as_ref().map(|(_, p)| {
                    let pct = 100.0 * p.bytes as f64 / p.total.max(1) as f64;
                    view! {
                        <div class="notice-preview" role="status" data-testid="preview-banner" data-preview-bytes=p.bytes.to_string() data-preview-events=p.events.to_string() data-preview-ms=p.ready_ms.to_string()>
                            {format!(
                                "Preview: the first {:.1} MB of {:.1} MB ({pct:.0} %), {} events, on screen {:.1} s after the pick. The whole trace is still loading and replaces this view when it is ready; figures here cover the head only.",
                                p.bytes as f64 / 1e6,
                                p.total as f64 / 1e6,
                                p.events,
                                p.ready_ms / 1000.0,
                            )}
                        </div>
                    }
                }))}
            </Show>
            // Files that are no profiler output: grey, with the reason, as the CLI's "Skipped".
            <Show when=move || notices.with(|n| n.iter().any(Notice::is_skipped))>
                <details class="notice-skipped" role="status" data-testid="load-skipped">
                    <summary>{move || {
                        let k = notices.with(|n| n.iter().filter(|x| x.is_skipped()).count());
                        format!("{k} file{} skipped: not profiler output", if k == 1 { "" } else { "s" })
                    }}</summary>
                    <pre>{move || notice_text(notices, Notice::is_skipped)}</pre>
                </details>
            </Show>
            {body}
        </main>
    }
}
