//! The `key_averages().table()` text against torch's own `.table.txt` on the generated corpus:
//! the header block (column titles and widths) and the footer line format must be identical, and
//! every torch row must appear with the same name cell and call count. Numbers are checked in
//! `ops_vs_torch.rs`; ties in Self CPU may order rows differently, so rows are matched by name.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::ops::{op_table, OpOptions};
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::report::table::{render, TableOptions};

const GENERATED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/corpus/generated"
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
    if !std::path::Path::new(GENERATED).exists() {
        println!("note: {GENERATED} not found; skipping");
        return;
    }
    for (stem, ext, flops) in cases {
        let want = std::fs::read_to_string(format!("{GENERATED}/{stem}.table.txt")).unwrap();
        let bytes = std::fs::read(format!("{GENERATED}/{stem}.{ext}")).unwrap();
        let Ok(Loaded::Trace(t)) = load_bytes(ext, &bytes) else {
            panic!("{ext} must load as a trace")
        };
        let opts = TableOptions {
            row_limit: None,
            cpu_memory: t.memory.device_type.contains(&0),
            device_memory: false,
            flops,
        };
        let got = render(&op_table(&t, OpOptions::default()), opts);
        let wl: Vec<&str> = want.lines().collect();
        let gl: Vec<&str> = got.lines().collect();
        assert_eq!(&gl[..3], &wl[..3], "{stem}: header");
        assert_eq!(gl.len(), wl.len(), "{stem}: line count");
        let footer = gl.last().unwrap();
        assert!(
            footer.starts_with("Self CPU time total: ") && footer.ends_with("ms"),
            "{footer}"
        );
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
        let mut w: Vec<_> = wl[3..wl.len() - 2].iter().map(|l| key(l)).collect();
        let mut g: Vec<_> = gl[3..gl.len() - 2].iter().map(|l| key(l)).collect();
        w.sort();
        g.sort();
        assert_eq!(g, w, "{stem}: rows");
    }
}
