//! The `key_averages().table()` text against torch's own `.table.txt` on the generated corpus:
//! the header block (column titles and widths) and the footer lines must be identical, and
//! every torch row must appear with the same name cell and call count. Numbers are checked in
//! `ops_vs_torch.rs`; ties in Self CPU may order rows differently, so rows are matched by name.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::ops::{op_table, OpOptions};
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::report::table::{render, TableOptions};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn generated() -> String {
    tracelight_testkit::root()
        .join("generated")
        .to_string_lossy()
        .into_owned()
}
const GPU_FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/torch-2.11-cuda13-h100"
);

#[test]
fn table_text_reproduces_torch_layout() {
    let cases = [
        ("lstm_mem.1795343595561069429", "pt.trace.json", false),
        ("mlp_wide_flops_et", "json", true),
        ("resnet_all.1795343593430138415", "pt.trace.json.gz", true),
        (
            "ddp_gloo_2rank/ddp_gloo_2rank_rank0.1795343773566681277",
            "pt.trace.json",
            false,
        ),
    ];
    if tracelight_testkit::path("generated").is_none() {
        return;
    }
    for (stem, ext, flops) in cases {
        compare(&generated(), stem, ext, flops, false);
    }
}

/// The GPU recordings: CUDA time and CUDA memory columns, kernel and GPU-annotation rows.
#[test]
fn table_text_reproduces_torch_layout_on_gpu_traces() {
    for stem in [
        "gpu_mlp",
        "gpu_mlp_plain",
        "gpu_lm_bf16",
        "gpu_matmul",
        "gpu_matmul_plain",
        "cpu_mlp_stack",
    ] {
        compare(GPU_FIXTURES, stem, "pt.trace.json.gz", true, true);
    }
}

fn compare(dir: &str, stem: &str, ext: &str, flops: bool, device_memory: bool) {
    {
        let want = std::fs::read_to_string(format!("{dir}/{stem}.table.txt")).unwrap();
        let bytes = std::fs::read(format!("{dir}/{stem}.{ext}")).unwrap();
        let Ok(Loaded::Trace(t)) = load_bytes(ext, &bytes) else {
            panic!("{ext} must load as a trace")
        };
        let opts = TableOptions {
            row_limit: None,
            cpu_memory: t.memory.device_type.contains(&0),
            device_memory: device_memory && t.memory.device_type.iter().any(|&d| d != 0),
            flops,
        };
        let got = render(&op_table(&t, OpOptions::default()), opts);
        let wl: Vec<&str> = want.lines().collect();
        let gl: Vec<&str> = got.lines().collect();
        assert_eq!(&gl[..3], &wl[..3], "{stem}: header");
        assert_eq!(gl.len(), wl.len(), "{stem}: line count");
        // Rows run to the last separator; the footer lines (Self CPU / Self CUDA time total)
        // follow it and must read the same.
        let sep = |l: &[&str]| l.iter().rposition(|x| x.starts_with("---")).unwrap();
        let (ws, gs) = (sep(&wl), sep(&gl));
        assert_eq!(&gl[gs + 1..], &wl[ws + 1..], "{stem}: footer");
        let name_w = wl[0].find("  ").unwrap();
        let calls_col = wl[1]
            .split("  ")
            .filter(|c| !c.trim().is_empty())
            .position(|c| c.trim() == "# of Calls")
            .unwrap();
        let key = |l: &str| {
            let cells: Vec<&str> = l[name_w..].split_whitespace().collect();
            // Memory cells have a unit after a space; count from the right instead.
            let calls = cells[cells.len() - if flops { 2 } else { 1 }].to_owned();
            let _ = calls_col;
            (l[..name_w].trim().to_owned(), calls)
        };
        let mut w: Vec<_> = wl[3..ws].iter().map(|l| key(l)).collect();
        let mut g: Vec<_> = gl[3..gs].iter().map(|l| key(l)).collect();
        w.sort();
        g.sort();
        assert_eq!(g, w, "{stem}: rows");
    }
}
