//! The area-selection panel: slices of the covered tracks overlapping the dragged time range,
//! aggregated by name (count, total, self, average), like Perfetto's area selection; "Flame graph
//! of selection" opens the flame graph tab scoped to the same range and tracks; "Tables of this
//! window" scopes the Overview, Operators, Kernels and Modules tables to the range.

use super::tlstate::Ctx;
use crate::session::Nav;
use leptos::prelude::*;
use tracelight_core::model::time::format_duration;
use tracelight_core::view::aggregate::aggregate;

/// Rows shown; the rest are summed in the header.
const MAX_ROWS: usize = 200;

#[component]
pub fn AreaPanel(ctx: Ctx) -> impl IntoView {
    let c = ctx.clone();
    let nav = use_context::<Nav>();
    move || {
        let a = c.tl.area_done.get()?;
        let t = c.trace()?;
        let rows = c.rows.get();
        let tracks = a.tracks(&rows);
        let agg = aggregate(t, &c.data.lod, &tracks, (a.t0, a.t1));
        let total: u64 = agg.iter().map(|r| r.count).sum();
        let shown = agg.len().min(MAX_ROWS);
        let (file, n_tracks, picked) = (c.file, tracks.len(), tracks.clone());
        let flame = move |_| {
            if let Some(nav) = nav {
                nav.flame_of_area(file, a.t0, a.t1, picked.clone());
            }
        };
        // The tables (Overview, Operators, Kernels, Modules) over the same time range, all tracks.
        let (t0, t1) = (a.t0, a.t1);
        let scope = move |_| {
            if let Some(nav) = nav {
                nav.scope_to_window(t0, t1);
            }
        };
        Some(view! {
            <section class="tl-panel tl-area" data-testid="area">
                <h3 data-testid="area-summary" data-count=total.to_string()>
                    {format!("{total} slices · {} names · {} tracks · {}", agg.len(), n_tracks, format_duration(a.t1 - a.t0))}
                </h3>
                <button class="button" data-testid="area-flame" on:click=flame>"Flame graph of selection"</button>
                <button class="button" data-testid="area-scope" on:click=scope title="Restrict the Overview, Operators, Kernels and Modules tables to this time range (every track): ops that start in it, GPU work launched in it">"Tables of this window"</button>
                <table data-testid="area-table">
                    <thead><tr><th>"Name"</th><th class="num">"Count"</th><th class="num">"Total"</th><th class="num">"Self"</th><th class="num">"Avg"</th></tr></thead>
                    <tbody>
                        {agg[..shown].iter().map(|r| view! {
                            <tr>
                                <td>{r.name.clone()}</td>
                                <td class="num">{r.count}</td>
                                <td class="num" data-ns=r.total_ns.to_string()>{format_duration(r.total_ns)}</td>
                                <td class="num" data-ns=r.self_ns.to_string()>{format_duration(r.self_ns)}</td>
                                <td class="num">{format_duration(r.avg_ns.round() as i64)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
                {(agg.len() > shown).then(|| view! { <p class="hint">{format!("{} more names", agg.len() - shown)}</p> })}
            </section>
        })
    }
}
