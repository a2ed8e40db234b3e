//! The details panel of the selected slice: identity, timing, args (shapes, flops, grid/block),
//! links to the launching call / launched kernels / enclosing op / flow ends, the python stack.

use super::tlstate::Ctx;
use leptos::prelude::*;
use tracelight_core::model::time::format_duration;
use tracelight_core::view::details::{args_table, details};

/// Args rows read again from the file for slice `.1` of file `.0`, or why they could not be.
type FromFile = Option<(usize, u32, Result<Vec<(String, String)>, String>)>;

/// Reads the args the reader left in the file for the selected slice (core's
/// `Trace::slice_args_in_file`) into `out`, once per selection.
fn read_args_from_file(c: &Ctx, out: RwSignal<FromFile>) {
    let c = c.clone();
    Effect::new(move |_| {
        let Some(i) = c.tl.selected.get() else { return };
        let Some((off, len)) = c.trace().and_then(|t| t.slice_args_in_file(i as usize)) else {
            return;
        };
        let (session, file) = (c.session.clone(), c.file);
        if out.with_untracked(|o| o.as_ref().is_some_and(|(f, j, _)| (*f, *j) == (file, i))) {
            return;
        }
        leptos::task::spawn_local(async move {
            let Some(src) = session.trace(file).and_then(|f| f.source.as_ref()) else {
                out.set(Some((
                    file,
                    i,
                    Err("the file it was read from is not kept".into()),
                )));
                return;
            };
            let rows = src.read(off, len).await.and_then(|bytes| {
                let rows = std::str::from_utf8(&bytes).ok().map(args_table).unwrap_or_default();
                if rows.is_empty() {
                    Err(format!("bytes {off}–{} of the file are no longer this slice's args (was the file changed?)", off + u64::from(len)))
                } else {
                    Ok(rows)
                }
            });
            out.set(Some((file, i, rows)));
        });
    });
}

fn link(c: &Ctx, i: u32, testid: &'static str) -> impl IntoView {
    let name = c
        .trace()
        .and_then(|t| t.slices.name.get(i as usize).map(|&n| t.str(n).to_owned()))
        .unwrap_or_default();
    let c = c.clone();
    view! {
        <button class="linkish" data-testid=testid data-slice=i.to_string() on:click=move |_| c.focus(i)>
            {name}
        </button>
    }
}

/// "All N occurrences": asks the timeline (through `Nav.reveal`, like any other view) to step
/// through every slice with this name.
fn occurrences(c: &Ctx, i: u32, name: &str) -> Option<impl IntoView> {
    let nav = use_context::<crate::session::Nav>()?;
    let t = c.trace()?;
    let id = *t.slices.name.get(i as usize)?;
    let n = t.slices.name.iter().filter(|&&x| x == id).count();
    let (c, name) = (c.clone(), name.to_owned());
    Some(view! {
        <button class="button" data-testid="details-occurrences" on:click=move |_| {
            let Some(t) = c.trace() else { return };
            let all: Vec<u32> = (0..t.slices.len() as u32).filter(|&k| t.slices.name[k as usize] == id).collect();
            nav.reveal(c.file, all, name.clone());
        }>{format!("All {n} occurrences")}</button>
    })
}

/// "Jump to kernel" (the first device work this slice launched, itself or through the calls in
/// it) and "Jump to launching op" (for device work: the op whose call launched it).
fn jumps(c: &Ctx, kernel: Option<u32>, op: Option<u32>) -> impl IntoView {
    let (c1, c2) = (c.clone(), c.clone());
    view! {
        {kernel.map(|k| view! {
            <button class="button" data-testid="jump-kernel" data-slice=k.to_string()
                on:click=move |_| c1.focus(k)>"Jump to kernel →"</button>
        })}
        {op.map(|o| view! {
            <button class="button" data-testid="jump-op" data-slice=o.to_string()
                on:click=move |_| c2.focus(o)>"← Jump to launching op"</button>
        })}
    }
}

#[component]
pub fn DetailsPanel(ctx: Ctx) -> impl IntoView {
    let c = ctx.clone();
    let from_file = RwSignal::new(None);
    read_args_from_file(&c, from_file);
    move || {
        let i = c.tl.selected.get()?;
        let t = c.trace()?;
        let d = details(t, i as usize)?;
        // Where the reader left some args in the file, the rows are the file's once read.
        let (args, args_from, args_note) = match t.slice_args_in_file(i as usize) {
            None => (d.args.clone(), "memory", None),
            Some(_) => from_file.with(|f: &FromFile| match f {
                Some((k, j, Ok(rows))) if (*k, *j) == (c.file, i) => (rows.clone(), "file", None),
                Some((k, j, Err(e))) if (*k, *j) == (c.file, i) => (
                    d.args.clone(),
                    "memory",
                    Some(format!("Only the args kept in memory are shown: {e}")),
                ),
                _ => (
                    d.args.clone(),
                    "reading",
                    Some("Reading the other args from the file…".to_owned()),
                ),
            }),
        };
        let origin = c.data.bounds.0;
        let links = |v: &[u32], id: &'static str| {
            v.iter().take(50).map(|&k| link(&c, k, id)).collect_view()
        };
        let grid = d.grid.map(|g| format!("[{}, {}, {}]", g[0], g[1], g[2]));
        let block = d.block.map(|g| format!("[{}, {}, {}]", g[0], g[1], g[2]));
        let more_kernels = d.kernels.len().saturating_sub(50);
        Some(view! {
            <section class="tl-panel tl-details" data-testid="details" data-slice=i.to_string()>
                <h3 data-testid="details-name">{d.name.clone()}</h3>
                <div class="tl-actions">
                    {occurrences(&c, i, &d.name)}
                    {jumps(&c, d.kernels.first().copied(), d.launch.and(d.op.or(d.launch)))}
                </div>
                <dl>
                    <dt>"Category"</dt><dd data-testid="details-cat">{format!("{} ({})", d.cat, d.kind)}</dd>
                    <dt>"Track"</dt><dd>{d.track.clone()}</dd>
                    <dt>"Start"</dt><dd data-testid="details-start" data-ns=d.start_ns.to_string()>{format!("+{}", format_duration(d.start_ns - origin))}</dd>
                    <dt>"Duration"</dt><dd data-testid="details-dur" data-ns=d.dur_ns.to_string()>{format_duration(d.dur_ns)}</dd>
                    <dt>"Self time"</dt><dd data-testid="details-self" data-ns=d.self_ns.to_string()>{format_duration(d.self_ns)}</dd>
                    {d.flops.map(|f| view! { <dt>"FLOPs"</dt><dd>{format!("{f:.3e}")}</dd> })}
                    {grid.map(|g| view! { <dt>"Grid"</dt><dd data-testid="details-grid">{g}</dd> })}
                    {block.map(|g| view! { <dt>"Block"</dt><dd data-testid="details-block">{g}</dd> })}
                    {d.launch.map(|l| view! { <dt>"Launched by"</dt><dd>{link(&c, l, "details-launch")}</dd> })}
                    {d.op.map(|o| view! { <dt>"Op"</dt><dd>{link(&c, o, "details-op")}</dd> })}
                    {(!d.kernels.is_empty()).then(|| view! {
                        <dt>"Launched"</dt>
                        <dd>{links(&d.kernels, "details-kernel")}{(more_kernels > 0).then(|| format!(" … and {more_kernels} more"))}</dd>
                    })}
                    {(!d.flows.is_empty()).then(|| view! { <dt>"Flows"</dt><dd>{links(&d.flows, "details-flow")}</dd> })}
                </dl>
                {super::provenance::section(&c, i)}
                {super::et_details::et_section(&c, i)}
                {(!args.is_empty() || args_note.is_some()).then(|| view! {
                    <h4>"Args"</h4>
                    {args_note.map(|n| view! { <p class="hint" data-testid="details-args-note">{n}</p> })}
                    <table class="tl-args" data-testid="details-args" data-from=args_from>
                        <tbody>
                            {args.iter().map(|(k, v)| view! { <tr><th>{k.clone()}</th><td>{v.clone()}</td></tr> }).collect_view()}
                        </tbody>
                    </table>
                })}
            </section>
        })
    }
}
