//! The Roofline tab: wiring only. Core rates the ops (`analysis::roofline`) and lays the chart
//! out (`view::roofline::chart`); this draws it on a canvas on animation frames, names the dot
//! under the pointer, and on a click (or a table row) steps through that op's calls in the
//! timeline. Where the trace's device is not in the table, or to compare against another part,
//! the device picker re-rates the same ops (`Roofline::rated_on`).

use super::paint::{paint, RoofScene};
use crate::platform::canvas::prepare;
use crate::platform::frame::Frames;
use crate::session::{Nav, SessionRef};
use crate::widgets::fmt;
use crate::widgets::palette::color_of;
use crate::widgets::table::{columns, Col, VTable};
use crate::widgets::theme::Theme;
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::devices::{device_named, DEVICES};
use tracelight_core::analysis::roofline::{group_slices, Bound, RoofOp, Roofline};
use tracelight_core::report::num;
use tracelight_core::view::roofline::{chart, family_color_key, Chart};

/// Chart height, CSS px.
const CHART_H: f64 = 440.0;

columns! {
    /// The roofline table's columns.
    enum RCol {
        Name = "name",
        Shapes = "shapes",
        Family = "family",
        Calls = "calls",
        Time = "time",
        Intensity = "intensity",
        Tflops = "tflops",
        Gbs = "gbs",
        Math = "math",
        RanOn = "ran_on",
        Bound = "bound",
        Roof = "roof",
    }
}

/// `tensor_core` → "tensor cores", `simt` → "SIMT".
fn unit_label(slug: &str) -> &'static str {
    match slug {
        "tensor_core" => "tensor cores",
        "simt" => "SIMT",
        _ => "",
    }
}

fn bound_text(b: Option<Bound>) -> &'static str {
    match b {
        Some(Bound::Compute) => "compute",
        Some(Bound::Memory) => "memory",
        None => "",
    }
}

fn cell(o: &RoofOp, col: RCol) -> String {
    match col {
        RCol::Name => o.name.clone(),
        RCol::Shapes => o.shapes.clone(),
        RCol::Family => o.family.clone(),
        RCol::Calls => o.calls.to_string(),
        RCol::Time => fmt::dur(o.device_ns),
        RCol::Intensity => o.intensity.map(num::sig3).unwrap_or_default(),
        RCol::Tflops => fmt::tflops(o.achieved_tflops),
        RCol::Gbs => num::sig3(o.achieved_gbs),
        RCol::Math => format!("{} {}", o.dtype, unit_label(&o.unit)),
        RCol::RanOn => unit_label(&o.ran_on).to_owned(),
        RCol::Bound => bound_text(o.rating.bound).to_owned(),
        RCol::Roof => o.rating.pct_of_roof.map(fmt::frac).unwrap_or_default(),
    }
}

/// The tooltip's lines for one op.
fn tip_lines(o: &RoofOp) -> Vec<String> {
    let mut v = vec![
        format!(
            "{} · {} calls · {}",
            o.family,
            o.calls,
            fmt::dur(o.device_ns)
        ),
        format!(
            "{} · {} moved · {} FLOP/B",
            fmt::flops(o.flops),
            fmt::bytes(o.bytes as i64),
            o.intensity.map_or("–".into(), num::sig3)
        ),
        format!(
            "{} · {} GB/s",
            fmt::tflops(o.achieved_tflops),
            num::sig3(o.achieved_gbs)
        ),
        format!("peak of {} on {}", o.dtype, unit_label(&o.unit)),
    ];
    if let (Some(b), Some(p)) = (o.rating.bound, o.rating.pct_of_roof) {
        v.push(format!(
            "{}-bound · {} of roof",
            bound_text(Some(b)),
            fmt::frac(p)
        ));
    }
    v
}

#[component]
pub fn RooflineView(session: SessionRef, file: usize) -> impl IntoView {
    let nav = use_context::<Nav>().unwrap_or_default();
    let Some(tf) = session.trace(file) else {
        return view! { <p class="muted">"Not a trace."</p> }.into_any();
    };
    let base: Arc<Roofline> = Arc::new(tf.analysis().roofline.clone());
    if base.ops.is_empty() {
        return view! {
            <section class="view" data-testid="roofline-view">
                <p class="muted" data-testid="roofline-empty">"No op of a known family (GEMM, convolution, attention, elementwise, reductions, norms, copies) ran on the device in this trace."</p>
            </section>
        }
        .into_any();
    }
    // The device the peaks come from: the trace's (auto) or the user's pick.
    let pick = RwSignal::new(String::new());
    let roof = {
        let base = base.clone();
        Memo::new(move |_| {
            let p = pick.get();
            match device_named(&p) {
                Some(d) if !p.is_empty() => Arc::new(base.rated_on(d)),
                _ => base.clone(),
            }
        })
    };
    let canvas = NodeRef::<html::Canvas>::new();
    let wrap = NodeRef::<html::Div>::new();
    let width = RwSignal::new(0.0f64);
    let theme = RwSignal::new(Theme::default());
    let measure = move || {
        if let Some(w) = wrap.get_untracked() {
            let cw = f64::from(w.client_width()).max(320.0);
            if (width.get_untracked() - cw).abs() >= 0.5 {
                width.set(cw);
            }
        }
    };
    crate::platform::resize::follow(wrap, measure);
    Effect::new(move |_| {
        if wrap.get().is_some() {
            theme.set(Theme::from_css());
        }
    });
    let laid: Memo<Arc<Chart>> =
        Memo::new(move |_| Arc::new(chart(&roof.get(), width.get().max(320.0), CHART_H)));
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let selected = RwSignal::new(None::<usize>);
    let frames = Frames::new();
    let painter = move || {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let w = width.get_untracked();
        if w <= 0.0 {
            return;
        }
        let Some(ctx) = prepare(&c, w, CHART_H) else {
            return;
        };
        let ch = laid.get_untracked();
        let th = theme.get_untracked();
        paint(
            &ctx,
            &RoofScene {
                chart: &ch,
                theme: &th,
                hover: hover.get_untracked().map(|h| h.0),
                selected: selected.get_untracked(),
            },
        );
        let _ = c.set_attribute("data-dots", &ch.dots.len().to_string());
        let _ = c.set_attribute("data-roofs", &ch.roofs.len().to_string());
        // The largest dot's op and centre, so a test can point at it.
        if let Some(d) = ch.dots.first() {
            let _ = c.set_attribute("data-first-dot", &format!("{},{:.1},{:.1}", d.op, d.x, d.y));
        }
    };
    Effect::new(move |_| {
        laid.track();
        theme.track();
        hover.track();
        selected.track();
        frames.request(painter);
    });
    let show = {
        let session = session.clone();
        move |k: usize| {
            let r = roof.get_untracked();
            let (Some(o), Some(tf)) = (r.ops.get(k), session.trace(file)) else {
                return;
            };
            let slices = group_slices(&tf.trace, &o.name, &o.shapes);
            nav.reveal(file, slices, format!("{} {}", o.name, o.shapes));
        }
    };
    let at = move |ev: &web_sys::MouseEvent| {
        laid.with_untracked(|c| c.hit(f64::from(ev.offset_x()), f64::from(ev.offset_y())))
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let h = at(&ev).map(|k| (k, f64::from(ev.client_x()), f64::from(ev.client_y())));
        if h != hover.get_untracked() {
            hover.set(h);
        }
    };
    let on_click = move |ev: web_sys::MouseEvent| selected.set(at(&ev));
    let tip = move || {
        let (k, x, y) = hover.get()?;
        let r = roof.get();
        let o = r.ops.get(k)?;
        let lines = tip_lines(o)
            .into_iter()
            .map(|l| view! { <div>{l}</div> })
            .collect_view();
        Some(view! {
            <div class="mem-tip roof-tip" data-testid="roofline-tip" style=format!("left:{}px;top:{}px", x + 14.0, y + 12.0)>
                <b>{o.name.clone()}</b>
                <div class="muted-inv">{o.shapes.clone()}</div>
                {lines}
                <div class="muted-inv">"click: select · then show its calls in the timeline"</div>
            </div>
        })
    };
    let show2 = show.clone();
    let info = move || {
        let k = selected.get()?;
        let r = roof.get();
        let o = r.ops.get(k)?.clone();
        let lines = tip_lines(&o).join(" · ");
        let show = show2.clone();
        Some(view! {
            <div class="roof-info" data-testid="roofline-selected" data-name=o.name.clone()>
                <b>{o.name.clone()}</b>" "<span class="muted">{o.shapes.clone()}</span>
                <div class="muted">{lines}</div>
                <button class="button small" data-testid="roofline-show" on:click=move |_| show(k)>
                    {format!("Show its {} calls in timeline →", o.calls)}
                </button>
            </div>
        })
    };
    // The families present, for the legend; families that share a colour (the timeline's kernel
    // categories: norm and reduction) share one entry.
    let mut fams: Vec<String> = base.ops.iter().map(|o| o.family.clone()).collect();
    fams.sort_unstable();
    fams.dedup();
    let mut keys: Vec<(&'static str, Vec<String>)> = Vec::new();
    for f in fams {
        let k = family_color_key(&f);
        match keys.iter_mut().find(|x| x.0 == k) {
            Some(x) => x.1.push(f),
            None => keys.push((k, vec![f])),
        }
    }
    let legend = keys
        .into_iter()
        .map(|(k, fs)| {
            let names = fs.join(", ");
            view! {
                <span class="legend-item" data-family=names.clone()><i style=format!("background:{}", color_of(k))></i>{names.clone()}</span>
            }
        })
        .collect_view();
    let head = move || {
        let r = roof.get();
        let c = laid.get();
        let dev = match &r.device {
            Some(d) => format!(
                "Peaks of {} ({}), memory bandwidth {} GB/s; each op against the math unit it ran on.",
                d.table_name, d.source, num::sig3(d.bandwidth_gbs)
            ),
            None => "The trace's device is not in the table: pick one to draw the roofs.".to_owned(),
        };
        let cover = format!(
            "The ops on the roofline ran {} of the {} of device work launched by ops ({}); {} ops without FLOPs (copies, gathers) are in the table only; {} host↔device copies ({}) are bound by the host link and left out.",
            fmt::dur(r.covered_ns),
            fmt::dur(r.launched_ns),
            fmt::pct(r.covered_ns, r.launched_ns),
            c.without_flops,
            r.transfer_calls,
            fmt::dur(r.transfer_ns)
        );
        view! { <p data-testid="roofline-device">{dev}</p><p class="hint" data-testid="roofline-coverage">{cover}</p> }
    };
    let options = DEVICES
        .iter()
        .map(|d| view! { <option value=d.name>{d.name}</option> })
        .collect_view();
    let auto = base
        .device
        .as_ref()
        .map_or("auto (not in the table)".to_owned(), |d| {
            format!("auto: {}", d.table_name)
        });
    // The table under the chart.
    let cols = vec![
        Col::name(RCol::Name, "Op", 220),
        Col::text(RCol::Shapes, "Input shapes", 200),
        Col::text(RCol::Family, "Family", 90),
        Col::num(RCol::Calls, "Calls", 60),
        Col::num(RCol::Time, "Device time", 96),
        Col::num(RCol::Intensity, "FLOP/B", 70),
        Col::num(RCol::Tflops, "Achieved", 112),
        Col::num(RCol::Gbs, "GB/s", 70),
        Col::text(RCol::Math, "Peak of", 130),
        Col::text(RCol::RanOn, "Ran on", 96)
            .tip("the unit its kernels' names say they ran on (an fp32 GEMM held against TF32 can have run SIMT)"),
        Col::text(RCol::Bound, "Bound", 74),
        Col::num(RCol::Roof, "% of roof", 80),
    ];
    let n = base.ops.len();
    let cell_cb = Callback::new(move |(r, col): (usize, RCol)| {
        roof.with_untracked(|x| x.ops.get(r).map(|o| cell(o, col)).unwrap_or_default())
    });
    let on_activate = Callback::new(move |r: usize| {
        selected.set(Some(r));
        show(r);
    });
    view! {
        <section class="view roofline" data-testid="roofline-view">
            <div class="toolbar">
                <h2>"Roofline"</h2>
                <label class="hint">"Peaks of "
                    <select data-testid="roofline-device-pick" on:change=move |ev| pick.set(event_target_value(&ev))>
                        <option value="">{auto}</option>
                        {options}
                    </select>
                </label>
                <span class="hint">"hover: figures · click: select · table row: show its calls in the timeline"</span>
            </div>
            {head}
            <div class="legend" data-testid="roofline-legend">{legend}</div>
            <div class="roof-wrap" node_ref=wrap>
                <canvas node_ref=canvas data-testid="roofline" class="roof-canvas"
                    style=format!("height:{CHART_H}px")
                    on:mousemove=on_move
                    on:mouseleave=move |_| hover.set(None)
                    on:click=on_click />
                {tip}
            </div>
            {info}
            <VTable cols=cols len=n cell=cell_cb on_activate=on_activate sort=Signal::stored(None) testid="roofline-table" visible_rows=14 label="Roofline ops" />
            <p class="hint">"Bytes are the least each op must move (inputs read once, outputs written once), so achieved bandwidth is a lower bound and data kept in L2 can pass 100%. Definitions: docs/definitions.md."</p>
        </section>
    }
    .into_any()
}
