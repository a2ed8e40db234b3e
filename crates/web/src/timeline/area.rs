//! The area-selection panel: slices of the covered tracks overlapping the dragged time range,
//! aggregated by name (count, total, self, average), like Perfetto's area selection.

use super::tlstate::Ctx;
use leptos::prelude::*;
use tracelight_core::model::time::format_duration;
use tracelight_core::view::aggregate::aggregate;

/// Rows shown; the rest are summed in the header.
const MAX_ROWS: usize = 200;

#[component]
pub fn AreaPanel(ctx: Ctx) -> impl IntoView {
    let c = ctx.clone();
    move || {
        let a = c.tl.area_done.get()?;
        let t = c.trace()?;
        let rows = c.rows.get();
        let tracks = a.tracks(&rows);
        let agg = aggregate(t, &c.data.lod, &tracks, (a.t0, a.t1));
        let total: u64 = agg.iter().map(|r| r.count).sum();
        let shown = agg.len().min(MAX_ROWS);
        Some(view! {
            <section class="tl-panel tl-area" data-testid="area">
                <h3 data-testid="area-summary" data-count=total.to_string()>
                    {format!("{total} slices · {} names · {} tracks · {}", agg.len(), tracks.len(), format_duration(a.t1 - a.t0))}
                </h3>
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
