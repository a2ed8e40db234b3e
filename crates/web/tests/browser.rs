//! Runs in headless Chromium: the demo trace is parsed by the wasm build of the core and painted on
//! a real canvas, and the pixels under a known kernel carry the kernel colour.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::SliceKind;
use tracelight_web::timeline::layout::{self, GUTTER_PX, HEADER_PX, LANE_PX};
use tracelight_web::timeline::paint::{kind_color, paint};
use tracelight_web::timeline::viewport::Viewport;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const DEMO: &[u8] = include_bytes!("../../../web/demo/demo.pt.trace.json.gz");

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(c.trim_start_matches('#'), 16).unwrap_or(0);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

#[wasm_bindgen_test]
fn demo_trace_parses_in_wasm_and_paints_kernels_in_their_colour() {
    let Ok(Loaded::Trace(t)) = load_bytes("demo.pt.trace.json.gz", DEMO) else {
        panic!("demo must load")
    };
    // Cross-checked with python's json module: the generator's own event count.
    assert_eq!(t.event_count, 2893);
    let rows = layout::rows(&t);
    let gpu_row = rows.iter().find(|r| {
        t.tracks[r.track].count > 0
            && t.slices.kind[t.tracks[r.track].first as usize] == SliceKind::Kernel
            || t.str(t.tracks[r.track].name) == "stream 7"
    });
    let gpu_row = gpu_row.expect("a GPU stream row").clone();

    let doc = web_sys::window().unwrap().document().unwrap();
    let canvas: web_sys::HtmlCanvasElement =
        doc.create_element("canvas").unwrap().dyn_into().unwrap();
    let (w, h) = (1200.0, layout::total_height(&rows));
    canvas.set_width(w as u32);
    canvas.set_height(h as u32);
    doc.body().unwrap().append_child(&canvas).unwrap();
    let ctx: web_sys::CanvasRenderingContext2d = canvas
        .get_context("2d")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap();

    // Zoom onto the longest kernel so it is many pixels wide.
    let tr = &t.tracks[gpu_row.track];
    let (a, b) = (tr.first as usize, (tr.first + tr.count) as usize);
    let k = (a..b)
        .filter(|&i| t.slices.kind[i] == SliceKind::Kernel)
        .max_by_key(|&i| t.slices.dur[i])
        .unwrap();
    let (s, e) = (t.slices.start[k], t.slices.end(k));
    let vp = Viewport::new(s - (e - s), e + (e - s), w - GUTTER_PX);
    let stats = paint(&ctx, &t, &rows, &vp, s, w, h);
    assert!(stats.rects > 0);

    let x = GUTTER_PX + (w - GUTTER_PX) / 2.0;
    // Near the lane top: the middle carries the (white) name label.
    let y = gpu_row.y + HEADER_PX + f64::from(t.slices.depth[k]) * LANE_PX + 1.5;
    let px = ctx.get_image_data(x, y, 1.0, 1.0).unwrap().data();
    assert_eq!([px[0], px[1], px[2]], hex(kind_color(SliceKind::Kernel)));
}
