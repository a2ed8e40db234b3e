//! Runs in headless Chromium: the demo trace is parsed by the wasm build of the core, indexed and
//! painted on a real canvas, and the pixels under a known kernel carry the kernel colour.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tracelight_core::analysis::kernels::default_fine_rules;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::{SliceKind, Trace};
use tracelight_core::view::palette::color;
use tracelight_core::view::slice_colors::SliceColors;
use tracelight_web::session::derived::TimelineData;
use tracelight_web::timeline::layout::{self, Row, RowKind, GUTTER_PX, LANE_PX, RULER_PX};
use tracelight_web::timeline::paint::{paint, text::TextCache, PaintStats, Scene};
use tracelight_web::timeline::theme::{kind_color, SliceCat as Cat, Theme};
use tracelight_web::timeline::tlstate::track_rows;
use tracelight_web::timeline::viewport::Viewport;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const DEMO: &[u8] = include_bytes!("../../../web/demo/demo.pt.trace.json.gz");

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(c.trim_start_matches('#'), 16).unwrap_or(0);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn canvas(w: f64, h: f64) -> web_sys::CanvasRenderingContext2d {
    let doc = web_sys::window().unwrap().document().unwrap();
    let canvas: web_sys::HtmlCanvasElement =
        doc.create_element("canvas").unwrap().dyn_into().unwrap();
    canvas.set_width(w as u32);
    canvas.set_height(h as u32);
    doc.body().unwrap().append_child(&canvas).unwrap();
    canvas
        .get_context("2d")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap()
}

#[wasm_bindgen_test]
fn demo_trace_parses_in_wasm_and_paints_kernels_in_their_colour() {
    let Ok(Loaded::Trace(t)) = load_bytes("demo.pt.trace.json.gz", DEMO) else {
        panic!("demo must load")
    };
    // Cross-checked with python's json module: the generator's own event count.
    assert_eq!(t.event_count, 2893);
    let d = TimelineData::build(&t);
    let rows = layout::rows(
        &t,
        &d.lod,
        &d.counters,
        &d.groups,
        layout::RowsOf::default(),
    );
    // The longest kernel and its row.
    let k = (0..t.slices.len())
        .filter(|&i| t.slices.kind[i] == SliceKind::Kernel)
        .max_by_key(|&i| t.slices.dur[i])
        .unwrap();
    let track = t.slices.track[k] as usize;
    let row = rows
        .iter()
        .find(|r| matches!(r.kind, RowKind::Slices { track: tr, .. } if tr == track))
        .unwrap()
        .clone();
    let (w, h) = (1200.0, RULER_PX + layout::total_height(&rows));
    let ctx = canvas(w, h);
    let (s, e) = (t.slices.start[k], t.slices.end(k));
    let vp = Viewport::new(s - (e - s), e + (e - s), w - GUTTER_PX);
    let theme = Theme::default();
    let stats = paint_plain(&ctx, &t, &d, &rows, vp, (w, h), &theme);
    assert!(stats.rects > 0);
    assert!(stats.labels > 0, "the zoomed kernel carries its name");

    let x = GUTTER_PX + (w - GUTTER_PX) / 2.0;
    // Near the lane top: the middle carries the (white) name label.
    let y = RULER_PX + row.lane_y(usize::from(t.slices.depth[k])) + 1.5;
    let px = ctx.get_image_data(x, y, 1.0, 1.0).unwrap().data();
    // The demo's longest kernel is an NCCL all-reduce: the default rules file it under `comm`,
    // which has its own colour.
    assert!(t.str(t.slices.name[k]).to_lowercase().contains("nccl"));
    assert_eq!([px[0], px[1], px[2]], hex(color("comm")));
    assert_ne!(Cat::Comm.color(), kind_color(SliceKind::Kernel));
    let _ = LANE_PX;
}

#[wasm_bindgen_test]
fn zoomed_out_every_track_with_work_has_pixels() {
    let Ok(Loaded::Trace(t)) = load_bytes("demo.pt.trace.json.gz", DEMO) else {
        panic!("demo must load")
    };
    let d = TimelineData::build(&t);
    let rows = layout::rows(
        &t,
        &d.lod,
        &d.counters,
        &d.groups,
        layout::RowsOf::default(),
    );
    let (w, h) = (1000.0, RULER_PX + layout::total_height(&rows));
    let ctx = canvas(w, h);
    let vp = Viewport::new(d.bounds.0, d.bounds.1, w - GUTTER_PX);
    let theme = Theme::default();
    paint_plain(&ctx, &t, &d, &rows, vp, (w, h), &theme);
    let bg = hex(&theme.bg);
    for r in rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Slices { .. }))
    {
        // Row 0's lane: some pixel in the track area is not background.
        let y = RULER_PX + r.lane_y(0) + 4.0;
        let data = ctx
            .get_image_data(GUTTER_PX, y, w - GUTTER_PX, 1.0)
            .unwrap()
            .data();
        let painted = data.chunks(4).filter(|p| [p[0], p[1], p[2]] != bg).count();
        assert!(painted > 0, "row {} has visible work", r.label);
    }
}

/// Paints the whole timeline with nothing selected, searched or revealed.
fn paint_plain(
    ctx: &web_sys::CanvasRenderingContext2d,
    t: &Trace,
    d: &TimelineData,
    rows: &[Row],
    vp: Viewport,
    (width, height): (f64, f64),
    theme: &Theme,
) -> PaintStats {
    let tr = track_rows(rows, t.tracks.len());
    let colors = SliceColors::new(t, &default_fine_rules());
    let scene = Scene {
        t,
        d,
        colors: &colors,
        rows,
        track_row: &tr,
        vp,
        scroll: 0.0,
        width,
        height,
        dpr: 1.0,
        theme,
        selected: None,
        links: &[],
        matches: &[],
        revealed: &[],
        area: None,
        band: None,
        collapsed: &[],
        origin_ns: d.bounds.0,
    };
    paint(ctx, &scene, &mut TextCache::default())
}

/// A trace whose kernels sit on one lane, laid out and ready to paint on a 1000 px canvas.
fn one_lane(
    json: &str,
) -> (
    Trace,
    TimelineData,
    Vec<Row>,
    Row,
    (f64, f64),
    web_sys::CanvasRenderingContext2d,
) {
    let Ok(Loaded::Trace(t)) = load_bytes("t.json", json.as_bytes()) else {
        panic!("the trace must load")
    };
    let d = TimelineData::build(&t);
    let rows = layout::rows(
        &t,
        &d.lod,
        &d.counters,
        &d.groups,
        layout::RowsOf::default(),
    );
    let row = rows
        .iter()
        .find(|r| matches!(r.kind, RowKind::Slices { .. }))
        .unwrap()
        .clone();
    let (w, h) = (1000.0, RULER_PX + layout::total_height(&rows));
    let ctx = canvas(w, h);
    (*t, d, rows, row, (w, h), ctx)
}

/// Regression: slice rects with fractional edges made Chromium's software rasterizer anti-alias
/// every edge (one 1 GB frame took 250 ms to raster). Every pixel along a lane of narrow kernels
/// at fractional positions is now the background, a grid line or the kernel colour, never a blend.
#[wasm_bindgen_test]
fn slice_edges_land_on_whole_pixels_not_blended() {
    let events: Vec<String> = (0..12)
        .map(|i| {
            let ts = 10.3 + f64::from(i) * 6.71;
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"k{i}","pid":0,"tid":7,"ts":{ts},"dur":2.37,"args":{{"device":0,"stream":7}}}}"#
            )
        })
        .collect();
    let json = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    let (t, d, rows, row, (w, h), ctx) = one_lane(&json);
    // 100 µs over 790 px: 126.6 ns per pixel, so slice edges fall between pixels.
    let vp = Viewport::new(0, 100_000, w - GUTTER_PX);
    let theme = Theme::default();
    let stats = paint_plain(&ctx, &t, &d, &rows, vp, (w, h), &theme);
    assert_eq!(stats.labels, 0, "18 px kernels carry no name to blend");
    let y = RULER_PX + row.lane_y(0) + LANE_PX / 2.0;
    let data = ctx
        .get_image_data(GUTTER_PX, y, w - GUTTER_PX, 1.0)
        .unwrap()
        .data();
    let allowed = [
        hex(&theme.bg),
        hex(&theme.grid),
        hex(Cat::of(SliceKind::Kernel, false).color()),
    ];
    let kernel_px = data
        .chunks(4)
        .filter(|p| [p[0], p[1], p[2]] == allowed[2])
        .count();
    // 12 kernels of 2.37 µs: 18.7 px each, less the one-pixel hairline.
    assert!(
        (12 * 17..=12 * 19).contains(&kernel_px),
        "{kernel_px} kernel pixels"
    );
    let blended: Vec<[u8; 3]> = data
        .chunks(4)
        .map(|p| [p[0], p[1], p[2]])
        .filter(|p| !allowed.contains(p))
        .collect();
    assert!(blended.is_empty(), "blended edge pixels: {blended:?}");
}

/// Regression: rounding slice edges to the nearest pixel left a blank pixel between two kernels
/// less than a pixel apart (the end of one and the start of the next share a pixel column).
/// Edges now snap outward, so the whole run from the first kernel to the second is painted.
#[wasm_bindgen_test]
fn kernels_less_than_a_pixel_apart_leave_no_blank_pixel() {
    // 100 µs over 790 px is 126.6 ns per pixel: kernel A covers px 7.9–18.2, B px 18.5–34.3.
    let json = r#"{"traceEvents":[
        {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.0,"dur":1.3,"args":{"device":0,"stream":7}},
        {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":2.34,"dur":2.0,"args":{"device":0,"stream":7}}]}"#;
    let (t, d, rows, row, (w, h), ctx) = one_lane(json);
    let theme = Theme::default();
    paint_plain(
        &ctx,
        &t,
        &d,
        &rows,
        Viewport::new(0, 100_000, w - GUTTER_PX),
        (w, h),
        &theme,
    );
    let y = (RULER_PX + row.lane_y(0) + 3.0).floor();
    // Pixel columns 9..=32 lie inside A, the shared column 18, or B.
    let data = ctx
        .get_image_data(GUTTER_PX + 9.0, y, 24.0, 1.0)
        .unwrap()
        .data();
    let kernel = hex(Cat::of(SliceKind::Kernel, false).color());
    let cols: Vec<[u8; 3]> = data.chunks(4).map(|p| [p[0], p[1], p[2]]).collect();
    assert!(
        cols.iter().all(|&p| p == kernel),
        "a blank column between the kernels: {cols:?}"
    );
}

/// The JSON scanner in this build classifies 16 bytes at a time with wasm `simd128`
/// (`core::ingest::stops`): names and args whose quotes, escapes and brackets fall in every lane of
/// a block, and at every distance from a 64 KiB slice's end, read back exactly as written.
#[wasm_bindgen_test]
fn the_vector_scanner_reads_names_and_args_at_every_alignment() {
    use tracelight_core::ingest::Loader;
    let mut json = String::from("{\"traceEvents\": [\n");
    let mut want = Vec::new();
    for n in 0..48usize {
        for quote_at in [None, Some(n / 2), Some(n)] {
            let mut name: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            if let Some(at) = quote_at {
                name.insert_str(at, "\"}]\\[{");
            }
            let text = name.replace('\\', "\\\\").replace('"', "\\\"");
            let k = want.len();
            json += &format!(
                "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{text}\", \"pid\": 1, \"tid\": 1, \
                 \"ts\": 1700000000{k:06}.500, \"dur\": 0.250, \"args\": {{\"Input Dims\": [[{n}, \
                 2], [], [\"{text}\", [\"]\"]]], \"Call\": \"{text}\", \"Pad\": \"{}\"}}}},\n",
                "p".repeat(k % 17)
            );
            want.push(name);
        }
    }
    json +=
        "  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 1700000999999}\n]}\n";
    // Pushed in slices whose ends move through the events, as the page's reader pushes.
    for piece in [7usize, 16, 4093, 65536] {
        let mut l = Loader::new("vector.json");
        for chunk in json.as_bytes().chunks(piece) {
            l.push(chunk).unwrap();
        }
        let Ok(Loaded::Trace(t)) = l.finish() else {
            panic!("not a trace");
        };
        assert_eq!(t.slices.len(), want.len(), "slices, pieces of {piece}");
        let mut order: Vec<usize> = (0..t.slices.len()).collect();
        order.sort_by_key(|&i| t.slices.start[i]);
        for (k, &i) in order.iter().enumerate() {
            assert_eq!(t.strings.resolve(t.slices.name[i]), want[k], "name {k}");
            let args: serde_json::Value =
                serde_json::from_str(&t.slice_args_stored(i)).expect("stored args are JSON");
            assert_eq!(args["Call"], want[k].as_str(), "args {k}");
            assert_eq!(args["Pad"].as_str().map(str::len), Some(k % 17), "args {k}");
            assert_eq!(
                t.slices.start[i],
                (1_700_000_000_000_000 + k as i64) * 1000 + 500
            );
            assert_eq!(t.slices.dur[i], 250, "dur {k}");
        }
    }
}
