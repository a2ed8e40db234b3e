//! The Flight Recorder part of the Ranks tab: why the job hung. The verdict first (core's
//! sentence, the one `tracelight summary DIR` prints, with the page's duration format), then a
//! ranks × sequence grid per process group with the first divergence marked, the collective a
//! click picks shown on every rank (sizes, dtypes, times, stacks), each rank's last sequence ids
//! (`pg_status`), the culprits' stacks beside the waiting ranks', and what was inferred. Every
//! figure is core's `analysis::flight_recorder` report; this file lays it out.

use super::flight_detail::{Detail, Stacks};
use super::flight_grid::{legend, Grid};
use super::run::RunModel;
use crate::session::run::FrRun;
use crate::session::SessionRef;
use crate::widgets::fmt;
use crate::widgets::prose::prose;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::flight_recorder::{FrReport, Hang, HangKind};
use tracelight_core::report::flight_recorder::{hang_sentence, headline};

fn list(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

fn kind(h: Option<&Hang>) -> &'static str {
    match h.map(|h| h.kind) {
        None => "none",
        Some(HangKind::Mismatch) => "mismatch",
        Some(HangKind::MissingRanks) => "missing_ranks",
        Some(HangKind::UnmatchedP2p) => "unmatched_p2p",
        Some(HangKind::NotCompleted) => "not_completed",
        Some(HangKind::Unknown) => "unknown",
        Some(HangKind::CompletedMismatch) => "completed_mismatch",
    }
}

fn mismatch_table(h: &Hang) -> Option<impl IntoView> {
    if h.mismatches.is_empty() {
        return None;
    }
    let rows = h
        .mismatches
        .iter()
        .map(|m| {
            view! {
                <tr data-testid="fr-mismatch" data-rank=m.rank.to_string() data-field=m.field>
                    <td class="num">{m.rank}</td><td>{m.field.replace('_', " ")}</td>
                    <td><code>{m.expected.clone()}</code></td><td><code>{m.found.clone()}</code></td>
                </tr>
            }
        })
        .collect::<Vec<_>>();
    Some(view! {
        <table class="plain fr-mismatches">
            <thead><tr><th>"rank"</th><th>"field"</th><th>"expected (the other ranks)"</th><th>"found"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    })
}

fn sentences(
    r: &FrReport,
    hs: &[Hang],
    testid: &'static str,
    title: &'static str,
) -> Option<impl IntoView> {
    if hs.is_empty() {
        return None;
    }
    let items = hs
        .iter()
        .map(|h| view! { <li data-pg=h.pg.clone() data-seq=h.seq.to_string() data-kind=kind(Some(h))>{prose(&hang_sentence(h, r.t0_ns, &fmt::dur_f))}</li> })
        .collect::<Vec<_>>();
    Some(view! { <div class="fr-more"><b>{title}</b><ul data-testid=testid>{items}</ul></div> })
}

/// The verdict: the hang (or that there is none), its disagreements, the other stuck groups.
#[component]
fn Verdict(fr: Arc<FrRun>) -> impl IntoView {
    let r = &fr.report;
    let h = r.hang.as_ref();
    let line = headline(r, &fmt::dur_f);
    let facts = h.map(|h| {
        view! {
            <p class="hint">
                {format!(
                    "op {} · input sizes {} ({}) · output sizes {} ({}) · members {}",
                    h.op,
                    h.input_sizes,
                    if h.input_dtypes.is_empty() { "–" } else { &h.input_dtypes },
                    h.output_sizes,
                    if h.output_dtypes.is_empty() { "–" } else { &h.output_dtypes },
                    h.members.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                )}
            </p>
        }
    });
    view! {
        <div
            class="fr-verdict"
            class:fr-ok=h.is_none()
            data-testid="fr-verdict"
            data-kind={kind(h)}
            data-pg={h.map(|h| h.pg.clone()).unwrap_or_default()}
            data-seq={h.map(|h| h.seq.to_string()).unwrap_or_default()}
            data-op={h.map(|h| h.op.clone()).unwrap_or_default()}
            data-culprits={h.map(|h| list(&h.culprits)).unwrap_or_default()}
            data-missing={h.map(|h| list(&h.missing)).unwrap_or_default()}
            data-waiting={h.map(|h| list(&h.waiting)).unwrap_or_default()}
        >
            <p class="fr-headline" data-testid="fr-headline">{prose(&line)}</p>
            {facts}
            {h.and_then(mismatch_table)}
            {sentences(r, &r.also, "fr-also", "Also stuck")}
            {sentences(r, &r.disagreements, "fr-disagreements", "Completed although the ranks disagreed")}
        </div>
    }
}

fn status_table(r: &FrReport) -> impl IntoView {
    let o = |v: Option<i64>| v.map_or("—".to_owned(), |v| v.to_string());
    let rows = r
        .ranks
        .iter()
        .flat_map(|x| {
            x.status.iter().map(move |g| {
                let group = if g.desc.is_empty() || g.desc == "undefined" {
                    g.pg.clone()
                } else {
                    format!("{} ({})", g.pg, g.desc)
                };
                view! {
                    <tr data-testid="fr-status" data-rank=x.rank.to_string() data-pg=g.pg.clone()>
                        <td class="num">{x.rank}</td><td>{group}</td>
                        <td class="num" data-col="enqueued">{o(g.last_enqueued)}</td>
                        <td class="num" data-col="started">{o(g.last_started)}</td>
                        <td class="num" data-col="completed">{o(g.last_completed)}</td>
                        <td class="muted">{g.source}</td>
                    </tr>
                }
            })
        })
        .collect::<Vec<_>>();
    view! {
        <details class="fr-status" open>
            <summary>"Last sequence ids per rank and group (pg_status)"</summary>
            <table class="plain">
                <thead><tr><th>"rank"</th><th>"group"</th><th>"last enqueued"</th><th>"last started"</th><th>"last completed"</th><th>"from"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </details>
    }
}

fn dumps_table(r: &FrReport) -> impl IntoView {
    let rows = r
        .ranks
        .iter()
        .map(|x| {
            let records = match (x.first_record, x.last_record) {
                (Some(a), Some(b)) => format!("{a}–{b}"),
                _ => "—".into(),
            };
            view! {
                <tr data-testid="fr-dump" data-rank=x.rank.to_string() data-entries=x.entries.to_string()>
                    <td class="num">{x.rank}</td><td class="fr-file" title=x.file.clone()>{x.file.clone()}</td>
                    <td>{x.version.clone()}</td><td>{x.backend.clone()}</td>
                    <td class="num">{x.entries}</td><td class="num">{records}</td>
                    <td>{if x.wrapped { "wrapped" } else { "whole" }}</td>
                    <td>{if x.stacks { "yes" } else { "no" }}</td>
                </tr>
            }
        })
        .collect::<Vec<_>>();
    let missing = r
        .missing_dumps
        .iter()
        .map(|m| view! { <tr data-testid="fr-dump" data-rank=m.to_string() data-entries="-1" class="missing"><td class="num">{*m}</td><td>"no dump"</td><td/><td/><td/><td/><td/><td/></tr> })
        .collect::<Vec<_>>();
    view! {
        <details class="fr-dumps">
            <summary>{format!("{} dump(s), {} rank(s) without one", r.ranks.len(), r.missing_dumps.len())}</summary>
            <table class="plain">
                <thead><tr><th>"rank"</th><th>"file"</th><th>"version"</th><th>"backend"</th><th>"entries"</th><th>"records"</th><th>"ring buffer"</th><th>"stacks"</th></tr></thead>
                <tbody>{rows}{missing}</tbody>
            </table>
        </details>
    }
}

/// The Flight Recorder card of the Ranks tab (only when the run holds dumps).
#[component]
pub fn FlightRecorder(m: Arc<RunModel>, session: SessionRef) -> impl IntoView {
    let Some(fr) = m.fr.clone() else {
        return ().into_any();
    };
    // The collective picked in a grid: (group name, column index). The hang's, to begin with.
    let start = fr
        .report
        .hang
        .as_ref()
        .and_then(|h| Some((h.pg.clone(), h.column?)));
    let picked = RwSignal::new(start);
    // The hang's group first, then the other groups that diverge; groups where every recorded
    // collective completed everywhere are folded away.
    let hang_pg = fr.report.hang.as_ref().map(|h| h.pg.clone());
    let mut shown: Vec<&tracelight_core::analysis::flight_recorder::Group> = fr
        .report
        .groups
        .iter()
        .filter(|g| !g.columns.is_empty() || !g.p2p.is_empty())
        .collect();
    let quiet = |g: &tracelight_core::analysis::flight_recorder::Group| {
        g.first_divergence.is_none()
            && g.p2p.iter().all(|p| {
                p.status == tracelight_core::analysis::flight_recorder::P2pStatus::Completed
            })
    };
    tracelight_core::sort::by_key(&mut shown, |g| {
        (hang_pg.as_deref() != Some(g.name.as_str()), quiet(g))
    });
    let grid = |g: &tracelight_core::analysis::flight_recorder::Group| {
        view! { <Grid group=g.clone() picked=picked /> }
    };
    let loud = shown
        .iter()
        .filter(|g| !quiet(g))
        .map(|g| grid(g))
        .collect::<Vec<_>>();
    let calm: Vec<_> = shown.iter().filter(|g| quiet(g)).collect();
    let folded = (!calm.is_empty()).then(|| {
        let n = calm.len();
        let names = calm.iter().map(|g| g.name.clone()).collect::<Vec<_>>().join(", ");
        let inner = calm.iter().map(|g| grid(g)).collect::<Vec<_>>();
        view! {
            <details class="fr-done" open=loud.is_empty()>
                <summary>{format!("{n} group(s) where every recorded collective completed on every rank ({names})")}</summary>
                {inner}
            </details>
        }
    });
    let inferred = (!fr.report.inferred.is_empty()).then(|| {
        let items = fr
            .report
            .inferred
            .iter()
            .map(|i| view! { <li>{i.clone()}</li> })
            .collect::<Vec<_>>();
        view! { <div class="fr-inferred" data-testid="fr-inferred"><b>"Inferred, not read:"</b><ul>{items}</ul></div> }
    });
    view! {
        <section class="card fr" data-testid="fr-view" data-ranks=fr.report.ranks.len().to_string() data-groups=fr.report.groups.len().to_string()>
            <h2>"Flight Recorder: why did the job hang?"</h2>
            <Verdict fr=fr.clone() />
            {loud}
            {folded}
            {legend()}
            <Detail fr=fr.clone() session=session picked=picked />
            <Stacks fr=fr.clone() />
            {status_table(&fr.report)}
            {dumps_table(&fr.report)}
            {inferred}
        </section>
    }
    .into_any()
}
