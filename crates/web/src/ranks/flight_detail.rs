//! The collective picked in a Flight Recorder grid, on every rank of its group: what each rank
//! issued (op, sizes, dtypes), its state, its times relative to the earliest entry of any rank,
//! its thread and the stack that issued it. And the verdict's stacks: the culprits' last
//! collectives beside the stacks of the ranks waiting at the hang.

use crate::session::run::FrRun;
use crate::session::SessionRef;
use crate::widgets::fmt;
use leptos::prelude::*;
use std::sync::Arc;

fn frames_view(frames: Vec<(String, String, i64)>) -> impl IntoView {
    if frames.is_empty() {
        return view! { <span class="muted">"no stack in the dump"</span> }.into_any();
    }
    let text = frames
        .iter()
        .map(|(n, f, l)| format!("{n} at {f}:{l}"))
        .collect::<Vec<_>>()
        .join("\n");
    view! { <pre class="fr-stack">{text}</pre> }.into_any()
}

/// The picked collective on every member.
#[component]
pub fn Detail(
    fr: Arc<FrRun>,
    session: SessionRef,
    picked: RwSignal<Option<(String, usize)>>,
) -> impl IntoView {
    move || {
        let (pg, k) = picked.get()?;
        let r = &fr.report;
        let g = r.group(&pg)?;
        let c = g.columns.get(k)?;
        let t0 = r.t0_ns;
        let rel = move |t: Option<i64>| {
            t.filter(|&t| t > 0 && t0 > 0)
                .map_or("—".to_owned(), |t| format!("+{}", fmt::dur(t - t0)))
        };
        let rows = c
            .cells
            .iter()
            .map(|cell| {
                let e = cell
                    .entry
                    .and_then(|k| Some((fr.dump(&session, cell.rank)?, k)))
                    .and_then(|(d, k)| Some((d, d.entries.get(k)?)));
                let state = format!(
                    "{}{}",
                    cell.state.label(),
                    if cell.inferred { " (inferred)" } else { "" }
                );
                let differs = c.mismatches.iter().any(|m| m.rank == cell.rank);
                let cols = match e {
                    Some((d, e)) => {
                        let s = |id| d.str(id).to_owned();
                        view! {
                            <td><code>{s(e.op)}</code></td>
                            <td><code>{s(e.input_sizes)}</code></td><td>{s(e.input_dtypes)}</td>
                            <td><code>{s(e.output_sizes)}</code></td><td>{s(e.output_dtypes)}</td>
                            <td class="num" data-col="created">{rel(Some(e.time_created_ns))}</td>
                            <td class="num">{rel(e.time_started_ns)}</td>
                            <td class="num">{rel(e.time_completed_ns)}</td>
                            <td class="num">{e.duration_ms.map_or("—".to_owned(), |ms| fmt::dur_f(ms * 1e6))}</td>
                            <td>{s(e.thread_name)}</td>
                            <td><details><summary>{format!("{} frame(s)", d.stacks.get(e.stack).len())}</summary>{frames_view(d.stack(e.stack).into_iter().map(|(n, f, l)| (n.to_owned(), f.to_owned(), l)).collect())}</details></td>
                        }
                        .into_any()
                    }
                    None => view! { <td colspan="11" class="muted">"no entry for this collective"</td> }.into_any(),
                };
                view! {
                    <tr data-testid="fr-detail-row" data-rank=cell.rank.to_string() data-state=cell.state.label() class:fr-differs=differs>
                        <td class="num">{cell.rank}</td><td>{state}</td>{cols}
                    </tr>
                }
            })
            .collect::<Vec<_>>();
        use tracelight_core::analysis::flight_recorder::ColumnStatus;
        let status = match c.status {
            ColumnStatus::Completed => "completed on every rank",
            ColumnStatus::Pending => "issued everywhere, not finished",
            ColumnStatus::Missing => "ranks never issued it",
            ColumnStatus::Unknown => "ranks unaccounted for",
        };
        let title = format!(
            "Group {}{} · collective #{} {} · {status}{}",
            g.name,
            if g.desc.is_empty() || g.desc == "undefined" {
                String::new()
            } else {
                format!(" ({})", g.desc)
            },
            c.seq,
            c.op,
            if c.mismatches.is_empty() {
                ""
            } else {
                " · the ranks disagree"
            }
        );
        Some(view! {
            <div class="fr-detail" data-testid="fr-detail" data-pg=g.name.clone() data-seq=c.seq.to_string()>
                <h3>{title}</h3>
                <table class="plain">
                    <thead><tr>
                        <th>"rank"</th><th>"state"</th><th>"op"</th><th>"input sizes"</th><th>"dtypes"</th>
                        <th>"output sizes"</th><th>"dtypes"</th><th>"created"</th><th>"started"</th>
                        <th>"completed"</th><th>"duration"</th><th>"thread"</th><th>"stack"</th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <p class="hint">"Times are from each rank's wall clock, relative to the earliest entry of any rank; across hosts they are only as close as the clocks."</p>
            </div>
        })
    }
}

/// The culprits' last collectives beside the stacks of the ranks waiting at the hang.
#[component]
pub fn Stacks(fr: Arc<FrRun>) -> impl IntoView {
    let r = &fr.report;
    if r.stacks.is_empty() {
        return ().into_any();
    }
    let items = r
        .stacks
        .iter()
        .map(|s| {
            let who = if s.ranks.len() == 1 {
                format!("Rank {}", s.ranks[0])
            } else {
                format!(
                    "Ranks {}",
                    s.ranks.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                )
            };
            view! {
                <div class="fr-stack-group" data-testid="fr-stack" data-role=s.role data-ranks={s.ranks.iter().map(i64::to_string).collect::<Vec<_>>().join(",")}>
                    <b>{format!("{who}: {}", s.role)}</b>
                    {format!(" — group {} #{} {} ({})", s.pg, s.seq, s.op, s.state.label())}
                    {frames_view(s.frames.clone())}
                </div>
            }
        })
        .collect::<Vec<_>>();
    view! { <div class="fr-stacks"><h3>"Where each rank was"</h3><div class="fr-stack-cols">{items}</div></div> }.into_any()
}
