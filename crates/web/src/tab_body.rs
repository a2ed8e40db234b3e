//! Each tab's body, a function of its own that is never inlined into the tab switch.
//!
//! V8 compiles a wasm function the first time it is called. With every tab's view inlined into
//! the app's tab switch, that switch was one function of 174 KB, compiled in the task of the first
//! render of a loaded file: 8.5 ms of a 50 MB snapshot's drop → chart, and 23-33 ms of the task
//! that showed a 304 MB trace's preview while two reader workers held both cores (devtools trace,
//! `wasm.CompileLazy`). Split, the first render compiles the small switch and the one tab it
//! shows, and the rehearsal (`crate::rehearse`) compiles that tab ahead by calling the same
//! function.

use crate::compare::view::CompareView;
use crate::flame::view::FlameView;
use crate::memory::lane::MemoryLane;
use crate::memory::view::MemoryView;
use crate::ranks::RanksView;
use crate::roofline::RooflineView;
use crate::session::series::SeriesRef;
use crate::session::SessionRef;
use crate::timeline::view::{LaneFn, Timeline};
use crate::trend::view::TrendView;
use crate::views::gpu::GpuView;
use crate::views::kernels::KernelsView;
use crate::views::modules::ModulesView;
use crate::views::operators::OperatorsView;
use crate::views::overview::{Headline, Overview};
use leptos::prelude::*;

/// The memory lane under the timeline (the memory feature, composed here so the timeline does not
/// import it).
const MEMORY_LANE: LaneFn = |session, file, window| {
    view! { <MemoryLane session=session file=file window=window /> }.into_any()
};

/// The compare view's side-by-side timelines.
const PAIRED: crate::session::pair::PairedFn =
    |session, file, pair| view! { <Timeline session=session file=file pair=pair /> }.into_any();

/// A tab that shows one file: `$view` of (`session`, `file`).
macro_rules! file_tab {
    ($($name:ident => $view:ident),* $(,)?) => {$(
        #[inline(never)]
        pub fn $name(s: SessionRef, file: usize) -> AnyView {
            view! { <$view session=s file=file /> }.into_any()
        }
    )*};
}

file_tab! {
    overview => Overview,
    operators => OperatorsView,
    modules => ModulesView,
    flame => FlameView,
    kernels => KernelsView,
    gpu => GpuView,
    roofline => RooflineView,
}

/// Embed mode's Overview: the cards above the timeline, in the iframe's height.
#[inline(never)]
pub fn embed_overview(s: SessionRef, file: usize) -> AnyView {
    view! {
        <div class="embed-overview">
            <Headline session=s.clone() file=file />
            <Timeline session=s file=file lane=MEMORY_LANE />
        </div>
    }
    .into_any()
}

#[inline(never)]
pub fn timeline(s: SessionRef, file: usize) -> AnyView {
    view! { <Timeline session=s file=file lane=MEMORY_LANE /> }.into_any()
}

#[inline(never)]
pub fn ranks(s: SessionRef, skipped: Vec<(String, String)>) -> AnyView {
    view! { <RanksView session=s skipped=skipped /> }.into_any()
}

#[inline(never)]
pub fn memory(s: SessionRef) -> AnyView {
    view! { <MemoryView session=s /> }.into_any()
}

#[inline(never)]
pub fn trend(
    series: Option<SeriesRef>,
    on_pair: Callback<(usize, usize)>,
    on_pick: Callback<web_sys::FileList>,
) -> AnyView {
    match series {
        Some(t) => view! { <TrendView series=t on_pair=on_pair on_pick=on_pick /> }.into_any(),
        None => view! { <p class="muted">"No trend open: open a folder of runs."</p> }.into_any(),
    }
}

#[inline(never)]
pub fn compare(
    s: SessionRef,
    other: Option<SessionRef>,
    on_pick: Callback<web_sys::FileList>,
    on_drop: Callback<web_sys::DragEvent>,
) -> AnyView {
    view! { <CompareView session=s compare=other on_pick=on_pick on_drop=on_drop paired=PAIRED /> }
        .into_any()
}
