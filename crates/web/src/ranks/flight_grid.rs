//! One process group's ranks × sequence grid: a row per member, a column per collective, each
//! cell coloured by what the rank did with it (palette `FR_STATES`), the first divergence
//! outlined. The columns around the divergence are shown first (the hang is at the end of every
//! ring buffer); "show all" lays out the rest. A click on a column picks that collective for the
//! detail below.

use crate::widgets::palette::fr_state_color;
use leptos::prelude::*;
use tracelight_core::analysis::flight_recorder::{CellState, Group};

/// Columns shown before "show all".
const COLS: usize = 40;
/// Rows (ranks) laid out at most: a 10 000-rank job is read from the verdict, not cell by cell.
const ROWS: usize = 256;

fn symbol(s: CellState) -> &'static str {
    match s {
        CellState::Completed => "✓",
        CellState::Started => "▶",
        CellState::Scheduled => "…",
        CellState::Absent => "✗",
        CellState::Lost => "?",
        CellState::NoDump => "–",
    }
}

/// What the cells' colours and marks say (once under the grids).
pub fn legend() -> impl IntoView {
    let items = [
        CellState::Completed,
        CellState::Started,
        CellState::Scheduled,
        CellState::Absent,
        CellState::Lost,
        CellState::NoDump,
    ]
    .into_iter()
    .map(|s| {
        view! {
            <span class="fr-key"><span class="fr-swatch" style=format!("background:{}", fr_state_color(s.label()))>{symbol(s)}</span>{s.label()}</span>
        }
    })
    .collect::<Vec<_>>();
    view! { <div class="fr-legend">{items}<span class="fr-key">"* inferred (retired / pg_status) · outlined: first divergence · ≠ issued something else"</span></div> }
}

/// The grid of one group; `picked` is the (group, column) shown in the detail.
#[component]
pub fn Grid(group: Group, picked: RwSignal<Option<(String, usize)>>) -> impl IntoView {
    let all = RwSignal::new(false);
    let n = group.columns.len();
    let div = group.first_divergence;
    let g = std::sync::Arc::new(group);
    let members = g.members.len();
    let g1 = g.clone();
    let table = move || {
        let g = &g1;
        let (lo, hi) = if all.get() || n <= COLS {
            (0, n)
        } else {
            let hi = div.map_or(n, |d| (d + 8).min(n));
            (hi.saturating_sub(COLS), hi)
        };
        let pick = picked.get();
        let is_picked = |k: usize| pick.as_ref().is_some_and(|(p, c)| *p == g.name && *c == k);
        let head = (lo..hi)
            .map(|k| {
                let c = &g.columns[k];
                let name = g.name.clone();
                view! {
                    <th
                        class="fr-col"
                        class:fr-div=Some(k) == div
                        class:fr-picked=is_picked(k)
                        data-seq={c.seq.to_string()}
                        title={format!("#{} {} · {}", c.seq, c.op, c.input_sizes)}
                        on:click=move |_| picked.set(Some((name.clone(), k)))
                    >
                        {format!("#{}", c.seq)}<br/><span class="fr-op">{c.op.chars().take(10).collect::<String>()}</span>
                    </th>
                }
            })
            .collect::<Vec<_>>();
        let rows = g
            .members
            .iter()
            .enumerate()
            .take(ROWS)
            .map(|(m, &rank)| {
                let cells = (lo..hi)
                    .map(|k| {
                        let c = &g.columns[k];
                        let cell = &c.cells[m];
                        let differs = c.mismatches.iter().any(|x| x.rank == rank);
                        let label = cell.state.label();
                        let title = format!(
                            "rank {rank} · #{} {} · {}{}{}",
                            c.seq,
                            cell.op.as_deref().unwrap_or(&c.op),
                            label,
                            if cell.inferred { " (inferred)" } else { "" },
                            if differs { " · disagrees with the other ranks" } else { "" }
                        );
                        let name = g.name.clone();
                        view! {
                            <td
                                class="fr-cell"
                                class:fr-div=Some(k) == div
                                class:fr-picked=is_picked(k)
                                class:fr-differs=differs
                                data-testid="fr-cell"
                                data-rank={rank.to_string()}
                                data-seq={c.seq.to_string()}
                                data-state=label
                                data-inferred={cell.inferred.to_string()}
                                style={format!("background:{}", fr_state_color(label))}
                                title=title
                                on:click=move |_| picked.set(Some((name.clone(), k)))
                            >
                                {symbol(cell.state)}{cell.inferred.then_some("*")}{differs.then_some("≠")}
                            </td>
                        }
                    })
                    .collect::<Vec<_>>();
                view! { <tr data-rank=rank.to_string()><th class="num">{rank}</th>{cells}</tr> }
            })
            .collect::<Vec<_>>();
        view! {
            <table class="fr-table" data-testid="fr-table" data-lo=lo.to_string() data-hi=hi.to_string()>
                <thead><tr><th>"rank \\ #"</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }
    };
    let more = (n > COLS).then(|| {
        view! {
            <button class="button" data-testid="fr-grid-all" on:click=move |_| all.update(|a| *a = !*a)>
                {move || if all.get() { format!("Show the {COLS} around the divergence") } else { format!("Show all {n} collectives") }}
            </button>
        }
    });
    let rows_note = (members > ROWS).then(|| {
        view! { <p class="hint">{format!("The first {ROWS} of {members} ranks are laid out; the verdict above covers all.")}</p> }
    });
    let p2p = (!g.p2p.is_empty()).then(|| {
        let rows = g
            .p2p
            .iter()
            .map(|p| {
                let st = |s: &Option<tracelight_core::analysis::flight_recorder::P2pSide>| {
                    s.as_ref().map_or("—".to_owned(), |x| x.state.label().to_owned())
                };
                view! {
                    <tr data-testid="fr-p2p" data-src=p.src.to_string() data-dst=p.dst.to_string() data-status=format!("{:?}", p.status).to_lowercase()>
                        <td class="num">{p.src}</td><td class="num">{p.dst}</td>
                        <td>{format!("{:?}", p.status).to_lowercase()}</td><td>{st(&p.send)}</td><td>{st(&p.recv)}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>();
        view! {
            <table class="plain fr-p2p">
                <thead><tr><th>"send from"</th><th>"to"</th><th>"pair"</th><th>"send"</th><th>"recv"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }
    });
    let title = if g.desc.is_empty() || g.desc == "undefined" {
        format!("Group {}", g.name)
    } else {
        format!("Group {} ({})", g.name, g.desc)
    };
    let how = match g.membership {
        tracelight_core::analysis::flight_recorder::Membership::PgConfig => "from pg_config",
        tracelight_core::analysis::flight_recorder::Membership::World => "every rank",
        tracelight_core::analysis::flight_recorder::Membership::Entries => {
            "inferred from the entries"
        }
    };
    view! {
        <div
            class="fr-grid"
            data-testid="fr-grid"
            data-pg={g.name.clone()}
            data-members={g.members.iter().map(i64::to_string).collect::<Vec<_>>().join(",")}
            data-columns={n.to_string()}
            data-divergence={div.and_then(|d| g.columns.get(d)).map(|c| c.seq.to_string()).unwrap_or_default()}
        >
            <h3>{title}<span class="hint">{format!(" · ranks {} ({how}) · {n} collective(s)", g.members.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))}</span></h3>
            <div class="fr-scroll">{table}</div>
            {more}
            {rows_note}
            {p2p}
        </div>
    }
}
